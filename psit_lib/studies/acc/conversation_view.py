"""An ACC episode as a conversation, turn by turn (the episode explorer's view of notebook 05): the user's
query, each agent's answer with what it carried into its context, the judge's verdict on that answer (read from
the ``judge`` scorer's stored rows: the record holds no verdict), and the ACC's committed state (its CCS, as the
answering agent reads it) with what changed in it since the turn before.

Each turn is folded behind one line that already says what the judge found, so a 50-turn episode reads as 50
lines until one is opened.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from psit_lib.analysis import episode_html as ep
from psit_lib.runs.study import EpisodeView
from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.ccs import CCS, render_ccs
from psit_lib.studies.acc.judge import CRITERIA

ScoreLines = Mapping[str, Mapping[str, Any]]
QUERY_CHARS = 90
"""How much of a turn's query its folded line shows."""


def ccs_text(state: Any) -> str:
    """A committed CCS as the answering agent reads it (:func:`render_ccs`); as stored when it is not one."""
    if not state:
        return ""
    try:
        return render_ccs(CCS.model_validate(state))
    except ValidationError:
        return str(state)


def _verdicts(scores: ScoreLines) -> dict[tuple[int, str], dict[str, Any]]:
    rows = ((scores.get("judge") or {}).get("metadata") or {}).get("rows") or []
    return {(int(r["turn"]), str(r["agent"])): r for r in rows if r.get("agent") is not None}


def _memories(scores: ScoreLines) -> dict[int, Any]:
    found = ((scores.get("judge") or {}).get("metadata") or {}).get("memories") or []
    return {int(m["turn"]): m.get("memory") for m in found if isinstance(m, dict) and "turn" in m}


def _rate(value: Any) -> str:
    return "—" if value is None else f"{float(value):.2g}"


def _short_verdict(verdict: dict[str, Any] | None) -> str:
    """One answer's verdict in a few characters: hallucination and drift rates, or why there is none."""
    if verdict is None:
        return "not judged"
    if verdict.get("status") != "ok":
        return "judge error"
    return f"H {_rate(verdict.get('hallucination'))} · D {_rate(verdict.get('drift'))}"


