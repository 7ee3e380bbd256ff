"""The four PSIT agents (``ChatAgent``) as LangGraph graphs, one compiled per agent kind.

    vanilla      turn                       (reasoning dropped every turn)
    private_cot  turn                       (reasoning kept in private context)
    workflow     turn                       (respond, then the memory updater; memory read-only while answering)
    autonomous   respond <-> tools          (the model edits memory through tools)

A turn of the first three is one node running the turn's steps in order (``respond``,
``update_memory`` for the workflow agent, ``finish``); the autonomous agent's tool loop is the
study's two-node cycle, bounded as the study's was by LangGraph's recursion limit (25 steps, its
default then; the step that ends the run counts, so eleven rounds of tools and a reply fit, and a
turn that asks for a twelfth round fails, as the study's did). The
steps are plain functions of the state and the turn's context (``AgentContext``, LangGraph's
runtime context), each returning the keys it changes.

Private CoT keeps one reasoning text per turn (empty when the model gave none), aligned with
its public replies, so the interleaved layout can put each one before the reply it produced.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from psit_lib.llm.client import ModelSession
from psit_lib.llm.diagnostics import FLAG_NO_REASONING, FLAG_PRIVATE_IN_PUBLIC
from psit_lib.llm.errors import ModelOutputError
from psit_lib.llm.reply_readers import tool_call_in_text
from psit_lib.llm.types import ChatResult, ToolCall
from psit_lib.llm.tokens import count_tokens
from psit_lib.studies.psit.memory.tool_schemas import tool_schemas
from psit_lib.studies.psit.memory.tools import apply_tool_call
from psit_lib.studies.psit.memory.working_memory import (WORKING_MEMORY_TAG, MemoryToolError, carries_memory_block,
                                                          initial_memory)

from psit_lib.studies.psit.agents.graph_agent import GraphAgent, one_turn_graph
from psit_lib.studies.psit.agents.config import AgentConfig
from psit_lib.llm.diagnostics import diagnostics_of, report_helper_failed, report_helper_read
from psit_lib.studies.psit.agents.prompts import (interleaved_reasoning, memory_block, private_reasoning_block,
                                                   reasoning_in_history_note, updater_messages)
from psit_lib.studies.psit.agents.tool_json import parse_tool_calls_json


class AgentState(TypedDict, total=False):
    """What a checkpoint holds: the agent's state between turns."""

    public: list[dict[str, str]]        # the public transcript (user / assistant)
    kept_reasoning: list[str]           # private CoT only
    memory: str                         # working-memory agents only
    turn_log: list[dict[str, Any]]      # per-turn audit (private state size, memory edits)
    pending_user: str                   # this turn's input (the last turn's, between turns)
    reply: str                          # this turn's public answer


class ToolLoopState(AgentState, total=False):
    """The autonomous agent's state: a turn's tool loop passes these between its two nodes (empty
    between turns). The other agents' turns are one node, so they keep them out of the state."""

    reasoning: str                      # this turn's private reasoning (never public)
    tool_exchange: list[dict[str, Any]] # autonomous: this turn's tool-call messages
    edits: list[dict[str, Any]]         # this turn's memory edits
    text_tool_calls: list[str]          # autonomous: tools this turn's replies named in text (not run)
    pending_tool_calls: list[tuple[str, str, str]]  # autonomous: this reply's calls, not yet applied


@dataclass
class AgentContext:
    """Per-run context: the model session of this branch, the agent and the host prompt."""

    session: ModelSession
    config: AgentConfig
    system_prompt: str
    host_role: str


def private_state_text(config: AgentConfig, state: Mapping[str, Any]) -> str:
    """The private state an agent carries into its next turn (what the size figure counts), from
    the agent's state (an :class:`AgentState`, or the values of a stored checkpoint)."""
    if config.kind == "private_cot":
        kept = state.get("kept_reasoning", [])
        if config.reasoning_layout == "interleaved":
            return "\n".join(f"<thinking>{text.strip()}</thinking>" for text in kept if text.strip())
        return private_reasoning_block(kept)
    if config.has_memory:
        return state.get("memory", "")
    return ""


def _system(ctx: AgentContext, state: Mapping[str, Any]) -> str:
    parts = [ctx.system_prompt]
    if ctx.config.kind == "private_cot" and ctx.config.reasoning_layout == "system_block":
        block = private_reasoning_block(state.get("kept_reasoning", []))
        if block:
            parts.append(block)
    elif ctx.config.kind == "private_cot":
        parts.append(reasoning_in_history_note())
    elif ctx.config.has_memory:
        parts.append(memory_block(state.get("memory") or initial_memory(),
                                  autonomous=ctx.config.kind == "autonomous"))
    return "\n\n".join(parts)


