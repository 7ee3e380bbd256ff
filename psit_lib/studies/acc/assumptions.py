"""The simulated model's roles and knobs acting on notebook 05, kept beside the study so the notebook
spells no simulator names (empty on a real endpoint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs import Experiment

# notebook -> (simulator roles, profile knobs) that act on its results
SIMULATOR_ASSUMPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "05_acc_judge_evaluation": (("acc_agent", "acc_compressor", "acc_judge"),
                                ("attention_tokens", "answer_elaboration_tokens", "judge_follows_rubric",
                                 "malformed_output_rate")),
}


def simulator_assumptions(exp: Experiment) -> pd.DataFrame:
    """The simulator's knobs and role constants declared for ``exp``'s notebook (empty on a real endpoint)."""
    return exp.declared_simulator_assumptions(SIMULATOR_ASSUMPTIONS, __name__)
