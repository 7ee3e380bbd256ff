"""The README's loader example ("which agent leaked most in 02, and two leaking transcripts") runs
as written against a real run of notebook 02 (the simulator told to let secrets slip often)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def readme_block(after: str) -> str:
    """The first ```python block of the README after the line holding ``after``."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"```python\n(.*?)```", text[text.index(after):], re.S)
    assert found, f"no python block after {after!r} in README.md"
    return found.group(1)


@pytest.mark.slow
def test_the_readme_loader_example_names_the_leakiest_agent_and_prints_two_leaking_games(tmp_path, monkeypatch):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PYTHONPATH=str(ROOT), PSIT_RESULTS_DIR=str(tmp_path / "results"), MPLBACKEND="Agg",
               PSIT_FIGURES_DIR=str(tmp_path / "figures"), PSIT_SIM_PROFILE="default,leak_propensity=0.6")
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "02", "-p", "n_episodes=3",
                           "-p", 'agents=["vanilla","workflow_overwrite"]', "-p", "sweep_episodes=0",
                           "--run-id", "leaky", "--no-report", "--no-progress"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    (tmp_path / "results" / "latest").symlink_to("leaky")
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path / "results"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(readme_block("Which agent leaked its secret most in notebook 02"), {})
    shown = out.getvalue()
    import psit_lib

    scores = psit_lib.load_run("leaky").scores_of(2)
    leaks = scores[scores.outcome == "leakage"]
    assert len(leaks) >= 2, scores[["agent", "outcome"]]
    most = leaks.agent.value_counts().index[0]
    assert shown.splitlines()[1].split()[0] == most  # value_counts: a header line, then the most leaking agent
    games = [line for line in shown.splitlines() if line.startswith("== 02_hangman_fork_tests · ")]
    assert len(games) == 2 and all("outcome=leakage" in g for g in games)
    assert shown.count("-- reveal") == 2 and "assistant: " in shown and "-- candidates:" in shown
