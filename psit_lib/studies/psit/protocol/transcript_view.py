"""The one view of a fork episode, from its typed record (like a log viewer, not a text dump):
:func:`episode_html` for the transcript, :func:`episode_row` for the episode explorer's table.

The HTML is self-contained (inline styles only), so the same markup serves the rendered report
and JupyterLab (:mod:`psit_lib.report.explorer` shows it for every fork episode).
"""

from __future__ import annotations

import difflib
import html
import re
from typing import Any

from psit_lib.runs.records import EpisodeRecord
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, Outcome
from psit_lib.studies.psit.protocol.records import ForkEpisode, ForkRecord
from psit_lib.studies.psit.protocol.table1 import score_table1


_CARD = "border:1px solid #d8dbe2;border-radius:6px;padding:6px 8px;background:#fff;min-width:0"
_PRE = "white-space:pre-wrap;word-break:break-word;margin:0;font-size:12px;font-family:ui-monospace,monospace"
_SMALL = "font-size:11px;color:#555"
_GOOD, _BAD = "#009E73", "#D55E00"


def as_fork_record(record: Any) -> ForkRecord:
    """A typed fork record from a typed one or a stored dict (any stored format)."""
    if isinstance(record, EpisodeRecord):
        return record
    from psit_lib.runs.records import read_records

    return read_records([record], ForkEpisode)[0]


def _esc(text: object) -> str:
    return html.escape(str(text))


def _badge(outcome: Outcome | str) -> str:
    value = outcome.value if isinstance(outcome, Outcome) else str(outcome)
    colour = OUTCOME_COLOURS.get(Outcome(value), "#333") if value in {o.value for o in Outcome} else "#333"
    return (f"<span style='background:{colour};color:#fff;border-radius:4px;padding:1px 7px;"
            f"font-size:12px'>{_esc(value)}</span>")


def secrets_of(result: ForkEpisode) -> list[str]:
    """The secrets a public reply must not name: the revealed one and the one kept in memory."""
    found = [result.reveal.parsed] if result.reveal is not None and result.reveal.parsed else []
    found += [c.secret for c in result.candidates if c.source in ("revealed", "stored")]
    return [s for s in dict.fromkeys(found) if s and s.strip()]


