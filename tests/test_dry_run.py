"""``psit run --dry-run``: the planned episodes and their estimated cost, with nothing run."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

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


def test_a_two_episode_run_of_02_scales_its_sweep_down_and_the_default_plan_keeps_it():
    from psit_lib.cli.notebooks import default_values

    call_model = load_call_model()
    defaults = default_values(ROOT / "notebooks" / "02_hangman_fork_tests.ipynb")
    full = estimate_notebook("02_hangman_fork_tests", defaults, ["psit-sim"], True, call_model)
    quick = estimate_notebook("02_hangman_fork_tests", {**defaults, "n_episodes": 2}, ["psit-sim"], True, call_model)
    agents = len(defaults["agents"])
    # default: 10 per agent, sweep 6 per (agent, value) of 2 agents x 3 values; quick: 2 per agent, 1 per value
    assert (full.by_model["psit-sim"].episodes, full.by_model["simulator sweeps"].episodes) == (agents * 10, 36)
    assert (quick.by_model["psit-sim"].episodes, quick.by_model["simulator sweeps"].episodes) == (agents * 2, 6)


@given(size=st.integers(0, 50), full=st.integers(1, 60), n=st.integers(1, 200))
def test_a_sweep_shrinks_in_proportion_never_to_nothing_and_never_grows(size, full, n):
    from psit_lib.runs.sweeps import scaled_sweep_size

    scaled = scaled_sweep_size(size, n, full)
    assert scaled == size if n >= full or size == 0 else 1 <= scaled <= size
    assert scaled <= max(1, size * n / full) or n >= full
