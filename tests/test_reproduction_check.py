"""The reproduction check: a run's Table 1 rates against the paper's, a two-sided test per cell."""

from __future__ import annotations

import pandas as pd
import pytest

from psit_lib.studies.psit.protocol.reproduction import PAPER_N, paper_model, reproduction_check, reproduction_reading
from psit_lib.studies.psit.reference import self_consistency_reference


@pytest.mark.parametrize("served, study", [
    ("Qwen/Qwen3-32B", "Qwen3 32B"), ("qwen3-32b", "Qwen3 32B"), ("openai/gpt-oss-20b", "GPT-OSS 20B"),
    ("gpt-oss-120b", "GPT-OSS 120B"), ("qwen3-235b-a22b-thinking-2507", "Qwen3 235B"),
    ("psit-sim", None), ("qwen2.5-coder-0.5b-instruct", None), ("llama-3-8b", None)])
def test_served_names_map_to_the_studys_models_and_nothing_else_does(served, study):
    assert paper_model(served) == study


def _rates(model, agent, successes, n, task="hangman"):
    return pd.DataFrame([{"task": task, "model": model, "agent": agent, "n_scored": n, "n_failed": 0,
                          "successes": successes, "rate": successes / n if n else float("nan")}])


@pytest.mark.slow
def test_a_rate_far_from_the_papers_differs_and_one_close_to_it_is_consistent():
    paper = self_consistency_reference("hangman", ["private_cot"])
    paper_rate = float(paper[paper["model"] == "Qwen3 32B"]["rate"].iloc[0])
    close = round(paper_rate * PAPER_N)
    far = 0 if paper_rate > 0.5 else PAPER_N
    both = pd.concat([_rates("qwen3-32b", "private_cot", close, PAPER_N),
                      _rates("gpt-oss-20b", "private_cot", far, PAPER_N)])
    check = reproduction_check(both)
    verdicts = dict(zip(check["paper_model"], check["verdict"]))
    assert verdicts["Qwen3 32B"] == "consistent"
    far_rate = float(self_consistency_reference("hangman", ["private_cot"]).set_index("model").at["GPT-OSS 20B", "rate"])
    assert verdicts["GPT-OSS 20B"] == ("differs" if abs(far_rate - far / PAPER_N) > 0.4 else "consistent")
    assert (check["p_holm"] >= check["p_two_sided"]).all()
    assert "differ" in reproduction_reading(check, ["qwen3-32b", "gpt-oss-20b"]) or \
        "consistent" in reproduction_reading(check, ["qwen3-32b", "gpt-oss-20b"])


@pytest.mark.slow
def test_a_small_run_cannot_differ_from_anything_and_says_consistent_not_equal():
    check = reproduction_check(_rates("Qwen3-32B", "vanilla", 1, 2))  # 1/2 vs the paper's 2/50
    assert list(check["verdict"]) == ["consistent"]
    assert "cannot tell them apart" in reproduction_reading(check, ["Qwen3-32B"])


def test_a_run_on_other_models_covers_no_cell_and_says_so():
    check = reproduction_check(_rates("psit-sim", "vanilla", 3, 10))
    assert check.empty and list(check.columns)[-1] == "verdict"
    assert reproduction_reading(check, ["psit-sim"]).startswith("No Table 1 cell is covered")


def test_unscored_cells_are_left_out():
    assert reproduction_check(_rates("qwen3-32b", "vanilla", 0, 0)).empty


@pytest.mark.slow
def test_psit_compare_paper_tests_each_covered_cell_and_fits_120_columns(tmp_path, monkeypatch, capsys):
    from psit_lib.cli import main
    from psit_lib.runs.folder import RunMetadata, RunStore

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    store = RunStore(tmp_path / "r1" / "02_hangman_fork_tests")
    store.write_metadata(RunMetadata(notebook="02_hangman_fork_tests"))
    store.tables_dir.mkdir(parents=True)
    pd.concat([_rates("Qwen/Qwen3-32B", "private_cot", 0, 50), _rates("Qwen/Qwen3-32B", "vanilla", 2, 50),
               _rates("Qwen/Qwen3-32B", "workflow_overwrite", 0, 0)]).to_csv(
        store.tables_dir / "table1_self_consistency.csv", index=False)
    assert main(["compare", "r1", "--paper"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 120, out
    rows = [line for line in out.splitlines() if line.strip().startswith("hangman")]
    assert len(rows) == 2 and "Qwen3 32B" in rows[0]
    ref = self_consistency_reference("hangman", ["private_cot"]).set_index("model").at["Qwen3 32B", "rate"]
    assert rows[0].endswith("differs" if ref > 0.3 else "consistent")
    assert rows[1].endswith("consistent")  # 2/50 against the paper's vanilla rate on Qwen3 32B
    assert main(["compare", "r1", "r1", "--paper"]) == 2
    assert main(["compare", "r1"]) == 2
