"""The episode explorer: every episode of a notebook's run in one sortable, filterable table (itables), in the
order the run planned them, each row opening the episode in its study's view (the fork view, ACC's turns, BASIS's
exchange); the report and JupyterLab show it.

The views are rendered here, in Python (one renderer), and travel gzip-compressed in chunks: inline in a
notebook, or as side files of the report folder (``episodes/<notebook>-<k>.js``) that a page loads on the
first click that needs one, so a page stays light however many episodes its run has (:mod:`.assets`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.analysis import episode_html as ep
from psit_lib.runs.folder import RunFolder
from psit_lib.runs.study import EpisodeView

from .assets import ReportAssets, itables_init

BASE_COLUMNS = ["episode", "part", "model", "agent", "task", "status"]
TAIL_COLUMNS = ["calls", "tokens", "flags", "error"]
CHUNK_BYTES = 1_500_000
"""Views per chunk, by their size before compression: a click loads and decodes one chunk."""

ScoreLines = Mapping[str, Mapping[str, Any]]


def _flags(record: dict[str, Any]) -> str:
    flags = (record.get("diagnostics") or {}).get("flags") or {}
    return ", ".join(f"{k}×{v}" if v != 1 else str(k) for k, v in sorted(flags.items()) if v)


_NAMED = ("schema_version", "task", "agent", "model", "system", "scenario")
"""Result fields the base columns already show (a BASIS system is its agent, its scenario its task)."""


def generic_row(record: dict[str, Any], scores: ScoreLines) -> dict[str, Any]:
    """A study without a view of its own: the result's short fields as columns."""
    result = record.get("result")
    if not isinstance(result, dict):
        return {}
    return {k: v for k, v in result.items()
            if k not in _NAMED and not k.endswith("seed") and isinstance(v, (str, int, float, bool))
            and not (isinstance(v, str) and len(v) > 60)}


def generic_html(record: dict[str, Any], scores: ScoreLines) -> str:
    """A study without a view of its own: messages as a conversation, other fields listed, long or
    nested ones folded."""
    result = record.get("result") or {}
    parts = [ep.head(str(record.get("episode_id")), {**(record.get("spec") or {}), "status": record.get("status")}),
             ep.scores_line(scores), ep.system_prompts(record.get("system_prompts")), ep.error_line(record)]
    for key, value in result.items():
        if key == "schema_version":
            continue
        if isinstance(value, list) and value and all(isinstance(m, dict) and "content" in m for m in value):
            body = "".join(ep.bubble(str(m.get("role", "?")), ep.pre(m["content"]),
                                     tone="u" if m.get("role") == "user" else "a") for m in value)
            parts.append(ep.fold(f"<b>{ep.esc(key)}</b> ({len(value)} messages)", body, open_=True))
        elif isinstance(value, (dict, list)) or (isinstance(value, str) and len(value) > 200):
            text = value if isinstance(value, str) else json.dumps(value, indent=1, default=str)
            parts.append(ep.fold(f"<b>{ep.esc(key)}</b>", ep.pre(text)))
        else:
            parts.append(f"<div><b>{ep.esc(key)}</b>: {ep.esc(value)}</div>")
    return ep.view("".join(parts))


GENERIC = EpisodeView(row=generic_row, html=generic_html)


def notebook_of(folder: RunFolder, notebook: str | None = None) -> str:
    """The notebook a folder belongs to: ``notebook``, else the folder's name (``psit run``'s
    folders), else the registered notebook whose name it starts with (a run by hand's
    ``<notebook>-<hash>``)."""
    from psit_lib.studies.registry import notebooks

    if notebook:
        return notebook
    name = folder.dir.name
    known = notebooks()
    return name if name in known else max((nb for nb in known if name.startswith(nb + "-")), key=len, default=name)


def _study(notebook: str) -> Any:
    from psit_lib.studies.registry import study_of

    return study_of(notebook)


def view_of(notebook: str) -> EpisodeView:
    """The notebook's study's view (the generic one for a study without one)."""
    study = _study(notebook)
    return study.episode_view() if study is not None and study.episode_view is not None else GENERIC


def plan_order(folder: RunFolder, notebook: str) -> list[tuple[str, str]]:
    """(part, episode id) in the order the run planned them (empty when the study cannot re-plan
    the folder: no study, no plan, parameters it does not read)."""
    study = _study(notebook)
    if study is None or notebook not in study.notebooks or study.notebook(notebook).plan is None:
        return []
    try:
        _, _, parts = study.stored_parts(folder, notebook)
    except (ValueError, KeyError, TypeError):  # parameters this code no longer reads: file order
        return []
    return [(part.name, spec.episode_id) for part in parts for spec in part.specs]


