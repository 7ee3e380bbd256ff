"""A researcher's own agent runs in notebook 02 from a plug-in module (no edit to psit_lib), and
the run opens outside the notebooks with ``psit_lib.load_run``: episodes, scores, tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import psit_lib
from psit_lib.cli import main
from psit_lib.runs.load import RunNotFoundError
from psit_lib.runs.plugins import PluginError, load_plugins

ROOT = Path(__file__).resolve().parents[1]
NB = "02_hangman_fork_tests"

PLUGIN = '''"""A researcher's agent family: the private-CoT agent under the name 'mine'."""
from psit_lib.studies.psit.agents.names import register_agent_family
from psit_lib.studies.psit.tasks.registry import register_task


def build(name, system_prompt, host_role):
    from psit_lib.studies.psit.agents.factory import build_agent

    return build_agent("private_cot", system_prompt=system_prompt, host_role=host_role)


def hangman_again(condition_choice):
    from psit_lib.studies.psit.tasks.hangman import HangmanTask

    return HangmanTask()


register_agent_family("mine", build)
register_task("my_hangman", hangman_again)
'''


def _psit(*args: str, env_extra: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])), **env_extra)
    return subprocess.run([sys.executable, "-m", "psit_lib.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=900)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """``psit run 02`` with a plug-in agent beside vanilla, two episodes each, no sweep."""
    base = tmp_path_factory.mktemp("plugged")
    (base / "my_agents.py").write_text(PLUGIN)
    env = {"PSIT_RESULTS_DIR": str(base / "results"), "PSIT_FIGURES_DIR": str(base / "figures"),
           "PSIT_PLUGINS": "my_agents.py", "MPLBACKEND": "Agg"}
    done = _psit("run", "02", "-p", "n_episodes=2", "-p", 'agents=["vanilla","mine"]', "-p", "sweep_episodes=0",
                 "--run-id", "small", "--no-report", "--no-progress", env_extra=env, cwd=base)
    return base, done


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
def test_a_plugin_agent_runs_in_notebook_02_without_editing_psit_lib(small_run):
    base, done = small_run
    assert done.returncode == 0, done.stderr[-2000:]
    folder = base / "results" / "small" / NB
    records = [json.loads(line) for line in (folder / "episodes.jsonl").read_text().splitlines()]
    assert sorted({r["spec"]["agent"] for r in records}) == ["mine", "vanilla"]
    assert all(r["status"] == "ok" for r in records)
    table = pd.read_csv(folder / "tables" / "self_consistency.csv")
    assert set(table["agent"]) == {"mine", "vanilla"}


@pytest.mark.slow  # its fixture runs psit run (the fast tier: -m 'not slow')
def test_load_run_gives_episodes_scores_and_tables_as_frames(small_run, monkeypatch):
    base, done = small_run
    assert done.returncode == 0, done.stderr[-2000:]
    folder = base / "results" / "small" / NB
    if not (folder / "scores.jsonl").exists():  # written by the scoring chain; by hand until 02 is on it
        lines = [{"episode_id": json.loads(line)["episode_id"], "part": "main", "scorer": "consistent",
                  "version": 1, "value": i % 2 == 0, "explanation": "", "metadata": {"forks": 5}}
                 for i, line in enumerate((folder / "episodes.jsonl").read_text().splitlines())]
        (folder / "scores.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(base / "results"))
    run = psit_lib.load_run("small")
    assert run.notebooks == [NB] and run.run_id == "small"
    episodes = run.episodes
    assert len(episodes) == 4 and list(episodes.columns[:5]) == ["notebook", "part", "episode_id", "status", "error"]
    assert {"agent", "model", "task", "usage.calls", "usage.prompt_tokens"} <= set(episodes.columns)
    assert (episodes["usage.calls"] > 0).all() and set(episodes["agent"]) == {"mine", "vanilla"}
    scores = run.scores
    lines = run.folder("02").score_lines()
    scorers = {scorer for _, scorer in lines}
    assert scorers and scorers <= set(scores.columns) and len(scores) == len({eid for eid, _ in lines})
    assert list(scores.columns[:3]) == ["notebook", "episode_id", "part"] and "agent" in scores.columns
    assert set(scores["episode_id"]) <= set(episodes["episode_id"])
    saved = pd.read_csv(folder / "tables" / "self_consistency.csv")
    pd.testing.assert_frame_equal(run.tables[NB]["self_consistency"].reset_index(drop=True), saved,
                                  check_dtype=False)
    assert run.params[NB]["n_episodes"] == 2 and run.identity[NB]["prompts_file"] == "none"
    assert len(run.fingerprint[NB]) == 16
    assert run.metadata[NB]["notebook"] == NB
    assert psit_lib.load_run(folder).notebooks == [NB]  # a notebook's own folder opens too
    with pytest.raises(RunNotFoundError, match="no run 'nope'"):
        psit_lib.load_run("nope")


def test_latest_is_resolved_under_the_results_root(tmp_path, monkeypatch):
    run_dir = tmp_path / "results" / "r9" / "98_x"
    run_dir.mkdir(parents=True)
    (run_dir / "episodes.jsonl").write_text(json.dumps({"episode_id": "e0", "status": "ok", "spec": {"k": 1},
                                                        "usage": {"calls": 2}}) + "\n")
    (tmp_path / "results" / "latest").symlink_to("r9")
    run = psit_lib.load_run("latest")
    assert run.run_id == "r9" and run.episodes["k"].tolist() == [1] and run.scores.empty and run.tables == {"98_x": {}}
    assert run.episodes["part"].isna().all()  # no parts recorded, no scores: the part is not guessed


# -- plug-in loading ----------------------------------------------------------------------------

def test_a_plugin_that_fails_is_one_sentence_and_psit_run_exits_2(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken_plugin.py").write_text("raise RuntimeError('no such model family')\n")
    with pytest.raises(PluginError, match=r"PSIT_PLUGINS: the plug-in '.*broken_plugin.py' failed to load: "
                                          r"RuntimeError: no such model family"):
        load_plugins(str(tmp_path / "broken_plugin.py"))
    monkeypatch.setenv("PSIT_PLUGINS", "no_such_module_xyz")
    assert main(["run", "02", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'no_such_module_xyz' failed to load: ModuleNotFoundError" in err


def test_a_plugin_task_and_agent_are_names_parameters_accept(tmp_path, monkeypatch):
    from psit_lib.runs.params import ParameterError, validate_params
    from psit_lib.studies.psit.protocol.params import AblationParams
    from psit_lib.studies.psit.tasks.registry import known_tasks, make_task

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "more_agents.py").write_text(PLUGIN.replace('"mine"', '"theirs"').replace('"my_hangman"', '"their_task"'))
    with pytest.raises(ParameterError, match="unknown task 'their_task'"):
        validate_params(AblationParams, {"tasks": ["their_task"]})
    monkeypatch.setenv("PSIT_PLUGINS", "more_agents")
    params = validate_params(AblationParams, {"tasks": ["their_task"], "agents": ["theirs"]})
    assert params.tasks == ["their_task"] and "their_task" in known_tasks()
    assert make_task("their_task").name == "hangman"


# -- studies register themselves ----------------------------------------------------------------

def test_every_notebook_is_registered_by_its_study_folder_and_every_registration_has_a_notebook():
    from psit_lib.studies import registry

    stems = {p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    assert set(registry.notebooks()) == stems
    assert {"psit", "acc", "basis", "example"} <= set(registry.studies())
    assert registry.params_model("90_example_reveal_probe").__name__ == "ProbeParams"
    assert registry.runs_after()["07_secret_distribution_mode_collapse"] == ("02_hangman_fork_tests",
                                                                             "03_diagnosis_ddxplus",
                                                                             "04_memory_strategy_ablations")


def test_a_plugin_registers_a_study_of_its_own(monkeypatch):
    from psit_lib.studies import registry

    for key in ("STUDIES", "NOTEBOOKS", "RUNS_AFTER"):
        monkeypatch.setitem(registry._PLUGGED, key, {})
    registry.register_study("mine", "psit_lib.studies.example.study:STUDY",
                            {"91_my_probe": "psit_lib.studies.example.study:ProbeParams"})
    assert registry.study_of("91_my_probe") is registry.study("example")
    assert registry.params_model("91_my_probe").__name__ == "ProbeParams"
    with pytest.raises(KeyError, match="no study 'nobody'; the studies are .*mine"):
        registry.study("nobody")


def test_importing_psit_lib_loads_nothing_heavy_until_load_run_is_used():
    code = ("import sys, psit_lib; heavy = [m for m in ('pandas', 'openai', 'langgraph') if m in sys.modules]; "
            "psit_lib.load_run; print(heavy, 'pandas' in sys.modules or 'psit_lib.runs.load' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "[] True", out.stderr


def test_an_entry_point_plugin_is_loaded_and_a_function_entry_is_called(monkeypatch):
    from importlib import metadata

    from psit_lib.runs import plugins

    calls = []

    class EntryPoint:
        name, value = "theirs", "their_package.plugin:register"

        def load(self):
            return lambda: calls.append("registered")

    monkeypatch.setattr(plugins, "_loaded", {})
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group: [EntryPoint()] if group == plugins.ENTRY_POINT_GROUP else [])
    assert plugins.load_plugins("") == {"entry point theirs": "their_package.plugin:register"}
    plugins.load_plugins("")
    assert calls == ["registered"]  # once per process
