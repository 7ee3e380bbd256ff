"""One notebook as an offline HTML page that reads like a results section: a head (:mod:`.page_head`), plumbing out,
code behind a toggle, long tables folded, wide ones scrolled in their own box, nothing fetched from the network."""

from __future__ import annotations

import base64
import re
from typing import Any

from bs4 import BeautifulSoup
from bs4.element import AttributeValueList

from psit_lib.analysis.labels import format_number, plain_numbers

from .assets import ReportAssets
from .explorer import explorer_html
from .notebook_prep import prepare
from .page_head import PageContext, head_html, link_spec_references

FOLD_ROWS = 25
"""Tables with more rows than this are folded (a summary line shows how many)."""

_STYLE = """
body.psit-code-hidden .jp-CodeCell .jp-InputArea { display: none; }
#psit-code-toggle { position: fixed; top: 0.6em; right: 0.8em; z-index: 10; padding: 0.3em 0.8em; }
details.psit-fold > summary { cursor: pointer; color: #345; margin: 0.4em 0; }
main, .jp-Notebook { max-width: 1300px; margin: 0 auto; }
.jp-OutputArea-output { overflow-x: auto; max-width: 100%; }
.jp-RenderedHTMLCommon table { font-size: 0.85em; table-layout: auto; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { max-width: 40em; padding: 0.25em 0.6em;
  overflow-wrap: normal; word-break: normal; }
.jp-RenderedHTMLCommon caption { caption-side: top; text-align: left; color: #444; padding-bottom: 0.3em;
  width: max-content; max-width: min(90vw, 45em); }
.jp-OutputArea-output pre { white-space: pre-wrap; word-break: break-word; }
img.psit-figure, .jp-RenderedImage img { max-width: 100%; height: auto; }
.psit-head { border: 1px solid #dde; background: #f8f9fc; padding: 0.6em 1em; margin: 0.8em auto 1.2em;
             font-family: system-ui, -apple-system, "Segoe UI", sans-serif; font-size: 14px; color: #222;
             max-width: 1260px; overflow-x: auto; }
.psit-head a { color: #1a5fb4; }
.psit-head .psit-head-title { margin-top: 0.2em; font-size: 1.15em; }
.psit-head table.psit-kv { font-size: 0.85em; border-collapse: collapse; margin-bottom: 0.5em; }
table.psit-kv th { text-align: left; color: #456; font-weight: 600; padding: 0.15em 0.5em; white-space: nowrap; }
table.psit-kv td { text-align: left; padding: 0.15em 1.2em 0.15em 0.3em; }
.psit-sub { font-weight: 600; margin: 0.6em 0 0.2em; }
.psit-files { font-size: 0.85em; line-height: 1.6; }
.psit-toc ol { columns: 2; margin: 0.3em 0; font-size: 0.9em; }
details.psit-stats > summary { cursor: pointer; color: #345; }
a.psit-spec { text-decoration: underline dotted; }
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
        elif "jp-Mermaid" in (tag.string or ""):  # the template's loader of Mermaid from a CDN: no diagram here
            tag.decompose()


def _fold_long_tables(soup: BeautifulSoup) -> None:
    for table in soup.find_all("table"):
        rows = len(table.find_all("tr"))
        if rows > FOLD_ROWS and table.find_parent("details") is None and table.find_parent(class_="psit-explorer") is None:
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


_DECIMAL = re.compile(r"^\s*-?\d+\.\d+\s*$")


def _plain_table_numbers(soup: BeautifulSoup) -> None:
    """Table cells as ``label_table`` writes them, however the table was made: a cell that is one
    decimal number to 3 significant digits ("0.148148" → "0.148"), an exponent only below 1e-4."""
    for cell in soup.find_all(["td", "th"]):
        for text in list(cell.find_all(string=True)):
            value = str(text)
            fixed = str(format_number(float(value))) if _DECIMAL.match(value) else plain_numbers(value)
            if fixed != value:
                text.replace_with(fixed)


_NUMBER = re.compile(r"^[-+−]?[\d.,]+(e[-+]?\d+)?%?\*?$|^[—–-]$|^(nan|NaN|None|True|False)$")


def _compact_tables(soup: BeautifulSoup) -> None:
    """Tables however they were made: a 0..n-1 index column dropped, text cells left-aligned,
    numbers kept on one line (a squeezed table wraps its text and headers instead)."""
    for table in soup.find_all("table"):
        body = table.find_all("tr")
        data_rows = [tr for tr in body if tr.find("td") is not None]
        if data_rows:
            firsts = [tr.find(["th", "td"]) for tr in data_rows]
            heads = [c.get_text(strip=True) if c is not None and c.name == "th" else None for c in firsts]
            if heads == [str(i) for i in range(len(firsts))]:
                for tr in body:
                    first = tr.find(["th", "td"])
                    if first is not None:
                        first.decompose()
        for cell in table.find_all("td"):
            number = bool(_NUMBER.match(cell.get_text(strip=True)))
            rule = "white-space:nowrap" if number else "text-align:left"  # a number is never split
            cell["style"] = (str(cell.get("style") or "") + ";" + rule).lstrip(";")


SHARED_STYLE_CHARS = 2000
"""A stylesheet of the page's head this long (the notebook template's) goes to a shared file."""


def _share(soup: BeautifulSoup, assets: ReportAssets) -> None:
    """The template's stylesheets and every figure as the report folder's shared files
    (:mod:`.assets`), so no page carries its own copy."""
    for style in (soup.head.find_all("style") if soup.head is not None else []):
        text = style.string or ""
        if len(text) >= SHARED_STYLE_CHARS:
            style.replace_with(soup.new_tag("link", attrs={"rel": "stylesheet", "href": assets.stylesheet(text)}))
    for image in soup.find_all("img"):
        src = str(image.get("src") or "")
        if src.startswith("data:image/png;base64,"):
            image["src"] = assets.figure(base64.b64decode(src.split(",", 1)[1]))


def _add_explorer(soup: BeautifulSoup, ctx: PageContext, assets: ReportAssets | None) -> None:
    """Every episode of the notebook's run (:mod:`.explorer`): in place of the explorer the notebook
    showed (drawn before its later parts, the sweeps, had run), else at the end of the page; with
    ``assets``, the table library is the report's one copy and the episodes are side files."""
    if not ctx.folder.has_records():
        return
    fresh = BeautifulSoup(explorer_html(ctx.folder, notebook=ctx.stem, assets=assets), "html.parser")
    if assets is not None and soup.head is not None:
        soup.head.append(soup.new_tag("script", attrs={"src": assets.itables_script()}))
    shown = soup.find(class_="psit-explorer")
    if shown is not None:
        shown.replace_with(fresh)
        return
    where = soup.find(class_="jp-Notebook") or soup.find("main") or soup.body
    if where is None:
        return
    section = soup.new_tag("section", attrs={"class": "psit-episodes-section jp-Cell", "style": "padding:0 1em"})
    heading = soup.new_tag("h2", attrs={"id": "every-episode"})
    heading.string = "Every episode"
    section.append(heading)
    section.append(fresh)
    where.append(section)


