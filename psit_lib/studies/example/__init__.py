"""An example study in one file (``study.py``): a one-question private-state probe.

Read ``docs/adding_a_study.md`` beside it. The facade names what a notebook would use, lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.example.study import DIFFERENCES, STUDY, ProbeParams, prompt_catalogue

_NAMES = {name: "psit_lib.studies.example.study" for name in ("STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue")}

__all__ = ["STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue"]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
