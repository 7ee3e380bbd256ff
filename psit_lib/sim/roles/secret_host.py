"""A simulated host of a private-state game, written once for every task (a :class:`SecretGame`).

It knows a secret only when its request carries one (in private working memory or reasoning it
kept); without one it does what the profile says (``unheld_secret``), so the failures of
public-only agents emerge from missing information, not from a coded failure rate.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any, Protocol

from ..context import SimContext, SimReply
from ..request_reading import kept_reasoning, memory_text, secret_statements
from ..tokens import padded
from .memory_edits import compose_edits

_DELIBERATION = (
    "Let me go over the conversation again before I answer.",
    "I should check that my reply follows the rules the user gave at the start.",
    "Every reply has to agree with everything I said in earlier turns.",
    "I compare the latest message with the earlier ones to see exactly what is being asked.",
    "Nothing in my reply may give away more than the rules allow.",
    "I will keep the answer short and in the format that was asked for.",
    "If the user asks something the rules do not cover, I answer plainly and keep playing.",
    "I double-check the details of my last reply so that this one is consistent with it.",
)
"""Neutral deliberation a reasoning model writes around its decision (states no secret)."""


def deliberate(decision: str, target_tokens: int) -> str:
    """Reasoning of about ``target_tokens`` tokens: neutral deliberation, then the decision."""
    return padded(target_tokens, _DELIBERATION, (decision,))


@dataclass(frozen=True)
class Intent:
    kind: str                 # "open" | "move" | "reveal" | "confirm" | "other"
    candidate: str | None = None


class SecretGame(Protocol):
    """The simulated model's understanding of one task."""

    name: str

    def intent(self, user_text: str, first_turn: bool) -> Intent: ...

    def public_state(self, ctx: SimContext) -> Any:
        """What the public dialogue (before the last user message) says about the secret."""

    def as_secret(self, text: str) -> str | None:
        """A secret of this game read from a statement of it (None if it names none)."""

    def choose_secret(self, ctx: SimContext) -> str:
        """A fresh secret at the start of a game (weighted by prior, sharpened by 1/T)."""

    def reimagine(self, ctx: SimContext, public: Any) -> str:
        """A secret compatible with the public state (weighted by prior, sharpened by 1/T)."""

    def opening_reply(self, ctx: SimContext, secret: str) -> str: ...

    def move_reply(self, ctx: SimContext, secret: str, public: Any, user_text: str) -> str: ...

    def same_secret(self, a: str, b: str) -> bool: ...

    def malformed_reply(self, ctx: SimContext) -> str: ...


def _first_secret(game: SecretGame, texts: list[str]) -> str | None:
    for text in texts:
        for statement in secret_statements(text):
            secret = game.as_secret(statement)
            if secret:
                return secret
    return None


def held_secret(game: SecretGame, ctx: SimContext) -> tuple[str | None, str]:
    """(secret, where) from the request's private context, or (None, ""); a working memory, when given,
    is authoritative (nowhere else is looked at), else the reasoning kept from earlier turns."""
    memory = memory_text(ctx.system_text())
    if memory is not None:
        secret = _first_secret(game, [memory])
        return (secret, "memory") if secret else (None, "")
    secret = _first_secret(game, kept_reasoning(ctx.messages))
    return (secret, "reasoning") if secret else (None, "")


def host_reply(game: SecretGame, ctx: SimContext) -> SimReply:
    """The whole host behaviour; ``game`` supplies the task-specific parts."""
    user_text = ctx.last_user_text()
    first_turn = not any(role == "assistant" for role, _ in ctx.dialogue())
    intent = game.intent(user_text, first_turn)
    held, where = held_secret(game, ctx)
    public = None if intent.kind == "open" else game.public_state(ctx)

    if held:
        secret, thought = held, f"I already chose my secret (it is in my {where})."
    elif intent.kind == "open":
        secret, thought = game.choose_secret(ctx), "I need to choose a secret privately."
    elif intent.kind == "confirm" and ctx.profile.unheld_secret != "reimagine":
        # no secret to check the candidate against, and none to write down
        thought = "I have no record of a secret; I will answer the question as asked."
        return SimReply(content=_yes_no(ctx.profile.unheld_secret == "play_along", user_text),
                        reasoning=deliberate(thought, ctx.profile.reasoning_tokens))
    else:
        secret = game.reimagine(ctx, public)
        thought = "I have no record of my secret, so I pick one that fits everything said so far."
    reasoning = deliberate(thought + (f" My secret is '{secret}'." if secret else ""), ctx.profile.reasoning_tokens)

    # An autonomous agent's model may record the secret with its memory tools first.
    memory = memory_text(ctx.system_text())
    if memory is not None and ctx.tools and secret and not held and not ctx.tool_results_since_last_user():
        rate = ctx.profile.tool_use_reliability if intent.kind == "open" else ctx.profile.late_tool_use
        if ctx.chance(rate):
            edits = compose_edits(ctx, ctx.tool_names(), memory.strip("\n") + "\n", secret, note=None)
            if edits:
                return SimReply(content="", reasoning=reasoning + " I will write it to my memory.",
                                tool_calls=edits)

    if intent.kind == "open":
        content = game.opening_reply(ctx, secret)
    elif intent.kind == "move":
        if ctx.chance(ctx.profile.malformed_output_rate):
            content = game.malformed_reply(ctx)
        else:
            content = game.move_reply(ctx, secret, public, user_text)
            if ctx.chance(ctx.profile.leak_propensity):
                content += f"\n(Between us: it's '{secret}'.)"
    elif intent.kind == "reveal":
        content = secret
    elif intent.kind == "confirm":
        content = _yes_no(game.same_secret(intent.candidate or "", secret), user_text)
    else:
        content = "Let's keep playing: what is your next move?"
    return SimReply(content=content, reasoning=reasoning)


_ONE_WORD = re.compile(r"\b(?:single|one) word\b", re.I)


def _yes_no(yes: bool, question: str) -> str:
    """A yes/no answer as an instruction-following model writes it: the bare word when the question
    asks for a single word ("Yes"), else a short sentence ("Yes.")."""
    word = "Yes" if yes else "No"
    return word if _ONE_WORD.search(question) else word + "."
