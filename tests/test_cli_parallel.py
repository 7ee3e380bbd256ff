"""``psit run -j N``: notebooks in worker processes with the same tables as one at a time; the
end of a run (headlines, the report); kernels' own output kept off the terminal; Ctrl-C and
SIGTERM stop every kernel; interactive runs write outside the repository."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from psit_lib.cli import main

pytestmark = pytest.mark.slow  # runs notebooks in worker processes (the fast tier: -m 'not slow')

ROOT = Path(__file__).resolve().parents[1]

HEADLINED = """
import os
from psit_lib.runs import Experiment
os.write(2, b"KERNEL-NOISE on the kernel's own stderr\\n")
exp = Experiment(NAME, {"x": x}, seed=0)
exp.headline("- **" + NAME + "**: the value is " + str(x))
exp.finish()
"""


def _notebook(folder: Path, stem: str, code: str, params: str) -> None:
    nb = new_notebook(cells=[new_markdown_cell(f"# {stem}"),
                             new_code_cell(params, metadata={"tags": ["parameters"]}),
                             new_code_cell(code.replace("NAME", repr(stem)))])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{stem}.ipynb")


def test_a_parallel_run_ends_with_headlines_and_the_report_and_no_kernel_output(tmp_path, monkeypatch, capfd):
    for stem in ("94_one", "95_two"):
        _notebook(tmp_path / "nbs", stem, HEADLINED, "x = 1")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    assert main(["run", "-j", "2", "-p", "x=3", "--run-id", "par"]) == 0
    out, err = capfd.readouterr()
    assert "2 at a time" in out and "KERNEL-NOISE" not in out + err
    assert "  94_one\n    - 94_one: the value is 3\n  95_two\n    - 95_two: the value is 3" in out
    index = tmp_path / "results" / "par" / "report" / "index.html"
    assert f"report: {index}" in out and index.exists()
    assert "94_one ok in" in out and "95_two ok in" in out
    for stem in ("94_one", "95_two"):  # each kernel's own output is in its notebook folder
        assert "KERNEL-NOISE" in (tmp_path / "results" / "par" / stem / "kernel.log").read_text()
    assert main(["run", "94", "-j", "1", "--run-id", "seq", "--no-report"]) == 0
    out, err = capfd.readouterr()
    assert "KERNEL-NOISE" not in out + err and "report:" not in out
    assert not (tmp_path / "results" / "seq" / "report").exists()
    assert "this run's figures are in" in err  # a partial run says where its figures are


def test_jobs_must_be_at_least_one(tmp_path, monkeypatch, capsys):
    _notebook(tmp_path / "nbs", "94_one", HEADLINED, "x = 1")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    assert main(["run", "-j", "0"]) == 2
    assert "-j 0: the number of notebooks run at once is at least 1" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_the_default_is_the_machines_cores_on_the_simulator_and_one_on_a_real_endpoint():
    from psit_lib.cli import build_parser
    from psit_lib.cli.run import check_jobs

    assert build_parser().parse_args(["run"]).jobs is None
    assert check_jobs(None) == (os.cpu_count() or 1) and check_jobs(3) == 3
    assert check_jobs(None, simulated=False) == 1 and check_jobs(3, simulated=False) == 3


def _tables(run_dir: Path) -> dict[str, pd.DataFrame]:
    return {f"{p.parent.parent.name}/{p.name}": pd.read_csv(p) for p in sorted(run_dir.glob("*/tables/*.csv"))}


def test_two_notebooks_in_parallel_give_the_tables_they_give_one_at_a_time(tmp_path, monkeypatch):
    """Two real notebooks at tiny sizes on the simulator: every saved table is identical."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    args = ["run", "05", "07", "-p", "n_turns=3", "-p", "domains=[it_operations, finance]", "-p", "judge_variants=[standard]",
            "-p", "sweep_turns=3", "-p", "tasks=[hangman]", "-p", "temperatures=[0.1, 1.5]",
            "-p", "n_samples=4", "--no-report", "--no-progress"]
    assert main([*args, "-j", "1", "--run-id", "one"]) == 0
    assert main([*args, "-j", "2", "--run-id", "two"]) == 0
    one, two = _tables(tmp_path / "results" / "one"), _tables(tmp_path / "results" / "two")
    assert len(one) >= 4 and {k.split("/")[0] for k in one} == {"05_acc_judge_evaluation",
                                                                "07_secret_distribution_mode_collapse"}
    assert one.keys() == two.keys()
    for name in one:
        pd.testing.assert_frame_equal(one[name], two[name], obj=name)


