"""The diagnosis simulator (DDXPlus) as a PSIT: the host picks a condition freely, as in the study,
or from the 49 listed (``choice="closed"``). Rule R is the dataset: yes iff the evidence is one of the
condition's; the player only asks splitting questions, so some condition always stays compatible.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from psit_lib.llm.non_answers import FUNCTION_WORDS, Reading, reply_non_answer, word_non_answer
from psit_lib.llm.reply_readers import read_yes_no, strip_template_debris
from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.tasks.base import HostReplyError, readable_text
from psit_lib.studies.psit.tasks.diagnosis_data import DDXPlus, Condition, load_ddxplus


# Our own additions: other names of the dataset's conditions (common English names, expansions
# of its abbreviations, British spellings, names its French labels give), so a reveal such as
# "Laryngospasm" or "Systemic lupus erythematosus" maps to the dataset entry.
NAME_ALIASES: dict[str, str] = {
    "laryngospasm": "Larygospasm",
    "gastroesophageal reflux": "GERD",
    "gastro oesophageal reflux": "GERD",
    "gastro esophageal reflux": "GERD",
    "gastroesophageal reflux disease": "GERD",
    "gastro oesophageal reflux disease": "GERD",
    "gord": "GERD",
    "systemic lupus erythematosus": "SLE",
    "lupus": "SLE",
    "upper respiratory tract infection": "URTI",
    "upper respiratory infection": "URTI",
    "common cold": "URTI",
    "paroxysmal supraventricular tachycardia": "PSVT",
    "myocardial infarction": "Possible NSTEMI / STEMI",
    "heart attack": "Possible NSTEMI / STEMI",
    "nstemi": "Possible NSTEMI / STEMI",
    "stemi": "Possible NSTEMI / STEMI",
    "esophageal rupture": "Boerhaave",
    "oesophageal rupture": "Boerhaave",
    "boerhaave syndrome": "Boerhaave",
    "boerhaave's syndrome": "Boerhaave",
    "acute hiv infection": "HIV (initial infection)",
    "primary hiv infection": "HIV (initial infection)",
    "acute retroviral syndrome": "HIV (initial infection)",
    "flu": "Influenza",
    "lung cancer": "Pulmonary neoplasm",
    "pancreatic cancer": "Pancreatic neoplasm",
    "pertussis": "Whooping cough",
    "atrial flutter": "Atrial fibrillation",  # the French label names both
    "allergic rhinitis": "Allergic sinusitis",
    "hay fever": "Allergic sinusitis",
    "bronchospasm": "Bronchospasm / acute asthma exacerbation",
    "acute asthma exacerbation": "Bronchospasm / acute asthma exacerbation",
    "asthma exacerbation": "Bronchospasm / acute asthma exacerbation",
    "acute exacerbation of asthma": "Bronchospasm / acute asthma exacerbation",
    "asthma attack": "Bronchospasm / acute asthma exacerbation",
    "acute asthma": "Bronchospasm / acute asthma exacerbation",
    "acute copd exacerbation": "Acute COPD exacerbation / infection",
    "copd exacerbation": "Acute COPD exacerbation / infection",
    "acute exacerbation of copd": "Acute COPD exacerbation / infection",
    "laryngotracheobronchitis": "Croup",
    "guillain barre": "Guillain-Barré syndrome",
    "chagas disease": "Chagas",
    "ebola virus disease": "Ebola",
    "scombroid poisoning": "Scombroid food poisoning",
    "acute dystonic reaction": "Acute dystonic reactions",
    "anaemia": "Anemia",
    "localised edema": "Localized edema",
    "localized oedema": "Localized edema",
    "localised oedema": "Localized edema",
    "acute pulmonary oedema": "Acute pulmonary edema",
}
"""An alias is a synonym, never a broader name ("asthma", "HIV", "pneumothorax" are not aliases):
a broader name would check the reveal against a condition the model never named; it stays off-dataset."""


_REVEAL_LEAD = re.compile(r"^(?:(?:the|my)\s+)?(?:condition|diagnosis|answer)"
                          r"(?:\s+(?:that\s+)?i\s+(?:chose|picked|selected|had\s+in\s+mind))?\s*(?:is|was|:)\s*"
                          r"|^i\s+(?:chose|picked|selected)\s+", re.I)
_NOT_A_NAME = re.compile(r"\b(?:i|i'm|i'd|you|your|my|me|not|sorry|cannot|can't|won't|rather|unable|"
                         r"reveal|secret|question|it|what|which|hmm|okay|ok|sure|yes|no|"
                         r"choose|chose|chosen|pick|picked|select|selected|decide|decided|"
                         r"condition|diagnosis|answer)\b", re.I)
"""Words that make a phrase a sentence about the game ("to choose the condition Premature
ejaculation (PE)"), a refusal or a yes/no, never a condition's name."""
_MARKUP = re.compile(r"[*_`#\"\u201c\u201d]")
_EDGE = " '\u2018\u2019.!"
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_MAX_NAME_WORDS = 8


def stated_phrase(sentence: str) -> str:
    """What one sentence of a reveal states as the condition: markdown and quotes removed, and
    a reveal lead ("The condition I chose is", "Diagnosis:", "I picked") cut off."""
    plain = _MARKUP.sub("", sentence).strip(_EDGE)
    return _REVEAL_LEAD.sub("", plain).strip(_EDGE)


def stated_phrases(text: str) -> list[str]:
    """The phrase each sentence (or line) of a reveal states (see :func:`stated_phrase`)."""
    return [phrase for part in _SENTENCE_BREAK.split(text or "") if (phrase := stated_phrase(part))]


def off_dataset_name(text: str) -> str | None:
    """A condition name written in a reveal that DDXPlus does not know ("Lyme disease" or
    "The condition is Lyme disease."), as written; None for anything that is not a bare name
    (a refusal, a sentence about the game, an empty reply, chat-template debris)."""
    text = strip_template_debris(text)
    line = next((l.strip() for l in text.splitlines() if l.strip()), "")
    if line.rstrip().endswith("?"):
        return None
    line = stated_phrase(line)
    if not line or len(line.split()) > _MAX_NAME_WORDS or _NOT_A_NAME.search(line):
        return None
    if not re.search(r"[A-Za-z]{4}|[A-Z]{3}", line):  # a word, or an abbreviation such as "HIV"
        return None
    return line if _looks_like_a_name(line) else None


def _function_words_only(text: str) -> str | None:
    """Why a reveal whose stated phrase is nothing but function words ("Yes.", "Answer: about",
    "the") names no condition, or None."""
    line = next((l.strip() for l in text.splitlines() if l.strip()), "")
    words = re.findall(r"[A-Za-z']+", stated_phrase(line))
    if not words or any(word.lower() not in FUNCTION_WORDS for word in words):
        return None
    return word_non_answer(words[0], in_sentence=True) if len(words) == 1 else "only function words, no name"


_NAME_TOKEN = re.compile(r"^[(\[]?[A-Za-zÀ-ÿ][\w'’\-/.]*[)\],;:]?$")


def _looks_like_a_name(phrase: str) -> bool:
    """Whether a phrase has a name's form (word tokens, none twice): a broken model's word salad
    ("teapot seventeen teapot ipsum") is then unreadable, not a secret nobody chose."""
    tokens = phrase.split()
    words = [t.strip("()[],;:.").casefold() for t in tokens]
    return all(_NAME_TOKEN.match(t) for t in tokens) and len(set(words)) == len(words)


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
    unanswered: tuple[str, ...] = ()
    """Questions asked whose reply held no readable yes or no: asked, nothing learned."""

    def __post_init__(self) -> None:
        codes = [code for code, _ in self.answers] + list(self.unanswered)
        if len(codes) != len(set(codes)):
            raise ValueError(f"DiagnosisState asks an evidence code twice: {codes}.")

    @property
    def asked(self) -> tuple[str, ...]:
        """Evidence codes asked so far (answered first, then unanswered)."""
        return tuple(code for code, _ in self.answers) + self.unanswered

    def with_answer(self, code: str, yes: bool) -> DiagnosisState:
        """A new state with one more answered question."""
        return DiagnosisState(self.answers + ((code, yes),), self.unanswered)


def _name_key(text: str) -> str:
    """Accent-, case- and punctuation-insensitive form of a name, tokens joined by single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_only = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^0-9a-z]+", " ", ascii_only.casefold()).split())


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

    def condition_list(self) -> str:
        """The dataset's conditions, one ``- name`` line each (the closed choice's list)."""
        return "\n".join(f"- {name}" for name in self.dataset.condition_names)

    def _prompt(self, name: str) -> str:
        """Template ``diagnosis.<name>``; the closed choice's variant gets the condition list."""
        if self.choice == "closed":
            return PROMPTS.render(f"diagnosis.{name}_closed_list", conditions=self.condition_list())
        return PROMPTS.render(f"diagnosis.{name}")

    def host_system_prompt(self) -> str:
        """The task-specific system prompt (``system_prompt="task"``); by default the host gets a
        neutral one and the rules come in the opener, as in the study."""
        return self._prompt("host_system")

    def opener(self) -> str:
        return self._prompt("opener")

    def reveal_prompt(self) -> str:
        return (PROMPTS.render("diagnosis.reveal_closed_list") if self.choice == "closed"
                else PROMPTS.render("diagnosis.reveal"))

    def confirm_prompt(self, secret: str) -> str:
        return PROMPTS.render("diagnosis.confirm", secret=secret)

    def question_for(self, evidence_code: str) -> str:
        """The dataset's English question for a binary evidence (ValueError for other codes)."""
        evidence = self.dataset.evidences.get(evidence_code)
        if evidence is None or not evidence.is_binary:
            raise ValueError(f"{evidence_code!r} is not a binary DDXPlus evidence code.")
        return evidence.question_en

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
        number = len(state.asked) + 1
        return code, f"Question {number}: {self.question_for(code)} Please answer yes or no."

    def observe_reply(self, state: DiagnosisState, move: str, reply: str) -> DiagnosisState:
        if move not in self._holders:
            raise ValueError(f"{move!r} is not a binary DDXPlus evidence code, so it cannot be a move.")
        if move in state.asked:
            raise ValueError(f"Evidence {move!r} was already asked; the player never repeats a question.")
        reading = read_yes_no(readable_text(reply))
        if reading.value is None:
            raise HostReplyError(f"The host's reply to question {move} holds no readable yes or no "
                                 f"({reading.reason}): {reply[:120]!r}.")
        return state.with_answer(move, reading.value)

    def is_over(self, state: DiagnosisState) -> bool:
        """Over after ``max_questions`` or when no unasked evidence splits the compatible conditions."""
        return len(state.asked) >= self.max_questions or not self._splitting_codes(state)

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
        """The question ``move`` was asked but its reply held no readable yes or no: it counts as
        asked (never repeated) and nothing is learned from it."""
        if move in state.asked:
            raise ValueError(f"Evidence {move!r} was already asked; the player never repeats a question.")
        return DiagnosisState(state.answers, state.unanswered + (move,))

    def is_checkable(self, secret: str) -> bool:
        """Only DDXPlus conditions have the evidence lists rule R needs."""
        return self._resolve(secret) is not None

    def is_compatible(self, state: DiagnosisState, secret: str) -> bool:
        """Rule R against every answer; a name outside DDXPlus has no evidence list, so it counts as
        compatible (blank text does not) and :meth:`is_checkable` says it was not checked."""
        canonical = self._resolve(secret)
        if canonical is None:
            return bool(_name_key(secret))
        return is_consistent(self.dataset.condition(canonical), state.answers)

    def compatible_secrets(self, state: DiagnosisState, limit: int, rng: random.Random | None = None) -> list[str]:
        """Up to ``limit`` distinct compatible condition names in the reference code's deterministic
        order (the dataset's order when at most ``limit`` fit, else the first ``limit`` by name as
        Python sorts text, capitals first: "PSVT" before "Pancreatic neoplasm"), or in a seeded random
        order with ``rng``."""
        if limit < 0:
            raise ValueError(f"limit must be non-negative, got {limit}.")
        names = [condition.name for condition in self.compatible_conditions(state)]
        if rng is None:
            return names if len(names) <= limit else sorted(names)[:limit]
        rng.shuffle(names)
        return names[:limit]

    def read_reveal(self, reply: str) -> Reading[str]:
        """The condition a reveal names, as the reply writes it (markup and a lead such as "The
        condition I chose is" removed): a DDXPlus name or alias stated in full (:meth:`normalise`
        gives the dataset's name), else (free choice) any name, kept unchecked; never matched by
        containment ("Cough" is not "Whooping cough")."""
        text = readable_text(reply)
        if not text:
            return Reading(None, "an empty reply")
        if reason := reply_non_answer(text):
            return Reading(None, reason)
        mentioned = self._mentioned(text)
        if len(mentioned) > 1:
            return Reading(None, f"mentions several conditions ({', '.join(sorted(mentioned))})")
        named: dict[str, str] = {}  # condition -> the first phrase that names it
        for phrase in stated_phrases(text):
            if (found := self._resolve(phrase)) is not None:
                named.setdefault(found, phrase)
        if len(named) == 1:
            return Reading(next(iter(named.values())))
        if named:
            return Reading(None, "names several conditions")
        if self.choice == "closed":
            return Reading(None, "names no DDXPlus condition (closed choice)")
        if (words := _function_words_only(text)) is not None:
            return Reading(None, words)
        name = off_dataset_name(text)
        return Reading(name) if name else Reading(None, "names no condition")

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
            # questions whose reply could not be read (asked, nothing learned); only when there are some
            **({"unanswered_evidences": list(state.unanswered)} if state.unanswered else {}),
        }

    # ----- name matching -------------------------------------------------------------------

    def _build_name_index(self) -> tuple[dict[str, str], list[tuple[str, str]]]:
        """Exact-match table (name key -> condition; a key two conditions share is left out)
        and every (name key, condition) entry, official names (English, French) and aliases."""
        entries: list[tuple[str, str]] = []
        for condition in self._conditions:
            entries += [(_name_key(text), condition.name) for text in (condition.name, condition.name_fr)
                        if _name_key(text)]
        for alias, canonical in NAME_ALIASES.items():
            self.dataset.condition(canonical)  # fail loudly if the alias table drifts from the data
            entries.append((_name_key(alias), canonical))
        owners: dict[str, set[str]] = {}
        for key, canonical in entries:
            owners.setdefault(key, set()).add(canonical)
        exact = {key: next(iter(names)) for key, names in owners.items() if len(names) == 1}
        return exact, entries

    def _mentioned(self, text: str) -> set[str]:
        """Every dataset condition whose name (or alias) appears in ``text`` as whole words. Used
        only to refuse a reply that mentions several, never to pick one."""
        key = f" {_name_key(text)} "
        return {canonical for entry_key, canonical in self._name_entries if f" {entry_key} " in key}

    def _resolve(self, text: str) -> str | None:
        """The condition ``text`` names exactly (after normalising case, accents and
        punctuation), by its English or French name or an alias; None otherwise."""
        return self._exact_names.get(_name_key(text))
