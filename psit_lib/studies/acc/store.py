"""External artifact store with bounded lexical recall and a qualification gate (SPEC §5).

Similarity is a plain cosine over sets of content words, on purpose: deterministic, no embedding
model (none can be fetched offline), and it is easy to see why an artifact was or was not recalled.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_WORD = re.compile(r"[a-z0-9][a-z0-9\-\.]*[a-z0-9]|[a-z0-9]")
#: Words too common in every turn of a session to say anything about relevance.
STOPWORDS = frozenset("""
a an and are as at be been but by can do does for from has have how i if in into is it its
me my no not now of on or our please so state that the their them then there these this
those to us was we what when which who will with would you your current answer every give
reply turn user assistant next step tags""".split())


class StoreError(ValueError):
    """A bad recall request (non-positive limit) or a duplicate artifact id."""


def content_terms(text: str) -> frozenset[str]:
    """Lower-cased content words of ``text`` (hyphenated ids like ``db-07`` stay whole)."""
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Cosine similarity of two term sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / math.sqrt(len(a) * len(b))


@dataclass(frozen=True)
class Artifact:
    """One stored piece of evidence: a past turn's input and reply, with provenance."""

    artifact_id: str
    turn: int
    text: str
    source: str
    terms: frozenset[str] = field(default=frozenset(), compare=False)


@dataclass(frozen=True)
class Recalled:
    artifact: Artifact
    score: float


class ArtifactStore:
    """Append-only store; recall ranks by similarity, then newer turn, then id (fully deterministic)."""

    def __init__(self) -> None:
        self._artifacts: list[Artifact] = []

    def __len__(self) -> int:
        return len(self._artifacts)

    def add(self, artifact_id: str, turn: int, text: str, source: str) -> Artifact:
        if any(a.artifact_id == artifact_id for a in self._artifacts):
            raise StoreError(f"artifact id {artifact_id!r} is already in the store")
        artifact = Artifact(artifact_id, turn, text, source, content_terms(text))
        self._artifacts.append(artifact)
        return artifact

    def recall(self, query: str, limit: int) -> list[Recalled]:
        """At most ``limit`` artifacts sharing at least one content word with ``query``, best first."""
        if limit < 1:
            raise StoreError(f"recall limit must be a positive integer, got {limit!r}")
        terms = content_terms(query)
        scored = [Recalled(a, similarity(terms, a.terms)) for a in self._artifacts]
        scored = [r for r in scored if r.score > 0]
        scored.sort(key=lambda r: (-r.score, -r.artifact.turn, r.artifact.artifact_id))
        return scored[:limit]


@dataclass(frozen=True)
class GateDecision:
    recalled: Recalled
    qualified: bool
    reason: str


def qualify(recalled: list[Recalled], input_text: str, previous_state_text: str, *,
            min_score: float = 0.1, max_qualified: int = 3) -> list[GateDecision]:
    """Keep only decision-relevant artifacts: relevant enough, related to the *new input* (not only
    to the old state, which would just echo it) and adding a word the state lacks; at most
    ``max_qualified`` pass, in recall order."""
    input_terms = content_terms(input_text)
    state_terms = content_terms(previous_state_text)
    decisions: list[GateDecision] = []
    passed = 0
    for item in recalled:
        terms = item.artifact.terms
        if item.score < min_score:
            decisions.append(GateDecision(item, False, "below the relevance threshold"))
        elif not terms & input_terms:
            decisions.append(GateDecision(item, False, "unrelated to the new input"))
        elif not terms - state_terms - input_terms:
            decisions.append(GateDecision(item, False, "adds nothing the state and input lack"))
        elif passed >= max_qualified:
            decisions.append(GateDecision(item, False, "over the qualified-artifact budget"))
        else:
            decisions.append(GateDecision(item, True, "relevant and new"))
            passed += 1
    return decisions
