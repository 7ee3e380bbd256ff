"""The fork test on the real PSIT agents and the in-process simulator: branch isolation,
private state never public, end-to-end episodes, and in-process == loopback HTTP."""

from __future__ import annotations


import pytest

from psit_lib.studies.psit.agents.graphs import ChatAgent
from psit_lib.studies.psit.agents.config import parse_agent
from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMSettings, ModelSession
from fork_rows import fork_rows
from hangman_states import state_from_constraints
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.fork_test import ForkSettings, host_role, run_fork_episode
from psit_lib.runs.records import read_records
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.runs import RunStore, run_episodes
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from recording import RecordingClient

AGENTS = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite"]


@pytest.fixture(scope="module")
def task():
    return HangmanTask()


async def _played_agent(task, agent_name, session):
    agent = ChatAgent(parse_agent(agent_name), system_prompt=task.host_system_prompt(),
                      host_role=host_role(task))
    await agent.send(task.opener(), session)
    for letter in "eat":
        await agent.send(f"My next guess is the letter '{letter}'.", session)
    return agent


@pytest.mark.parametrize("agent_name", ["workflow_overwrite", "private_cot", "autonomous_overwrite"])
async def test_branches_start_from_the_identical_state_and_never_see_each_other(task, agent_name):
    client = RecordingClient(LLMSettings(cache="off"))
    session = ModelSession(client, run_seed=1, episode_id="iso")
    agent = await _played_agent(task, agent_name, session)
    fork_id = agent.head
    before = await agent.state(checkpoint_id=fork_id)
    marker_a, marker_b = "Is your word 'zzzqa'? Answer only yes or no.", "Is your word 'zzzqb'? Answer only yes or no."
    client.requests.clear()
    state_a = (await agent.send(marker_a, session.branch("a"), checkpoint_id=fork_id)).values
    n_a = len(client.requests)
    state_b = (await agent.send(marker_b, session.branch("b"), checkpoint_id=fork_id)).values
    requests_b = client.requests[n_a:]
    assert requests_b, "branch b made no model call"
    for request in requests_b:
        assert all(marker_a not in str(m.get("content")) for m in request.messages)
    assert state_a["public"][:-2] == before["public"] == state_b["public"][:-2]
    assert state_b["public"][-2]["content"] == marker_b
    # every branch's first call sees exactly the fork's private state
    first_a, first_b = client.requests[0], requests_b[0]
    assert first_a.messages[0] == first_b.messages[0]
    assert await agent.state(checkpoint_id=fork_id) == before


async def test_a_read_state_is_a_copy_and_a_fork_is_a_child_checkpoint_that_never_moves_the_game(task):
    session = ModelSession(RecordingClient(LLMSettings(cache="off")), run_seed=1, episode_id="copy")
    agent = await _played_agent(task, "workflow_overwrite", session)
    fork_id = agent.head
    read = await agent.state(checkpoint_id=fork_id)
    read["public"].append({"role": "user", "content": "tampered"})
    read["memory"] = "tampered"
    assert await agent.state(checkpoint_id=fork_id) != read
    after = await agent.send("Is your word 'zzzqa'? Answer only yes or no.", session.branch("a"), checkpoint_id=fork_id)
    assert after.checkpoint.parent == fork_id and after.checkpoint.id != fork_id
    assert agent.head == fork_id  # a fork never moves the game's main line
    assert (await agent.state(after.checkpoint.id))["public"] == after.values["public"]
    assert len(after.values["turn_log"]) == len((await agent.state(checkpoint_id=fork_id))["turn_log"]) + 1
    snapshot = await agent.graph.aget_state(agent.run_config(after.checkpoint.id))  # LangGraph's own lineage
    assert snapshot.parent_config["configurable"]["checkpoint_id"] == fork_id
    with pytest.raises(KeyError):
        await agent.state(checkpoint_id="no-such-checkpoint")


@pytest.mark.parametrize("agent_name", AGENTS)
async def test_episode_completes_and_private_state_never_goes_public(task, agent_name):
    client = make_client(LLMSettings(cache="off"))
    for i in range(3):
        episode = await run_fork_episode(task, agent_name, ModelSession(client, run_seed=0, episode_id=f"{agent_name}-{i}"),
                                         ForkSettings())
        record = episode.model_dump(mode='json')
        assert fork_outcome(episode).value in {"self_consistent", "over_confirmation", "state_substitution",
                                     "all_denial", "leakage", "unparseable"}
        public = " ".join(m["content"] for m in record["transcript"])
        for private_marker in ("<secret>", "working_memory", "## 2. Facts", "private_reasoning", "My secret is"):
            assert private_marker not in public
        if agent_name == "vanilla":
            assert record["private_state_at_fork"] == "" and set(record["state_size_per_turn"]) == {0}
        else:
            assert record["state_size_per_turn"][-1] > 0
        if record.get("candidates"):
            assert record["candidates"][0]["source"] == "revealed"
            assert len({c["secret"] for c in record["candidates"]}) == len(record["candidates"])


async def test_memory_agent_answers_from_its_stored_secret(task):
    client = make_client(LLMSettings(cache="off"))
    record = (await run_fork_episode(task, "workflow_overwrite", ModelSession(client, run_seed=3, episode_id="w"),
                                    ForkSettings())).model_dump(mode='json')
    from psit_lib.studies.psit.memory.working_memory import extract_secret

    stored = extract_secret(record["private_state_at_fork"])
    if stored:  # a lossy overwrite may have dropped it; then nothing is asserted here
        assert record["reveal"]["parsed"] == stored
        assert task.is_compatible(state_from_constraints(record["constraints"]), stored)


async def _table(client_settings, tmp_path, name):
    task = HangmanTask()
    params = ForkTestParams(agents=AGENTS, n_episodes=3)
    records = await run_episodes(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params),
                                 store=RunStore(tmp_path / name), client=make_client(client_settings),
                                 run_seed=0, progress=False)
    return fork_rows(read_records(records, ForkEpisode))[["episode_id", "agent", "outcome", "revealed"]]


@pytest.mark.slow
async def test_in_process_and_loopback_server_give_identical_tables(tmp_path, sim_server_url):
    local = await _table(LLMSettings(cache="off"), tmp_path, "local")
    remote = await _table(LLMSettings(backend="openai", base_urls=(sim_server_url,), model="psit-sim",
                                      cache="off"), tmp_path, "remote")
    assert local.equals(remote)
    assert (local["outcome"] != "error").all()