def _secret_pattern(secrets: list[str]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    return re.compile(r"(?<!\w)(" + "|".join(re.escape(s) for s in sorted(secrets, key=len, reverse=True))
                      + r")(?!\w)", re.I)


def leak_turns(result: ForkEpisode) -> list[int]:
    """The turns (1-based) whose public host reply names a secret of :func:`secrets_of`."""
    pattern = _secret_pattern(secrets_of(result))
    if pattern is None:
        return []
    return [i // 2 + 1 for i, m in enumerate(result.transcript) if m.role == "assistant" and pattern.search(m.content)]


def _marked(text: str, pattern: re.Pattern[str] | None) -> str:
    """Escaped text with every secret it names in a ``<mark class='psit-leak'>``."""
    if pattern is None:
        return _esc(text)
    parts = pattern.split(text)  # odd parts are the matches
    return "".join(f"<mark class='psit-leak' style='background:#ffd54f'>{_esc(p)}</mark>" if i % 2 else _esc(p)
                   for i, p in enumerate(parts))


def _bubble(who: str, text: str, pattern: re.Pattern[str] | None = None) -> str:
    host = who == "host"
    leaked = host and pattern is not None and bool(pattern.search(text))
    flag = (f"<div style='{_SMALL};color:{_BAD};font-weight:600'>the secret is named here (a leak)</div>"
            if leaked else "")
    return (f"<div style='display:flex;gap:8px;margin:3px 0'><div style='width:52px;flex:none;{_SMALL};"
            f"font-weight:600;text-align:right'>{who}</div><div class='{'psit-leak-turn' if leaked else ''}' "
            f"style='{_CARD};flex:1;background:{'#f4f8ff' if host else '#fafafa'}"
            f"{f';border-color:{_BAD}' if leaked else ''}'>{flag}<pre style='{_PRE}'>"
            f"{_marked(text, pattern if host else None)}</pre></div></div>")


def state_diff_html(before: str, after: str) -> str:
    """The lines the private state gained (green, ``+``) and lost (red, ``-``) over one turn."""
    lines = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    if not lines:
        return f"<span style='{_SMALL}'>unchanged</span>"
    rows = "".join(f"<div style='color:{_GOOD if line[0] == '+' else _BAD}'>{_esc(line)}</div>" for line in lines)
    return f"<pre class='psit-diff' style='{_PRE}'>{rows}</pre>"


def _state_turn(result: ForkEpisode, turn: int) -> str:
    """The private state after ``turn``: its diff from the turn before (open for a memory agent,
    whose edits are the point; folded for kept reasoning or a retrieved block), the whole folded."""
    states = result.private_state_per_turn
    if turn - 1 >= len(states) or not (states[turn - 1] or (turn > 1 and states[turn - 2])):
        return ""
    now, before = states[turn - 1], states[turn - 2] if turn > 1 else ""
    shown = " open" if any(result.memory_edits) else ""
    return (f"<details class='psit-memory'{shown} style='margin:2px 0 2px 60px'><summary style='{_SMALL}'>private state "
            f"after turn {turn}: what changed</summary>{state_diff_html(before, now)}"
            f"<details style='margin-top:3px'><summary style='{_SMALL}'>the whole private state</summary>"
            f"<pre style='{_PRE};background:#fbf7ff'>{_esc(now)}</pre></details></details>")


def _private_lines(result: ForkEpisode, turn: int) -> list[str]:
    """What happened privately after the host's reply of ``turn`` (1-based)."""
    lines = []
    if turn - 1 < len(result.memory_edits):
        for edit in result.memory_edits[turn - 1]:
            meta = edit.meta or {}
            detail = ", ".join(f"{k}={v}" for k, v in meta.items() if k in ("changed_lines", "sections_touched",
                                                                             "applied_hunks") and v not in (None, []))
            warnings = "; ".join(str(w) for w in meta.get("warnings") or [])
            status = "ok" if edit.ok else f"failed: {edit.error}"
            lines.append(f"tool call <code>{_esc(edit.name)}</code> → {_esc(status)}"
                         + (f" ({_esc(detail)})" if detail else "") + (f" · {_esc(warnings)}" if warnings else ""))
    for call in result.hidden_calls:
        if call.turn == turn:
            lines.append(f"hidden call <code>{_esc(call.kind)}</code> ({_esc(call.library)}): "
                         f"{call.prompt_tokens}+{call.completion_tokens} tokens"
                         + ("" if call.ok else f", failed: {_esc(call.error)}"))
    for unread in result.unreadable_replies:
        if unread.turn == turn:
            lines.append(f"<span style='color:{_BAD}'>unreadable reply to {_esc(unread.move)!s}: "
                         f"{_esc(unread.error[:200])}</span>")
    if turn - 1 < len(result.state_size_per_turn):
        lines.append(f"private state carried on: {result.state_size_per_turn[turn - 1]} tokens")
    return lines


def _exchange(result: ForkEpisode) -> str:
    parts = []
    messages = result.transcript
    pattern = _secret_pattern(secrets_of(result))
    for start in range(0, len(messages), 2):
        turn = start // 2 + 1
        parts.append(f"<div style='{_SMALL};margin-top:6px'>turn {turn}</div>")
        for message in messages[start:start + 2]:
            parts.append(_bubble("player" if message.role == "user" else "host", message.content, pattern))
        private = _private_lines(result, turn)
        if private:
            parts.append(f"<div style='margin:2px 0 2px 60px;{_SMALL};border-left:3px solid #c9b3e6;"
                         f"padding-left:6px'>{'<br>'.join(private)}</div>")
        parts.append(_state_turn(result, turn))
    return "".join(parts) or "<i>no public exchange</i>"


def _branch_calls(result: ForkEpisode, branch: str) -> str:
    calls = [c for c in result.branch_hidden_calls if c.branch == branch]
    if not calls:
        return ""
    return (f"<div style='{_SMALL};margin-top:4px'>hidden calls: "
            + ", ".join(f"{_esc(c.kind)} ({c.prompt_tokens}+{c.completion_tokens})" for c in calls) + "</div>")


def _answer_word(value: bool | None) -> str:
    return "unreadable" if value is None else ("yes" if value else "no")


def _branches(result: ForkEpisode) -> str:
    cards = []
    if result.reveal is not None:
        reveal = result.reveal
        ok = reveal.compatible
        colour = _GOOD if ok else (_BAD if ok is False else "#999")
        cards.append(f"<div style='{_CARD};border-top:4px solid {colour}'><b>reveal</b>"
                     f"<div style='{_SMALL}'>{_esc(reveal.question)}</div><pre style='{_PRE}'>{_esc(reveal.answer)}</pre>"
                     f"<div style='{_SMALL}'>read as <b>{_esc(reveal.parsed)}</b> · "
                     f"{'compatible with the public play' if ok else 'not compatible with the public play' if ok is False else 'not checked'}"
                     f"</div>{_branch_calls(result, 'reveal')}</div>")
    for i, cand in enumerate(result.candidates):
        expected = cand.source == "revealed"  # a self-consistent host says yes to its revealed secret only
        matches = cand.parsed is not None and cand.parsed == expected
        colour = _GOOD if matches else (_BAD if cand.parsed is not None else "#999")
        cards.append(f"<div style='{_CARD};border-top:4px solid {colour}'><b>{_esc(cand.secret)}</b> "
                     f"<span style='{_SMALL}'>({_esc(cand.source)})</span>"
                     f"<pre style='{_PRE}'>{_esc(cand.answer)}</pre>"
                     f"<div style='{_SMALL}'>answered <b>{_answer_word(cand.parsed)}</b>, a self-consistent host "
                     f"says <b>{_answer_word(expected)}</b>"
                     + ("" if cand.checkable is not False else " · not checkable by rule R")
                     + f"</div>{_branch_calls(result, f'confirm-{i}')}</div>")
    if not cards:
        return "<i>the episode did not reach the fork</i>"
    return ("<div style='display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:8px'>"
            + "".join(cards) + "</div>")


def episode_html(record: Any) -> str:
    """The structured view of one fork episode (typed record or stored dict) as HTML."""
    rec = as_fork_record(record)
    result = rec.result
    head = (f"<div style='margin-bottom:6px'><b>{_esc(rec.episode_id)}</b> · agent <code>{_esc(rec.spec.get('agent'))}"
            f"</code> · model <code>{_esc(rec.spec.get('model'))}</code> · "
            + _badge(_outcome(result)) + "</div>")
    if result is None:
        return f"<div>{head}<p style='color:{_BAD}'>error: {_esc(rec.error)}</p></div>"
    notes = []
    if result.failure:
        notes.append(f"<p style='color:{_BAD};margin:2px 0'>why: {_esc(result.failure)}</p>")
    for contradiction in result.public_contradictions:
        notes.append(f"<p style='color:{_BAD};margin:2px 0'>public contradiction at turn {contradiction.turn}: "
                     f"{_esc(contradiction.error)}</p>")
    private = result.private_state_at_fork
    private_html = (f"<details class='psit-private'><summary style='{_SMALL}'>show the private state (kept reasoning, "
                    f"memory block or retrieved block)</summary><div style='{_CARD};background:#fbf7ff;max-height:22em;"
                    f"overflow:auto'><pre style='{_PRE}'>{_esc(private)}</pre></div></details>" if private
                    else "<i>none: nothing private survives between turns</i>")
    section = "<div style='font-weight:600;margin:10px 0 4px'>{}</div>"
    return ("<div class='psit-episode' style='font-family:system-ui,sans-serif;font-size:13px;max-width:100%'>"
            + head + "".join(notes)
            + section.format("Public play, and what happened privately after each reply") + _exchange(result)
            + section.format(f"Private state at the fork ({len(private.split()) if private else 0} words)") + private_html
            + section.format("Fork branches (each from the same checkpoint)") + _branches(result) + "</div>")


def is_fork_result(result: Any) -> bool:
    """Whether a stored result (a dict) is a fork episode's."""
    return isinstance(result, dict) and "candidates" in result and "transcript" in result and "reveal" in result


def _outcome(result: ForkEpisode | None) -> Outcome:
    """The episode's one label, the tables' and the figure's (derived, never an older record's stored one)."""
    from psit_lib.studies.psit.protocol.experiment import fork_outcome

    return Outcome.ERROR if result is None else fork_outcome(result)


def episode_row(record: Any) -> dict[str, Any]:
    """The episode explorer's study columns of one fork episode: its outcome under the workbook's
    strict view (SPEC §1 step 3) and under Table 1's rule (step 5), the revealed secret, the turns
    played and the turns whose public reply named the secret."""
    rec = as_fork_record(record)
    result = rec.result
    if result is None:
        return {"outcome": Outcome.ERROR.value}
    table1 = score_table1(result)
    return {"outcome": _outcome(result).value,
            "table1": "leak" if table1.leakage else ("self_consistent" if table1.self_consistent else "inconsistent"),
            "secret": result.reveal.parsed if result.reveal is not None else None,
            "turns": result.turns_played,
            "leak_turns": ", ".join(str(t) for t in leak_turns(result))}


__all__ = ["as_fork_record", "episode_html", "episode_row", "is_fork_result", "leak_turns",
           "state_diff_html"]
