"""The private-state study (SPEC §0-§4, §7): the public facade its notebooks (01-04, 07) import from.

Everything a notebook uses from this study, and what it uses from ``psit_lib.runs``, is named
here. Names are loaded lazily (PEP 562): importing a light submodule such as
``psit_lib.studies.psit.tasks.hangman`` must not pull in the agents, pandas or
matplotlib. A name's module is imported the first time the name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.psit import claims
    from psit_lib.studies.psit.study import STUDY
    from psit_lib.runs import Experiment
    from psit_lib.runs.params import notebook_values, validate_params
    from psit_lib.studies.psit.assumptions import simulator_assumptions
    from psit_lib.studies.psit.catalogue import prompt_catalogue
    from psit_lib.studies.psit.differences import DIFFERENCES
    from psit_lib.studies.psit.figures import plot_dataset_view, plot_entropy_vs_temperature, plot_failure_modes
    from psit_lib.studies.psit.protocol import appendix_e, secret_choice
    from psit_lib.studies.psit.protocol import experiment as fork_tests
    from psit_lib.studies.psit.protocol import scoring as fork_scores
    from psit_lib.studies.psit.protocol.params import AblationParams, ForkTestParams, SecretChoiceParams
    from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask
    from psit_lib.studies.psit.tasks.diagnosis_stats import evidence_counts, shrinkage_curve
    from psit_lib.studies.psit.tasks.hangman import HangmanTask
    from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary
    from psit_lib.studies.psit.theory.candidate_sets import simulate_set_sizes, words_of_length
    from psit_lib.studies.psit.theory.fork_exact import (closed_form_check, exact_mix_table, policy_table,
                                                         self_consistency_points)
    from psit_lib.studies.psit.theory.policies import compared_hosts
    from psit_lib.studies.psit.theory.secrecy import entropy_table, entropy_views
    from psit_lib.studies.psit.theory import figure_data as theory_data
    from psit_lib.studies.psit.theory import figures as theory_figures
    from psit_lib.studies.psit.theorem_params import TheoremParams
    from psit_lib.studies.psit.play import hangman_player

# name -> the module that defines it
_NAMES: dict[str, str] = {
    # the study as one object (psit_lib.runs.study.Study)
    "STUDY": "psit_lib.studies.psit.study",
    # running a notebook (psit_lib.runs)
    "Experiment": "psit_lib.runs",
    "notebook_values": "psit_lib.runs.params",
    "validate_params": "psit_lib.runs.params",
    # parameters of each notebook
    "TheoremParams": "psit_lib.studies.psit.theorem_params",
    "ForkTestParams": "psit_lib.studies.psit.protocol.params",
    "AblationParams": "psit_lib.studies.psit.protocol.params",
    "SecretChoiceParams": "psit_lib.studies.psit.protocol.params",
    # the study's prompts, departures and simulator assumptions
    "prompt_catalogue": "psit_lib.studies.psit.catalogue",
    "DIFFERENCES": "psit_lib.studies.psit.differences",
    "simulator_assumptions": "psit_lib.studies.psit.assumptions",
    # tasks
    "HangmanTask": "psit_lib.studies.psit.tasks.hangman",
    "DiagnosisTask": "psit_lib.studies.psit.tasks.diagnosis",
    "get_vocabulary": "psit_lib.studies.psit.tasks.vocabulary",
    "evidence_counts": "psit_lib.studies.psit.tasks.diagnosis_stats",
    "shrinkage_curve": "psit_lib.studies.psit.tasks.diagnosis_stats",
    # figures
    "plot_failure_modes": "psit_lib.studies.psit.figures",
    "plot_dataset_view": "psit_lib.studies.psit.figures",
    "plot_entropy_vs_temperature": "psit_lib.studies.psit.figures",
    # the theorem without a model (notebook 01)
    "closed_form_check": "psit_lib.studies.psit.theory.fork_exact",
    "compared_hosts": "psit_lib.studies.psit.theory.policies",
    "entropy_table": "psit_lib.studies.psit.theory.secrecy",
    "entropy_views": "psit_lib.studies.psit.theory.secrecy",
    "exact_mix_table": "psit_lib.studies.psit.theory.fork_exact",
    "policy_table": "psit_lib.studies.psit.theory.fork_exact",
    "self_consistency_points": "psit_lib.studies.psit.theory.fork_exact",
    "simulate_set_sizes": "psit_lib.studies.psit.theory.candidate_sets",
    "words_of_length": "psit_lib.studies.psit.theory.candidate_sets",
    # interactive views
    "hangman_player": "psit_lib.studies.psit.play",
}

# name -> a module of the study's notebook helpers, used as a namespace (fork_tests.cost_table, ...)
_MODULES: dict[str, str] = {
    "claims": "psit_lib.studies.psit.claims",
    "fork_tests": "psit_lib.studies.psit.protocol.experiment",
    "fork_scores": "psit_lib.studies.psit.protocol.scoring",
    "secret_choice": "psit_lib.studies.psit.protocol.secret_choice",
    "appendix_e": "psit_lib.studies.psit.protocol.appendix_e",
    "theory_data": "psit_lib.studies.psit.theory.figure_data",
    "theory_figures": "psit_lib.studies.psit.theory.figures",
}

__all__ = [  # every name of _NAMES and _MODULES (a literal, so linters see the re-exports)
    "claims",
    "STUDY", "Experiment", "notebook_values", "validate_params", "TheoremParams", "ForkTestParams",
    "AblationParams", "SecretChoiceParams", "prompt_catalogue", "DIFFERENCES", "simulator_assumptions",
    "HangmanTask", "DiagnosisTask", "get_vocabulary", "evidence_counts", "shrinkage_curve", "plot_failure_modes",
    "plot_dataset_view", "plot_entropy_vs_temperature", "closed_form_check", "compared_hosts", "entropy_table", "entropy_views",
    "exact_mix_table", "policy_table", "self_consistency_points", "simulate_set_sizes", "words_of_length",
    "hangman_player", "fork_tests",
    "secret_choice", "appendix_e", "fork_scores",
    "theory_data", "theory_figures",
]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
