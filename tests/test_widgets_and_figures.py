"""Notebook 01's figures, widgets, play session and parameters.

Figures must build and carry their provenance footer ("exact computation (no model)" for
theory, the run's label when a model answered). Widgets must build headless without a single
model call (a client that raises proves it) and degrade to text without ipywidgets. The
play-it-yourself game logic (:class:`PlaySession`) is driven against the in-process simulator:
input checks, forks that leave the game untouched, and the same outcome rule as the protocol.
"""

from __future__ import annotations

import asyncio
import sys

import pandas as pd
import pytest

from psit_lib.analysis.labels import figure_provenance
from psit_lib.studies.psit.protocol.outcomes import classify_fork
from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMClient, LLMSettings
from psit_lib.studies.psit.protocol.fork_test import host_text
from psit_lib.runs.params import ParameterError, validate_params
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_rules import is_compatible
from psit_lib.studies.psit.tasks.vocabulary import get_vocabulary
from psit_lib.studies.psit.theory.candidate_sets import compatible_set, simulate_set_sizes
from psit_lib.studies.psit.theory.fork_exact import p_self_consistent_uniform, policy_table, self_consistency_points
from psit_lib.studies.psit.theory.policies import FirstCompatiblePoca, PrivateStateAgent, ReimaginingPoca
from psit_lib.studies.psit.theory.figure_data import NoExampleError, THEORY_LABEL, compatible_set_samples, fork_example, size_quantiles, theory_label, weighted_consistency_exact, weighted_consistency_points
from psit_lib.studies.psit.theory.figures import plot_consistency_vs_size, plot_fork_diagram, plot_policy_outcomes, plot_set_sizes
from psit_lib.studies.psit.theorem_params import TheoremParams
from psit_lib.studies.psit.play import HangmanPlayer, PlayError, PlaySession, hangman_player
from psit_lib.studies.psit.protocol.params import WORKBOOK_AGENTS
from psit_lib.studies.psit.protocol.experiment import fork_outcome

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


class RaisingClient(LLMClient):
    """A client that fails the test if any model call is attempted."""

    calls = 0

    async def chat(self, request):
        RaisingClient.calls += 1
        raise AssertionError(f"unexpected model call (role {request.role})")


class BrokenClient(LLMClient):
    """A client whose every call fails, as an unreachable endpoint would."""

    async def chat(self, request):
        raise ConnectionError("endpoint unreachable")


def sim_client() -> LLMClient:
    return make_client(LLMSettings(cache="off"))


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
    fig = plot_set_sizes(size_quantiles(sizes), t_fork=4)
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
# Widgets (headless)
# --------------------------------------------------------------------------------------------


def test_workbook_agents_are_all_buildable_names():
    names = list(WORKBOOK_AGENTS)
    assert len(names) == 8 and names[0] == "vanilla" and "autonomous_patch_replace" in names


def test_hangman_player_builds_without_calling_a_model():
    RaisingClient.calls = 0
    factory_calls = []

    def factory():
        factory_calls.append(1)
        return RaisingClient(LLMSettings(cache="off"))

    player = hangman_player(HangmanTask(), factory)
    assert isinstance(player, HangmanPlayer)
    assert factory_calls == [] and RaisingClient.calls == 0
    assert player.agent.options == tuple(WORKBOOK_AGENTS)
    assert not player.new_game.disabled
    assert player.guess_button.disabled and player.fork_button.disabled
    assert "No game yet" in player.status.value
    assert "application/vnd.jupyter.widget-view+json" in player._repr_mimebundle_()


