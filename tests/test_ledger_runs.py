"""The ledger on whole run folders (issue #36's "done when"): ``psit compare RUN --paper`` on the paper's own counts
gives every claim the paper's own conclusion or a stated reason; on a simulated run no ledger row, reproduction table
or verdict sentence says supported, consistent or differs; and a capped real-endpoint record set reads "not
comparable" from its stored calls alone (a rescore, no model call)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pandas as pd

from psit_lib.analysis.claims import INCONCLUSIVE, NO_COUNTS, RunContext, ledger, merge_tables
from psit_lib.analysis.verdicts import ILLUSTRATES, NOT_COMPARABLE
from psit_lib.runs.folder import RunMetadata, RunStore
from psit_lib.studies.basis import claims as basis
from psit_lib.studies.psit import claims as psit

VERDICT_WORDS = re.compile(r"(?<![-\w])(supported|consistent|differs)(?![-\w])", re.IGNORECASE)
QUOTED = re.compile(r"“[^”]*”")


PAPER_COUNTS_LINE = re.compile(r"on the paper's counts: .*?(?= (?:run|test): )")
PAPER_COUNTS_CELL = re.compile(r"<div class='paper-test'>.*?</div>")


def verdict_words(text: str) -> list[str]:
    """Verdict words in ``text`` outside the papers' own quoted sentences (RQ1's quote says "consistent") and the
    test on the paper's own counts (which a simulated run's ledger still shows: it is the paper's, not the run's)."""
    flat = PAPER_COUNTS_CELL.sub("", " ".join(text.split()))
    return VERDICT_WORDS.findall(PAPER_COUNTS_LINE.sub("", QUOTED.sub("", flat)))


def _folder(run: Path, notebook: str, tables: dict[str, pd.DataFrame], *, backend: str, model: str) -> None:
    store = RunStore(run / notebook)
    store.write_metadata(RunMetadata(notebook=notebook, backend=backend, simulated=backend == "sim", model=model))
    store.tables_dir.mkdir(parents=True)
    for name, table in tables.items():
        table.to_csv(store.tables_dir / f"{name}.csv", index=False)


def _ledger_lines(out: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^\[([A-Z]+-\d)\] ([A-Z ]+?) · ", out, re.MULTILINE)}


def test_psit_compare_paper_on_the_papers_own_counts_gives_its_conclusions_or_a_reason(tmp_path, monkeypatch, capsys):
    from psit_lib.cli import main
    from psit_lib.report.ledger import all_claims

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("PSIT_PAPER_MODELS", "basis-model=BASIS")
    run = tmp_path / "paper"
    _folder(run, "02_hangman_fork_tests", {psit.TABLE: psit.paper_table1()}, backend="openai", model="GPT-OSS 20B")
    _folder(run, "06_basis_cab_scenarios", {basis.TABLE: basis.paper_pooled().assign(model="basis-model", n_failed=0)},
            backend="openai", model="basis-model")
    assert main(["compare", "paper", "--paper"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 120
    verdicts = _ledger_lines(out)
    flat = " ".join(out.split())
    for claim in all_claims():
        own = claim.paper_decision()
        if own is not None:  # the same test on the same counts: the paper's own conclusion
            assert verdicts[claim.id] == own.verdict.upper(), (claim.id, verdicts[claim.id], own.statistic)
        else:  # no counts: the run cannot decide either, and the ledger says why the paper's counts cannot
            assert verdicts[claim.id] == INCONCLUSIVE.upper()
            assert f"on the paper's counts: {NO_COUNTS}: {claim.no_counts}" in flat, claim.id
    assert {verdicts[c] for c in ("PSIT-3", "PSIT-5", "BASIS-1", "BASIS-2", "BASIS-3")} == {"SUPPORTED"}
    # where the paper's own counts leave a claim open, the ledger names the cells
    assert "undecided: diagnosis/mem0 on GPT-OSS 120B 25/50" in flat
    # every Table 1 cell of the paper against itself: never differs, and a verdict is given (it is the paper's model)
    rows = [line for line in out.splitlines() if line.startswith(("  hangman · ", "  diagnosis · "))]
    assert len(rows) == 96 and not any(line.endswith(("differs", "not comparable", "protocol")) for line in rows)


def _simulated_run(run: Path) -> None:
    table1 = pd.DataFrame([{"task": "hangman", "model": "psit-sim", "agent": a, "n_scored": 10, "n_failed": 0,
                            "successes": k, "rate": k / 10, "host_max_tokens": 2048, "cut_share": 0.0}
                           for a, k in (("vanilla", 1), ("mem0", 0), ("private_cot", 10), ("workflow_overwrite", 9),
                                        ("autonomous_overwrite", 6))])
    failures = pd.DataFrame([{"task": "hangman", "model": "psit-sim", "agent": a, "self-consistent": 5,
                              "over-confirmation": 1, "state substitution": 3, "all denial": 1, "leakage": 0}
                             for a in ("vanilla", "private_cot")] +
                            [{"task": "diagnosis", "model": "psit-sim", "agent": "vanilla", "self-consistent": 2,
                              "over-confirmation": 6, "state substitution": 0, "all denial": 1, "leakage": 1}])
    _folder(run, "02_hangman_fork_tests", {psit.TABLE: table1, "failure_modes": failures}, backend="sim",
            model="psit-sim")
    episodes = pd.DataFrame([{"episode_id": f"e{e}", "domain": "it", "agent": a, "turns": 10, "H_u": h, "D_r": h,
                              "relevance": 9, "answer_quality": 8, "instruction_following": 8, "coherence": 9}
                             for e in range(6) for a, h in (("transcript", 0.3), ("retrieval_k5", 0.3), ("acc", 0.0))])
    _folder(run, "05_acc_judge_evaluation", {"episode_rates": episodes}, backend="sim", model="psit-sim")
    pooled = basis.paper_pooled().assign(model="psit-sim", n_failed=0)
    _folder(run, "06_basis_cab_scenarios", {basis.TABLE: pooled}, backend="sim", model="psit-sim")


def test_a_simulated_run_says_no_verdict_anywhere(tmp_path, monkeypatch, capsys):
    """The ledger (index and ``--paper``), the reproduction tables, the verdict sentences and the notebooks' claim
    cells' functions: on a simulated run none says supported, consistent or differs."""
    from psit_lib.cli import main
    from psit_lib.report.ledger import ledger_section, run_context
    from psit_lib.studies.acc import claims as acc
    from psit_lib.studies.psit.protocol.reproduction import reproduction_check, reproduction_reading

    monkeypatch.setenv("PSIT_RESULTS_DIR", str(tmp_path))
    monkeypatch.setenv("PSIT_PAPER_MODELS", "psit-sim=BASIS")  # even a roster naming it does not make it the paper's
    run = tmp_path / "sim"
    _simulated_run(run)
    assert main(["compare", "sim", "--paper"]) == 0
    out = capsys.readouterr().out
    assert not verdict_words(out), verdict_words(out)
    assert set(_ledger_lines(out).values()) <= {ILLUSTRATES.upper(), INCONCLUSIVE.upper()}
    assert "ILLUSTRATES THE PROTOCOL" in out and "BASIS Table 1 success" in out
    section = ledger_section(run)
    rows = re.findall(r"<tr><td>(?:PSIT|ACC|BASIS)-.*?</tr>", section, re.DOTALL)
    assert len(rows) == 15 and not any(verdict_words(row) for row in rows)
    context = run_context(run)
    assert context.simulated and context.models == ("psit-sim",)
    table1 = pd.read_csv(run / "02_hangman_fork_tests" / "tables" / f"{psit.TABLE}.csv")
    runs_columns = ["id", "claim", "quote", "run_evidence", "test", "verdict"]  # the paper's counts stay the paper's
    for notebook_output in (psit.claims_ledger({psit.TABLE: table1}, context)[runs_columns].to_string(),
                            acc.claims_ledger({"episode_rates": pd.DataFrame()}, context)[runs_columns].to_string(),
                            basis.claims_ledger({basis.TABLE: basis.paper_pooled()}, context)[runs_columns].to_string(),
                            psit.verdict_rule(run=context), basis.verdict_rule(run=context),
                            reproduction_reading(reproduction_check(table1, simulated=True), ["psit-sim"]),
                            basis.success_against_paper(basis.paper_pooled().assign(model="psit-sim"),
                                                        simulated=True).to_string()):
        assert not verdict_words(notebook_output), notebook_output