def _score_lines(folder: RunFolder) -> dict[str, dict[str, dict[str, Any]]]:
    """episode id -> scorer -> its latest stored line."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for (eid, scorer), line in folder.score_lines().items():
        found.setdefault(eid, {})[scorer] = line
    return found


def _ordered(folder: RunFolder, notebook: str) -> list[tuple[str, dict[str, Any]]]:  # (part, record)
    """(part, record) of every recorded episode: planned ones in plan order, then any other in
    file order (its part from its score lines)."""
    records = folder.records()
    scores = _score_lines(folder)
    planned = [(part, eid) for part, eid in plan_order(folder, notebook) if eid in records]
    seen = {eid for _, eid in planned}
    rest = [(next((str(line.get("part")) for line in scores.get(eid, {}).values() if line.get("part")), ""), eid)
            for eid in records if eid not in seen]
    return [(part, records[eid]) for part, eid in [*planned, *rest]]


def _row(part: str, record: dict[str, Any], scores: ScoreLines, view: EpisodeView) -> dict[str, Any]:
    spec, result, usage = record.get("spec") or {}, record.get("result") or {}, record.get("usage") or {}
    row: dict[str, Any] = {
        "episode": record.get("episode_id"), "part": part, "model": spec.get("model") or result.get("model"),
        "agent": spec.get("agent") or spec.get("system") or result.get("agent") or result.get("system"),
        "task": spec.get("task") or result.get("task") or spec.get("scenario") or spec.get("domain"),
        "status": record.get("status")}
    own = view.row(record, scores)
    row.update(own)
    # the episode's other scores, once each: a score the view already shows as a column is not repeated
    row.update({f"score: {name}": line.get("value") for name, line in scores.items()
                if name not in own and not isinstance(line.get("value"), (dict, list))})
    row.update({"calls": usage.get("calls"),
                "tokens": int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0),
                "flags": _flags(record), "error": record.get("error") or ""})
    return row


Ordered = list[tuple[str, dict[str, Any]]]


def _frame(ordered: Ordered, view: EpisodeView, scores: dict[str, dict[str, dict[str, Any]]]) -> pd.DataFrame:
    rows = [_row(part, record, scores.get(str(record.get("episode_id")), {}), view) for part, record in ordered]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=BASE_COLUMNS + TAIL_COLUMNS)
    middle = [c for c in frame.columns if c not in BASE_COLUMNS + TAIL_COLUMNS]
    frame = frame[[c for c in BASE_COLUMNS + middle + TAIL_COLUMNS if c in frame.columns]]
    empty = [c for c in ("leak_turns", "flags", "error") if c in frame.columns and not frame[c].astype(bool).any()]
    if "part" in frame.columns and not frame["part"].astype(bool).any():
        empty.append("part")
    return frame.drop(columns=empty).dropna(axis=1, how="all")  # a column with nothing in it only takes room


def episodes_table(folder: RunFolder | str | Path, notebook: str | None = None) -> pd.DataFrame:
    """Every recorded episode of a notebook's run folder, one row each, in plan order (the
    explorer's data): episode, part (main first, then sweeps and other parts), model, agent, task,
    status, the study's columns, the scores it does not show, calls, tokens, flags, error."""
    folder = folder if isinstance(folder, RunFolder) else RunFolder(folder)
    notebook = notebook_of(folder, notebook)
    return _frame(_ordered(folder, notebook), view_of(notebook), _score_lines(folder))


def transcript_html(record: dict[str, Any], scores: ScoreLines | None = None, notebook: str | None = None) -> str:
    """The one view of an episode (a stored record): its notebook's study's view; without a
    notebook, the fork view for a fork episode, else the generic view."""
    if notebook is not None:
        return view_of(notebook).html(record, scores or {})
    from psit_lib.studies.psit.protocol.transcript_view import VIEW, is_fork_result

    return (VIEW if is_fork_result(record.get("result")) else GENERIC).html(record, scores or {})


def _views(ordered: Ordered, view: EpisodeView, scores: dict[str, dict[str, dict[str, Any]]]) -> dict[str, str]:
    """Every episode's view, by episode id, in plan order."""
    return {str(record.get("episode_id")): view.html(record, scores.get(str(record.get("episode_id")), {}))
            for _, record in ordered}


def chunks(shown: Mapping[str, str], limit: int = CHUNK_BYTES) -> list[dict[str, str]]:
    """The views cut into chunks of at most ``limit`` bytes of HTML (one view alone may pass it)."""
    out: list[dict[str, str]] = [{}]
    size = 0
    for eid, text in shown.items():
        if out[-1] and size + len(text) > limit:
            out.append({})
            size = 0
        out[-1][eid] = text
        size += len(text)
    return [c for c in out if c]


