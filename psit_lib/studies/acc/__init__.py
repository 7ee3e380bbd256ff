"""The Agent Cognitive Compressor study (SPEC §5): the public facade its notebook (05) imports from.

Names load lazily (PEP 562), so importing one module of the study does not import the rest,
the runner or pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.acc import claims
    from psit_lib.studies.acc.study import STUDY, main_turns
    from psit_lib.runs import Experiment
    from psit_lib.runs.params import notebook_values, validate_params
    from psit_lib.studies.acc import metrics, sensitivity, summary
    from psit_lib.studies.acc.assumptions import simulator_assumptions
    from psit_lib.studies.acc.catalogue import prompt_catalogue
    from psit_lib.studies.acc.differences import DIFFERENCES
    from psit_lib.studies.acc.experiment import AccParams
    from psit_lib.studies.acc.figures import plot_footprint_by_domain, plot_outcome, plot_rates_per_turn

_FROM: dict[str, tuple[str, ...]] = {  # module -> the names taken from it
    "psit_lib.studies.acc.study": ("STUDY", "main_turns"),
    "psit_lib.runs": ("Experiment",),
    "psit_lib.runs.params": ("notebook_values", "validate_params"),
    "psit_lib.studies.acc.experiment": ("AccParams",),
    "psit_lib.studies.acc.catalogue": ("prompt_catalogue",),
    "psit_lib.studies.acc.differences": ("DIFFERENCES",),
    "psit_lib.studies.acc.assumptions": ("simulator_assumptions",),
    "psit_lib.studies.acc.figures": ("plot_footprint_by_domain", "plot_rates_per_turn", "plot_outcome"),
}
_NAMES = {name: module for module, names in _FROM.items() for name in names}
# modules of the study's notebook helpers, used as namespaces (metrics.score_table, ...)
_MODULES = {name: f"psit_lib.studies.acc.{name}" for name in ("claims", "metrics", "sensitivity", "summary")}

__all__ = [  # every name of _NAMES and _MODULES (a literal, so linters see the re-exports)
    "claims",
    "STUDY", "main_turns", "Experiment", "notebook_values", "validate_params", "AccParams", "prompt_catalogue", "DIFFERENCES",
    "simulator_assumptions", "plot_footprint_by_domain", "plot_rates_per_turn", "plot_outcome", "metrics",
    "sensitivity", "summary",
]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
