"""The BASIS cortex on ARE's CabApp (SPEC §6): the public facade its notebook (06) imports from.

Names load lazily (PEP 562), so importing one module of the study does not import the rest,
the runner or pandas.
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
    from psit_lib.studies.basis.results import headline_reading
    from psit_lib.studies.basis.passk import PASSK_COLUMN_LABELS
    from psit_lib.studies.basis.prompts import prompt_catalogue

_FROM: dict[str, tuple[str, ...]] = {  # module -> the names taken from it
    "psit_lib.studies.basis.study": ("STUDY", "main_trials"),
    "psit_lib.runs": ("Experiment",),
    "psit_lib.runs.params": ("notebook_values", "validate_params"),
    "psit_lib.studies.basis.experiment": ("BasisParams",),
    "psit_lib.studies.basis.passk": ("PASSK_COLUMN_LABELS",),
    "psit_lib.studies.basis.figures": ("plot_figure4",),
    "psit_lib.studies.basis.prompts": ("prompt_catalogue",),
    "psit_lib.studies.basis.differences": ("DIFFERENCES",),
    "psit_lib.studies.basis.assumptions": ("simulator_assumptions",),
    "psit_lib.studies.basis.results": ("headline_reading",),
}
_NAMES = {name: module for module, names in _FROM.items() for name in names}
# modules of the study's notebook helpers, used as namespaces (results.success_table, ...)
_MODULES = {name: f"psit_lib.studies.basis.{name}" for name in ("claims", "results")}

__all__ = [  # every name of _NAMES and _MODULES (a literal, so linters see the re-exports)
    "claims",
    "STUDY", "main_trials", "plot_figure4", "Experiment", "notebook_values", "validate_params", "BasisParams",
    "PASSK_COLUMN_LABELS", "prompt_catalogue", "DIFFERENCES",
    "simulator_assumptions", "results", "headline_reading",
]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
