"""The one view of a fork episode, from its typed record (like a log viewer, not a text dump):
:func:`episode_html` for the transcript, :func:`episode_row` for the episode explorer's table, and
:data:`VIEW`, the study's view in the explorer (fork episodes, and 07's secret choices).

The HTML is self-contained (:mod:`psit_lib.analysis.episode_html`), so the same markup serves the
rendered report, JupyterLab and the player widget.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from psit_lib.analysis import episode_html as ep
from psit_lib.runs.records import EpisodeRecord, read_records
from psit_lib.runs.study import EpisodeView
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, Outcome
from psit_lib.studies.psit.protocol.records import ForkEpisode, ForkRecord, SecretChoiceEpisode
from psit_lib.studies.psit.protocol.table1 import score_table1


_GOOD, _BAD = ep.GOOD, ep.BAD


def as_fork_record(record: Any) -> ForkRecord:
    """A typed fork record from a typed one or a stored dict (any stored format)."""
    if isinstance(record, EpisodeRecord):
        return record
    return read_records([record], ForkEpisode)[0]


_esc = ep.esc


def _badge(outcome: Outcome | str) -> str:
    value = outcome.value if isinstance(outcome, Outcome) else str(outcome)
    colour = OUTCOME_COLOURS.get(Outcome(value), "#333") if value in {o.value for o in Outcome} else "#333"
    return ep.badge(value, colour)


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
    return ep.bubble(who, f"<pre>{_marked(text, pattern if host else None)}</pre>", tone="a" if host else "u",
                     css_class="psit-leak-turn" if leaked else "",
                     flag="the secret is named here (a leak)" if leaked else "")


state_diff_html = ep.state_diff


def _state_turn(result: ForkEpisode, turn: int) -> str:
    """The private state after ``turn``: its diff from the turn before (open for a memory agent,
    whose edits are the point; folded for kept reasoning or a retrieved block), the whole folded."""
    states = result.private_state_per_turn
    if turn - 1 >= len(states) or not (states[turn - 1] or (turn > 1 and states[turn - 2])):
        return ""
    now, before = states[turn - 1], states[turn - 2] if turn > 1 else ""
    whole = ep.fold("<span class='ep-small'>the whole private state</span>", ep.bubble("", ep.pre(now), tone="p"))
    return ep.fold(f"<span class='ep-small'>private state after {_turn_name(turn)}: what changed</span>",
                   state_diff_html(before, now) + whole, open_=any(result.memory_edits), css_class="psit-memory ep-indent")


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
        parts.append(f"<div class='ep-small' style='margin-top:6px'>{_turn_name(turn)}</div>")
        for message in messages[start:start + 2]:
            parts.append(_bubble("player" if message.role == "user" else "host", message.content, pattern))
        parts.append(ep.note(_private_lines(result, turn)))
        parts.append(_state_turn(result, turn))
    return "".join(parts) or "<i>no public exchange</i>"


def _turn_name(turn: int) -> str:
    """An exchange's name: the opening (the player's opener and the host's first reply), then
    each move after it, so the view counts what the explorer's ``turns`` column counts."""
    return f"turn {turn} (the opening)" if turn == 1 else f"turn {turn}"


def _branch_calls(result: ForkEpisode, branch: str) -> str:
    calls = [c for c in result.branch_hidden_calls if c.branch == branch]
    if not calls:
        return ""
    return ep.small("hidden calls: " + ", ".join(f"{_esc(c.kind)} ({c.prompt_tokens}+{c.completion_tokens})"
                                                  for c in calls))


def _answer_word(value: bool | None) -> str:
    return "unreadable" if value is None else ("yes" if value else "no")


def _branches(result: ForkEpisode) -> str:
    cards = []
    if result.reveal is not None:
        reveal = result.reveal
        ok = reveal.compatible
        colour = _GOOD if ok else (_BAD if ok is False else "#999")
        cards.append(f"<div class='ep-card' style='border-top:4px solid {colour}'><b>reveal</b>"
                     f"<div class='ep-small'>{_esc(reveal.question)}</div>{ep.pre(reveal.answer)}"
                     f"<div class='ep-small'>read as <b>{_esc(reveal.parsed)}</b> · "
                     f"{'compatible with the public play' if ok else 'not compatible with the public play' if ok is False else 'not checked'}"
                     f"</div>{_branch_calls(result, 'reveal')}</div>")
    for i, cand in enumerate(result.candidates):
        expected = cand.source == "revealed"  # a self-consistent host says yes to its revealed secret only
        matches = cand.parsed is not None and cand.parsed == expected
        colour = _GOOD if matches else (_BAD if cand.parsed is not None else "#999")
        cards.append(f"<div class='ep-card' style='border-top:4px solid {colour}'><b>{_esc(cand.secret)}</b> "
                     f"<span class='ep-small'>({_esc(cand.source)})</span>{ep.pre(cand.answer)}"
                     f"<div class='ep-small'>answered <b>{_answer_word(cand.parsed)}</b>, a self-consistent host "
                     f"says <b>{_answer_word(expected)}</b>"
                     + ("" if cand.checkable is not False else " · not checkable by rule R")
                     + f"</div>{_branch_calls(result, f'confirm-{i}')}</div>")
    if not cards:
        return "<i>the episode did not reach the fork</i>"
    return "<div class='ep-grid'>" + "".join(cards) + "</div>"


