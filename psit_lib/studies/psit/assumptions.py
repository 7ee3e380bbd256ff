"""The simulated model's roles and knobs that act on each notebook of the PSIT study.

A notebook shows them under "What decides this result" with ``simulator_assumptions(exp)``;
the lists live here, beside the study, so notebooks do not spell simulator names. On a real
endpoint the table is empty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs import Experiment

# Knobs that act on every fork test (the host's unheld secret and prior, the memory tools, the
# reply formats, private reasoning).
FORK_TEST_KNOBS = ("unheld_secret", "prior_exponent", "tool_use_reliability", "late_tool_use", "edit_error_rate",
                   "leak_propensity", "malformed_output_rate", "reasoning", "reasoning_tokens")

# notebook -> (simulator roles, profile knobs) that act on its results
SIMULATOR_ASSUMPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "02_hangman_fork_tests": (("hangman_host", "memory_updater", "candidate_generator"), FORK_TEST_KNOBS),
    "03_diagnosis_ddxplus": (("diagnosis_host", "memory_updater", "candidate_generator"), FORK_TEST_KNOBS),
    "04_memory_strategy_ablations": (("hangman_host", "diagnosis_host", "memory_updater", "candidate_generator"),
                                     FORK_TEST_KNOBS),
}


def simulator_assumptions(exp: Experiment) -> pd.DataFrame:
    """The simulator's knobs and role constants declared for ``exp``'s notebook (empty on a real endpoint)."""
    return exp.declared_simulator_assumptions(SIMULATOR_ASSUMPTIONS, __name__)
