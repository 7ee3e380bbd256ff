"""Analysis layer shared by every study; the facade names what notebooks import (what one study uses lives in it).

Names load lazily (PEP 562): importing a light module must not pull in matplotlib, seaborn, scipy and statsmodels."""

from __future__ import annotations

from psit_lib.lazy import lazy_attributes

_NAMES: dict[str, str] = {
    "label_table": "psit_lib.analysis.labels",
    **{n: "psit_lib.analysis.plots" for n in ("plot_rate_intervals", "plot_state_size", "plot_forest",
                                              "plot_rate_by_size")},
    **{n: "psit_lib.analysis.result_sentences" for n in ("grouped_rate_readings", "rate_headline", "one_sentence")},
    "sweep_reading": "psit_lib.analysis.sweeps",
    "differences_table": "psit_lib.analysis.differences",
}

__all__ = list(_NAMES)

__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