def test_a_capped_real_endpoint_record_set_reads_not_comparable(tmp_path):
    """A real endpoint without PSIT_MODEL_SETTINGS capped the host's replies at 512 tokens: its stored calls say so,
    and a rescore (no model call) marks the cells not comparable in the Table 1 rates, the reproduction check and
    the ledger."""
    from psit_lib.runs import Experiment
    from psit_lib.studies.registry import params_model, study_of

    notebook = "02_hangman_fork_tests"
    study = study_of(notebook)
    params = params_model(notebook)(agents=["vanilla", "private_cot"], n_episodes=3, sweep_episodes=0)
    exp = Experiment(notebook, params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    asyncio.run(study.run(exp, params))
    folder = exp.store.dir
    # the same episodes as a real endpoint serving qwen3-32b with the harness's host cap would have stored them
    lines = [json.loads(line) for line in exp.store.records_source.read_text().splitlines()]
    served = []
    for line in lines:
        if line["spec"].get("model") != "psit-sim":
            continue
        line["episode_id"] = line["episode_id"].replace("psit-sim", "qwen3-32b")
        line["spec"]["model"] = "qwen3-32b"
        if line.get("result"):
            line["result"]["model"] = "qwen3-32b"
        for i, call in enumerate(line["calls"]):
            if call["role"] == "hangman_host":
                call["max_tokens"], call["finish_reason"] = 512, "length" if i == 0 else "stop"
        served.append(line)
    exp.store.records_source.write_text("".join(json.dumps(line) + "\n" for line in served))
    (folder / "scores.jsonl").unlink()
    stored = json.loads((folder / "params.json").read_text())
    (folder / "params.json").write_text(json.dumps({**stored, "_backend": "openai", "_models": ["qwen3-32b"],
                                                    "_profile": "n/a"}))
    tables = study.rescore(folder).tables
    table1 = tables[psit.TABLE]
    assert set(table1["host_max_tokens"]) == {512} and (table1["cut_share"] == 1.0).all()
    check = tables["reproduction"]
    assert len(check) == 2 and set(check["verdict"]) == {NOT_COMPARABLE}
    assert "capped at 512 tokens, below the paper's 2,048" in check["note"].iloc[0]
    decided = ledger(psit.claims(), merge_tables({notebook: tables}), RunContext(models=("qwen3-32b",)))
    verdicts = dict(zip(decided["id"], decided["verdict"]))
    assert verdicts["PSIT-1"] == NOT_COMPARABLE and verdicts["PSIT-2"] == NOT_COMPARABLE
    # the same records at the paper's budget are comparable
    for line in served:
        for call in line["calls"]:
            if call["role"] == "hangman_host":
                call["max_tokens"], call["finish_reason"] = 2048, "stop"
    exp.store.records_source.write_text("".join(json.dumps(line) + "\n" for line in served))
    (folder / "scores.jsonl").unlink()
    again = study.rescore(folder).tables
    assert set(again["reproduction"]["verdict"]) & {"consistent", "differs", "inconclusive"}
    assert NOT_COMPARABLE not in set(again["reproduction"]["verdict"])


def test_the_host_budget_rule_and_the_pre_flight_line(capsys):
    from psit_lib.cli.preflight import budget_note, say_budget
    from psit_lib.llm.model_settings import REPLY_CAP, ModelRequestSettings, reply_budget
    from psit_lib.llm.settings import LLMSettings

    own = ModelRequestSettings(max_tokens=4096)
    assert reply_budget("hangman_host", 2048, None, simulated=False) == REPLY_CAP == 512
    assert reply_budget("hangman_host", 2048, own, simulated=False) == 4096
    assert reply_budget("hangman_host", 2048, None, simulated=True) == 2048
    assert reply_budget("memory_updater", 2048, None, simulated=False) == 2048
    real = LLMSettings(backend="openai", base_urls=("http://127.0.0.1:9/v1",), model="qwen3-32b")
    note = budget_note(real)
    assert note is not None and "capped at 512 tokens where the study used 2,048" in note and "qwen3-32b" in note
    assert budget_note(real.model_copy(update={"model_settings": {"qwen3-32b": own}})) is None
    assert budget_note(LLMSettings()) is None  # the simulator is not capped
    say_budget(real, {"05_acc_judge_evaluation": {}})  # no private-state notebook: nothing to say
    assert capsys.readouterr().err == ""
    say_budget(real, {"02_hangman_fork_tests": {"models": ["qwen3-32b"]}})
    assert capsys.readouterr().err.count("\n") == 1  # one line
    # the cap it names is the one the calls carry: a run's own max_tokens below REPLY_CAP is that
    assert "capped at 96 tokens" in budget_note(real, max_tokens=96)
    say_budget(real, {"02_hangman_fork_tests": {"max_tokens": 96}, "03_diagnosis_ddxplus": {"max_tokens": 300},
                      "05_acc_judge_evaluation": {"max_tokens": 20}})
    assert "capped at 96 tokens" in capsys.readouterr().err
