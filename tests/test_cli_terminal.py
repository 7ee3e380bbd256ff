"""The command line in a terminal 100 columns wide: help, ``psit list``, ``psit runs``, the dry run and
``psit compare RUN --paper`` print no line over 100 columns and break no word, headlines print as plain text, and every usage
error is one sentence with exit status 2 (an unknown scorer, a misspelt parameter with its
"did you mean"); ``psit lab`` as root starts JupyterLab with ``--allow-root`` and says so."""

from __future__ import annotations

import argparse
import asyncio
import json
import re

import pandas as pd
import pytest

from psit_lib.cli import EPILOG, build_parser, main
from psit_lib.cli.terminal import plain, reflow, width


@pytest.fixture(autouse=True)
def _columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the command line with the words that reach it: psit, psit run, psit sim serve..."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


@pytest.mark.parametrize("columns", [100, 70])
def test_every_help_fits_the_terminal_and_breaks_no_word(columns, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(columns))
    commands = _commands(build_parser())
    assert len(commands) > 10
    for path, parser in commands:
        with pytest.raises(SystemExit) as done:
            main([*path, "--help"])
        assert done.value.code == 0
        out = capsys.readouterr().out
        long = [line for line in out.splitlines() if len(line) > columns]
        assert not long, f"psit {' '.join(path)} --help: {long}"
        words = set(out.split())
        for text in (parser.description or "", parser.epilog or ""):
            broken = [w for w in text.split() if w not in words]
            assert not broken, f"psit {' '.join(path)} --help breaks or loses words: {broken[:5]}"
    assert "examples:" in EPILOG


def test_a_long_help_line_wraps_between_words_under_its_column():
    line = "  psit compare run-a --paper                 " + "the claims ledger and every paper number " * 3
    lines = reflow(line, 80)
    assert len(lines) > 1 and all(len(x) <= 80 for x in lines)
    assert all(x.startswith(" " * 45) for x in lines[1:])  # the second column stays under itself
    assert " ".join(" ".join(lines).split()) == " ".join(line.split())  # every word kept whole
    assert reflow("short", 80) == ["short"]


def test_headlines_print_without_their_markdown():
    from psit_lib.cli.summary import headline_lines

    assert plain("*Self-consistency by Table 1's rule:*") == "Self-consistency by Table 1's rule:"
    assert plain("**vanilla** and `workflow_overwrite` tie; private_cot_x leads") == \
        "vanilla and workflow_overwrite tie; private_cot_x leads"
    lines = headline_lines("02_hangman_fork_tests", "*Self-consistency by Table 1's rule (the study's metric):*\n"
                           "hangman · psit-sim: workflow_overwrite highest (1), vanilla lowest (0).", width())
    assert lines[1] == "    Self-consistency by Table 1's rule (the study's metric):"
    assert "*" not in "".join(lines) and all(len(line) <= 100 for line in lines)


def test_the_width_is_the_terminals_capped_at_100(monkeypatch):
    assert width() == 100
    monkeypatch.setenv("COLUMNS", "180")
    assert width() == 100
    monkeypatch.setenv("COLUMNS", "72")
    assert width() == 72


