"""The simulated diagnosis host (DDXPlus): a patient, or the attending who holds the case.

Everything task-specific is read through :class:`psit_lib.studies.psit.tasks.diagnosis.DiagnosisTask`, so
the simulated model understands exactly the prompts the harness sends and plays by the same
rule R the harness scores with:

* intent comes from the task's own wording (its opener, its verbatim evidence questions, its
  reveal prompt and its "is the condition you chose X?" template, with loose fallbacks);
* the public state is what the host itself answered earlier in the dialogue: each player
  message's evidence (``find_asked_evidence``) paired with the yes/no read from the next host
  reply (``parse_yes_no``);
* a held condition is answered by R (``answers_yes``); without one the generic host
  (``secret_host.host_reply``) re-imagines a condition compatible with those public answers.

The model's prior over conditions (an assumption, documented here because it drives mode
collapse) is derived from the dataset alone: weight = number of evidences (symptoms plus
antecedents) x DDXPlus severity level. Asked to play a patient, a model reaches for an
everyday case (severity runs from 1, life-threatening, e.g. anaphylaxis, to 5, mildest, e.g.
URTI; mild conditions dominate real case loads) with a rich, textbook presentation (many
evidences). Weights run from 7 (laryngospasm) to 135 (panic attack); ``SimContext.prior_choice``
raises them to ``alpha / T``, so the choice is nearly uniform at T = 1, concentrates on a few
conditions below T = 0.1, and collapses onto the mode near T = 0.

The candidate generator (``register_proposer("diagnosis")``) proposes dataset conditions that
fit the public answers, then, when those run out, familiar conditions outside DDXPlus
(``OUTSIDE_CONDITIONS``): the simulated model has no evidence list for them, so neither it nor
rule R can refute them, which is why the protocol marks them ``source="model"``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from psit_lib.llm.readers import parse_yes_no
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisState, DiagnosisTask, answers_yes, is_consistent

from ..context import SimContext, SimReply
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

_LOOSE_CONFIRM = re.compile(r"\bis (?:the|your) (?:condition|diagnosis)(?: you chose)?\s+(.+?)\s*\?", re.I | re.S)
_LOOSE_REVEAL = re.compile(r"\b(?:which|what) (?:condition|diagnosis) did you (?:choose|pick)|\breveal\b", re.I)
_EXCLUDE = re.compile(r"Do not repeat any of these:\s*(\[.*?\])", re.S)


@lru_cache(maxsize=1)
def default_task() -> DiagnosisTask:
    """The diagnosis task on the project's DDXPlus copy (loaded on first use, not at import)."""
    return DiagnosisTask()


def condition_prior(task: DiagnosisTask) -> dict[str, float]:
    """Prior weight per condition name: its number of evidences times its severity level."""
    return {c.name: float(len(c.evidences) * c.severity) for c in task.dataset.conditions}


@lru_cache(maxsize=4)
def _cached_prior(task: DiagnosisTask) -> dict[str, float]:
    return condition_prior(task)


def short_answer(question: str, yes: bool, variant: int) -> str:
    """A patient's reply to ``question`` (yes or no), phrased after the question's opening."""
    opening = " ".join(question.lower().split()[:2])
    forms = [_SHORT_ANSWERS[opening]] if opening in _SHORT_ANSWERS else []
    forms += list(_OTHER_ANSWERS)
    return forms[variant % len(forms)][0 if yes else 1]


def answer_variants(question: str) -> int:
    """How many phrasings ``short_answer`` has for this question."""
    opening = " ".join(question.lower().split()[:2])
    return len(_OTHER_ANSWERS) + (opening in _SHORT_ANSWERS)


