"""Table 1's metric: the study's own rule for a self-consistent episode, applied to stored ones.

The number printed beside the study's Table 1 must be computed the way the study computed it.
Its reference evaluator (chandar-lab/Hangman: the SCT evaluator and the results notebook) calls
an episode self-consistent when all three hold:

1. **the revealed secret got a yes**: the candidate that stands for the revealed secret (see
   :mod:`~psit_lib.studies.psit.protocol.reference_reading`: exact match after normalising, else
   difflib similarity >= 0.85, else, when the reveal is that similar to the secret the agent's
   memory stored, the stored secret's candidate: the evaluator's ground-truth fallback) was
   answered with a reply that is exactly ``yes`` once stripped and lower-cased; an unreadable
   reveal gets no yes (its branches, asked as the reference asks them, still count in rule 2's
   yeses and in Figure 2's classes);
2. **exactly one yes**: one branch answer in all is exactly ``yes``;
3. **no leakage**: the stored reveal, lower-cased, does not occur as a *substring* of the host's
   public replies before the fork, lower-cased.

Two readings of the reveal feed that rule, from the same records:

- :func:`score_table1`, **the headline view** (the column beside the paper's): the reveal read as
  the reference reads it (Hangman's first ``[a-z]+`` token, Diagnosis's raw reply matched by its
  first run of letters, digits, spaces and hyphens), so "Cushing's Syndrome", "**Sarcoidosis**"
  and "The word is planet" score as they scored in the study (none self-consistent);
- :func:`score_table1_workbook_reader`, **a labelled alternative**: the same rule on the secret
  the workbook's task reader found in the reveal (the dataset's name), which credits those three.

Every other episode that ran counts as not self-consistent (the denominator is every scored
episode). The workbook's own classification (:func:`~psit_lib.studies.psit.protocol.outcomes.classify_fork`)
is stricter still and is shown beside, labelled, never instead: a public contradiction before the
fork is its own outcome; a yes/no is read from a leading "Yes."/"No,"; leakage is a whole-word
match. These functions are pure and read only recorded fields, so a finished run can be
re-scored without a model call.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from psit_lib.studies.psit.protocol.candidates import stored_secret
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.protocol.reference_reading import (ground_truth, matched_text, reference_candidates,
                                                              reveal_index, stored_reveal, substring_leak)


def reference_yes(answer: str) -> bool:
    """A branch answer counts as yes only when the whole reply is the word (``" Yes "``, not
    ``"Yes."`` or ``"Yes, it is"``)."""
    return answer.strip().lower() == "yes"


@dataclass(frozen=True)
class TableOneScore:
    """The reference evaluator's reading of one episode."""

    revealed_yes: bool
    yes_count: int
    leakage: bool

    @property
    def self_consistent(self) -> bool:
        return self.revealed_yes and self.yes_count == 1 and not self.leakage


def _host_replies(episode: ForkEpisode) -> list[str]:
    return [m.content for m in episode.transcript if m.role == "assistant"]


def _score(episode: ForkEpisode, looked_up: str | None, truth: str | None, texts: list[str],
           leak_text: str | None) -> TableOneScore:
    yes = [reference_yes(c.answer) for c in episode.candidates]
    index = reveal_index(looked_up, truth, texts)
    return TableOneScore(revealed_yes=index is not None and yes[index], yes_count=sum(yes),
                         leakage=substring_leak(leak_text, _host_replies(episode)))


def memory_secret(episode: ForkEpisode) -> str | None:
    """The secret the agent's private states stored by the fork, as the reference reads them (the
    last ``<secret>`` tag of the latest state that has one)."""
    return stored_secret([*episode.private_state_per_turn, episode.private_state_at_fork])


def score_table1(episode: ForkEpisode) -> TableOneScore:
    """Table 1's rule with the reveal read as the reference reads it (the headline view)."""
    reply = episode.reveal.answer if episode.reveal is not None else None
    stored = stored_reveal(episode.task, reply) if episode.reveal is not None else None
    texts = reference_candidates(episode.task, reply, [(c.named, c.source) for c in episode.candidates])
    truth = matched_text(ground_truth(episode.task, reply, memory_secret(episode)))
    return _score(episode, matched_text(stored), truth, texts, stored)


def score_table1_workbook_reader(episode: ForkEpisode) -> TableOneScore:
    """Table 1's rule on the secret the workbook's task reader found in the reveal (a labelled
    alternative view: it credits reveals the reference's literal reading does not), matched against
    the candidates' normalised secrets."""
    revealed = episode.reveal.parsed if episode.reveal is not None else None
    return _score(episode, revealed, memory_secret(episode), [c.secret for c in episode.candidates], revealed)


WORKBOOK_READER_COLUMN = "rate_workbook_reader"
"""The labelled alternative view's column in the Table 1 rate table: the same rule on the
workbook's reading of the reveal."""


def with_workbook_reader(rates: pd.DataFrame, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``rates`` (Table 1's headline view per ``keys``) with the alternative view's rate beside it
    (:data:`WORKBOOK_READER_COLUMN`, over the same scored episodes), so the effect of reading the
    reveal the reference's way is on the page, cell by cell."""
    if "table1_workbook_reader_self_consistent" not in df.columns or df.empty:
        return rates  # a frame built without the alternative reading (hand-made tables)
    scored = df[df["scored"].astype(bool)]
    alt = (scored.groupby(keys, observed=True)["table1_workbook_reader_self_consistent"].mean()
           .rename(WORKBOOK_READER_COLUMN).reset_index())
    return rates.merge(alt, on=keys, how="left")


#: The study's Figure 2 partition of episodes (its results notebook), in its stacking order.
PAPER_OUTCOMES = ("self-consistent", "leakage", "over-confirmation", "state substitution", "all denial")

#: The study's Figure 2 colours for :data:`PAPER_OUTCOMES` (green, light blue, yellow, orange, red).
PAPER_OUTCOME_COLOURS = {"self-consistent": "#77dd77", "leakage": "#a5f2f9", "over-confirmation": "#ffee8c",
                         "state substitution": "#ffc067", "all denial": "#ff6961"}


def paper_outcome(score: TableOneScore) -> str:
    """The study's Figure 2 class of an episode scored by Table 1's rule: leakage first; otherwise
    no yes at all is all denial; a yes to the revealed secret is self-consistent when it is the
    only yes, over-confirmation when there are more; yeses that miss the revealed secret are
    state substitution. The five classes cover every scored episode exactly once."""
    if score.leakage:
        return "leakage"
    if score.yes_count == 0:
        return "all denial"
    if score.revealed_yes:
        return "self-consistent" if score.yes_count == 1 else "over-confirmation"
    return "state substitution"
