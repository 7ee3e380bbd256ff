"""No figure of the workbook draws text over text: every figure a notebook makes, built from
small tables shaped like a run's, with one model and with four, has no two overlapping titles,
axis labels, tick labels, texts or legends (``analysis.labels.text_boxes`` / ``overlapping_text``,
the same check the browser test runs on each page's figure metadata)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.figure import Figure

from figure_overlap import overlapping_text
from psit_lib.analysis.labels import figure_panels, label_figure, text_boxes
from psit_lib.analysis.plots import AGENT_COLOURS
from psit_lib.analysis.stats import wilson_interval

LABEL = "backend=sim (simulated) · model=psit-sim · profile=default"
MODELS = ["qwen3-32b", "gpt-oss-120b", "gpt-oss-20b", "llama-3.1-8b-instruct"]
AGENTS = list(AGENT_COLOURS)  # the twelve agents of notebook 04
SCENARIOS = ["premium_bias", "quote_only_vs_book", "stale_locations"]
DOMAINS = ["cybersecurity", "healthcare_operations", "it_operations"]
RNG = np.random.default_rng(0)


def _rates(keys: list[dict], n: int = 10) -> pd.DataFrame:
    rows = []
    for key in keys:
        k = int(RNG.integers(0, n + 1))
        low, high = wilson_interval(k, n)
        rows.append({**key, "n_scored": n, "n_failed": 0, "successes": k, "rate": k / n, "wilson_low": low,
                     "wilson_high": high})
    return pd.DataFrame(rows)


def _table1(models, agents, tasks=("hangman",)) -> pd.DataFrame:
    return _rates([{"task": t, "model": m, "agent": a} for t in tasks for m in models for a in agents])


def _episodes(models, agents, tasks=("hangman",), n=6) -> pd.DataFrame:
    strict = ["self_consistent", "all_denial", "over_confirmation", "state_substitution", "leakage"]
    paper = ["self-consistent", "all denial", "over-confirmation", "state substitution", "leakage"]
    rows = [{"task": t, "model": m, "agent": a, "scored": True, "outcome": strict[i % 5], "table1_outcome": paper[i % 5]}
            for t in tasks for m in models for a in agents for i in range(n)]
    return pd.DataFrame(rows)


def _sizes(agents, turns=4, n=4, y="tokens") -> pd.DataFrame:
    return pd.DataFrame([{"agent": a, "turn": t, y: 0 if a == "vanilla" else int(RNG.integers(20, 1000))}
                         for a in agents for t in range(1, turns + 1) for _ in range(n)])


def _psit(models):
    from psit_lib.analysis.plots import plot_forest, plot_rate_by_size, plot_rate_intervals, plot_state_size
    from psit_lib.studies.psit import claims
    from psit_lib.studies.psit.figures import plot_failure_modes

    agents8 = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite", "mem0", "amem", "lightmem",
               "memoryos"]
    many = len(models) > 1
    table1 = _table1(models, agents8)
    table04 = _table1(models, AGENTS, ("hangman", "diagnosis"))
    return {
        "01 live outcomes": lambda: plot_failure_modes(_episodes(models, ["vanilla", "workflow_overwrite"]), "agent",
                                                       LABEL, facet="model" if many else None),
        "02 forest": lambda: plot_forest(claims.method_gaps(table1), LABEL),
        "02 rate by size": lambda: plot_rate_by_size(claims.rates_by_size(table1), LABEL),
        "02 self-consistency": lambda: plot_rate_intervals(
            table1, "agent", LABEL, hue="model" if many else None,
            title="Self-consistency by Table 1's rule (Wilson 95% interval)"),
        "02 failure modes": lambda: plot_failure_modes(_episodes(models, agents8), "agent", LABEL,
                                                       facet="model" if many else None),
        "02 state size": lambda: plot_state_size(_sizes(agents8), label=LABEL),
        "04 grid": lambda: plot_rate_intervals(table04, "agent", LABEL, hue="task", facet="model" if many else None,
                                               title="Self-consistency by Table 1's rule (Wilson 95% interval)"),
        "04 failure modes": lambda: plot_failure_modes(_episodes(models, AGENTS, ("hangman", "diagnosis"), 2),
                                                       "agent", LABEL, facet=["model", "task"] if many else "task"),
        "04 state size": lambda: plot_state_size(_sizes(AGENTS), label=LABEL),
    }


def _acc(models):
    from psit_lib.analysis.plots import plot_state_size
    from psit_lib.studies.acc.figures import plot_footprint_by_domain, plot_outcome, plot_rates_per_turn

    agents = ["transcript", "retrieval_k5", "acc"]
    scores = pd.DataFrame([{"agent": a, "criterion": c, "mean": RNG.uniform(6, 10), "std": RNG.uniform(0, 4)}
                           for a in agents for c in ("relevance", "answer_quality", "instruction_following",
                                                     "coherence")])
    per_turn = pd.DataFrame([{"agent": a, "domain": d, "turn": t, "hallucination": RNG.uniform(), "drift": RNG.uniform()}
                             for d in DOMAINS for a in agents for t in range(1, 11)])
    footprint = pd.DataFrame([{"domain": d, "agent": a, "mean_tokens": RNG.uniform(0, 800)} for d in DOMAINS
                              for a in agents])
    return {
        "05 judge scores": lambda: plot_outcome(scores, LABEL),
        "05 rates per turn": lambda: plot_rates_per_turn(per_turn, LABEL, facet="domain"),
        "05 footprint per turn": lambda: plot_state_size(
            _sizes(agents, 10, y="footprint_tokens"), y="footprint_tokens", label=LABEL,
            title="Memory footprint per turn (tokens, mean with 95% band)"),
        "05 footprint by domain": lambda: plot_footprint_by_domain(footprint, LABEL),
    }


def _basis(models):
    from psit_lib.analysis.plots import plot_rate_intervals
    from psit_lib.studies.basis.figures import plot_figure4

    systems = ["baseline", "basis"]
    measured = _rates([{"model": m, "scenario": s, "system": y} for m in models for s in SCENARIOS for y in systems])
    comparison = pd.DataFrame([{"model": m, "scenario": s, "system": y, "k": k, **{
        f"{p}{m}": RNG.uniform() for p in ("", "reference_", "study_reported_") for m in ("pass_hat_k", "pass_at_k")}}
        for m in models for s in SCENARIOS for y in systems for k in (1, 2, 5, 10)])
    pooled = pd.concat([measured.assign(source="measured"),
                        measured[measured.model == models[0]].assign(source="reference study (reported)",
                                                                     model="reference study")])
    return {
        "06 success rates": lambda: plot_rate_intervals(
            measured, "scenario", LABEL, hue="system", facet="model" if len(models) > 1 else None,
            title="Task success per scenario, main trials (Wilson 95% interval)", ylabel="success rate"),
        "06 figure 4": lambda: plot_figure4(comparison, label=LABEL, pooled=pooled),
    }


def _secrets(models):
    from psit_lib.studies.psit.figures import plot_entropy_vs_temperature
    from psit_lib.studies.psit.secrets import secret_summary
    from psit_lib.studies.psit.protocol.appendix_e import plot_top_secrets, top_secrets

    words = ["Panic attack", "Pulmonary neoplasm", "Acute rhinosinusitis", "Scombroid food poisoning", "GERD", "apple",
             "planet", "river"]
    df = pd.DataFrame([{"task": t, "model": m, "agent": "vanilla", "temperature": temp, "secret": RNG.choice(words)}
                       for t in ("hangman", "diagnosis") for m in models for temp in (0.1, 0.3, 0.7, 1.0, 1.5)
                       for _ in range(12)])
    return {
        "07 top secrets": lambda: plot_top_secrets(top_secrets(df[df.temperature == 0.3]), label=LABEL),
        "07 entropy": lambda: plot_entropy_vs_temperature(
            secret_summary(df, ["task", "model", "temperature"], "secret", n_boot=50), label=LABEL,
            hue=["task", "model"] if len(models) > 1 else "task",
            title="Secret spread vs sampling temperature (this workbook's extension)"),
    }


def _theory():
    from psit_lib.studies.psit.figures import plot_dataset_view
    from psit_lib.studies.psit.theory.candidate_sets import simulate_set_sizes
    from psit_lib.studies.psit.theory.fork_exact import policy_table, self_consistency_points
    from psit_lib.studies.psit.theory.policies import FirstCompatiblePoca, PrivateStateAgent, ReimaginingPoca
    from psit_lib.studies.psit.theory.figures import plot_consistency_vs_size, plot_fork_diagram, plot_policy_outcomes
    from psit_lib.studies.psit.theory.figures import plot_set_sizes
    from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary
    from psit_lib.studies.psit.theory.candidate_sets import words_of_length
    from psit_lib.studies.psit.theory.figure_data import size_quantiles

    vocabulary = get_vocabulary(2000)
    counts = pd.DataFrame({"binary_evidences": RNG.integers(5, 40, 49)})
    shrink = pd.DataFrame([{"question": q, "compatible": max(1, int(49 / (q + 1) + RNG.integers(0, 5)))}
                           for q in range(8) for _ in range(20)])
    return {
        "01 fork diagram": lambda: plot_fork_diagram(t_fork=4, k=5),
        "01 set sizes": lambda: plot_set_sizes(size_quantiles(simulate_set_sizes(30, 5, seed=0, n_turns=10,
                                                                                 dictionary=vocabulary)), t_fork=4),
        "01 consistency": lambda: plot_consistency_vs_size(self_consistency_points([2, 5, 20, 100], k=5, n_episodes=50,
                                                                                   seed=0), k=5),
        "01 policies": lambda: plot_policy_outcomes(policy_table([ReimaginingPoca(), FirstCompatiblePoca(), PrivateStateAgent()], words_of_length(vocabulary, 5)[:30], k=5,
                                                                 n_episodes=50, seed=0)),
        "03 dataset view": lambda: plot_dataset_view(counts, shrink, questions_before_fork=3),
    }


def _figures(n_models: int) -> dict:
    models = MODELS[:n_models] if n_models > 1 else ["psit-sim"]
    found = {**_psit(models), **_acc(models), **_basis(models), **_secrets(models)}
    return {**found, **_theory()} if n_models == 1 else found


CASES = [(n, name) for n in (1, 2, 4) for name in _figures(n)]


@pytest.mark.parametrize(("n_models", "name"), CASES, ids=[f"{n}-models-{name}" for n, name in CASES])
def test_no_figure_draws_text_over_text(n_models, name):
    fig = _figures(n_models)[name]()
    assert not overlapping_text(text_boxes(fig)), f"{name} with {n_models} model(s): {overlapping_text(text_boxes(fig))}"
    assert all(p["labelled"] for p in figure_panels(fig)), f"{name}: {figure_panels(fig)}"
    width, height = fig.get_size_inches()
    assert width <= 11.7 and height <= 24, f"{name} is {width:.1f} x {height:.1f} in: wider than a page"


def test_the_check_catches_a_legend_on_a_title_and_colliding_tick_labels():
    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label="a line with a long name")
    ax.set_title("A title long enough to run into the legend")
    ax.legend(loc="lower left", bbox_to_anchor=(0.3, 1.0))  # on the title
    ax.set_xticks(range(4), ["workflow_append_delete"] * 4)  # side by side, unrotated: they collide
    pairs = overlapping_text(text_boxes(label_figure(fig, LABEL)))
    assert any("title" in a and "legend" in b or "legend" in a and "title" in b for a, b in pairs), pairs
    assert any(a.startswith("xtick") and b.startswith("xtick") for a, b in pairs), pairs


def test_tilted_tick_labels_are_compared_as_drawn():
    fig = Figure(figsize=(6, 3))
    ax = fig.add_subplot()
    ax.plot(range(6), range(6))
    ax.set_xticks(range(6), [f"workflow_append_delete_{i}" for i in range(6)], rotation=30, ha="right")
    boxes = text_boxes(fig)
    ticks = [b for b in boxes if b["kind"] == "xtick"]
    assert len(ticks) == 6 and not overlapping_text(boxes)  # their upright bounding boxes do overlap
    ax.set_xticks(range(6), [f"workflow_append_delete_{i}" for i in range(6)], rotation=5, ha="right")
    assert overlapping_text(text_boxes(fig))  # nearly flat, the same labels collide


square = st.tuples(st.integers(-100, 100), st.integers(-100, 100), st.integers(1, 50), st.integers(1, 50))


@given(square, square, st.integers(-200, 200), st.integers(-200, 200))
def test_overlap_is_symmetric_moves_with_the_boxes_and_matches_the_rectangles(a, b, dx, dy):
    def box(x, y, w, h, name):
        return {"kind": "text", "text": name, "corners": [[x, y], [x + w, y], [x + w, y + h], [x, y + h]]}

    one, two = box(*a, "a"), box(*b, "b")
    expected = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]) > 1 and min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]) > 1
    assert bool(overlapping_text([one, two])) == bool(overlapping_text([two, one])) == expected
    moved = [box(a[0] + dx, a[1] + dy, a[2], a[3], "a"), box(b[0] + dx, b[1] + dy, b[2], b[3], "b")]
    assert bool(overlapping_text(moved)) == expected


def test_figure_4_gives_each_model_its_own_rows_when_a_run_has_several():
    from psit_lib.studies.basis.figures import plot_figure4

    comparison = pd.DataFrame([{"model": m, "scenario": "premium_bias", "system": y, "k": k, "pass_hat_k": 0.5,
                                "pass_at_k": 0.5} for m in MODELS for y in ("baseline", "basis") for k in (1, 2, 5)])
    fig = plot_figure4(comparison, label=LABEL)
    assert len(fig.axes) == 2 * len(MODELS) and all(len(line.get_xdata()) == 3 for ax in fig.axes for line in ax.lines)
    assert [ax.get_ylabel().split("\n")[0] for ax in fig.axes[::2]] == MODELS  # one point per k: no other model's
