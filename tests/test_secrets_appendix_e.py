"""Notebook 07 as the study's Appendix E: the reveals it counts (every agent of the main runs of 02-04, once), its
lists and their reading, the eight attractors, the compact views, and every generated sentence
on a table built to make it wrong (ties, a single reveal each, too few reveals, no interval)."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from psit_lib.runs.records import EpisodeRecord
from psit_lib.studies.psit.protocol import appendix_e
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.reference import attractor_spellings, mode_collapse_attractors
from psit_lib.studies.psit.secrets import entropy_gap, secret_summary


def _fork_record(eid: str, secret: str | None, *, model: str = "m1", task: str = "hangman",
                 agent: str = "vanilla") -> dict:
    result = ForkEpisode(
        task=task, agent=agent, model=model,
        failure=None if secret else "reveal answer unreadable", transcript=[], turns_played=4, constraints={},
        private_state_at_fork="", state_size_per_turn=[], memory_edits=[], hidden_calls=[],
        reveal={"question": "reveal?", "answer": str(secret), "parsed": secret, "compatible": True},
        candidates=[], candidate_search=None, branch_hidden_calls=[])
    return EpisodeRecord[ForkEpisode](
        episode_id=eid, status="ok", error=None, spec={"task": task, "model": model, "agent": agent, "index": 0},
        usage={"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0, "calls_by_role": {}},
        calls=[], wall_seconds=0.0, result=result).stored()


def _notebook(run, name: str, records: list[dict], models: list[str], temperature: float = 0.3) -> None:
    folder = run / name
    folder.mkdir(parents=True)
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "params.json").write_text(json.dumps({"temperature": temperature, "_models": models}))
    (folder / "metadata.json").write_text(json.dumps({"notebook": name}))


@pytest.fixture
def fork_run(tmp_path):
    """02 with main episodes and sweep episodes (another, swept model), 03, and a 04 folder."""
    run = tmp_path / "run"
    main = [_fork_record(f"hangman/m1/vanilla/{i:04d}", s) for i, s in enumerate(["planet", "planet", "stone", None])]
    sweep = [_fork_record(f"hangman/m1:swept/vanilla/{i:04d}", "python", model="m1:swept") for i in range(5)]
    _notebook(run, "02_hangman_fork_tests", main + sweep, ["m1"])
    diagnosis = [_fork_record(f"diagnosis/m1/vanilla/{i:04d}", s, task="diagnosis")
                 for i, s in enumerate(["PBC", "Sarcoidosis", "Sarcoidosis"])]
    _notebook(run, "03_diagnosis_ddxplus", diagnosis, ["m1"])
    grid = [_fork_record("hangman/m1/vanilla/0000", "apple"),             # 02 ran vanilla: counted there
            _fork_record("hangman/m1/mem0/0000", "stone", agent="mem0")]  # an agent only 04 ran
    _notebook(run, "04_memory_strategy_ablations", grid, ["m1"])
    return run


def _forks(fork_run):
    """The run-mates' folders the study hands notebook 07 (02, 03 and 04 of the run)."""
    return {n: fork_run / n for n in appendix_e.FORK_NOTEBOOKS}


def test_appendix_e_counts_every_agent_of_the_main_runs_once(fork_run):
    df = appendix_e.main_fork_reveals(_forks(fork_run))
    assert set(df["source_notebook"]) == {"02_hangman_fork_tests", "03_diagnosis_ddxplus",
                                          "04_memory_strategy_ablations"}
    assert set(df.loc[df["source_notebook"].str.startswith("04"), "agent"]) == {"mem0"}  # vanilla from 02 only
    assert "m1:swept" not in set(df["model"]) and "python" not in set(df["secret"])         # no sweep
    assert "apple" not in set(df["secret"]) and df["secret"].isna().sum() == 1
    top = appendix_e.top_secrets(df)
    hangman = top[top["task"] == "hangman"]
    assert hangman[["rank", "secret", "count", "tied", "n", "n_missing"]].values.tolist() == [
        [1, "planet", 2, 2, 4, 1], [1, "stone", 2, 2, 4, 1]]                                # a tie is a tie
    assert (top["temperature"] == 0.3).all()
    assert appendix_e.main_fork_reveals({}).empty
    assert appendix_e.main_fork_reveals({"02_hangman_fork_tests": fork_run / "nowhere"}).empty


