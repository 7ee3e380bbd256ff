"""The head of a notebook's page: index link, parameters, provenance, run files and contents, all read from the run
folder (never from the notebook's code)."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag

from psit_lib.runs.folder import RunFolder

PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 78em; color: #222; padding: 0 1em; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; text-align: left; }
"""


def html_page(title: str, body: str, style: str = "") -> str:
    """A standalone page of the report: the shared style, then the page's own (inline: pages work offline)."""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{PAGE_STYLE}{style}</style></head><body>{body}</body></html>")


PARAMS_PER_ROW = 3
"""Parameter name/value pairs per row of the parameters table (keeps it short and within the page)."""


@dataclass
class PageContext:
    """What the page knows of its run besides the notebook."""

    run_dir: Path
    stem: str
    run: dict[str, Any] = field(default_factory=dict)
    commit: str = "unknown"
    protocol: str | None = None  # the rendered protocol's file name in the report folder

    @property
    def folder(self) -> RunFolder:
        """The notebook's folder of the run, read through its one reader."""
        return RunFolder(self.run_dir / self.stem)


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) if value else "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) if value else "(none)"
    return "(default)" if value is None else str(value)


def parameters(ctx: PageContext) -> dict[str, str]:
    """The notebook's parameters as run (``params.json`` without the harness's ``_`` keys)."""
    params = ctx.folder.params().stored()
    return {k: _value(v) for k, v in sorted(params.items()) if not k.startswith("_")}


def provenance(ctx: PageContext) -> dict[str, str]:
    """Backend (and whether it is simulated), model, profile, seed, code commit, and when it ran."""
    meta = ctx.folder.metadata().stored()
    backend = str(meta.get("backend") or ctx.run.get("backend") or "?")
    simulated = bool(meta.get("simulated", ctx.run.get("backend") == "sim"))
    models = meta.get("models_run") or [meta.get("model") or ctx.run.get("model") or "?"]
    last = meta.get("last_execution") or {}
    rows = {
        "run": str(ctx.run.get("run_id") or ctx.run_dir.name),
        "backend": backend + (" (simulated model: not a real LLM)" if simulated else ""),
        "model": _value(models),
        "profile": str(meta.get("profile") or ctx.run.get("profile") or "(none)"),
        "seed": str(meta.get("seed", "?")),
        "code commit": str(meta.get("git_commit") or ctx.commit),
        "ran": f"{meta.get('started', '?')} → {meta.get('ended', '?')}",
    }
    if last:
        # calls summed over every execution: a re-executed notebook resumes its episodes (no new call)
        executions = [e for e in meta.get("executions") or [] if isinstance(e, dict)] or [last]
        calls = sum(int(e.get("model_calls") or 0) for e in executions)
        cached = sum(int(e.get("cache_hits") or 0) for e in executions)
        rows["episodes"] = (f"{last.get('episodes_recorded', 0)} recorded, {last.get('episodes_failed', 0)} failed; "
                            f"{calls} model calls ({cached} from the cache)"
                            + (f" over {len(executions)} executions" if len(executions) > 1 else ""))
    return rows


def _pairs_table(rows: dict[str, str], css: str) -> str:
    cells = [f"<th>{html.escape(k)}</th><td>{html.escape(v)}</td>" for k, v in rows.items()]
    lines = ["<tr>" + "".join(cells[i:i + PARAMS_PER_ROW]) + "</tr>" for i in range(0, len(cells), PARAMS_PER_ROW)]
    return f"<table class='{css}'><tbody>{''.join(lines)}</tbody></table>"


