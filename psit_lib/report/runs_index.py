"""Every run under ``results/`` in one list, newest first (``psit runs``, ``psit runs --html``), like Inspect's log
list, read from each run folder (``run.json``, each notebook's metadata and the parameters papermill injected).

The page is for choosing: each run's notebooks and the parameters it overrode, its models, whether it is a
complete run of the whole series, every notebook's headline in full, a link to its report; pick two runs and the
page gives the exact ``psit compare A B --html`` command (a static page cannot run it) and opens the comparison
when one was rendered already.
"""

from __future__ import annotations

import ast
import html
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from psit_lib.runs.folder import RunFolder, notebooks_with_metadata, read_run_file

from .page_head import html_page

HEADLINE_CHARS = 160
"""The terminal list cuts a headline's first sentence to this; the page shows every headline whole."""
INJECTED = "injected-parameters"
"""The tag of the cell papermill writes with the parameters a run overrode."""


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
    headlines: tuple[tuple[str, str], ...] = ()
    """(notebook, its headline as plain text) for every notebook that recorded one."""
    overrides: tuple[tuple[str, str], ...] = ()
    """(notebook, ``name=value, ...``) for every notebook run with parameters other than its defaults."""


def plain(text: str) -> str:
    """A headline without its markdown (emphasis, code marks, bullets), each line's whitespace
    collapsed; agent names keep their underscores."""
    lines = [" ".join(re.sub(r"[*`#>]+", "", line).split()).lstrip("- ") for line in text.splitlines()]
    return " ".join(line for line in lines if line)


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=\.)\s", plain(text), maxsplit=1)[0]
    return first if len(first) <= HEADLINE_CHARS else first[: HEADLINE_CHARS - 1] + "…"


