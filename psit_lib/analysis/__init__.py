"""Analysis layer (shared by every study): statistics, provenance labels, figures,
readings, sweeps and the differences table; the facade names what notebooks import.

What only one study uses lives in that study: pass@k in :mod:`psit_lib.studies.basis.passk`,
secret spread in :mod:`psit_lib.studies.psit.secrets`, and their figures in each study's
``figures`` module; notebooks import those from the study's facade.

Names load lazily (PEP 562, :mod:`psit_lib.lazy`): importing a light module of the layer must not
pull in matplotlib, seaborn, scipy and statsmodels.
"""

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
