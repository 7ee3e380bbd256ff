"""Agents and helper roles tell the episode what they could not read and what they lacked.

The simulator answers from behind a transport that misbehaves the way real servers and small
models do: tool calls written as text in the content (a server without a tool-call parser), a
helper role that returns prose instead of its JSON, a model without reasoning. Each test checks
the episode's diagnostics (reads, flags), the call log's ``read_error`` marks and what the
study's own record says, and that nothing written as text is ever run.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx2
import pytest

from psit_lib.llm import LLMClient, LLMSettings, ModelSession
from psit_lib.studies.psit.memory.working_memory import initial_memory
from psit_lib.runs import RunStore, run_episodes
from psit_lib.runs.records import read_records
from psit_lib.sim.transport import SimTransport
from psit_lib.studies.acc.experiment import AccParams, make_specs as acc_specs, run_acc_episode
from psit_lib.studies.acc.records import AccEpisode
from psit_lib.studies.basis.experiment import BasisParams, make_specs as basis_specs, run_basis_trial
from psit_lib.studies.basis.records import BasisTrial
from psit_lib.studies.basis.results import success_table
from basis_trials import trials_frame
from psit_lib.studies.psit.agents.baselines.calls import LibraryClient, LibraryLink
from psit_lib.studies.psit.agents.factory import build_agent
from psit_lib.studies.psit.protocol.experiment import (ForkTestParams, cost_table, fork_episode_fn,
                                                       plan_fork_episodes)
from psit_lib.studies.psit.protocol.fork_test import host_role
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.wire import ROLE_HEADER

GARBAGE = "Sure! I have taken care of that, everything is up to date."
HOST = host_role(HangmanTask())


def tool_calls_as_text(role: str, message: dict[str, Any]) -> dict[str, Any]:
    """What a server without a tool-call parser returns: the call as JSON in the content."""
    calls = message.pop("tool_calls", None)
    if calls:
        fn = calls[0]["function"]
        message["content"] = json.dumps({"name": fn["name"], "arguments": json.loads(fn["arguments"])})
    return message


class MisbehavingTransport(httpx2.AsyncBaseTransport):
    """The simulator, except that ``scripted`` roles get a fixed reply and every other reply
    goes through ``rewrite(role, message)``."""

    def __init__(self, scripted: dict[str, str] | None = None,
                 rewrite: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.sim, self.scripted, self.rewrite = SimTransport(), dict(scripted or {}), rewrite

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        role = request.headers.get(ROLE_HEADER, "")
        if role in self.scripted:
            body = {"id": "x", "object": "chat.completion", "model": "psit-sim", "created": 0,
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": self.scripted[role]}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
        else:
            response = await self.sim.handle_async_request(request)
            body = json.loads(response.content)
            if response.status_code != 200 or self.rewrite is None:
                return response
            body["choices"][0]["message"] = self.rewrite(role, dict(body["choices"][0]["message"]))
        return httpx2.Response(200, content=json.dumps(body).encode(),
                               headers={"content-type": "application/json"}, request=request)


def client_for(profile: str = "default", **transport: Any) -> LLMClient:
    settings = LLMSettings.from_env().model_copy(update={"backend": "sim", "model": f"psit-sim:{profile}"})
    return LLMClient(settings, transport=MisbehavingTransport(**transport))


async def run(specs, episode_fn, client: LLMClient, tmp_path, result_type):
    raw = await run_episodes(specs, episode_fn, store=RunStore(tmp_path / "run"), client=client,
                             run_seed=0, concurrency=4, progress=False)
    await client.aclose()
    return read_records(raw, result_type)


async def fork_records(tmp_path, agents: list[str], client: LLMClient, n: int = 1):
    task = HangmanTask()
    params = ForkTestParams(agents=agents, n_episodes=n)
    return await run(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params), client,
                     tmp_path, ForkEpisode)


# -- PSIT agents ----------------------------------------------------------------------------------

@pytest.mark.slow
async def test_private_cot_and_workflow_without_reasoning_are_flagged_once_per_reply(tmp_path):
    records = await fork_records(tmp_path, ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite"],
                                 client_for("no_reasoning"))
    by_agent = {r.spec["agent"]: r for r in records}
    for agent in ("private_cot", "workflow_overwrite"):
        record = by_agent[agent]
        assert record.diagnostics.flags[f"no_reasoning|{HOST}|{agent}"] == record.usage.calls_by_role[HOST]
        assert {n["agent"] for n in record.diagnostics.notes if n["kind"] == "no_reasoning"} == {agent}
    for agent in ("vanilla", "autonomous_overwrite"):  # their design does not rest on reasoning
        assert not any(k.startswith("no_reasoning") for k in by_agent[agent].diagnostics.flags)


async def test_a_model_with_reasoning_raises_no_reasoning_flag(tmp_path):
    (record,) = await fork_records(tmp_path, ["private_cot"], client_for("default"))
    assert record.diagnostics.flags == {}


async def test_workflow_updater_garbage_is_read_flagged_marked_and_costed(tmp_path):
    records = await fork_records(tmp_path, ["workflow_overwrite"], client_for(scripted={"memory_updater": GARBAGE}))
    (record,) = records
    updater_calls = record.usage.calls_by_role["memory_updater"]
    attempts = 5  # AgentConfig.updater_attempts: every try fails, so every turn loses its update
    assert record.diagnostics.reads["helper|memory_updater|workflow_overwrite"] == {"ok": 0, "unreadable": updater_calls}
    assert record.diagnostics.flags["helper_failed|memory_updater|workflow_overwrite"] == updater_calls // attempts
    marked = [c for c in record.calls if c.read_error]
    assert len(marked) == updater_calls and {c.role for c in marked} == {"memory_updater"}
    assert cost_table(records)["helper_replies_unusable"].tolist() == [updater_calls]
    assert all(not edit.ok for turn in record.result.memory_edits for edit in turn)


async def test_memory_updater_replies_that_parse_are_counted_ok(tmp_path):
    (record,) = await fork_records(tmp_path, ["workflow_overwrite"], client_for("default,edit_error_rate=0"))
    assert record.diagnostics.reads["helper|memory_updater|workflow_overwrite"]["unreadable"] == 0
    assert record.diagnostics.flags == {} and not any(c.read_error for c in record.calls)


async def test_autonomous_tool_call_written_as_text_is_flagged_and_never_run():
    client = client_for("default,tool_use_reliability=1", rewrite=tool_calls_as_text)
    task = HangmanTask()
    session = ModelSession(client, run_seed=0, episode_id="text-tools")
    agent = build_agent("autonomous_overwrite", system_prompt=task.host_system_prompt(), host_role=HOST)
    state = (await agent.send(task.opener(), session)).values
    await client.aclose()
    entry = state["turn_log"][-1]
    assert entry["edits"] == [] and entry["tool_calls_as_text"] == ["overwrite_memory"]
    assert state["memory"] == initial_memory()  # nothing written as text was applied
    assert json.loads(state["reply"])["name"] == "overwrite_memory"  # the reply is the text, as written
    assert session.diagnostics.flags[f"tool_call_as_text|{HOST}|"] == 1


# -- retrieval baselines ----------------------------------------------------------------------------

async def test_library_reply_its_reader_rejects_is_reported_but_is_no_call_failure():
    import asyncio

    client = client_for(scripted={"memory_library": GARBAGE})
    session = ModelSession(client, run_seed=0, episode_id="library")
    library = LibraryClient("lib", {"lib.other": lambda text: None if text.startswith("{") else "not JSON"})
    library.link = LibraryLink.here(session, "op")
    await asyncio.to_thread(library.chat.completions.create, messages=[{"role": "user", "content": "facts?"}])
    await client.aclose()
    (call,) = library.ledger.calls
    assert call.read_error == "not JSON" and call.ok
    library.ledger.raise_if_failed("the library would carry on")  # does not raise: no call failed
    assert call.as_record(1)["ok"] is False and call.as_record(1)["error"] == "not JSON"
    assert session.diagnostics.reads["helper|memory_library|lib"] == {"ok": 0, "unreadable": 1}
    assert session.diagnostics.flags["helper_failed|memory_library|lib"] == 1
    assert [c.read_error for c in session.log] == ["not JSON"]


@pytest.mark.slow
def test_mem0_readers_read_replies_as_mem0_does():
    pytest.importorskip("mem0")
    from psit_lib.studies.psit.agents.baselines.mem0_adapter import MEM0_READERS

    facts, update = MEM0_READERS["mem0.fact_extraction"], MEM0_READERS["mem0.memory_update"]
    assert facts('{"facts": ["likes tea"]}') is None
    assert facts('Here you go:\n```json\n{"facts": []}\n```') is None
    assert "not JSON" in facts(GARBAGE) and "'facts'" in facts('{"fact": "x"}')
    assert update('{"memory": [{"id": "0", "text": "x", "event": "ADD"}]}') is None
    assert update(GARBAGE) is not None


def test_memoryos_readers_read_replies_as_memoryos_does():
    pytest.importorskip("memoryos")
    from psit_lib.studies.psit.agents.baselines.memoryos_adapter import MEMORYOS_READERS

    summary, continuity = MEMORYOS_READERS["memoryos.multi_summary"], MEMORYOS_READERS["memoryos.continuity"]
    assert summary('[{"theme": "game", "keywords": ["hangman"], "content": "x"}]') is None
    assert summary(GARBAGE) is not None
    assert continuity(" True ") is None and continuity("Yes, they are.") is not None


async def test_lightmem_extraction_garbage_is_reported_and_the_segment_yields_nothing():
    pytest.importorskip("sentence_transformers")
    from psit_lib.studies.psit.agents.baselines.base import TurnInput
    from psit_lib.studies.psit.agents.baselines.lightmem_adapter import LightMemBackend

    client = client_for(scripted={"lightmem_extraction": GARBAGE})
    session = ModelSession(client, run_seed=0, episode_id="lightmem")
    backend = LightMemBackend()
    written = await backend.memorize(backend.empty_store(), TurnInput(session, 1, (), "Let's play."), "_ _ _ _ _")
    await client.aclose()
    assert written.store["entries"] == [] and written.calls[0].read_error
    assert session.diagnostics.reads["helper|lightmem_extraction|lightmem"] == {"ok": 0, "unreadable": 1}
    assert session.log[-1].read_error


# -- BASIS ----------------------------------------------------------------------------------------

async def test_basis_trial_decided_on_a_delegation_written_as_text_is_marked_and_flagged(tmp_path):
    params = BasisParams(scenarios=("quote_only_vs_book",), n_trials=1, ks=(1,), reference_sets=0)
    records = await run(basis_specs(params), run_basis_trial, client_for(rewrite=tool_calls_as_text), tmp_path,
                        BasisTrial)
    assert {r.spec["system"] for r in records} == {"baseline", "basis"}
    for record in records:
        trial, system = record.result, record.spec["system"]
        # success is still read from the app alone (nothing was booked) ...
        assert trial.success and trial.tool_calls == [] and trial.delegations == []
        # ... but the record and the diagnostics say the task was never acted on
        assert trial.decided_without_tool_calls and trial.final_answer_as_tool_call == "delegate_to_cab_agent"
        assert json.loads(trial.final_answer)["name"] == "delegate_to_cab_agent"
        assert any("delegate_to_cab_agent call as text" in e for e in trial.errors)
        flags = record.diagnostics.flags
        assert flags[f"missing_tool_call|basis_orchestrator|{system}"] == 1
        assert flags["tool_call_as_text|basis_orchestrator|"] == 1
    rates = success_table(trials_frame(records))
    measured = rates[rates["source"] == "measured"].dropna(subset=["n_scored"])
    assert measured["unacted_successes"].tolist() == measured["successes"].tolist() == [1, 1]
    basis = next(r for r in records if r.spec["system"] == "basis")
    ingests = basis.diagnostics.reads["helper|cortex_agent|basis"]
    assert ingests["ok"] == 0 and ingests["unreadable"] == len(basis.result.episodes) > 0
    assert basis.diagnostics.flags["helper_failed|cortex_agent|basis"] == 1


@pytest.mark.slow
async def test_basis_trials_that_act_are_not_marked(tmp_path):
    params = BasisParams(n_trials=1, ks=(1,), reference_sets=0)
    records = await run(basis_specs(params), run_basis_trial, client_for(), tmp_path, BasisTrial)
    assert not any(r.result.decided_without_tool_calls or r.result.final_answer_as_tool_call for r in records)
    assert not any(k.startswith("missing_tool_call") for r in records for k in r.diagnostics.flags)
    trials = trials_frame(records)
    assert trials["scored"].all() and not trials["decided_without_tool_calls"].any()
    assert (success_table(trials).dropna(subset=["n_scored"])["unacted_successes"] == 0).all()


def test_version_3_basis_records_still_read():
    old = BasisTrial.model_validate({
        "schema_version": 3, "model": "m", "scenario": "s", "system": "basis", "trial": 0, "app_seed": 1,
        "success": True, "final_answer": "ok", "orchestrator_steps": 1, "delegations": [], "user_messages": [],
        "tool_calls": [], "rides": [], "agents": [], "episodes": [], "ingest_fallbacks": 0, "views": [],
        "errors": []})  # written before version 4: neither new field
    assert old.schema_version == 3 and not old.decided_without_tool_calls and old.final_answer_as_tool_call is None


# -- ACC ------------------------------------------------------------------------------------------

async def _judged(record, client: LLMClient) -> ModelSession:
    """The study's judge over a stored episode (its session's diagnostics say what it could read)."""
    from psit_lib.studies.acc import scoring

    session = ModelSession(client, run_seed=0, episode_id=record.episode_id)
    await scoring.judge_episode(session, record.result, seed=record.result.scenario_seed, answer_chars=1200)
    return session


async def test_acc_compressor_and_judge_garbage_are_read_flagged_and_marked(tmp_path):
    specs = acc_specs(AccParams(n_turns=3))[:1]
    scripted = {"acc_compressor": GARBAGE, "acc_judge": GARBAGE}
    (record,) = await run(specs, run_acc_episode, client_for(scripted=scripted), tmp_path, AccEpisode)
    result, diag = record.result, record.diagnostics
    assert result.ccs_failures == 3
    assert diag.reads["helper|acc_compressor|acc"] == {"ok": 0, "unreadable": 3}
    assert diag.flags["helper_failed|acc_compressor|acc"] == 3
    assert sum(bool(c.read_error) for c in record.calls) == 3
    judge = (await _judged(record, client_for(scripted=scripted))).diagnostics.as_dict()
    assert judge["reads"]["helper|acc_judge|"] == {"ok": 0, "unreadable": 6}
    assert judge["flags"]["helper_failed|acc_judge|"] == 6


async def test_acc_replies_the_judge_and_compressor_can_read_are_counted_ok(tmp_path):
    (record,) = await run(acc_specs(AccParams(n_turns=3))[:1], run_acc_episode, client_for(), tmp_path, AccEpisode)
    reads = record.diagnostics.reads
    assert reads["helper|acc_compressor|acc"] == {"ok": 3, "unreadable": 0}
    assert record.diagnostics.flags == {}
    judge = (await _judged(record, client_for())).diagnostics.as_dict()
    assert judge["reads"]["helper|acc_judge|"] == {"ok": 6, "unreadable": 0} and judge["flags"] == {}


async def test_a_public_reply_carrying_the_private_memory_block_is_flagged_and_kept(tmp_path):
    """Gemma 3 270M copied its <working_memory> block into public fork answers: the reply is kept
    as written (the protocol scores what was said in public) and the episode says it leaked."""
    block = "<working_memory>\nsecret: apple\n</working_memory>"

    def leak(role: str, message: dict[str, Any]) -> dict[str, Any]:
        if role == HOST:
            message["content"] = f"{message.get('content') or ''}\n{block}"
        return message

    (record,) = await fork_records(tmp_path, ["workflow_overwrite"], client_for(rewrite=leak))
    key = f"private_state_in_public|{HOST}|workflow_overwrite"
    assert record.diagnostics.flags[key] == record.usage.calls_by_role[HOST]
    assert any(n["kind"] == "private_state_in_public" and "<working_memory>" in n["example"]
               for n in record.diagnostics.notes)
    (clean,) = await fork_records(tmp_path / "clean", ["workflow_overwrite"], client_for())
    assert not any(k.startswith("private_state_in_public") for k in clean.diagnostics.flags)
