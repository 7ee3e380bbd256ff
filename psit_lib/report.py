"""Render a run's executed notebooks to HTML with an index page (nbconvert, offline)."""

from __future__ import annotations

import html
import json
from pathlib import Path


def _title(nb_path: Path) -> str:
    nb = json.loads(nb_path.read_text())
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("#"):
                    return line.lstrip("# ").strip()
    return nb_path.stem


def render_report(run_dir: Path) -> Path:
    """Write ``<run_dir>/report/<notebook>.html`` and ``index.html``; return the index path."""
    import nbformat
    from nbconvert import HTMLExporter

    out = run_dir / "report"
    out.mkdir(parents=True, exist_ok=True)
    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    rows = []
    for nb_path in sorted((run_dir / "notebooks").glob("*.ipynb")):
        body, _ = exporter.from_notebook_node(nbformat.read(nb_path, as_version=4))
        target = out / f"{nb_path.stem}.html"
        target.write_text(body)
        meta_path = run_dir / nb_path.stem / "metadata.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        prov = (f"backend {meta.get('backend', '?')}{' (simulated)' if meta.get('simulated') else ''}, "
                f"model {meta.get('model', '?')}, profile {meta.get('profile', '?')}") if meta else ""
        rows.append(f"<li><a href='{target.name}'>{html.escape(_title(nb_path))}</a>"
                    f" <small>{html.escape(prov)}</small></li>")
    index = out / "index.html"
    index.write_text(
        "<!doctype html><meta charset='utf-8'><title>PSIT workbench report</title>"
        "<h1>PSIT workbench report</h1>"
        f"<p>Run folder: <code>{html.escape(run_dir.name)}</code>. Tables and figures computed "
        "on the simulated model are labelled <b>simulated</b>.</p><ol>" + "".join(rows) + "</ol>")
    return index
