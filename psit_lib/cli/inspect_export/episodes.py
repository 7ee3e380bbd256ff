"""What each study's episode record holds, told to a :class:`Trace` in the order it happened.

- a fork test (01-04; 07's secret choice): the dialogue up to the checkpoint, the private state
  there, then each branch (the reveal, each yes/no candidate) from the checkpoint;
- ACC (05): each agent's conversation, turn by turn, with what it answered from (the compressed
  state, the retrieved turns) and the judge's scores of each answer;
- BASIS (06): the user's request, the orchestrator's delegations, the cab agent's app calls and
  results, the notifier's messages, what each step saw (the cortex episodes its mask let through);
- anything else (90, a plug-in's study): the result's conversation and branches (the loader's
  :class:`~psit_lib.runs.load.Episode`), else its text fields as the model's replies.

A call is shown with the text the record keeps for it; calls whose text the record does not keep (a
memory library's, the compressor's, the cortex's) count in the sample's usage only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant

from psit_lib.cli.inspect_export.trace import Calls, Trace
from psit_lib.runs.load import Episode

SHOWN = frozenset({"transcript", "reveal", "candidates", "opening", "private_state_per_turn", "private_state_at_fork",
                   "turns", "delegations", "tool_calls", "views", "episodes", "user_messages", "final_answer"})
"""Result fields a reader shows as messages or events; the sample's metadata keeps the others."""

Reader = Callable[[Trace, dict[str, Any], Calls, dict[str, dict[str, Any]]], None]


def _said(trace: Trace, messages: list[dict[str, Any]], calls: list[dict[str, Any] | None],
          after: Callable[[int], None] | None = None) -> list[ChatMessage]:
    """A public dialogue as stored: each assistant reply is a model call given the dialogue before
    it; ``after(k)`` runs after the k-th reply. Returns the messages as shown."""
    shown: list[ChatMessage] = []
    replies = iter(calls)
    for message in messages:
        text = str(message.get("content") or "")
        if message.get("role") == "assistant":
            shown.append(trace.say(trace.assistant(text), call=next(replies, None), context=list(shown)))
            if after is not None:
                after(sum(1 for m in shown if m.role == "assistant") - 1)
        else:
            shown.append(trace.say(trace.user(text)))
    return shown


# -- fork tests ------------------------------------------------------------------------------------

def is_fork(result: dict[str, Any]) -> bool:
    return isinstance(result.get("reveal"), dict) and "question" in result["reveal"]


