"""What the agents of the BASIS study read: system prompts, the delegate tool, step traces.

Kept apart from the graphs so the exact wording every model sees can be read (and reviewed)
in one place. The baseline and the BASIS system use the *same* prompts; the only difference
is the shared-context section that BASIS inserts into a system prompt when the cortex has
episodes the agent may see (SPEC §6). The cab subagent's house policy (the confounder) is not
here: each scenario adds it to the subagent's system prompt (``system.subagent_prompt``).

A *step trace* is the plain-text record of one agent step (its input, tool calls, tool
results, reply). It is what the CortexAgent reads and what an episode keeps as ``raw_trace``.
Its lines are labelled (``tool call: NAME {json}``) so that people, real models and the
simulated model can all read it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psit_lib.memory.cortex import CONTEXT_TAG, AgentRegistry, Episode

ORCHESTRATOR_ID = "basis_orchestrator"
SUBAGENT_ID = "cab_subagent"
NOTIFIER_ID = "user_notifier"
CORTEX_ROLE = "cortex_agent"

#: Registration order fixes the mask bits: orchestrator = bit 0 ("001"), cab subagent = bit 1
#: ("010"), notifier = bit 2 ("100"). With three agents a mask decides who sees a step: the
#: notifier needs the orchestrator's word, not the cab agent's tool calls.
AGENT_IDS: tuple[str, ...] = (ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID)

DELEGATE_TOOL_NAME = "delegate_to_cab_agent"
NOTIFY_TOOL_NAME = "delegate_to_notifier"
SEND_MESSAGE_TOOL_NAME = "send_message_to_user"

DELEGATE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": DELEGATE_TOOL_NAME,
        "description": (
            "Hand a cab task to the cab agent, which can quote, list, order and cancel rides in "
            "the CabApp. It sees only this instruction, so make it self-contained. Returns the "
            "cab agent's reply."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "instruction": {
                    "type": "string",
                    "description": "What the cab agent should do, in full.",
                }
            },
            "required": ["instruction"],
            "additionalProperties": False,
        },
    },
}

NOTIFY_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": NOTIFY_TOOL_NAME,
        "description": (
            "Ask the notification agent to send the user a written confirmation (by message, "
            "outside this chat). It sees only this instruction: say exactly what the message "
            "must tell the user. Returns the notification agent's reply."
        ),
        "parameters": {
            "type": "object",
            "properties": {"instruction": {"type": "string", "description": "What the message must say."}},
            "required": ["instruction"],
            "additionalProperties": False,
        },
    },
}

SEND_MESSAGE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SEND_MESSAGE_TOOL_NAME,
        "description": "Send the user one written message.",
        "parameters": {
            "type": "object",
            "properties": {"content": {"type": "string", "description": "The message text."}},
            "required": ["content"],
            "additionalProperties": False,
        },
    },
}

ORCHESTRATOR_PROMPT = (
    "You are the orchestrator of a small team of agents serving one user. You cannot use the "
    "cab service yourself: every cab task (prices, listing rides, booking, cancelling) goes to "
    f"the cab agent through the {DELEGATE_TOOL_NAME} tool, with an instruction it can follow "
    "without seeing the user's message. When the cab agent has reported back, check that what "
    "was actually done matches what the user asked for. If it does not, delegate a correction "
    "that leaves no room for interpretation. Once the request is settled, have the notification "
    f"agent send the user a written confirmation through the {NOTIFY_TOOL_NAME} tool, then answer "
    "the user directly and briefly, without calling a tool."
)

NOTIFIER_PROMPT = (
    "You are the notification agent of a team of agents. You receive one instruction from the "
    f"orchestrator and send the user exactly one message with the {SEND_MESSAGE_TOOL_NAME} tool, "
    "saying what the instruction asks for. Then reply to the orchestrator in a few words."
)

SUBAGENT_PROMPT = (
    "You are the cab agent of a team of agents. You receive one instruction from the "
    "orchestrator and carry it out with the CabApp tools (get_quotation, list_rides, "
    "order_ride, user_cancel_ride, get_current_ride_status, get_ride, get_ride_history, "
    "get_ride_history_length). Locations are plain place names such as 'Downtown'. When the "
    "task is done, reply to the orchestrator in one or two sentences with the outcome it asked "
    "for; do not list your tool calls or their arguments."
)

CORTEX_PROMPT = (
    "You maintain the shared memory (the cortex) of a multi-agent system. After every step an "
    "agent takes, you store that step as one episode by calling the ingest_episode tool exactly "
    "once. Write a short, self-contained summary of what the step actually did: the tool calls "
    "with their real arguments (locations, service types) and their results (prices, bookings, "
    "cancellations, errors), or what the agent said. Then choose who may see the episode with an "
    "access mask: a binary string with one digit per agent, rightmost digit = agent 0. Share a "
    "step with every agent that needs it to act correctly; a supervisor must be able to see what "
    "the agents working for it actually did."
)

CONTEXT_INTRO = (
    "Shared context from the cortex: summaries of earlier steps by agents of this system that "
    "you are allowed to see, oldest first."
)


def with_context(base_prompt: str, context_block: str) -> str:
    """A system prompt with the shared-context section appended (unchanged when there is none)."""
    if not context_block:
        return base_prompt
    if f"<{CONTEXT_TAG}>" not in context_block:
        raise ValueError(f"A shared-context block must be wrapped in <{CONTEXT_TAG}> tags.")
    return f"{base_prompt}\n\n{CONTEXT_INTRO}\n{context_block}"


def cortex_system_prompt(registry: AgentRegistry) -> str:
    """The CortexAgent's instructions plus the mask of every registered agent."""
    return f"{CORTEX_PROMPT}\n\nAgents and their masks (rightmost digit = agent 0):\n{registry.mask_legend()}"


