"""Per-episode scoring of the ACC study: the live judge and its variants re-run over a stored episode on
the live judge's requests and seeds, so a recorded run's calls replay from the response cache.
"""

from __future__ import annotations

import json
from typing import Any

from psit_lib.llm.tokens import count_tokens
from psit_lib.studies.acc.agents import agent_rank
from psit_lib.studies.acc.ccs import CCS, compact_ccs, render_ccs
from psit_lib.studies.acc.judge import CRITERIA, JUDGE_VARIANTS, CanonicalMemory, JudgeOutputError, LiveJudge, rejudge_turn
from psit_lib.studies.acc.records import AccEpisode

JUDGE_BRANCH = "judge"
"""The session branch the judge's calls go on (the live judge's, so seeds match generation)."""


async def judge_episode(session: Any, episode: AccEpisode, *, seed: int,
                        answer_chars: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The live judge over a stored episode's turns: (rows, canonical memory after each turn);
    ``session`` is the episode's own, ``seed`` the scenario seed (the order RNG)."""
    judge = LiveJudge(session.branch(JUDGE_BRANCH), seed=seed, answer_chars=answer_chars)
    rows: list[dict[str, Any]] = []
    memories: list[dict[str, Any]] = []
    for t in episode.turns:
        rows += await judge.judge_turn(t.turn, t.query, {name: t.agents[name].answer
                                                         for name in sorted(t.agents, key=agent_rank)})
        memories.append({"turn": t.turn, "memory": judge.memory.model_dump()})
    return rows, memories


async def rejudge_episode(session: Any, episode: AccEpisode, variant: str, memories: list[dict[str, Any]], *,
                          answer_chars: int) -> list[dict[str, Any]]:
    """Every turn of a stored episode scored under judge ``variant`` from the canonical memory the
    judge held at that turn (``memories``, as :func:`judge_episode` returns them): per (turn,
    agent) the four criteria on 0-10, or one row with the turn's error and no agent."""
    if variant not in JUDGE_VARIANTS:
        raise ValueError(f"unknown judge variant {variant!r}; choose from {list(JUDGE_VARIANTS)}")
    # the memory as a run folder stores it (keys sorted), whatever order the judge built it in:
    # the variant's request, and so its seeded reply, does not depend on where the memory came from
    by_turn = {int(m["turn"]): json.loads(json.dumps(m["memory"], sort_keys=True)) for m in memories}
    rows: list[dict[str, Any]] = []
    for t in episode.turns:
        memory = CanonicalMemory.model_validate(by_turn.get(t.turn, {}))
        answers = {name: a.answer for name, a in t.agents.items()}
        try:
            scored = await rejudge_turn(session.branch(f"t{t.turn}"), JUDGE_VARIANTS[variant], memory, t.query,
                                        answers, seed=episode.scenario_seed + t.turn, answer_chars=answer_chars)
        except JudgeOutputError as exc:
            rows.append({"turn": t.turn, "agent": None, "error": str(exc)})
            continue
        rows += [{"turn": t.turn, "agent": name, "error": None, **{c: ev[c] for c in CRITERIA}}
                 for name, ev in scored.items()]
    return rows


def answer_rows(episode: AccEpisode) -> list[dict[str, Any]]:
    """One row per (turn, agent) of what the episode recorded (no verdict): topic, footprint and
    whether the ACC's committed state was valid; agents in the order the record keeps them."""
    return [{"turn": t.turn, "topic": t.topic, "agent": name, "footprint_tokens": answer.footprint_tokens,
             "ccs_valid": answer.details.get("ccs_valid")}
            for t in episode.turns for name, answer in t.agents.items()]


def ccs_form_rows(episode: AccEpisode) -> list[dict[str, Any]]:
    """Tokens of the ACC's committed CCS per turn in three serialisations: the labelled lines the
    agent reads (the footprint reported), the compact token-oriented form of the paper's Figure 3
    and compact JSON; re-serialised from the stored state, no model call."""
    rows = []
    for t in episode.turns:
        acc = t.agents.get("acc")
        if acc is None or not acc.details.get("ccs"):
            continue
        ccs = CCS.model_validate(acc.details["ccs"])
        rows.append({"turn": t.turn, "rendered_tokens": count_tokens(render_ccs(ccs)),
                     "compact_tokens": count_tokens(compact_ccs(ccs)), "json_tokens": count_tokens(ccs.to_json())})
    return rows