def chunk_payload(views_: Mapping[str, str]) -> str:
    """A chunk as the viewer decodes it: JSON, gzip-compressed (no timestamp: the same views give
    the same bytes), base64."""
    raw = json.dumps(dict(views_), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, 9, mtime=0)).decode("ascii")


def chunk_script(key: str, payload: str) -> str:
    """The classic script that stores one chunk (a side file's whole text, or inline)."""
    return f"(window.psitEpisodeChunks=window.psitEpisodeChunks||{{}})[{json.dumps(key)}]={json.dumps(payload)};\n"


def _script_json(value: Any) -> str:
    """JSON to sit inside a ``<script>`` element (a ``</`` in it would end the element)."""
    return json.dumps(value).replace("</", "<\\/")


def _viewer_js(root_id: str) -> str:
    text = resources.files("psit_lib.report").joinpath("explorer.js").read_text(encoding="utf-8")
    return text.replace("ROOT_ID", json.dumps(root_id))


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
.psit-explorer table.dataTable td:nth-child(-n+2) { max-width: none; white-space: nowrap; }  /* ids, parts whole */
"""


def explorer_html(folder: RunFolder | str | Path, *, table_id: str = "psit-episodes", notebook: str | None = None,
                  assets: ReportAssets | None = None) -> str:
    """The explorer as HTML (see the module's docstring): with ``assets`` (a report folder's), the
    views go to side files there and the page is expected to load the table library itself;
    without, everything is inline (a notebook's output)."""
    from itables import to_html_datatable

    folder = folder if isinstance(folder, RunFolder) else RunFolder(folder)
    notebook = notebook_of(folder, notebook)
    ordered, view, scores = _ordered(folder, notebook), view_of(notebook), _score_lines(folder)
    table = _frame(ordered, view, scores)
    if table.empty:
        return "<div class='psit-explorer'><p><i>No episode recorded.</i></p></div>"
    datatable = to_html_datatable(
        table, table_id=f"{table_id}-table", connected=False, column_filters="header", showIndex=False,
        lengthMenu=[10, 25, 50, 100, -1], pageLength=10, maxBytes=0, classes="display compact", order=[],
        layout={"topStart": "pageLength", "topEnd": "search", "bottomStart": "info", "bottomEnd": "paging"},
        columnDefs=[{"className": "dt-left", "targets": "_all"}], autoWidth=False, allow_html=False)
    parts = chunks(_views(ordered, view, scores))
    where = hashlib.sha256(str(folder.dir.resolve()).encode()).hexdigest()[:8]
    keys = [f"{notebook}/{where}/{i}" for i in range(len(parts))]
    payloads = [chunk_script(key, chunk_payload(part)) for key, part in zip(keys, parts)]
    if assets is not None:
        src = [assets.write(f"episodes/{notebook}-{i}.js", text) for i, text in enumerate(payloads)]
        inline = ""
    else:
        src = [""] * len(parts)
        inline = "".join(f"<script>{text}</script>" for text in payloads)
    manifest = {"keys": keys, "src": src, "chunk": {eid: i for i, part in enumerate(parts) for eid in part}}
    parts_note = (" The <code>part</code> column tells the main episodes from the sweeps' and other parts' "
                  "(filter it to <code>main</code> for the notebook's main result)."
                  if "part" in table.columns and table["part"].nunique() > 1 else "")
    return (f"<div class='psit-explorer' id='{table_id}'><style>{_CSS}</style>"
            + (itables_init() if assets is None else "")
            + f"<p>{len(table)} episodes in the order the run planned them: sort by a column, search all of them, or "
              f"filter a column in its header; click a row to read the episode below.{parts_note}</p>"
            + datatable + "<div class='psit-transcript'><i>Click an episode to read it here.</i></div>"
            + f"<script type='application/json' class='psit-chunks'>{_script_json(manifest)}"
              "</script>" + inline + f"<script>{_viewer_js(table_id)}</script></div>")


def episode_explorer(source: Any) -> Any:
    """The explorer (an IPython ``HTML``) over an Experiment's run folder, a :class:`RunFolder` or a folder path."""
    from IPython.display import HTML

    folder = source if isinstance(source, RunFolder) else getattr(source, "store", None)
    notebook = getattr(source, "notebook", None)
    return HTML(explorer_html(folder if isinstance(folder, RunFolder) else RunFolder(source),
                              notebook=notebook if isinstance(notebook, str) else None))


__all__ = ["episode_explorer", "episodes_table", "explorer_html", "transcript_html"]
