"""The simulated diagnosis host (DDXPlus): answers yes/no questions about the condition it holds.

It answers from its own medical knowledge (:mod:`psit_lib.sim.knowledge.ddxplus`); without a
held condition the generic host re-imagines one that fits its public answers. The prior over
conditions (an assumption that drives mode collapse) is the number of evidences x DDXPlus
severity level: a model playing a patient reaches for an everyday case with a textbook
presentation (weights from 7, laryngospasm, to 135, panic attack), raised to ``alpha / T``.
Candidates outside DDXPlus (``OUTSIDE_CONDITIONS``) have no evidence list, so nothing said
refutes them: the protocol marks them ``source="model"``.
"""

from __future__ import annotations

import re

from ..formats import json_or_none
from ..context import SimContext, SimReply
from ..knowledge.ddxplus import Illness, MedicalKnowledge, name_key
from ..knowledge.ddxplus import medical_knowledge as knowledge  # loaded on first use, not at import
from ..request_reading import leading_yes_no
from ..registry import register_role
from .candidates import register_proposer
from .secret_host import Intent, host_reply

OUTSIDE_CONDITIONS: tuple[str, ...] = (
    "Costochondritis", "Migraine", "Tension headache", "Gastroenteritis", "Peptic ulcer disease",
    "Aortic dissection", "Congestive heart failure", "Infectious mononucleosis", "Strep throat",
    "COVID-19", "Pleurisy", "Tonsillitis", "Hyperthyroidism", "Generalized anxiety disorder",
    "Measles", "Cystic fibrosis", "Interstitial lung disease", "Appendicitis",
)
"""Familiar conditions that DDXPlus does not contain: what a model proposes once the dataset's
compatible conditions are used up (none of them resolves to a dataset name; tests check it)."""

# Question openings and the short answers a patient gives to them: (yes form, no form).
_SHORT_ANSWERS: dict[str, tuple[str, str]] = {
    "do you": ("Yes, I do.", "No, I don't."),
    "have you": ("Yes, I have.", "No, I haven't."),
    "are you": ("Yes, I am.", "No, I'm not."),
    "did you": ("Yes, I did.", "No, I didn't."),
    "were you": ("Yes, I was.", "No, I wasn't."),
}
_OTHER_ANSWERS = (("Yes.", "No."), ("Yes, that's right.", "No, not at all."))

_CONFIRM = re.compile(r"\bis (?:the|your) (?:(?:hidden|secret|chosen) )?(?:condition|diagnosis|illness)"
                      r"(?: (?:you|that you) (?:chose|picked|have))?\s*:?\s+(.+?)\s*\?"
                      r"|\bdid you (?:choose|pick)(?: the condition)?\s+(.+?)\s*\?", re.I | re.S)
_REVEAL = re.compile(r"\b(?:which|what) (?:condition|diagnosis|illness) (?:did|do) you (?:choose|pick|have)|\breveal\b|"
                     r"\bname (?:the|your) condition\b", re.I)
_SETUP = re.compile(r"\b(?:diagnosis|diagnostic) (?:game|training|simulator)|\bpick one condition|"
                    r"\bchoose (?:exactly )?one condition", re.I)
_EXCLUDE = re.compile(r"Do not repeat any of these:\s*(\[.*?\])", re.S)


def condition_prior(known: MedicalKnowledge) -> dict[str, float]:
    """Prior weight per condition name: its number of evidences times its severity level."""
    return {i.name: float(len(i.evidences) * i.severity) for i in known.illnesses}


def answer_forms(question: str) -> list[tuple[str, str]]:
    """The (yes, no) phrasings a patient has for ``question``: after its opening first, then generic."""
    opening = " ".join(question.lower().split()[:2])
    return [*([_SHORT_ANSWERS[opening]] if opening in _SHORT_ANSWERS else []), *_OTHER_ANSWERS]


def short_answer(question: str, yes: bool, variant: int) -> str:
    """A patient's reply to ``question`` (yes or no) in phrasing ``variant``."""
    forms = answer_forms(question)
    return forms[variant % len(forms)][0 if yes else 1]


def is_diagnosis_game(ctx: SimContext) -> bool:
    """The conversation is a diagnosis game in which I hold the patient's condition."""
    return bool(_SETUP.search(ctx.system_text() + "\n" + ctx.first_user_text()))


