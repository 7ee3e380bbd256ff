"""The rendered report: a run's executed notebooks as offline HTML pages (no kernel, no network: formulas as
MathML, widgets static) with an index; every page has the episode explorer. What pages share (the table library,
the notebook stylesheet, figures, the explorers' episodes) lives once in the report folder (:mod:`.assets`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psit_lib.runs.metadata import git_commit
from psit_lib.runs.paths import repo_root

from .assets import ReportAssets
from .explorer import episode_explorer
from .index import index_html, index_row
from .page import render_page
from .page_head import PageContext, protocol_html

__all__ = ["episode_explorer", "render_report"]


def render_report(run_dir: Path, run: dict[str, Any] | None = None) -> Path:
    """Render the run in ``run_dir``; ``run`` is what ``psit run`` recorded of it (``run.json``:
    run id, backend, model, profile, completeness, per-notebook status)."""
    import nbformat

    out = run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    assets = ReportAssets(out)
    assets.clear()
    run = run or {}
    statuses = {s["notebook"]: s for s in run.get("notebooks", [])}
    repo = repo_root()
    commit = git_commit(repo)
    protocol = None
    if (repo / "docs" / "protocol.md").exists():
        protocol = "protocol.html"
        (out / protocol).write_text(protocol_html((repo / "docs" / "protocol.md").read_text(encoding="utf-8")),
                                    encoding="utf-8")
    rows = []
    for nb_path in sorted((run_dir / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        row = index_row(run_dir, nb, nb_path.stem, statuses.get(nb_path.stem, {}))  # before the page changes nb
        ctx = PageContext(run_dir, nb_path.stem, run, commit, protocol)
        (out / f"{nb_path.stem}.html").write_text(render_page(nb, row.title, ctx, assets), encoding="utf-8")
        rows.append(row)
    index = out / "index.html"
    index.write_text(index_html(run_dir, run, rows, commit, protocol, assets), encoding="utf-8")
    return index
