"""``psit export RUN``: a run as Inspect AI eval logs (``--inspect``, one sample per episode, so
``inspect view`` opens it), or each notebook's key table for a paper (``--markdown``, ``--latex``,
``--csv``): labelled as the report labels it, intervals beside their values, and captioned with the
run, backend, model(s), profile and "simulated" where it is, the paper's numbers apart as the paper's."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.analysis.labels import compact_table, format_number, provenance_label
from psit_lib.runs.load import resolve_run
from psit_lib.cli.errors import CliError
from psit_lib.cli.notebooks import chosen
from psit_lib.runs.folder import RunFolder, notebook_folders


def _notebooks(run: Path, names: list[str]) -> list[RunFolder]:
    folders = [f for f in notebook_folders(run) if f.has_records() or f.table_names()]
    if not folders:
        raise CliError(f"no notebook with episodes or tables in {run}")
    return chosen(names, folders, lambda f: f.dir.name, " of the run")


def export_inspect(run: Path, names: list[str]) -> list[Path]:
    """Each chosen notebook's episodes as Inspect eval logs under ``export/inspect/``
    (:mod:`psit_lib.cli.inspect_export`)."""
    try:
        from psit_lib.cli.inspect_export.logs import write_logs
    except ImportError:
        raise CliError("psit export --inspect needs inspect_ai: pip install 'psit-lib[inspect]'") from None
    return write_logs(_notebooks(run, names), run.name, run / "export" / "inspect")


INTERVAL_OF = {"wilson": ("rate",), "diff": ("difference",), "ci": ("gap", "mean"), "gap": ("absolute_gain", "gap")}
"""The value column an interval's bounds (``<name>_low``, ``<name>_high``) belong to, where it is not
``<name>`` itself: a Wilson interval is a rate's, a ``ci`` a gap's or a mean's."""
PAPER_WORDS = ("reference", "paper")
"""A row whose text says one of these (a ``source`` of "reference study (reported)") is the paper's."""


@dataclass(frozen=True)
class ExportTable:
    """One table as it leaves the workbook: its title, its cells as shown and its caption, which
    says what it is and where it comes from (run, backend, model, profile, simulated)."""

    title: str
    frame: pd.DataFrame
    caption: str


def provenance(folder: RunFolder, run_id: str) -> str:
    """The run, backend, model(s) and profile a notebook folder's tables come from, with
    "simulated" when they are the simulator's (the report's label, :func:`provenance_label`)."""
    meta, params = folder.metadata(), folder.params()
    models = params.run_models or [m for m in meta.models_run if not m.startswith(f"{meta.model}:")] or [meta.model or "?"]
    backend = meta.backend or params.run_backend or "?"
    label = provenance_label(backend, ", ".join(models), meta.profile or params.run_profile,
                             simulated=bool(meta.simulated) or None)
    return f"run {run_id} · {label}"


def key_table(folder: RunFolder) -> tuple[str, pd.DataFrame] | None:
    """The table a reader takes away from a notebook, as saved: its study's ``key_table``, else its
    metrics' first, else its first saved table with rows; None when it saved none."""
    from psit_lib.studies.registry import study_of

    saved = [name.removesuffix(".csv") for name in folder.table_names()]
    study = study_of(folder.dir.name)
    declared: list[str] = []
    if study is not None and folder.dir.name in study.notebooks:
        nb = study.notebook(folder.dir.name)
        declared = [*([nb.key_table] if nb.key_table else []), *nb.table_names]
    for name in dict.fromkeys([*declared, *saved]):
        if name in saved and len(frame := pd.read_csv(folder.tables_dir / f"{name}.csv")):
            return name, frame
    return None


def merge_intervals(frame: pd.DataFrame) -> pd.DataFrame:
    """Every value with its interval in one cell ("0.9 [0.596, 0.982]"), the bounds' columns
    dropped; other numbers as the report writes them (:func:`format_number`)."""
    shown = frame.map(format_number).astype(object)
    for low in [c for c in frame.columns if str(c).endswith("_low")]:
        stem = str(low).removesuffix("_low")
        high = f"{stem}_high"
        value = next((c for c in (stem, *INTERVAL_OF.get(stem, ())) if c in frame.columns and c != low), None)
        if high not in frame.columns or value is None:
            continue
        shown[value] = [f"{format_number(v)}" if lo != lo or hi != hi else
                        f"{format_number(v)} [{format_number(lo)}, {format_number(hi)}]"
                        for v, lo, hi in zip(frame[value], frame[low], frame[high])]
        shown = shown.drop(columns=[low, high]).rename(columns={value: f"{value} [95% CI]"})
    return shown


