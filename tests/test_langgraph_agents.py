"""Every agent is a LangGraph graph: compiled once per kind, its turns checkpointed by LangGraph's
savers, its tool loops bounded by LangGraph's recursion limit, a researcher's own graph adapted with
one-sentence errors, and a run's checkpoints reopened after the run (PSIT_CHECKPOINTS=sqlite)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import END, START, MessagesState, StateGraph

from psit_lib.llm import ChatResult, LLMSettings, ModelSession, ToolCall
from psit_lib.llm.errors import ConfigurationError
from psit_lib.runs import Experiment
from psit_lib.runs.backend import make_client
from psit_lib.runs.checkpoints import CHECKPOINT_FILE, checkpoint_mode
from psit_lib.runs.load import load_run
from psit_lib.studies.basis.prompts import ORCHESTRATOR_ID, SUBAGENT_ID
from psit_lib.studies.basis.system import BasisLimits
from psit_lib.studies.psit.agents.factory import build_agent
from psit_lib.studies.psit.agents.graph_agent import AgentStateError, AgentStepLimitError, CheckpointRef, Turn
from psit_lib.studies.psit.agents.graphs import ChatAgent, compiled_graph
from psit_lib.studies.psit.agents.config import parse_agent
from psit_lib.studies.psit.agents.langgraph_adapter import HostContext, graph_family
from psit_lib.studies.psit.agents.names import register_agent_family
from psit_lib.studies.psit.protocol.experiment import fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.fork_test import NEUTRAL_SYSTEM_PROMPT, ForkSettings, host_role, run_fork_episode
from psit_lib.studies.psit.protocol.params import ForkTestParams
from psit_lib.studies.psit.protocol.reopen import reopen_episode
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from recording import CapturingSession, RecordingClient
from test_basis import run_system

TASK = HangmanTask()


def test_each_agent_kind_is_compiled_once_and_each_agent_binds_its_own_saver():
    a = build_agent("workflow_overwrite", system_prompt="s", host_role="hangman_host")
    b = build_agent("workflow_append_delete", system_prompt="s", host_role="hangman_host")
    assert compiled_graph("workflow") is compiled_graph("workflow")  # one compiled graph per kind
    assert a.graph is not b.graph and a.saver is not b.saver  # copies, each with its episode's InMemorySaver
    assert type(a.saver).__name__ == "InMemorySaver"
    assert set(compiled_graph("autonomous").nodes) >= {"respond", "tools"}


def _tool_rounds_then_reply(rounds: int):
    """The host asks for a memory edit ``rounds`` times in a turn, then replies."""
    calls = iter(range(10_000))

    def answer(role: str):
        if role != "hangman_host":
            return None
        n = next(calls)
        if n < rounds:
            return ChatResult(content="", tool_calls=(ToolCall(f"c{n}", "overwrite_memory",
                                                               '{"new_memory": "<secret>planet</secret>"}'),))
        return ChatResult(content="_ _ _ _ _ _ · 6 lives.")
    return answer


@pytest.mark.parametrize("rounds, fails", [(11, False), (12, True)])
async def test_the_autonomous_tool_loop_is_bounded_by_langgraph_recursion_limit_as_in_the_study(rounds, fails):
    """The study's LangGraph default of 25 steps: respond and tools alternate, and the step that
    ends the run counts, so eleven rounds and a reply fit; a twelfth round fails the turn."""
    client = RecordingClient(LLMSettings(cache="off"))
    session = CapturingSession(ModelSession(client, run_seed=0, episode_id=f"loop-{rounds}"), [],
                               override=_tool_rounds_then_reply(rounds))
    agent = ChatAgent(parse_agent("autonomous_overwrite"), system_prompt=NEUTRAL_SYSTEM_PROMPT,
                      host_role=host_role(TASK))
    if fails:
        with pytest.raises(AgentStepLimitError, match="recursion limit of 25"):
            await agent.send(TASK.opener(), session)
    else:
        turn = await agent.send(TASK.opener(), session)
        assert len(turn.values["turn_log"][-1]["edits"]) == rounds and turn.reply.startswith("_ _")
    await client.aclose()


async def test_basis_loops_stop_at_their_step_limits_through_the_recursion_limit():
    always_act = ChatResult(content="", tool_calls=(ToolCall("c", "list_rides", "{}"),))
    delegate = ChatResult(content="", tool_calls=(ToolCall("d", "delegate_to_cab_agent",
                                                           '{"instruction": "book a cab"}'),))
    replies = {SUBAGENT_ID: always_act, ORCHESTRATOR_ID: delegate}
    _, run, _, _ = await run_system("premium_bias", "baseline", limits=BasisLimits(2, 3),
                                    override=lambda role: replies.get(role))
    assert run.orchestrator_steps == 2 and run.final_answer is None
    assert [d.steps for d in run.delegations] == [3, 3] and all(d.reply is None for d in run.delegations)
    assert sum("step limit" in error for error in run.errors) == 3  # two delegations, then the orchestrator


# -- a researcher's own graph ------------------------------------------------------------------
class Notes(MessagesState):
    notes: str


async def _reply(state, runtime):
    result = await runtime.context.chat(state["messages"])
    return {"messages": [{"role": "assistant", "content": result.content}], "notes": "seen"}


def _graph(state_type: type = Notes, node=_reply) -> Any:
    builder = StateGraph(state_type, context_schema=HostContext)
    builder.add_node("reply", node)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile()


class Plain(TypedDict):
    messages: list[dict[str, str]]


class Added(TypedDict):
    messages: Annotated[list[dict[str, str]], operator.add]
    notes: str


def test_a_graph_without_the_named_state_is_refused_in_one_sentence_naming_the_key():
    with pytest.raises(AgentStateError, match="no 'history' key"):
        graph_family(_graph(), messages_key="history")
    with pytest.raises(AgentStateError, match="'scratch' key"):
        graph_family(_graph(), private_key="scratch")
    with pytest.raises(AgentStateError, match="must append messages"):
        graph_family(_graph(Plain))
    with pytest.raises(AgentStateError, match="compiled LangGraph graph"):
        graph_family(StateGraph(Notes))


async def test_a_graph_that_leaves_its_private_key_unset_or_gives_no_reply_fails_naming_it():
    async def silent(state, runtime):
        return {"messages": []}

    session = ModelSession(make_client(LLMSettings(cache="off")), run_seed=0, episode_id="adapter")
    unset = graph_family(_graph(Added, silent), private_key="notes")("mine", "s", "hangman_host")
    with pytest.raises(AgentStateError, match="no 'notes' key after a turn"):
        await unset.send("hello", session)
    mute = graph_family(_graph(Added, silent))("mine", "s", "hangman_host")
    with pytest.raises(AgentStateError, match="without an assistant message under 'messages'"):
        await mute.send("hello", session)


async def test_a_graph_agent_plays_the_fork_test_and_records_its_private_state_per_turn():
    register_agent_family("notes", graph_family(_graph(), private_key="notes"))
    client = make_client(LLMSettings(cache="off"))
    record = await run_fork_episode(TASK, "notes", ModelSession(client, run_seed=0, episode_id="n"), ForkSettings())
    assert record.private_state_per_turn == ["seen"] * 4 and record.state_size_per_turn[0] > 0
    assert [m.role for m in record.transcript[:2]] == ["user", "assistant"] and record.reveal is not None
    ids = [c.id for c in record.turn_checkpoints]
    assert [c.parent for c in record.turn_checkpoints] == [None, *ids[:-1]]  # one line of turns
    assert {c.checkpoint.parent for c in record.candidates} == {ids[-1]} == {record.reveal.checkpoint.parent}


async def test_a_hand_written_agent_whose_state_lacks_public_is_an_error_naming_the_key():
    class NoPublic:
        thread_id = "t"

        async def send(self, text, session, *, checkpoint_id=None):
            return Turn({"reply": "_ _ _ _ _ · 6 lives."}, CheckpointRef("c", checkpoint_id))

        async def state(self, checkpoint_id=None):
            return {"turn_log": []}

        def private_state(self, values):
            return ""

    register_agent_family("nopublic", lambda name, system, role: NoPublic())
    client = make_client(LLMSettings(cache="off"))
    with pytest.raises(AgentStateError, match="no 'public' list"):
        await run_fork_episode(TASK, "nopublic", ModelSession(client, run_seed=0, episode_id="p"), ForkSettings(t_fork=1))


# -- checkpoints kept on disk, reopened after the run --------------------------------------------
def test_an_unknown_checkpoint_store_is_one_sentence(monkeypatch):
    monkeypatch.setenv("PSIT_CHECKPOINTS", "redis")
    with pytest.raises(ConfigurationError, match="PSIT_CHECKPOINTS='redis' is not a checkpoint store"):
        checkpoint_mode()


async def test_a_run_that_kept_its_checkpoints_reopens_an_episode_at_any_turn_and_forks_it_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_CHECKPOINTS", "sqlite")
    params = ForkTestParams(agents=["workflow_overwrite"], n_episodes=1)
    exp = Experiment("02_hangman_fork_tests", params.model_dump(), run_dir=tmp_path)
    [record] = await exp.run(plan_fork_episodes(TASK, params, exp.models), fork_episode_fn(TASK, params))
    folder = tmp_path / "02_hangman_fork_tests"
    assert (folder / CHECKPOINT_FILE).is_file()
    episode = record.result
    async with reopen_episode(load_run(tmp_path), "02", record.episode_id) as reopened:
        at_two = await reopened.graph.aget_state(reopened.config(turn=2))  # LangGraph's own StateSnapshot
        assert at_two.values["public"] == [m.model_dump() for m in episode.transcript[:4]]
        reveal = await reopened.graph.aget_state(reopened.config(branch="reveal"))
        assert reveal.values["reply"] == episode.reveal.answer
        assert reveal.parent_config["configurable"]["checkpoint_id"] == reopened.fork_id
        again = await reopened.agent.send(episode.reveal.question, reopened.session("again"),
                                          checkpoint_id=reopened.fork_id)
        assert again.checkpoint.parent == reopened.fork_id
        assert again.values["public"][:-2] == [m.model_dump() for m in episode.transcript]
        history = [s async for s in reopened.graph.aget_state_history(reopened.config())]
        assert again.checkpoint.id in {s.config["configurable"]["checkpoint_id"] for s in history}
    with pytest.raises(ValueError, match="no recorded branch 'nope'"):
        async with reopen_episode(tmp_path, "02", record.episode_id) as reopened:
            reopened.config(branch="nope")


async def test_a_run_without_kept_checkpoints_says_how_to_keep_them(tmp_path):
    params = ForkTestParams(agents=["vanilla"], n_episodes=1)
    exp = Experiment("02_hangman_fork_tests", params.model_dump(), run_dir=tmp_path)
    [record] = await exp.run(plan_fork_episodes(TASK, params, exp.models), fork_episode_fn(TASK, params))
    assert not (tmp_path / "02_hangman_fork_tests" / CHECKPOINT_FILE).exists()
    with pytest.raises(FileNotFoundError, match="PSIT_CHECKPOINTS=sqlite"):
        async with reopen_episode(tmp_path, "02", record.episode_id):
            pass


def test_the_documented_graph_is_the_example_a_test_runs():
    """docs/adding_a_study.md shows docs/examples/scratchpad_agent.py, line for line."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "adding_a_study.md").read_text()
    shown = doc.split("## Your own LangGraph agent", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    example = (root / "docs" / "examples" / "scratchpad_agent.py").read_text().splitlines()
    assert [line for line in shown.splitlines() if line.strip() and line not in example] == []
