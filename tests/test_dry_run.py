"""``psit run --dry-run``: the planned episodes and their estimated cost, with nothing run."""

from __future__ import annotations

import pytest

import json
import subprocess
import sys
import time
from pathlib import Path

from psit_lib.cli.estimate import episode_key, estimate_notebook, load_call_model

ROOT = Path(__file__).resolve().parents[1]


def _psit(tmp_path, *args):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "--dry-run", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    return done, time.monotonic() - started


@pytest.mark.slow
def test_the_study_scale_estimate_runs_nothing_and_names_every_notebook(tmp_path):
    done, seconds = _psit(tmp_path, "-f", "notebooks/params/study_scale.yaml")
    assert done.returncode == 0, done.stderr
    print(f"\n[dry run at study scale: {seconds:.1f} s]\n{done.stdout}")
    assert seconds < 30
    lines = {line.split()[0]: line.split() for line in done.stdout.splitlines() if line[:2].isdigit()}
    assert sorted(lines) == sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert int(lines["02_hangman_fork_tests"][1]) == 8 * 50 + 2 * 6 * 3  # 8 agents x 50, sweep 2 x 6 x 3 values
    assert int(float(lines["05_acc_judge_evaluation"][2])) > 0 and "prompt tok" in done.stdout
    assert not (tmp_path / "results").exists()  # nothing ran, nothing was written


def test_an_estimate_is_the_plan_times_the_measured_cost_of_each_kind_of_episode():
    call_model = load_call_model()
    values = {"agents": ["vanilla", "private_cot"], "n_episodes": 3, "sweep_episodes": 0}
    found = estimate_notebook("02_hangman_fork_tests", values, ["psit-sim"], True, call_model)
    table = call_model["per_unit"]["02_hangman_fork_tests"]
    expected = 3 * (table[episode_key({"task": "hangman", "agent": "vanilla"})]["calls"]
                    + table[episode_key({"task": "hangman", "agent": "private_cot"})]["calls"])
    assert found.episodes == 6 and abs(found.calls - expected) < 1e-6 and not found.note


def test_the_call_model_says_when_and_where_it_was_measured():
    model = json.loads((ROOT / "data" / "call_model.json").read_text())
    assert model["measured"] and model["commit"] and model["backend"] == "sim"
    assert set(model["run_commits"]) == set(model["per_unit"])
