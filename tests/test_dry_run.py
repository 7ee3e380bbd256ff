"""``psit run --dry-run``: the planned episodes and their estimated cost, with nothing run."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import json
import subprocess
import sys
import time
from pathlib import Path

from loopback import HandlerServer, QuietHandler, send_json
from psit_lib.cli.errors import CliError
from psit_lib.cli.estimate import (SWEEPS, dry_run_table, endpoint_part, episode_key, estimate_notebook,
                                   load_call_model, parse_price)

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
    assert int(lines["05_acc_judge_evaluation"][2].replace(",", "")) > 0 and "simulator" in done.stdout
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


NB02 = ROOT / "notebooks" / "02_hangman_fork_tests.ipynb"


def _table(monkeypatch, notebook=NB02, params=None, **kwargs):
    monkeypatch.setenv("PSIT_BACKEND", kwargs.pop("backend", "sim"))
    kwargs.setdefault("prompt_rate", 1000.0)
    kwargs.setdefault("completion_rate", 100.0)
    return dry_run_table([notebook], {notebook.stem: params or {}}, **kwargs)


def test_the_simulator_dry_run_names_what_each_figure_assumes_in_numbers_a_reader_takes_in(monkeypatch):
    import re

    text = _table(monkeypatch, params={"n_episodes": 50}, price=(0.15, 0.6))
    print(text)
    assert not re.search(r"\b\d{7,}\b", text)  # no raw 146202274
    assert re.search(r"\d,\d{3}\b", text)  # thousands grouped (7,391 calls)
    labels = {line.split(":")[0] for line in text.splitlines() if re.match(r"(simulator|endpoint|cost): ", line)}
    assert labels == {"simulator", "endpoint", "cost"}
    assert "1,000 prompt and 100 completion tokens/s" in text and "--prompt-rate" in text and "--price" in text
    assert "server-hours" not in text and "hours" not in text.split("Sizing")[0]
    header = next(line for line in text.splitlines() if line.startswith("notebook"))
    assert header.split()[-3:] == ["simulator", "endpoint", "cost"] and len(header) < 100
    sweep = next(line for line in text.splitlines() if line.strip().startswith(SWEEPS))
    assert sweep.split()[-2:] == ["-", "-"]  # the simulator's sweeps never run, nor cost, on an endpoint


def test_a_real_backend_shows_no_simulator_time(monkeypatch):
    monkeypatch.setenv("PSIT_BASE_URLS", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("PSIT_MODEL", "m")
    text = _table(monkeypatch, backend="openai")
    assert "simulator:" not in text and "endpoint:" in text and SWEEPS not in text


def test_the_cost_is_each_models_tokens_at_the_price_and_the_total_their_sum(monkeypatch):
    call_model = load_call_model()
    values = {"agents": ["vanilla", "private_cot"], "n_episodes": 3, "models": ["a", "b"]}
    found = estimate_notebook("02_hangman_fork_tests", values, ["psit-sim"], True, call_model)
    a = found.by_model["a"]
    assert a.usd(2.0, 10.0) == pytest.approx(a.prompt_tokens * 2e-6 + a.completion_tokens * 1e-5)
    part = endpoint_part(found)  # the endpoint's share: every model, never the sweeps
    assert part.usd(2.0, 10.0) == pytest.approx(found.by_model["a"].usd(2, 10) + found.by_model["b"].usd(2, 10))
    assert part.episodes == 2 * 2 * 3 and found.by_model[SWEEPS].episodes > 0

    text = _table(monkeypatch, params={"agents": ["vanilla", "private_cot"], "n_episodes": 3, "models": ["a", "b"]},
                  price=(2.0, 10.0))
    rows = {line.split()[0]: line.split() for line in text.splitlines()}
    assert rows["a"][-1] == f"${a.usd(2, 10):,.2f}" and rows["total"][-1] == f"${part.usd(2, 10):,.2f}"
    assert rows[SWEEPS.split()[0]][-1] == "-"


@pytest.mark.parametrize("text", ["1", "1,2,3", "a,b", "-1,2", "nan,1", "1,inf", "", "0.1;0.2"])
def test_a_malformed_price_is_one_sentence(text):
    with pytest.raises(CliError, match=r"--price .* is not IN,OUT: give USD per million"):
        parse_price(text)


def test_a_price_reads_in_and_out_per_million_tokens():
    assert parse_price("0.15,0.6") == (0.15, 0.6) and parse_price("0,0") == (0, 0) and parse_price(None) is None


def test_a_bad_price_on_the_command_line_exits_2_with_one_line(tmp_path):
    done, _ = _psit(tmp_path, "02", "--price", "0.15")
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.count("\n") == 1 and "--price '0.15' is not IN,OUT" in done.stderr


class PropsServer(HandlerServer):
    """A llama.cpp-like endpoint reporting one slot of ``n_ctx`` tokens of context."""

    def __init__(self, n_ctx: int) -> None:
        props = {"total_slots": 1, "default_generation_settings": {"n_ctx": n_ctx}}

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                send_json(self, 200, props) if self.path == "/props" else send_json(self, 404, {})

        self._serve(Handler)


def _with_longest(tmp_path, roles):
    """The call model with ``roles``' longest prompts in 02's vanilla episodes, and a longer one in an
    agent the plans of these tests leave out."""
    model = load_call_model()
    model["longest_prompt"] = {"02_hangman_fork_tests": {"hangman/vanilla": roles,
                                                         "hangman/mem0": {"memory_library": 10**6}}}
    path = tmp_path / "call_model.json"
    path.write_text(json.dumps(model))
    return path


@pytest.mark.parametrize("n_ctx, warned", [(1024, True), (32768, False)])
def test_the_longest_prompt_is_checked_against_the_context_the_endpoint_reports(tmp_path, monkeypatch, n_ctx, warned):
    server = PropsServer(n_ctx)
    try:
        monkeypatch.setenv("PSIT_BASE_URLS", server.url)
        monkeypatch.setenv("PSIT_MODEL", "m")
        text = _table(monkeypatch, backend="openai", params={"agents": ["vanilla", "private_cot"]},
                      call_model_path=_with_longest(tmp_path, {"hangman_host": 1937, "candidate_generator": 100}))
    finally:
        server.close()
    warnings = [line for line in _sentences(text) if line.startswith("warning")]
    if warned:
        assert len(warnings) == 1
        assert all(word in warnings[0] for word in ("02_hangman_fork_tests", "hangman_host", "1,937", "1,024"))
    else:
        assert not warnings


def test_the_simulator_asks_no_endpoint_for_its_context(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the simulator has no context to ask for")

    monkeypatch.setattr("psit_lib.llm.server_limits.probe", refuse)
    text = _table(monkeypatch, call_model_path=_with_longest(tmp_path, {"hangman_host": 10**9}))
    assert "warning" not in text


@given(n=st.integers(0, 10**12))
def test_a_count_is_grouped_below_a_million_and_in_millions_above(n):
    import re

    from psit_lib.cli.estimate import humanise

    text = humanise(n)
    assert not re.search(r"\d{4}", text.replace(".", " "))  # never four ungrouped digits
    if n < 10**6:
        assert int(text.replace(",", "")) == n
    else:
        assert text.endswith(" M") and abs(float(text[:-2].replace(",", "")) * 1e6 - n) <= 0.05e6


def test_rates_must_be_positive():
    from psit_lib.cli.estimate import check_rates

    with pytest.raises(CliError, match="must be positive"):
        check_rates(0, 100)
    check_rates(1000, 100)


def test_the_simulator_seconds_are_start_up_plus_seconds_per_recorded_call():
    from benchmarks.measure_call_model import simulator_seconds

    assert simulator_seconds(100, 8.0, 20.0) == {"per_call": 0.08, "start_up": 12.0}
    assert simulator_seconds(0, 8.0, 20.0) is None  # no calls recorded: nothing to measure per call


# -- a pre-flight: the endpoint asked as the run would ---------------------------------------------

def test_a_dry_run_against_a_closed_port_exits_non_zero_with_one_sentence(tmp_path):
    import os

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PSIT_")},
           "PSIT_BACKEND": "openai", "PSIT_BASE_URLS": "http://127.0.0.1:9/v1", "PSIT_MODEL": "m",
           "PSIT_RESULTS_DIR": str(tmp_path / "results")}
    done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "02", "--dry-run"], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and not done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and ". " not in lines[0], done.stderr
    assert "http://127.0.0.1:9/v1 does not answer GET /models" in lines[0] and "start the server" in lines[0]


def _sentences(text: str) -> list[str]:
    """The estimate's lines with each wrapped one joined again (its continuation lines are indented)."""
    joined: list[str] = []
    for line in text.splitlines():
        if line.startswith("  ") and joined and joined[-1].startswith(("warning", "skipped")):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    return joined


