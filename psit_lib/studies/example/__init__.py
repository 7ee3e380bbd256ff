"""An example study in one file (``study.py``): a one-question private-state probe.

Read ``docs/adding_a_study.md`` beside it. The facade names what a notebook would use, lazily.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psit_lib.studies.example.study import DIFFERENCES, STUDY, ProbeParams, prompt_catalogue

_NAMES = {name: "psit_lib.studies.example.study" for name in ("STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue")}

__all__ = ["STUDY", "DIFFERENCES", "ProbeParams", "prompt_catalogue"]


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_NAMES[name]), name)
    globals()[name] = value
    return value
