"""The simulated model's roles and knobs that act on notebook 06, kept beside the study so the
notebook does not spell simulator names."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs import Experiment

# notebook -> (simulator roles, profile knobs) that act on its results
SIMULATOR_ASSUMPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "06_basis_cab_scenarios": (("basis_orchestrator", "cab_subagent", "user_notifier", "cortex_agent"),
                               ("notices_contradictions", "explicit_detail_weight", "mask_error_rate",
                                "malformed_output_rate")),
}


def simulator_assumptions(exp: Experiment) -> pd.DataFrame:
    """The simulator's knobs and role constants declared for ``exp``'s notebook (empty on a real endpoint)."""
    return exp.declared_simulator_assumptions(SIMULATOR_ASSUMPTIONS, __name__)
