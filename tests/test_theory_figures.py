"""Notebook 01's figures and parameters, and the one fork-episode view.

Figures must build and carry their provenance footer ("exact computation (no model)" for theory).
"""

from __future__ import annotations


import pandas as pd
import pytest

from psit_lib.analysis.labels import figure_provenance
from psit_lib.runs.params import ParameterError, validate_params
from psit_lib.studies.psit.tasks.hangman_rules import is_compatible
from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary
from psit_lib.studies.psit.theory.candidate_sets import compatible_set, simulate_set_sizes
from psit_lib.studies.psit.theory.fork_exact import p_self_consistent_uniform, policy_table, self_consistency_points
from psit_lib.studies.psit.theory.policies import FirstCompatiblePoca, PrivateStateAgent, ReimaginingPoca
from psit_lib.studies.psit.theory.figure_data import NoExampleError, THEORY_LABEL, compatible_set_samples, fork_example, size_quantiles, theory_label, weighted_consistency_exact, weighted_consistency_points
from psit_lib.studies.psit.theory.figures import plot_consistency_vs_size, plot_fork_diagram, plot_policy_outcomes, plot_set_sizes
from psit_lib.studies.psit.theorem_params import TheoremParams

SMALL_VOCABULARY = 3000


@pytest.fixture(scope="module")
def vocabulary():
    return get_vocabulary(SMALL_VOCABULARY)


@pytest.fixture(scope="module")
def sizes(vocabulary):
    return simulate_set_sizes(40, 5, seed=3, n_turns=8, dictionary=vocabulary)


@pytest.fixture(scope="module")
def samples(sizes, vocabulary):
    return compatible_set_samples(sizes, vocabulary, max_size=120)


# --------------------------------------------------------------------------------------------
# Figures and their data
# --------------------------------------------------------------------------------------------


def test_size_quantiles_carry_finished_games_forward():
    table = pd.DataFrame({"game": [0, 0, 0, 1, 1, 1, 1], "turn": [0, 1, 2, 0, 1, 2, 3], "size": [10, 5, 1, 10, 8, 4, 2]})
    bands = size_quantiles(table, quantiles=(0.5,))
    assert bands["running"].tolist() == [2, 2, 2, 1]
    assert bands["games"].tolist() == [2, 2, 2, 2]
    assert bands["q0.5"].tolist() == [10.0, 6.5, 2.5, 1.5]  # game 0 keeps |C| = 1 at turn 3
    with pytest.raises(ValueError, match="Quantiles"):
        size_quantiles(table, quantiles=(1.5,))


def test_set_size_figure_is_labelled_and_logarithmic(sizes):
    fig = plot_set_sizes(sizes, t_fork=4)
    assert figure_provenance(fig) == THEORY_LABEL
    assert fig.axes[0].get_yscale() == "log"


def test_compatible_set_samples_are_real_distinct_sets(samples, vocabulary):
    assert samples
    assert len({s.words for s in samples}) == len(samples)
    for sample in samples[:25]:
        assert 2 <= sample.size <= 120
        assert sample.secret in sample.words
        assert list(sample.words) == compatible_set(vocabulary, sample.state)
        assert all(is_compatible(sample.state, word) for word in sample.words)


def test_fork_example_respects_the_range_or_says_why(samples):
    sizes_at_2 = [s.size for s in samples if s.turn == 2]
    example = fork_example(samples, 2, min(sizes_at_2), max(sizes_at_2))
    assert example.turn == 2
    with pytest.raises(NoExampleError, match="widen"):
        fork_example(samples, 2, 10_000, 20_000)


def test_weighted_points_fall_inside_their_intervals_and_beat_uniform(samples, vocabulary):
    points = weighted_consistency_points(samples, vocabulary, [1.0, 0.2], [3, 10, 40], k=5, n_episodes=600,
                                         seed=1, alpha=0.01)
    assert set(points["temperature"]) == {1.0, 0.2}
    for row in points.itertuples():
        assert row.wilson_low <= row.exact <= row.wilson_high
    exact = weighted_consistency_exact(samples[:30], vocabulary, [0.2], k=5)
    uniform = [p_self_consistent_uniform(size, 5) for size in exact["size"]]
    # Mode collapse: a frequency-weighted POCA at low temperature looks more consistent.
    assert (exact["exact"].to_numpy() >= pd.Series(uniform).to_numpy() - 1e-12).mean() > 0.8


def test_consistency_figure_draws_every_layer_with_a_theory_label(samples, vocabulary):
    uniform = self_consistency_points([2, 5, 20], k=5, n_episodes=100, seed=0)
    exact = weighted_consistency_exact(samples[:20], vocabulary, [1.0, 0.3], k=5)
    points = weighted_consistency_points(samples, vocabulary, [1.0, 0.3], [3, 30], k=5, n_episodes=50, seed=0)
    fig = plot_consistency_vs_size(uniform, k=5, weighted_exact=exact, weighted_points=points)
    label = figure_provenance(fig)
    assert label.startswith(THEORY_LABEL) and label == theory_label(monte_carlo=True)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]  # outside the axes, on the figure
    assert len(legend) == 2 + 2 * 2
    assert fig.axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="no column"):
        plot_consistency_vs_size(uniform.drop(columns="rate"), k=5)