def overrides(notebook: Path) -> str:
    """The parameters an executed notebook was given besides its defaults (papermill's injected
    cell), as ``name=value, ...``; empty when it ran on its defaults or cannot be read."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells") or []
    except (OSError, ValueError):
        return ""
    source = next(("".join(c.get("source") or []) for c in cells
                   if INJECTED in ((c.get("metadata") or {}).get("tags") or [])), "")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    return ", ".join(f"{target.id}={ast.get_source_segment(source, node.value)}" for node in tree.body
                     if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name))


def series() -> set[str]:
    """Every notebook of the series (the registered studies' notebooks): a run of all of them is complete."""
    from psit_lib.studies.registry import notebooks

    return set(notebooks())


def _status(recorded: dict[str, object], names: set[str], suspect: bool) -> str:
    if not recorded:
        return "not recorded"
    if suspect:
        return "suspect"
    if not recorded.get("complete"):
        return "incomplete"
    missing = series() - names
    return "complete" if not missing else f"partial {len(names)}/{len(names) + len(missing)}"


def run_models(path: Path) -> list[str]:
    """The models a run was given, every notebook's (a sweep's simulated profiles are not models of the
    run; a folder made before ``params.json`` named its models: the models its metadata says it ran)."""
    models: set[str] = set()
    for name in notebooks_with_metadata(path):
        folder = RunFolder(path / name)
        meta = folder.metadata()
        models |= set(folder.params().run_models or meta.models_run or ([meta.model] if meta.model else []))
    return sorted(models)


def run_entry(path: Path) -> RunEntry:
    """What the list shows of one run folder."""
    recorded = read_run_file(path)
    folders = [RunFolder(path / name) for name in sorted(notebooks_with_metadata(path))]
    metas = [f.metadata() for f in folders]
    starts = sorted(m.started for m in metas if m.started)
    commits = sorted({m.git_commit for m in metas if m.git_commit})
    suspect = any((m.health is not None and m.health.status == "suspect") for m in metas)
    names = {f.dir.name for f in folders}
    headlines = tuple((f.dir.name, plain(m.headline)) for f, m in zip(folders, metas) if m.headline)
    given = tuple((f.dir.name, text) for f in folders
                  if (text := overrides(path / "notebooks" / f"{f.dir.name}.ipynb")))
    return RunEntry(run_id=str(recorded.get("run_id") or path.name), path=path,
                    date=(starts[0][:16].replace("T", " ") if starts else "—"),
                    commit=", ".join(commits) or "—", models=tuple(run_models(path)), status=_status(recorded, names, suspect),
                    notebooks=tuple(sorted(names)), headline=next((_first_sentence(m.headline) for m in metas
                                                                   if m.headline), ""),
                    headlines=headlines, overrides=given)


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


def _short(notebook: str) -> str:
    return notebook.split("_", 1)[0]


_STYLE = """
body { max-width: 96em; }
.runs-box { overflow-x: auto; max-width: 100%; }
table.runs { width: 100%; font-size: 0.88em; }
table.runs th { white-space: nowrap; padding: 0.4em 0.6em; vertical-align: bottom; }
table.runs td { padding: 0.4em 0.6em; vertical-align: top; }
table.runs td.id, table.runs td.date, table.runs td.pick { white-space: nowrap; }
table.runs code { font-size: 0.95em; }
.complete { color: #185c18; font-weight: 600; } .incomplete, .suspect, .not-recorded { color: #8a1c1c; font-weight: 600; }
.partial { color: #7a5a00; font-weight: 600; }
.headlines { color: #333; font-size: 0.95em; margin: 0.3em 0 0; padding-left: 1.1em; }
.headlines li { margin: 0.15em 0; }
.given { color: #444; }
.nb { white-space: nowrap; }
#pick { position: sticky; top: 0; background: #f3f6fb; border: 1px solid #cdd6e4; padding: 0.5em 0.8em; margin: 0.8em 0;
        z-index: 2; }
#pick code { background: #fff; padding: 0.15em 0.4em; border: 1px solid #dde; }
"""

_SCRIPT = """
(function () {
  var rendered = JSON.parse(document.getElementById('psit-compares').textContent);
  var panel = document.getElementById('pick');
  var boxes = [...document.querySelectorAll('input.pick')];
  var order = [];
  function update() {
    order = order.filter(function (id) { return boxes.some(function (b) { return b.checked && b.value === id; }); });
    boxes.forEach(function (b) { if (b.checked && order.indexOf(b.value) < 0) order.push(b.value); });
    while (order.length > 2) {
      var dropped = order.shift();
      boxes.forEach(function (b) { if (b.value === dropped) b.checked = false; });
    }
    if (order.length < 2) {
      panel.innerHTML = 'Tick two runs to compare them (the first one ticked is A, the baseline).';
      return;
    }
    var command = 'psit compare ' + order[0] + ' ' + order[1] + ' --html';
    var page = rendered[order[0] + ' ' + order[1]];
    panel.innerHTML = 'A = <b>' + order[0] + '</b>, B = <b>' + order[1] + '</b>: ' +
      (page ? '<a href="' + page + '">open their comparison</a> (rendered already), or render it again: '
            : 'the comparison is a page <code>psit</code> renders; run ') +
      '<code id="pick-command"></code> <button type="button" id="pick-copy">copy</button>';
    document.getElementById('pick-command').textContent = command;
    document.getElementById('pick-copy').addEventListener('click', function () {
      if (navigator.clipboard) navigator.clipboard.writeText(command);
      this.textContent = 'copied';
    });
  }
  boxes.forEach(function (b) { b.addEventListener('change', update); });
  update();
})();
"""


def rendered_comparisons(entries: list[RunEntry], root: Path) -> dict[str, str]:
    """``"A B"`` (run folders' names, as ``psit compare`` takes them) -> the comparison page
    ``psit compare A B --html`` left under ``root``, for every pair of listed runs that has one."""
    folders = [e.path.name for e in entries]
    return {f"{a} {b}": f"compare-{a}-{b}.html" for a in folders for b in folders
            if a != b and (root / f"compare-{a}-{b}.html").is_file()}


def _row(e: RunEntry, root: Path) -> str:
    report = e.path / "report" / "index.html"
    name = (f"<a href='{html.escape(str(report.relative_to(root)))}'>{html.escape(e.run_id)}</a>"
            if report.exists() else html.escape(e.run_id))
    names = " ".join(f"<span class='nb' title='{html.escape(n)}'>{html.escape(_short(n))}</span>" for n in e.notebooks)
    given = "<br>".join(f"<b>{html.escape(_short(n))}</b> {html.escape(text)}" for n, text in e.overrides) or "defaults"
    headlines = ("<ul class='headlines'>" + "".join(f"<li><b>{html.escape(_short(n))}</b> {html.escape(text)}</li>"
                                                     for n, text in e.headlines) + "</ul>") if e.headlines else ""
    status = e.status.split(" ")[0] if e.status.startswith("partial") else e.status.replace(" ", "-")
    shown = (f"partial: {e.status.split(' ')[1].replace('/', ' of ')} notebooks" if e.status.startswith("partial")
             else e.status)
    return (f"<tr><td class='pick'><input type='checkbox' class='pick' value='{html.escape(e.path.name)}' "
            f"aria-label='compare {html.escape(e.run_id)}'></td><td class='id'>{name}</td>"
            f"<td class='{html.escape(status)}'>{html.escape(shown)}</td><td class='date'>{html.escape(e.date)}</td>"
            f"<td><code>{html.escape(e.commit)}</code></td><td>{html.escape(', '.join(e.models))}</td>"
            f"<td>{names}</td><td class='given'>{given}</td></tr>"
            + (f"<tr><td></td><td colspan='7'>{headlines}</td></tr>" if headlines else ""))


def runs_html(entries: list[RunEntry], root: Path) -> str:
    """The list as a page written in ``root`` (links relative to it)."""
    compares = json.dumps(rendered_comparisons(entries, root)).replace("</", "<\\/")
    body = (f"<h1>Every run</h1><p>{len(entries)} runs under <code>{html.escape(str(root))}</code>, newest first. "
            "A run is <span class='complete'>complete</span> when it ran every notebook of the series and each "
            "finished with no failed episode and no suspect health; a run of some notebooks that all finished is "
            "<span class='partial'>partial</span>. Click a run to open its report.</p>"
            "<div id='pick'></div><div class='runs-box'><table class='runs'><thead><tr><th>Pick</th><th>Run</th>"
            "<th>Status</th><th>Started</th><th>Commit</th><th>Models</th><th>Notebooks</th><th>Parameters given</th>"
            "</tr></thead><tbody>" + "".join(_row(e, root) for e in entries) + "</tbody></table></div>"
            f"<script type='application/json' id='psit-compares'>{compares}</script><script>{_SCRIPT}</script>")
    return html_page("Runs", body, _STYLE)


__all__ = ["RunEntry", "overrides", "plain", "run_entry", "run_models", "runs_html", "runs_index", "runs_text"]
