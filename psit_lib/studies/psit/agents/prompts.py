"""Agent-side prompts (in our own words): private blocks and the memory updater's brief. The
texts are templates ``agent.*`` of the study's ``prompts.toml``; these functions put them together."""

from __future__ import annotations

import json

from psit_lib.studies.psit.memory.working_memory import wrap_for_prompt
from psit_lib.studies.psit.prompt_book import PROMPTS


def private_reasoning_block(kept: list[str]) -> str:
    """All earlier reasoning in one private block (the ``system_block`` layout)."""
    if not any(text.strip() for text in kept):
        return ""
    turns = "\n".join(f"[turn {i}] {text.strip()}" for i, text in enumerate(kept, 1) if text.strip())
    return f"{PROMPTS.render('agent.private_reasoning_intro')}\n<private_reasoning>\n{turns}\n</private_reasoning>"


def interleaved_reasoning(public: list[dict], kept: list[str]) -> list[dict]:
    """The public history with each earlier reply preceded by the reasoning that produced it, in
    ``<thinking>`` tags (the study's layout); replies without reasoning stay as they were."""
    out, turn = [], 0
    for message in public:
        if message["role"] == "assistant":
            text = kept[turn].strip() if turn < len(kept) else ""
            turn += 1
            if text:
                message = {**message, "content": f"<thinking>{text}</thinking>\n{message['content']}"}
        out.append(message)
    return out


def memory_block(memory: str, autonomous: bool) -> str:
    """The working memory with the study's guidance around it (its sections, read-only or tool-edited,
    the no-tags rule), as appended to the host's system prompt."""
    return PROMPTS.render("agent.autonomous_memory_intro" if autonomous else "agent.workflow_memory_intro",
                          working_memory=memory.strip("\n"))


def reasoning_in_history_note() -> str:
    """What the private CoT agent is told when its earlier reasoning is interleaved in the history."""
    return PROMPTS.render("agent.private_reasoning_in_history")


def updater_messages(memory: str, dialogue: list[dict], reasoning: str, answer: str,
                     tools: list[dict], previous_error: str | None = None) -> list[dict]:
    specs = json.dumps([t["function"] for t in tools], indent=1)
    lines = "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in dialogue)
    values = {"memory": wrap_for_prompt(memory), "dialogue": lines, "reasoning": reasoning.strip() or "(none)",
              "answer": answer}
    user = (PROMPTS.render("agent.updater_user", **values) if previous_error is None
            else PROMPTS.render("agent.updater_retry", **values, error=previous_error))
    return [{"role": "system", "content": PROMPTS.render("agent.updater_system", tools=specs)},
            {"role": "user", "content": user}]
