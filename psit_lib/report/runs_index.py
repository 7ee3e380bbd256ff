"""Every run under ``results/`` in one list, newest first (``psit runs``), like Inspect's log list, read from each
run folder (``run.json`` and each notebook's metadata)."""

from __future__ import annotations

import html
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from psit_lib.runs.folder import RunFolder, notebooks_with_metadata, read_run_file

from .page_head import html_page

HEADLINE_CHARS = 160


@dataclass(frozen=True)
class RunEntry:
    run_id: str
    path: Path
    date: str
    commit: str
    models: tuple[str, ...]
    status: str
    notebooks: tuple[str, ...]
    headline: str


def _first_sentence(text: str) -> str:
    text = " ".join(re.sub(r"[*`#>]+", "", text).split())  # markdown emphasis out; agent_names keep their _
    text = text.lstrip("- ")
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0]
    return first if len(first) <= HEADLINE_CHARS else first[: HEADLINE_CHARS - 1] + "…"


def run_entry(path: Path) -> RunEntry:
    """What the index shows of one run folder."""
    recorded = read_run_file(path)
    folders = [RunFolder(path / name) for name in sorted(notebooks_with_metadata(path))]
    metas = [f.metadata() for f in folders]
    starts = sorted(m.started for m in metas if m.started)
    # the models the run was given (a sweep's simulated profiles are not models of the run)
    models = sorted({m for meta in metas for m in ([meta.model] if meta.model else meta.models_run)})
    commits = sorted({m.git_commit for m in metas if m.git_commit})
    suspect = any((m.health is not None and m.health.status == "suspect") for m in metas)
    if not recorded:
        status = "not recorded"
    elif suspect:
        status = "suspect"
    else:
        status = "complete" if recorded.get("complete") else "incomplete"
    headline = next((_first_sentence(m.headline) for m in metas if m.headline), "")
    return RunEntry(run_id=str(recorded.get("run_id") or path.name), path=path,
                    date=(starts[0][:16].replace("T", " ") if starts else "—"),
                    commit=", ".join(commits) or "—", models=tuple(models), status=status,
                    notebooks=tuple(f.dir.name for f in folders), headline=headline)


def runs_index(root: Path) -> list[RunEntry]:
    """Every run folder under ``root`` (not the ``latest`` link, not ad-hoc runs), newest first."""
    if not root.is_dir():
        return []
    paths = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name not in ("adhoc",)
             and notebooks_with_metadata(p)]
    entries = [run_entry(p) for p in paths]
    return sorted(entries, key=lambda e: (e.date, e.run_id), reverse=True)


def runs_text(entries: list[RunEntry], columns: int = 100) -> str:
    """The list for a terminal ``columns`` wide, one run per line (its models, then its headline,
    wrapped under it)."""
    if not entries:
        return "no runs yet (psit run writes them under results/)"
    width = max(len(e.run_id) for e in entries)
    lines = [f"{'run':{width}}  {'date':16}  {'commit':13}  {'status':12}  models"]
    for e in entries:
        row = f"{e.run_id:{width}}  {e.date:16}  {e.commit:13}  {e.status:12}  "
        if len(row) + max(map(len, e.models), default=1) + 1 > columns:  # no room beside: the models go below
            lines.append(row.rstrip())
            row = " " * (width + 2)
        lines += textwrap.wrap(", ".join(e.models) or "—", columns, initial_indent=row,
                               subsequent_indent=" " * len(row), break_long_words=False, break_on_hyphens=False)
        lines += textwrap.wrap(e.headline, columns, initial_indent=" " * (width + 2),
                               subsequent_indent=" " * (width + 2), break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines)


_STYLE = """
table { width: 100%; font-size: 0.9em; }
th, td { padding: 0.4em 0.6em; vertical-align: top; overflow-wrap: anywhere; }
.complete { color: #185c18; } .incomplete, .suspect { color: #8a1c1c; } .headline { color: #444; font-size: 0.9em; }
"""


def runs_html(entries: list[RunEntry], root: Path) -> str:
    """The list as a page written in ``root`` (links relative to it)."""
    rows = []
    for e in entries:
        report = e.path / "report" / "index.html"
        name = (f"<a href='{html.escape(str(report.relative_to(root)))}'>{html.escape(e.run_id)}</a>"
                if report.exists() else html.escape(e.run_id))
        rows.append(f"<tr><td>{name}<div class='headline'>{html.escape(e.headline)}</div></td><td>{html.escape(e.date)}</td>"
                    f"<td><code>{html.escape(e.commit)}</code></td><td>{html.escape(', '.join(e.models))}</td>"
                    f"<td class='{html.escape(e.status.replace(' ', '-'))}'>{html.escape(e.status)}</td>"
                    f"<td>{len(e.notebooks)}</td></tr>")
    return html_page("Runs", f"<h1>Every run</h1><p>{len(entries)} runs under "
                     f"<code>{html.escape(str(root))}</code>, newest first. Compare two with "
                     "<code>psit compare A B --html</code>.</p><table><thead><tr><th>Run and headline</th><th>Started</th>"
                     "<th>Commit</th><th>Models</th><th>Status</th><th>Notebooks</th></tr></thead><tbody>"
                     + "".join(rows) + "</tbody></table>", _STYLE)


__all__ = ["RunEntry", "run_entry", "runs_html", "runs_index", "runs_text"]