def _pre_fork(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The dialogue before the checkpoint: the game's transcript (01-04), or 07's opening exchange."""
    if isinstance(result.get("transcript"), list):
        return list(result["transcript"])
    opening = result.get("opening") or {}
    return [{"role": "user", "content": opening.get("question")}, {"role": "assistant", "content": opening.get("answer")}]


def read_fork(trace: Trace, record: dict[str, Any], calls: Calls, lines: dict[str, dict[str, Any]]) -> None:
    result = record["result"]
    agent = str(result.get("agent") or (record.get("spec") or {}).get("agent") or "agent")
    host = f"{result.get('task') or (record.get('spec') or {}).get('task')}_host"
    pre = _pre_fork(result)
    states = [str(s) for s in result.get("private_state_per_turn") or []]
    edits = result.get("memory_edits") or []

    def state_after(k: int) -> None:  # what the agent carried after its k-th reply, when it changed
        if k < len(states) and states[k] and (k == 0 or states[k] != states[k - 1]):
            done = ", ".join(f"{e.get('name')}{'' if e.get('ok') else ' (failed)'}" for e in
                             (edits[k] if k < len(edits) else []))
            trace.info(f"{agent}: private state after reply {k + 1}" + (f" (edits: {done})" if done else ""),
                       states[k])

    replies = sum(1 for m in pre if m.get("role") == "assistant")
    with trace.span(agent):
        dialogue = _said(trace, pre, calls.matched("main", host, replies), state_after)
        if "private_state_at_fork" in result:
            trace.info(f"{agent}: private state at the checkpoint (every branch starts from it)",
                       str(result["private_state_at_fork"] or "") or "(empty: nothing held privately)")
        anchor = trace.checkpoint()
        candidates = list(result.get("candidates") or [])
        total = 1 + len(candidates)
        reveal = result["reveal"]
        _branch(trace, anchor, dialogue, 1, total, "reveal", reveal, calls.of("main/reveal", host)[:1],
                {"read": reveal.get("parsed"), "compatible": reveal.get("compatible")})
        if candidates:
            search = result.get("candidate_search") or {}
            trace.info("the candidates asked about (each its own branch)",
                       {"candidates": [{"secret": c.get("secret"), "source": c.get("source")} for c in candidates],
                        **({"search": search} if search else {})})
        with trace.side_by_side() as lane:
            for i, candidate in enumerate(candidates):
                with lane():
                    _branch(trace, anchor, dialogue, i + 2, total, f"yes/no: {candidate.get('secret')}", candidate,
                            calls.of(f"main/confirm-{i}", host)[:1],
                            {"read": candidate.get("parsed"), "source": candidate.get("source")})
    if result.get("failure"):
        trace.info("what the fork test could not read", str(result["failure"]))


def _branch(trace: Trace, anchor: str, dialogue: list[ChatMessage], n: int, total: int, name: str,
            exchange: dict[str, Any], call: list[dict[str, Any]], read: dict[str, Any]) -> None:
    """One branch: the question put at the checkpoint and the answer, marked as the branch it is."""
    marker = (f"branch {n} of {total} · {name} · asked at the checkpoint, after message {len(dialogue)}; "
              "no other branch sees it")
    with trace.branch(f"branch {n}: {name}", anchor):
        question = trace.say(trace.user(str(exchange.get("question") or ""), branch=marker))
        trace.say(trace.assistant(str(exchange.get("answer") or ""), branch=name,
                                  **{k: v for k, v in read.items() if v is not None}),
                  call=call[0] if call else None, context=[*dialogue, question])


# -- ACC -------------------------------------------------------------------------------------------

def is_acc(result: dict[str, Any]) -> bool:
    turns = result.get("turns")
    return isinstance(turns, list) and bool(turns) and all(isinstance(t, dict) and "agents" in t for t in turns)


JUDGED = ("hallucination", "drift", "instruction_following", "answer_quality", "relevance", "coherence",
          "violations", "omitted_required", "error")


def read_acc(trace: Trace, record: dict[str, Any], calls: Calls, lines: dict[str, dict[str, Any]]) -> None:
    turns = record["result"]["turns"]
    agents = list(turns[0]["agents"])
    judged = {(row.get("turn"), row.get("agent")): row
              for row in ((lines.get("judge") or {}).get("metadata") or {}).get("rows") or []}
    answers: dict[tuple[int, str], ChatMessageAssistant] = {}
    queries: dict[int, ChatMessage] = {}
    for turn in turns:  # the messages view: turn by turn, the query, then each agent's answer
        k = int(turn["turn"])
        queries[k] = trace.say(trace.user(str(turn["query"]), turn=k, topic=turn.get("topic")))
        for agent in agents:
            answer = (turn["agents"] or {}).get(agent) or {}
            verdict = " · ".join(f"{key.replace('_', ' ')} {value}" for key, value in (judged.get((k, agent)) or {}).items()
                                 if key in JUDGED and value is not None)
            said: dict[str, Any] = {"agent": agent, "turn": k, "footprint_tokens": answer.get("footprint_tokens"),
                                    **({"judge": verdict} if verdict else {})}
            answers[k, agent] = trace.assistant(str(answer.get("answer") or ""), **said)
            trace.say(answers[k, agent])
    with trace.side_by_side() as lane:  # the events: each agent its own lane, as each ran apart
        for agent in agents:
            own = calls.matched(f"main/{agent}", "acc_agent", len(turns))
            context: list[ChatMessage] = []
            with lane(), trace.span(agent):
                for turn, call in zip(turns, own):
                    k = int(turn["turn"])
                    details = ((turn["agents"] or {}).get(agent) or {}).get("details")
                    if details:
                        trace.info(f"{agent} · turn {k}: what it answered from", details)
                    context.append(queries[k])
                    trace.model_call(answers[k, agent], list(context), call)
                    context.append(answers[k, agent])


# -- BASIS -----------------------------------------------------------------------------------------

def is_basis(result: dict[str, Any]) -> bool:
    return isinstance(result.get("delegations"), list) and isinstance(result.get("views"), list)


_USER_REQUEST = re.compile(r"^user request: (.*)$", re.M)


def _request(result: dict[str, Any]) -> tuple[str, str]:
    """The user's request and where it comes from: the cortex's copy of the first step, as the run
    sent it, else the scenario's request as this code words it (the record keeps no copy)."""
    for episode in result.get("episodes") or []:
        found = _USER_REQUEST.search(str(episode.get("raw_trace") or ""))
        if found:
            return found.group(1), "as sent (the cortex's copy of the first step)"
    from psit_lib.studies.basis.scenarios import SCENARIOS

    scenario = SCENARIOS.get(str(result.get("scenario")))
    if scenario is None:
        return f"(the request of scenario {result.get('scenario')!r})", "not recorded"
    return scenario.user_request, "the scenario's request as this code words it; the record keeps no copy"


def read_basis(trace: Trace, record: dict[str, Any], calls: Calls, lines: dict[str, dict[str, Any]]) -> None:
    from psit_lib.studies.basis.prompts import NOTIFIER_ID, ORCHESTRATOR_ID, SEND_MESSAGE_TOOL_NAME
    from psit_lib.studies.basis.system import DELEGATES

    result = record["result"]
    tool_of = {agent: tool for tool, agent in DELEGATES.items()}
    delegations = {int(d["index"]): d for d in result["delegations"]}
    app_calls: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for call in result.get("tool_calls") or []:
        app_calls.setdefault((int(call["delegation"]), int(call["subagent_step"])), []).append(call)
    stored: dict[str, list[dict[str, Any]]] = {}
    for episode in result.get("episodes") or []:
        stored.setdefault(str(episode.get("step")), []).append(episode)
    sent_to_user = iter(result.get("user_messages") or [])
    views = list(result["views"])
    per_agent = {a: sum(1 for v in views if v["agent"] == a) for a in {v["agent"] for v in views}}
    made = {a: iter(calls.matched(f"main/{a}", a, n)) for a, n in per_agent.items()}  # each agent's calls, in order
    request, source = _request(result)
    orchestrator: list[ChatMessage] = [trace.say(trace.user(request, source=source))]

    def seen(view: dict[str, Any]) -> None:
        if view.get("visible_episodes") or view.get("context_chars"):
            trace.info(f"{view['agent']} · {view['step']}: what its mask let it see",
                       {"cortex episodes": view.get("visible_episodes"), "context characters": view.get("context_chars")})

    def keep(label: str) -> None:
        for episode in stored.get(label, []):
            trace.info(f"the cortex stores {episode.get('episode_id')} from {episode.get('source')}",
                       {k: episode.get(k) for k in ("access_mask", "visible_to", "summary", "ingest", "fallback_reason")
                        if episode.get(k) is not None})

    position = 0

    def delegation(index: int) -> None:
        nonlocal position
        done = delegations.get(index) or {}
        agent = str(done.get("agent"))
        with trace.span(f"{agent} · delegation {index}"):
            own: list[ChatMessage] = [trace.say(trace.user(str(done.get("instruction") or ""), agent=agent,
                                                           delegation=index))]
            while position < len(views) and views[position]["step"].startswith(f"d{index} "):
                view = views[position]
                position += 1
                seen(view)
                step = int(view["step"].rsplit(" ", 1)[-1])
                acted = app_calls.get((index, step), [])
                if agent == NOTIFIER_ID and step < int(done.get("steps") or 0):  # the record keeps what was sent
                    acted = [{"name": SEND_MESSAGE_TOOL_NAME, "arguments": {"content": text}, "result": "(sent to the user)"}
                             for text in [next(sent_to_user, None)] if text is not None]
                if acted:
                    wanted = [trace.tool_call(str(a["name"]), a.get("arguments")) for a in acted]
                    own.append(trace.say(trace.assistant("", wanted, agent=agent, step=view["step"]),
                                         call=next(made.get(agent, iter(())), None), context=list(own)))
                    own += [trace.tool(c, str(a.get("result")), ok=bool(a.get("ok", True))) for c, a in zip(wanted, acted)]
                else:
                    own.append(trace.say(trace.assistant(str(done.get("reply") or ""), agent=agent, step=view["step"]),
                                         call=next(made.get(agent, iter(())), None), context=list(own)))
                keep(view["step"])
        keep(f"delegation {index}")

    def made_by_step(at: int) -> list[int]:
        """The delegations an orchestrator step made: those whose steps come before its next step."""
        found: list[int] = []
        for view in views[at:]:
            if view["agent"] == ORCHESTRATOR_ID:
                break
            index = int(view["step"].split(" ", 1)[0][1:])
            found += [] if index in found else [index]
        return [i for i in found if i in delegations]

    with trace.span(ORCHESTRATOR_ID):
        while position < len(views):
            view = views[position]
            position += 1
            seen(view)
            made_here = made_by_step(position)
            if not made_here:  # no delegation: the step answered the user
                reply = trace.assistant(str(result.get("final_answer") or ""), agent=ORCHESTRATOR_ID, step=view["step"])
                orchestrator.append(trace.say(reply, call=next(made[ORCHESTRATOR_ID], None), context=list(orchestrator)))
                keep(view["step"])
                continue
            asked = [trace.tool_call(tool_of.get(str(delegations[i].get("agent")), "delegate"),
                                     {"instruction": delegations[i].get("instruction")}) for i in made_here]
            step = trace.assistant("", asked, agent=ORCHESTRATOR_ID, step=view["step"])
            orchestrator.append(trace.say(step, call=next(made[ORCHESTRATOR_ID], None), context=list(orchestrator)))
            keep(view["step"])
            for i, asked_call in zip(made_here, asked):
                delegation(i)
                answered = delegations[i].get("reply") or "(no reply: it stopped at its step limit)"
                orchestrator.append(trace.tool(asked_call, str(answered)))
    trace.info("what reached the app: the rides standing at the end", {"rides": result.get("rides") or []})
    if result.get("errors"):
        trace.info("what went wrong on the way", {"errors": result["errors"]})


# -- anything else ---------------------------------------------------------------------------------

def read_any(trace: Trace, record: dict[str, Any], calls: Calls, lines: dict[str, dict[str, Any]]) -> None:
    """The loader's reading of a result: its conversation and branches; a result with neither shows
    its text fields as the model's replies, in the order the result keeps them."""
    episode = Episode("", str(record.get("episode_id")), record)
    result = episode.result
    messages = episode.messages
    if not messages and not episode.branches:
        texts = [(k, v) for k, v in result.items() if isinstance(v, str) and v]
        made = iter(calls.matched("main", None, len(texts)))
        for name, text in texts:
            trace.say(trace.assistant(text, field=name), call=next(made, None), context=[])
        return
    replies = sum(1 for m in messages if m.get("role") == "assistant")
    dialogue = _said(trace, messages, calls.matched("main", None, replies))
    if episode.branches:
        anchor = trace.checkpoint()
        for n, branch in enumerate(episode.branches, 1):
            _branch(trace, anchor, dialogue, n, len(episode.branches), branch.name,
                    {"question": branch.question, "answer": branch.answer}, [], {})


READERS: tuple[tuple[Callable[[dict[str, Any]], bool], Reader], ...] = (
    (is_fork, read_fork), (is_acc, read_acc), (is_basis, read_basis))


def tell(trace: Trace, record: dict[str, Any], lines: dict[str, dict[str, Any]]) -> None:
    """Tell ``trace`` the episode of ``record`` (its score lines by scorer at hand); a failed
    episode has no result and tells nothing."""
    result = record.get("result")
    if not isinstance(result, dict):
        return
    calls = Calls(list(record.get("calls") or []))
    reader = next((read for matches, read in READERS if matches(result)), read_any)
    reader(trace, record, calls, lines)


def first_user_text(record: dict[str, Any], messages: list[ChatMessage]) -> str:
    """What the sample's input column shows: the first thing said to the model, else the spec."""
    said = next((m.text for m in messages if m.role == "user"), None)
    return said if said else json.dumps(record.get("spec") or {}, sort_keys=True)
