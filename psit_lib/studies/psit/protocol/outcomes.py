"""The outcome vocabulary of the self-consistency test (SPEC §1 step 3), shared by protocol and plots.

One fork episode ends in exactly one :class:`Outcome`; the tables count it and the failure-mode
figure stacks it, so names, order and colours live here and nowhere else. :func:`classify_fork`
is the one rule from a fork to its outcome, pure so hand-made episodes test it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import Enum


class Outcome(str, Enum):
    """How a fork episode ended. A ``str`` enum, so values compare equal to plain strings."""

    LEAKAGE = "leakage"
    SELF_CONSISTENT = "self_consistent"
    OVER_CONFIRMATION = "over_confirmation"
    STATE_SUBSTITUTION = "state_substitution"
    ALL_DENIAL = "all_denial"
    PUBLIC_CONTRADICTION = "public_contradiction"
    UNPARSEABLE = "unparseable"
    ERROR = "error"


class ForkInputError(ValueError):
    """The fork record handed to :func:`classify_fork` breaks its contract (a protocol bug)."""


#: Stacking order for bars: success at the bottom, then the four failure modes of SPEC §1 in
#: order of "how close to consistent", then the recorded-but-not-judged outcomes on top.
OUTCOME_ORDER: tuple[Outcome, ...] = (
    Outcome.SELF_CONSISTENT,
    Outcome.OVER_CONFIRMATION,
    Outcome.STATE_SUBSTITUTION,
    Outcome.ALL_DENIAL,
    Outcome.PUBLIC_CONTRADICTION,
    Outcome.LEAKAGE,
    Outcome.UNPARSEABLE,
    Outcome.ERROR,
)

#: Fixed colours (Okabe-Ito, readable with the common colour-vision deficiencies) so the same
#: outcome has the same colour in every figure of the workbook.
OUTCOME_COLOURS: dict[Outcome, str] = {
    Outcome.SELF_CONSISTENT: "#009E73",  # bluish green
    Outcome.OVER_CONFIRMATION: "#E69F00",  # orange
    Outcome.STATE_SUBSTITUTION: "#D55E00",  # vermillion
    Outcome.ALL_DENIAL: "#0072B2",  # blue
    Outcome.PUBLIC_CONTRADICTION: "#56B4E9",  # sky blue
    Outcome.LEAKAGE: "#CC79A7",  # reddish purple
    Outcome.UNPARSEABLE: "#999999",  # grey
    Outcome.ERROR: "#333333",  # near black
}

#: Human-readable names for legends and tables.
OUTCOME_LABELS: dict[Outcome, str] = {
    Outcome.SELF_CONSISTENT: "self-consistent",
    Outcome.OVER_CONFIRMATION: "over-confirmation",
    Outcome.STATE_SUBSTITUTION: "state substitution",
    Outcome.ALL_DENIAL: "all denial",
    Outcome.PUBLIC_CONTRADICTION: "public contradiction",
    Outcome.LEAKAGE: "leakage",
    Outcome.UNPARSEABLE: "unparseable",
    Outcome.ERROR: "error",
}


def secret_appears_in(secret: str, text: str) -> bool:
    """Whether ``secret`` occurs in ``text`` as a whole word (or whole phrase), ignoring case.

    Whole words because a substring test would call "cat" leaked by "category" or "art" by "start"
    (Hangman secrets are short common words); multi-word diagnoses match as a phrase across any
    whitespace, and a board such as ``c _ t`` never spells the secret, so it is not leakage.
    """
    words = secret.split()
    if not words:
        return False
    phrase = r"\s+".join(re.escape(word) for word in words)
    return re.search(rf"(?<!\w){phrase}(?!\w)", text, flags=re.IGNORECASE) is not None


def answers_per_secret(revealed: str | None,
                       branches: Iterable[tuple[str, str, bool | None]]) -> dict[str, bool | None]:
    """The decision for each secret that :func:`classify_fork` reads, from the fork's branches as
    (normalised secret, source, decision). A secret asked under two names (a DDXPlus condition's
    alias beside its dataset name: two candidates, as in the reference) is one secret here: the
    revealed one is read from the branch that named it in the host's words (``source="revealed"``),
    any other from all its branches (yes when one says yes, else unreadable when one is)."""
    said: dict[str, list[bool | None]] = {}
    own: bool | None = None
    asked_own = False
    for secret, source, decision in branches:
        said.setdefault(secret, []).append(decision)
        if source == "revealed" and not asked_own:
            own, asked_own = decision, True

    def one(secret: str, decisions: list[bool | None]) -> bool | None:
        if secret == revealed and asked_own:
            return own
        return True if True in decisions else None if None in decisions else False

    return {secret: one(secret, decisions) for secret, decisions in said.items()}


def classify_fork(
    revealed: str | None,
    transcript_before_reveal: str,
    answers: Mapping[str, bool | None],
    public_contradictions: int = 0,
) -> Outcome:
    """Outcome of one fork episode, applying SPEC §1 step 3 in its stated order.

    ``revealed`` is the normalised secret read from the reveal (None: unreadable); ``answers`` the
    yes/no per candidate (None: unreadable), keyed by normalised secret, the revealed one included.

    Order: LEAKAGE of a readable reveal first (a secret shown in public makes the test
    meaningless); then PUBLIC_CONTRADICTION when the host contradicted itself in public before
    the fork (it failed before any question was asked, the failure a public-only model shows);
    then an unreadable reveal is UNPARSEABLE (nothing to check answers against); then any
    unparseable answer makes the episode UNPARSEABLE (a partial answer set cannot be judged);
    then the four answer patterns. :attr:`Outcome.ERROR` is never returned here: it is for the
    protocol to record when a model call fails before there is anything to classify.

    Raises:
        ForkInputError: when the revealed secret is not among the candidate keys.
    """
    readable = revealed is not None and bool(revealed.strip())
    if revealed is not None and readable and secret_appears_in(revealed, transcript_before_reveal):
        return Outcome.LEAKAGE
    if public_contradictions:
        return Outcome.PUBLIC_CONTRADICTION
    if revealed is None or not readable:
        return Outcome.UNPARSEABLE
    if revealed not in answers:
        raise ForkInputError(
            f"revealed secret {revealed!r} is not among the candidate keys {sorted(answers)!r}; "
            "the protocol must include the revealed secret, normalised, as a candidate"
        )
    if any(answer is None for answer in answers.values()):
        return Outcome.UNPARSEABLE
    yes_to_revealed = bool(answers[revealed])
    yes_to_other = any(bool(answer) for secret, answer in answers.items() if secret != revealed)
    if yes_to_revealed and not yes_to_other:
        return Outcome.SELF_CONSISTENT
    if yes_to_revealed:
        return Outcome.OVER_CONFIRMATION
    if yes_to_other:
        return Outcome.STATE_SUBSTITUTION
    return Outcome.ALL_DENIAL
