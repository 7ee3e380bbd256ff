"""An example study in one file (``study.py``): a one-question private-state probe.

Read ``docs/adding_a_study.md`` beside it. The facade names what its notebook
(``notebooks/90_example_reveal_probe.ipynb``) uses, lazily, and what it uses from ``psit_lib.runs``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.runs import Experiment
    from psit_lib.runs.params import notebook_values, validate_params
    from psit_lib.studies.example.study import DIFFERENCES, STUDY, ProbeParams, prompt_catalogue

_NAMES = {**{name: "psit_lib.studies.example.study" for name in ("STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue")},
          "Experiment": "psit_lib.runs", "notebook_values": "psit_lib.runs.params",
          "validate_params": "psit_lib.runs.params"}
_MODULES: dict[str, str] = {}

__all__ = ["STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue", "Experiment", "notebook_values",
           "validate_params"]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, _MODULES, namespace=globals())
