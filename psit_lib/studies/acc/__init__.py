"""Agent Cognitive Compressor study (SPEC §5): the public facade its notebook (05) imports from.

Everything the notebook uses from this study, and what it uses from ``psit_lib.runs``, is
named here. Names are loaded lazily (PEP 562): importing one module of the study (say
``psit_lib.studies.acc.scenarios``) does not import the rest, the runner or pandas. A name's
module is imported the first time the name is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.acc import claims
    from psit_lib.studies.acc.study import STUDY, judge_rows, main_turns
    from psit_lib.runs import Experiment
    from psit_lib.runs.params import notebook_values, validate_params
    from psit_lib.studies.acc import experiment, metrics, sensitivity, summary
    from psit_lib.studies.acc.assumptions import simulator_assumptions
    from psit_lib.studies.acc.catalogue import prompt_catalogue
    from psit_lib.studies.acc.differences import DIFFERENCES
    from psit_lib.studies.acc.experiment import AccParams
    from psit_lib.studies.acc.figures import plot_footprint_by_domain, plot_outcome, plot_rates_per_turn

# name -> the module that defines it
_NAMES: dict[str, str] = {
    # the study as one object (psit_lib.runs.study.Study)
    "STUDY": "psit_lib.studies.acc.study",
    "main_turns": "psit_lib.studies.acc.study",
    "judge_rows": "psit_lib.studies.acc.study",
    # running a notebook (psit_lib.runs)
    "Experiment": "psit_lib.runs",
    "notebook_values": "psit_lib.runs.params",
    "validate_params": "psit_lib.runs.params",
    # parameters, prompts, departures and simulator assumptions
    "AccParams": "psit_lib.studies.acc.experiment",
    "prompt_catalogue": "psit_lib.studies.acc.catalogue",
    "DIFFERENCES": "psit_lib.studies.acc.differences",
    "simulator_assumptions": "psit_lib.studies.acc.assumptions",
    # figures
    "plot_footprint_by_domain": "psit_lib.studies.acc.figures",
    "plot_rates_per_turn": "psit_lib.studies.acc.figures",
    "plot_outcome": "psit_lib.studies.acc.figures",
}

# name -> a module of the study's notebook helpers, used as a namespace (metrics.score_table, ...)
_MODULES: dict[str, str] = {
    "claims": "psit_lib.studies.acc.claims",
    "experiment": "psit_lib.studies.acc.experiment",
    "metrics": "psit_lib.studies.acc.metrics",
    "sensitivity": "psit_lib.studies.acc.sensitivity",
    "summary": "psit_lib.studies.acc.summary",
}

__all__ = [  # every name of _NAMES and _MODULES (a literal, so linters see the re-exports)
    "claims",
    "STUDY", "main_turns", "judge_rows", "Experiment", "notebook_values", "validate_params", "AccParams", "prompt_catalogue", "DIFFERENCES",
    "simulator_assumptions", "plot_footprint_by_domain", "plot_rates_per_turn", "plot_outcome", "experiment", "metrics",
    "sensitivity", "summary",
]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
