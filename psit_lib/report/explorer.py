"""The episode explorer: every episode of a notebook's run in one sortable, filterable table (itables, embedded so it
works offline), each row opening its transcript (the fork view for fork episodes); the report and JupyterLab show it."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.runs.folder import RunFolder
from psit_lib.studies.psit.protocol.transcript_view import episode_html, episode_row, is_fork_result

BASE_COLUMNS = ["episode", "model", "agent", "task", "status"]
TAIL_COLUMNS = ["calls", "tokens", "flags", "error"]


def _scores(folder: RunFolder) -> dict[str, dict[str, Any]]:
    """episode id -> scorer -> its latest stored value."""
    found: dict[str, dict[str, Any]] = {}
    for (eid, scorer), line in folder.score_lines().items():
        found.setdefault(eid, {})[scorer] = line.get("value")
    return found


def _flags(record: dict[str, Any]) -> str:
    flags = (record.get("diagnostics") or {}).get("flags") or {}
    return ", ".join(f"{k}×{v}" if v != 1 else str(k) for k, v in sorted(flags.items()) if v)


def _study_columns(result: Any) -> dict[str, Any]:
    """A study's own columns (not a fork episode's: the fork view has its own): the result's short fields."""
    if not isinstance(result, dict):
        return {}
    return {k: v for k, v in result.items()
            if k not in _NAMED and not k.endswith("seed") and isinstance(v, (str, int, float, bool))
            and not (isinstance(v, str) and len(v) > 60)}


_NAMED = ("schema_version", "task", "agent", "model", "system", "scenario")
"""Result fields the base columns already show (a BASIS system is its agent, its scenario its task)."""


def episodes_table(folder: RunFolder | str | Path) -> pd.DataFrame:
    """Every recorded episode of a notebook's run folder, one row each (the explorer's data)."""
    folder = folder if isinstance(folder, RunFolder) else RunFolder(folder)
    scores = _scores(folder)
    rows = []
    for eid, record in folder.records().items():
        spec, result, usage = record.get("spec") or {}, record.get("result"), record.get("usage") or {}
        row: dict[str, Any] = {
            "episode": eid, "model": spec.get("model") or (result or {}).get("model"),
            "agent": spec.get("agent") or spec.get("system") or (result or {}).get("agent") or (result or {}).get("system"),
            "task": spec.get("task") or (result or {}).get("task") or spec.get("scenario"),
            "status": record.get("status")}
        if is_fork_result(result) or (record.get("status") != "ok" and "agent" in spec and "index" in spec):
            row.update(episode_row(record) if result is not None else {"outcome": "error"})
        else:
            row.update(_study_columns(result))
        row.update({f"score: {name}": value for name, value in scores.get(eid, {}).items()})
        row.update({"calls": usage.get("calls"),
                    "tokens": int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0),
                    "flags": _flags(record), "error": record.get("error") or ""})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=BASE_COLUMNS + TAIL_COLUMNS)
    middle = [c for c in frame.columns if c not in BASE_COLUMNS + TAIL_COLUMNS]
    frame = frame[[c for c in BASE_COLUMNS + middle + TAIL_COLUMNS if c in frame.columns]]
    empty = [c for c in ("leak_turns", "flags", "error") if c in frame.columns and not frame[c].astype(bool).any()]
    return frame.drop(columns=empty).dropna(axis=1, how="all")  # a column with nothing in it only takes room


def _generic_html(record: dict[str, Any]) -> str:
    """A structured view of any study's record: messages as a conversation, other fields listed,
    long or nested ones folded."""
    result = record.get("result") or {}
    head = (f"<div style='margin-bottom:6px'><b>{html.escape(str(record.get('episode_id')))}</b> · "
            f"{html.escape(json.dumps(record.get('spec') or {}, default=str))} · status "
            f"<b>{html.escape(str(record.get('status')))}</b></div>")
    if record.get("error"):
        head += f"<p style='color:#D55E00'>error: {html.escape(str(record['error']))}</p>"
    parts = []
    for key, value in result.items():
        if key == "schema_version":
            continue
        if isinstance(value, list) and value and all(isinstance(m, dict) and "content" in m for m in value):
            body = "".join(f"<div style='margin:2px 0'><b>{html.escape(str(m.get('role', '?')))}</b>: "
                           f"<span style='white-space:pre-wrap'>{html.escape(str(m['content']))}</span></div>"
                           for m in value)
            parts.append(f"<details open><summary><b>{html.escape(key)}</b> ({len(value)} messages)</summary>{body}</details>")
        elif isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > 200):
            text = value if isinstance(value, str) else json.dumps(value, indent=1, default=str)
            parts.append(f"<details><summary><b>{html.escape(key)}</b></summary><pre style='white-space:pre-wrap;"
                         f"font-size:12px'>{html.escape(text)}</pre></details>")
        else:
            parts.append(f"<div><b>{html.escape(key)}</b>: {html.escape(str(value))}</div>")
    return ("<div class='psit-episode' style='font-family:system-ui,sans-serif;font-size:13px'>" + head
            + "".join(parts) + "</div>")


