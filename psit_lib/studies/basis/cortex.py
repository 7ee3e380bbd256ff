"""The BASIS cortex: who may see which step of a multi-agent run (SPEC §6).

Every agent step becomes one :class:`Episode`; a CortexAgent summarises it and decides who may
see it. Visibility is a bit mask: agent ``i`` holds ``1 << i`` and sees an episode of mask ``B``
iff ``A & B != 0``; masks travel as binary strings, rightmost digit agent 0 (``"101"`` = agents 0
and 2). Pure data and rules, so they are tested without a model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

#: How many of an agent's previous episodes the CortexAgent sees next to the new step.
CORTEX_WINDOW = 4

#: The tag that wraps the shared context inside an agent's system prompt.
CONTEXT_TAG = "relevant_multiagent_context"


class CortexInputError(ValueError):
    """Base class for bad input to the cortex (a caller recovering from a bad ingest catches this)."""


class MaskError(CortexInputError):
    """A mask string or value that does not describe a non-empty set of registered agents."""


class IngestError(CortexInputError):
    """An ingest tool call whose arguments cannot be read (bad JSON, missing or mistyped fields)."""


# --------------------------------------------------------------------------- masks


def _check_mask_value(mask: int, what: str) -> None:
    """Reject non-integers, booleans, negatives and zero: a mask must name at least one agent."""
    if isinstance(mask, bool) or not isinstance(mask, int):
        raise MaskError(f"{what} must be an int, got {type(mask).__name__} {mask!r}.")
    if mask <= 0:
        raise MaskError(f"{what} must be a positive bit mask naming at least one agent, got {mask}.")


def parse_mask(text: str, width: int | None = None) -> int:
    """Read a binary mask string such as ``"101"`` (rightmost digit = agent 0). Whitespace and a
    leading ``0b`` are tolerated because models write both; a zero mask (an episode nobody can
    see) and, with ``width``, a bit beyond the registered agents are rejected."""
    if not isinstance(text, str):
        raise MaskError(f"A mask must be a binary string such as '101', got {type(text).__name__} {text!r}.")
    digits = text.strip()
    if digits.lower().startswith("0b"):
        digits = digits[2:]
    if not digits:
        raise MaskError(f"The mask string {text!r} is empty; expected binary digits such as '101'.")
    if any(ch not in "01" for ch in digits):
        raise MaskError(f"The mask string {text!r} is not binary; use only the digits 0 and 1.")
    mask = int(digits, 2)
    if mask == 0:
        raise MaskError(f"The mask string {text!r} is all zeros, so no agent could see the episode.")
    if width is not None:
        if width < 1:
            raise MaskError(f"A mask width must be at least 1, got {width}.")
        if mask >> width:
            raise MaskError(
                f"The mask string {text!r} sets a bit beyond the {width} registered agent(s)."
            )
    return mask


def format_mask(mask: int, width: int) -> str:
    """Write ``mask`` as a zero-padded binary string of ``width`` digits (rightmost = agent 0)."""
    _check_mask_value(mask, "The mask")
    if width < 1:
        raise MaskError(f"A mask width must be at least 1, got {width}.")
    if mask >> width:
        raise MaskError(f"The mask {mask} does not fit in {width} binary digit(s).")
    return format(mask, f"0{width}b")


def visible(agent_mask: int, episode_mask: int) -> bool:
    """True iff the agent shares at least one bit with the episode (``A & B != 0``)."""
    return (agent_mask & episode_mask) != 0


# --------------------------------------------------------------------------- registry


class AgentRegistry:
    """Agents in a fixed order; agent ``i`` owns the one-hot mask ``1 << i``."""

    def __init__(self, agent_ids: Iterable[str]) -> None:
        self.agent_ids: tuple[str, ...] = tuple(agent_ids)
        for i, agent_id in enumerate(self.agent_ids):
            if not isinstance(agent_id, str) or not agent_id.strip():
                raise ValueError(f"An agent id must be a non-empty string, got {agent_id!r}.")
            if agent_id in self.agent_ids[:i]:
                raise ValueError(f"The agent {agent_id!r} is already registered.")
        self.width = len(self.agent_ids)
        """Number of binary digits a mask string needs (one per registered agent)."""

    def mask_of(self, agent_id: str) -> int:
        """The one-hot mask of a registered agent."""
        if agent_id not in self.agent_ids:
            raise ValueError(
                f"The agent {agent_id!r} is not registered (known: {', '.join(self.agent_ids) or 'none'})."
            )
        return 1 << self.agent_ids.index(agent_id)

    def agents_in(self, mask: int) -> list[str]:
        """The registered agents whose bit is set in ``mask``, in registration order."""
        return [agent_id for i, agent_id in enumerate(self.agent_ids) if mask >> i & 1]

    def mask_legend(self) -> str:
        """One line per agent with its mask string, for the CortexAgent's prompt."""
        return "\n".join(f"{agent_id}: {format_mask(1 << i, self.width)}" for i, agent_id in enumerate(self.agent_ids))


# --------------------------------------------------------------------------- episodes


