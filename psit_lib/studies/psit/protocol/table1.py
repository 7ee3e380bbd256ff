"""Table 1's metric: the study's own rule for a self-consistent episode, applied to stored ones.

The number printed beside the study's Table 1 must be computed the way the study computed it.
Its reference evaluator (chandar-lab/Hangman: the SCT evaluator and the results notebook) calls
an episode self-consistent when all three hold:

1. **the revealed secret got a yes**: the candidate that matches the revealed secret (same text
   after lower-casing, ``-`` read as a space and runs of spaces collapsed; failing that, the
   candidate most similar to it, if its similarity ratio is at least 0.85) was answered with a
   reply that is exactly ``yes`` once stripped and lower-cased;
2. **exactly one yes**: one branch answer in all is exactly ``yes``;
3. **no leakage**: the revealed secret, lower-cased, does not occur as a *substring* of the
   host's public replies before the fork, lower-cased.

Every other episode that ran counts as not self-consistent (the denominator is every scored
episode). An episode whose reveal could not be read has no revealed secret: no yes can be
credited to it, so it is not self-consistent, as in the reference.

The workbook's own classification (:func:`~psit_lib.studies.psit.protocol.outcomes.classify_fork`)
is stricter in three ways, and is shown beside this view, labelled, never instead: a public
contradiction before the fork is its own outcome; a yes/no is read from a leading "Yes."/"No,"
and an unreadable answer makes the episode unparseable rather than a no; leakage is a
whole-word match (so "cat" is not leaked by "category"). These functions are pure and read only
recorded fields, so a finished run can be re-scored without a model call.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Sequence

from psit_lib.studies.psit.protocol.records import ForkEpisode

SIMILARITY_THRESHOLD = 0.85
"""The reference evaluator's fallback: a candidate at least this similar to the revealed secret
stands for it when none matches exactly."""


def reference_yes(answer: str) -> bool:
    """A branch answer counts as yes only when the whole reply is the word (``" Yes "``, not
    ``"Yes."`` or ``"Yes, it is"``)."""
    return answer.strip().lower() == "yes"


def _norm(text: str | None) -> str:
    return " ".join((text or "").strip().lower().replace("-", " ").split())


def candidate_index(revealed: str | None, candidates: Sequence[str]) -> int | None:
    """Which candidate stands for the revealed secret: an exact match after normalising, else
    the most similar one if it reaches :data:`SIMILARITY_THRESHOLD`, else None."""
    target = _norm(revealed)
    if not target:
        return None
    for i, candidate in enumerate(candidates):
        if _norm(candidate) == target:
            return i
    best, best_ratio = None, 0.0
    for i, candidate in enumerate(candidates):
        ratio = SequenceMatcher(None, target, _norm(candidate)).ratio()
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    return best if best_ratio >= SIMILARITY_THRESHOLD else None


def reference_leakage(revealed: str | None, host_replies: Sequence[str]) -> bool:
    """Whether the revealed secret occurs, as a substring ignoring case, in the host's public
    replies before the fork."""
    if not revealed:
        return False
    return revealed.lower() in " ".join(host_replies).lower()


@dataclass(frozen=True)
class TableOneScore:
    """The reference evaluator's reading of one episode."""

    revealed_yes: bool
    yes_count: int
    leakage: bool

    @property
    def self_consistent(self) -> bool:
        return self.revealed_yes and self.yes_count == 1 and not self.leakage


def score_table1(episode: ForkEpisode) -> TableOneScore:
    """Table 1's rule applied to one recorded fork episode (no model call)."""
    revealed = episode.reveal.parsed if episode.reveal is not None else None
    host_replies = [m.content for m in episode.transcript if m.role == "assistant"]
    yes = [reference_yes(c.answer) for c in episode.candidates]
    index = candidate_index(revealed, [c.secret for c in episode.candidates])
    return TableOneScore(revealed_yes=index is not None and yes[index], yes_count=sum(yes),
                         leakage=reference_leakage(revealed, host_replies))
