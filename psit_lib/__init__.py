"""psit_lib: the PSIT workbench's helper library; importing it loads nothing heavy, and
:func:`load_run` (:mod:`psit_lib.runs.load`) loads on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.runs.load import Run, load_run

_NAMES = {"load_run": "psit_lib.runs.load", "Run": "psit_lib.runs.load"}

__all__ = ["Run", "load_run"]

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