@dataclass(frozen=True)
class Episode:
    """One agent step as the cortex stores it: the raw trace, the CortexAgent's summary for other
    agents (``None`` if it wrote none) and provenance such as the ingest outcome."""

    episode_id: str
    source_agent_id: str
    access_mask: int
    raw_trace: str
    summary: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.episode_id:
            raise ValueError("An episode needs a non-empty episode_id.")
        _check_mask_value(self.access_mask, f"The access mask of episode {self.episode_id!r}")

    def shown_text(self) -> str:
        """What other agents get to read: the summary if there is one, else the raw trace."""
        return self.summary if self.summary is not None else self.raw_trace


class EpisodeStore:
    """Append-only list of episodes with the two views the cortex needs."""

    def __init__(self) -> None:
        self._episodes: list[Episode] = []

    def next_episode_id(self) -> str:
        """A deterministic id for the next episode (``ep0000``, ``ep0001``, ...)."""
        return f"ep{len(self._episodes):04d}"

    def append(self, episode: Episode) -> None:
        if any(ep.episode_id == episode.episode_id for ep in self._episodes):
            raise ValueError(f"The episode id {episode.episode_id!r} is already stored.")
        self._episodes.append(episode)

    def visible_to(self, agent_mask: int) -> list[Episode]:
        """Episodes the agent may see, oldest first."""
        return [ep for ep in self._episodes if visible(agent_mask, ep.access_mask)]

    def recent_by(self, source_agent_id: str, n: int = CORTEX_WINDOW) -> list[Episode]:
        """The last ``n`` episodes the agent produced, oldest first (the CortexAgent's window)."""
        if n < 0:
            raise ValueError(f"The window size must be non-negative, got {n}.")
        own = [ep for ep in self._episodes if ep.source_agent_id == source_agent_id]
        return own[-n:] if n else []

    def __len__(self) -> int:
        return len(self._episodes)

    def __iter__(self) -> Iterator[Episode]:
        return iter(list(self._episodes))


def format_context_block(episodes: Sequence[Episode]) -> str:
    """The block put into an agent's system prompt before its step (``""`` when nothing is
    visible); each entry names its source, so an agent tells its own past steps from others'."""
    if not episodes:
        return ""
    lines = [f"<{CONTEXT_TAG}>"]
    for ep in episodes:
        lines.append(f"[{ep.episode_id}] from {ep.source_agent_id}: {ep.shown_text().strip()}")
    lines.append(f"</{CONTEXT_TAG}>")
    return "\n".join(lines)


# --------------------------------------------------------------------------- fallback


FALLBACK_SUMMARY_CHARS = 400
"""A fallback episode's summary: the start of the raw trace, cut at this many characters."""


def truncate_text(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, marking the cut with an ellipsis."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def fallback_episode(
    episode_id: str,
    source_agent_id: str,
    raw_trace: str,
    registry: AgentRegistry,
    reason: str,
    metadata: dict[str, Any] | None = None,
) -> Episode:
    """The episode stored when the CortexAgent's ingest failed (``reason`` kept in metadata). It
    fails closed: visible to its source agent only (which keeps its own history), so a broken ingest
    never leaks a step, and for that step the run behaves like a system without context sharing."""
    meta = dict(metadata or {})
    meta.update({"ingest": "fallback", "fallback_reason": reason})
    return Episode(
        episode_id=episode_id,
        source_agent_id=source_agent_id,
        access_mask=registry.mask_of(source_agent_id),
        raw_trace=raw_trace,
        summary=truncate_text(raw_trace.strip(), FALLBACK_SUMMARY_CHARS),
        metadata=meta,
    )


# --------------------------------------------------------------------------- ingest tool

INGEST_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "ingest_episode",
        "description": (
            "Store the new agent step in the shared cortex: a short summary other agents can "
            "act on, and the set of agents allowed to see it."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "summary": {
                    "type": "string",
                    "description": "A concise, self-contained summary of the step (facts, decisions, results).",
                },
                "access_mask": {
                    "type": "string",
                    "description": (
                        "Binary string of the agents that may see this step, one digit per agent, "
                        "rightmost digit = agent 0; e.g. '101' shares with agents 0 and 2."
                    ),
                    "pattern": "^[01]+$",
                },
            },
            "required": ["summary", "access_mask"],
            "additionalProperties": False,
        },
    },
}


def parse_ingest_call(arguments_json: str, registry: AgentRegistry) -> tuple[str, int]:
    """Read the arguments of an ``ingest_episode`` call into ``(summary, mask)``, or raise
    :class:`IngestError` / :class:`MaskError`; extra keys are ignored (they harm nothing)."""
    try:
        args = json.loads(arguments_json)
    except (TypeError, json.JSONDecodeError) as exc:
        raise IngestError(f"The ingest arguments are not valid JSON ({exc}): {arguments_json!r}.") from None
    if not isinstance(args, dict):
        raise IngestError(f"The ingest arguments must be a JSON object, got {type(args).__name__}.")
    summary = args.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise IngestError(f"The ingest call needs a non-empty string 'summary', got {summary!r}.")
    if "access_mask" not in args:
        raise IngestError("The ingest call has no 'access_mask'.")
    raw_mask = args["access_mask"]
    if not isinstance(raw_mask, str):
        raise IngestError(
            f"The ingest 'access_mask' must be a binary string such as '101', got {type(raw_mask).__name__} {raw_mask!r}."
        )
    return summary.strip(), parse_mask(raw_mask, width=registry.width)
