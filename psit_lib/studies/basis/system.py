"""The BASIS multi-agent system on the CabApp (SPEC §6): orchestrator, cab subagent, notifier.

``baseline`` and ``basis`` share every prompt, node and limit; with ``basis`` the cortex (one
``ingest_episode`` model call per agent step) stores every step as an episode and puts the episodes an
agent may see into its system prompt, so a difference in success comes from that information flow
alone. What goes wrong is recorded in ``MultiAgentRun.errors``.

The orchestrator and each delegation to a subagent are LangGraph graphs, compiled once per process:
one node per step (a model call and the tool calls it asked for), looping until the agent replies.
The trial's own object is the graphs' runtime context. Each loop is bounded by LangGraph's
recursion limit, set to the agent's step limit (``BasisLimits``) plus the step that ends the run;
a step knows it is the last from LangGraph's ``RemainingSteps``. The orchestrator runs on the
trial's thread (the episode id) with the episode's checkpointer, a checkpoint per step; a
delegation runs as its subgraph, in a namespace of that thread, a fresh conversation each time.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from langgraph.runtime import Runtime

from psit_lib.llm.diagnostics import FLAG_HELPER_FAILED, FLAG_MISSING_TOOL_CALL, READ_HELPER
from psit_lib.llm.errors import ModelCallError, ModelOutputError
from psit_lib.llm.reply_readers import tool_call_in_text
from psit_lib.runs.checkpoints import episode_checkpointer, is_kept
from psit_lib.studies.basis.cortex import (CORTEX_WINDOW, INGEST_TOOL, AgentRegistry, CortexInputError, Episode,
                                           EpisodeStore, fallback_episode, format_context_block, parse_ingest_call)
from psit_lib.studies.basis.cab_app import CAB_TOOLS, CabApp, call_cab_tool
from psit_lib.studies.basis.records import AppCall, Delegation, StepView
from psit_lib.studies.basis.scenarios import Scenario
from psit_lib.studies.basis.prompts import (
    AGENT_IDS,
    CORTEX_ROLE,
    DELEGATE_TOOL,
    DELEGATE_TOOL_NAME,
    NOTIFIER_ID,
    NOTIFY_TOOL,
    NOTIFY_TOOL_NAME,
    ORCHESTRATOR_ID,
    PROMPTS,
    SEND_MESSAGE_TOOL,
    SEND_MESSAGE_TOOL_NAME,
    SUBAGENT_ID,
    TracedCall,
    cortex_system_prompt,
    cortex_user_prompt,
    notifier_prompt,
    orchestrator_prompt,
    step_trace,
    with_context,
)

#: The orchestrator's delegation tools and the agent each one reaches.
DELEGATES: dict[str, str] = {DELEGATE_TOOL_NAME: SUBAGENT_ID, NOTIFY_TOOL_NAME: NOTIFIER_ID}

INGEST_TOOL_NAME: str = INGEST_TOOL["function"]["name"]
#: Ask for the ingest tool by name; servers that honour ``tool_choice`` then always call it.
INGEST_TOOL_CHOICE: dict[str, Any] = {"type": "function", "function": {"name": INGEST_TOOL_NAME}}

SystemKind = Literal["baseline", "basis"]
SYSTEMS: tuple[SystemKind, ...] = ("baseline", "basis")


@dataclass(frozen=True)
class BasisLimits:
    """Upper bounds on each agent's steps, so a confused model cannot loop forever (``BasisParams``
    checks them); each is its loop's LangGraph recursion limit, less the step that ends the run."""

    orchestrator_max_steps: int = 5
    subagent_max_steps: int = 6


@dataclass
class MultiAgentRun:
    """Everything a trial needs to report about one run of the system."""

    system: SystemKind
    final_answer: str | None = None
    orchestrator_steps: int = 0
    delegations: list[Delegation] = field(default_factory=list)
    user_messages: list[str] = field(default_factory=list)
    tool_calls: list[AppCall] = field(default_factory=list)
    views: list[StepView] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    decided_without_tool_calls: bool = False
    final_answer_as_tool_call: str | None = None


@dataclass(frozen=True)
class Subagent:
    """A subagent of the orchestrator: what it reads, the tools it is offered, its model session,
    and what carries out one of its tool calls (delegation, step, name, arguments) -> result."""

    prompt: str
    tools: list[dict[str, Any]]
    session: Any
    run_tool: Callable[[int, int, str, Any], str]


