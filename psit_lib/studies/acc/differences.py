"""Where notebook 05 departs from the Agent Cognitive Compressor study (one registry entry each)."""

from __future__ import annotations

from psit_lib.analysis.differences import Difference

NB = ("05",)

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        point="Models",
        study="Real instruction-tuned models for the agents and the judge, served by an endpoint.",
        here="The simulated model by default (psit-sim); any OpenAI-compatible endpoint by configuration. "
             "The same model plays agents, compressor and judge.",
        why="No model weights and no network offline; one configured model keeps runs reproducible.",
        effect="Default numbers are the simulator's reading rules at work, not a model's; see "
               "'What decides this result'.",
        notebooks=NB),
    Difference(
        point="Scale",
        study="600 live evaluations (200 scenarios per domain), 50 turns each: 30,000 turns.",
        here="One scenario per domain and 10 turns by default; notebooks/params/study_scale.yaml sets 50 "
             "turns (and more scenarios).",
        why="The default run must finish in minutes on two cores.",
        effect="Intervals are wide and turn-level bootstraps are optimistic (turns of one episode are "
               "correlated); drift from forgotten rules needs long sessions to show.",
        notebooks=NB),
    Difference(
        point="Scenarios",
        study="Scenarios in three domains (finance optional) weaving in the stress topics.",
        here="Scripts generated from a seed in our own words, in four domains (finance included), "
             "every stress topic written in a small set of fixed statement forms; the judge issues "
             "the scripted queries rather than writing them.",
        why="Seeded scripts let every model meet the same sessions; fixed forms let the simulated "
            "model read them from the text alone.",
        effect="A real model reads the same plain English; the simulator reads only those forms, so "
               "rephrasing a scenario changes offline results (tested).",
        notebooks=NB),
    Difference(
        point="Agents judged together",
        study="Three agents (ACC, transcript replay, one retrieval agent) judged together by a three-way "
              "blinded judge; the paper gives top-5 in one place and top-3 in another.",
        here="One retrieval agent per value of retrieval_ks (default [3, 5], so four answers are judged "
             "together); retrieval_ks=[5] judges three, as the paper.",
        why="Both top-k values the paper names are measured in one run.",
        effect="The judge compares four answers at once by default, so its scores are not those of a "
               "three-way comparison; the rates of ACC and transcript replay are computed the same way.",
        notebooks=NB),
    Difference(
        point="Retrieval and recall similarity",
        study="Retrieval over an embedding store.",
        here="Cosine over sets of content words (deterministic, no embedding model), top-k for "
             "k = 3 and 5.",
        why="No embedding model can be fetched offline; lexical recall makes every retrieval explainable.",
        effect="Rules phrased unlike the question are rarely retrieved, which favours drift of the "
               "retrieval agents.",
        notebooks=NB),
    Difference(
        point="Answer length",
        study="Real models write full answers, so a replayed transcript reaches tens of thousands of "
              "tokens within 50 turns.",
        here="The simulated agent writes the asked format only; answer_elaboration_tokens (profile knob, "
             "default 0) adds explanation to every answer.",
        why="Short answers keep default runs fast; the knob reaches the long-context regime on demand.",
        effect="Whether transcript replay drifts depends on this knob together with the attention "
               "window: both are swept under 'What decides this result'.",
        notebooks=NB),
    Difference(
        point="Judge-prompt sensitivity",
        study="One judge prompt.",
        here="Every recorded turn is also re-scored under three more wordings (strict rubric, a 1-5 "
             "scale, answers in reversed order); scores are put on 0-10.",
        why="A judged comparison is only as firm as its judge's prompt.",
        effect="An addition; the main tables use the standard prompt.",
        notebooks=NB),
    Difference(
        point="What needs a real endpoint",
        study="Live judging by a capable model.",
        here="Offline, the simulated judge scores by exact claim and rule checks plus jitter.",
        why="No model offline.",
        effect="With PSIT_BACKEND=openai, PSIT_BASE_URLS and PSIT_MODEL set, the same notebook judges "
               "with the served model; nothing else changes.",
        notebooks=NB),
)
