"""Test helper: the BASIS trials frame of typed records, scored by the study's own scorers."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psit_lib.runs.scores import ScoreContext, ScoreLine, scores_frame
from psit_lib.studies.basis.results import trials_frame_of
from psit_lib.studies.basis.study import SCORERS


def trials_frame(records: list[Any]) -> pd.DataFrame:
    """What ``main_trials`` gives for these records had a run stored them (failed ones unscored)."""
    pairs = [("main", record) for record in records]
    ctx = ScoreContext(params=None, models=[])
    lines = [ScoreLine(episode_id=record.episode_id, part=part, scorer=sc.name, version=sc.version,
                       **sc.fn(record, ctx).model_dump())  # type: ignore[union-attr]
             for part, record in pairs if record.ok for sc in SCORERS]
    return trials_frame_of(scores_frame(pairs, lines, [sc.name for sc in SCORERS]))
