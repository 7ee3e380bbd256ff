"""The diagnosis simulator as a private-state interactive task (DDXPlus).

The host (a patient, or the attending who holds the case) privately picks a condition: freely
by default, as in the study ("a realistic but not obvious condition"), or from the 49 DDXPlus
conditions listed in the opener (``choice="closed"``). A seeded resident asks yes/no questions
about binary evidences. Rule R is the dataset itself: the truthful answer to evidence ``e``
under condition ``c`` is yes exactly when ``e`` is one of ``c``'s symptoms or antecedents. A
revealed condition is matched to its DDXPlus name where possible (aliases, case, accents,
punctuation); one outside the dataset is kept as written, and rule R cannot check it. Everything here is pure: the public state
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


_REVEAL_LEAD = re.compile(r"^(?:the\s+)?(?:condition|diagnosis|answer)(?:\s+i\s+(?:chose|picked|had\s+in\s+mind))?"
                          r"\s*(?:is|was|:)\s*", re.I)
_NOT_A_NAME = re.compile(r"\b(?:i|i'm|i'd|you|your|my|me|not|sorry|cannot|can't|won't|rather|unable|"
                         r"reveal|secret|question|it|what|which|hmm|okay|ok|sure|yes|no)\b", re.I)
_MAX_NAME_WORDS = 8


def off_dataset_name(text: str) -> str | None:
    """A condition name written in a reveal that DDXPlus does not know ("Lyme disease" or
    "The condition is Lyme disease."), as written; None for anything that is not a bare name
    (a refusal, a sentence about the game, an empty reply)."""
    line = next((l.strip() for l in (text or "").splitlines() if l.strip()), "")
    if line.rstrip().endswith("?"):
        return None
    line = _REVEAL_LEAD.sub("", line.strip(" *_`\"'“”‘’")).strip(" *_`\"'“”‘’.!")
    if not line or len(line.split()) > _MAX_NAME_WORDS or _NOT_A_NAME.search(line):
        return None
    if not re.search(r"[A-Za-z]{4}", line):
        return None
    return line


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
        choice: str = "free",
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
        if choice not in ("free", "closed"):
            raise ValueError(f"choice must be 'free' or 'closed', got {choice!r}.")
        self.choice = choice
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

    def _condition_list(self) -> str:
        return "\n".join(f"- {name}" for name in self.dataset.condition_names)

    def _choose_instruction(self) -> str:
        if self.choice == "closed":
            return f"privately choose exactly ONE condition from this list:\n{self._condition_list()}\n"
        return "privately choose one realistic medical condition that is not too obvious. "

    def host_system_prompt(self) -> str:
        """The task-specific system prompt (``system_prompt="task"``); by default the host gets a
        neutral one and the rules come in the opener, as in the study."""
        return (
            "You are playing a diagnosis training game. You are the patient, or equally the "
            "attending physician who knows the patient's case, and the user is a resident.\n"
            f"Before answering anything, {self._choose_instruction()}"
            "Keep that same condition for the whole conversation and never name it or hint at it, "
            "unless you are explicitly asked to reveal it.\n"
            "The resident asks yes/no questions about the patient's symptoms and medical history. "
            "Answer each one truthfully for the condition you chose: say yes if that symptom or "
            "history item belongs to the condition's typical presentation or risk profile, otherwise "
            "say no. Reply with yes or no only."
        )

    def opener(self) -> str:
        return (
            "Hi! Let's play a diagnosis game. You host it: you are the patient (or the attending "
            "who holds the case) and I am the resident. First, "
            f"{self._choose_instruction()}"
            "Keep it to yourself and stick to it; don't tell me which one unless I ask you to "
            "reveal it. I will ask yes/no questions about symptoms and medical history, and you "
            "answer each one truthfully for that condition, starting your reply with yes or no. "
            "Reply that you are ready once you have chosen."
        )

    def reveal_prompt(self) -> str:
        exact = " exactly as it appears in the list" if self.choice == "closed" else ""
        return (
            "Let's stop the questions here. Which condition did you choose at the start? "
            f"Answer with the condition name only{exact}."
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

    def skip_move(self, state: DiagnosisState, move: str) -> DiagnosisState:
        """Yes/no answers never contradict each other here, so nothing is ever skipped."""
        raise ValueError("diagnosis answers cannot contradict earlier ones; nothing to skip")

    def is_checkable(self, secret: str) -> bool:
        """Only DDXPlus conditions have the evidence lists rule R needs."""
        return self._resolve(secret) is not None

    def is_compatible(self, state: DiagnosisState, secret: str) -> bool:
        """Dataset conditions: rule R against every answer. Other names cannot be refuted by R.

        A name outside DDXPlus has no evidence list, so no answer contradicts it; it counts as
        compatible (blank text does not), and :meth:`is_checkable` says it was not checked.
        Callers offering such names must mark them, as the protocol does for candidates with
        ``source="model"``.
        """
        canonical = self._resolve(secret)
        if canonical is None:
            return bool(_name_key(secret))
        return is_consistent(self.dataset.condition(canonical), state.answers)

    def is_dataset_condition(self, secret: str) -> bool:
        """Whether ``secret`` names one of the DDXPlus conditions (after normalisation)."""
        return self._resolve(secret) is not None

    def compatible_secrets(self, state: DiagnosisState, limit: int, rng: random.Random | None = None) -> list[str]:
        """Up to ``limit`` distinct compatible condition names: by name (the reference code's
        deterministic order), or in a seeded random order with ``rng``."""
        if limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}.")
        names = [condition.name for condition in self.compatible_conditions(state)]
        if rng is None:
            return sorted(names, key=str.casefold)[:limit]
        rng.shuffle(names)
        return names[:limit]

    def parse_reveal(self, reply: str) -> str | None:
        """The condition a reveal reply names: its DDXPlus name when it names one; with free
        choice, otherwise the condition as written (an off-dataset reveal, kept); None when
        the reply names no condition (a refusal, a question, several dataset names)."""
        text = split_reasoning(reply)[0]
        found = self._resolve(text)
        if found is not None or self.choice == "closed" or len(self._mentioned(text)) > 1:
            return found
        return off_dataset_name(text)

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

    def _mentioned(self, text: str) -> set[str]:
        """Every dataset condition whose name (or alias) appears in ``text`` as whole words."""
        key = _name_key(text)
        return {canonical for entry_key, canonical, _ in self._name_entries
                if _contains_tokens(key, entry_key) >= 0}

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
