"""End to end against real models: llama.cpp's OpenAI-compatible server on small GGUF models.

Real models write what the simulator never does (words leaked in the opener, tool calls as JSON
text, symptoms for conditions, chat-template debris, runaway replies). These tests run the
workbench exactly as a user would, ``psit run`` on notebooks 02 to 07 with tiny parameters
(``tests/real_model_params.yaml``) against ``llama-server --jinja`` started with the threads and
slots this machine can give it now (:func:`server_shape`), with no ``PSIT_*`` concurrency or
timeout set (the run is sized by what the server reports), and assert what
must hold *whatever the model writes*: no notebook crashes; every episode reaches its scoring
point or is recorded as failed with a reason; the summary counts every recorded episode; nothing
is scored as an answer the model did not give; no reasoning or template debris reaches a public
transcript or a secret; the run's status and exit code tell the truth about its health.

The server and the models come from package registries (``.ci/real-model`` builds and caches
them, and prints ``PSIT_LLAMA_SERVER`` and ``PSIT_REAL_MODELS``). Without them these tests skip,
unless ``PSIT_REQUIRE_REAL_MODEL=1`` (as in ``.ci/test``), where a missing model is a failure.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from psit_lib.runs.folder import read_run_file
from psit_lib.llm.reply_readers import split_reasoning
from psit_lib.runs.folder import RunFolder
from psit_lib.studies.psit.protocol.transcript_view import episode_row

ROOT = Path(__file__).resolve().parents[1]
PARAMS = Path(__file__).with_name("real_model_params.yaml")
NOTEBOOKS = ("02", "03", "04", "05", "06", "07")
REQUIRED = os.environ.get("PSIT_REQUIRE_REAL_MODEL") == "1"
DEBRIS = re.compile(r"<\|[^|<>\s]{1,40}\|>|</?(?:start_of_turn|end_of_turn)>|</s>|\[/?INST\]|</?think>", re.I)


def configured_models() -> dict[str, Path]:
    """``name -> GGUF path`` from ``PSIT_REAL_MODELS`` (``name=path;name=path``)."""
    models = {}
    for entry in filter(None, os.environ.get("PSIT_REAL_MODELS", "").split(";")):
        name, _, path = entry.partition("=")
        models[name.strip()] = Path(path.strip())
    return models


def _unavailable() -> str | None:
    server = os.environ.get("PSIT_LLAMA_SERVER", "")
    if not server or not Path(server).is_file():
        return "PSIT_LLAMA_SERVER is not set to a llama-server binary (run `bash .ci/real-model`)"
    missing = [str(p) for p in configured_models().values() if not p.is_file()]
    if not configured_models() or missing:
        return f"PSIT_REAL_MODELS names no model file ({', '.join(missing) or 'unset'}; run `bash .ci/real-model`)"
    return None


def server_shape(cores: int, load: float) -> tuple[int, int]:
    """(threads, slots) for llama-server on a machine with ``cores`` and a 1-minute ``load``.

    Decoding threads spin: more threads than idle cores make every token wait for a descheduled
    thread, and a busy machine's decoding collapses (one Hangman episode took 18 minutes with the
    default threads). So the server gets the cores the load leaves idle, at least one; two slots
    (four on a machine with four idle cores or more) keep the run's calls batched."""
    idle = max(1, min(cores, int(cores - load + 0.5)))
    return idle, (4 if idle >= 4 else 2)


def machine_shape() -> tuple[int, int]:
    return server_shape(os.cpu_count() or 1, os.getloadavg()[0])


def llama_server_command(model: Path, name: str, port: int, threads: int, slots: int) -> list[str]:
    """``llama-server`` for one model: ``slots`` of 8k context each, ``threads`` for decoding and prompts."""
    return [os.environ["PSIT_LLAMA_SERVER"], "-m", str(model), "--alias", name, "--jinja",
            "-np", str(slots), "-c", str(8192 * slots), "-t", str(threads), "-tb", str(threads),
            "--host", "127.0.0.1", "--port", str(port), "--seed", "0"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"llama-server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise AssertionError(f"llama-server did not become healthy in {seconds:.0f}s: {log.read_text()[-2000:]}")


def serve_and_run(model: Path, name: str, code: Path, params: Path, work: Path
                  ) -> tuple[subprocess.CompletedProcess, float, tuple[int, int], Path]:
    """``psit run`` of the test's notebooks (code from ``code``) against a llama-server of
    ``model`` shaped for this machine, stopped afterwards: (the run, its seconds, (threads, slots),
    the server's log)."""
    port, log = _free_port(), work / "llama-server.log"
    threads, slots = machine_shape()
    server = subprocess.Popen(llama_server_command(model, name, port, threads, slots),
                              stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(url, server, log)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
        env.update(PSIT_BACKEND="openai", PSIT_BASE_URLS=url + "/v1", PSIT_MODEL=name, PYTHONPATH=str(code),
                   PSIT_RESULTS_DIR=str(work / "results"), PSIT_FIGURES_DIR=str(work / "figures"), MPLBACKEND="Agg")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", *NOTEBOOKS, "-f", str(params),
                               "--run-id", "real"], capture_output=True, text=True, env=env, cwd=code, timeout=3600)
        seconds = time.monotonic() - started
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    return done, seconds, (threads, slots), log