def cortex_user_prompt(source_agent_id: str, previous: Sequence[Episode], new_step_trace: str) -> str:
    """The new step plus the source agent's previous episodes (the CortexAgent's window)."""
    if previous:
        earlier = "\n".join(f"[{ep.episode_id}] {ep.shown_text().strip()}" for ep in previous)
    else:
        earlier = "(none)"
    return (
        f"Previous episodes from {source_agent_id}, oldest first:\n{earlier}\n\n"
        f"New step to ingest:\n{new_step_trace}"
    )


# --------------------------------------------------------------------------- step traces


def _one_line(text: str) -> str:
    """Collapse whitespace so a value stays on its labelled line."""
    return " ".join(str(text).split())


@dataclass(frozen=True)
class TracedCall:
    """One tool call inside a step as the trace shows it (arguments as the app received them)."""

    name: str
    arguments: Any
    result: str | None


def step_trace(
    agent_id: str,
    kind: str,
    *,
    inputs: Sequence[tuple[str, str]] = (),
    calls: Sequence[TracedCall] = (),
    reply: str | None = None,
) -> str:
    """The plain-text record of one agent step.

    ``inputs`` are labelled lines (e.g. ``("instruction", text)``); each call gives a
    ``tool call: NAME {json}`` line followed by its ``tool result:`` line (left out for a call
    whose result is not known yet, such as a delegation that is about to run).
    """
    lines = [f"agent: {agent_id}", f"kind: {kind}"]
    lines.extend(f"{label}: {_one_line(text)}" for label, text in inputs)
    for call in calls:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments, sort_keys=True)
        lines.append(f"tool call: {call.name} {_one_line(args)}")
        if call.result is not None:
            lines.append(f"tool result: {_one_line(call.result)}")
    if reply is not None and reply.strip():
        lines.append(f"reply: {_one_line(reply)}")
    return "\n".join(lines)


def prompt_catalogue() -> dict[str, str]:
    """name -> template text of the BASIS study, for run metadata."""
    return {"basis.orchestrator": ORCHESTRATOR_PROMPT, "basis.subagent": SUBAGENT_PROMPT,
            "basis.notifier": NOTIFIER_PROMPT, "basis.cortex": CORTEX_PROMPT,
            "basis.context_intro": CONTEXT_INTRO,
            "basis.delegate_tool": DELEGATE_TOOL["function"]["description"],
            "basis.notify_tool": NOTIFY_TOOL["function"]["description"]}
