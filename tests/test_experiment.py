"""Experiment-level guarantees: a re-executed notebook makes zero model calls (resume or
cache), a replay-only run stops on a miss naming the request, provenance is recorded."""

from __future__ import annotations

import json

import pytest

from psit_lib.llm import CacheMissError, LLMSettings
from fork_rows import fork_rows
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.runs import Experiment
from psit_lib.studies.psit.tasks.hangman import HangmanTask

PARAMS = ForkTestParams(agents=["vanilla", "workflow_overwrite"], n_episodes=2)


async def _execute(tmp_path, cache="rw", fresh=False):
    exp = Experiment("02_test", PARAMS.model_dump(), seed=0, settings=LLMSettings(cache=cache),
                     run_dir=tmp_path / "run")
    if fresh:
        (exp.store.dir / "episodes.jsonl").unlink(missing_ok=True)
    task = HangmanTask()
    records = await exp.run(plan_fork_episodes(task, PARAMS, exp.models), fork_episode_fn(task, PARAMS),
                            progress=False)
    return exp.finish(), fork_rows(records)


async def test_second_execution_makes_zero_model_calls(tmp_path):
    first, table1 = await _execute(tmp_path)
    assert first["model_calls"] > 0
    resumed, table2 = await _execute(tmp_path)
    assert resumed["model_calls"] == 0
    from_cache, table3 = await _execute(tmp_path, fresh=True)
    assert from_cache["model_calls"] == 0 and from_cache["cache_hits"] == first["model_calls"]
    assert table1.equals(table2) and table1.equals(table3)
    meta = json.loads((tmp_path / "run" / "02_test" / "metadata.json").read_text())
    assert [e["model_calls"] for e in meta["executions"]] == [first["model_calls"], 0, 0]
    assert meta["simulated"] is True and meta["backend"] == "sim" and meta["profile"] == "default"


@pytest.mark.slow
async def test_counters_cover_every_run_of_the_notebook_and_record_the_models_run(tmp_path):
    """A notebook runs its main episodes, then sweeps: finish() counts both, and a resume counts
    what it did not redo; the metadata names the models the episodes ran with."""
    task, fn = HangmanTask(), fork_episode_fn(HangmanTask(), PARAMS)

    async def execute():
        exp = Experiment("02_test", PARAMS.model_dump(), seed=0, settings=LLMSettings(cache="off"),
                         run_dir=tmp_path / "run")
        await exp.run(plan_fork_episodes(task, PARAMS, exp.models), fn, progress=False)
        sweep = exp.sweep_models("unheld_secret", ["deny"])
        await exp.run(plan_fork_episodes(task, PARAMS, list(sweep.values())), fn, progress=False)
        return exp.finish(), exp.metadata

    first, meta = await execute()
    assert (first["episodes_planned"], first["episodes_run"], first["episodes_resumed"]) == (8, 8, 0)
    assert meta.models_run == ["psit-sim", "psit-sim:default,unheld_secret=deny"]
    again, _ = await execute()
    assert (again["episodes_planned"], again["episodes_run"], again["episodes_resumed"]) == (8, 0, 8)


async def test_replay_only_run_stops_on_a_missing_entry(tmp_path):
    with pytest.raises(CacheMissError, match=r"no entry for role='hangman_host'"):
        await _execute(tmp_path, cache="replay")


@pytest.mark.slow
async def test_same_seed_same_table_different_seed_different_table(tmp_path):
    _, a = await _execute(tmp_path / "a", cache="off")
    _, b = await _execute(tmp_path / "b", cache="off")
    assert a.equals(b)
    other = Experiment("02_test", PARAMS.model_dump(), seed=1, settings=LLMSettings(cache="off"),
                       run_dir=tmp_path / "c")
    task = HangmanTask()
    c = fork_rows(await other.run(plan_fork_episodes(task, PARAMS, other.models), fork_episode_fn(task, PARAMS),
                                   progress=False))
    assert list(c["revealed"]) != list(a["revealed"])


async def _configuration(tmp_path, name, profile, prompts):
    exp = Experiment("02_test", PARAMS.model_dump(), seed=0, settings=LLMSettings(cache="off", sim_profile=profile),
                     run_dir=tmp_path / name, prompts=prompts)
    task = HangmanTask()
    await exp.run(plan_fork_episodes(task, PARAMS, exp.models), fork_episode_fn(task, PARAMS), progress=False)
    exp.finish()
    meta = json.loads((tmp_path / name / "02_test" / "metadata.json").read_text())
    return {"simulator": meta["simulator"], "prompts": meta["prompts"]}


@pytest.mark.slow
async def test_run_metadata_identifies_the_configuration(tmp_path):
    from psit_lib.studies.psit.catalogue import prompt_catalogue

    prompts = prompt_catalogue()
    first = await _configuration(tmp_path, "a", "default", prompts)
    again = await _configuration(tmp_path, "b", "default", prompts)
    agreeable = await _configuration(tmp_path, "c", "agreeable", prompts)
    reworded = await _configuration(tmp_path, "d", "default", {**prompts, "hangman.confirm": "Is it <X>?"})
    assert first == again
    assert first["simulator"]["knobs"]["unheld_secret"] == "reimagine"
    assert agreeable["simulator"]["knobs"]["unheld_secret"] == "play_along" and agreeable != first
    assert {"hangman_host", "memory_updater"} <= set(first["simulator"]["roles"])
    assert first["simulator"]["roles"]["hangman_host"]["re-imagining pool"] == 400
    assert reworded["prompts"]["hangman.confirm"] != first["prompts"]["hangman.confirm"]
    assert {k: v for k, v in reworded["prompts"].items() if k != "hangman.confirm"} == \
        {k: v for k, v in first["prompts"].items() if k != "hangman.confirm"}
