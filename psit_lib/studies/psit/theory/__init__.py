"""The theorem of SPEC §0 without any model: compatible sets, idealised hosts, exact fork odds.

- :mod:`~psit_lib.studies.psit.theory.candidate_sets`: the compatible set C_t of a public Hangman history
  and how it shrinks over seeded games.
- :mod:`~psit_lib.studies.psit.theory.policies`: a re-imagining (stochastic) POCA, a first-compatible
  (deterministic) POCA and a host with private state.
- :mod:`~psit_lib.studies.psit.theory.fork_exact`: their fork-test outcome distributions, exactly and by
  seeded simulation, plus tables for the notebook's figures.
- :mod:`~psit_lib.studies.psit.theory.secrecy`: exact public-history distributions and H(secret | history).
"""

from psit_lib.studies.psit.theory.candidate_sets import (
    compatible_set,
    play_truthful_game,
    simulate_set_sizes,
    words_of_length,
)
from psit_lib.studies.psit.theory.fork_exact import (
    FORK_OUTCOMES,
    ExactComputationTooLargeError,
    closed_form_check,
    enumerate_outcomes,
    exact_mix_table,
    exact_outcomes,
    p_self_consistent_uniform,
    policy_table,
    self_consistency_points,
    simulate_outcomes,
    synthetic_compatible_set,
)
from psit_lib.studies.psit.theory.policies import (
    FirstCompatiblePoca,
    PolicyInputError,
    PrivateStateAgent,
    ReimaginingPoca,
    compared_hosts,
    frequency_weights,
)
from psit_lib.studies.psit.theory.secrecy import (
    conditional_entropy_of_secret,
    entropy_table,
    entropy_views,
    expected_log2_compatible,
    history_distribution,
)

__all__ = [
    "FORK_OUTCOMES",
    "ExactComputationTooLargeError",
    "FirstCompatiblePoca",
    "PolicyInputError",
    "PrivateStateAgent",
    "ReimaginingPoca",
    "closed_form_check",
    "compared_hosts",
    "compatible_set",
    "conditional_entropy_of_secret",
    "entropy_table",
    "entropy_views",
    "enumerate_outcomes",
    "exact_mix_table",
    "exact_outcomes",
    "expected_log2_compatible",
    "frequency_weights",
    "history_distribution",
    "p_self_consistent_uniform",
    "play_truthful_game",
    "policy_table",
    "self_consistency_points",
    "simulate_outcomes",
    "simulate_set_sizes",
    "synthetic_compatible_set",
    "words_of_length",
]
