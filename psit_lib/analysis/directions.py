"""Which way is better for each measure the workbook reports.

Readings (:mod:`psit_lib.analysis.result_sentences`) and sweep verdicts
(:mod:`psit_lib.analysis.sweeps`) both need it, so it lives apart from both: a higher
hallucination or drift rate is *worse*, and a spread statistic (entropy, top share) has no
better or worse at all.
"""

from __future__ import annotations

from typing import Literal

Direction = Literal["higher", "lower"]

#: Which way is better for each measure a reading is called with (keyed by the measure's name
#: as the notebooks pass it; a trailing " rate" is ignored, so "hallucination rate" is
#: "hallucination"). ``None``: the measure has no better or worse (a spread statistic), and
#: readings only say higher or lower. A measure not listed here is treated as ``None``.
METRIC_DIRECTION: dict[str, Direction | None] = {
    # PSIT fork tests (notebooks 01-04): the default measure of rate_reading / sweep_reading
    "rate": "higher",
    "self_consistent": "higher",
    "self-consistency": "higher",
    "self_consistency": "higher",
    # BASIS (notebook 06)
    "success": "higher",
    "pass@k": "higher",
    "pass^k": "higher",
    "pass_at_k": "higher",
    "pass_hat_k": "higher",
    # ACC (notebook 05)
    "hallucination": "lower",
    "drift": "lower",
    "judge score": "higher",
    "mean_score": "higher",
    "score": "higher",
    "footprint": None,
    "footprint_tokens": None,
    # secret spread (notebook 07): mode collapse is a description, not a better or worse
    "entropy": None,
    "normalised_entropy": None,
    "effective_number": None,
    "top_share": None,
}


def direction_of(measure: str) -> Direction | None:
    """The declared direction of ``measure`` (see :data:`METRIC_DIRECTION`), None if it has none."""
    key = " ".join(str(measure).strip().lower().split())
    if key in METRIC_DIRECTION:
        return METRIC_DIRECTION[key]
    for suffix in (" rate", " rates", "_rate"):
        if key.endswith(suffix) and key[: -len(suffix)] in METRIC_DIRECTION:
            return METRIC_DIRECTION[key[: -len(suffix)]]
    return None
