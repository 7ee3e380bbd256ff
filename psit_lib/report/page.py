"""One notebook as an offline HTML page: code hidden behind a toggle, long tables folded,
nothing fetched from the network."""

from __future__ import annotations

from typing import Any

from bs4 import BeautifulSoup
from bs4.element import AttributeValueList

from .notebook_prep import prepare

FOLD_ROWS = 25
"""Tables with more rows than this are folded (a summary line shows how many)."""

_STYLE = """
body.psit-code-hidden .jp-CodeCell .jp-InputArea { display: none; }
#psit-code-toggle { position: fixed; top: 0.6em; right: 0.8em; z-index: 10; padding: 0.3em 0.8em; }
details.psit-fold > summary { cursor: pointer; color: #345; margin: 0.4em 0; }
"""
_SCRIPT = """
document.getElementById('psit-code-toggle').addEventListener('click', function () {
  var hidden = document.body.classList.toggle('psit-code-hidden');
  this.textContent = hidden ? 'Show code' : 'Hide code';
});
"""


def _offline(soup: BeautifulSoup) -> None:
    """Drop every script and stylesheet that would be fetched from the network."""
    for tag in soup.find_all(["script", "link"]):
        url = str(tag.get("src") or tag.get("href") or "")
        if url.startswith(("http://", "https://", "//")):
            tag.decompose()
    for tag in soup.find_all("script"):
        if tag.get("type") in ("text/x-mathjax-config",) or "MathJax" in (tag.string or ""):
            tag.decompose()


def _fold_long_tables(soup: BeautifulSoup) -> None:
    for table in soup.find_all("table"):
        rows = len(table.find_all("tr"))
        if rows > FOLD_ROWS and table.find_parent("details") is None:
            details = soup.new_tag("details", attrs={"class": "psit-fold"})
            summary = soup.new_tag("summary")
            summary.string = f"Table with {rows - 1} rows (click to open)"
            table.wrap(details)
            details.insert(0, summary)


def _code_toggle(soup: BeautifulSoup) -> None:
    body = soup.body
    if body is None:  # not an HTML page: nothing to put a toggle on
        return
    body["class"] = AttributeValueList([*body.get_attribute_list("class"), "psit-code-hidden"])
    button = soup.new_tag("button", attrs={"id": "psit-code-toggle", "type": "button"})
    button.string = "Show code"
    body.insert(0, button)
    style = soup.new_tag("style")
    style.string = _STYLE
    (soup.head or body).append(style)
    script = soup.new_tag("script")
    script.string = _SCRIPT
    body.append(script)


def render_page(nb: Any, title: str) -> str:
    """The HTML of an executed notebook (an nbformat node; :func:`prepare` changes it in place)."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(prepare(nb))
    soup = BeautifulSoup(body, "html.parser")
    if soup.title is not None:
        soup.title.string = title
    _offline(soup)
    _fold_long_tables(soup)
    _code_toggle(soup)
    return str(soup)
