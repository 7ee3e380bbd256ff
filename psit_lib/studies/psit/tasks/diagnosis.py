"""The diagnosis simulator as a private-state interactive task (DDXPlus).

The host (a patient, or the attending who holds the case) privately picks one of the 49
DDXPlus conditions; a seeded resident asks yes/no questions about binary evidences. Rule R is
the dataset itself: the truthful answer to evidence ``e`` under condition ``c`` is yes exactly
when ``e`` is one of ``c``'s symptoms or antecedents. Everything here is pure: the public state
is an immutable record of the answered questions, and the set of conditions it leaves open is
recomputed from it, so forked branches can never disturb each other.

The player splits the hypothesis space: it asks the unasked evidence whose yes-set cuts the
still-compatible conditions closest to half, breaking ties with its seeded ``random.Random``
and sometimes (probability ``explore_prob``) exploring among the next-best splits. Because
every question it asks splits the compatible set, either answer leaves at least one condition
compatible: whatever the host says, the compatible set never becomes empty during play, and
the game ends when one condition is left (or after ``max_questions``).
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from psit_lib.llm.readers import parse_yes_no, split_reasoning
from psit_lib.studies.psit.tasks.base import HostReplyError
from psit_lib.studies.psit.tasks.diagnosis_data import DDXPlus, Condition, load_ddxplus


# Our own additions: common English names and expansions of the dataset's abbreviations, so a
# reveal such as "Laryngospasm" or "Systemic lupus erythematosus" maps to the dataset entry.
NAME_ALIASES: dict[str, str] = {
    "laryngospasm": "Larygospasm",
    "gastroesophageal reflux": "GERD",
    "gastro oesophageal reflux": "GERD",
    "gastro esophageal reflux": "GERD",
    "systemic lupus erythematosus": "SLE",
    "lupus": "SLE",
    "upper respiratory tract infection": "URTI",
    "upper respiratory infection": "URTI",
    "common cold": "URTI",
    "paroxysmal supraventricular tachycardia": "PSVT",
    "myocardial infarction": "Possible NSTEMI / STEMI",
    "heart attack": "Possible NSTEMI / STEMI",
    "esophageal rupture": "Boerhaave",
    "oesophageal rupture": "Boerhaave",
    "hiv": "HIV (initial infection)",
    "flu": "Influenza",
    "lung cancer": "Pulmonary neoplasm",
    "pancreatic cancer": "Pancreatic neoplasm",
    "pertussis": "Whooping cough",
    "atrial flutter": "Atrial fibrillation",
    "allergic rhinitis": "Allergic sinusitis",
    "hay fever": "Allergic sinusitis",
}

_MIN_FRAGMENT_CHARS = 4
"""A reveal shorter than this is never matched as a fragment of a longer condition name."""


def answers_yes(condition: Condition, evidence_code: str) -> bool:
    """Rule R: a truthful host says yes iff the evidence is among the condition's symptoms or antecedents."""
    return evidence_code in condition.evidences


def is_consistent(condition: Condition, answers: tuple[tuple[str, bool], ...]) -> bool:
    """Whether every (evidence code, yes?) answer is what rule R gives for ``condition``."""
    return all(answers_yes(condition, code) == yes for code, yes in answers)


@dataclass(frozen=True)
class DiagnosisState:
    """Public state: the answered questions, in order, as (evidence code, answered yes?) pairs."""

    answers: tuple[tuple[str, bool], ...] = ()

    def __post_init__(self) -> None:
        codes = [code for code, _ in self.answers]
        if len(codes) != len(set(codes)):
            raise ValueError(f"DiagnosisState answers repeat an evidence code: {codes}.")

    @property
    def asked(self) -> tuple[str, ...]:
        """Evidence codes asked so far, in order."""
        return tuple(code for code, _ in self.answers)

    def with_answer(self, code: str, yes: bool) -> DiagnosisState:
        """A new state with one more answered question."""
        return DiagnosisState(self.answers + ((code, yes),))


