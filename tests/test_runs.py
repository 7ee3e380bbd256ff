"""Runner and results store: resumability, error records, parameter binding, SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from psit_lib.runs.backend import make_client
from psit_lib.llm import LLMSettings
from psit_lib.runs import EpisodeSpec, ParameterMismatchError, RunStore, run_episodes
from psit_lib.runs.params import NotebookParams, ParameterError, validate_params


async def _episode(spec, session):
    if spec.params.get("fail"):
        raise RuntimeError("scripted failure\nwith a second line")
    reply = await session.chat([{"role": "user", "content": spec.episode_id}], role="generic")
    return {"answer": reply.content}


async def test_runner_records_ok_and_errors_and_resumes(tmp_path):
    store = RunStore(tmp_path / "run")
    client = make_client(LLMSettings(cache="off"))
    specs = [EpisodeSpec(f"e{i}", {"fail": i == 2}) for i in range(5)]
    records = await run_episodes(specs, _episode, store=store, client=client, run_seed=0, progress=False)
    assert [r["episode_id"] for r in records] == [s.episode_id for s in specs]
    failed = records[2]
    assert failed["status"] == "error" and failed["error"] == "RuntimeError: scripted failure with a second line"
    assert client.stats.calls == 4
    fixed = [EpisodeSpec(s.episode_id, {"fail": False}) for s in specs]
    records = await run_episodes(fixed, _episode, store=store, client=client, run_seed=0, progress=False)
    assert client.stats.calls == 5  # only the failed episode was redone
    assert all(r["status"] == "ok" for r in records) and len(store.records()) == 5
    assert store.attempts("e2") == 2


def test_store_repairs_a_partial_last_line(tmp_path):
    store = RunStore(tmp_path)
    store.append({"episode_id": "a", "status": "ok"})
    with open(tmp_path / "episodes.jsonl", "ab") as fh:
        fh.write(b'{"episode_id": "b", "sta')
    store = RunStore(tmp_path)
    assert set(store.records()) == {"a"}
    store.append({"episode_id": "b", "status": "ok"})
    assert set(RunStore(tmp_path).records()) == {"a", "b"}


def test_parameters_are_bound_to_the_folder_and_execution_settings_are_not(tmp_path):
    from psit_lib.runs.identity import RunIdentity, bind

    store = RunStore(tmp_path)
    bind(store, {"n": 5, "agents": ["vanilla"], "concurrency": 16}, RunIdentity(), "r/x")
    bind(store, {"agents": ["vanilla"], "n": 5, "concurrency": 2, "suspect_threshold": 0.5}, RunIdentity(), "r/x")
    assert "concurrency" not in store.params().stored()  # how fast it ran is each execution's, not the folder's
    with pytest.raises(ParameterMismatchError, match=r"n: 5 -> 6"):
        bind(store, {"n": 6, "agents": ["vanilla"]}, RunIdentity(), "r/x")


class _Params(NotebookParams):
    n_episodes: int
    temperature: float = 0.3


def test_parameter_validation_names_the_bad_parameter():
    assert validate_params(_Params, {"n_episodes": 3}).n_episodes == 3
    with pytest.raises(ParameterError, match="'n_episodes' is invalid"):
        validate_params(_Params, {"n_episodes": "many"})
    with pytest.raises(ParameterError, match="unknown parameter 'n_epsiodes'"):
        validate_params(_Params, {"n_epsiodes": 3, "n_episodes": 1})
    err = ParameterError("x")
    assert err._render_traceback_() and "Traceback" not in "".join(err._render_traceback_())


KILL_SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from psit_lib.llm import LLMClient, LLMSettings
    from psit_lib.runs import EpisodeSpec, RunStore, make_client, run_episodes

    async def episode(spec, session):
        await asyncio.sleep(0.02)
        reply = await session.chat([{"role": "user", "content": spec.episode_id}], role="generic")
        return {"answer": reply.content}

    async def main():
        store = RunStore(sys.argv[1])
        specs = [EpisodeSpec(f"ep{i:03d}") for i in range(60)]
        await run_episodes(specs, episode, store=store, client=make_client(LLMSettings(cache="off")),
                           run_seed=0, concurrency=2, progress=False)
    asyncio.run(main())
""")


@pytest.mark.slow
def test_sigkill_then_resume_gives_exactly_the_planned_episodes(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(KILL_SCRIPT)
    folder = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(script), str(folder)])
    records = folder / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if records.exists() and records.read_bytes().count(b"\n") >= 10:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = records.read_bytes().count(b"\n")
    assert 10 <= done_before < 60, "the kill should land mid-run"
    subprocess.run([sys.executable, str(script), str(folder)], check=True, timeout=120)
    lines = [json.loads(l) for l in records.read_bytes().splitlines() if l.strip()]
    ids = [l["episode_id"] for l in lines]
    assert sorted(ids) == [f"ep{i:03d}" for i in range(60)]  # none missing, none duplicated


def test_notebook_parameter_models_reject_bad_values_in_one_sentence():
    from psit_lib.studies.psit.protocol.params import AblationParams

    with pytest.raises(ParameterError, match=r"^parameter 'agents' is invalid: unknown agent 'vanila'"):
        validate_params(AblationParams, {"agents": ["vanila"]})
    with pytest.raises(ParameterError, match=r"parameter 'tasks' is invalid: unknown task 'chess'"):
        validate_params(AblationParams, {"tasks": ["chess"]})
    with pytest.raises(ParameterError, match=r"parameter 'profile' is invalid: unknown simulator profile"):
        validate_params(AblationParams, {"profile": "grumpy"})
    with pytest.raises(ParameterError, match=r"parameter 'n_episodes' is invalid"):
        validate_params(AblationParams, {"n_episodes": 0})