def _verdict_line(verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return ep.small("not judged (no judge score stored for this answer)")
    if verdict.get("status") != "ok":
        return ep.small(f"the judge's reply could not be read: {ep.esc(verdict.get('error') or 'no detail')}", "ep-bad")
    criteria = " · ".join(f"{c.replace('_', ' ')} {ep.number(verdict.get(c))}" for c in CRITERIA)
    bad = (verdict.get("hallucination") or 0) > 0 or (verdict.get("drift") or 0) > 0
    return ep.small(f"judge: {criteria} (0-10) · claims {verdict.get('supported_claims')} supported, "
                    f"{verdict.get('unsupported_claims')} unsupported → H<sub>t</sub> <b>{_rate(verdict.get('hallucination'))}</b>"
                    f" · rules {verdict.get('active_constraints')} active, {verdict.get('violations')} violated, "
                    f"{verdict.get('omitted_required')} omitted → D<sub>t</sub> <b>{_rate(verdict.get('drift'))}</b>",
                    "ep-bad" if bad else "")


def _carried(name: str, details: Mapping[str, Any], footprint: int) -> str:
    """What an agent answered from, besides the query: its footprint and what it brought in."""
    parts = [f"{footprint} tokens carried"]
    if "replayed_messages" in details:
        parts.append(f"{details['replayed_messages']} earlier messages replayed")
    if "retrieved" in details:
        parts.append("retrieved turns " + (", ".join(str(x) for x in details["retrieved"]) or "none"))
    if "recalled" in details:
        parts.append("recalled " + (", ".join(str(x) for x in details.get("recalled") or []) or "nothing")
                     + "; qualified " + (", ".join(str(x) for x in details.get("qualified") or []) or "none"))
    if details.get("ccs_error"):
        parts.append(f"<span class='ep-bad'>CCS not committed: {ep.esc(details['ccs_error'])}</span>")
    return ep.small(" · ".join(parts))


def _turn(turn: Mapping[str, Any], verdicts: dict[tuple[int, str], dict[str, Any]], before: str,
          memory: Any) -> tuple[str, str]:
    """One turn folded behind its line; returns (its HTML, the ACC's state after it)."""
    number = int(turn["turn"])
    agents = sorted((turn.get("agents") or {}).items(), key=lambda item: agent_rank(item[0]))
    query = str(turn.get("query") or "")
    shown = query if len(query) <= QUERY_CHARS else query[:QUERY_CHARS - 1] + "…"
    line = (f"<b>turn {number}</b> <span class='ep-small'>{ep.esc(turn.get('topic') or '')}</span> · {ep.esc(shown)}"
            "<div class='ep-small'>" + " | ".join(f"{ep.esc(name)}: {_short_verdict(verdicts.get((number, name)))}"
                                                 for name, _ in agents) + "</div>")
    body = [ep.bubble("user", ep.pre(query), tone="u")]
    after = before
    for name, answer in agents:
        details = answer.get("details") or {}
        body.append(ep.bubble(name, ep.pre(answer.get("answer") or "")
                              + _carried(name, details, int(answer.get("footprint_tokens") or 0))
                              + _verdict_line(verdicts.get((number, name)))))
        if "ccs" in details:
            after = ccs_text(details.get("ccs")) or before
            body.append(ep.fold("<span class='ep-small'>the ACC's committed state (CCS) after this turn: what "
                                "changed</span>", ep.state_diff(before, after)
                                + ep.fold("<span class='ep-small'>the whole CCS</span>", ep.bubble("", ep.pre(after), tone="p")),
                                open_=True, css_class="ep-indent"))
    if memory is not None:
        body.append(ep.fold("<span class='ep-small'>the judge's canonical memory at this turn (the standard the "
                            "answers were scored against)</span>", ep.pre(json.dumps(memory, indent=1, ensure_ascii=False)),
                            css_class="ep-indent"))
    return ep.fold(line, "".join(body), css_class="ep-turn"), after


def conversation_html(record: dict[str, Any], scores: ScoreLines) -> str:
    """The episode turn by turn (see the module's docstring)."""
    spec, result = record.get("spec") or {}, record.get("result") or {}
    head = ep.head(str(record.get("episode_id")), {
        "model": spec.get("model") or result.get("model"), "domain": result.get("domain") or spec.get("domain"),
        "scenario": result.get("scenario_id"), "turns": len(result.get("turns") or []),
        "CCS failures": result.get("ccs_failures"), "memory failures": result.get("memory_failures")})
    parts = [head, ep.scores_line(scores), ep.system_prompts(record.get("system_prompts")), ep.error_line(record)]
    turns = result.get("turns") or []
    if turns:
        verdicts, memories = _verdicts(scores), _memories(scores)
        parts.append(ep.section(f"{len(turns)} turns: the query, each agent's answer and the judge's verdict, and the "
                                "ACC's state (open a turn)"))
        parts.append(ep.small("H<sub>t</sub>: unsupported claims over claims; D<sub>t</sub>: violated and omitted rules "
                              "over active rules (from turn 2); —: not defined"))
        state = ""
        for turn in turns:
            html, state = _turn(turn, verdicts, state, memories.get(int(turn["turn"])))
            parts.append(html)
    return ep.view("".join(parts))


def conversation_row(record: dict[str, Any], scores: ScoreLines) -> dict[str, Any]:
    """The explorer's ACC columns (the domain is its task): scenario, turns, failed CCS commits; and per agent its
    hallucination and drift over the episode's judged turns (pooled), from the judge's stored rows."""
    result = record.get("result") or {}
    row: dict[str, Any] = {"scenario": result.get("scenario_id"),
                           "turns": len(result.get("turns") or []) if result else None,
                           "ccs_failures": result.get("ccs_failures")}
    pooled: dict[str, list[int]] = {}
    for verdict in _verdicts(scores).values():
        if verdict.get("status") == "ok":
            counts = pooled.setdefault(str(verdict["agent"]), [0, 0, 0, 0])
            counts[0] += int(verdict.get("unsupported_claims") or 0)
            counts[1] += int(verdict.get("supported_claims") or 0) + int(verdict.get("unsupported_claims") or 0)
            if verdict.get("drift") is not None:
                counts[2] += int(verdict.get("violations") or 0) + int(verdict.get("omitted_required") or 0)
                counts[3] += int(verdict.get("active_constraints") or 0)
    for name in sorted(pooled, key=agent_rank):
        bad, claims, drifted, rules = pooled[name]
        row[f"H {name} (pooled)"] = round(bad / claims, 3) if claims else None
        row[f"D {name} (pooled)"] = round(drifted / rules, 3) if rules else None
    return row


VIEW = EpisodeView(row=conversation_row, html=conversation_html)

__all__ = ["VIEW", "ccs_text", "conversation_html", "conversation_row"]