SLOW = """
import asyncio, os, pathlib
pathlib.Path(pid_file).write_text(str(os.getpid()))
from psit_lib.runs import Experiment, EpisodeSpec
exp = Experiment(NAME, {"n": n}, seed=0)
async def episode(spec, session):
    await asyncio.sleep(1.0)
    return {"answer": "ok"}
records = await exp.run([EpisodeSpec(f"e{i}", {"i": i}) for i in range(n)], episode, concurrency=2)
exp.finish()
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "zombie" in status.read_text()


def _as_from_a_terminal() -> None:
    """``psit run`` starts with Ctrl-C's signal at its default, as from a terminal. A test suite started in
    the background of a non-interactive shell (``cmd &`` in a script) inherits SIGINT ignored, and so would
    every process it starts: ``psit run`` would rightly keep ignoring it and run all 400 episodes."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_a_parallel_run(tmp_path: Path, sig: int) -> tuple[int, str, list[int]]:
    for stem in ("92_slow", "93_slow"):
        _notebook(tmp_path / "nbs", stem, SLOW, f"n = 400\npid_file = {str(tmp_path / (stem + '.pid'))!r}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"),
               PSIT_NOTEBOOKS_DIR=str(tmp_path / "nbs"), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "psit_lib.cli", "run", "-j", "2", "--run-id", "r1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                            preexec_fn=_as_from_a_terminal)
    pid_files = [tmp_path / "92_slow.pid", tmp_path / "93_slow.pid"]
    progress = [tmp_path / "results" / "r1" / s / "progress.json" for s in ("92_slow", "93_slow")]
    try:
        deadline = time.monotonic() + 120
        while not all(p.exists() for p in pid_files + progress):  # both kernels are running episodes
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.2)
        kernels = [int(p.read_text()) for p in pid_files]
        proc.send_signal(sig)  # to psit run alone, as a terminal's Ctrl-C reaches it (workers have their own session)
        out, err = proc.communicate(timeout=150)  # STOP_GRACE (60 s) per stuck worker, on a loaded machine
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out + err, kernels


def test_sigterm_stops_every_parallel_notebook_and_its_kernel(tmp_path):
    code, text, kernels = _stop_a_parallel_run(tmp_path, signal.SIGTERM)
    assert code == 143, text
    assert "psit: interrupted; finished episodes are saved. Resume with: psit run --run-id r1" in text
    assert "92_slow interrupted after" in text and "93_slow interrupted after" in text and "Traceback" not in text
    assert "IPKernelApp" not in text  # a kernel's own log lines go to its kernel.log
    time.sleep(0.5)
    assert all(_gone(pid) for pid in kernels), f"kernels left running: {kernels}"


def test_ctrl_c_stops_every_parallel_notebook_and_its_kernel(tmp_path):
    code, text, kernels = _stop_a_parallel_run(tmp_path, signal.SIGINT)
    assert code == 130, text
    assert "Resume with: psit run --run-id r1" in text and "Traceback" not in text
    assert "IPKernelApp" not in text  # a kernel's own log lines go to its kernel.log
    time.sleep(0.5)
    assert all(_gone(pid) for pid in kernels), f"kernels left running: {kernels}"


def test_an_interactive_run_writes_outside_the_repository(tmp_path, monkeypatch):
    """A notebook run by hand (no ``psit run``) keeps its folder in the user's cache by default,
    never in the repository's results/ or figures/."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from psit_lib.runs import Experiment
    from psit_lib.runs.paths import adhoc_root, repo_root

    for name in ("PSIT_RESULTS_DIR", "PSIT_FIGURES_DIR", "PSIT_ADHOC_DIR", "PSIT_RUN_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert adhoc_root() == tmp_path / "cache" / "psit" / "adhoc"
    figures_before = sorted((repo_root() / "figures").glob("*")) if (repo_root() / "figures").exists() else []
    exp = Experiment("93_interactive", {"x": 1}, seed=0)
    fig, ax = plt.subplots()
    saved = exp.save_figure(fig, "f")
    plt.close(fig)
    assert exp.store.dir.is_relative_to(tmp_path / "cache" / "psit" / "adhoc")
    assert saved.is_relative_to(tmp_path / "cache") and not saved.is_relative_to(repo_root())
    assert not exp.run_dir.is_relative_to(repo_root())
    after = sorted((repo_root() / "figures").glob("*")) if (repo_root() / "figures").exists() else []
    assert after == figures_before
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path / "moved"))
    assert adhoc_root() == tmp_path / "moved" / "adhoc"
    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path / "mine"))
    assert adhoc_root() == tmp_path / "mine"


def test_a_notebook_reading_its_run_mates_waits_for_them():
    """07 reads the fork reveals of 02 and 03 from the same run folder: in parallel it starts only
    once both ended, and waits for nothing that is not in the run."""
    from pathlib import Path

    from psit_lib.cli.execute import _next_ready

    nbs = [Path(f"{s}.ipynb") for s in ("02_hangman_fork_tests", "03_diagnosis_ddxplus",
                                         "07_secret_distribution_mode_collapse", "06_basis_cab_scenarios")]
    pending = [(3, nbs[2]), (4, nbs[3])]
    assert _next_ready(pending, nbs, done={}) == 1  # 06 goes ahead of the waiting 07
    assert _next_ready(pending[:1], nbs, done={"02_hangman_fork_tests": None}) is None
    assert _next_ready(pending[:1], nbs, done={"02_hangman_fork_tests": None, "03_diagnosis_ddxplus": None}) == 0
    assert _next_ready([(1, nbs[2])], [nbs[2]], done={}) == 0  # 07 alone: nothing to wait for