def episode_html(record: Any, scores: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The structured view of one fork episode (typed record or stored dict) as HTML; ``scores``,
    the episode's stored score lines, are listed under its head."""
    rec = as_fork_record(record)
    result = rec.result
    head = ep.head(rec.episode_id, {"agent": rec.spec.get("agent"), "model": rec.spec.get("model"),
                                    "task": rec.spec.get("task")}, [_badge(_outcome(result))]) + ep.scores_line(scores or {})
    head += ep.system_prompts(rec.system_prompts)
    if result is None:
        return ep.view(head + f"<p class='ep-bad'>error: {_esc(rec.error)}</p>", css_class="psit-episode")
    notes = []
    if result.failure:
        notes.append(f"<p class='ep-bad' style='margin:2px 0'>why: {_esc(result.failure)}</p>")
    for contradiction in result.public_contradictions:
        notes.append(f"<p class='ep-bad' style='margin:2px 0'>public contradiction at turn {contradiction.turn}: "
                     f"{_esc(contradiction.error)}</p>")
    private = result.private_state_at_fork
    private_html = (ep.fold("<span class='ep-small'>show the private state (kept reasoning, memory block or retrieved "
                            "block)</span>", f"<div class='ep-card ep-p ep-scroll'>{ep.pre(private)}</div>",
                            css_class="psit-private") if private
                    else "<i>none: nothing private survives between turns</i>")
    moves = f" ({result.turns_played} moves after the opening)" if result.turns_played is not None else ""
    return ep.view(head + "".join(notes)
                   + ep.section(f"Public play{moves}, and what happened privately after each reply") + _exchange(result)
                   + ep.section(f"Private state at the fork ({len(private.split()) if private else 0} words)")
                   + private_html + ep.section("Fork branches (each from the same checkpoint)") + _branches(result),
                   css_class="psit-episode")


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
    the view shows (the opening and each move) and the turns whose public reply named the secret."""
    rec = as_fork_record(record)
    result = rec.result
    if result is None:
        return {"outcome": Outcome.ERROR.value}
    table1 = score_table1(result)
    return {"outcome": _outcome(result).value,
            "table1": "leak" if table1.leakage else ("self_consistent" if table1.self_consistent else "inconsistent"),
            "secret": result.reveal.parsed if result.reveal is not None else None,
            "turns": len(result.transcript) // 2,
            "leak_turns": ", ".join(str(t) for t in leak_turns(result))}


def _choice_html(record: dict[str, Any], scores: Mapping[str, Mapping[str, Any]]) -> str:
    """Notebook 07's episode: the opener and the host's reply, then the reveal and the secret read from it."""
    rec = read_records([record], SecretChoiceEpisode)[0]
    spec, result = rec.spec, rec.result
    head = ep.head(rec.episode_id, {"agent": spec.get("agent"), "model": spec.get("model"), "task": spec.get("task"),
                                    "temperature": spec.get("temperature")}) + ep.scores_line(scores)
    head += ep.system_prompts(record.get("system_prompts"))
    if result is None:
        return ep.view(head + ep.error_line(record))
    reveal = result.reveal
    return ep.view(head + (f"<p class='ep-bad'>why: {_esc(result.failure)}</p>" if result.failure else "")
                   + ep.section("The opening") + _bubble("player", result.opening.question)
                   + _bubble("host", result.opening.answer) + ep.section("The reveal, right after it")
                   + _bubble("player", reveal.question) + _bubble("host", reveal.answer)
                   + ep.small(f"read as <b>{_esc(reveal.parsed)}</b>"
                              + (" · named in the opening already" if reveal.said_in_opening else "")))


def _choice_row(record: dict[str, Any]) -> dict[str, Any]:
    result = record.get("result") or {}
    reveal = result.get("reveal") or {}
    return {"temperature": (record.get("spec") or {}).get("temperature", result.get("temperature")),
            "secret": reveal.get("parsed"), "failure": result.get("failure")}


def _is_choice(record: dict[str, Any]) -> bool:
    """Whether a stored record is 07's (its specs carry the sampling temperature; a fork's do not)."""
    return "temperature" in (record.get("spec") or {})


def _row(record: dict[str, Any], scores: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    if _is_choice(record):
        return _choice_row(record)
    return episode_row(record) if record.get("result") is not None else {"outcome": Outcome.ERROR.value}


def _html(record: dict[str, Any], scores: Mapping[str, Mapping[str, Any]]) -> str:
    return _choice_html(record, scores) if _is_choice(record) else episode_html(record, scores)


VIEW = EpisodeView(row=_row, html=_html)
"""The study's episodes in the explorer: fork episodes (01-04) and secret choices (07)."""


__all__ = ["VIEW", "as_fork_record", "episode_html", "episode_row", "is_fork_result", "leak_turns",
           "state_diff_html"]
