"""The fork tests' per-episode outcomes for tests that compare runs: the outcome scorer's label,
``error`` for a failed episode."""

from __future__ import annotations

import pandas as pd

from psit_lib.studies.psit.protocol.experiment import fork_outcome
from psit_lib.studies.psit.protocol.outcomes import Outcome


def fork_rows(records) -> pd.DataFrame:
    """One row per episode: id, agent, whether it was scored, its outcome, revealed secret
    and whether it is self-consistent."""
    return pd.DataFrame([{
        "episode_id": r.episode_id, "agent": r.spec["agent"], "scored": r.result is not None,
        "outcome": fork_outcome(r.result).value if r.result is not None else Outcome.ERROR.value,
        "revealed": r.result.reveal.parsed if r.result is not None and r.result.reveal is not None else None,
    } for r in records]).assign(self_consistent=lambda df: df["outcome"] == Outcome.SELF_CONSISTENT.value)
