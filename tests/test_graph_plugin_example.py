"""The documented example of a researcher's own LangGraph graph (docs/examples/scratchpad_agent.py)
runs in notebook 02 beside vanilla, loaded by ``PSIT_PLUGINS``, with its checkpoints kept on disk;
after the run, one of its episodes is reopened at a turn and forked again with LangGraph's API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from psit_lib.runs.load import load_run
from psit_lib.studies.psit.protocol.reopen import reopen_episode

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "scratchpad_agent.py"
NB = "02_hangman_fork_tests"

pytestmark = pytest.mark.slow  # starts `psit run` and a kernel


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("graph-plugin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
               PSIT_RESULTS_DIR=str(base / "results"), PSIT_FIGURES_DIR=str(base / "figures"),
               PSIT_PLUGINS=str(EXAMPLE), PSIT_CHECKPOINTS="sqlite", MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "02", "-p", "n_episodes=2",
                           "-p", 'agents=["vanilla","scratchpad"]', "-p", "sweep_episodes=0", "--run-id", "graph",
                           "--no-report", "--no-progress"], capture_output=True, text=True, env=env, cwd=base,
                          timeout=900)
    return base / "results" / "graph", done


def test_the_example_graph_runs_in_02_beside_vanilla(example_run):
    run_dir, done = example_run
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in (run_dir / NB / "episodes.jsonl").read_text().splitlines()]
    assert sorted({r["spec"]["agent"] for r in records}) == ["scratchpad", "vanilla"]
    assert all(r["status"] == "ok" for r in records)
    mine = [r["result"] for r in records if r["spec"]["agent"] == "scratchpad"]
    assert all(r["private_state_per_turn"][-1] and r["state_size_per_turn"][-1] > 0 for r in mine)
    assert all(r["thread_id"] and len(r["turn_checkpoints"]) == 4 for r in mine)
    table = pd.read_csv(run_dir / NB / "tables" / "self_consistency.csv")
    assert set(table["agent"]) == {"scratchpad", "vanilla"}


async def test_an_episode_of_the_example_reopens_at_a_turn_and_forks_again(example_run, monkeypatch):
    run_dir, done = example_run
    assert done.returncode == 0, done.stderr[-2000:]
    monkeypatch.setenv("PSIT_PLUGINS", str(EXAMPLE))
    run = load_run(run_dir)
    episode_id = next(e for e in run.episodes["episode_id"] if "/scratchpad/" in e)
    async with reopen_episode(run, "02", episode_id) as episode:
        first = await episode.graph.aget_state(episode.config(turn=1))
        assert first.values["scratchpad"] == episode.record.private_state_per_turn[0]
        again = await episode.agent.send(episode.record.reveal.question, episode.session("again"),
                                         checkpoint_id=episode.fork_id)
        assert again.checkpoint.parent == episode.fork_id and again.reply
