"""``psit export``: a run as Inspect AI eval logs (read back with inspect_ai's own reader: one
sample per episode with its scores) and its tables as Markdown and LaTeX."""

from __future__ import annotations

import json

import pytest

from psit_lib.cli import main
from psit_lib.runs.folder import RunFolder

from test_report_explorer import _record


@pytest.fixture
def run(tmp_path):
    run = tmp_path / "results" / "r1"
    nb = run / "02_hangman_fork_tests"
    (nb / "tables").mkdir(parents=True)
    records = [_record("hangman/m/vanilla/0000", "vanilla", leak=True, outcome="leakage"),
               _record("hangman/m/workflow/0000", "workflow")]
    (nb / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (nb / "scores.jsonl").write_text(json.dumps({"episode_id": "hangman/m/workflow/0000", "scorer": "judge",
                                                 "value": 0.5}) + "\n")
    (nb / "tables" / "self_consistency.csv").write_text("agent,rate,n_scored\nvanilla_x,0.123456,2\nworkflow,1.0,2\n")
    (nb / "tables" / "empty.csv").write_text("agent,rate\n")
    return run


def test_inspect_reads_back_one_sample_per_episode_with_its_stored_scores(run):
    """Scores come from the run's scores file only (tests/test_inspect_export.py reads every study)."""
    from inspect_ai.log import read_eval_log

    assert main(["export", str(run), "--inspect"]) == 0
    logs = sorted((run / "export" / "inspect").glob("*.eval"))
    assert [p.name for p in logs] == ["02_hangman_fork_tests-m.eval"]
    log = read_eval_log(str(logs[0]))
    assert log.status == "success" and log.eval.model == "m" and log.eval.task == "02_hangman_fork_tests"
    assert [s.id for s in log.samples] == list(RunFolder(run / "02_hangman_fork_tests").records())
    leaked, kept = log.samples
    assert kept.scores["judge"].value == 0.5 and kept.scores["judge"].explanation == "the scorer stored no explanation"
    assert not leaked.scores  # nothing stored for it: no score is made up from the record
    assert [m.role for m in kept.messages][:4] == ["user", "assistant", "user", "assistant"]
    assert kept.messages[-1].text == "no" and kept.messages[-2].metadata["branch"].startswith("branch 3 of 3")
    assert {s.name: s.metrics["all"].value for s in log.results.scores} == {"judge": 0.5}


def _simulated(run):
    """The fixture's folder as a simulated run records itself, with a key table holding intervals
    and the paper's reported rows."""
    nb = run / "02_hangman_fork_tests"
    (nb / "metadata.json").write_text(json.dumps({"backend": "sim", "simulated": True, "model": "psit-sim",
                                                  "profile": "default", "headline": "*Self-consistency by Table 1's "
                                                  "rule:*\nvanilla lowest."}))
    (nb / "params.json").write_text(json.dumps({"_backend": "sim", "_models": ["psit-sim"], "_profile": "default"}))
    (nb / "tables" / "table1_self_consistency.csv").write_text(
        "model,agent,n_scored,successes,rate,wilson_low,wilson_high\n"
        "psit-sim,vanilla_x,10,9,0.9,0.5958499732047614,0.982123786904927\n"
        "psit-sim,workflow,10,1,0.1,0.017876213095072924,0.40415002679523854\n"
        "reference study,vanilla_x,,,0.02,,\n")
    return nb


def test_a_markdown_table_of_a_simulated_run_says_its_run_and_that_it_is_simulated(run):
    _simulated(run)
    assert main(["export", str(run), "02", "--markdown"]) == 0
    markdown = (run / "export" / "markdown" / "02_hangman_fork_tests.md").read_text()
    ours, paper = markdown.split("\n\n**", 1)
    assert ours.startswith("**Self-consistency by Table 1's rule · ")  # the report's title, not a file name
    assert "run r1" in ours and "(simulated)" in ours and "model=psit-sim" in ours and "profile=default" in ours
    assert "| agent | n scored | successes | rate [95% CI] |" in ours  # headers in words, bounds merged
    assert "| vanilla_x | 10 | 9 | 0.9 [0.596, 0.982] |" in ours and "reference" not in ours
    assert "the paper's reported numbers, not measured by this run" in paper and "| vanilla_x | — | — | 0.02 |" in paper
    assert "self_consistency" not in markdown.replace("Self-consistency", "")  # one key table, not every table


def test_tables_export_as_latex_and_csv_with_their_provenance(run):
    _simulated(run)
    assert main(["export", str(run), "02", "--latex", "--csv"]) == 0
    latex = (run / "export" / "latex" / "02_hangman_fork_tests.tex").read_text()
    assert "\\begin{tabular}{lrrr}" in latex and "vanilla\\_x & 10 & 9 & 0.9 [0.596, 0.982]" in latex
    assert "\\toprule" in latex and "run r1" in latex and "(simulated)" in latex and "rate [95\\% CI]" in latex
    import pandas as pd

    csv = pd.read_csv(run / "export" / "csv" / "02_hangman_fork_tests.csv")
    assert list(csv["rate [95% CI]"]) == ["0.9 [0.596, 0.982]", "0.1 [0.0179, 0.404]"]
    assert csv["source"].str.contains("run r1 · backend=sim \\(simulated\\)").all()
    paper = pd.read_csv(run / "export" / "csv" / "02_hangman_fork_tests-paper.csv")
    assert paper["source"].str.startswith("Self-consistency by Table 1's rule: the paper's reported numbers").all()


def test_a_notebook_without_its_key_table_exports_its_first_table_with_rows(run):
    assert main(["export", str(run), "02", "--markdown"]) == 0
    markdown = (run / "export" / "markdown" / "02_hangman_fork_tests.md").read_text()
    assert "| agent | rate | n scored |" in markdown and "| vanilla_x | 0.123 | 2 |" in markdown
    assert "empty" not in markdown and "run r1" in markdown


def test_export_needs_a_format(run, capsys):
    assert main(["export", str(run)]) == 2
    assert "--inspect, --markdown, --latex or --csv" in capsys.readouterr().err
