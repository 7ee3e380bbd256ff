"""A BASIS trial as the exchange it was (the episode explorer's view of notebook 06): the user's request to the
orchestrator, each orchestrator step and what it delegated, each cab agent (or notifier) step with the shared
context it was shown (the cortex episodes its mask let it see) and the app calls it made, the replies back, what
the user was told, the rides standing at the end, and the cortex's episodes with their masks.

The steps come in the order the trial took them (``views`` is recorded step by step); the verdicts are the
``success`` and ``final_state_success`` scores (the record's own fields where no score is stored).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from psit_lib.analysis import episode_html as ep
from psit_lib.runs.study import EpisodeView
from psit_lib.studies.basis.scenarios import SCENARIOS

ScoreLines = Mapping[str, Mapping[str, Any]]
_SUBSTEP = re.compile(r"^d(\d+) step (\d+)$")
BOOKED = "BOOKED"


def _verdict(scores: ScoreLines, result: Mapping[str, Any], name: str) -> bool | None:
    line = scores.get(name)
    value = line.get("value") if line is not None else result.get(name)
    return None if value is None else bool(value)


def _who(agent: str) -> str:
    return {"basis_orchestrator": "orchestrator", "cab_subagent": "cab agent", "user_notifier": "notifier"}.get(agent, agent)


def _saw(view: Mapping[str, Any], masks: Mapping[str, Mapping[str, Any]]) -> str:
    """What one step was shown of the shared context: each cortex episode with its access mask."""
    seen = [str(e) for e in view.get("visible_episodes") or []]
    if not seen:
        return ep.small("saw no shared context")
    listed = ", ".join(f"{ep.esc(e)} ({ep.esc((masks.get(e) or {}).get('source', '?'))}, mask "
                       f"<code>{ep.esc((masks.get(e) or {}).get('access_mask', '?'))}</code>)" for e in seen)
    return ep.small(f"saw {len(seen)} shared episodes, {view.get('context_chars', 0)} characters: {listed}")


def _call(call: Mapping[str, Any]) -> str:
    arguments = json.dumps(call.get("arguments"), ensure_ascii=False)
    result = str(call.get("result") or "")
    state = "" if call.get("ok") else " <span class='ep-bad'>(refused)</span>"
    return (f"<div>app call <code>{ep.esc(call.get('name'))}</code> <code>{ep.esc(arguments)}</code>{state}</div>"
            + ep.fold("<span class='ep-small'>the app's answer</span>", ep.pre(result)))


def exchange_html(result: Mapping[str, Any]) -> str:
    """The trial's steps in order, each speaker with what it saw and what it did."""
    masks = {str(e.get("episode_id")): e for e in result.get("episodes") or []}
    delegations = {int(d["index"]): d for d in result.get("delegations") or []}
    calls = result.get("tool_calls") or []
    views = list(result.get("views") or [])
    scenario = SCENARIOS.get(str(result.get("scenario")))
    parts = [ep.bubble("user", ep.pre(scenario.user_request), tone="u")] if scenario is not None else []
    for i, view in enumerate(views):
        step, agent = str(view.get("step") or ""), str(view.get("agent") or "")
        sub = _SUBSTEP.match(step)
        body = [f"<div class='ep-small'><b>{ep.esc(step)}</b></div>", _saw(view, masks)]
        if sub is None:  # an orchestrator step: what it handed on next
            following = _SUBSTEP.match(str(views[i + 1].get("step") or "")) if i + 1 < len(views) else None
            delegation = delegations.get(int(following.group(1))) if following else None
            if delegation is not None:
                body.append(f"<div>→ {ep.esc(_who(str(delegation.get('agent'))))}:</div>"
                            + ep.pre(delegation.get("instruction") or ""))
            elif i == len(views) - 1 and result.get("final_answer"):
                body.append("<div>final answer:</div>" + ep.pre(result.get("final_answer")))
        else:
            index, number = int(sub.group(1)), int(sub.group(2))
            body += [_call(c) for c in calls if int(c.get("delegation", -1)) == index
                     and int(c.get("subagent_step", -1)) == number]
            delegation = delegations.get(index)
            if delegation is not None and number == int(delegation.get("steps") or 0) and delegation.get("reply"):
                body.append("<div>→ orchestrator:</div>" + ep.pre(delegation.get("reply")))
        parts.append(ep.bubble(_who(agent), "".join(body), tone="a" if sub is None else "p"))
    for message in result.get("user_messages") or []:
        parts.append(ep.bubble("to the user", ep.pre(message), tone="u"))
    return "".join(parts) or "<i>no step recorded</i>"


