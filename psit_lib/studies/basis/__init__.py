"""The BASIS cortex on ARE's CabApp (SPEC §6): the public facade its notebook (06) imports from.

Everything the notebook uses from this study, and what it uses from ``psit_lib.runs``, is
named here. Names are loaded lazily (PEP 562): importing one module of the study does not
import the rest, the runner or pandas. A name's module is imported the first time the name is
used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.basis import claims
    from psit_lib.studies.basis.study import STUDY, main_trials
    from psit_lib.runs import Experiment
    from psit_lib.runs.params import notebook_values, validate_params
    from psit_lib.studies.basis import results
    from psit_lib.studies.basis.assumptions import simulator_assumptions
    from psit_lib.studies.basis.differences import DIFFERENCES
    from psit_lib.studies.basis.experiment import BasisParams
    from psit_lib.studies.basis.figures import plot_figure4
    from psit_lib.studies.basis.inaction import headline_reading
    from psit_lib.studies.basis.passk import PASSK_COLUMN_LABELS
    from psit_lib.studies.basis.prompts import prompt_catalogue

# name -> the module that defines it
_NAMES: dict[str, str] = {
    # the study as one object (psit_lib.runs.study.Study)
    "STUDY": "psit_lib.studies.basis.study",
    "main_trials": "psit_lib.studies.basis.study",
    # running a notebook (psit_lib.runs)
    "Experiment": "psit_lib.runs",
    "notebook_values": "psit_lib.runs.params",
    "validate_params": "psit_lib.runs.params",
    "BasisParams": "psit_lib.studies.basis.experiment",
    # pass@k labels and the paper's Figure 4
    "PASSK_COLUMN_LABELS": "psit_lib.studies.basis.passk",
    "plot_figure4": "psit_lib.studies.basis.figures",
    # prompts, departures and simulator assumptions
    "prompt_catalogue": "psit_lib.studies.basis.prompts",
    "DIFFERENCES": "psit_lib.studies.basis.differences",
    "simulator_assumptions": "psit_lib.studies.basis.assumptions",
    # the headline: its view named, inaction beside the rate
    "headline_reading": "psit_lib.studies.basis.inaction",
}

# name -> a module of the study's notebook helpers, used as a namespace (results.success_table, ...)
_MODULES: dict[str, str] = {
    "claims": "psit_lib.studies.basis.claims",
    "results": "psit_lib.studies.basis.results",
}

__all__ = [  # every name of _NAMES and _MODULES (a literal, so linters see the re-exports)
    "claims",
    "STUDY", "main_trials", "plot_figure4", "Experiment", "notebook_values", "validate_params", "BasisParams",
    "PASSK_COLUMN_LABELS", "prompt_catalogue", "DIFFERENCES",
    "simulator_assumptions", "results", "headline_reading",
]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
