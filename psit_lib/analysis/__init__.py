"""Analysis layer (shared by every study): statistics, provenance labels, figures,
readings, sweeps and the differences table (the names notebooks import).

What only one study uses lives in that study: pass@k in :mod:`psit_lib.studies.basis.passk`,
secret spread in :mod:`psit_lib.studies.psit.secrets`, and their figures in each study's
``figures`` module; notebooks import those from the study's facade.

Names are re-exported lazily (PEP 562): the protocol imports ``Outcome`` from here on every
run, and that must not pull in matplotlib, seaborn, scipy and statsmodels. A name's module is
imported the first time the name is used.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # stats
    "wilson_interval": "stats",
    "fisher_one_sided": "stats",
    "holm": "stats",
    "rate_table": "stats",
    "significance_table": "stats",
    "better_than_all_baselines": "stats",
    # labels
    "provenance_label": "labels",
    "is_simulated_backend": "labels",
    "label_figure": "labels",
    "label_table": "labels",
    "figure_provenance": "labels",
    # plots
    "plot_rate_intervals": "plots",
    "plot_state_size": "plots",
    "plot_forest": "plots",
    "plot_rate_by_size": "plots",
    "agent_palette": "plots",
    "AGENT_COLOURS": "plots",
    # readings, sweeps, departures, transcripts
    "grouped_rate_readings": "result_sentences",
    "rate_headline": "result_sentences",
    "one_sentence": "result_sentences",
    "sweep_reading": "sweeps",
    "differences_table": "differences",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
