"""Output formats real models write (simulator ``output_format``): each reaches the wire as
described, the harness reads it, and every study's key table stays within sampling noise of
the plain format (identical where the harness reads the format back to the same thing)."""

from __future__ import annotations

import asyncio
import json
import random
from typing import get_args

import pandas as pd
import pytest

from psit_lib.analysis.sweeps import proportion_gap
from psit_lib.llm import LLMSettings
from psit_lib.llm.reply_readers import read_json_object, read_json_value, read_yes_no, split_reasoning
from psit_lib.studies.psit.memory.patch import patch_memory
from psit_lib.runs import RunStore, make_client, run_episodes
from psit_lib.runs.records import read_records
from psit_lib.sim.engine import complete
from psit_lib.sim.formats import OutputFormat, restyle
from psit_lib.studies.acc.experiment import AccParams, make_specs as acc_specs, run_acc_episode
from psit_lib.studies.acc.judge import parse_evaluations
from psit_lib.studies.acc.judge import CRITERIA
from psit_lib.studies.acc.summary import summary_table
from psit_lib.studies.acc.records import AccEpisode
from psit_lib.studies.basis.experiment import BasisParams, make_specs as basis_specs, run_basis_trial
from psit_lib.studies.basis.records import BasisTrial
from basis_trials import trials_frame
from fork_rows import fork_rows
from psit_lib.studies.psit.agents.tool_json import parse_tool_calls_json
from psit_lib.studies.psit.protocol.experiment import (ForkTestParams, fork_episode_fn,
                                                        plan_fork_episodes)
from psit_lib.studies.psit.protocol.records import ForkEpisode
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.studies.psit.tasks.hangman_reader import read_reveal

pytestmark = pytest.mark.slow  # runs whole notebooks or studies (the fast tier: -m 'not slow')

FORMATS = [f for f in get_args(OutputFormat) if f != "plain"]
# Formats the harness reads back to exactly what the plain format gives: tables are identical.
READ_BACK_EXACTLY = {"inline_think", "reasoning_field", "fenced_json", "string_numbers"}

HOST_MESSAGE = {"role": "assistant", "content": "No.", "reasoning_content": "My secret is 'planet'."}


# -- the format layer on its own ---------------------------------------------------------------
def test_plain_leaves_the_message_alone_and_formats_do_what_they_say():
    rng = random.Random(0)
    assert restyle(HOST_MESSAGE, "plain", rng) == HOST_MESSAGE
    inline = restyle(HOST_MESSAGE, "inline_think", rng)
    assert "reasoning_content" not in inline and inline["content"].startswith("<think>")
    assert split_reasoning(inline["content"]) == ("No.", "My secret is 'planet'.")
    field = restyle(HOST_MESSAGE, "reasoning_field", rng)
    assert field["reasoning"] == "My secret is 'planet'." and "reasoning_content" not in field
    assert restyle(HOST_MESSAGE, "markdown", rng)["content"] == "**No.**"
    chatty = restyle(HOST_MESSAGE, "chatty", rng)["content"]
    assert chatty.startswith(("No.", "Hmm", "Good", "I shouldn't")) and "\n\n" in chatty


def test_json_replies_are_fenced_with_prose_and_tool_numbers_become_strings():
    payload = [{"name": "append_in_memory", "arguments": {"section_title": "Facts", "lines": ["x"]}}]
    fenced = restyle({"role": "assistant", "content": json.dumps(payload)}, "fenced_json", random.Random(1))
    assert fenced["content"].startswith("```json") and not fenced["content"].endswith("```")
    assert read_json_value(fenced["content"]) == payload
    assert parse_tool_calls_json(fenced["content"]) == [("append_in_memory", payload[0]["arguments"])]
    call = {"id": "c", "type": "function", "function": {"name": "patch_memory", "arguments": json.dumps(
        {"patch": "p", "expected_hunks": 2, "strict": True})}}
    out = restyle({"role": "assistant", "content": "", "tool_calls": [call]}, "string_numbers", random.Random(0))
    assert json.loads(out["tool_calls"][0]["function"]["arguments"]) == {"patch": "p", "expected_hunks": "2", "strict": True}


def test_the_format_layer_never_moves_the_roles_random_draws():
    """A format is a knob override of the default profile, so the role draws the same numbers:
    under inline_think the reply is the plain reply with its reasoning moved inline."""
    body = {"model": "psit-sim", "seed": 11, "messages": [
        {"role": "user", "content": HangmanTask().opener()}]}
    plain = complete(body, None, "default")["choices"][0]["message"]
    inline = complete(body, None, "default,output_format=inline_think")["choices"][0]["message"]
    public, reasoning = split_reasoning(inline["content"])
    assert public == plain["content"] and reasoning == plain["reasoning_content"]


# -- readers on what each format writes ----------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("**Yes.**", True), ("**No.**\n\nHope that helps.", False), ("No.\n\nAnything else I can do?", False),
    ("Hmm, let me check my notes... No.", None), ("Good question! Let me think. Yes.", None),
    ("I shouldn't give too much away, but... yes.", None),
    ("<think>\nMy secret is 'cold'.\n</think>\n\nNo.", False),
])
def test_yes_no_reader_on_each_format(text, expected):
    assert read_yes_no(text).value is expected


@pytest.mark.parametrize("text, word", [
    ("**planet**", "planet"), ("planet\n\nHope that helps.", "planet"),
    ("<think>\nIt is 'planet'.\n</think>\n\nplanet", "planet"), ("Sure!\n\nplanet", None),
])
def test_reveal_reader_on_each_format(text, word):
    assert read_reveal(text).value == word


