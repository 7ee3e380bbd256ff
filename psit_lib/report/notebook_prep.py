"""Preparing an executed notebook for a static, offline page.

A report is read without a kernel and without the internet, so before export: formulas become
MathML (no MathJax from a CDN), widget views give way to the static HTML every widget of the
workbook carries beside them, and the notebook-level widget state is dropped.
"""

from __future__ import annotations

import re
from typing import Any

from latex2mathml.converter import convert

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
    """The notebook (nbformat node, changed in place) ready for static export."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = latex_to_mathml(cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and WIDGET_VIEW in data and len(data) > 1:
                data.pop(WIDGET_VIEW)
    return nb