def subagent_prompt(scenario: Scenario) -> str:
    """The cab subagent's system prompt: its job, then the scenario's policy (the confounder)."""
    return f"{PROMPTS.render('basis.subagent')}\n\n{scenario.subagent_policy}"


def _raw_mask_text(arguments_json: str) -> Any:
    """The ``access_mask`` value as the model wrote it (for the record), or None if unreadable."""
    try:
        args = json.loads(arguments_json)
    except (TypeError, json.JSONDecodeError):
        return None
    return args.get("access_mask") if isinstance(args, dict) else None


def _bad_arguments_result(exc: Exception) -> str:
    return f"Error: the tool arguments could not be read ({exc}); send a JSON object."


class CabMultiAgentSystem:
    """One trial's orchestrator, cab subagent and notifier, with or without the cortex; each agent,
    and the cortex, on its own branch of the episode's session."""

    def __init__(
        self,
        scenario: Scenario,
        app: CabApp,
        session: Any,
        *,
        system: SystemKind,
        limits: BasisLimits = BasisLimits(),
    ) -> None:
        self.scenario = scenario
        self.app = app
        self.limits = limits
        self.registry = AgentRegistry(AGENT_IDS)
        self.diagnostics = getattr(session, "diagnostics", None)  # None for test doubles
        self.orchestrator_session = session.branch(ORCHESTRATOR_ID)
        self.subagents = {
            SUBAGENT_ID: Subagent(subagent_prompt(scenario), CAB_TOOLS, session.branch(SUBAGENT_ID), self._call_cab),
            NOTIFIER_ID: Subagent(notifier_prompt(), [SEND_MESSAGE_TOOL], session.branch(NOTIFIER_ID), self._send_message),
        }
        # the cortex's own branch, so its seeds do not depend on the other agents' calls
        self.cortex = session.branch(CORTEX_ROLE) if system == "basis" else None
        self.store = EpisodeStore()
        self.run_record = MultiAgentRun(system=system)
        self.thread_id = str(getattr(session, "episode_id", "trial"))

    # -- shared pieces ---------------------------------------------------------------------
    def _system_prompt(self, agent_id: str, base: str, step_label: str) -> str:
        """The agent's system prompt; with the cortex, its visible episodes are added first."""
        episodes = [] if self.cortex is None else self.store.visible_to(self.registry.mask_of(agent_id))
        block = format_context_block(episodes)
        self.run_record.views.append(StepView(agent=agent_id, step=step_label, context_chars=len(block),
                                              visible_episodes=[ep.episode_id for ep in episodes]))
        return with_context(base, block)

    async def _chat(self, agent: str, session: Any, base: str, label: str, messages: list[dict[str, Any]],
                    tools: list[dict[str, Any]], kind: str, inputs: list[tuple[str, str]]) -> tuple[Any, str | None]:
        """One model call of ``agent``, and the tool a reply without tool calls names in a call written
        as text (noted in the errors; never run, so the text stands as the reply, which is ingested here)."""
        system = self._system_prompt(agent, base, label)
        result = await session.chat([{"role": "system", "content": system}, *messages], role=agent, tools=tools)
        named = None
        if not result.tool_calls:
            named = tool_call_in_text(result.content, {t["function"]["name"] for t in tools})
            if named:
                self.run_record.errors.append(f"{agent} {label}: wrote a {named} call as text; it was not run "
                                              "and the text stands as the reply")
            await self._ingest(agent, step_trace(agent, kind, inputs=inputs, reply=result.content), kind, label)
        return result, named

    def _flag(self, kind: str, role: str, example: str, detail: str) -> None:
        if self.diagnostics is not None:
            self.diagnostics.flag(kind, role, example, detail, agent=self.run_record.system)

    def _check_acted(self) -> None:
        """Mark and flag a trial decided without any CabApp call its scenario needs: the pass
        check then reads an app no agent acted on (a ``quote_only_vs_book`` pass with no call
        at all is the model doing nothing, e.g. delegating in text, not refusing to book)."""
        if self.scenario.acted(self.run_record.tool_calls):
            return
        self.run_record.decided_without_tool_calls = True
        delegated = any(d.agent == SUBAGENT_ID for d in self.run_record.delegations)
        detail = (f"the cab agent made no {' / '.join(self.scenario.needs)} call" if delegated
                  else "the orchestrator never delegated to the cab agent")
        self._flag(FLAG_MISSING_TOOL_CALL, SUBAGENT_ID if delegated else ORCHESTRATOR_ID,
                   self.run_record.final_answer or "", f"{self.scenario.name}: {detail}")

    def _check_cortex(self) -> None:
        """Flag a basis trial whose every ingest fell back: each step was then visible to its own
        agent only, so the trial ran as the baseline under the basis name."""
        episodes = self.run_record.episodes
        if self.cortex is None or not episodes or any(ep.metadata.get("ingest") == "ok" for ep in episodes):
            return
        self._flag(FLAG_HELPER_FAILED, CORTEX_ROLE, str(episodes[-1].metadata.get("fallback_reason") or ""),
                   f"all {len(episodes)} cortex ingests fell back: no step was shared")

    def _read_ingest(self, reply: str, problem: str | None) -> None:
        """Count one ingest reply as read (``problem`` None) or unreadable, so a failing cortex shows in health."""
        if self.diagnostics is not None:
            self.diagnostics.read(READ_HELPER, CORTEX_ROLE, problem is None, reply, problem or "",
                                  agent=self.run_record.system)

    async def _ingest(self, agent_id: str, trace: str, kind: str, step_label: str) -> None:
        """Store one agent step as an episode (with the cortex); never raises for anything the model
        does: a failed ingest is stored as a fallback episode visible to its own agent only."""
        if self.cortex is None:
            return
        episode_id = self.store.next_episode_id()
        previous = self.store.recent_by(agent_id, CORTEX_WINDOW)
        meta: dict[str, Any] = {"kind": kind, "step": step_label, "cortex_window": [ep.episode_id for ep in previous]}
        messages = [{"role": "system", "content": cortex_system_prompt(self.registry)},
                    {"role": "user", "content": cortex_user_prompt(agent_id, previous, trace)}]

        def fall_back(reason: str) -> None:
            self.store.append(fallback_episode(episode_id, agent_id, trace, self.registry, reason, meta))

        try:
            result = await self.cortex.chat(messages, role=CORTEX_ROLE, tools=[INGEST_TOOL],
                                            tool_choice=INGEST_TOOL_CHOICE)
        except (ModelCallError, ModelOutputError) as exc:
            return fall_back(f"the cortex model call failed: {exc}")
        calls = [call for call in result.tool_calls if call.name == INGEST_TOOL_NAME]
        if not calls:
            others = ", ".join(call.name for call in result.tool_calls)
            reason = f"no {INGEST_TOOL_NAME} call in the reply" + (f" (it called {others} instead)" if others else "")
            self._read_ingest(result.content, reason)
            return fall_back(reason)
        call = calls[0]
        meta["mask_text"] = _raw_mask_text(call.arguments)
        if len(calls) > 1:
            meta["extra_ingest_calls"] = len(calls) - 1
        try:
            summary, mask = parse_ingest_call(call.arguments, self.registry)
        except CortexInputError as exc:
            self._read_ingest(call.arguments, str(exc))
            return fall_back(str(exc))
        self._read_ingest(call.arguments, None)
        meta["ingest"] = "ok"
        self.store.append(Episode(episode_id=episode_id, source_agent_id=agent_id, access_mask=mask,
                                  raw_trace=trace, summary=summary, metadata=meta))

    # -- the cab subagent --------------------------------------------------------------------
    def _call_cab(self, delegation: int, step: int, name: str, arguments: Any) -> str:
        """The cab agent's tool call, on the CabApp, recorded with the delegation and step (the result
        cut to 300 characters)."""
        outcome = call_cab_tool(self.app, name, arguments)
        kept = outcome if len(outcome) <= 300 else outcome[:299] + "…"
        self.run_record.tool_calls.append(AppCall(delegation=delegation, subagent_step=step, name=name,
                                                  arguments=arguments, result=kept, ok=not outcome.startswith("Error:")))
        return outcome

    def _send_message(self, delegation: int, step: int, name: str, arguments: Any) -> str:
        """The notifier's tool call: the message is kept in the run record."""
        if name != SEND_MESSAGE_TOOL_NAME or not isinstance(arguments.get("content"), str):
            return f"Error: the only tool is {SEND_MESSAGE_TOOL_NAME} with a string 'content'."
        self.run_record.user_messages.append(arguments["content"])
        return "Message sent to the user."

    async def _subagent_step(self, agent: str, delegation: int, step: int, messages: list[dict[str, Any]],
                             instruction: str, last: bool) -> str | None:
        """One subagent step: a model call, then every tool call it asked for (under the policy),
        stored by the cortex when there is one. Returns the reply, or None while the agent acts
        (``last``: no step follows this one)."""
        label = f"d{delegation} step {step}"
        subagent = self.subagents[agent]
        inputs = [("instruction", instruction)]
        result, _ = await self._chat(agent, subagent.session, subagent.prompt, label, messages, subagent.tools,
                                     "subagent_step", inputs)
        if not result.tool_calls:
            return result.content

        known = {t["function"]["name"] for t in subagent.tools}
        wire_calls, tool_messages, traced = [], [], []
        for call in result.tool_calls:
            wire_calls.append(call.to_message())  # exactly as the model wrote it
            try:
                arguments = call.parsed_arguments()
            except ModelOutputError as exc:
                text = _bad_arguments_result(exc)
                self.run_record.errors.append(f"{agent} {label}: {exc}")
                tool_messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
                traced.append(TracedCall(call.name, call.arguments, text))
                continue
            if call.name not in known:
                self.run_record.errors.append(f"{agent} {label}: called unknown tool {call.name!r}")
            outcome = subagent.run_tool(delegation, step, call.name, arguments)
            tool_messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome})
            traced.append(TracedCall(call.name, arguments, outcome))
        messages.append({"role": "assistant", "content": result.content or None, "tool_calls": wire_calls})
        messages.extend(tool_messages)
        if last:
            self.run_record.errors.append(
                f"{agent} reached its step limit ({self.limits.subagent_max_steps}) in delegation "
                f"{delegation} without replying."
            )
        await self._ingest(agent, step_trace(agent, "subagent_step", inputs=inputs, calls=traced,
                                             reply=result.content or None), "subagent_step", label)
        return None

    async def delegate(self, instruction: str, agent: str = SUBAGENT_ID) -> Delegation:
        """Run a subagent on one instruction (a fresh conversation, its graph) and return its reply."""
        index = len(self.run_record.delegations) + 1
        final = await _loop_graph("subagent").ainvoke(
            {"messages": [{"role": "user", "content": instruction}], "step": 0, "reply": None},
            {"recursion_limit": self.limits.subagent_max_steps + 1},
            context=Delegated(self, agent, index, instruction))
        record = Delegation(index=index, agent=agent, instruction=instruction, reply=final["reply"],
                            steps=final["step"])
        self.run_record.delegations.append(record)
        return record

    # -- the orchestrator --------------------------------------------------------------------
    async def _orchestrator_step(self, step: int, messages: list[dict[str, Any]], last: bool) -> str | None:
        """One orchestrator step: a model call that answers the user (returned) or delegates (each
        delegation run, its completion a step of its own for the cortex; returns None). ``last``: no
        step follows this one."""
        label = f"step {step}"
        inputs = [("user request", self.scenario.user_request)]
        result, named = await self._chat(ORCHESTRATOR_ID, self.orchestrator_session, orchestrator_prompt(), label,
                                         messages, [DELEGATE_TOOL, NOTIFY_TOOL], "orchestrator_step", inputs)
        self.run_record.orchestrator_steps = step
        if not result.tool_calls:
            self.run_record.final_answer_as_tool_call = named
            return result.content

        pending, traced, refusals = [], [], []
        for call in result.tool_calls:
            problem = None
            if call.name not in DELEGATES:
                problem = f"Error: unknown tool {call.name!r}; the tools are {', '.join(DELEGATES)}."
            else:
                try:
                    instruction = call.parsed_arguments().get("instruction")
                except ModelOutputError as exc:
                    instruction, problem = None, _bad_arguments_result(exc)
                if problem is None and (not isinstance(instruction, str) or not instruction.strip()):
                    problem = "Error: the delegation needs a non-empty string 'instruction'."
            if problem is not None:
                self.run_record.errors.append(f"{ORCHESTRATOR_ID} {label}: {problem}")
                refusals.append({"role": "tool", "tool_call_id": call.id, "content": problem})
                traced.append(TracedCall(call.name, call.arguments, problem))
            else:
                pending.append((call.id, DELEGATES[call.name], instruction))
                traced.append(TracedCall(call.name, {"instruction": instruction}, None))
        messages.append({"role": "assistant", "content": result.content or None,
                         "tool_calls": [call.to_message() for call in result.tool_calls]})
        messages.extend(refusals)
        await self._ingest(ORCHESTRATOR_ID, step_trace(ORCHESTRATOR_ID, "orchestrator_step", inputs=inputs,
                                                       calls=traced, reply=result.content or None),
                           "orchestrator_step", label)
        for call_id, agent, instruction in pending:
            record = await self.delegate(instruction, agent)
            reply = record.reply if record.reply is not None else (
                f"Error: {agent} stopped at its step limit without replying."
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": reply})
            trace = step_trace(
                ORCHESTRATOR_ID, "delegation",
                inputs=[("delegated to", agent), ("instruction", instruction), ("subagent reply", reply)]
            )
            await self._ingest(ORCHESTRATOR_ID, trace, "delegation", f"delegation {len(self.run_record.delegations)}")
        if last:
            self.run_record.errors.append(f"{ORCHESTRATOR_ID} reached its step limit "
                                          f"({self.limits.orchestrator_max_steps}) without answering the user.")
        return None

    # -- running ------------------------------------------------------------------------------
    async def run(self) -> MultiAgentRun:
        """Serve the scenario's user request once and return the run record."""
        saver = episode_checkpointer()
        if is_kept(saver):  # a retried trial starts afresh on the run's file
            await saver.adelete_thread(self.thread_id)
        graph = _loop_graph("orchestrator").copy(update={"checkpointer": saver})
        final = await graph.ainvoke(
            {"messages": [{"role": "user", "content": self.scenario.user_request}], "step": 0, "reply": None},
            {"configurable": {"thread_id": self.thread_id},
             "recursion_limit": self.limits.orchestrator_max_steps + 1},
            context=Delegated(self, ORCHESTRATOR_ID, 0, self.scenario.user_request))
        self.run_record.final_answer = final["reply"]
        self.run_record.episodes = list(self.store)
        self._check_acted()
        self._check_cortex()
        return self.run_record


# -- the agents' loops as LangGraph graphs -----------------------------------------------------
class LoopState(TypedDict, total=False):
    messages: list[dict[str, Any]]      # the agent's conversation (system prompt added per call)
    step: int                           # steps taken
    reply: str | None                   # the agent's answer, once it gives one
    remaining_steps: RemainingSteps     # LangGraph's count of steps left under the recursion limit


@dataclass(frozen=True)
class Delegated:
    """A loop's runtime context: the trial's system, the agent, its delegation and instruction."""

    system: CabMultiAgentSystem
    agent: str
    delegation: int
    instruction: str


async def _orchestrator_node(state: LoopState, runtime: Runtime[Delegated]) -> dict[str, Any]:
    step, messages = state["step"] + 1, list(state["messages"])
    reply = await runtime.context.system._orchestrator_step(step, messages, last=state["remaining_steps"] <= 1)
    return {"messages": messages, "step": step, "reply": reply}


async def _subagent_node(state: LoopState, runtime: Runtime[Delegated]) -> dict[str, Any]:
    ctx = runtime.context
    step, messages = state["step"] + 1, list(state["messages"])
    reply = await ctx.system._subagent_step(ctx.agent, ctx.delegation, step, messages, ctx.instruction,
                                            last=state["remaining_steps"] <= 1)
    return {"messages": messages, "step": step, "reply": reply}


def _next_step(state: LoopState) -> str:
    """Another step, until the agent replies or the recursion limit leaves only the run's end."""
    return END if state.get("reply") is not None or state["remaining_steps"] <= 1 else "step"


@functools.cache
def _loop_graph(agent: Literal["orchestrator", "subagent"]) -> Any:
    """The orchestrator's or a subagent's loop, compiled once per process."""
    graph = StateGraph(LoopState, context_schema=Delegated)
    graph.add_node("step", _orchestrator_node if agent == "orchestrator" else _subagent_node)
    graph.add_edge(START, "step")
    graph.add_conditional_edges("step", _next_step, ["step", END])
    return graph.compile()
