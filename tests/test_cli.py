"""The psit command line: parameter checking, headless execution, the report."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from psit_lib.cli import main


def _tiny_notebook(folder):
    nb = new_notebook(cells=[
        new_markdown_cell("# 98 · Tiny"),
        new_code_cell("x = 1\nname = 'a'", metadata={"tags": ["parameters"]}),
        new_code_cell("print(f'x={x} name={name}')"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "98_tiny.ipynb")


def test_unknown_parameter_is_rejected_before_running(tmp_path, monkeypatch, capsys):
    _tiny_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    assert main(["run", "98", "-p", "n_epsiodes=5"]) == 2
    assert "no selected notebook has parameter(s) n_epsiodes" in capsys.readouterr().err
    assert main(["run", "97"]) == 2
    assert "no single notebook matches '97'" in capsys.readouterr().err


@pytest.mark.slow
def test_run_executes_with_parameters_and_report_renders(tmp_path, monkeypatch):
    _tiny_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    params = tmp_path / "p.yaml"
    params.write_text("98_tiny:\n  name: from-file\n")
    assert main(["run", "98", "-f", str(params), "-p", "x=7", "--run-id", "r1", "--no-progress"]) == 0
    executed = json.loads((tmp_path / "results" / "r1" / "notebooks" / "98_tiny.ipynb").read_text())
    outputs = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert "x=7 name=from-file" in outputs
    assert main(["report", "--run-id", "r1"]) == 0
    index = (tmp_path / "results" / "r1" / "report" / "index.html").read_text()
    assert "98_tiny.html" in index and "98 · Tiny" in index


# -- never report a broken run as done -------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def _psit(*args, env_extra=None, tmp_path=None, timeout=60):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"),
               **(env_extra or {}))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)
    return done, time.monotonic() - started


@pytest.mark.slow
def test_a_closed_port_or_a_bogus_profile_stops_before_any_kernel_in_one_line(tmp_path):
    closed, seconds = _psit("run", "02", "-p", "n_episodes=1", tmp_path=tmp_path,
                            env_extra={"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://127.0.0.1:9/v1",
                                       "PSIT_MODEL": "qwen3-32b"})
    assert closed.returncode == 2 and seconds < 5
    assert closed.stderr.count("\n") == 1 and "PSIT_BASE_URLS: http://127.0.0.1:9/v1 does not answer" in closed.stderr
    bogus, seconds = _psit("run", "02", tmp_path=tmp_path, env_extra={"PSIT_SIM_PROFILE": "bogus"})
    assert bogus.returncode == 2 and seconds < 5 and bogus.stderr.startswith("psit: PSIT_SIM_PROFILE:")
    nonsense, _ = _psit("run", tmp_path=tmp_path, env_extra={"PSIT_BACKEND": "nonsense"})
    assert nonsense.returncode == 2 and "PSIT_BACKEND='nonsense' is not valid" in nonsense.stderr
    assert not (tmp_path / "results").exists()  # nothing ran


def test_a_model_the_server_does_not_serve_is_named(tmp_path, sim_server_url):
    from psit_lib.cli.errors import CliError
    from psit_lib.cli.preflight import check_settings

    env = {"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": sim_server_url, "PSIT_MODEL": "qwen3-32b"}
    try:
        check_settings(env)
    except CliError as exc:
        assert "PSIT_MODEL='qwen3-32b' is not served" in str(exc) and "psit-sim" in str(exc)
    else:
        raise AssertionError("an unserved model passed the pre-flight")
    assert check_settings({**env, "PSIT_MODEL": "psit-sim:agreeable"}).model == "psit-sim:agreeable"


FAILING = """
import asyncio
from psit_lib.runs import Experiment, EpisodeSpec
exp = Experiment("97_flaky", {"n": n}, seed=0)
async def episode(spec, session):
    if spec.params["i"] % 2:
        raise RuntimeError("endpoint gave up")
    reply = await session.chat([{"role": "user", "content": "hi"}], role="generic")
    return {"answer": reply.content}
