"""The simulated diagnosis host (psit_lib.sim.roles.diagnosis) on the real agent graphs.

What must hold (SPEC §1 diagnosis, §8): episodes complete for the four PSIT agents; a host
that holds its condition in private context answers every question by rule R; a host that
holds none re-imagines a condition compatible with its own public answers; and the reply is a
function of the request alone, so removing the memory block is what turns "held" into
"re-imagined".
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.studies.psit.agents.config import PSIT_AGENTS
from psit_lib.studies.psit.agents.prompts import memory_block, private_reasoning_block
from psit_lib.studies.psit.protocol.outcomes import Outcome
from psit_lib.runs.backend import make_client
from psit_lib.llm.client import ModelSession
from psit_lib.llm.settings import LLMSettings
from psit_lib.studies.psit.memory.working_memory import extract_secret, initial_memory
from psit_lib.llm.reply_readers import read_yes_no
from psit_lib.studies.psit.protocol.candidates import candidate_request, parse_string_array
from psit_lib.studies.psit.protocol.fork_test import ForkSettings, run_fork_episode
from psit_lib.sim import SimProfile, complete, get_profile
from psit_lib.sim.context import SimContext
from psit_lib.sim.roles.diagnosis import (
    OUTSIDE_CONDITIONS,
    DiagnosisGame,
    answer_forms,
    condition_prior,
    propose_conditions,
    short_answer,
)
from psit_lib.sim.knowledge.ddxplus import medical_knowledge
from psit_lib.sim.request_reading import secret_statements
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisState, DiagnosisTask, answers_yes, is_consistent
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from psit_lib.studies.psit.protocol.records import ForkEpisode

TASK = DiagnosisTask()
GAME = DiagnosisGame()
NAMES = list(TASK.dataset.condition_names)
BINARY = [e.code for e in TASK.dataset.binary_evidences]
EPISODES_PER_AGENT = 3


# ----- helpers ------------------------------------------------------------------------------

def secret_from_reasoning(text: str) -> str | None:
    """The first secret the simulated model stated in its reasoning."""
    found = secret_statements(text or "")
    return found[0] if found else None


def host(messages, *, seed=1, temperature=0.3, profile="default"):
    """The diagnosis host's reply message to a chat request."""
    body = {"model": "psit-sim", "messages": messages, "seed": seed, "temperature": temperature}
    return complete(body, "diagnosis_host", profile)["choices"][0]["message"]


def ctx_for(messages, *, profile: SimProfile | None = None, seed=0, temperature=0.3) -> SimContext:
    return SimContext(role="diagnosis_host", profile=profile or get_profile("default"), messages=messages,
                      tools=[], temperature=temperature,
                      response_format=None, rng=random.Random(seed))


def question(code: str, number: int = 1) -> str:
    return f"Question {number}: {TASK.question_for(code)} Please answer yes or no."


