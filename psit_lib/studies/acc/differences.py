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
               "'What decides this result'. The paper's model is not named in the workbench's sources, so its claims "
               "illustrate the protocol (no verdict) unless PSIT_PAPER_MODELS names the run's model (served-name=ACC).",
        notebooks=NB),
    Difference(
        point="Scale",
        study="600 live evaluations (3 domains x 200 scenarios), 50 turns each: 30,000 turns.",
        here="One scenario per domain (the paper's three) and 10 turns by default; "
             "notebooks/params/study_scale.yaml sets the paper's 3 x 200 scenarios of 50 turns.",
        why="The default run must finish in minutes on two cores.",
        effect="Intervals are wide and the turn-level bootstraps are optimistic (turns of one episode are "
               "correlated); drift from forgotten rules needs long sessions to show.",
        notebooks=NB),
    Difference(
        point="Scenarios",
        study="Scenarios in IT operations, cybersecurity response and healthcare operations (finance named "
              "as a further domain), weaving in the stress topics.",
        here="The paper's three domains by default, finance on demand (domains parameter); scripts generated "
             "from a seed in our own words, every stress topic written in a small set of fixed statement "
             "forms; the judge issues the scripted queries rather than writing them.",
        why="Seeded scripts let every model meet the same sessions; fixed forms let the simulated "
            "model read them from the text alone.",
        effect="A real model reads the same plain English; the simulator reads only those forms, so "
               "rephrasing a scenario changes offline results (tested).",
        notebooks=NB),
    Difference(
        point="Retrieval agent's top-k",
        study="Three agents (ACC, transcript replay, one retrieval agent) judged together by a three-way "
              "blinded judge; the paper gives top-5 in one place and top-3 in another.",
        here="One retrieval agent, top-5, by default (three answers, labelled A/B/C); retrieval_ks=[3] runs "
             "top-3 instead, and retrieval_ks=[3, 5] runs both, when the judge compares four answers at once.",
        why="The protocol (SPEC §5) takes k=5 as the retrieval default and names 3 as also studied, and the "
            "larger k gives the baseline more of its store, so ACC is not compared with a starved retrieval "
            "agent.",
        effect="On the simulator top-3 drifts more than top-5 (pooled drift 0.30 vs 0.20 when both ran at "
               "default parameters), so the default shows the retrieval baseline at its better k; with both "
               "k the judge's scores are those of a four-way comparison.",
        notebooks=NB),
    Difference(
        point="Pooled rates beside H_u and D_r",
        study="Summary rates are turn averages: H_u = mean over turns of H_t, D_r = mean over turns 2..T "
              "of D_t.",
        here="H_u and D_r as defined are the headline (summary_rates); the pooled rates (all failures "
             "over all claims or rule checks, Wilson intervals) are shown beside as the workbook's second "
             "view. Turns the judge could not score have no H_t or D_t and are left out of both (the "
             "status table counts them).",
        why="The pooled rate has a binomial interval and weighs a turn by how much it could fail.",
        effect="An addition that can order agents differently: the pooled view weighs turns by their claims "
               "or rules and drops turns with none (transcript 0.103 pooled vs H_u 0.133 at default parameters; "
               "with both retrieval agents and finance, pooled hallucination puts ACC lowest, 0.077, while its "
               "H_u, 0.100, is above the retrieval agents' 0.092); the headline is the paper's.",
        notebooks=NB),
    Difference(
        point="Outcome figure and intervals",
        study="Judge scores as mean ± std across turns (the outcome figure); no test between agents is "
              "described.",
        here="The figure shows mean ± std across turns; the table adds a bootstrap 95% interval of the mean, "
             "and readings call two agents separated only when the bootstrap 95% interval of the gap in their "
             "turn averages excludes zero.",
        why="A reading must not call a difference the run cannot tell from noise.",
        effect="None on the means and stds; readings treat turns as independent, so with few episodes they "
               "separate agents more readily than an episode-level test would.",
        notebooks=NB),
    Difference(
        point="CCS serialisation",
        study="The committed CCS is serialised in a compact token-oriented form (Figure 3), and the "
              "footprint counts that form.",
        here="The agent reads the CCS as labelled lines (render_ccs: 'Constraint: ...', 'Fact: the x is y.') "
             "and the footprint counts those; the stored CCS is re-serialised in a compact token-oriented "
             "form (compact_ccs: each field named once, records as header + rows) and as JSON in the "
             "ccs_forms table.",
        why="The simulated agent reads facts and rules in the statement forms the user wrote, which a "
            "row 'failing node,is,db-07' does not carry.",
        effect="Measured at default parameters, the compact form takes 1.12-1.14 times the tokens of the "
               "labelled lines (and about 0.9 times JSON), so the ACC footprint reported here is about "
               "11% lower than the paper's form would give; the gap to the transcript is unchanged in kind.",
        notebooks=NB),
    Difference(
        point="Retrieval and recall similarity",
        study="Retrieval over an embedding store.",
        here="Cosine over sets of content words (deterministic, no embedding model), top-k as "
             "retrieval_ks gives.",
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
        point="Sweeps of simulator assumptions",
        study="No sweep (real models).",
        here="'What decides this result' re-runs a small session (first domain) at each value of the "
             "study's swept simulator assumptions (attention window, answer length) and reports the ACC - "
             "transcript gap in drift and hallucination; this workbook's extension.",
        why="On the simulator a comparison is a result only if it survives its assumptions.",
        effect="An addition; the main tables do not use the swept runs.",
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
