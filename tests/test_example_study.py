"""The example study (docs/adding_a_study.md) runs on the in-process simulator and rescores alone."""

from __future__ import annotations

import asyncio

from psit_lib.runs import Experiment
from psit_lib.studies.registry import params_model, study


def test_example_study_runs_and_rescore_reproduces_its_table(tmp_path, monkeypatch):
    example = study("example")
    notebook = "90_example_reveal_probe"
    params = params_model(notebook)(n_episodes=3)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run",
                     prompts=example.prompt_catalogue())
    run = asyncio.run(example.run(exp, params))
    assert len(run.main) == 6 and all(r.status == "ok" for r in run.main)
    assert run.scores["consistent"].map(type).eq(bool).all() and "consistent.pattern_length" in run.scores
    table = run.tables["consistency"]
    assert list(table["length"]) == [4, 6] and table["n_scored"].sum() == 6
    assert (exp.store.tables_dir / "consistency.csv").is_file()  # the study wrote its table

    def refuse(*args, **kwargs):
        raise AssertionError("rescoring must not build a model client")

    monkeypatch.setattr("psit_lib.runs.experiment.make_client", refuse)
    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)
    for rescored in (example.rescore(exp.store.dir), example.rescore(exp.store.dir, ["consistent"])):
        assert rescored.tables["consistency"].equals(table)
    assert example.differences() and example.notebook(notebook).table_names == ["consistency"]
