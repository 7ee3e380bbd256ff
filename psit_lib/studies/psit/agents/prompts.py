"""Agent-side prompt text (in our own words): private blocks and the memory updater's brief."""

from __future__ import annotations

import json

from psit_lib.memory import wrap_for_prompt

PRIVATE_REASONING_INTRO = (
    "Below is your own private reasoning from earlier turns of this conversation. The user "
    "cannot see it. Stay consistent with any choices you made in it.")

WORKFLOW_MEMORY_INTRO = (
    "You have a private working memory that the user never sees. It holds what you must stay "
    "consistent with (for example the secret you chose, inside <secret> tags). Read it before "
    "answering. It is updated for you after each of your replies; do not try to edit it and "
    "never quote it to the user.")

AUTONOMOUS_MEMORY_INTRO = (
    "You have a private working memory that the user never sees, shown below. Whatever is not "
    "written there is forgotten after this reply, including your private reasoning. Use the "
    "memory tools to record anything you must stay consistent with (for example the secret you "
    "choose, inside <secret> tags in 'Facts and Knowledge'). Never quote the memory to the user.")

UPDATER_SYSTEM = (
    "You maintain the private working memory of an assistant that is playing an interactive "
    "game with a user. After each assistant reply you receive the current memory, the recent "
    "dialogue, the assistant's private reasoning for this turn and its public answer. Decide "
    "which edits keep the memory correct and useful: the secret the assistant committed to must "
    "be stored inside <secret>...</secret> in the 'Facts and Knowledge' section, and short notes "
    "about the game's progress belong in 'Active Notes'. Never change the section headers. "
    "Reply with JSON only: one tool call {\"name\": ..., \"arguments\": {...}} or a list of them "
    "(an empty list [] when nothing needs to change). Available tools:\n")


def private_reasoning_block(kept: list[str]) -> str:
    """All earlier reasoning in one private block (the ``system_block`` layout)."""
    if not any(text.strip() for text in kept):
        return ""
    turns = "\n".join(f"[turn {i}] {text.strip()}" for i, text in enumerate(kept, 1) if text.strip())
    return f"{PRIVATE_REASONING_INTRO}\n<private_reasoning>\n{turns}\n</private_reasoning>"


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
    intro = AUTONOMOUS_MEMORY_INTRO if autonomous else WORKFLOW_MEMORY_INTRO
    return f"{intro}\n{wrap_for_prompt(memory)}"


def updater_messages(memory: str, dialogue: list[dict], reasoning: str, answer: str,
                     tools: list[dict], previous_error: str | None = None) -> list[dict]:
    specs = json.dumps([t["function"] for t in tools], indent=1)
    lines = "\n".join(f"{m['role'].capitalize()}: {m['content']}" for m in dialogue)
    retry = ("" if previous_error is None else
             f"<previous_attempt_error>\n{previous_error}\n</previous_attempt_error>\n"
             "Your previous tool calls were rejected and the memory was left unchanged. Correct "
             "them and reply with valid JSON only.\n\n")
    user = (f"{wrap_for_prompt(memory)}\n\n<recent_dialogue>\n{lines}\n</recent_dialogue>\n\n"
            f"<private_reasoning_this_turn>\n{reasoning.strip() or '(none)'}\n"
            f"</private_reasoning_this_turn>\n\n<public_answer>\n{answer}\n</public_answer>\n\n"
            f"{retry}Return the JSON tool call(s) now.")
    return [{"role": "system", "content": UPDATER_SYSTEM + specs}, {"role": "user", "content": user}]