records = await exp.run([EpisodeSpec(f"e{i}", {"i": i}) for i in range(n)], episode, progress=False)
exp.save_table(__import__("pandas").DataFrame({"i": [1, 2], "x": [n, n]}), "key")
exp.finish()
"""


def _flaky_notebook(folder):
    nb = new_notebook(cells=[new_code_cell("n = 4", metadata={"tags": ["parameters"]}), new_code_cell(FAILING)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "97_flaky.ipynb")


@pytest.mark.slow
def test_failed_episodes_exit_non_zero_keep_latest_and_say_how_to_retry(tmp_path, monkeypatch, capsys):
    _flaky_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    assert main(["run", "97", "--run-id", "r1", "--no-progress"]) == 1
    err = capsys.readouterr()
    assert "2 episode(s) failed" in err.err and "--run-id r1" in err.err and "retries exactly those" in err.err
    assert "episodes failed" in err.out  # the summary table's status
    assert not (tmp_path / "results" / "latest").exists()
    run = json.loads((tmp_path / "results" / "r1" / "run.json").read_text())
    assert run["complete"] is False and run["notebooks"][0]["failed"] == 2


@pytest.mark.slow
def test_compare_shows_configuration_and_table_differences(tmp_path, monkeypatch, capsys):
    _flaky_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    main(["run", "97", "--run-id", "a", "--no-progress"])
    main(["run", "97", "-p", "n=6", "--run-id", "b", "--no-progress"])
    capsys.readouterr()
    assert main(["compare", "a", "b"]) == 0
    out = capsys.readouterr().out
    assert "param.n: 4 | 6" in out and "key.csv: differs" in out
    table = tmp_path / "results" / "a" / "97_flaky" / "tables"
    assert (table / "key.csv").exists() and (table / "key.parquet").exists()


def test_list_version_selection_and_flat_params_files(tmp_path, monkeypatch, capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "02_hangman_fork_tests" in listing and "(study: 50)" in listing
    try:
        main(["--version"])
    except SystemExit as exc:
        assert exc.code == 0
    assert capsys.readouterr().out.startswith("psit ")
    from psit_lib.cli.notebooks import load_params, resolve_notebooks

    assert [p.stem for p in resolve_notebooks(["2", "05"])] == ["02_hangman_fork_tests", "05_acc_judge_evaluation"]
    flat = tmp_path / "flat.yaml"
    flat.write_text("n_episodes: 2\nn_turns: 3\n")
    params = load_params(str(flat), [], resolve_notebooks(["02", "05"]))
    assert params["02_hangman_fork_tests"] == {"n_episodes": 2} and params["05_acc_judge_evaluation"] == {"n_turns": 3}
    flat.write_text("n_episods: 2\n")
    with pytest.raises(Exception, match="no selected notebook has parameter.*n_episods"):
        load_params(str(flat), [], resolve_notebooks(["02"]))
    flat.write_text("02_hangman_fork_test:\n  n_episodes: 2\n")
    with pytest.raises(Exception, match="did you mean '02_hangman_fork_tests'"):
        load_params(str(flat), [], resolve_notebooks(["02"]))
    # -p wins over the file, over its notebook sections too (the study-scale file with a smaller size)
    flat.write_text("all:\n  seed: 3\n02_hangman_fork_tests:\n  n_episodes: 50\n  seed: 4\n")
    params = load_params(str(flat), ["n_episodes=2"], resolve_notebooks(["02"]))
    assert params["02_hangman_fork_tests"] == {"n_episodes": 2, "seed": 4}


SLOW = """
import asyncio, os, pathlib
pathlib.Path(pid_file).write_text(str(os.getpid()))
from psit_lib.runs import Experiment, EpisodeSpec
exp = Experiment("96_slow", {"n": n}, seed=0)
async def episode(spec, session):
    await asyncio.sleep(1.0)
    return {"answer": "ok"}