def test_notebook_07_is_handed_its_run_mates_never_reads_the_environment(fork_run, tmp_path, monkeypatch):
    """The study hands 07 the folders of 02 and 03: given ones, else the ``read_from`` run, else the
    run folder holding 07's own; ``PSIT_RUN_DIR`` is never read."""
    from psit_lib.studies.psit.study import STUDY

    nb = STUDY.notebook(sc.NOTEBOOK)
    params = sc.SecretChoiceParams()
    monkeypatch.setenv("PSIT_RUN_DIR", str(tmp_path / "elsewhere"))
    assert STUDY._run_mates(nb, params, None, fork_run / sc.NOTEBOOK) == _forks(fork_run)
    assert STUDY._run_mates(nb, params, None, None) == {}
    assert STUDY._run_mates(nb, sc.SecretChoiceParams(read_from=str(fork_run)), None, None) == _forks(fork_run)
    given = {"02_hangman_fork_tests": fork_run / "03_diagnosis_ddxplus"}
    assert STUDY._run_mates(nb, params, given, fork_run / sc.NOTEBOOK) == given


def _top(task_counts: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [{"task": task, "model": "m", "temperature": 0.3, "secret": s}
            for task, counts in task_counts.items() for s, c in counts.items() for _ in range(c)]
    return appendix_e.top_secrets(pd.DataFrame(rows))


def test_top_reading_calls_a_tie_a_tie_and_a_single_reveal_no_attractor():
    text = appendix_e.top_reading(_top({"diagnosis": {"Pneumonia": 3, "Influenza": 3, "SLE": 1},
                                        "hangman": {f"w{i}": 1 for i in range(12)}}))
    assert "2 secrets are tied at the top with 3 of 7 reveals" in text and "no single attractor" in text
    assert "the most revealed secret is" not in text
    assert "no secret was revealed more than once in 12 reveals: no attractor" in text
    wide = appendix_e.top_reading(_top({"hangman": {f"w{i:02d}": 2 for i in range(12)}}))
    assert "12 secrets are tied at the top" in wide and "w00" not in wide  # never cut alphabetically
    one = appendix_e.top_reading(_top({"hangman": {"planet": 5, "stone": 4}}))
    assert "'planet' leads with 5 of 9 reveals (56%); next: 'stone' (4), a lead this run cannot separate" in one
    assert "binomial test of 5 against 4, p = 0.5): no single attractor" in one
    assert "the most revealed secret is" not in one
    lead = appendix_e.top_reading(_top({"hangman": {"planet": 12, "stone": 3}}))
    assert "the most revealed secret is 'planet', 12 of 15 reveals (80%); next: 'stone' (3) (its lead is separated" in lead


def test_a_count_of_2_against_1_is_no_attractor():
    """The reference run's 07 called a secret revealed twice, against once for 94 others, "the most
    revealed secret"; a one-sided binomial test of 2 against 1 gives p = 0.5."""
    text = appendix_e.top_reading(_top({"hangman": {"word": 2, **{f"w{i:02d}": 1 for i in range(94)}}}))
    assert "'word' leads with 2 of 96 reveals" in text and "no single attractor" in text
    assert "the most revealed secret is" not in text


def test_top_reading_without_reveals_says_what_to_run():
    assert "run notebooks 02, 03 and 04" in appendix_e.top_reading(appendix_e.top_secrets(pd.DataFrame()))
    unread = appendix_e.top_secrets(pd.DataFrame({"task": ["hangman"], "model": ["m"], "temperature": [0.3],
                                                  "secret": [None]}))
    assert "no readable reveal" in appendix_e.top_reading(unread)


def test_appendix_e_figure_has_a_panel_per_game_and_model_and_fits_a_page(fork_run):
    top = appendix_e.top_secrets(appendix_e.main_fork_reveals(_forks(fork_run)))
    fig = appendix_e.plot_top_secrets(top, label="backend=sim · model=m1 · profile=default")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2 and all(ax.get_xlabel() == "reveals (count)" for ax in panels)
    assert fig.get_size_inches()[0] * 120 <= 1400                       # saved at 120 dpi
    assert any("profile=default" in t.get_text() for t in fig.texts)
    empty = appendix_e.plot_top_secrets(appendix_e.top_secrets(pd.DataFrame()), label="backend=sim · model=m")
    assert empty.axes


def test_the_eight_attractors_with_their_models():
    attractors = mode_collapse_attractors()
    assert len(attractors) == 8
    assert [attractors[("hangman", m)] for m in ("GPT-OSS 20B", "GPT-OSS 120B", "Qwen3 32B", "Qwen3 235B")] == \
        ["python", "planet", "elephant", "apple"]
    assert attractors[("diagnosis", "GPT-OSS 120B")] == attractors[("diagnosis", "Qwen3 235B")] == "Sarcoidosis"
    assert attractors[("diagnosis", "GPT-OSS 20B")] == "Primary biliary cholangitis"
    assert attractors[("diagnosis", "Qwen3 32B")] == "Cushing's syndrome"
    assert "pbc" in attractor_spellings()["Primary biliary cholangitis"]


def test_attractor_table_counts_spellings_and_both_sources(fork_run):
    quick = pd.DataFrame({"task": ["hangman"] * 3 + ["diagnosis"],
                          "secret": ["Planet", "planet", "stone", "cushing's disease"]})
    table = sc.attractor_table(quick, appendix_e.main_fork_reveals(_forks(fork_run)))
    assert len(table) == 8
    planet = table[table["attractor"] == "planet"].iloc[0]
    assert (planet["quick_count"], planet["quick_n"], planet["quick_rank"]) == (2, 3, 1)
    assert (planet["fork_count"], planet["fork_n"], planet["fork_rank"]) == (2, 4, 1)  # tied with stone: rank 1
    pbc = table[table["attractor"] == "Primary biliary cholangitis"].iloc[0]
    assert (pbc["fork_count"], pbc["fork_n"]) == (1, 3)                 # "PBC" is its spelling
    assert table[table["attractor"] == "Cushing's syndrome"]["quick_count"].iat[0] == 1
    view = sc.attractor_view(sc.attractor_table(quick, None))
    assert (view["at the fork, 02-04 main runs"] == "no reveals").all()
    assert "2 / 3 (rank 1)" in view["quick experiment, all T"].tolist()


def test_attractor_ranks_agree_with_the_appendix_e_lists():
    rows = pd.DataFrame({"task": "diagnosis", "model": "m", "temperature": 0.3,
                         "secret": ["SLE", "Sarcoidosis", "Pneumonia", "Pneumonia"]})
    top = appendix_e.top_secrets(rows)
    rank = int(top.loc[top["secret"] == "Sarcoidosis", "rank"].iat[0])
    table = sc.attractor_table(rows, rows)
    assert (table.loc[table["attractor"] == "Sarcoidosis", "fork_rank"] == rank).all()


# -- the compact views ---------------------------------------------------------------------------

def test_plain_number_writes_numbers_as_every_table_does():
    assert sc.plain_number(5.56e-05) == "5.56e-05" and sc.plain_number(0.000556) == "0.000556"
    assert sc.plain_number(0.148148) == "0.148" and sc.plain_number(4.0) == "4"
    assert sc.plain_number(123456.7) == "123457" and sc.plain_number(float("nan")) == "—"


def test_spread_view_is_compact_and_marks_cells_without_an_interval():
    rows = ([{"task": "hangman", "model": "m", "temperature": 0.1, "secret": f"w{i}"} for i in range(40)]
            + [{"task": "hangman", "model": "m", "temperature": 1.5, "secret": s}
               for s in ["a"] * 20 + ["b"] * 10 + ["c"] * 6 + ["d"] * 4])
    summary = sc.metrics_table(pd.DataFrame(rows), ["task", "model", "temperature"], n_boot=200)
    view = sc.spread_view(summary)
    assert len(view.columns) <= 8 and "model" not in view.columns and "interval" not in view.columns
    assert view["entropy (bits)"].iat[0].endswith(sc.UNUSABLE_MARK)     # 40 distinct: no interval
    assert "[" in view["entropy (bits)"].iat[1]
    assert not view.astype(str).apply(lambda c: c.str.contains(r"\de-\d")).any().any()
    caption = sc.spread_caption(summary)
    assert "95% bootstrap intervals" in caption and sc.UNUSABLE_MARK in caption


def test_an_interval_that_excludes_its_estimate_is_not_given():
    rows = [{"task": "hangman", "model": "m", "temperature": 0.3, "secret": f"w{i}"} for i in range(40)]
    summary = secret_summary(pd.DataFrame(rows), ["task", "model", "temperature"], "secret", n_boot=200)
    row = summary.iloc[0]
    assert pd.isna(row["entropy_low"]) and pd.isna(row["entropy_high"])
    assert "no interval is given" in row["interval"]


def test_chi_square_view_states_p_without_an_exponent():
    chi = pd.DataFrame([{"task": "hangman", "model": "m", "temperature": 0.3, "reference": "uniform", "n": 50,
                         "n_in_prior": 50, "out_of_prior_share": 0.0, "cells": 3, "dof": 2, "chi2": 41.2,
                         "p_value": 1.1e-09, "note": ""},
                        {"task": "hangman", "model": "m", "temperature": 0.3, "reference": "wordfreq", "n": 5,
                         "n_in_prior": 5, "out_of_prior_share": 0.0, "cells": None, "dof": None, "chi2": None,
                         "p_value": None, "note": "not testable: needs n_in_prior >= 68"}])
    view = sc.chi_square_view(chi)
    assert view["test"].tolist() == ["chi2 = 41.2, dof 2, p < 0.001", "not testable: needs n_in_prior >= 68"]


# -- the spread reading on tables built to make it wrong -------------------------------------------

def _summary(rows) -> pd.DataFrame:
    return sc.metrics_table(pd.DataFrame(rows), ["task", "model", "temperature"], n_boot=200)


def test_two_reveals_each_are_too_small_whatever_the_gap():
    rows = [{"task": "hangman", "model": "m", "temperature": t, "secret": s}
            for t, secrets in ((0.1, ["planet", "planet"]), (1.5, ["stone", "apple"])) for s in secrets]
    text = sc.spread_reading(_summary(rows), pd.DataFrame(rows), n_boot=200)
    assert "too small to compare" in text
    assert "rises" not in text and "do not overlap" not in text and "excludes zero" not in text


def test_an_end_at_its_log2_n_ceiling_leaves_the_gap_undecided():
    """07: 40 distinct reveals at T=1.5 put entropy at log2(40), where the bootstrap gives that end no
    interval; the same bootstrap must not then decide that entropy rises."""
    rows = ([{"task": "hangman", "model": "m", "temperature": 0.1, "secret": "planet" if i % 10 else "stone"}
             for i in range(40)]
            + [{"task": "hangman", "model": "m", "temperature": 1.5, "secret": f"w{i}"} for i in range(40)])
    summary = _summary(rows)
    assert summary["entropy_low"].isna().iat[1]                          # 40 distinct: no interval
    assert sc.at_ceiling(float(summary["entropy"].iat[1]), 40)
    text = sc.spread_reading(summary, pd.DataFrame(rows), n_boot=200)
    assert "rises" not in text.replace("rises or falls", "") and "excludes zero" not in text
    assert "cannot say whether entropy rises or falls" in text and "nan" not in text.lower()
    assert "log2(n) ceiling at T=1.5" in text


def test_equal_entropies_are_a_tie_and_never_rise():
    rows = [{"task": "diagnosis", "model": "m", "temperature": t, "secret": f"c{i % 5}"}
            for t in (0.1, 1.0) for i in range(20)]
    text = sc.spread_reading(_summary(rows), pd.DataFrame(rows), n_boot=200)
    assert "a tie" in text and "rises" not in text and "falls" not in text


def test_run_note_counts_failures_and_says_when_there_is_no_appendix_e():
    note = sc.run_note(pd.DataFrame(columns=["secret", "status"]), appendix_e.top_secrets(pd.DataFrame()))
    assert "0 episodes" in note and "no fork-test reveals" in note


# -- scored from stored records: psit rescore reproduces 07's tables --------------------------------

@pytest.mark.slow
def test_notebook_07_tables_are_rescored_from_stored_records_alone(fork_run, monkeypatch):
    import asyncio

    from psit_lib.runs import Experiment
    from psit_lib.runs.outputs import save_table
    from psit_lib.studies.registry import study_of

    notebook = sc.NOTEBOOK
    study = study_of(notebook)
    assert study is not None and study.name == "psit"
    assert study.notebook(notebook).table_names == ["secret_spread", "chi_square", "appendix_e_top10", "attractors"]
    params = sc.SecretChoiceParams(n_samples=3, temperatures=[0.3, 1.0], n_boot=50)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, models=params.models, run_dir=fork_run)
    fresh = asyncio.run(study.run(exp, params)).tables
    assert len(fresh["appendix_e_top10"]) == 4                   # 02 and 03's main reveals, no sweep
    assert exp.store.table_names() == sorted(f"{name}.csv" for name in fresh)  # every table written

    def refuse(*args, **kwargs):
        raise AssertionError("rescoring must not build a model client")

    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)
    stored = study.rescore(fork_run / notebook).tables
    for name, table in fresh.items():
        a = save_table(table, fork_run / "fresh", name).read_text()
        b = save_table(stored[name], fork_run / "stored", name).read_text()
        assert a == b, name