def test_judge_reader_takes_half_points_response_labels_and_fences():
    reply = {"evaluations": [{"label": "Response A", "relevance": 7.5, "answer_quality": "8",
                              "instruction_following": 9, "coherence": 10, "supported_claims": 2,
                              "unsupported_claims": 0, "active_constraints": 1, "violations": 0,
                              "omitted_required": 0}]}
    text = f"```json\n{json.dumps(reply)}\n```\nThis follows the requested format."
    ev = parse_evaluations(text, ["A"])["A"]
    assert ev.relevance == 7.5 and ev.answer_quality == 8
    assert read_json_object(text) == reply


def test_a_bulleted_patch_line_replaces_the_bulleted_memory_line():
    memory = "## 1. Goals and Plans\n## 2. Facts and Knowledge\n## 3. Active Notes\n- After my last reply: old\n"
    patch = ("*** Begin Patch\n*** Update Memory\n@@ section: Active Notes\n"
             "-After my last reply: old\n+After my last reply: new\n*** End Patch")
    result = patch_memory(memory, patch, "replace my note")
    assert "- After my last reply: new" in result.new_memory and "old" not in result.new_memory


# -- every study's key table under each format ------------------------------------------------------
def _client(fmt: str):
    return make_client(LLMSettings.from_env().model_copy(
        update={"backend": "sim", "model": f"psit-sim:default,output_format={fmt}"}))


async def _run(specs, episode_fn, fmt: str, tmp_path, name: str):
    client = _client(fmt)
    raw = await run_episodes(specs, episode_fn, store=RunStore(tmp_path / f"{name}-{fmt}"), client=client,
                             run_seed=0, concurrency=8, progress=False)
    await client.aclose()
    return raw


async def _fork_table(fmt: str, tmp_path) -> pd.DataFrame:
    task = HangmanTask()
    params = ForkTestParams(agents=["vanilla", "private_cot", "workflow_overwrite", "workflow_patch_replace",
                                    "autonomous_patch_replace"], n_episodes=6)
    raw = await _run(plan_fork_episodes(task, params, ["psit-sim"]), fork_episode_fn(task, params), fmt, tmp_path, "fork")
    return fork_rows(read_records(raw, ForkEpisode))


async def _acc_table(fmt: str, tmp_path) -> pd.DataFrame:
    from acc_turns import judged_turns

    raw = await _run(acc_specs(AccParams(n_turns=8)), run_acc_episode, fmt, tmp_path, "acc")
    client = _client(fmt)  # the judge reads and writes the same format
    turns = await judged_turns(read_records(raw, AccEpisode), client)
    await client.aclose()
    ok = turns[turns["status"] == "ok"]
    key = ok.groupby("agent", observed=True).agg(scored_turns=("turn", "size"), **{c: (c, "mean") for c in CRITERIA})
    key["ccs_failures"] = (turns["ccs_valid"] == False).groupby(turns["agent"], observed=True).sum()  # noqa: E712
    return key.join(summary_table(turns).pivot(index="agent", columns="symbol", values="mean"))


async def _basis_trials(fmt: str, tmp_path) -> pd.DataFrame:
    raw = await _run(basis_specs(BasisParams(n_trials=4, reference_sets=0)), run_basis_trial, fmt, tmp_path, "basis")
    return trials_frame(read_records(raw, BasisTrial))


@pytest.fixture(scope="module")
def plain_tables(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plain")

    async def all_three():
        return await _fork_table("plain", tmp), await _acc_table("plain", tmp), await _basis_trials("plain", tmp)
    return asyncio.run(all_three())


def _within_noise(a: pd.DataFrame, b: pd.DataFrame, group: str, flag: str) -> list[str]:
    """Groups whose success rates differ beyond a 99% Newcombe interval."""
    bad = []
    for name in a[group].unique():
        x, y = a[a[group] == name][flag], b[b[group] == name][flag]
        _, low, high = proportion_gap(int(x.sum()), len(x), int(y.sum()), len(y), alpha=0.01)
        if not low <= 0 <= high:
            bad.append(f"{name}: {x.mean():.2f} vs {y.mean():.2f}")
    return bad


@pytest.mark.parametrize("fmt", FORMATS)
async def test_key_tables_under_each_format_stay_within_noise_of_plain(fmt, plain_tables, tmp_path):
    fork_plain, acc_plain, basis_plain = plain_tables
    fork, acc, basis = await _fork_table(fmt, tmp_path), await _acc_table(fmt, tmp_path), await _basis_trials(fmt, tmp_path)
    # Nothing fails: every episode is scored, under every format.
    assert fork["scored"].all() and acc["scored_turns"].min() > 0 and basis["scored"].all()
    assert (acc["ccs_failures"] == 0).all()
    if fmt in READ_BACK_EXACTLY:
        assert fork[["episode_id", "outcome", "revealed"]].equals(fork_plain[["episode_id", "outcome", "revealed"]])
        assert basis[["scenario", "system", "trial", "success"]].equals(basis_plain[["scenario", "system", "trial", "success"]])
        assert acc[["H_u", "D_r"]].equals(acc_plain[["H_u", "D_r"]])
        return
    assert _within_noise(fork, fork_plain, "agent", "self_consistent") == []
    assert _within_noise(basis, basis_plain, "system", "success") == []
    # ACC (8 turns x 3 domains): a different transcript moves the agents' guesses and the judge's
    # jitter; a broken reader would zero scores or fail turns, far outside these bounds.
    assert (acc[["H_u", "D_r"]] - acc_plain[["H_u", "D_r"]]).abs().max().max() <= 0.2
    assert (acc[["relevance", "answer_quality", "instruction_following", "coherence"]]
            - acc_plain[["relevance", "answer_quality", "instruction_following", "coherence"]]).abs().max().max() <= 1.5
