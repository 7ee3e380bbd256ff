"""``psit export RUN``: a run as Inspect AI eval logs (``--inspect``, one sample per episode, so
``inspect view`` opens it) or its saved tables as Markdown or LaTeX for a paper, one file per notebook."""

from __future__ import annotations

import argparse
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.runs.load import resolve_run
from psit_lib.cli.errors import CliError
from psit_lib.cli.notebooks import chosen
from psit_lib.report.explorer import BASE_COLUMNS, TAIL_COLUMNS, episodes_table
from psit_lib.runs.folder import RunFolder, notebook_folders


def _notebooks(run: Path, names: list[str]) -> list[RunFolder]:
    folders = [f for f in notebook_folders(run) if f.has_records() or f.table_names()]
    if not folders:
        raise CliError(f"no notebook with episodes or tables in {run}")
    return chosen(names, folders, lambda f: f.dir.name, " of the run")


def _score_value(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def sample_scores(row: pd.Series) -> dict[str, Any]:
    """An episode's scores for Inspect: the study's measures (a fork's outcome under each view; a
    result's numeric and yes/no fields; never its free text or its trial index) and every
    per-episode score of the run (``scores.jsonl``), by name."""
    skip = set(BASE_COLUMNS) | set(TAIL_COLUMNS) | {"secret", "turns", "leak_turns", "trial", "index"}
    scores = {str(k).removeprefix("score: "): _score_value(v) for k, v in row.items()
              if k not in skip and _score_value(v) is not None and _score_value(v) != ""
              and (str(k).startswith("score: ") or k in ("outcome", "table1") or not isinstance(v, str))}
    if isinstance(row.get("table1"), str):  # a fork episode: passed or not, under each view (SPEC §1 steps 3, 5)
        scores["self_consistent"] = int(row.get("outcome") == "self_consistent")
        scores["table1_self_consistent"] = int(row["table1"] == "self_consistent")
    return scores


def _messages(record: dict[str, Any]) -> list[Any]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

    result = record.get("result") or {}
    conversation = result.get("transcript")
    if not isinstance(conversation, list):
        conversation = next((v for v in result.values() if isinstance(v, list) and v
                             and all(isinstance(m, dict) and "content" in m and "role" in m for m in v)), [])
    out: list[Any] = []
    for message in conversation:
        kind = ChatMessageAssistant if message.get("role") == "assistant" else ChatMessageUser
        out.append(kind(content=str(message.get("content") or "")))
    for branch in result.get("candidates") or []:  # the fork's branches, each a question and its answer
        out += [ChatMessageUser(content=str(branch.get("question"))), ChatMessageAssistant(content=str(branch.get("answer")))]
    return out


def inspect_logs(folder: RunFolder, run_id: str) -> list[Any]:
    """One :class:`inspect_ai.log.EvalLog` per model of the notebook folder."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalSample, EvalScore, EvalSpec
    from inspect_ai.scorer import Score

    table = episodes_table(folder)
    records = folder.records()
    meta = folder.metadata()
    logs = []
    for model, rows in table.groupby(table["model"].fillna("?").astype(str), sort=False):
        samples: list[Any] = []
        totals: dict[str, list[float]] = {}
        for _, row in rows.iterrows():
            record = records[row["episode"]]
            scores = sample_scores(row)
            for name, value in scores.items():
                if isinstance(value, (int, float)):
                    totals.setdefault(name, []).append(float(value))
            messages = _messages(record)
            first = next((m.content for m in messages if m.role == "user"), json.dumps(record.get("spec") or {}))
            samples.append(EvalSample(
                id=str(row["episode"]), epoch=1, input=str(first), target=str(row.get("secret") or ""),
                messages=messages, scores={k: Score(value=v) for k, v in scores.items()},
                metadata={"record": json.loads(json.dumps(record, default=str))},
                error=None))
        results = EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=[
            EvalScore(name=name, scorer=name, metrics={"mean": EvalMetric(name="mean", value=sum(v) / len(v))})
            for name, v in totals.items() if v])
        started = str(meta.started or datetime.now(timezone.utc).isoformat())
        spec = EvalSpec(created=started, task=folder.dir.name, model=str(model), run_id=run_id,
                        dataset=EvalDataset(name=folder.dir.name, samples=len(samples)),
                        config=EvalConfig(), task_args=folder.params().stored(),
                        metadata={"backend": meta.backend, "profile": meta.profile, "git_commit": meta.git_commit})
        logs.append(EvalLog(eval=spec, status="success", samples=samples, results=results))
    return logs


def export_inspect(run: Path, names: list[str]) -> list[Path]:
    try:
        from inspect_ai.log import write_eval_log
    except ImportError:
        raise CliError("psit export --inspect needs inspect_ai: pip install 'psit-lib[inspect]'") from None
    out = run / "export" / "inspect"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for folder in _notebooks(run, names):
        if not folder.has_records():
            continue
        for log in inspect_logs(folder, run.name):
            path = out / f"{folder.dir.name}-{re.sub(r'[^A-Za-z0-9._-]+', '_', log.eval.model)}.eval"
            write_eval_log(log, str(path))
            written.append(path)
    return written


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3g}"
    return str(value).replace("|", "\\|")


def markdown_table(frame: pd.DataFrame, caption: str) -> str:
    """A GitHub-flavoured Markdown table (numbers to 3 significant digits) under its caption."""
    heads = [str(c) for c in frame.columns]
    lines = [f"**{caption}**", "", "| " + " | ".join(heads) + " |",
             "| " + " | ".join("---:" if pd.api.types.is_numeric_dtype(frame[c]) else "---" for c in frame.columns) + " |"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def latex_table(frame: pd.DataFrame, caption: str) -> str:
    """A booktabs ``table`` (numbers to 3 significant digits) with its caption."""
    styled = (frame.style.format(lambda v: _cell(v), escape="latex").format_index(escape="latex", axis=1)
              .hide(axis="index"))
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame.columns)
    return styled.to_latex(hrules=True, caption=caption.replace("_", r"\_"), position="htbp", column_format=align) + "\n"


def export_tables(run: Path, names: list[str], kind: str) -> list[Path]:
    out = run / "export" / kind
    out.mkdir(parents=True, exist_ok=True)
    render, suffix = (markdown_table, ".md") if kind == "markdown" else (latex_table, ".tex")
    written = []
    for folder in _notebooks(run, names):
        frames = {Path(name).stem: pd.read_csv(folder.tables_dir / name) for name in folder.table_names()}
        parts = [render(frame, f"{folder.dir.name}: {name}") for name, frame in frames.items() if len(frame)]
        if parts:
            path = out / f"{folder.dir.name}{suffix}"
            path.write_text("\n".join(parts), encoding="utf-8")
            written.append(path)
    return written


def cmd_export(args: argparse.Namespace) -> int:
    if not (args.inspect or args.markdown or args.latex):
        raise CliError("psit export needs --inspect, --markdown or --latex")
    run = resolve_run(args.run)
    written = export_inspect(run, args.notebooks) if args.inspect else []
    for kind in ("markdown", "latex"):
        written += export_tables(run, args.notebooks, kind) if getattr(args, kind) else []
    for path in written:
        print(path)
    if args.inspect:
        print(f"open with: inspect view --log-dir {run / 'export' / 'inspect'}")
    return 0
