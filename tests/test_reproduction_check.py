"""The reproduction check: a run's Table 1 rates against the paper's, a verdict with power per cell."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from psit_lib.studies.psit.protocol.reproduction import PAPER_N, reproduction_check, reproduction_reading
from psit_lib.studies.psit.reference import self_consistency_reference, study_model


@pytest.mark.parametrize("served, study", [
    ("Qwen/Qwen3-32B", "Qwen3 32B"), ("qwen3-32b", "Qwen3 32B"), ("openai/gpt-oss-20b", "GPT-OSS 20B"),
    ("gpt-oss-120b", "GPT-OSS 120B"), ("qwen3-235b-a22b-thinking-2507", "Qwen3 235B"),
    ("psit-sim", None), ("qwen2.5-coder-0.5b-instruct", None), ("llama-3-8b", None)])
def test_served_names_map_to_the_studys_models_and_nothing_else_does(served, study):
    assert study_model(served) == study


def _rates(model, agent, successes, n, task="hangman"):
    return pd.DataFrame([{"task": task, "model": model, "agent": agent, "n_scored": n, "n_failed": 0,
                          "successes": successes, "rate": successes / n if n else float("nan")}])


def test_a_rate_far_from_the_papers_differs_and_one_matching_it_at_400_is_consistent():
    paper = self_consistency_reference("hangman", ["private_cot"]).set_index("model")["rate"]
    close = round(paper["Qwen3 32B"] * 400)
    far = 0 if paper["GPT-OSS 20B"] > 0.5 else PAPER_N
    both = pd.concat([_rates("qwen3-32b", "private_cot", close, 400), _rates("gpt-oss-20b", "private_cot", far, PAPER_N)])
    verdicts = dict(zip((check := reproduction_check(both))["paper_model"], check["verdict"]))
    assert verdicts == {"Qwen3 32B": "consistent", "GPT-OSS 20B": "differs"}
    assert "p_holm" not in check.columns  # no correction over the notebook's cells


def test_a_small_run_is_inconclusive_never_consistent():
    check = reproduction_check(_rates("Qwen3-32B", "vanilla", 0, 2))  # 0/2 vs the paper's 2/50
    assert list(check["verdict"]) == ["inconclusive"]
    assert "too small to decide anything" in reproduction_reading(check, ["Qwen3-32B"])


def test_a_run_on_other_models_covers_no_cell_and_says_so():
    check = reproduction_check(_rates("psit-sim", "vanilla", 3, 10))
    assert check.empty and "verdict" in check.columns
    assert reproduction_reading(check, ["psit-sim"]).startswith("No Table 1 cell is tested: this run's model (psit-sim) "
                                                                "is the simulated model, which illustrates the protocol")
    assert reproduction_reading(check, ["llama-3-8b"]).startswith("No Table 1 cell is covered")


def test_the_simulator_under_a_papers_name_illustrates_the_protocol():
    check = reproduction_check(_rates("qwen3-32b", "vanilla", 2, 50), simulated=True)
    assert list(check["verdict"]) == ["illustrates the protocol"] and check["run_n"].iloc[0] == 50
    assert "simulated model" in check["note"].iloc[0] and check["episodes_to_decide"].isna().all()
    assert reproduction_reading(check, ["qwen3-32b"]).startswith("No Table 1 cell is tested")


@pytest.mark.parametrize("budget, cut, verdict", [(512, 0.0, "not comparable"), (2048, 0.4, "not comparable"),
                                                  (4096, 0.05, "consistent")])
def test_a_cell_under_a_smaller_budget_or_cut_too_often_is_not_comparable(budget, cut, verdict):
    paper = self_consistency_reference("hangman", ["vanilla"]).set_index("model")["rate"]["Qwen3 32B"]
    table = _rates("qwen3-32b", "vanilla", round(paper * 400), 400).assign(host_max_tokens=budget, cut_share=cut)
    check = reproduction_check(table)
    assert check["verdict"].iloc[0] == verdict
    if verdict == "not comparable":
        assert check["note"].iloc[0] and "not comparable" in reproduction_reading(check, ["qwen3-32b"])


def test_unscored_cells_are_left_out():
    assert reproduction_check(_rates("qwen3-32b", "vanilla", 0, 0)).empty


def test_psit_compare_paper_prints_the_ledger_and_each_cells_verdict_within_100_columns(tmp_path, monkeypatch, capsys):
    from psit_lib.cli import main
    from psit_lib.runs.folder import RunMetadata, RunStore

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    store = RunStore(tmp_path / "r1" / "02_hangman_fork_tests")
    store.write_metadata(RunMetadata(notebook="02_hangman_fork_tests"))
    store.tables_dir.mkdir(parents=True)
    paper = self_consistency_reference("hangman", ["private_cot", "vanilla"]).set_index(["agent", "model"])["rate"]
    far = 0 if paper["private_cot", "Qwen3 32B"] > 0.5 else 50
    pd.concat([_rates("Qwen/Qwen3-32B", "private_cot", far, 50),
               _rates("Qwen/Qwen3-32B", "vanilla", round(paper["vanilla", "Qwen3 32B"] * 400), 400),
               _rates("Qwen/Qwen3-32B", "workflow_overwrite", 0, 0)]).to_csv(
        store.tables_dir / "table1_self_consistency.csv", index=False)
    assert main(["compare", "r1", "--paper"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100, out
    assert out.index("== Claims ledger") < out.index("== Paper numbers")
    for claim in ("PSIT-1", "PSIT-2", "PSIT-3", "ACC-1", "ACC-2", "BASIS-1"):
        line = next(line for line in out.splitlines() if line.startswith(f"[{claim}]"))
        assert re.match(rf"\[{claim}\] (SUPPORTED|CONTRADICTED|INCONCLUSIVE) · ", line), line
    rows = [line for line in out.splitlines() if line.strip().startswith("hangman · ")]
    assert len(rows) == 2 and "Qwen3 32B" in rows[0]
    assert rows[0].endswith("differs") and rows[1].endswith("consistent (h ±0.3)")
    assert "would read differs by chance" in out
    assert main(["compare", "r1", "--paper", "--margin", "0.1"]) == 0
    assert capsys.readouterr().out.count("consistent (h ±0.1)") == 0  # the paper's n = 50 cannot confirm h ±0.1
    assert main(["compare", "r1", "r1", "--paper"]) == 2
    assert main(["compare", "r1"]) == 2


@pytest.mark.parametrize("served", ["Qwen3-235B-A22B-Instruct-2507", "Qwen3-32B-AWQ", "qwen/qwen3-32b-fp8",
                                    "gpt-oss-20b-gguf"])
def test_a_near_name_is_not_the_papers_model_unless_the_roster_maps_it(served, monkeypatch):
    from psit_lib.studies.psit.reference import ROSTER_ENV, model_match_notes, near_study_model

    monkeypatch.delenv(ROSTER_ENV, raising=False)
    assert study_model(served) is None
    near = near_study_model(served)
    assert near is not None
    assert model_match_notes([served]) == [model_match_notes([served])[0]]
    assert "is not the paper's model" in model_match_notes([served])[0] and near in model_match_notes([served])[0]
    monkeypatch.setenv(ROSTER_ENV, f" {served} = {near} ; other=Qwen3 32B")
    assert study_model(served) == near and model_match_notes([served]) == []


def test_a_roster_naming_a_model_the_study_did_not_run_is_an_error():
    from psit_lib.studies.psit.reference import read_roster

    with pytest.raises(ValueError, match="PSIT_PAPER_MODELS"):
        read_roster({"PSIT_PAPER_MODELS": "my-model=Llama 3"})
    assert read_roster({}) == {}
    assert read_roster({"PSIT_PAPER_MODELS": "gpt-5-mini=BASIS"}) == {"gpt5mini": "BASIS"}  # an unrecorded model
    assert study_model("psit-sim", roster={"psitsim": "Qwen3 32B"}) is None  # the simulator is never the paper's


def test_the_reading_of_an_uncovered_run_says_a_near_name_is_not_the_papers(monkeypatch):
    monkeypatch.delenv("PSIT_PAPER_MODELS", raising=False)
    text = reproduction_reading(pd.DataFrame(), ["Qwen3-32B-AWQ"])
    assert "No Table 1 cell is covered" in text and "Qwen3-32B-AWQ is not the paper's model" in text