def run_files(ctx: PageContext) -> str:
    """Links to the notebook's saved tables (CSV, parquet), episode records and metadata."""
    folder = ctx.folder
    base = f"../{ctx.stem}"
    tables = []
    for csv in (folder.tables_dir / name for name in folder.table_names()):
        parquet = csv.with_suffix(".parquet")
        link = f"<a href='{base}/tables/{html.escape(csv.name)}'>{html.escape(csv.stem)}</a>"
        if parquet.exists():
            link += f" (<a href='{base}/tables/{html.escape(parquet.name)}'>parquet</a>)"
        tables.append(link)
    others = [f"<a href='{base}/{name}'>{label}</a>" for name, label in folder.reader_files()]
    figures = sorted(folder.figures_dir.glob("*.svg"))
    if figures:
        others.append(f"<a href='{base}/figures/'>figures ({len(figures)} SVG)</a>")
    parts = []
    if tables:
        parts.append("<b>Tables:</b> " + " · ".join(tables))
    if others:
        parts.append("<b>Records:</b> " + " · ".join(others))
    return "<p class='psit-files'>" + "<br>".join(parts) + "</p>" if parts else ""


def _slug(text: str) -> str:
    return re.sub(r"[^\w-]+", "-", text).strip("-") or "section"


def table_of_contents(soup: BeautifulSoup) -> str:
    """A list of the page's sections (``h2``), each heading given an id when it has none."""
    items = []
    used: set[str] = set()
    for heading in soup.find_all("h2"):
        text = " ".join(heading.get_text("").split()).rstrip("¶").strip()
        if not text:
            continue
        anchor = str(heading.get("id") or _slug(text))
        while anchor in used:
            anchor += "-"
        used.add(anchor)
        heading["id"] = anchor
        items.append(f"<li><a href='#{html.escape(anchor)}'>{html.escape(text)}</a></li>")
    return f"<nav class='psit-toc'><b>Contents</b><ol>{''.join(items)}</ol></nav>" if items else ""


def head_html(soup: BeautifulSoup, ctx: PageContext) -> str:
    """The page head: index link, parameters, provenance, run files, contents."""
    params = parameters(ctx)
    return ("<section class='psit-head' id='psit-head'>"
            "<p class='psit-back'><a href='index.html' class='psit-index-link'>← Index of the run</a></p>"
            "<h2 class='psit-head-title'>Parameters and provenance</h2>"
            + _pairs_table(provenance(ctx), "psit-kv psit-prov")
            + ("<p class='psit-sub'>Parameters as run</p>" + _pairs_table(params, "psit-kv psit-params") if params
               else "<p class='psit-sub'>No parameters recorded (the run folder has none).</p>")
            + run_files(ctx) + table_of_contents(soup) + "</section>")


SPEC_REFERENCE = re.compile(r"SPEC §(\d+)")
_NO_LINKS_IN = {"a", "code", "pre", "script", "style", "math", "title"}


def link_spec_references(soup: BeautifulSoup, protocol: str) -> int:
    """Every "SPEC §n" in the page's text links to section n of the rendered protocol; returns
    how many were linked."""
    linked = 0
    for text in list(soup.find_all(string=SPEC_REFERENCE)):
        if not isinstance(text, NavigableString) or any(p.name in _NO_LINKS_IN for p in text.parents):
            continue
        pieces: list[Any] = []
        last = 0
        for match in SPEC_REFERENCE.finditer(str(text)):
            pieces.append(str(text)[last:match.start()])
            anchor = soup.new_tag("a", href=f"{protocol}#sec-{match.group(1)}")
            anchor["class"] = "psit-spec"
            anchor.string = match.group(0)
            pieces.append(anchor)
            last = match.end()
        pieces.append(str(text)[last:])
        for piece in pieces:
            if isinstance(piece, Tag) or piece:
                text.insert_before(piece)
            linked += isinstance(piece, Tag)
        text.extract()
    return linked


def protocol_html(markdown: str) -> str:
    """``docs/protocol.md`` as a page of the report, each ``## §n`` section anchored ``sec-n``."""
    import mistune

    body = str(mistune.create_markdown(plugins=["table"])(markdown))
    body = re.sub(r"<h2>§(\d+)", lambda m: f"<h2 id='sec-{m.group(1)}'>§{m.group(1)}", body)
    return html_page("The research protocol", "<p><a href='index.html'>← Index of the run</a></p>" + body,
                     "body{max-width:60em;margin:2em auto;line-height:1.5}code{background:#f4f4f4}pre{white-space:pre-wrap}"
                     "td,th{border:1px solid #ddd;padding:.3em .5em}")
