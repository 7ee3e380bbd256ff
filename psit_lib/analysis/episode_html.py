"""The pieces every study's episode view is built from: a conversation of speakers' bubbles, cards, folds, a
state's diff between two turns, a line of facts over the view, the episode's scores.

One stylesheet (:data:`STYLE`, every rule under ``.psit-ep``) goes with the pieces, and :func:`view`
puts it inside each view's root, so a view is self-contained: the same markup reads alike in the
report's explorer, in JupyterLab and in a widget, with no page stylesheet to bring along (and a
compressed side file of many views repeats it for almost nothing). The studies' views
(``studies/*/…_view.py``) compose these; nothing here knows a study.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

GOOD, BAD, NEUTRAL = "#009E73", "#D55E00", "#777"
"""Colours of a held / failed / undecided check (Okabe-Ito, as the figures)."""

STYLE = """
.psit-ep{font-family:system-ui,sans-serif;font-size:13px;max-width:100%;color:#222}
.psit-ep .ep-head{margin-bottom:6px;line-height:1.7}
.psit-ep .ep-fact{margin-right:10px;white-space:nowrap}.psit-ep .ep-fact>span{color:#555}
.psit-ep .ep-badge{color:#fff;border-radius:4px;padding:1px 7px;font-size:12px;margin-right:4px;white-space:nowrap}
.psit-ep .ep-section{font-weight:600;margin:10px 0 4px}
.psit-ep .ep-small{font-size:11px;color:#555}
.psit-ep .ep-bad{color:#D55E00}
.psit-ep .ep-row{display:flex;gap:8px;margin:3px 0}
.psit-ep .ep-who{width:84px;flex:none;font-size:11px;color:#555;font-weight:600;text-align:right}
.psit-ep .ep-card{border:1px solid #d8dbe2;border-radius:6px;padding:6px 8px;background:#fff;min-width:0;flex:1}
.psit-ep .ep-card.ep-a{background:#f4f8ff}.psit-ep .ep-card.ep-u{background:#fafafa}
.psit-ep .ep-card.ep-p{background:#fbf7ff}.psit-ep .ep-card.ep-warn{border-color:#D55E00}
.psit-ep pre{white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;font-family:ui-monospace,monospace}
.psit-ep .ep-note{margin:2px 0 2px 92px;font-size:11px;color:#555;border-left:3px solid #c9b3e6;padding-left:6px}
.psit-ep details{margin:2px 0}.psit-ep summary{cursor:pointer}
.psit-ep details.ep-indent{margin-left:92px}
.psit-ep details.ep-prompt{margin-left:14px}
.psit-ep details.ep-turn{border:1px solid #e3e5ea;border-radius:6px;padding:3px 8px;margin:4px 0;background:#fdfdfe}
.psit-ep details.ep-turn[open]{background:#fff}
.psit-ep .ep-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:8px}
.psit-ep .ep-scroll{max-height:22em;overflow:auto}
.psit-ep .ep-wide{overflow-x:auto;max-width:100%}
.psit-ep table.ep-table{border-collapse:collapse;font-size:12px;margin:3px 0}
.psit-ep table.ep-table th,.psit-ep table.ep-table td{border-bottom:1px solid #e5e5e5;padding:2px 8px 2px 0;
 text-align:left;vertical-align:top}
.psit-ep table.ep-table td.ep-num{text-align:right;white-space:nowrap}
.psit-ep .ep-diff-add{color:#009E73}.psit-ep .ep-diff-del{color:#D55E00}
.psit-ep mark.psit-leak{background:#ffd54f}
"""


def esc(value: object) -> str:
    """``value`` as HTML text (quotes escaped too: the text may end up in an attribute)."""
    return html.escape(str(value))


def view(body: str, *, css_class: str = "") -> str:
    """A view's root: the stylesheet, then ``body``."""
    extra = f" {css_class}" if css_class else ""
    return f"<div class='psit-ep{extra}'><style>{STYLE}</style>{body}</div>"


def badge(text: object, colour: str) -> str:
    return f"<span class='ep-badge' style='background:{colour}'>{esc(text)}</span>"


def check_badge(label: str, value: bool | None) -> str:
    """A check's badge: ``label`` green when it held, red when it did not, grey when undecided."""
    return badge(label, NEUTRAL if value is None else GOOD if value else BAD)


def facts(pairs: Mapping[str, object]) -> str:
    """``name value`` pairs on one wrapping line (empty values left out)."""
    return "".join(f"<span class='ep-fact'><span>{esc(k)}</span> <b>{esc(v)}</b></span>"
                   for k, v in pairs.items() if v not in (None, ""))


def head(title: str, pairs: Mapping[str, object], badges: Iterable[str] = ()) -> str:
    """The line over a view: the episode's name, its facts and its badges (HTML)."""
    return (f"<div class='ep-head'><b>{esc(title)}</b> · {facts(pairs)}{''.join(badges)}</div>")


def section(title: str) -> str:
    return f"<div class='ep-section'>{esc(title)}</div>"


def small(text_html: str, css_class: str = "") -> str:
    return f"<div class='ep-small{' ' + css_class if css_class else ''}'>{text_html}</div>"


def pre(text: object, css_class: str = "") -> str:
    classes = f" class='{css_class}'" if css_class else ""
    return f"<pre{classes}>{esc(text)}</pre>"


def bubble(who: str, body_html: str, *, tone: str = "a", css_class: str = "", flag: str = "") -> str:
    """One speaker's message: ``who`` on the left, the message (HTML, already escaped) in a card;
    ``tone`` ``a`` (agent), ``u`` (user) or ``p`` (private); ``flag`` a warning line over it."""
    warn = f"<div class='ep-small ep-bad' style='font-weight:600'>{esc(flag)}</div>" if flag else ""
    classes = " ".join(c for c in ("ep-card", f"ep-{tone}", "ep-warn" if flag else "", css_class) if c)
    return f"<div class='ep-row'><div class='ep-who'>{esc(who)}</div><div class='{classes}'>{warn}{body_html}</div></div>"


def note(lines: Iterable[str]) -> str:
    """What happened privately beside a message (HTML lines), indented under it."""
    shown = [line for line in lines if line]
    return f"<div class='ep-note'>{'<br>'.join(shown)}</div>" if shown else ""


def fold(summary_html: str, body: str, *, open_: bool = False, css_class: str = "") -> str:
    """``body`` behind a summary line (open with ``open_``)."""
    classes = f" class='{css_class}'" if css_class else ""
    return f"<details{classes}{' open' if open_ else ''}><summary>{summary_html}</summary>{body}</details>"


def state_diff(before: str, after: str) -> str:
    """The lines a state gained (green, ``+``) and lost (red, ``-``) from one turn to the next."""
    lines = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    if not lines:
        return small("unchanged")
    rows = "".join(f"<div class='{'ep-diff-add' if line[0] == '+' else 'ep-diff-del'}'>{esc(line)}</div>"
                   for line in lines)
    return f"<pre class='psit-diff'>{rows}</pre>"


def number(value: Any) -> str:
    """A cell's number as the tables write it (3 significant digits), text as it is."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else str(value)
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def table(columns: list[str], rows: Iterable[Iterable[Any]], *, numeric: Iterable[str] = ()) -> str:
    """A small table (numbers right-aligned in ``numeric`` columns), in a box that scrolls sideways."""
    right = set(numeric)
    head_html = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td class='ep-num'>{esc(number(v))}</td>" if c in right else f"<td>{esc(number(v))}</td>"
                                    for c, v in zip(columns, row)) + "</tr>" for row in rows)
    return f"<div class='ep-wide'><table class='ep-table'><thead><tr>{head_html}</tr></thead><tbody>{body}</tbody></table></div>"


def scores_line(scores: Mapping[str, Mapping[str, Any]]) -> str:
    """The episode's stored scores, one ``scorer value`` each with its explanation on hover."""
    if not scores:
        return ""
    parts = [f"<span class='ep-fact' title='{esc(line.get('explanation') or '')}'><span>{esc(name)}</span> "
             f"<b>{esc(number(line.get('value')) if not isinstance(line.get('value'), (dict, list)) else '…')}</b></span>"
             for name, line in scores.items()]
    return small("scores: " + "".join(parts))


_SHORTENED = re.compile(r"(?P<head>.*)… \[(?P<chars>[\d,]+) characters, sha256 (?P<hash>[0-9a-f]+)\]", re.S)
"""A long prompt as the record keeps it (``runs.runner.shown_prompt``): its head, its length and its hash."""


def _prompt(role: str, text: str) -> str:
    shortened = _SHORTENED.fullmatch(text)
    if shortened:
        line = (f"{shortened['chars']} characters, sha256 <code>{esc(shortened['hash'])}</code>: the record keeps its "
                f"first {len(shortened['head']):,}")
        text = shortened["head"] + " …"
    else:
        line = f"{len(text):,} characters"
    return fold(f"<code>{esc(role)}</code> <span class='ep-small'>{line}</span>",
                f"<div class='ep-card ep-p ep-scroll'>{pre(text)}</div>", css_class="ep-prompt")


def system_prompts(prompts: Mapping[str, str] | None) -> str:
    """The system prompt each role's first call sent (the record's ``system_prompts``), folded, one fold per
    role: what the agents were actually told, a plug-in's included. Empty shows nothing: a record from
    before they were kept reads the same as one whose calls sent none."""
    if not prompts:
        return ""
    inner = "".join(_prompt(role, text) for role, text in prompts.items())
    summary = f"system prompts (each role's first call, as sent): {esc(', '.join(prompts))}"
    return fold(f"<span class='ep-small'>{summary}</span>", inner, css_class="psit-prompts")


def error_line(record: Mapping[str, Any]) -> str:
    """A failed episode's error (empty for a finished one)."""
    return f"<p class='ep-bad' style='margin:2px 0'>error: {esc(record['error'])}</p>" if record.get("error") else ""


__all__ = ["BAD", "GOOD", "NEUTRAL", "STYLE", "badge", "bubble", "check_badge", "esc", "error_line", "facts", "fold",
           "head", "note", "number", "pre", "scores_line", "section", "small", "state_diff", "system_prompts", "table",
           "view"]