records = await exp.run([EpisodeSpec(f"e{i}", {"i": i}) for i in range(n)], episode, concurrency=4)
exp.finish()
"""


@pytest.mark.slow
def test_sigterm_stops_a_run_like_ctrl_c_with_the_resume_command(tmp_path):
    """``kill <pid>`` in the middle of a notebook: the resume message, exit status 143, and the
    notebook's kernel shut down (not left running)."""
    import os
    import queue
    import signal
    import threading

    nb = new_notebook(cells=[new_code_cell("n = 400\npid_file = ''", metadata={"tags": ["parameters"]}),
                             new_code_cell(SLOW)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "nbs").mkdir()
    nbformat.write(nb, tmp_path / "nbs" / "96_slow.ipynb")
    pid_file = tmp_path / "kernel.pid"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"),
               PSIT_NOTEBOOKS_DIR=str(tmp_path / "nbs"))
    proc = subprocess.Popen([sys.executable, "-m", "psit_lib.cli", "run", "96", "-p", f"pid_file={pid_file}",
                             "--run-id", "r1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    err = []
    try:
        deadline = time.monotonic() + 90
        while not any(" main " in line for line in err):  # the first progress line
            assert time.monotonic() < deadline and proc.poll() is None, "".join(err)
            try:
                err.append(lines.get(timeout=0.5))
            except queue.Empty:
                pass
        kernel = int(pid_file.read_text())
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.2)
    while not lines.empty():
        err.append(lines.get())
    text = "".join(err)
    assert code == 143, text
    assert "psit: interrupted; finished episodes are saved. Resume with: psit run 96" in text
    assert "--run-id r1" in text and "Traceback" not in text and "IPKernelApp" not in text  # kernel logs: kernel.log
    try:
        os.kill(kernel, 0)
    except ProcessLookupError:
        pass
    else:  # a zombie not yet reaped by init counts as gone
        status = Path(f"/proc/{kernel}/status").read_text() if Path(f"/proc/{kernel}/status").exists() else ""
        assert "zombie" in status, f"the kernel (pid {kernel}) was left running"


def test_sigterm_inside_the_guard_is_a_keyboard_interrupt_with_status_143():
    import os
    import signal

    from psit_lib.cli.signals import Terminated, terminate_as_interrupt

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt) as caught:
        with terminate_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler runs at the next bytecode; never reached
    assert isinstance(caught.value, Terminated) and caught.value.exit_status == 143
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize("run_id", ["../escape", "a/b", "..", "latest", ".hidden", "x..y", ""])
def test_a_run_id_that_is_not_one_folder_name_stops_before_anything_runs(run_id, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path / "results"))
    assert main(["run", "02", "--run-id", run_id]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a run id" in err
    assert main(["report", "--run-id", run_id]) == 2
    assert "is not a run id" in capsys.readouterr().err
    assert not (tmp_path / "results").exists() and not (tmp_path / "escape").exists()


def test_good_run_ids_pass_the_check():
    from psit_lib.cli.run import check_run_id

    for run_id in ("run-1a2b3c4d", "study_scale.v2", "A"):
        assert check_run_id(run_id) == run_id


def test_help_shows_examples_and_every_environment_variable_of_the_settings(capsys):
    import re

    from psit_lib.llm import settings

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert "examples:" in shown and "psit run 02 03 -p n_episodes=20" in shown
    variables = set(re.findall(r"PSIT_[A-Z_]+", Path(settings.__file__).read_text()))
    assert variables and all(v in shown for v in variables), sorted(v for v in variables if v not in shown)


@pytest.mark.slow
def test_latest_moves_only_for_a_complete_run_of_the_whole_series(tmp_path, monkeypatch, capsys):
    _tiny_notebook(tmp_path / "nbs")
    (tmp_path / "nbs" / "98_tiny.ipynb").rename(tmp_path / "nbs" / "97_tiny.ipynb")
    _tiny_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    latest = tmp_path / "results" / "latest"
    assert main(["run", "98", "--run-id", "part", "--no-progress"]) == 0
    assert not latest.exists() and "results/latest and figures/ stay" in capsys.readouterr().err
    assert main(["run", "--run-id", "whole", "--no-progress"]) == 0
    assert latest.resolve().name == "whole"
    assert main(["run", "97", "--run-id", "part2", "--no-progress"]) == 0
    assert latest.resolve().name == "whole"


@pytest.mark.slow
def test_figures_are_published_only_by_a_complete_run_of_the_whole_series(tmp_path, monkeypatch, capsys):
    """Notebooks save figures into their run folder only; ``psit run`` copies them to figures/
    when the whole series completed, replacing the previous run's (a README there is kept)."""
    nbs = tmp_path / "nbs"
    for stem in ("97_one", "98_two"):
        nb = new_notebook(cells=[
            new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
            new_code_cell("import os, pathlib\n"
                          "d = pathlib.Path(os.environ['PSIT_RUN_DIR']) / '" + stem + "' / 'figures'\n"
                          "d.mkdir(parents=True, exist_ok=True)\n"
                          "(d / '" + stem + "__f{}.png'.format(x)).write_bytes(b'png')"),
        ])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbs.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, nbs / f"{stem}.ipynb")
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "README.md").write_text("kept")
    (figures / "00_old__stale.png").write_bytes(b"old")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(nbs))
    monkeypatch.setenv("PSIT_FIGURES_DIR", str(figures))
    assert main(["run", "98", "--run-id", "part", "--no-progress"]) == 0
    assert sorted(p.name for p in figures.iterdir()) == ["00_old__stale.png", "README.md"]
    assert main(["run", "--run-id", "whole", "--no-progress"]) == 0
    assert sorted(p.name for p in figures.iterdir()) == ["97_one__f1.png", "98_two__f1.png", "README.md"]


def _run_with_rates(results, run_id, notebook, rows):
    import pandas as pd

    from psit_lib.runs.folder import RunMetadata, RunStore

    store = RunStore(results / run_id / notebook)
    store.write_metadata(RunMetadata(notebook=notebook))
    store.tables_dir.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"task": "hangman", "model": "m", "agent": agent, "n_scored": n, "n_failed": 0,
                   "successes": k, "rate": k / n} for agent, k, n in rows]).to_csv(
        store.tables_dir / "self_consistency.csv", index=False)


def test_compare_gives_deltas_and_a_test_per_rate_lists_one_run_notebooks_and_fits_the_terminal(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    _run_with_rates(tmp_path, "a", "02_hangman_fork_tests", [("vanilla", 1, 40), ("private_cot", 20, 40)])
    _run_with_rates(tmp_path, "b", "02_hangman_fork_tests", [("vanilla", 30, 40), ("private_cot", 21, 40)])
    _run_with_rates(tmp_path, "a", "03_diagnosis_ddxplus", [("vanilla", 1, 4)])
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["compare", "a", "b"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    vanilla = next(line for line in out.splitlines() if "· vanilla" in line)
    cot = next(line for line in out.splitlines() if "· private_cot" in line)
    assert "Δ +0.72" in vanilla and vanilla.endswith(" *")      # 1/40 vs 30/40: beyond chance
    assert "Δ +0.03" in cot and not cot.endswith("*")           # 20/40 vs 21/40: not
    assert "== 03_diagnosis_ddxplus: only in A" in out
