"""Which agent to build: a kind, a memory-update strategy, and the task's host prompt.

Agent names used in tables and parameters:
``vanilla``, ``private_cot``, ``workflow_<strategy>``, ``autonomous_<strategy>`` with
strategy one of ``overwrite``, ``append_delete``, ``patch_replace`` (``workflow`` and
``autonomous`` alone mean the overwrite strategy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["vanilla", "private_cot", "workflow", "autonomous"]
STRATEGY_NAMES = ("overwrite", "append_delete", "patch_replace")
KINDS = ("vanilla", "private_cot", "workflow", "autonomous")
PSIT_AGENTS = ("vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite")
ALL_PSIT_AGENTS = ("vanilla", "private_cot", *(f"{k}_{s}" for k in ("workflow", "autonomous") for s in STRATEGY_NAMES))


class UnknownAgentError(ValueError):
    """An agent name the workbook does not define."""


ReasoningLayout = Literal["interleaved", "system_block"]


@dataclass(frozen=True)
class AgentConfig:
    """One agent's design. The defaults follow the study's reference code: the workflow updater
    sees the whole dialogue and gets up to five tries, each failed try's error shown to it in the
    next; private CoT puts each earlier turn's reasoning, in ``<thinking>`` tags, before the reply
    it produced. (The autonomous agent's tool rounds are bounded by its graph's recursion limit.)"""

    kind: Kind
    strategy: str | None = None
    updater_attempts: int = 5
    reasoning_layout: ReasoningLayout = "interleaved"

    def __post_init__(self) -> None:
        if self.updater_attempts < 1:
            raise ValueError("updater_attempts must be >= 1")
        if self.reasoning_layout not in ("interleaved", "system_block"):
            raise ValueError(f"unknown reasoning_layout {self.reasoning_layout!r}")

    @property
    def name(self) -> str:
        return f"{self.kind}_{self.strategy}" if self.strategy else self.kind

    @property
    def memory_strategy(self) -> str:
        """The memory-update strategy of an agent with memory (a workflow or autonomous agent)."""
        if self.strategy is None:
            raise ValueError(f"a {self.kind} agent has no memory-update strategy")
        return self.strategy

    @property
    def has_memory(self) -> bool:
        return self.kind in ("workflow", "autonomous")

    @property
    def needs_reasoning(self) -> bool:
        """Whether the design rests on the model's private reasoning: private CoT keeps it as its
        only private state, and the workflow updater reads it to store the secret the host chose
        (the autonomous agent writes its memory itself, so it does without)."""
        return self.kind in ("private_cot", "workflow")


def parse_agent(name: str, **options) -> AgentConfig:
    """``AgentConfig`` for a table name such as ``workflow_patch_replace`` (``options`` override
    the design defaults, e.g. ``reasoning_layout="system_block"``)."""
    text = name.strip().lower()
    if text in ("vanilla", "private_cot"):
        return AgentConfig(kind=text, **options)  # type: ignore[arg-type]
    if text in ("workflow", "autonomous"):
        text += "_overwrite"
    if text in ALL_PSIT_AGENTS:
        kind, _, strategy = text.partition("_")
        return AgentConfig(kind=kind, strategy=strategy, **options)  # type: ignore[arg-type]
    raise UnknownAgentError(f"unknown agent {name!r}; valid agents: {', '.join(ALL_PSIT_AGENTS)}")
