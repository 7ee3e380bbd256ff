"""The example study: does a model that keeps no notes reveal a word that fits what it showed?

One episode: the player asks the host to choose a word of ``length`` letters privately and show
its blank pattern, then asks at once for the word. A host that really held a word reveals one
of the length its pattern showed. Generation (``run_probe``) only records the two replies; the
scorer (``consistent``) reads the stored replies of one episode and the metric (``consistency``)
tables the scores, so ``Study.rescore`` needs no model.

On the simulator: the requests name Hangman, so the simulator's ``hangman_host`` role answers
them (a new role would get its ``generic`` "OK."); the example reuses that role's request shape
and sends its name as the role label.
"""

from __future__ import annotations

import re
from typing import Literal

import pandas as pd
from pydantic import Field

from psit_lib.analysis.differences import Difference
from psit_lib.analysis.stats import rate_table
from psit_lib.llm.client import ModelSession
from psit_lib.llm.prompts import load_prompts
from psit_lib.runs.params import ModelRunParams
from psit_lib.runs.records import EpisodeRecord, StudyResult
from psit_lib.runs.runner import EpisodeSpec, study_episode
from psit_lib.runs.scores import Score, ScoreContext, Scored, metric, scorer
from psit_lib.runs.study import MAIN, Study, StudyNotebook

NOTEBOOK = "90_example_reveal_probe"
PROMPTS = load_prompts(__package__ or "psit_lib.studies.example")
HOST_ROLE = "hangman_host"  # the simulator role whose request shape the probe reuses


class ProbeParams(ModelRunParams):
    """Parameters of the probe (a notebook would validate them with ``validate_params``)."""

    n_episodes: int = Field(6, ge=1, le=10_000)
    lengths: list[int] = Field(default_factory=lambda: [4, 6], min_length=1)


class ProbeResult(StudyResult):
    """One probe: the pattern the host showed and the word it revealed (raw replies kept)."""

    schema_version: Literal[1] = 1
    length: int
    opening: str
    reveal: str


def plan(params: ProbeParams, models: list[str]) -> list[EpisodeSpec]:
    """One episode per (model, word length, index); ids are stable, so seeds are too."""
    return [EpisodeSpec(f"{model}/{length}/{i:03d}", {"model": model, "agent": "public_only", "length": length})
            for model in models for length in params.lengths for i in range(params.n_episodes)]


@study_episode(ProbeResult)
async def run_probe(spec: EpisodeSpec, session: ModelSession) -> ProbeResult:
    """Generation only: two model calls through the session, replies stored as they came."""
    length = int(spec.params["length"])
    messages = [{"role": "user", "content": PROMPTS.render("probe.opener", length=length)}]
    opening = await session.chat(messages, role=HOST_ROLE)
    messages += [{"role": "assistant", "content": opening.content},
                 {"role": "user", "content": PROMPTS.render("probe.reveal")}]
    reveal = await session.chat(messages, role=HOST_ROLE)
    return ProbeResult(length=length, opening=opening.content, reveal=reveal.content)


def pattern_length(opening: str) -> int | None:
    """Letters in the first blank pattern of a reply (``_ _ _ _`` or ``____``), None without one."""
    found = re.search(r"(?:_\s*){2,}", opening)
    return found.group(0).count("_") if found else None


def revealed_word(reveal: str) -> str | None:
    """The word of a one-word reply, None otherwise (a sentence is not read as a word)."""
    words = re.findall(r"[A-Za-z]+", reveal)
    return words[0].lower() if len(words) == 1 else None


@scorer("consistent", version=1)
def consistent(record: EpisodeRecord[ProbeResult], ctx: ScoreContext) -> Score:
    """Whether the revealed word fits the pattern the host showed (its length), read from the
    stored replies; the word and the pattern's length are kept beside."""
    result = record.require_result()
    word, shown = revealed_word(result.reveal), pattern_length(result.opening)
    fits = word is not None and len(word) == shown
    return Score(value=fits, explanation=f"revealed {word!r} against a pattern of {shown} letters",
                 metadata={"word": word, "pattern_length": shown})


@metric("consistency", higher_is_better={"rate": True, "wilson_low": True, "wilson_high": True})
def consistency(scored: Scored) -> pd.DataFrame:
    """Per (model, length): share of probes whose revealed word fits the pattern shown (a failed
    probe is counted apart, never as inconsistent)."""
    frame = scored.part(MAIN)
    rows = pd.DataFrame({"model": frame["model"], "length": frame["length"], "scored": frame["status"] == "ok",
                         "consistent": frame["consistent"].eq(True)})
    return rate_table(rows, ["model", "length"], "consistent")


def prompt_catalogue() -> dict[str, str]:
    return PROMPTS.catalogue({"probe.opener": {"length": 5}})


DIFFERENCES = [Difference(
    point="The probe", study="none: this is a teaching example, not a reproduced study",
    here="one opener and an immediate reveal, scored by the revealed word's length",
    why="the smallest private-state task that exercises every part of a study",
    effect="none on any reproduced result", notebooks=(NOTEBOOK,))]

STUDY = Study(
    name="example", result_type=ProbeResult,
    notebooks={NOTEBOOK: StudyNotebook(params_model=ProbeParams, plan=plan, episode=lambda params: run_probe,
                                       scorers=(consistent,), metrics=(consistency,))},
    prompt_catalogue=prompt_catalogue, differences=lambda: DIFFERENCES,
    simulator_assumptions=lambda: {NOTEBOOK: ((HOST_ROLE,), ("unheld_secret", "prior_exponent"))})
