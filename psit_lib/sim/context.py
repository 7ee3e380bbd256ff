"""What a simulated role sees: the request, a seeded RNG, and small reading helpers. The RNG is derived
from the whole request, so a reply is a pure function of it (README.md, "Deterministic per seed")."""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from typing import Any, Sequence, TypeVar

from .profiles import SimProfile

T = TypeVar("T")


def request_rng(role: str, profile: str, body: dict[str, Any]) -> random.Random:
    canonical = json.dumps({"role": role, "profile": profile, "body": body}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    return random.Random(int.from_bytes(hashlib.sha256(canonical.encode()).digest()[:8], "big"))


def message_text(content: Any) -> str:
    """The text of a message's content (a string, or the text parts of a content list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class SimReply:
    """A role's answer; the engine turns it into a chat.completion."""

    content: str = ""
    reasoning: str | None = None
    tool_calls: Sequence[tuple[str, dict[str, Any] | str]] = field(default_factory=list)


@dataclass
class SimContext:
    role: str
    profile: SimProfile
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    temperature: float
    response_format: dict[str, Any] | None
    rng: random.Random

    # -- reading the request ---------------------------------------------------------------
    def system_text(self) -> str:
        return "\n".join(message_text(m.get("content")) for m in self.messages if m.get("role") == "system")

    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message_text(message.get("content"))
        return ""

    def dialogue(self) -> list[tuple[str, str]]:
        """(role, text) of user and assistant turns, in order."""
        return [(m["role"], message_text(m.get("content"))) for m in self.messages
                if m.get("role") in ("user", "assistant")]

    def first_user_text(self) -> str:
        """The first user message: in a chat game, the player's opening with the rules."""
        return next((message_text(m.get("content")) for m in self.messages if m.get("role") == "user"), "")

    def tool_names(self) -> set[str]:
        return {t.get("function", {}).get("name", "") for t in self.tools}

    def tool_results_since_last_user(self) -> list[str]:
        out: list[str] = []
        for message in reversed(self.messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "tool":
                out.append(message_text(message.get("content")))
        return list(reversed(out))

    @property
    def wants_json(self) -> bool:
        return bool(self.response_format and self.response_format.get("type") in (
            "json_object", "json_schema"))

    # -- seeded choices --------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def weighted_choice(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """Sample by ``weight ** (1 / T)``: low temperature sharpens toward the mode."""
        if not items:
            raise ValueError("weighted_choice needs at least one item")
        if self.temperature <= 1e-6:
            return items[max(range(len(items)), key=lambda i: weights[i])]
        logs = [math.log(max(w, 1e-300)) / self.temperature for w in weights]
        top = max(logs)
        scaled = [math.exp(v - top) for v in logs]
        return self.rng.choices(list(items), weights=scaled, k=1)[0]

    def prior_choice(self, items: Sequence[T], frequencies: Sequence[float]) -> T:
        """Sample a secret from the model's prior ``frequency ** alpha``, sharpened by 1/T."""
        alpha = self.profile.prior_exponent
        return self.weighted_choice(items, [max(f, 1e-12) ** alpha for f in frequencies])