def _apply(memory: str, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Apply one edit; a failing edit leaves memory unchanged and is recorded."""
    try:
        result = apply_tool_call(memory, name, arguments)
    except MemoryToolError as exc:
        return memory, {"name": name, "ok": False, "error": str(exc)}
    return result.new_memory, {"name": name, "ok": True, "meta": result.meta}


async def respond(state: Mapping[str, Any], ctx: AgentContext) -> dict[str, Any]:
    history = state.get("public", [])
    if ctx.config.kind == "private_cot" and ctx.config.reasoning_layout == "interleaved":
        history = interleaved_reasoning(history, state.get("kept_reasoning", []))
    messages = [{"role": "system", "content": _system(ctx, state)}, *history,
                {"role": "user", "content": state["pending_user"]}, *state.get("tool_exchange", [])]
    autonomous = ctx.config.kind == "autonomous"
    tools = tool_schemas(ctx.config.memory_strategy) if autonomous else None
    result = await ctx.session.chat(messages, role=ctx.host_role, tools=tools)
    _flag_reply(ctx, result)
    reasoning = "\n".join(x for x in (state.get("reasoning", ""), result.reasoning or "") if x)
    update: dict[str, Any] = {"reply": result.content, "reasoning": reasoning}
    if autonomous and not result.tool_calls:
        named = tool_call_in_text(result.content, {t["function"]["name"] for t in tools or ()})
        if named:  # flagged by the session; never run: the turn's log shows it and no edit
            update["text_tool_calls"] = [*state.get("text_tool_calls", []), named]
    if autonomous and result.tool_calls:
        assistant = {"role": "assistant", "content": result.content or "",
                     "tool_calls": [c.to_message() for c in result.tool_calls]}
        update["tool_exchange"] = [*state.get("tool_exchange", []), assistant]
        update["pending_tool_calls"] = [(c.id, c.name, c.arguments) for c in result.tool_calls]
    return update


def _flag_reply(ctx: AgentContext, result: ChatResult) -> None:
    """Flag what nothing else in the record would show: a reply without reasoning for an agent
    whose design rests on it (private CoT, the workflow updater), and a public reply that carries
    the private working-memory block (kept as written: the protocol scores what was said)."""
    diagnostics = diagnostics_of(ctx.session)
    if diagnostics is None:
        return
    if ctx.config.needs_reasoning and not (result.reasoning or "").strip():
        diagnostics.flag(
            FLAG_NO_REASONING, ctx.host_role, result.content,
            f"{ctx.config.name} got a reply with no reasoning, so it keeps no private reasoning this turn",
            agent=ctx.config.name)
    if carries_memory_block(result.content):
        diagnostics.flag(FLAG_PRIVATE_IN_PUBLIC, ctx.host_role, result.content,
                         f"{ctx.config.name} copied its <{WORKING_MEMORY_TAG}> block into a public reply",
                         agent=ctx.config.name)


def tool_result_text(edit: dict[str, Any]) -> str:
    """What the model reads back from a memory tool: ok, or the error; and any warning the tool
    raised (a skipped hunk, a patch that was already applied), so it can correct itself."""
    if not edit["ok"]:
        return f"error: {edit['error']}"
    meta = edit.get("meta") or {}
    warnings = meta.get("warnings") or []
    changed = meta.get("changed_lines")
    text = "ok: memory updated" if changed != 0 else "ok: nothing changed"
    return text + ("; warnings: " + "; ".join(map(str, warnings)) if warnings else "")


async def apply_tools(state: Mapping[str, Any], ctx: AgentContext) -> dict[str, Any]:
    memory = state.get("memory") or initial_memory()
    exchange = list(state.get("tool_exchange", []))
    edits = list(state.get("edits", []))
    for call_id, name, raw in state.get("pending_tool_calls", []):
        try:
            arguments = ToolCall(call_id, name, raw).parsed_arguments()
            memory, edit = _apply(memory, name, arguments)
        except ModelOutputError as exc:
            edit = {"name": name, "ok": False, "error": str(exc)}
        edits.append(edit)
        text = tool_result_text(edit)
        exchange.append({"role": "tool", "tool_call_id": call_id, "content": text})
    return {"memory": memory, "tool_exchange": exchange, "edits": edits, "pending_tool_calls": []}


UPDATER_ROLE = "memory_updater"


async def update_memory(state: Mapping[str, Any], ctx: AgentContext) -> dict[str, Any]:
    """The updater's edits for this turn, applied all together or not at all. A try whose JSON
    cannot be read, names a tool the strategy lacks, or has an edit the tools reject leaves the
    memory as it was; the next try shows the updater that error (up to ``updater_attempts``)."""
    memory = state.get("memory") or initial_memory()
    dialogue = [*state.get("public", []), {"role": "user", "content": state["pending_user"]},
                {"role": "assistant", "content": state.get("reply", "")}]
    tools = tool_schemas(ctx.config.memory_strategy)
    allowed = {t["function"]["name"] for t in tools}
    edits: list[dict[str, Any]] = []
    last_error: str | None = None
    for attempt in range(1, ctx.config.updater_attempts + 1):
        result = await ctx.session.chat(
            updater_messages(memory, dialogue, state.get("reasoning", ""), state.get("reply", ""), tools,
                             previous_error=last_error),
            role=UPDATER_ROLE)
        try:
            calls = parse_tool_calls_json(result.content)
        except ModelOutputError as exc:
            last_error = str(exc)
            report_helper_read(ctx.session, UPDATER_ROLE, result.content, last_error, agent=ctx.config.name,
                               flag=False)  # a later try may still succeed
            edits.append({"name": "(unparsed)", "ok": False, "error": last_error, "meta": {"attempt": attempt}})
            continue
        report_helper_read(ctx.session, UPDATER_ROLE, result.content, None, agent=ctx.config.name)
        draft, tried = memory, []
        for name, arguments in calls:
            edit: dict[str, Any]
            if name not in allowed:
                edit = {"name": name, "ok": False,
                        "error": f"tool {name!r} is not available to the {ctx.config.strategy} strategy"}
            else:
                draft, edit = _apply(draft, name, arguments)
            tried.append({**edit, "meta": {**(edit.get("meta") or {}), "attempt": attempt}})
        edits.extend(tried)
        failed = [e for e in tried if not e["ok"]]
        if not failed:
            return {"memory": draft, "edits": edits}
        last_error = "; ".join(f"{e['name']}: {e['error']}" for e in failed)
    report_helper_failed(ctx.session, UPDATER_ROLE, result.content,
                         f"no update applied after {ctx.config.updater_attempts} tries, memory unchanged "
                         f"this turn; last error: {last_error}", agent=ctx.config.name)
    return {"memory": memory, "edits": edits}


async def finish(state: Mapping[str, Any], ctx: AgentContext) -> dict[str, Any]:
    public = [*state.get("public", []), {"role": "user", "content": state["pending_user"]},
              {"role": "assistant", "content": state.get("reply", "")}]
    kept = list(state.get("kept_reasoning", []))
    if ctx.config.kind == "private_cot":
        kept.append(state.get("reasoning", ""))  # one per reply, aligned with the public turns
    new_state: AgentState = {"public": public, "kept_reasoning": kept,
                             "memory": state.get("memory") or (initial_memory() if ctx.config.has_memory else "")}
    log_entry = {"turn": len(public) // 2,
                 "private_state_tokens": count_tokens(private_state_text(ctx.config, new_state)),
                 "private_state": private_state_text(ctx.config, new_state),  # the explorer's turn-by-turn view
                 "reasoning_tokens": count_tokens(state.get("reasoning", "")),
                 "edits": state.get("edits", []),
                 "tool_calls_as_text": state.get("text_tool_calls", [])}
    return {**new_state, "turn_log": [*state.get("turn_log", []), log_entry]}


def tool_loop_cleared() -> dict[str, Any]:
    """The autonomous agent's tool-loop keys as a finished turn leaves them for the next (new lists
    each time: a state's values are never shared)."""
    return {"reasoning": "", "tool_exchange": [], "edits": [], "pending_tool_calls": [], "text_tool_calls": []}


async def turn(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """The whole turn of the vanilla, private CoT and workflow agents, as one node."""
    ctx = runtime.context
    during = {**state, **await respond(state, ctx)}  # the turn's reasoning and edits stay in the node
    if ctx.config.kind == "workflow":
        during |= await update_memory(during, ctx)
    return {"reply": during["reply"], **await finish(during, ctx)}


async def respond_or_finish(state: ToolLoopState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    """The autonomous agent's model call: the tool calls it asked for go to ``tools``; a reply
    without them ends the turn."""
    update = await respond(state, runtime.context)
    if update.get("pending_tool_calls"):
        return update
    return update | await finish({**state, **update}, runtime.context) | tool_loop_cleared()


async def tools(state: ToolLoopState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
    return await apply_tools(state, runtime.context)


def _after_respond(state: ToolLoopState) -> str:
    return "tools" if state.get("pending_tool_calls") else END


@functools.cache
def compiled_graph(kind: str) -> Any:
    """The graph of agent ``kind``, compiled once per process (each agent binds its episode's saver)."""
    if kind != "autonomous":
        return one_turn_graph(AgentState, AgentContext, turn)
    graph = StateGraph(ToolLoopState, context_schema=AgentContext)
    graph.add_node("respond", respond_or_finish)
    graph.add_node("tools", tools)
    graph.add_edge(START, "respond")
    graph.add_conditional_edges("respond", _after_respond, ["tools", END])
    graph.add_edge("tools", "respond")
    return graph.compile()


STUDY_RECURSION_LIMIT = 25
"""The study's LangGraph default recursion limit (langgraph 0.5): the autonomous agent's
respond/tools cycle gets 25 steps per turn (tests/test_langgraph_agents.py pins what fits)."""


class ChatAgent(GraphAgent):
    """One PSIT agent for one episode: its kind's graph on the episode's thread."""

    def __init__(self, config: AgentConfig, *, system_prompt: str, host_role: str) -> None:
        super().__init__(compiled_graph(config.kind), name=config.name)
        self.config = config
        self.system_prompt = system_prompt
        self.host_role = host_role
        if config.kind == "autonomous":
            self.recursion_limit = STUDY_RECURSION_LIMIT

    def context(self, session: ModelSession) -> AgentContext:
        return AgentContext(session=session, config=self.config, system_prompt=self.system_prompt,
                            host_role=self.host_role)

    def private_state(self, values: dict[str, Any]) -> str:
        return private_state_text(self.config, values)
