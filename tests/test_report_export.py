"""``psit export``: a run as Inspect AI eval logs (read back with inspect_ai's own reader: one
sample per episode with its scores) and its tables as Markdown and LaTeX."""

from __future__ import annotations

import json

import pytest

from psit_lib.cli import main
from psit_lib.report.explorer import episodes_table
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


def test_inspect_reads_back_one_sample_per_episode_with_its_scores(run):
    from inspect_ai.log import read_eval_log

    assert main(["export", str(run), "--inspect"]) == 0
    logs = sorted((run / "export" / "inspect").glob("*.eval"))
    assert [p.name for p in logs] == ["02_hangman_fork_tests-m.eval"]
    log = read_eval_log(str(logs[0]))
    table = episodes_table(RunFolder(run / "02_hangman_fork_tests"))
    assert log.status == "success" and log.eval.model == "m" and log.eval.task == "02_hangman_fork_tests"
    assert [s.id for s in log.samples] == list(table.episode)  # one sample per episode
    leaked, kept = log.samples
    assert leaked.scores["outcome"].value == "leakage" and leaked.scores["table1"].value == "leak"
    assert leaked.scores["self_consistent"].value == 0 and kept.scores["self_consistent"].value == 1
    assert kept.scores["judge"].value == 0.5 and "judge" not in leaked.scores  # scores.jsonl, per episode
    assert [m.role for m in kept.messages][:4] == ["user", "assistant", "user", "assistant"]
    assert kept.messages[-1].content == "no"  # the fork's last branch answer
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    assert means["self_consistent"] == 0.5 and means["judge"] == 0.5


def test_tables_export_as_markdown_and_latex(run):
    assert main(["export", str(run), "02", "--markdown", "--latex"]) == 0
    markdown = (run / "export" / "markdown" / "02_hangman_fork_tests.md").read_text()
    assert "| agent | rate | n_scored |\n| --- | ---: | ---: |" in markdown
    assert "| vanilla_x | 0.123 | 2 |" in markdown and "empty" not in markdown  # empty tables are left out
    latex = (run / "export" / "latex" / "02_hangman_fork_tests.tex").read_text()
    assert "\\begin{tabular}{lrr}" in latex and "vanilla\\_x & 0.123 & 2" in latex and "n\\_scored" in latex
    assert "\\toprule" in latex and "\\caption{02\\_hangman\\_fork\\_tests: self\\_consistency}" in latex


def test_export_needs_a_format(run, capsys):
    assert main(["export", str(run)]) == 2
    assert "--inspect, --markdown or --latex" in capsys.readouterr().err
