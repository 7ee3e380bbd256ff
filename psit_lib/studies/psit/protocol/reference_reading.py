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
- **the ground-truth fallback.** The evaluator also reads a *ground truth*: the secret the agent's
  private states stored (the last ``<secret>`` tag of the latest state that has one), replaced by the
  reveal when one contains the other. When the reveal matches no candidate but is at least 0.85
  similar to the ground truth, the ground truth's candidate (found the same way) gives the reveal
  its yes. An unreadable reveal gets no yes from it: the fallback starts from a reveal.
- **which candidates are one.** The engines list the stored secret, then the reveal, then the
  dataset's secrets, skipping a repeat: for Hangman a word already listed, written the same; for
  Diagnosis a name whose letters (case, punctuation and hyphens aside) equal a listed one's or are
  at least 0.85 similar to them. So "Heart attack" and "Possible NSTEMI / STEMI" are two candidates
  (two yeses from a consistent host: over-confirmation), while "Stable angina" is never offered
  after "Unstable angina". A stored secret that contains the reveal, or is contained in it, is the
  same secret as the reveal.

In a run of this workbench the fork's candidates were built from the workbook's own reading of the
reveal (the name as the host wrote it, markup and leads such as "The condition is" removed). To score
such a run as the reference would, the revealed candidate stands for the stored reveal: for Diagnosis
its text is the raw reply (as in the reference's candidate list), for Hangman the other candidates are
left as they are (the reference would have asked about its token, which this run did not, so no yes
can be credited to a token the run never offered unless a candidate spells it).
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


def label_key(text: str) -> str:
    """A Diagnosis name as the engine compares candidates: lower-cased, every character that is not
    a letter, a space or a hyphen read as a space, hyphens read as spaces, spaces collapsed."""
    kept = "".join(ch if ch.isalpha() or ch in " -" else " " for ch in text.strip().lower())
    return " ".join(kept.replace("-", " ").split())


def same_candidate(task: str, a: str, b: str) -> bool:
    """Whether the engine would skip ``b`` as a repeat of the listed candidate ``a``: Hangman, the
    same text; Diagnosis, equal :func:`label_key` or a difflib ratio of at least 0.85 between them."""
    if task != "diagnosis":
        return a == b
    key_a, key_b = label_key(a), label_key(b)
    if not key_a or not key_b:
        return False
    return key_a == key_b or SequenceMatcher(None, key_a, key_b).ratio() >= SIMILARITY_THRESHOLD


def same_as_reveal(task: str, revealed: str, stored: str) -> bool:
    """Whether the engine takes the stored secret for the reveal: one contains the other, ignoring
    case (Hangman reads the reveal's token, Diagnosis its first run of letters, digits, spaces and
    hyphens, :func:`diagnosis_span`)."""
    reveal = (hangman_token(revealed) if task == "hangman" else diagnosis_span(revealed)) or ""
    kept = stored.strip().lower()
    return bool(reveal) and bool(kept) and (reveal in kept or kept in reveal)


def ground_truth(task: str, reply: str | None, stored: str | None) -> str | None:
    """The evaluator's ground truth: the stored secret, or, when it is the same secret as the reveal
    (:func:`same_as_reveal`), the reveal as the engine kept it (Hangman: the shorter of the two;
    Diagnosis: the raw reply)."""
    if not stored:
        return None
    kept = stored_reveal(task, reply)
    if not kept or not same_as_reveal(task, kept, stored):
        return stored
    if task == "hangman":
        return kept if len(kept) <= len(stored) else stored
    return kept


def reveal_index(revealed: str | None, truth: str | None, candidates: Sequence[str]) -> int | None:
    """The candidate whose answer stands for the reveal's, as the evaluator finds it: the reveal's own
    (:func:`candidate_index`), else, when the reveal is at least 0.85 similar to the ground truth,
    the ground truth's (the fallback); None when neither is found or there is no reveal."""
    found = candidate_index(revealed, candidates)
    if found is not None or not revealed or not truth:
        return found
    if similarity(revealed, truth) < SIMILARITY_THRESHOLD:
        return None
    return candidate_index(truth, candidates)


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