def _name_key(text: str) -> str:
    """Accent-, case- and punctuation-insensitive form of a name, tokens joined by single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_only = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^0-9a-z]+", " ", ascii_only.casefold()).split())


def _contains_tokens(haystack: str, needle: str) -> int:
    """Start index of ``needle`` as whole tokens inside ``haystack`` (both name keys), or -1."""
    if not needle:
        return -1
    return f" {haystack} ".find(f" {needle} ")


class DiagnosisTask:
    """PSIT implementation of the DDXPlus diagnosis simulator (see the module docstring)."""

    name = "diagnosis"

    def __init__(
        self,
        dataset: DDXPlus | None = None,
        *,
        max_questions: int = 20,
        explore_prob: float = 0.2,
        explore_levels: int = 3,
    ) -> None:
        """``explore_levels``: when exploring, pick among evidences in this many best split qualities."""
        if max_questions < 1:
            raise ValueError(f"max_questions must be at least 1, got {max_questions}.")
        if not 0.0 <= explore_prob <= 1.0:
            raise ValueError(f"explore_prob must lie in [0, 1], got {explore_prob}.")
        if explore_levels < 1:
            raise ValueError(f"explore_levels must be at least 1, got {explore_levels}.")
        self.dataset = dataset if dataset is not None else load_ddxplus()
        self.max_questions = max_questions
        self.explore_prob = explore_prob
        self.explore_levels = explore_levels
        self._conditions = self.dataset.conditions
        self._binary_codes = tuple(evidence.code for evidence in self.dataset.binary_evidences)
        self._holders = {
            code: frozenset(i for i, condition in enumerate(self._conditions) if code in condition.evidences)
            for code in self._binary_codes
        }
        self._exact_names, self._name_entries = self._build_name_index()

    # ----- prompts -------------------------------------------------------------------------

    def host_system_prompt(self) -> str:
        names = "\n".join(f"- {name}" for name in self.dataset.condition_names)
        return (
            "You are playing a diagnosis training game. You are the patient, or equally the "
            "attending physician who knows the patient's case, and the user is a resident.\n"
            "Before answering anything, privately choose exactly ONE condition from the list below. "
            "Keep that same condition for the whole conversation and never name it or hint at it, "
            "unless you are explicitly asked to reveal it.\n"
            "The resident asks yes/no questions about the patient's symptoms and medical history. "
            "Answer each one truthfully for the condition you chose: say yes if that symptom or "
            "history item belongs to the condition's typical presentation or risk profile, otherwise "
            "say no. Reply with yes or no only.\n\n"
            f"Conditions you may choose from:\n{names}"
        )

    def opener(self) -> str:
        return (
            "Hi! Let's play a diagnosis game. You host it: you are the patient (or the attending "
            "who holds the case) and I am the resident. Please pick one condition from your list "
            "now and keep it to yourself; don't tell me which one. I will ask yes/no questions "
            "about symptoms and medical history, and you answer each one truthfully for that "
            "condition with just yes or no. Reply that you are ready once you have chosen."
        )

    def reveal_prompt(self) -> str:
        return (
            "Let's stop the questions here. Which condition did you choose at the start? "
            "Answer with the condition name only, exactly as it appears in your list."
        )

    def confirm_prompt(self, secret: str) -> str:
        return f"Is the condition you chose {secret}? Answer only yes or no."

    def question_for(self, evidence_code: str) -> str:
        """The dataset's English question for a binary evidence (ValueError for other codes)."""
        evidence = self.dataset.evidences.get(evidence_code)
        if evidence is None or not evidence.is_binary:
            raise ValueError(f"{evidence_code!r} is not a binary DDXPlus evidence code.")
        return evidence.question_en

    def find_asked_evidence(self, message: str) -> str | None:
        """The binary evidence whose question appears verbatim in ``message`` (longest match), if any."""
        found = [code for code in self._binary_codes if self.question_for(code) in message]
        return max(found, key=lambda code: len(self.question_for(code)), default=None)

    # ----- game flow -----------------------------------------------------------------------

    def initial_state(self) -> DiagnosisState:
        return DiagnosisState()

    def observe_opening(self, state: DiagnosisState, reply: str) -> DiagnosisState:
        """Rule R gives the opening reply no public consequence, so the state is unchanged."""
        return state

    def next_move(self, state: DiagnosisState, rng: random.Random) -> tuple[str, str]:
        """Ask the unasked binary evidence that best halves the compatible conditions (seeded, exploring)."""
        if self.is_over(state):
            raise ValueError("The diagnosis game is over: no question is left to ask.")
        ranked = self.ranked_splits(state, rng)
        if rng.random() < self.explore_prob:
            levels = sorted({score for score, _ in ranked})[: self.explore_levels]
            code = rng.choice([code for score, code in ranked if score in levels])
        else:
            code = ranked[0][1]
        number = len(state.answers) + 1
        return code, f"Question {number}: {self.question_for(code)} Please answer yes or no."

    def observe_reply(self, state: DiagnosisState, move: str, reply: str) -> DiagnosisState:
        if move not in self._holders:
            raise ValueError(f"{move!r} is not a binary DDXPlus evidence code, so it cannot be a move.")
        if move in state.asked:
            raise ValueError(f"Evidence {move!r} was already asked; the player never repeats a question.")
        yes = parse_yes_no(reply)
        if yes is None:
            raise HostReplyError(f"The host's reply to question {move} holds no readable yes or no: {reply[:120]!r}.")
        return state.with_answer(move, yes)

    def is_over(self, state: DiagnosisState) -> bool:
        """Over after ``max_questions`` or when no unasked evidence splits the compatible conditions."""
        return len(state.answers) >= self.max_questions or not self._splitting_codes(state)

    # ----- hypothesis space ----------------------------------------------------------------

    def compatible_conditions(self, state: DiagnosisState) -> tuple[Condition, ...]:
        """Conditions consistent with every answer so far, in file order."""
        return tuple(c for c in self._conditions if is_consistent(c, state.answers))

    def ranked_splits(self, state: DiagnosisState, rng: random.Random) -> list[tuple[int, str]]:
        """(imbalance, code) for every unasked splitting evidence, best first, ties in seeded order.

        ``imbalance`` is ``|yes - no|`` over the compatible conditions (0 or 1 is a perfect halving).
        """
        compatible = self._compatible_indices(state)
        scored = [(abs(2 * len(self._holders[code] & compatible) - len(compatible)), code)
                  for code in self._splitting_codes(state)]
        tiebreak = {code: rng.random() for _, code in scored}
        return sorted(scored, key=lambda item: (item[0], tiebreak[item[1]]))

    def _compatible_indices(self, state: DiagnosisState) -> frozenset[int]:
        return frozenset(i for i, c in enumerate(self._conditions) if is_consistent(c, state.answers))

    def _splitting_codes(self, state: DiagnosisState) -> list[str]:
        compatible = self._compatible_indices(state)
        asked = set(state.asked)  # an answered code never splits the compatible set; explicit all the same
        return [code for code in self._binary_codes
                if code not in asked and 0 < len(self._holders[code] & compatible) < len(compatible)]

    # ----- secrets and the fork ------------------------------------------------------------

    def is_compatible(self, state: DiagnosisState, secret: str) -> bool:
        """Dataset conditions: rule R against every answer. Other names cannot be refuted by R.

        A name outside DDXPlus has no evidence list, so no answer contradicts it; it counts as
        compatible (blank text does not). Callers offering such names must mark them as
        model-proposed, as the protocol does for candidates with ``source="model"``.
        """
        canonical = self._resolve(secret)
        if canonical is None:
            return bool(_name_key(secret))
        return is_consistent(self.dataset.condition(canonical), state.answers)

    def is_dataset_condition(self, secret: str) -> bool:
        """Whether ``secret`` names one of the DDXPlus conditions (after normalisation)."""
        return self._resolve(secret) is not None

    def compatible_secrets(self, state: DiagnosisState, rng: random.Random, limit: int) -> list[str]:
        """Up to ``limit`` distinct compatible condition names in a seeded order."""
        if limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}.")
        names = [condition.name for condition in self.compatible_conditions(state)]
        rng.shuffle(names)
        return names[:limit]

    def parse_reveal(self, reply: str) -> str | None:
        """The dataset condition named by a reveal reply, or None when it names none or several."""
        return self._resolve(split_reasoning(reply)[0])

    def normalise(self, secret: str) -> str:
        """The dataset's English name when ``secret`` names a condition, else its case-folded key."""
        canonical = self._resolve(secret)
        return canonical if canonical is not None else _name_key(secret)

    def public_constraints(self, state: DiagnosisState) -> dict[str, Any]:
        compatible = [condition.name for condition in self.compatible_conditions(state)]
        return {
            "answers": [
                {"evidence": code, "question": self.question_for(code), "answer": "yes" if yes else "no"}
                for code, yes in state.answers
            ],
            "present_evidences": [code for code, yes in state.answers if yes],
            "absent_evidences": [code for code, yes in state.answers if not yes],
            "n_compatible": len(compatible),
            "compatible_conditions": compatible,
        }

    # ----- name matching -------------------------------------------------------------------

    def _build_name_index(self) -> tuple[dict[str, str], list[tuple[str, str, bool]]]:
        """Exact-match table and (key, canonical, is_official_name) entries for containment."""
        entries: list[tuple[str, str, bool]] = []
        for condition in self._conditions:
            for text in (condition.name, condition.name_fr):
                if _name_key(text):
                    entries.append((_name_key(text), condition.name, True))
        for alias, canonical in NAME_ALIASES.items():
            self.dataset.condition(canonical)  # fail loudly if the alias table drifts from the data
            entries.append((_name_key(alias), canonical, False))
        owners: dict[str, set[str]] = {}
        for key, canonical, _ in entries:
            owners.setdefault(key, set()).add(canonical)
        exact = {key: next(iter(names)) for key, names in owners.items() if len(names) == 1}
        return exact, entries

    def _resolve(self, text: str) -> str | None:
        """Exact name match, else a unique name contained in the text, else a unique name containing it."""
        key = _name_key(text)
        if not key:
            return None
        if key in self._exact_names:
            return self._exact_names[key]
        spans: list[tuple[int, int, str]] = []
        for entry_key, canonical, _ in self._name_entries:
            start = _contains_tokens(key, entry_key)
            if start >= 0:
                spans.append((start, start + len(entry_key), canonical))
        # A name found inside a longer found name (e.g. an alias inside an official name) yields.
        outer = {c for s, e, c in spans
                 if not any(s2 <= s and e <= e2 and (e2 - s2) > (e - s) for s2, e2, _ in spans)}
        if len(outer) == 1:
            return next(iter(outer))
        if outer or len(key) < _MIN_FRAGMENT_CHARS:
            return None
        containing = {canonical for entry_key, canonical, official in self._name_entries
                      if official and _contains_tokens(entry_key, key) >= 0}
        return next(iter(containing)) if len(containing) == 1 else None
