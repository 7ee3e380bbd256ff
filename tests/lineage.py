"""Records without their LangGraph checkpoint ids: a run's checkpoints get fresh ids (uuid6, made
from the clock), so two runs of one episode repeat everything else but those."""

from __future__ import annotations

from typing import Any

CHECKPOINT_KEYS = ("turn_checkpoints", "checkpoint")


def without_checkpoint_ids(value: Any) -> Any:
    """``value`` (a record, or any part of one) with every checkpoint reference left out."""
    if isinstance(value, dict):
        return {k: without_checkpoint_ids(v) for k, v in value.items() if k not in CHECKPOINT_KEYS}
    if isinstance(value, list):
        return [without_checkpoint_ids(v) for v in value]
    return value