class DiagnosisGame:
    """The simulated model's understanding of the diagnosis game (implements ``SecretGame``)."""

    name = "diagnosis"

    def intent(self, user_text: str, first_turn: bool) -> Intent:
        if first_turn or (_SETUP.search(user_text) and knowledge().asked_evidence(user_text) is None):
            return Intent("open")
        if _REVEAL.search(user_text):  # "which condition did you choose?" is not "did you choose X?"
            return Intent("reveal")
        if (m := _CONFIRM.search(user_text)):
            return Intent("confirm", (m.group(1) or m.group(2)).strip().strip("'\"*"))
        if knowledge().asked_evidence(user_text) is not None:
            return Intent("move")
        return Intent("other")

    def public_state(self, ctx: SimContext) -> list[tuple[str, bool]]:
        """My earlier public answers: each question I recognised with the yes/no I replied."""
        answers: list[tuple[str, bool]] = []
        pending: str | None = None
        for role, text in ctx.dialogue()[:-1]:  # everything before the current user message
            if role == "user":
                pending = knowledge().asked_evidence(text)
                continue
            yes = leading_yes_no(text) if pending else None
            if pending and yes is not None and pending not in {code for code, _ in answers}:
                answers.append((pending, yes))
            pending = None  # an unreadable reply constrains nothing
        return answers

    def as_secret(self, text: str) -> str | None:
        illness = knowledge().illness(text)
        return illness.name if illness else (text.strip() or None)

    # -- choosing a condition ----------------------------------------------------------------
    def prior_pick(self, ctx: SimContext, names: list[str]) -> str:
        """One of ``names`` drawn from the condition prior (sharpened by alpha / T)."""
        prior = condition_prior(knowledge())
        return ctx.prior_choice(names, [prior[n] for n in names])

    def choose_secret(self, ctx: SimContext) -> str:
        return self.prior_pick(ctx, knowledge().names)

    def fitting(self, answers: list[tuple[str, bool]]) -> list[Illness]:
        return [i for i in knowledge().illnesses if knowledge().fits(i, answers)]

    def reimagine(self, ctx: SimContext, public: list[tuple[str, bool]] | None) -> str:
        compatible = [i.name for i in self.fitting(public)] if public is not None else []
        return self.prior_pick(ctx, compatible or knowledge().names)

    # -- replying ----------------------------------------------------------------------------
    def opening_reply(self, ctx: SimContext, secret: str) -> str:
        return ctx.rng.choice((
            "I'm ready: I've chosen a condition and will keep it to myself. Ask your first question.",
            "Ready. I have picked a condition from my list; go ahead with your questions.",
        ))

    def move_reply(self, ctx: SimContext, secret: str, public, user_text: str) -> str:
        """Truthful for my condition; a condition I know nothing about has none of the evidences."""
        known = knowledge()
        code = known.asked_evidence(user_text)
        if code is None:  # the intent is a move only when the message asks a known question
            raise ValueError(f"not a known question: {user_text!r}")
        question = known.questions[code]
        yes = known.has_it(secret, code)
        return short_answer(question, yes, ctx.rng.randrange(len(answer_forms(question))))

    def same_secret(self, a: str, b: str) -> bool:
        return self._key(a) == self._key(b)

    @staticmethod
    def _key(name: str) -> str:
        illness = knowledge().illness(name)
        return illness.name if illness else name_key(name)

    def malformed_reply(self, ctx: SimContext) -> str:
        return "Hmm, let me think about how to describe that to you..."


GAME = DiagnosisGame()


@register_role("diagnosis_host", recognise=is_diagnosis_game,
               assumptions={
                   "condition prior": {"value": "(n evidences x severity) ** (prior_exponent / T)",
                                       "meaning": "everyday conditions with a textbook presentation are picked more often"},
                   "conditions outside DDXPlus": {"value": len(OUTSIDE_CONDITIONS),
                                                  "meaning": "familiar names it proposes once the dataset's fitting ones run out"}})
def diagnosis_host(ctx: SimContext) -> SimReply:
    return host_reply(GAME, ctx)


def _excluded(ctx: SimContext) -> set[str]:
    """Names the request asks not to repeat (normalised), read from the request text."""
    found = _EXCLUDE.search(ctx.last_user_text())
    names = json_or_none(found.group(1)) if found else []
    return {GAME._key(n) for n in names or () if isinstance(n, str)}


@register_proposer("diagnosis")
def propose_conditions(ctx: SimContext, constraints: dict, count: int) -> list[str]:
    """Conditions that fit the answers (dataset first), prior-weighted; with ``edit_error_rate`` one is
    replaced by a contradicting one, which the protocol's re-check must reject."""
    present, absent = constraints.get("present_evidences"), constraints.get("absent_evidences")
    if not isinstance(present, list) or not isinstance(absent, list):
        return []
    answers = [(str(code), True) for code in present] + [(str(code), False) for code in absent]
    excluded = _excluded(ctx)
    fitting = [i.name for i in GAME.fitting(answers) if i.name not in excluded]
    outside = [n for n in OUTSIDE_CONDITIONS if GAME._key(n) not in excluded]
    picks: list[str] = []
    while fitting and len(picks) < count:
        picks.append(GAME.prior_pick(ctx, fitting))
        fitting.remove(picks[-1])
    while outside and len(picks) < count:  # no evidence lists to weigh them by: seeded order
        picks.append(outside.pop(ctx.rng.randrange(len(outside))))
    contradicting = [i.name for i in knowledge().illnesses if not knowledge().fits(i, answers)]
    if picks and contradicting and ctx.chance(ctx.profile.edit_error_rate):
        picks[ctx.rng.randrange(len(picks))] = ctx.rng.choice(contradicting)
    return picks
