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


def test_rescore_reproduces_a_small_run_of_notebook_02(tmp_path, monkeypatch, capsys):
    assert main(["run", "02", "-p", "n_episodes=2", "-p", "sweep_episodes=0", "-p", "agents=[vanilla,private_cot]",
                 "--run-id", "small", "--no-progress"]) == 0
    capsys.readouterr()
    _forbid_models(monkeypatch)
    assert main(["rescore", "small"]) == 0
    out = capsys.readouterr().out
    assert ("02_hangman_fork_tests: reproduced 8 tables (self_consistency, table1_self_consistency, significance, "
            "significance_table1, summary, reproduction, outcome_mix, sweep)") in out

    # a saved table that no longer matches its records is named, with exit status 1
    saved = tmp_path / "results" / "small" / "02_hangman_fork_tests" / "tables" / "outcome_mix.csv"
    lines = saved.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",9"
    saved.write_text("\n".join(lines) + "\n")
    assert main(["rescore", "small", "02"]) == 1
    assert "table 'outcome_mix' differs" in capsys.readouterr().out


def test_rescore_reproduces_notebook_01s_live_table(tmp_path, monkeypatch, capsys):
    """Notebook 01's live fork test runs through the study (its live plan from the theory's
    parameters) and its saved outcome table is recomputed from the stored records alone."""
    small_theory = ["-p", "n_games=20", "-p", "n_episodes=100", "-p", "sizes=[2,5]", "-p", "entropy_dictionary_size=12",
                    "-p", "n_live_episodes=2", "-p", "example_min_size=2", "-p", "example_max_size=50000"]
    assert main(["run", "01", *small_theory, "--run-id", "theory", "--no-progress"]) == 0
    capsys.readouterr()
    _forbid_models(monkeypatch)
    assert main(["rescore", "theory", "01"]) == 0
    assert "01_theorem_illustration: reproduced 1 tables (live_outcome_mix)" in capsys.readouterr().out

    from psit_lib.studies.registry import study_of

    folder = tmp_path / "results" / "theory" / "01_theorem_illustration"
    rescored = study_of("01_theorem_illustration").rescore(folder)["live_outcome_mix"]
    assert int(rescored.to_numpy().sum()) == 4  # two live agents, two episodes each, every outcome counted


def test_rescore_exit_status_for_a_bad_or_missing_run(capsys):
    assert main(["rescore", "../elsewhere"]) == 2
    assert "is not a run id" in capsys.readouterr().err
    assert main(["rescore", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


@pytest.mark.parametrize("notebook", ["02_hangman_fork_tests"])
def test_study_rescore_derives_outcomes_from_the_stored_fields(tmp_path, notebook):
    import asyncio

    from psit_lib.runs import Experiment
    from psit_lib.studies.psit.protocol.scoring import derived_outcome
    from psit_lib.studies.registry import params_model, study_of

    study = study_of(notebook)
    assert study is not None
    params = params_model(notebook)(agents=["vanilla", "private_cot", "workflow_overwrite"], n_episodes=4,
                                    sweep_episodes=1)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    records = asyncio.run(study.run(exp, params))
    asyncio.run(study.run_sweeps(exp, params))
    assert [derived_outcome(r.result) for r in records if r.result] == [r.result.outcome for r in records if r.result]
    fresh = study.score(records, notebook=notebook, params=params, models=exp.models)
    stored = study.rescore(exp.store.dir)
    assert set(fresh) == set(stored) == {"self_consistency", "table1_self_consistency", "significance",
                                         "significance_table1", "summary", "reproduction", "outcome_mix", "sweep"}
    for name in ("self_consistency", "table1_self_consistency", "significance", "summary", "outcome_mix"):
        assert fresh[name].equals(stored[name]), name
    assert len(stored["sweep"]) == 3  # one row per swept value, read back by the swept model names
