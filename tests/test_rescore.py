"""A study's tables are recomputed from stored records alone: ``Study.rescore`` and ``psit rescore``."""

from __future__ import annotations

import socket

import pytest

from psit_lib.cli import main

pytestmark = pytest.mark.slow  # runs whole notebooks or studies (the fast tier: -m 'not slow')


def _forbid_models(monkeypatch):
    """No client may be built and no connection opened while rescoring."""
    def refuse(*args, **kwargs):
        raise AssertionError("rescoring must not build a model client or open a connection")

    import psit_lib.runs.experiment  # noqa: F401  (imported before the patch, so the patch is undone cleanly)

    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)
    monkeypatch.setattr("psit_lib.runs.experiment.make_client", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_rescore_reproduces_a_small_run_of_notebooks_02_and_07(tmp_path, monkeypatch, capsys):
    """Every table of a finished run is reproduced from its stored episodes and scores, with model
    clients and sockets forbidden; 07's Appendix E reads 02's folder of the same run."""
    assert main(["run", "02", "-p", "n_episodes=2", "-p", "sweep_episodes=1", "-p", "agents=[vanilla,private_cot]",
                 "--run-id", "small", "--no-progress", "--no-report"]) == 0
    assert main(["run", "07", "-p", "n_samples=2", "-p", "temperatures=[0.3,1.0]", "-p", "n_boot=20",
                 "--run-id", "small", "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    run = tmp_path / "results" / "small"
    saved = {nb: sorted(p.name for p in (run / nb / "tables").glob("*.csv"))
             for nb in ("02_hangman_fork_tests", "07_secret_distribution_mode_collapse")}
    assert saved["07_secret_distribution_mode_collapse"] == ["appendix_e_top10.csv", "attractors.csv",
                                                             "chi_square.csv", "secret_spread.csv"]
    top = (run / "07_secret_distribution_mode_collapse" / "tables" / "appendix_e_top10.csv").read_text()
    assert "hangman" in top  # 02's main reveals, handed to 07 as its run-mate
    _forbid_models(monkeypatch)
    assert main(["rescore", "small"]) == 0
    out = capsys.readouterr().out
    assert ("02_hangman_fork_tests: reproduced 10 tables (self_consistency, table1_self_consistency, significance, "
            "significance_table1, summary, reproduction, outcome_mix, failure_modes, state_size, sweep)") in out
    assert ("07_secret_distribution_mode_collapse: reproduced 4 tables (secret_spread, chi_square, appendix_e_top10, "
            "attractors)") in out
    assert len(saved["02_hangman_fork_tests"]) == 10

    # one scorer recomputed where stored: the same tables
    assert main(["rescore", "small", "02", "--scorer", "outcome"]) == 0
    assert main(["rescore", "small", "02", "--scorer", "nope"]) == 2  # a usage error: one sentence, exit 2
    assert "has a scorer 'nope'; the scorers are budget, candidates, outcome, table1" in capsys.readouterr().err

    # a saved table that no longer matches its scores is named, with exit status 1
    table = run / "02_hangman_fork_tests" / "tables" / "outcome_mix.csv"
    lines = table.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",9"
    table.write_text("\n".join(lines) + "\n")
    assert main(["rescore", "small", "02"]) == 1
    assert "table 'outcome_mix' differs" in capsys.readouterr().out


def test_rescore_reproduces_notebook_01s_live_table(tmp_path, monkeypatch, capsys):
    """Notebook 01's live fork test runs through the study (its live plan from the theory's
    parameters) and its saved outcome table is recomputed from the stored records alone."""
    small_theory = ["-p", "n_games=20", "-p", "n_episodes=100", "-p", "sizes=[2,5]", "-p", "entropy_dictionary_size=12",
                    "-p", "n_live_episodes=2", "-p", "example_min_size=2", "-p", "example_max_size=50000"]
    assert main(["run", "01", *small_theory, "--run-id", "theory", "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    _forbid_models(monkeypatch)
    assert main(["rescore", "theory", "01"]) == 0
    assert "01_theorem_illustration: reproduced 1 tables (live_outcome_mix)" in capsys.readouterr().out

    from psit_lib.studies.registry import study_of

    folder = tmp_path / "results" / "theory" / "01_theorem_illustration"
    rescored = study_of("01_theorem_illustration").rescore(folder).tables["live_outcome_mix"]
    assert int(rescored.to_numpy().sum()) == 4  # two live agents, two episodes each, every outcome counted


def test_rescore_exit_status_for_a_bad_or_missing_run(capsys):
    assert main(["rescore", "../elsewhere"]) == 2
    assert "is not a run id" in capsys.readouterr().err
    assert main(["rescore", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_outcomes_are_scored_from_the_episode_fields_never_the_stored_label(tmp_path):
    """The ``outcome`` scorer applies the rule to what the record keeps; a stored label (older
    records carry one) is not the source: changing it changes no table. A folder made before
    scores were stored rescores to the same tables."""
    import asyncio
    import json

    from psit_lib.runs import Experiment
    from psit_lib.studies.psit.protocol.experiment import fork_outcome
    from psit_lib.studies.registry import params_model, study_of

    notebook = "02_hangman_fork_tests"
    study = study_of(notebook)
    assert study is not None
    params = params_model(notebook)(agents=["vanilla", "private_cot", "workflow_overwrite"], n_episodes=4,
                                    sweep_episodes=1)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    run = asyncio.run(study.run(exp, params))
    records = run.main
    assert [fork_outcome(r.result).value for r in records if r.result] == \
        run.scores.loc[(run.scores["part"] == "main") & (run.scores["status"] == "ok"), "outcome"].tolist()
    assert len(run.tables["sweep"]) == 3  # one row per swept value, each its own part
    assert sorted(exp.store.metadata().parts) == ["main", "sweep:unheld_secret=deny",
                                                  "sweep:unheld_secret=play_along", "sweep:unheld_secret=reimagine"]

    # every stored label flipped, and the scores file removed (a folder from before scores)
    path = exp.store.records_source
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line.get("result"):
            line["result"]["outcome"] = "leakage"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (exp.store.dir / "scores.jsonl").unlink()
    stored = study.rescore(exp.store.dir)
    for name, table in run.tables.items():
        assert table.equals(stored.tables[name]), name
    # the explorer's column and badge are the same label as the tables'
    from psit_lib.studies.psit.protocol.transcript_view import episode_html, episode_row

    derived = {r.episode_id: fork_outcome(r.result).value for r in records if r.result is not None}
    shown = [line for line in lines if line["episode_id"] in derived]
    assert shown and any(derived[line["episode_id"]] != "leakage" for line in shown)
    for line in shown:
        assert episode_row(line)["outcome"] == derived[line["episode_id"]]
        assert f">{derived[line['episode_id']]}</span>" in episode_html(line)


@pytest.mark.parametrize("notebook, params, tables, rescored", [
    ("05", ["-p", "n_turns=3", "-p", "domains=[cybersecurity]", "-p", "judge_variants=[standard,five_point]",
            "-p", "sweep_turns=2", "-p", "sweep_scenarios=2", "-p", "n_boot=100"],
     "summary_rates, episode_rates, hallucination_drift, judge_scores, footprint_by_domain, ccs_forms, "
     "judge_sensitivity, sweeps",
     ["judge", "judge_standard", "judge_five_point"]),
    ("06", ["-p", "scenarios=[stale_locations]", "-p", "n_trials=2", "-p", "ks=[1,2]", "-p", "reference_sets=1",
            "-p", "sweep_trials=1"],
     "success_rates, success_final_state, success_pooled, relative_gain, passk, passk_comparison, sweeps",
     ["success"]),
])
def test_rescore_reproduces_every_saved_table_of_05_and_06(tmp_path, monkeypatch, capsys, notebook, params, tables,
                                                           rescored):
    """The ACC and BASIS studies write every table from their stored scores (metrics); ``psit
    rescore`` reproduces each of them with no model client and no socket, from the stored scores
    or with scorers run again (ACC's judge and its variants replaying the run's cache)."""
    import psit_lib.runs.backend as backend

    assert main(["run", notebook, *params, "--run-id", "small", "--no-progress", "--no-report"]) == 0
    capsys.readouterr()
    make_client = backend.make_client
    _forbid_models(monkeypatch)
    assert main(["rescore", "small", notebook]) == 0
    assert f"reproduced {len(tables.split(', '))} tables ({tables})" in capsys.readouterr().out
    # scorers run again: a client is built, but answers come from the run's cache only (no model
    # call: the simulator's transport refuses, and so does every socket)
    monkeypatch.setattr("psit_lib.runs.backend.make_client", make_client)

    def refuse(*args, **kwargs):
        raise AssertionError("a model call while rescoring")

    monkeypatch.setattr("psit_lib.sim.transport.SimTransport.handle_async_request", refuse)
    assert main(["rescore", "small", notebook, *(a for name in rescored for a in ("--scorer", name))]) == 0
    assert f"reproduced {len(tables.split(', '))} tables ({tables})" in capsys.readouterr().out


def test_every_fork_table_when_every_episode_failed(tmp_path, monkeypatch):
    """Failed episodes are never scored but always counted: with every episode failed, each table
    of 02 is still made (rates with their failures counted, no candidate, no sweep row)."""
    import asyncio

    from psit_lib.runs import Experiment
    from psit_lib.studies.psit.protocol.records import ForkEpisode
    from psit_lib.studies.psit.study import STUDY

    notebook = "02_hangman_fork_tests"

    async def fail(spec, session):
        raise RuntimeError("the endpoint is down")

    fail.result_type = ForkEpisode  # type: ignore[attr-defined]
    nb = STUDY.notebook(notebook)
    monkeypatch.setitem(STUDY.notebooks, notebook, type(nb)(**{**nb.__dict__, "episode": lambda p: fail}))
    params = nb.params_model(agents=["vanilla", "private_cot"], n_episodes=2, sweep_episodes=1)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    run = asyncio.run(STUDY.run(exp, params))
    assert set(run.tables) == {"self_consistency", "table1_self_consistency", "significance", "significance_table1",
                               "summary", "reproduction", "outcome_mix", "failure_modes", "state_size", "sweep"}
    rates = run.tables["self_consistency"]
    assert list(rates["n_scored"]) == [0, 0] and list(rates["n_failed"]) == [2, 2]
    assert run.tables["outcome_mix"]["error"].tolist() == [2, 2]
    assert exp.store.score_lines() == {}
