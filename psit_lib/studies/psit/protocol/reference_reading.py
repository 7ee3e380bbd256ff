"""How the study's reference evaluator reads a reveal, as pure rules (Table 1's headline view).

Table 1 was scored by the reference code (chandar-lab/Hangman: its SCT engines, ``sct/*_utils.py``
and ``sct_evaluator.py``, and ``results_final.ipynb``), which reads a reveal much more literally
than this workbook's task readers do. The facts, restated here in this project's own code:

- **what is stored.** For Hangman the engine keeps only the first lowercase ``[a-z]+`` token
  (between word boundaries) of the reply, after lower-casing and removing one pair of
  surrounding quotes or backticks: "The word is planet" is stored as ``the``. For Diagnosis it
  keeps the whole reply, stripped, and that reply is itself the reveal's candidate at the fork.
- **what is matched.** The evaluator reads the stored reveal again with the Diagnosis rule: the
  first run that starts and ends with a letter or digit and holds only letters, digits, spaces
  and hyphens (whitespace collapsed); "Cushing's Syndrome" becomes ``cushing``. That text is
  looked up among the candidates: equal after lower-casing, reading ``-`` as a space and
  collapsing spaces, else the most similar candidate when ``difflib.SequenceMatcher(None, a,
  b).ratio()`` reaches 0.85. "**Sarcoidosis**" is read as ``sarcoidosis`` and compared with its
  own candidate "**Sarcoidosis**": ratio 0.846, not a match.
- **leakage.** The stored reveal, lower-cased, is searched as a plain substring of the host's
  public replies before the fork, lower-cased and joined by spaces: a stored ``the`` leaks.

In a run of this workbench the fork's candidates were built from the workbook's own reading (the
revealed candidate carries the dataset's name). To score such a run as the reference would, the
revealed candidate stands for the stored reveal: for Diagnosis its text is the raw reply (as in
the reference's candidate list), for Hangman the other candidates are left as they are (the
reference would have asked about its token, which this run did not, so no yes can be credited
to a token the run never offered unless a candidate spells it).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Sequence

SIMILARITY_THRESHOLD = 0.85
"""The reference evaluator's fallback: a candidate at least this similar (difflib ratio) to the
revealed secret stands for it when none matches exactly."""

_QUOTES = ("`", '"', "'")
_HANGMAN_TOKEN = re.compile(r"\b([a-z]+)\b")
_DIAGNOSIS_SPAN = re.compile(r"[a-z0-9][a-z0-9\-\s]*[a-z0-9]")
_ALNUM = re.compile(r"[a-z0-9]")


def _unquoted(reply: str) -> str:
    """The reply lower-cased and stripped, without one pair of enclosing quotes or backticks."""
    text = reply.strip().lower()
    if len(text) >= 2 and text[0] in _QUOTES and text[0] == text[-1]:
        text = text[1:-1].strip()
    return text


def hangman_token(reply: str | None) -> str | None:
    """The first lowercase word of a Hangman reveal, as the reference stores it (None if none)."""
    found = _HANGMAN_TOKEN.search(_unquoted(reply or ""))
    return found.group(1) if found else None


def diagnosis_span(text: str | None) -> str | None:
    """The first run of letters, digits, spaces and hyphens of a reveal (lower-cased, spaces
    collapsed), or its first letter or digit alone; None when it has neither."""
    body = _unquoted(text or "")
    found = _DIAGNOSIS_SPAN.search(body) or _ALNUM.search(body)
    return " ".join(found.group(0).split()) if found else None


def stored_reveal(task: str, reply: str | None) -> str | None:
    """What the reference engine keeps of a reveal reply: Hangman's first token, Diagnosis's
    stripped reply (None for an empty one)."""
    if task == "hangman":
        return hangman_token(reply)
    return (reply or "").strip() or None


def matched_text(stored: str | None) -> str | None:
    """The text the evaluator looks up among the candidates: the stored reveal read again by
    the Diagnosis rule (a Hangman token passes through unchanged)."""
    return diagnosis_span(stored) if stored else None


def _norm(text: str | None) -> str:
    return " ".join((text or "").strip().lower().replace("-", " ").split())


def similarity(a: str, b: str) -> float:
    """difflib's ratio of the two texts after the evaluator's normalisation."""
    return SequenceMatcher(None, _norm(a), _norm(b)).ratio()


def candidate_index(revealed: str | None, candidates: Sequence[str]) -> int | None:
    """Which candidate stands for the revealed secret: an exact match after normalising, else
    the first most similar one if it reaches :data:`SIMILARITY_THRESHOLD`, else None."""
    target = _norm(revealed)
    if not target:
        return None
    for i, candidate in enumerate(candidates):
        if _norm(candidate) == target:
            return i
    ratios = [similarity(target, candidate) for candidate in candidates]
    best = max(range(len(ratios)), key=ratios.__getitem__, default=None)  # the first most similar
    return best if best is not None and ratios[best] >= SIMILARITY_THRESHOLD else None


def substring_leak(stored: str | None, host_replies: Sequence[str]) -> bool:
    """Whether the stored reveal occurs, ignoring case, as a substring of the host's replies."""
    if not stored:
        return False
    return stored.lower() in " ".join(host_replies).lower()


def reference_candidates(task: str, reply: str | None, candidates: Sequence[tuple[str, str]]) -> list[str]:
    """The candidate texts the reference evaluator would compare with: (text, source) pairs of
    this run's fork, the revealed one replaced by the raw reply for Diagnosis."""
    stored = stored_reveal(task, reply)
    return [stored if task != "hangman" and source == "revealed" and stored else text
            for text, source in candidates]