class ModelsOnlyServer(HandlerServer):
    """An endpoint that lists its model and reports nothing about its context or slots."""

    def __init__(self) -> None:
        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path.endswith("/models"):
                    send_json(self, 200, {"object": "list", "data": [{"id": "m", "object": "model"}]})
                else:
                    send_json(self, 404, {})

        self._serve(Handler)


def test_a_context_check_the_endpoint_cannot_answer_is_said_to_be_skipped(tmp_path, monkeypatch):
    server = ModelsOnlyServer()
    try:
        monkeypatch.setenv("PSIT_BASE_URLS", server.url)
        monkeypatch.setenv("PSIT_MODEL", "m")
        text = _table(monkeypatch, backend="openai", params={"agents": ["vanilla"]},
                      call_model_path=_with_longest(tmp_path, {"hangman_host": 1937}))
    finally:
        server.close()
    skipped = [line for line in _sentences(text) if line.startswith("skipped:")]
    assert skipped == [f"skipped: the context check of m: {server.url} reports no context length "
                       "(llama.cpp, vLLM and Ollama do)"]


def test_05s_estimate_counts_the_judge_and_each_judge_variant_re_scoring_pass():
    from psit_lib.cli.notebooks import default_values

    call_model = load_call_model()
    nb = "05_acc_judge_evaluation"
    scoring = call_model["scoring"][nb]
    values = {**default_values(ROOT / "notebooks" / f"{nb}.ipynb"), "sweeps": {}}
    every = estimate_notebook(nb, values, ["m"], False, call_model)
    one = estimate_notebook(nb, {**values, "judge_variants": ["standard"]}, ["m"], False, call_model)
    bare = estimate_notebook(nb, values, ["m"], False, {**call_model, "scoring": {}})
    turns = every.episodes * values["n_turns"]
    variants = sum(scoring[f"judge_{v}"]["calls"] for v in values["judge_variants"])
    assert every.calls == pytest.approx(bare.calls + turns * (scoring["judge"]["calls"] + variants))
    assert every.calls - one.calls == pytest.approx(turns * (variants - scoring["judge_standard"]["calls"]))
    assert "not counted" not in every.note and "model-graded" in every.note
    assert "are not measured" in bare.note