@pytest.fixture(scope="module", params=sorted(configured_models()) or ["none"])
def real_run(request, tmp_path_factory):
    """One ``psit run`` of the tiny series against one real model; the run's outcome."""
    reason = _unavailable()
    if reason:
        if REQUIRED:
            pytest.fail(f"the real-model test must run here: {reason}")
        pytest.skip(reason)
    name = request.param
    work = tmp_path_factory.mktemp(f"real-{name}")
    done, seconds, (threads, slots), log = serve_and_run(configured_models()[name], name, ROOT, PARAMS, work)
    run_dir = work / "results" / "real"
    print(f"\n[{name}] llama-server -t {threads} -np {slots}; psit run exit {done.returncode} in {seconds:.0f}s\n"
          f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return {"name": name, "done": done, "run_dir": run_dir, "run": read_run_file(run_dir), "slots": slots,
            "server_log": log.read_text(errors="replace")}


@given(st.integers(1, 256), st.floats(0, 512))
def test_the_server_gets_the_cores_the_load_leaves_idle(cores, load):
    threads, slots = server_shape(cores, load)
    assert 1 <= threads <= cores and slots in (2, 4)
    assert threads == 1 or threads <= cores - load + 0.5  # never more threads than idle cores
    assert server_shape(cores, 0.0)[0] == cores  # an idle machine gives all of them


@pytest.mark.slow
def test_the_run_was_sized_by_the_servers_slots_and_nothing_was_cancelled(real_run):
    """No PSIT_* concurrency or timeout was set: the run read the slots from /props, said so in one
    line, and the server cancelled no request (no client gave up on one waiting in its queue)."""
    said = [line for line in real_run["done"].stderr.splitlines() if line.startswith("psit: model server:")]
    assert len(said) == 1 and f"{real_run['slots']} at http://127.0.0.1" in said[0], real_run["done"].stderr[-2000:]
    counts = server_log_counts(real_run["server_log"])
    assert counts["started"] > 0 and counts["cancelled"] == 0, counts


def server_log_counts(log: str) -> dict[str, int]:
    """Tasks llama-server started (``processing task``), finished (``total time``) and cancelled
    (``cancel task``: a client closed its connection before the reply) in its log."""
    lines = log.splitlines()
    return {"started": sum("processing task" in line for line in lines),
            "finished": sum("total time =" in line for line in lines),
            "cancelled": sum("cancel task" in line for line in lines)}


def _notebook_dirs(run_dir: Path) -> list[Path]:
    return sorted(p for p in run_dir.iterdir() if p.is_dir() and p.name[:2] in NOTEBOOKS)


@pytest.mark.slow
def test_no_notebook_crashes_on_what_the_model_wrote(real_run):
    summaries = real_run["run"]["notebooks"]
    assert [s["notebook"][:2] for s in summaries] == list(NOTEBOOKS), real_run["done"].stderr[-3000:]
    crashed = {s["notebook"]: s["error"] for s in summaries if s["status"] == "failed"}
    assert not crashed, crashed


@pytest.mark.slow
def test_the_runs_status_and_exit_code_tell_the_truth(real_run):
    done, summaries = real_run["done"], real_run["run"]["notebooks"]
    suspect = [s for s in summaries if s["health"] == "suspect"]
    failed = [s for s in summaries if s["failed"] or s["status"] == "failed"]
    for folder in _notebook_dirs(real_run["run_dir"]):
        recorded = RunFolder(folder).metadata().health
        shown = next(s for s in summaries if s["notebook"] == folder.name)
        assert (recorded.status if recorded and recorded.status else shown["health"]) == shown["health"], folder.name
    if failed:
        assert done.returncode == 1
    elif suspect:
        assert done.returncode == 3
        lines = [line for line in done.stderr.splitlines() if " is SUSPECT: " in line]
        assert len(lines) == len(suspect) and all(line.count("\n") == 0 for line in lines)
    else:
        assert done.returncode == 0 and real_run["run"]["complete"] is True
    assert (done.returncode == 0) == bool(real_run["run"]["complete"])


@pytest.mark.slow
def test_the_summary_counts_every_episode_each_notebook_recorded(real_run):
    for summary in real_run["run"]["notebooks"]:
        records = RunFolder(real_run["run_dir"] / summary["notebook"]).records()
        assert summary["episodes"] == len(records) > 0, summary
        assert summary["failed"] == sum(r["status"] != "ok" for r in records.values()), summary


@pytest.mark.slow
def test_every_episode_reaches_its_scoring_point_or_is_failed_with_a_reason(real_run):
    for folder in _notebook_dirs(real_run["run_dir"]):
        for record in RunFolder(folder).flat_records().values():
            where = f"{folder.name} {record['episode_id']}"
            assert "diagnostics" in record, where  # the audit trail, however the episode ended
            if record["status"] != "ok":
                assert record["error"], where
                continue
            if "candidates" in record:  # a fork test (a secret choice has a reveal too, but no fork)
                outcome = episode_row(record)["outcome"]  # derived from the record, as every table does
                assert outcome in {"self_consistent", "over_confirmation", "state_substitution",
                                   "all_denial", "public_contradiction", "leakage", "unparseable"}, where
                if outcome == "unparseable":
                    assert record["failure"], where
                # played to the fork whatever the host wrote, as the study's player: a reveal was asked
                assert record["reveal"] is not None and record["reveal"]["question"], where
            elif "turns" in record:  # ACC
                assert record["turns"], where
            elif "success" in record:  # BASIS
                assert isinstance(record["success"], bool), where
            else:  # secret choice
                assert record["reveal"]["parsed"] is not None or record["failure"], where


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@pytest.mark.slow
def test_nothing_is_scored_as_an_answer_the_model_did_not_give(real_run):
    """A revealed secret is in the reveal's words (or is the dataset name of an alias written
    there); never a name that merely contains them, never template debris."""
    from psit_lib.studies.psit.tasks.diagnosis import NAME_ALIASES

    aliases: dict[str, set[str]] = {}
    for alias, name in NAME_ALIASES.items():
        aliases.setdefault(_plain(name), set()).add(_plain(alias))
    for folder in _notebook_dirs(real_run["run_dir"]):
        for record in RunFolder(folder).flat_records().values():
            reveal = record.get("reveal") if record["status"] == "ok" else None
            if not reveal or reveal.get("parsed") is None:
                continue
            secret, said = _plain(reveal["parsed"]), _plain(reveal["answer"])
            if said and all(len(token) == 1 for token in said.split()):  # spelled out: "p l a n e t"
                said = said.replace(" ", "")
            written = {secret} | aliases.get(secret, set())
            assert any(re.search(rf"\b{re.escape(w)}\b", said) for w in written), \
                f"{folder.name} {record['episode_id']}: {reveal['parsed']!r} from {reveal['answer']!r}"
            for branch in record.get("candidates") or ():
                if branch["source"] == "revealed":
                    assert _plain(branch["secret"]) == secret


@pytest.mark.slow
def test_no_reasoning_or_template_debris_reaches_a_public_transcript_or_a_secret(real_run):
    for folder in _notebook_dirs(real_run["run_dir"]):
        for record in RunFolder(folder).flat_records().values():
            public = [m["content"] for m in record.get("transcript") or () if m["role"] == "assistant"]
            secrets = [(record.get("reveal") or {}).get("parsed") or ""]
            for text in public + secrets:
                where = f"{folder.name} {record['episode_id']}: {text[:200]!r}"
                assert not DEBRIS.search(text), where
                assert split_reasoning(text) == (text.strip(), ""), where


@pytest.mark.slow
def test_generated_readings_rank_nothing_the_tables_tie(real_run):
    """Where every agent of the headline's table (self-consistency by Table 1's rule) has the same
    rate, the headline calls it a tie."""
    import pandas as pd

    for folder in _notebook_dirs(real_run["run_dir"]):
        table = folder / "tables" / "table1_self_consistency.csv"
        if not table.exists():
            continue
        rates = pd.read_csv(table)
        headline = RunFolder(folder).metadata().headline or ""
        if rates["rate"].nunique(dropna=True) == 1 and len(rates) > 1:
            assert "tie" in headline and " the lowest is " not in headline, headline


@pytest.mark.slow
def test_hosts_that_wrote_their_secret_in_public_are_scored_leakage_by_table1s_rule(real_run):
    """Table 1's view: a revealed secret found (as a substring, ignoring case) in the host's public
    replies before the fork is leakage, never self-consistent; the saved Table 1 table counts it so."""
    import pandas as pd

    from psit_lib.studies.psit.protocol.records import ForkEpisode
    from psit_lib.studies.psit.protocol.table1 import score_table1

    for folder in _notebook_dirs(real_run["run_dir"]):
        if not (folder / "tables" / "table1_self_consistency.csv").exists():
            continue
        credited: dict[str, int] = {}
        for record in RunFolder(folder).typed_records(ForkEpisode):
            if record.result is None:  # failed: counted apart, never scored
                credited.setdefault(str(record.spec["agent"]), 0)
                continue
            result = record.result
            revealed = result.reveal.parsed if result.reveal else None
            public = " ".join(m.content for m in result.transcript if m.role == "assistant").lower()
            score = score_table1(result)
            if revealed and revealed.lower() in public:
                assert score.leakage and not score.self_consistent, record.episode_id
            credited[result.agent] = credited.get(result.agent, 0) + score.self_consistent
        table = pd.read_csv(folder / "tables" / "table1_self_consistency.csv")
        assert dict(zip(table["agent"], table["successes"])) == credited, folder.name