def test_policy_outcome_figure_has_exact_and_monte_carlo_bars(samples):
    table = policy_table([ReimaginingPoca(), FirstCompatiblePoca(), PrivateStateAgent()], samples[0].words, k=5, n_episodes=200, seed=0)
    fig = plot_policy_outcomes(table)
    assert "no model" in figure_provenance(fig)
    ax = fig.axes[0]
    assert len(ax.patches) == 3 * 2 * 4
    assert [t.get_text() for t in ax.get_xticklabels()] == ["exact", "MC"] * 3


def test_fork_diagram_schematic():
    fig = plot_fork_diagram(t_fork=4, k=5)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.startswith("is it") for t in texts) == 5
    assert sum(t.startswith("reveal") for t in texts) == 1
    assert figure_provenance(fig) == THEORY_LABEL
    with pytest.raises(ValueError, match="k >= 1"):
        plot_fork_diagram(t_fork=2, k=0)


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


def test_theorem_params_defaults_and_clear_errors():
    params = validate_params(TheoremParams, {})
    assert params.k == 5 and params.live_agents == ["vanilla", "workflow_overwrite"]
    assert validate_params(TheoremParams, {"sizes": [50, 2, 10]}).sizes == [2, 10, 50]
    for values, name in (({"live_agents": ["telepath"]}, "live_agents"), ({"entropy_guesses": "eae"}, "entropy_guesses"),
                         ({"temperatures": [0.0]}, "temperatures"), ({"word_length": 2}, "word_length"),
                         ({"n_gamez": 3}, "n_gamez")):
        with pytest.raises(ParameterError, match=name):
            validate_params(TheoremParams, values)
    with pytest.raises(ParameterError, match="example_min_size"):
        validate_params(TheoremParams, {"example_min_size": 50, "example_max_size": 10})


# --------------------------------------------------------------------------------------------
# The structured episode view
# --------------------------------------------------------------------------------------------


def _typed(agent="workflow_overwrite", outcome="state_substitution", episode_id="hangman/psit-sim/w/0001"):
    from psit_lib.runs.records import read_records
    from psit_lib.studies.psit.protocol.records import ForkEpisode

    result = {
        "task": "hangman", "agent": agent, "model": "psit-sim", "outcome": outcome,
        "failure": "answered no to its own revealed secret", "turns_played": 2, "constraints": {},
        "transcript": [{"role": "user", "content": "Let's play"}, {"role": "assistant", "content": "_ _ _"},
                       {"role": "user", "content": "My next guess is the letter 'e'."},
                       {"role": "assistant", "content": "No e. <b>_ _ _</b>"}],
        "private_state_at_fork": "<secret>cat</secret>", "state_size_per_turn": [12, 15],
        "memory_edits": [[{"name": "overwrite_memory", "ok": True, "meta": {"changed_lines": 2}}],
                         [{"name": "overwrite_memory", "ok": False, "error": "hunk did not apply"}]],
        "hidden_calls": [{"turn": 2, "library": "mem0", "kind": "mem0.fact_extraction", "prompt_tokens": 100,
                          "completion_tokens": 20, "ok": True, "error": None}],
        "reveal": {"question": "Reveal?", "answer": "cat", "parsed": "cat", "compatible": True},
        "candidates": [{"secret": "cat", "source": "revealed", "question": "Is it 'cat'?", "answer": "No", "parsed": False},
                       {"secret": "cot", "source": "dataset", "question": "Is it 'cot'?", "answer": "No", "parsed": False}],
        "candidate_search": None,
        "branch_hidden_calls": [{"branch": "confirm-1", "turn": 3, "library": "mem0", "kind": "mem0.memory_update",
                                 "prompt_tokens": 50, "completion_tokens": 5, "ok": True, "error": None}],
    }  # fmt: skip
    stored = {"format": 2, "episode_id": episode_id, "status": "ok", "error": None,
              "spec": {"agent": agent, "model": "psit-sim", "task": "hangman"},
              "usage": {"calls": 4, "cache_hits": 0, "prompt_tokens": 10, "completion_tokens": 5, "calls_by_role": {}},
              "calls": [], "wall_seconds": 0.1, "result": result}
    return read_records([stored], ForkEpisode)[0]


def test_the_episode_view_shows_turns_private_actions_state_and_branches_side_by_side():
    from bs4 import BeautifulSoup

    from psit_lib.studies.psit.protocol.transcript_view import episode_html

    page = episode_html(_typed())
    soup = BeautifulSoup(page, "html.parser")
    text = " ".join(soup.get_text(" ").split())
    assert "<b>_ _ _</b>" not in page and "&lt;b&gt;" in page  # the model's text is escaped
    assert "turn 1" in text and "turn 2" in text
    assert "overwrite_memory → ok (changed_lines=2)" in text and "failed: hunk did not apply" in text
    assert "mem0.fact_extraction" in text and "private state carried on: 15 tokens" in text
    assert "<secret>cat</secret>" in text and "answered no to its own revealed secret" in text
    grid = [d for d in soup.find_all("div") if "grid-template-columns" in (d.get("style") or "")]
    assert len(grid) == 1 and len(grid[0].find_all("div", recursive=False)) == 3  # reveal + 2 candidates
    assert "a self-consistent host says yes" in text and "mem0.memory_update" in text
    assert episode_html(_typed().stored()) == page  # a stored record gives the same view