@pytest.mark.parametrize("hot, verdict", [({"a": 24, "b": 14, "c": 8, "d": 4}, "rises"),
                                          ({"a": 25, "b": 15, "c": 6, "d": 4}, "cannot be told apart")])
def test_the_reading_follows_the_gap_interval_it_prints_never_the_per_temperature_intervals(hot, verdict):
    """Close entropies: the reading says what the printed bootstrap interval of the gap says (rises
    only when it excludes zero), whether or not the two temperatures' own intervals overlap."""
    cold = {"a": 30, "b": 12, "c": 8}
    rows = ([{"task": "hangman", "model": "m", "temperature": 0.1, "secret": s} for s, c in cold.items() for _ in range(c)]
            + [{"task": "hangman", "model": "m", "temperature": 1.5, "secret": s} for s, c in hot.items() for _ in range(c)])
    summary = sc.metrics_table(pd.DataFrame(rows), ["task", "model", "temperature"], n_boot=1000)
    _, low, high = entropy_gap(Counter(hot), Counter(cold), n_boot=1000, seed=0)
    assert (low > 0) == (verdict == "rises")
    text = sc.spread_reading(summary, pd.DataFrame(rows))
    assert f"[{sc.plain_number(low)}, {sc.plain_number(high)}]" in text  # the interval the verdict follows
    assert ("excludes zero: entropy rises" in text) == (verdict == "rises")
    assert ("includes zero, so this run cannot tell them apart" in text) == (verdict != "rises")


