"""What the agents of the BASIS study read: system prompts, the delegate tools, step traces.

Both systems use the *same* prompts (wording in ``prompts.toml``); BASIS only adds the shared-context
section. A step trace's labelled lines are what people, real models and the simulator all read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psit_lib.llm.prompts import load_prompts
from psit_lib.studies.basis.cortex import AgentRegistry, Episode

PROMPTS = load_prompts(__package__ or "psit_lib.studies.basis")
"""The study's prompt templates (``prompts.toml`` beside this module)."""

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

def _one_string_tool(name: str, description: str, argument: str, argument_description: str) -> dict[str, Any]:
    """An OpenAI function tool taking one required string argument."""
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object",
                       "properties": {argument: {"type": "string", "description": argument_description}},
                       "required": [argument], "additionalProperties": False}}}


DELEGATE_TOOL = _one_string_tool(DELEGATE_TOOL_NAME, PROMPTS.render("basis.delegate_tool"), "instruction",
                                 "What the cab agent should do, in full.")
NOTIFY_TOOL = _one_string_tool(NOTIFY_TOOL_NAME, PROMPTS.render("basis.notify_tool"), "instruction",
                               "What the message must say.")
SEND_MESSAGE_TOOL = _one_string_tool(SEND_MESSAGE_TOOL_NAME, "Send the user one written message.", "content",
                                     "The message text.")


def orchestrator_prompt() -> str:
    """The orchestrator's system prompt (before any shared context)."""
    return PROMPTS.render("basis.orchestrator", delegate_tool=DELEGATE_TOOL_NAME, notify_tool=NOTIFY_TOOL_NAME)


def notifier_prompt() -> str:
    """The notification agent's system prompt."""
    return PROMPTS.render("basis.notifier", send_message_tool=SEND_MESSAGE_TOOL_NAME)


def with_context(base_prompt: str, context_block: str) -> str:
    """A system prompt with the shared-context section appended (unchanged when there is none)."""
    if not context_block:
        return base_prompt
    return f"{base_prompt}\n\n{PROMPTS.render('basis.context_intro')}\n{context_block}"


def cortex_system_prompt(registry: AgentRegistry) -> str:
    """The CortexAgent's instructions plus the mask of every registered agent."""
    return f"{PROMPTS.render('basis.cortex')}\n\n{PROMPTS.render('basis.cortex_masks', legend=registry.mask_legend())}"


def cortex_user_prompt(source_agent_id: str, previous: Sequence[Episode], new_step_trace: str) -> str:
    """The new step plus the source agent's previous episodes (the CortexAgent's window)."""
    if previous:
        earlier = "\n".join(f"[{ep.episode_id}] {ep.shown_text().strip()}" for ep in previous)
    else:
        earlier = "(none)"
    return PROMPTS.render("basis.cortex_user", agent=source_agent_id, episodes=earlier, step=new_step_trace)


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
    """The plain-text record of one agent step: labelled input lines, each call's ``tool call:``
    line and its ``tool result:`` (left out while unknown, as for a delegation about to run)."""
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
    """name -> template text of the BASIS study, for run metadata: every template of its
    ``prompts.toml`` (``.versions`` gives each one's version), the tool names filled in as the
    code fills them and other slots as ``<X>``."""
    return PROMPTS.catalogue({
        "basis.orchestrator": {"delegate_tool": DELEGATE_TOOL_NAME, "notify_tool": NOTIFY_TOOL_NAME},
        "basis.notifier": {"send_message_tool": SEND_MESSAGE_TOOL_NAME}})