def _insert_head(soup: BeautifulSoup, ctx: PageContext) -> None:
    """The page head after the notebook's title cell (the top of the page when it has none)."""
    head = BeautifulSoup(head_html(soup, ctx), "html.parser")
    title = soup.find("h1")
    cell = title.find_parent(class_="jp-Cell") if title is not None else None
    if cell is not None:
        cell.insert_after(head)
    elif soup.body is not None:
        soup.body.insert(0, head)


def render_page(nb: Any, title: str, ctx: PageContext | None = None, assets: ReportAssets | None = None) -> str:
    """The HTML of an executed notebook (an nbformat node; :func:`prepare` changes it in place);
    with ``ctx`` (the run it belongs to) the page gets its head, protocol links and explorer; with
    ``assets`` (its report folder's), what pages share goes to shared files."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="lab")
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    body, _ = exporter.from_notebook_node(prepare(nb))
    soup = BeautifulSoup(body, "html.parser")
    if soup.title is not None:
        soup.title.string = title
    _offline(soup)
    _plain_table_numbers(soup)
    _compact_tables(soup)
    if ctx is not None:
        if ctx.protocol:
            link_spec_references(soup, ctx.protocol)
        _add_explorer(soup, ctx, assets)
        _insert_head(soup, ctx)
    _fold_long_tables(soup)
    _code_toggle(soup)
    if assets is not None:
        _share(soup, assets)
    return str(soup)