def test_notebook_07_tables_when_every_episode_failed(tmp_path, monkeypatch):
    """A run whose every episode failed still gives each table (empty or counted as missing),
    never a crash: failed episodes are never scored."""
    import asyncio

    from psit_lib.runs import Experiment
    from psit_lib.studies.psit.study import SECRET_CHOICE_NOTEBOOK, STUDY

    async def fail(spec, session):
        raise RuntimeError("the endpoint is down")

    fail.result_type = sc.SecretChoiceEpisode  # type: ignore[attr-defined]
    nb = SECRET_CHOICE_NOTEBOOK
    monkeypatch.setitem(STUDY.notebooks, sc.NOTEBOOK, type(nb)(**{**nb.__dict__, "episode": lambda p: fail}))
    params = sc.SecretChoiceParams(n_samples=2, temperatures=[0.3], tasks=["hangman"], n_boot=20)
    exp = Experiment(sc.NOTEBOOK, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    run = asyncio.run(STUDY.run(exp, params))
    assert (run.scores["status"] == "error").all() and run.scores["secret"].isna().all()
    assert set(run.tables) == {"secret_spread", "chi_square", "appendix_e_top10", "attractors"}
    spread = run.tables["secret_spread"].iloc[0]
    assert (spread["n"], spread["n_missing"], spread["interval"]) == (0, 2, "none (no reveals)")
def test_a_tie_across_the_cut_is_one_row_and_ties_share_a_rank():
    from collections import Counter

    counts = Counter({"planet": 9, "stone": 5, "apple": 5, **{f"w{i:02d}": 1 for i in range(75)}})
    ranked = appendix_e.ranked_with_ties(counts)
    assert ranked == [(1, "planet", 9, 1), (2, "apple", 5, 2), (2, "stone", 5, 2), (4, "(75 secrets tied)", 1, 75)]
    fits = appendix_e.ranked_with_ties(Counter({"a": 3, "b": 2, "c": 2}), k=3)
    assert fits == [(1, "a", 3, 1), (2, "b", 2, 2), (2, "c", 2, 2)]
    assert appendix_e.ranked_with_ties(Counter({f"s{i}": 2 for i in range(4)}), k=3) == [(1, "(4 secrets tied)", 2, 4)]
    table = _top({"hangman": {"planet": 9, "stone": 5, "apple": 5, **{f"w{i:02d}": 1 for i in range(75)}}})
    assert table["secret"].tolist()[-1] == "(75 secrets tied)" and table["tied"].tolist() == [1, 2, 2, 75]
    text = appendix_e.top_reading(table)
    assert "'planet' leads with 9 of 94 reveals (10%); next: 2 secrets tied (5), a lead this run cannot separate" in text
