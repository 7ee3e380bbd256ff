"""psit_lib: the PSIT workbench's helper library.

Importing the package loads nothing heavy; :func:`load_run` (open a finished run's episodes,
scores and tables as pandas frames, :mod:`psit_lib.runs.load`) loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.runs.load import Run, load_run

_NAMES = {"load_run": "psit_lib.runs.load", "Run": "psit_lib.runs.load"}

__all__ = ["Run", "load_run"]

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