def _rides(result: Mapping[str, Any]) -> str:
    rides = result.get("rides") or []
    if not rides:
        return ep.small("no ride in the app at the end")
    return ep.table(["service", "from", "to", "status"],
                    [[r.get("service_type"), r.get("start_location"), r.get("end_location"), r.get("status")] for r in rides])


def _cortex(result: Mapping[str, Any]) -> str:
    episodes = result.get("episodes") or []
    if not episodes:
        return ep.small("none: this system shares no context between its agents")
    table = ep.table(["episode", "from", "step", "mask", "visible to", "summary"],
                     [[e.get("episode_id"), _who(str(e.get("source"))), e.get("step"), e.get("access_mask"),
                       ", ".join(_who(str(a)) for a in e.get("visible_to") or []),
                       (e.get("summary") or "") + (f" [ingest fell back: {e.get('fallback_reason')}]"
                                                    if e.get("fallback_reason") else "")] for e in episodes])
    return ep.fold(f"<span class='ep-small'>{len(episodes)} episodes stored, each with the mask that decides who "
                   "sees it</span>", table)


def conversation_html(record: dict[str, Any], scores: ScoreLines) -> str:
    """The trial (see the module's docstring)."""
    spec, result = record.get("spec") or {}, record.get("result") or {}
    badges = [] if not result else [ep.check_badge("success (reference validate)", _verdict(scores, result, "success")),
                                    ep.check_badge("final state", _verdict(scores, result, "final_state_success"))]
    head = ep.head(str(record.get("episode_id")), {
        "model": spec.get("model"), "system": spec.get("system"), "scenario": spec.get("scenario"),
        "trial": spec.get("trial")}, badges)
    parts = [head, ep.scores_line(scores), ep.system_prompts(record.get("system_prompts")), ep.error_line(record)]
    if result:
        parts += [f"<p class='ep-bad' style='margin:2px 0'>{ep.esc(e)}</p>" for e in result.get("errors") or []]
        if result.get("decided_without_tool_calls"):
            parts.append(ep.small("the orchestrator answered without a tool call", "ep-bad"))
        parts += [ep.section("The exchange: user, orchestrator and its agents, with what each step saw"),
                  exchange_html(result), ep.section("Rides in the app at the end"), _rides(result),
                  ep.section("The shared context (cortex)"), _cortex(result)]
    return ep.view("".join(parts))


def conversation_row(record: dict[str, Any], scores: ScoreLines) -> dict[str, Any]:
    """The explorer's BASIS columns: trial, both verdicts, rides booked at the end, orchestrator
    steps, delegations, app calls and the cortex's ingest fallbacks."""
    spec, result = record.get("spec") or {}, record.get("result") or {}
    if not result:
        return {"trial": spec.get("trial")}
    return {"trial": result.get("trial"), "success": _verdict(scores, result, "success"),
            "final_state_success": _verdict(scores, result, "final_state_success"),
            "rides_booked": sum(1 for r in result.get("rides") or [] if r.get("status") == BOOKED),
            "orchestrator_steps": result.get("orchestrator_steps"),
            "delegations": len(result.get("delegations") or []), "app_calls": len(result.get("tool_calls") or []),
            "ingest_fallbacks": result.get("ingest_fallbacks")}


VIEW = EpisodeView(row=conversation_row, html=conversation_html)

__all__ = ["VIEW", "conversation_html", "conversation_row", "exchange_html"]
