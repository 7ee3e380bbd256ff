"""The report's index page: the claims ledger, then per notebook its title, key sentence, first result figure and
how it ran; the header names the run, the code's commit, the model and whether the run is complete."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, cast

from psit_lib.runs.folder import Execution, HealthRecord, RunFolder

from .assets import ReportAssets
from .ledger import ledger_section
from .runs_index import run_models
from .notebook_prep import first_result_figure, png_outputs
from .page_head import html_page

_STYLE = """
body { margin: 2em auto; }
table { width: 100%; }
th, td { padding: 0.45em 0.6em; vertical-align: top; }
@media (max-width: 900px) { body { font-size: 14px; } th, td { padding: 0.35em 0.3em; } }
td.num { text-align: right; }
.status { font-weight: 600; padding: 0.1em 0.5em; border-radius: 0.3em; }
.status.ok { background: #e3f4e3; color: #185c18; }
.status.bad { background: #fbe4e4; color: #8a1c1c; }
img.thumb { display: block; width: 100%; max-width: 560px; height: auto; margin-top: 0.5em;
            border: 1px solid #eee; }
td.nb { width: 62%; }
.headline, .paper-test { color: #333; font-size: 0.95em; }
.scroll { overflow-x: auto; }
.view { font-size: 0.8em; color: #555; margin-top: 0.4em; }
.complete { color: #185c18; } .incomplete { color: #8a1c1c; }
.status.open { background: #eeeeee; color: #444; }
.reason { font-size: 0.8em; color: #8a1c1c; max-width: 28em; margin-top: 0.3em; }
"""


@dataclass
class IndexRow:
    stem: str
    title: str
    status: str
    seconds: float | None
    episodes: int
    failed: int
    calls: int
    cache_hits: int
    headline: str
    figure: str | None  # a data: URI
    health_reasons: tuple[str, ...] = ()
    figure_view: str = ""  # what the figure shows (its panels' titles)


def notebook_title(nb: Any, fallback: str) -> str:
    """The notebook's first markdown heading."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("#"):
                    return line.lstrip("# ").strip()
    return fallback


def figure_view(nb: Any, uri: str | None) -> str:
    """What the thumbnail ``uri`` shows, named by its panels' titles (the figure's metadata), so
    a thumbnail never shows one view of a notebook under a headline about another unlabelled;
    "untitled figure" when its panels carry no title."""
    if uri is None:
        return ""
    meta = next((meta for shown, meta in png_outputs(nb) if shown == uri), None) or {}
    titles = list(dict.fromkeys(str(p.get("title")) for p in meta.get("panels") or [] if p.get("title")))
    return "; ".join(titles) if titles else "untitled figure"


def index_row(run_dir: Path, nb: Any, stem: str, status: dict[str, Any]) -> IndexRow:
    meta = RunFolder(run_dir / stem).metadata()
    last = meta.last_execution or Execution()
    health = meta.health or HealthRecord()
    reasons = tuple(status.get("health_reasons") or health.reasons or ())
    shown = status.get("status", "not recorded")
    if shown == "ok" and (status.get("health") == "suspect" or health.status == "suspect"):
        shown = "suspect"
    return IndexRow(
        stem=stem, title=notebook_title(nb, stem),
        status=shown, seconds=status.get("seconds"), health_reasons=reasons if shown == "suspect" else (),
        episodes=int(status.get("episodes", last.episodes_recorded) or 0),
        failed=int(status.get("failed", last.episodes_failed) or 0),
        calls=int(status.get("model_calls", last.model_calls) or 0),
        cache_hits=int(status.get("cache_hits", last.cache_hits) or 0),
        headline=str(meta.headline or ""), figure=(figure := first_result_figure(nb)),
        figure_view=figure_view(nb, figure))


def _markdown(text: str) -> str:
    """A headline's markdown (bold, bullets) as HTML, raw HTML in it escaped."""
    import mistune

    # the HTML renderer (the default) returns a string; only the AST renderer returns a list
    return cast(str, mistune.create_markdown(escape=True)(text))


REASON_CHARS = 200
"""The index shows a suspect notebook's first reason, cut to this; its page has them all."""


def _reasons_html(reasons: tuple[str, ...]) -> str:
    if not reasons:
        return ""
    first = reasons[0] if len(reasons[0]) <= REASON_CHARS else reasons[0][: REASON_CHARS - 1] + "…"
    more = f" (+{len(reasons) - 1} more on its page)" if len(reasons) > 1 else ""
    return f"<div class='reason'>{html.escape(first)}{more}</div>"


def _thumbnail(uri: str, assets: ReportAssets | None) -> str:
    """The thumbnail's ``src``: the figure's shared file (its page shows the same file), else the data URI."""
    if assets is None or not uri.startswith("data:image/png;base64,"):
        return uri
    return assets.figure(base64.b64decode(uri.split(",", 1)[1]))


def _row_html(row: IndexRow, assets: ReportAssets | None = None) -> str:
    good = row.status == "ok"
    figure = (f"<div class='view'>Figure: {html.escape(row.figure_view)}</div>"
              f"<a href='{html.escape(row.stem)}.html'><img class='thumb' src='{_thumbnail(row.figure, assets)}' "
              f"alt='{html.escape(row.figure_view or 'a result figure of ' + row.stem, quote=True)}'></a>"
              if row.figure else "")
    seconds = f"{row.seconds:.0f} s" if isinstance(row.seconds, (int, float)) else "—"
    return (f"<tr><td class='nb'><a href='{html.escape(row.stem)}.html'>{html.escape(row.title)}</a>"
            f"<div class='headline'>{_markdown(row.headline)}</div>{figure}</td>"
            f"<td><span class='status {'ok' if good else 'bad'}'>{html.escape(row.status)}</span>"
            + _reasons_html(row.health_reasons)
            + "</td>"
            f"<td class='num'>{seconds}</td><td class='num'>{row.episodes} ({row.failed} failed)</td>"
            f"<td class='num'>{row.calls}</td><td class='num'>{row.cache_hits}</td></tr>")


def index_html(run_dir: Path, run: dict[str, Any], rows: list[IndexRow], commit: str,
               protocol: str | None = None, assets: ReportAssets | None = None) -> str:
    complete = bool(run.get("complete")) and all(r.status == "ok" for r in rows)
    ran = (f"the {len(rows)} notebooks below" if len(rows) > 1
           else f"1 notebook, {html.escape(rows[0].stem)}" if rows else "no notebook")
    state = (f"<p class='complete'>Complete run of {ran}: each finished, no episode failed, and no "
             "notebook's share of unreadable replies or flagged episodes passed its threshold.</p>"
             if complete else
             "<p class='incomplete'>Incomplete run: a notebook failed, episodes failed, a notebook "
             "is suspect (replies the harness could not read, or roles that lacked what they need) or the run "
             "was not recorded by <code>psit run</code>; its numbers are not final.</p>")
    simulated = run.get("backend") == "sim"
    models = run_models(run_dir) or [str(run.get("model", "?"))]
    provenance = (f"backend <b>{html.escape(str(run.get('backend', '?')))}</b>"
                  f"{' (simulated model: not a real LLM)' if simulated else ''}, "
                  f"{'models' if len(models) > 1 else 'model'} " + ", ".join(f"<b>{html.escape(m)}</b>" for m in models)
                  + f", profile <b>{html.escape(str(run.get('profile', '?')))}</b>")
    rendered = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return html_page("PSIT workbench report", "<h1>PSIT workbench report</h1>"
                     f"<p>Run <code>{html.escape(str(run.get('run_id') or run_dir.name))}</code> · rendered {rendered} · "
                     f"code commit <code>{html.escape(commit)}</code></p><p>{provenance}</p>{state}"
                     + (f"<p><a href='{html.escape(protocol)}'>The research protocol</a> (what every page's "
                        "“SPEC §n” refers to)</p>" if protocol else "")
                     + ledger_section(run_dir)
                     + "<div class='scroll'><table><thead><tr><th>Notebook, key result and a result figure</th><th>Status</th><th>Time</th>"
                     "<th>Episodes</th><th>Model calls</th><th>Cache hits</th></tr></thead><tbody>"
                     + "".join(_row_html(r, assets) for r in rows) + "</tbody></table></div>", _STYLE)