def _is_paper(row: pd.Series) -> bool:
    return any(isinstance(v, str) and v.lower().startswith(PAPER_WORDS) for v in row.values)


def _header(name: Any) -> str:
    text = str(name).replace("_", " ")
    return f"{text} (the paper's)" if str(name).startswith("paper_") else text


def export_tables_of(folder: RunFolder, run_id: str) -> list[ExportTable]:
    """A notebook's key table, labelled and with its intervals merged, and, apart and captioned as
    the paper's, the rows that are the paper's reported numbers; none when it saved no table."""
    found = key_table(folder)
    if found is None:
        return []
    name, frame = found
    headline = (folder.metadata().headline or "").splitlines()
    title = headline[0].strip("*: ") if headline and headline[0].startswith("*") else name.replace("_", " ")
    where = provenance(folder, run_id)
    paper = frame.apply(_is_paper, axis=1)
    out = []
    for rows, what, whose in ((frame[~paper], title, where),
                              (frame[paper], f"{title}: the paper's reported numbers, not measured by this run",
                               f"shown beside {where}")):
        if rows.empty:
            continue
        compact, lifted = compact_table(rows.reset_index(drop=True))
        shown = merge_intervals(compact)
        shown.columns = [_header(c) for c in shown.columns]
        caption = " · ".join([what, *(f"{k.replace('_', ' ')}: {v}" for k, v in lifted.items()), whose])
        out.append(ExportTable(title, shown, caption))
    return out


_NUMBER = re.compile(r"^[-+−]?[\d.,]+(e[-+]?\d+)?%?\*?( \[.*\])?$|^[—–-]$")


def _numeric(column: pd.Series) -> bool:
    """Whether a column of shown cells holds numbers (right-aligned)."""
    values = [str(v) for v in column.tolist()]
    return bool(values) and all(_NUMBER.match(v.strip()) for v in values)


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|")


def markdown_table(table: ExportTable) -> str:
    """A GitHub-flavoured Markdown table under its caption."""
    frame = table.frame
    lines = [f"**{table.caption}**", "", "| " + " | ".join(_cell(c) for c in frame.columns) + " |",
             "| " + " | ".join("---:" if _numeric(frame[c]) else "---" for c in frame.columns) + " |"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def latex_table(table: ExportTable) -> str:
    """A booktabs ``table`` with its caption."""
    frame = table.frame
    styled = frame.style.format(escape="latex").format_index(escape="latex", axis=1).hide(axis="index")
    align = "".join("r" if _numeric(frame[c]) else "l" for c in frame.columns)
    caption = table.caption.replace("\\", "\\textbackslash{}")
    for char in "&%$#_{}":
        caption = caption.replace(char, "\\" + char)
    return styled.to_latex(hrules=True, caption=caption, position="htbp", column_format=align) + "\n"


def csv_table(table: ExportTable) -> str:
    """The table as CSV, each row stating where it comes from (``source``: its caption), so a
    copied file still says which run, model and backend made it, and whether it was simulated."""
    return table.frame.assign(source=table.caption).to_csv(index=False)


RENDERERS = {"markdown": (markdown_table, ".md"), "latex": (latex_table, ".tex"), "csv": (csv_table, ".csv")}


def export_tables(run: Path, names: list[str], kind: str) -> list[Path]:
    """Each notebook's exported tables (:func:`export_tables_of`) in one file per notebook (CSV:
    one file per table), under ``export/<kind>/``."""
    render, suffix = RENDERERS[kind]
    out = run / "export" / kind
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for folder in _notebooks(run, names):
        tables = export_tables_of(folder, run.name)
        if not tables:
            continue
        if kind == "csv":
            for i, table in enumerate(tables):
                path = out / f"{folder.dir.name}{'' if i == 0 else '-paper'}{suffix}"
                path.write_text(render(table), encoding="utf-8")
                written.append(path)
            continue
        path = out / f"{folder.dir.name}{suffix}"
        path.write_text("\n".join(render(t) for t in tables), encoding="utf-8")
        written.append(path)
    return written


def cmd_export(args: argparse.Namespace) -> int:
    if not (args.inspect or args.markdown or args.latex or args.csv):
        raise CliError("psit export needs --inspect, --markdown, --latex or --csv")
    run = resolve_run(args.run)
    written = export_inspect(run, args.notebooks) if args.inspect else []
    for kind in RENDERERS:
        written += export_tables(run, args.notebooks, kind) if getattr(args, kind) else []
    for path in written:
        print(path)
    if args.inspect:
        print(f"open with: inspect view --log-dir {run / 'export' / 'inspect'}")
    return 0
