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


class UnknownAgentError(ValueError):
    """An agent name the workbook does not define."""


@dataclass(frozen=True)
class AgentConfig:
    kind: Kind
    strategy: str | None = None
    max_tool_rounds: int = 3
    dialogue_window: int = 6   # messages of recent dialogue the memory updater sees

    @property
    def name(self) -> str:
        return f"{self.kind}_{self.strategy}" if self.strategy else self.kind

    @property
    def has_memory(self) -> bool:
        return self.kind in ("workflow", "autonomous")


def parse_agent(name: str) -> AgentConfig:
    """``AgentConfig`` for a table name such as ``workflow_patch_replace``."""
    text = name.strip().lower()
    if text in ("vanilla", "private_cot"):
        return AgentConfig(kind=text)  # type: ignore[arg-type]
    for kind in ("workflow", "autonomous"):
        if text == kind:
            return AgentConfig(kind=kind, strategy="overwrite")
        if text.startswith(kind + "_") and text[len(kind) + 1:] in STRATEGY_NAMES:
            return AgentConfig(kind=kind, strategy=text[len(kind) + 1:])
    valid = ["vanilla", "private_cot"] + [f"{k}_{s}" for k in ("workflow", "autonomous")
                                          for s in STRATEGY_NAMES]
    raise UnknownAgentError(f"unknown agent {name!r}; valid agents: {', '.join(valid)}")