def transcript_html(record: dict[str, Any]) -> str:
    """The one view of an episode (a stored record): the fork view for fork episodes."""
    if is_fork_result(record.get("result")):
        return episode_html(record)
    return _generic_html(record)


_VIEWER_JS = """
(function () {
  var root = document.getElementById('%(id)s');
  if (!root) return;
  var viewer = root.querySelector('.psit-transcript');
  root.addEventListener('click', function (event) {
    var row = event.target.closest('tbody tr');
    if (!row || !root.contains(row)) return;
    var cell = row.querySelector('td');
    var template = cell && root.querySelector('template[data-episode="' + CSS.escape(cell.textContent.trim()) + '"]');
    if (!template) return;
    root.querySelectorAll('tbody tr.psit-open').forEach(function (r) { r.classList.remove('psit-open'); });
    row.classList.add('psit-open');
    viewer.innerHTML = template.innerHTML;
    viewer.scrollIntoView({block: 'nearest'});
  });
})();
"""

_CSS = """
.psit-explorer { font-family: system-ui, sans-serif; font-size: 13px; max-width: 100%; }
.psit-explorer table.dataTable tbody tr { cursor: pointer; }
.psit-explorer table.dataTable tbody tr.psit-open td { background: #fff3c4 !important; }
.psit-explorer .psit-transcript { border: 1px solid #dde; border-radius: 6px; padding: 8px; margin-top: 10px;
  background: #fcfcfe; min-height: 2em; overflow-x: auto; }
.psit-explorer .dt-container { max-width: 100%; overflow-x: auto; }
.psit-explorer table.dataTable { table-layout: auto; width: 100% !important; }
.psit-explorer table.dataTable thead input { width: 100%; min-width: 3em; box-sizing: border-box; font-size: 12px; }
.psit-explorer table.dataTable td { max-width: 22em; }  /* words never broken: the table scrolls in its box */
.psit-explorer table.dataTable td:nth-child(-n+2) { max-width: none; white-space: nowrap; }  /* ids, models whole */
"""


def _itables_init() -> str:
    """itables' JavaScript and CSS, embedded (no network)."""
    import itables
    from itables.javascript import generate_init_offline_itables_html

    bundle = Path(itables.__file__).parent / "html" / "dt_bundle.js"
    return generate_init_offline_itables_html(bundle)


def explorer_html(folder: RunFolder | str | Path, *, table_id: str = "psit-episodes", include_library: bool = True) -> str:
    """The explorer as self-contained HTML (see the module's docstring)."""
    from itables import to_html_datatable

    folder = folder if isinstance(folder, RunFolder) else RunFolder(folder)
    table = episodes_table(folder)
    records = folder.records()
    if table.empty:
        return "<div class='psit-explorer'><p><i>No episode recorded.</i></p></div>"
    datatable = to_html_datatable(
        table, table_id=f"{table_id}-table", connected=False, column_filters="header", showIndex=False,
        lengthMenu=[10, 25, 50, 100, -1], pageLength=10, maxBytes=0, classes="display compact",
        layout={"topStart": "pageLength", "topEnd": "search", "bottomStart": "info", "bottomEnd": "paging"},
        columnDefs=[{"className": "dt-left", "targets": "_all"}], autoWidth=False, allow_html=False)
    templates = "".join(f"<template data-episode='{html.escape(eid, quote=True)}'>{transcript_html(rec)}</template>"
                        for eid, rec in records.items())
    return (f"<div class='psit-explorer' id='{table_id}'><style>{_CSS}</style>"
            + (_itables_init() if include_library else "")
            + f"<p>{len(table)} episodes: sort by a column, search all of them, or filter a column in its header; "
              "click a row to open its transcript below.</p>"
            + datatable + "<div class='psit-transcript'><i>Click an episode to read it here.</i></div>"
            + templates + f"<script>{_VIEWER_JS % {'id': table_id}}</script></div>")


def episode_explorer(source: Any) -> Any:
    """The explorer (an IPython ``HTML``) over an Experiment's run folder, a :class:`RunFolder` or a folder path."""
    from IPython.display import HTML

    folder = source if isinstance(source, RunFolder) else getattr(source, "store", None)
    return HTML(explorer_html(folder if isinstance(folder, RunFolder) else RunFolder(source)))


__all__ = ["episode_explorer", "episodes_table", "explorer_html", "transcript_html"]
