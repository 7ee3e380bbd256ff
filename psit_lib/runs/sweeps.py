"""Sweep parts' names: the one place a swept value's simulated model and part are named, so no
reader ever inverts a model name to find its value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def sweep_model_name(profile: str, knob: str, value: Any) -> str:
    """The simulated model that runs ``profile`` with ``knob`` set to ``value``
    (``psit-sim:default,notices_contradictions=0.5``)."""
    from psit_lib.sim.profiles import with_override
    from psit_lib.wire import SIM_MODEL_NAME

    return f"{SIM_MODEL_NAME}:{with_override(profile, knob, value)}"


def sweep_model_names(profile: str, knob: str, values: Sequence[Any]) -> dict[Any, str]:
    """Each swept value's model name (:func:`sweep_model_name`)."""
    return {value: sweep_model_name(profile, knob, value) for value in values}


def sweep_part_name(knob: str, value: Any) -> str:
    """The part of a sweep at one value: ``sweep:<knob>=<value>``."""
    return f"sweep:{knob}={value}"


def scaled_sweep_size(size: int, n: int, full: int) -> int:
    """Sweep episodes per value for a run of ``n`` main episodes when ``size`` is meant for ``full``:
    unchanged at ``full`` or more, else proportionally fewer (at least 1; 0 stays 0), so a quick run
    is not mostly sweep. A pure function of the bound parameters, so a resume plans the same sweep."""
    return size if not size or n >= full else max(1, size * n // full)