class DiagnosisGame:
    """The simulated model's understanding of the diagnosis game (implements ``SecretGame``)."""

    name = "diagnosis"

    def __init__(self, task: DiagnosisTask | None = None) -> None:
        self._task = task

    @property
    def task(self) -> DiagnosisTask:
        return self._task if self._task is not None else default_task()

    # -- reading the request -----------------------------------------------------------------
    def _confirm_template(self) -> re.Pattern[str]:
        marker = "\x00"
        before, after = self.task.confirm_prompt(marker).split(marker)
        return re.compile(re.escape(before) + r"(.+?)" + re.escape(after), re.S)

    def intent(self, user_text: str, first_turn: bool) -> Intent:
        """The task's exact wording first; loose phrasings only when no evidence is asked."""
        task = self.task
        if first_turn or task.opener() in user_text:
            return Intent("open")
        if (m := self._confirm_template().search(user_text)):
            return Intent("confirm", m.group(1).strip())
        if task.reveal_prompt() in user_text:
            return Intent("reveal")
        if task.find_asked_evidence(user_text) is not None:
            return Intent("move")
        if (m := _LOOSE_CONFIRM.search(user_text)):
            return Intent("confirm", m.group(1).strip().strip("'\""))
        if _LOOSE_REVEAL.search(user_text):
            return Intent("reveal")
        return Intent("other")

    def public_state(self, ctx: SimContext) -> DiagnosisState:
        """My earlier public answers: each asked evidence with the yes/no I replied to it."""
        task = self.task
        state = task.initial_state()
        pending: str | None = None
        for role, text in ctx.dialogue()[:-1]:  # everything before the current user message
            if role == "user":
                pending = task.find_asked_evidence(text)
                continue
            yes = parse_yes_no(text) if pending else None
            if pending and yes is not None and pending not in state.asked:
                state = state.with_answer(pending, yes)
            pending = None  # an unreadable reply constrains nothing
        return state

    # -- choosing a condition ----------------------------------------------------------------
    def prior_pick(self, ctx: SimContext, names: list[str]) -> str:
        """One of ``names`` drawn from the condition prior (sharpened by alpha / T)."""
        prior = _cached_prior(self.task)
        return ctx.prior_choice(names, [prior[n] for n in names])

    def choose_secret(self, ctx: SimContext) -> str:
        return self.prior_pick(ctx, list(self.task.dataset.condition_names))

    def reimagine(self, ctx: SimContext, public: DiagnosisState | None) -> str:
        compatible = [c.name for c in self.task.compatible_conditions(public)] if public else []
        return self.prior_pick(ctx, compatible or list(self.task.dataset.condition_names))

    # -- replying ----------------------------------------------------------------------------
    def opening_reply(self, ctx: SimContext, secret: str) -> str:
        return ctx.rng.choice((
            "I'm ready: I've chosen a condition and will keep it to myself. Ask your first question.",
            "Ready. I have picked a condition from my list; go ahead with your questions.",
        ))

    def move_reply(self, ctx: SimContext, secret: str, public: DiagnosisState, user_text: str) -> str:
        """Rule R for my condition; a condition I cannot look up has none of the evidences."""
        task = self.task
        code = task.find_asked_evidence(user_text)
        question = task.question_for(code)
        canonical = task.normalise(secret)
        yes = task.is_dataset_condition(secret) and answers_yes(task.dataset.condition(canonical), code)
        return short_answer(question, yes, ctx.rng.randrange(answer_variants(question)))

    def same_secret(self, a: str, b: str) -> bool:
        return self.task.normalise(a) == self.task.normalise(b)

    def malformed_reply(self, ctx: SimContext) -> str:
        return "Hmm, let me think about how to describe that to you..."


GAME = DiagnosisGame()


@register_role("diagnosis_host")
def diagnosis_host(ctx: SimContext) -> SimReply:
    return host_reply(GAME, ctx)


def _excluded(ctx: SimContext) -> set[str]:
    """Names the request asks not to repeat (normalised), read from the request text."""
    found = _EXCLUDE.search(ctx.last_user_text())
    try:
        names = json.loads(found.group(1)) if found else []
    except json.JSONDecodeError:
        return set()
    return {GAME.task.normalise(n) for n in names if isinstance(n, str)}


@register_proposer("diagnosis")
def propose_conditions(ctx: SimContext, constraints: dict, count: int) -> list[str]:
    """Conditions that fit the answers (dataset first, then outside ones), prior-weighted.

    With the profile's ``edit_error_rate`` one proposal, at a random position, is replaced by a
    dataset condition that contradicts an answer (the protocol's re-check must reject it).
    """
    task = GAME.task
    present, absent = constraints.get("present_evidences"), constraints.get("absent_evidences")
    if not isinstance(present, list) or not isinstance(absent, list):
        return []
    answers = tuple((str(code), True) for code in present) + tuple((str(code), False) for code in absent)
    excluded = _excluded(ctx)
    fitting = [c.name for c in task.dataset.conditions
               if is_consistent(c, answers) and c.name not in excluded]
    outside = [n for n in OUTSIDE_CONDITIONS if task.normalise(n) not in excluded]
    picks: list[str] = []
    while fitting and len(picks) < count:
        picks.append(GAME.prior_pick(ctx, fitting))
        fitting.remove(picks[-1])
    while outside and len(picks) < count:  # no evidence lists to weigh them by: seeded order
        picks.append(outside.pop(ctx.rng.randrange(len(outside))))
    contradicting = [c.name for c in task.dataset.conditions if not is_consistent(c, answers)]
    if picks and contradicting and ctx.chance(ctx.profile.edit_error_rate):
        picks[ctx.rng.randrange(len(picks))] = ctx.rng.choice(contradicting)
    return picks
