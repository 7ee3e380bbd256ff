"""Which way is better for the measures of readings not yet handed their table's direction.

A table's direction belongs to the metric that builds it (``higher_is_better`` of
:class:`psit_lib.runs.scores.Metric`, read with ``Study.direction``): the fork-test notebooks hand
it to their readings (``direction=``). This registry serves the readings that are not handed one
yet (ACC's and BASIS's, by measure name); a higher hallucination or drift rate is *worse*, and a
spread statistic has no better or worse at all. It goes once every reading is handed its metric's.
"""

from __future__ import annotations

from typing import Literal

Direction = Literal["higher", "lower"]

#: Which way is better for each measure a reading is called with (keyed by the measure's name
#: as the notebooks pass it; a trailing " rate" is ignored, so "hallucination rate" is
#: "hallucination"). ``None``: the measure has no better or worse (a spread statistic), and
#: readings only say higher or lower. A measure not listed here is treated as ``None``.
METRIC_DIRECTION: dict[str, Direction | None] = {
    # the default measure of rate_reading / sweep_reading (the fork tests hand theirs from the metrics)
    "rate": "higher",
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