def test_psit_list_fits_100_columns(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    assert '"autonomous_patch_replace"' in out and "(study: 50)" in out  # long defaults wrapped, kept


def test_the_dry_run_fits_100_columns(capsys):
    assert main(["run", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100, out
    assert "\n    (with the calls of" in out  # a row's note below it, the row left whole


def _run(root, name, headline, models):
    folder = root / name / "02_hangman_fork_tests"
    folder.mkdir(parents=True)
    (folder / "metadata.json").write_text(json.dumps({"backend": "openai", "models_run": models, "headline": headline,
                                                      "started": "2026-11-20T10:00:00", "git_commit": "abc1234"}))
    (root / name / "run.json").write_text(json.dumps({"run_id": name, "complete": True}))


def test_psit_runs_fits_100_columns(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    headline = ("*Self-consistency by Table 1's rule (the study's metric):*\nhangman · Qwen3-32B: private_cot and "
                "workflow_overwrite tied highest (0.9), mem0, amem and lightmem tied lowest (0), separated.")
    _run(tmp_path, "run-with-a-rather-long-name", headline,
         ["Qwen/Qwen3-235B-A22B-Thinking-2507", "openai/gpt-oss-120b", "Qwen/Qwen3-32B", "openai/gpt-oss-20b"])
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100, out
    assert "Qwen/Qwen3-235B-A22B-Thinking-2507" in out and "openai/gpt-oss-20b" in out
    assert "Self-consistency by Table 1's rule" in out and "*" not in out


def test_psit_compare_paper_fits_100_columns_with_long_labels(tmp_path, monkeypatch, capsys):
    from psit_lib.runs.folder import RunMetadata, RunStore

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    store = RunStore(tmp_path / "r1" / "02_hangman_fork_tests")
    store.write_metadata(RunMetadata(notebook="02_hangman_fork_tests"))
    store.tables_dir.mkdir(parents=True)
    pd.DataFrame([{"task": "hangman", "model": "Qwen/Qwen3-235B-A22B-Thinking-2507", "agent": agent, "n_scored": 7,
                   "n_failed": 0, "successes": 3, "rate": 3 / 7}
                  for agent in ("workflow_overwrite", "autonomous_patch_replace", "vanilla")]).to_csv(
        store.tables_dir / "table1_self_consistency.csv", index=False)
    assert main(["compare", "r1", "--paper"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in out) <= 100
    verdicts = [line for line in out if "/7 " in line and "]  " in line]  # the cells, not the ledger's evidence
    assert len(verdicts) == 3 and all(re.search(r"  (differs|consistent ±[\d.]+|inconclusive \(.*\))$", line)
                                      for line in verdicts), verdicts  # each verdict whole
    assert any(line.strip() == "hangman · autonomous_patch_replace · Qwen3 235B" for line in out)  # whole, above its row


@pytest.fixture
def probe_run(tmp_path):
    from psit_lib.runs import Experiment
    from psit_lib.studies.registry import params_model, study_of

    notebook = "90_example_reveal_probe"
    params = params_model(notebook)(n_episodes=1, lengths=[4])
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "probe")
    asyncio.run(study_of(notebook).run(exp, params))
    return tmp_path / "probe"


def _one_sentence(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("psit: ") and "Traceback" not in err, err
    return lines[0]


def test_an_unknown_scorer_is_one_sentence_and_exit_2(probe_run, monkeypatch, capsys):
    monkeypatch.setenv("PSIT_RESULTS_DIR", str(probe_run.parent))
    assert main(["rescore", "probe", "--scorer", "nosuch"]) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "no chosen notebook of the run has a scorer 'nosuch'" in line and "consistent" in line
    assert main(["rescore", "probe", "--scorer", "consistant"]) == 2
    assert "(did you mean 'consistent'?)" in _one_sentence(capsys.readouterr().err)
    assert main(["rescore", "probe", "--scorer", "consistent"]) == 0


def test_a_misspelt_parameter_says_what_was_meant(capsys):
    assert main(["run", "02", "-p", "n_episode=2", "--dry-run"]) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "n_episode" in line and "(did you mean 'n_episodes'?)" in line
    assert main(["run", "-p", "agnets=[vanilla]", "--dry-run"]) == 2
    assert "(did you mean 'agents'?)" in _one_sentence(capsys.readouterr().err)


@pytest.mark.parametrize("root", [True, False])
def test_psit_lab_as_root_passes_allow_root_and_says_so(root, tmp_path, monkeypatch, capsys):
    import psit_lib.cli.lab as lab

    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path / "adhoc"))
    started = []
    monkeypatch.setattr(lab, "running_as_root", lambda: root)
    monkeypatch.setattr(lab.subprocess, "call", lambda command: started.append(command) or 0)
    assert main(["lab", "--", "--no-browser"]) == 0
    (command,) = started
    out = capsys.readouterr().out
    assert ("--allow-root" in command) is root and command[-1] == "--no-browser"
    assert ("started with --allow-root" in out) is root
    started.clear()
    monkeypatch.setattr(lab, "running_as_root", lambda: True)
    assert main(["lab", "--", "--allow-root"]) == 0
    assert started[0].count("--allow-root") == 1  # asked for already: not twice
