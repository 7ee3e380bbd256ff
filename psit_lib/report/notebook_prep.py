"""Preparing an executed notebook for a page read without kernel or internet: formulas as MathML (no MathJax from a
CDN), widget views replaced by the static HTML each carries, plumbing out."""

from __future__ import annotations

import re
from typing import Any

from latex2mathml.converter import convert
from nbformat.v4 import new_output

__all__ = ["prepare", "tidy_outputs"]

_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$\w])\$(?=\S)([^$\n]+?)(?<=\S)\$(?![\w$])")
_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _mathml(latex: str, display: str) -> str:
    try:
        return convert(latex.strip(), display=display)
    except Exception:  # an expression latex2mathml cannot read stays readable as code
        return f"<code>{latex.strip()}</code>"


def latex_to_mathml(markdown: str) -> str:
    """``$$...$$`` and ``$...$`` in markdown replaced by MathML (code spans left alone)."""
    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        text = _DISPLAY.sub(lambda m: "\n" + _mathml(m.group(1), "block") + "\n", parts[i])
        parts[i] = _INLINE.sub(lambda m: _mathml(m.group(1), "inline"), text)
    return "".join(parts)


def prepare(nb: Any) -> Any:
    """The notebook (nbformat node, changed in place) ready for static export (see also
    :func:`tidy_outputs`)."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = latex_to_mathml(cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and WIDGET_VIEW in data and len(data) > 1:
                data.pop(WIDGET_VIEW)
    return tidy_outputs(nb)


CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
"""A cell whose source starts with this prints a result for the test suite's output check; where
its section shows that result styled, the printed copy is left out."""

_PROGRESS = re.compile(r"\d+%\|.*\|\s*\d+/\d+|\d+/\d+ \[\d+:\d+<|it/s\]")
FIGURE_KEY = "psit_figure"  # analysis.labels.FIGURE_METADATA_KEY (the report reads it, never imports it)


def _text(output: Any) -> str:
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    return str((output.get("data") or {}).get("text/plain", ""))


def is_progress(output: Any) -> bool:
    """A progress bar (tqdm and the like) or anything written to stderr: plumbing, not a result."""
    if output.get("output_type") == "stream":
        return output.get("name") == "stderr" or bool(_PROGRESS.search(_text(output)))
    data = output.get("data") or {}
    plain_only = set(data) <= {"text/plain", WIDGET_VIEW}
    return plain_only and bool(_PROGRESS.search(_text(output)))


def figure_html(png: str, meta: dict[str, Any] | None) -> str:
    """An ``<img>`` for a PNG output carrying its figure metadata (provenance, panels and their
    axis labels) as ``data-`` attributes, so the browser test can check every panel is labelled."""
    import html
    import json

    src = "data:image/png;base64," + "".join(png.split())
    if meta is None:
        return f"<img class='psit-figure' src='{src}' alt='figure' data-psit-figure='none'>"
    panels = meta.get("panels") or []
    titles = "; ".join(str(p.get("title") or "") for p in panels if p.get("title"))
    alt = html.escape(titles or "figure", quote=True)
    return (f"<img class='psit-figure' src='{src}' alt='{alt}' "
            f"data-psit-figure='{html.escape(json.dumps(meta), quote=True)}'>")


def _figure_meta(output: Any) -> dict[str, Any] | None:
    return ((output.get("metadata") or {}).get("image/png") or {}).get(FIGURE_KEY)


def png_outputs(nb: Any) -> list[tuple[str, dict[str, Any] | None]]:
    """Each PNG output of ``nb``: its data URI and its figure metadata (None without)."""
    return [("data:image/png;base64," + "".join(png.split()), _figure_meta(output))
            for cell in nb.cells for output in cell.get("outputs", [])
            if (png := (output.get("data") or {}).get("image/png"))]


def first_result_figure(nb: Any) -> str | None:
    """The index thumbnail: the first figure with a data panel labelled on both axes (a result,
    not a schematic drawn without axes); without figure metadata, the first figure."""
    figures = png_outputs(nb)
    return next((uri for uri, meta in figures if meta and any(p.get("xlabel") and p.get("ylabel")
                                                              for p in meta.get("panels") or [])),
                figures[0][0] if figures else None)


def _sections(cells: list[Any]) -> list[list[Any]]:
    """The cells grouped by markdown heading (a section runs from one heading to the next)."""
    sections: list[list[Any]] = [[]]
    for cell in cells:
        if cell.cell_type == "markdown" and any(line.startswith("#") for line in cell.source.splitlines()):
            sections.append([])
        sections[-1].append(cell)
    return sections


def _shown_check(cell: Any) -> None:
    """A check cell's printed text kept as the only result of its section: prose as a paragraph
    (a run note), a printed table as it was printed."""
    kept = []
    for output in cell.get("outputs", []):
        text = _text(output)
        if output.get("output_type") != "stream" or output.get("name") == "stderr" or not text.strip():
            continue
        if "  " not in text.strip():
            output = new_output("display_data", data={"text/markdown": text})
        kept.append(output)
    cell.outputs = kept


def tidy_outputs(nb: Any) -> Any:
    """The notebook (changed in place) with its plumbing out of the page: output checks for the
    test suite (unless nothing else shows their section's result), progress bars and stderr
    dropped; the run summary folded; figures as images that carry their metadata."""
    for section in _sections(nb.cells):
        code = [c for c in section if c.cell_type == "code"]
        checks = [c for c in code if c.source.lstrip().startswith(CHECK_MARK)]
        others = [c for c in code if not c.source.lstrip().startswith(CHECK_MARK)]
        _tidy(others)
        shown = any(c.get("outputs") for c in others)
        for cell in checks:
            cell.outputs = [] if shown else cell.outputs
            _shown_check(cell)
    return nb


def _tidy(cells: list[Any]) -> None:
    for cell in cells:
        kept = []
        for output in cell.get("outputs", []):
            if is_progress(output):
                continue
            data = output.get("data") or {}
            if "psit-run-summary" in str(data.get("text/html", "")):  # exp.finish()'s table, folded
                output["data"] = {"text/html": "<details class='psit-stats'><summary>Execution statistics</summary>"
                                               f"{data['text/html']}</details>"}
            elif "image/png" in data and "text/html" not in data:
                data["text/html"] = figure_html(str(data["image/png"]), _figure_meta(output))
            kept.append(output)
        cell.outputs = kept
