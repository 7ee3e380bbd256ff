"""A degenerate judge is a health finding, not a result (issue #28, item 2).

ACC's rates are the judge's scores: a judge that gives every answer the same scores, or whose
replies parse into nothing, measures nothing about the agents. Such an episode's judge score is
flagged ``degenerate_judge``, so the run health turns ``suspect`` past its threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


#: The verdict fields that must differ somewhere for the judge to have told answers apart.
VERDICT_FIELDS = ("relevance", "answer_quality", "instruction_following", "coherence", "supported_claims",
                  "unsupported_claims", "active_constraints", "violations", "omitted_required")
MIN_ANSWERS = 3
"""Fewer judged answers than this can tie by chance; the check needs at least this many."""


def judge_is_degenerate(verdicts: Sequence[Mapping[str, Any]], n_judged_turns: int = 0) -> str | None:
    """Why the judge told no answers apart, or None: turns were judged but no verdict parsed, or
    at least :data:`MIN_ANSWERS` answers all got the very same scores."""
    if n_judged_turns and not verdicts:
        return f"the judge's replies parsed into no score in {n_judged_turns} judged turn(s)"
    if len(verdicts) < MIN_ANSWERS:
        return None
    scores = {tuple(verdict.get(field) for field in VERDICT_FIELDS) for verdict in verdicts}
    if len(scores) == 1:
        score = dict(zip(VERDICT_FIELDS[:4], next(iter(scores))[:4]))
        return f"the judge gave all {len(verdicts)} answers the same scores ({score})"
    return None