def test_widgets_degrade_to_text_without_ipywidgets(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    text = hangman_player(HangmanTask(), lambda: RaisingClient(LLMSettings(cache="off")), ["vanilla"])
    assert isinstance(text, str) and "ipywidgets" in text


# --------------------------------------------------------------------------------------------
# The play session against the in-process simulator
# --------------------------------------------------------------------------------------------


async def test_play_session_checks_moves_before_calling_the_model():
    RaisingClient.calls = 0
    session = PlaySession(HangmanTask(), "vanilla", RaisingClient(LLMSettings(cache="off")))
    with pytest.raises(PlayError, match="Start a game"):
        await session.guess("e")
    with pytest.raises(PlayError, match="Start a game"):
        await session.fork()
    assert RaisingClient.calls == 0
    with pytest.raises(ValueError, match="n_candidates"):
        PlaySession(HangmanTask(), "vanilla", RaisingClient(LLMSettings()), n_candidates=0)


@pytest.mark.parametrize("agent", ["vanilla", "workflow_overwrite"])
async def test_play_session_forks_without_touching_the_game(agent):
    task = HangmanTask()
    session = PlaySession(task, agent, sim_client(), seed=5, game_id=f"test/{agent}", n_candidates=4)
    await session.start()
    assert set(session.play.state.pattern_text.replace(" ", "")) == {"_"}
    with pytest.raises(PlayError, match="already started"):
        await session.start()
    await session.guess(" E ")
    assert session.play.state.guessed == ("e",)
    for bad, reason in (("e", "already guessed"), ("ab", "single letter"), ("1", "single letter")):
        with pytest.raises(PlayError, match=reason):
            await session.guess(bad)
    await session.guess()  # the seeded player's letter
    assert len(session.play.state.guessed) == 2 and not session.play.unreadable
    before = await session.transcript()
    private_before = await session.private_state()

    fork = (await session.fork()).result
    assert await session.transcript() == before  # the fork never mutates the game
    assert await session.private_state() == private_before
    assert fork.turns_played == 2 and [m.model_dump() for m in fork.transcript] == before
    revealed = fork.reveal.parsed
    assert revealed is not None
    assert (fork.candidates[0].secret, fork.candidates[0].source) == (revealed, "revealed")
    assert len(fork.candidates) == 4
    for cand in fork.candidates[1:]:
        assert is_compatible(session.play.state, cand.secret)
    expected = classify_fork(revealed, host_text(before), fork.answers)
    assert fork_outcome(fork) == expected
    if agent == "vanilla":
        assert fork.private_state_at_fork == ""
    else:
        assert fork.private_state_at_fork and fork.private_state_at_fork == private_before

    after = await session.guess("o" if "o" not in session.play.state.guessed else "u")
    transcript = await session.transcript()
    assert len(transcript) == len(before) + 2 and transcript[-1]["content"] == after
    second = await session.fork()
    assert len(session.forks) == 2 and second.result.turns_played == 3
    assert second.episode_id == f"test/{agent}/fork-2"
    from psit_lib.studies.psit.protocol.transcript_view import as_fork_record

    stored = second.model_dump(mode="json")  # a stored fork record: the one fork view reads it back
    assert fork_outcome(as_fork_record(stored).result) == fork_outcome(second.result)
    assert "outcome" not in stored["result"]  # the label is derived, never stored
    older = {**stored, "result": {**stored["result"], "outcome": "leakage"}}  # a record from before: still reads
    assert fork_outcome(as_fork_record(older).result) == fork_outcome(second.result)


async def wait_idle(player: HangmanPlayer) -> None:
    """Wait for every callback the widget scheduled."""
    while player.tasks:
        await asyncio.gather(*list(player.tasks))


async def test_widget_plays_a_game_and_shows_errors_in_the_widget():
    player = hangman_player(HangmanTask(), sim_client, ["workflow_overwrite", "vanilla"])
    player.new_game.click()
    await wait_idle(player)
    assert "Pattern" in player.status.value and not player.guess_button.disabled
    assert player.error.value == ""
    player.letter.value = "e"
    player.guess_button.click()
    await wait_idle(player)
    assert "guessed: e" in player.status.value and player.letter.value == ""
    player.auto_button.click()
    await wait_idle(player)
    assert "guessed: e, " in player.status.value and player.log.value.count("<b>host</b>") == 3
    player.letter.value = "zz"
    player.guess_button.click()
    await wait_idle(player)
    assert "single letter" in player.error.value
    player.fork_button.click()
    await wait_idle(player)
    assert "Fork branches" in player.fork_view.value and player.error.value == ""

    broken = hangman_player(HangmanTask(), lambda: BrokenClient(LLMSettings(cache="off", max_retries=0)), ["vanilla"])
    broken.new_game.click()
    await wait_idle(broken)
    assert "starting a game failed" in broken.error.value and "unreachable" in broken.error.value
    assert not broken.new_game.disabled


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


async def test_a_finished_game_disables_guessing_but_not_forking():
    player = hangman_player(HangmanTask(lives=1), sim_client, ["vanilla"])
    player.new_game.click()
    await wait_idle(player)
    for letter in "qzxjv":  # rare letters: the single life goes quickly
        if player.session.over:
            break
        player.letter.value = letter
        player.guess_button.click()
        await wait_idle(player)
    assert player.session.over
    assert player.guess_button.disabled and player.auto_button.disabled
    assert not player.fork_button.disabled and not player.new_game.disabled


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
    grid = soup.select("div.ep-grid")  # the branches side by side
    assert len(grid) == 1 and len(grid[0].find_all("div", recursive=False)) == 3  # reveal + 2 candidates
    assert "a self-consistent host says yes" in text and "mem0.memory_update" in text
    assert episode_html(_typed().stored()) == page  # a stored record gives the same view


