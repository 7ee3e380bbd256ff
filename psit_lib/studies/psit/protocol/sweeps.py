"""The fork-test study's sweeps of simulator assumptions, by name (notebooks 02-04).

A notebook picks a sweep by its name here (the ``sweep`` parameter), never by a knob name: a
notebook that spells knob names goes stale when the simulator, a black box behind the wire,
changes. Light on purpose (no pandas): the parameter models validate ``sweep`` before a kernel starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class NamedSweep:
    """One swept simulator assumption: the knob, its values, and what it asks in one sentence."""

    name: str
    knob: str
    values: tuple[Any, ...]
    question: str


SWEEPS: dict[str, NamedSweep] = {sweep.name: sweep for sweep in (
    NamedSweep("host_without_a_secret", "unheld_secret", ("reimagine", "play_along", "deny"),
               "What does a host asked about a secret it does not hold do: re-imagine one, play along, or deny?"),
    NamedSweep("pull_of_common_secrets", "prior_exponent", (0.25, 1.0, 2.0),
               "How strongly does the model favour common secrets when it picks or re-imagines one?"),
    NamedSweep("unprompted_memory_tool_use", "tool_use_reliability", (0.2, 0.7, 1.0),
               "How often does an agent call a memory tool on its own when it has something worth keeping?"),
)}
"""sweep name -> the sweep. Notebook 02 sweeps ``host_without_a_secret``, 03
``pull_of_common_secrets``, 04 ``unprompted_memory_tool_use`` by default."""


def named_sweep(name: str) -> NamedSweep:
    """The sweep called ``name``; ValueError (one sentence, listing the sweeps) otherwise."""
    try:
        return SWEEPS[name]
    except KeyError:
        raise ValueError(f"{name!r} is not a sweep of the fork-test study; choose from "
                         f"{', '.join(SWEEPS)}") from None


def check_sweep_name(name: str) -> str:
    """``name`` unchanged when it names a sweep whose knob and values the simulator has."""
    from psit_lib.runs.params import check_sweep_values

    sweep = named_sweep(name)
    check_sweep_values(sweep.knob, sweep.values)
    return name