def game_messages(system: str, answered: list[tuple[str, str]], last_user: str) -> list[dict]:
    """System prompt, opener, 'ready', then (question, reply) pairs and a final user message."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": TASK.opener()},
                {"role": "assistant", "content": "Ready."}]
    for i, (code, reply) in enumerate(answered, 1):
        messages += [{"role": "user", "content": question(code, i)}, {"role": "assistant", "content": reply}]
    return messages + [{"role": "user", "content": last_user}]


def public_answers(transcript: list[dict]) -> list[tuple[str, bool | None]]:
    """(evidence code, parsed host answer) for every question in a public transcript."""
    pairs = []
    for asked, answer in zip(transcript[2::2], transcript[3::2]):
        code = max((c for c, e in TASK.dataset.evidences.items() if e.is_binary and e.question_en in asked["content"]),
                   key=lambda c: len(TASK.dataset.evidences[c].question_en), default=None)
        assert code is not None and answer["role"] == "assistant"
        pairs.append((code, read_yes_no(answer["content"]).value))
    return pairs


def held_condition(record: dict) -> str | None:
    private = record["private_state_at_fork"]
    secret = extract_secret(private) if "## 2." in private else secret_from_reasoning(private)
    return TASK.normalise(secret) if secret else None


@pytest.fixture(scope="module")
def episodes() -> dict[str, list[dict]]:
    """A few fork episodes per agent on the real graphs and the in-process simulator."""
    async def run_all():
        client = make_client(LLMSettings(cache="off"))
        try:
            return {agent: [(await run_fork_episode(
                        TASK, agent, ModelSession(client, run_seed=0, episode_id=f"sim-dx/{agent}/{i}"),
                        ForkSettings())).model_dump(mode="json")
                     for i in range(EPISODES_PER_AGENT)] for agent in PSIT_AGENTS}
        finally:
            await client.aclose()
    return asyncio.run(run_all())


# ----- end to end ---------------------------------------------------------------------------

@pytest.mark.parametrize("agent", PSIT_AGENTS)
def test_episodes_complete_for_every_agent(episodes, agent):
    for record in episodes[agent]:
        assert fork_outcome(ForkEpisode.model_validate(record)).value in {o.value for o in Outcome} - {"unparseable", "error"}, record.get("failure")
        assert record["turns_played"] == ForkSettings().t_fork - 1 and record["reveal"]["compatible"]  # opener is turn 1
        assert [c["source"] for c in record["candidates"]][0] == "revealed"
        assert len(record["candidates"]) == 5 and all(c["parsed"] is not None for c in record["candidates"])
        assert all(yes is not None for _, yes in public_answers(record["transcript"]))


def test_held_condition_answers_every_public_question_by_rule_r(episodes):
    checked = 0
    for agent in ("private_cot", "workflow_overwrite", "autonomous_overwrite"):
        for record in episodes[agent]:
            secret = held_condition(record)
            if secret is None:
                continue
            condition = TASK.dataset.condition(secret)
            for code, yes in public_answers(record["transcript"]):
                assert yes == answers_yes(condition, code), (agent, secret, code)
            assert record["reveal"]["parsed"] == secret
            assert [c["parsed"] for c in record["candidates"]] == [c["secret"] == secret for c in record["candidates"]]
            checked += 1
    assert checked >= 6


def test_vanilla_holds_nothing_and_reveals_a_condition_compatible_with_its_answers(episodes):
    for record in episodes["vanilla"]:
        assert record["private_state_at_fork"] == ""
        revealed = TASK.dataset.condition(record["reveal"]["parsed"])
        assert is_consistent(revealed, tuple(public_answers(record["transcript"])))


# ----- information flow ---------------------------------------------------------------------

def _rarest_evidence_of(name: str) -> str:
    """An evidence the condition has that few others share (so re-imagining usually says no)."""
    holders = Counter(code for c in TASK.dataset.conditions for code in c.evidences)
    return min((code for code in TASK.dataset.condition(name).evidences if code in BINARY),
               key=lambda code: holders[code])


def test_same_request_same_reply_and_seeds_vary_a_reimagined_choice():
    messages = game_messages(TASK.host_system_prompt(), [], TASK.reveal_prompt())
    assert host(messages, seed=5) == host(messages, seed=5)
    assert len({host(messages, seed=s)["content"] for s in range(30)}) >= 5


@pytest.mark.parametrize("private", ["memory", "reasoning"])
def test_removing_the_private_block_turns_held_into_reimagined(private):
    secret = "Croup"
    block = (memory_block(initial_memory(secret), autonomous=False) if private == "memory"
             else private_reasoning_block([f"I need to choose a secret privately. My secret is '{secret}'."]))
    probe = _rarest_evidence_of(secret)
    held_system = TASK.host_system_prompt() + "\n\n" + block
    bare_system = TASK.host_system_prompt()
    truth = answers_yes(TASK.dataset.condition(secret), probe)

    held_answers, bare_answers, held_reveals, bare_reveals = [], [], [], []
    for seed in range(30):
        held = host(game_messages(held_system, [], question(probe)), seed=seed)
        bare = host(game_messages(bare_system, [], question(probe)), seed=seed)
        assert "already chose" in held["reasoning_content"] and "no record" in bare["reasoning_content"]
        held_answers.append(read_yes_no(held["content"]).value)
        bare_answers.append(read_yes_no(bare["content"]).value)
        held_reveals.append(host(game_messages(held_system, [], TASK.reveal_prompt()), seed=seed)["content"])
        bare_reveals.append(host(game_messages(bare_system, [], TASK.reveal_prompt()), seed=seed)["content"])
    assert set(held_answers) == {truth} and set(held_reveals) == {secret}
    assert truth not in set(bare_answers) or len(set(bare_answers)) == 2
    assert len(set(bare_reveals)) >= 5


def test_reimagined_reveal_fits_the_hosts_own_public_answers():
    truth = TASK.dataset.condition("Pneumonia")
    codes = sorted(truth.evidences & set(BINARY))[:2] + ["E_53", "E_159"]
    answered = [(c, "Yes." if answers_yes(truth, c) else "No.") for c in codes]
    state = tuple((c, answers_yes(truth, c)) for c in codes)
    for seed in range(25):
        reply = host(game_messages(TASK.host_system_prompt(), answered, TASK.reveal_prompt()), seed=seed)
        assert is_consistent(TASK.dataset.condition(reply["content"]), state)


# ----- the game's parts ---------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(NAMES), code=st.sampled_from(BINARY), seed=st.integers(0, 10_000))
def test_a_held_condition_answers_by_rule_r(name, code, seed):
    system = TASK.host_system_prompt() + "\n\n" + memory_block(initial_memory(name), autonomous=False)
    reply = host(game_messages(system, [], question(code)), seed=seed)
    assert read_yes_no(reply["content"]).value == answers_yes(TASK.dataset.condition(name), code)


@given(code=st.sampled_from(BINARY), yes=st.booleans(), variant=st.integers(0, 20))
def test_every_phrasing_parses_back(code, yes, variant):
    text = TASK.question_for(code)
    assert read_yes_no(short_answer(text, yes, variant)).value is yes
    assert len(answer_forms(text)) in (2, 3)


def test_malformed_reply_carries_no_decision():
    assert read_yes_no(GAME.malformed_reply(ctx_for([]))).value is None


@given(name=st.sampled_from(NAMES), code=st.sampled_from(BINARY))
def test_intent_follows_the_tasks_own_wording(name, code):
    assert GAME.intent(TASK.opener(), first_turn=True).kind == "open"
    assert GAME.intent(question(code, 3), first_turn=False).kind == "move"
    assert GAME.intent(TASK.reveal_prompt(), first_turn=False).kind == "reveal"
    confirm = GAME.intent(TASK.confirm_prompt(name), first_turn=False)
    assert confirm.kind == "confirm" and GAME.same_secret(confirm.candidate, name)
    assert GAME.intent(f"Is your condition '{name}'?", first_turn=False).candidate == name
    assert GAME.intent("How are you today?", first_turn=False).kind == "other"


def test_public_state_reads_the_hosts_own_readable_answers():
    a, b, c = BINARY[:3]
    messages = game_messages("sys", [(a, "Yes, I do."), (b, "Hmm, let me think..."), (c, "No.")], question(BINARY[3]))
    assert GAME.public_state(ctx_for(messages)) == [(a, True), (c, False)]


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), codes=st.lists(st.sampled_from(BINARY), max_size=8, unique=True),
       seed=st.integers(0, 1000))
def test_reimagined_condition_is_compatible(name, codes, seed):
    truth = TASK.dataset.condition(name)
    state = DiagnosisState(tuple((code, answers_yes(truth, code)) for code in codes))
    picked = GAME.reimagine(ctx_for([], seed=seed), list(state.answers))
    assert is_consistent(TASK.dataset.condition(picked), state.answers)


def test_prior_is_not_uniform_and_low_temperature_collapses_onto_its_mode():
    prior = condition_prior(medical_knowledge())
    mode = max(prior, key=prior.get)
    assert set(prior) == set(NAMES) and max(prior.values()) >= 10 * min(prior.values())

    def opening_choices(temperature):
        messages = [{"role": "system", "content": TASK.host_system_prompt()},
                    {"role": "user", "content": TASK.opener()}]
        return Counter(secret_from_reasoning(host(messages, seed=s, temperature=temperature)["reasoning_content"])
                       for s in range(60))

    cold, warm = opening_choices(0.02), opening_choices(1.0)
    assert cold.most_common(1)[0] == (mode, cold[mode]) and cold[mode] >= 30
    assert len(warm) >= 25 and warm.most_common(1)[0][1] <= 8


# ----- candidate generator ------------------------------------------------------------------

def test_outside_conditions_are_not_dataset_names():
    assert not any(TASK.is_checkable(name) for name in OUTSIDE_CONDITIONS)


def _pneumonia_like_state(n_answers: int = 4) -> DiagnosisState:
    truth = TASK.dataset.condition("Pneumonia")
    return DiagnosisState(tuple((code, answers_yes(truth, code)) for code in BINARY[:n_answers]))


def test_candidate_generator_proposes_fitting_conditions_then_outside_ones():
    state = _pneumonia_like_state()
    compatible = [c.name for c in TASK.compatible_conditions(state)]
    assert len(compatible) >= 3
    request = candidate_request(TASK, TASK.public_constraints(state), 6, compatible[:1])
    exact = SimProfile(name="exact", description="test", edit_error_rate=0.0)
    proposals = propose_conditions(ctx_for(request, profile=exact), {"task": "diagnosis",
                                   **TASK.public_constraints(state)}, 6)
    inside = [p for p in proposals if TASK.is_checkable(p)]
    assert len(proposals) == 6 and len(set(proposals)) == 6
    assert set(inside) == set(compatible[1:])  # every fitting, non-excluded dataset condition, first
    assert proposals[:len(inside)] == inside and set(proposals[len(inside):]) <= set(OUTSIDE_CONDITIONS)

    body = {"model": "psit-sim", "seed": 3, "temperature": 0.3, "messages": request}
    via_role = parse_string_array(complete(body, "candidate_generator", "default")["choices"][0]["message"]["content"])
    assert len(via_role) == 6 and compatible[0] not in via_role


def test_an_erring_generator_slips_in_one_contradicting_condition():
    state = _pneumonia_like_state()
    constraints = {"task": "diagnosis", **json.loads(json.dumps(TASK.public_constraints(state)))}
    erring = SimProfile(name="erring", description="test", edit_error_rate=1.0)
    proposals = propose_conditions(ctx_for([], profile=erring), constraints, 5)
    refuted = [p for p in proposals if not TASK.is_compatible(state, p)]
    assert len(proposals) == 5 and len(refuted) == 1 and TASK.is_checkable(refuted[0])
    assert propose_conditions(ctx_for([]), {"task": "diagnosis"}, 5) == []
