"""The BASIS multi-agent system on the real CabApp graph, its simulated roles and its tables."""

from __future__ import annotations

import json
import random

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.studies.basis.system import BasisLimits, CabMultiAgentSystem
from psit_lib.runs.records import read_records
from psit_lib.studies.basis.records import BasisTrial
from psit_lib.studies.basis.reference import reference_success
from psit_lib.studies.basis.experiment import BasisParams, app_seed, make_specs, run_basis_trial
from psit_lib.studies.basis.prompts import DELEGATE_TOOL, NOTIFIER_ID, ORCHESTRATOR_ID, SUBAGENT_ID
from psit_lib.studies.basis.results import (
    MEAN_ROW,
    REFERENCE,
    passk_frame,
    success_table,
)
from psit_lib.studies.basis.passk import pass_at_k, pass_hat_k
from psit_lib.analysis.stats import wilson_interval
from psit_lib.runs.backend import make_client
from psit_lib.llm import ChatResult, LLMSettings, ModelSession, ToolCall
from psit_lib.studies.basis.cortex import CONTEXT_TAG, INGEST_TOOL, AgentRegistry, CortexInputError, parse_ingest_call
from psit_lib.runs.params import ParameterError, validate_params
from psit_lib.runs.runner import EpisodeSpec
from psit_lib.sim import profiles as sim_profiles
from psit_lib.sim.context import SimContext
from psit_lib.sim.roles import basis as sim_basis
from psit_lib.studies.basis.cab_app import CAB_TOOL_NAMES, make_cab_app
from psit_lib.studies.basis.scenarios import SCENARIOS
from basis_trials import trials_frame
from recording import CapturingSession

OPEN_TAG = f"<{CONTEXT_TAG}>"


def session(episode_id: str, seed: int = 0) -> ModelSession:
    return ModelSession(make_client(LLMSettings(cache="off")), run_seed=seed, episode_id=episode_id)


async def run_system(scenario: str, system: str, trial: int = 0, override=None, limits: BasisLimits | None = None):
    sent: list = []
    wrapped = CapturingSession(session(f"{scenario}/{system}/{trial}"), sent, override)
    app = make_cab_app(app_seed(0, scenario, trial))
    mas = CabMultiAgentSystem(SCENARIOS[scenario], app, wrapped, system=system, limits=limits or BasisLimits())
    run = await mas.run()
    return mas, run, app, sent


def system_text(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


def everything_sent(request: dict) -> str:
    return json.dumps(request["messages"])


@pytest.fixture
def exact_cortex(monkeypatch):
    """The default profile with a cortex that never botches a mask, for assertions on visibility."""
    profile = sim_profiles.PROFILES["default"].model_copy(update={"mask_error_rate": 0.0})
    monkeypatch.setitem(sim_profiles.PROFILES, "default", profile)


# --------------------------------------------------------------------------- information flow


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_baseline_orchestrator_never_receives_cortex_context(scenario):
    for trial in range(3):
        _, run, _, sent = await run_system(scenario, "baseline", trial)
        assert {r["role"] for r in sent} == {ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID}  # no cortex calls at all
        orchestrator = [r for r in sent if r["role"] == ORCHESTRATOR_ID]
        assert len(orchestrator) >= 2  # it did get the subagent's reply back
        assert all(CONTEXT_TAG not in everything_sent(r) for r in sent)
        assert run.episodes == [] and all(not v.visible_episodes for v in run.views)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_basis_orchestrator_receives_the_subagents_steps(scenario, exact_cortex):
    _, run, _, sent = await run_system(scenario, "basis")
    orchestrator = [r for r in sent if r["role"] == ORCHESTRATOR_ID]
    assert OPEN_TAG not in system_text(orchestrator[0])  # nothing stored before the first step
    later = [system_text(r) for r in orchestrator[1:]]
    assert later and all(OPEN_TAG in text for text in later)
    assert all(f"from {SUBAGENT_ID}:" in text for text in later)
    # the block sits in the system prompt, nowhere else
    for r in orchestrator:
        assert all(CONTEXT_TAG not in json.dumps(m) for m in r["messages"] if m["role"] != "system")
    assert {r["role"] for r in sent} == {ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID, "cortex_agent"}


async def test_basis_context_shows_what_the_subagent_really_did(exact_cortex):
    """stale_locations: the subagent's reply hides the swap; only the cortex context shows it."""
    for trial in range(10):
        _, run, _, sent = await run_system("stale_locations", "basis", trial)
        first = run.delegations[0]
        if "start_location=" in first.instruction:
            continue  # explicit delegation, nothing swapped
        assert "Airport" not in (first.reply or "") and "Downtown" not in (first.reply or "")
        second = [r for r in sent if r["role"] == ORCHESTRATOR_ID][1]
        assert "ride from Airport to Downtown" in system_text(second)
        return
    pytest.fail("no implicit first delegation in 10 trials")


async def test_every_agent_step_becomes_exactly_one_episode():
    _, run, _, sent = await run_system("quote_only_vs_book", "basis", trial=1)
    agent_steps = [r for r in sent if r["role"] != "cortex_agent"]
    cortex_calls = [r for r in sent if r["role"] == "cortex_agent"]
    assert len(run.episodes) == len(cortex_calls) == len(agent_steps) + len(run.delegations)
    assert len(run.views) == len(agent_steps)
    kinds = [ep.metadata["kind"] for ep in run.episodes]
    assert kinds.count("delegation") == len(run.delegations)
    for i, ep in enumerate(run.episodes):  # the cortex saw at most 4 earlier episodes, all from the same agent
        window = ep.metadata["cortex_window"]
        own = [e.episode_id for e in run.episodes[:i] if e.source_agent_id == ep.source_agent_id]
        assert window == own[-4:]


REVEALING = {"premium_bias": (), "quote_only_vs_book": ("book",), "stale_locations": ("Airport", "Downtown")}
SERVICE_TYPES = ("Default", "Premium", "Van")


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_subagent_replies_never_mention_policy_or_tool_calls(scenario):
    """No tool name, argument name or route in a reply; the booked service type only when the
    instruction asked which service type was booked (the user's request, relayed)."""
    words = (*CAB_TOOL_NAMES, "service_type", "start_location", "end_location", *REVEALING[scenario])
    for trial in range(6):
        _, run, _, _ = await run_system(scenario, "baseline", trial)
        cab = [d for d in run.delegations if d.agent == SUBAGENT_ID]
        assert all(not any(w in (d.reply or "") for w in words) for d in cab)
        for d in cab:
            if "Booked:" in (d.reply or ""):
                assert "which service type" in d.instruction and any(k in (d.reply or "") for k in SERVICE_TYPES)


# --------------------------------------------------------------------------- cortex failures


def scripted_cortex(arguments: str | None):
    def answer(role: str):
        if role != "cortex_agent":
            return None
        calls = () if arguments is None else (ToolCall("call_x", "ingest_episode", arguments),)
        return ChatResult(content="stored", tool_calls=calls)

    return answer


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (json.dumps({"summary": "s", "access_mask": "2"}), "not binary"),
        (json.dumps({"summary": "s", "access_mask": "1111"}), "beyond the 3 registered"),
        (json.dumps({"summary": "s", "access_mask": "000"}), "all zeros"),
        ('{"summary": "s", "access_mask": ', "not valid JSON"),
        (None, "no ingest_episode call"),
    ],
)
async def test_malformed_ingest_is_recorded_and_falls_back_to_the_source_only(arguments, reason):
    mas, run, app, _ = await run_system("premium_bias", "basis", override=scripted_cortex(arguments))
    assert run.final_answer  # the run went on to the end
    assert run.episodes and all(ep.metadata["ingest"] == "fallback" for ep in run.episodes)
    assert all(reason in ep.metadata["fallback_reason"] for ep in run.episodes)
    assert all(ep.access_mask == mas.registry.mask_of(ep.source_agent_id) for ep in run.episodes)
    assert all(ep.summary for ep in run.episodes)  # the documented fallback summary
    # failing closed: the orchestrator never sees a subagent step
    for view in run.views:
        if view.agent == ORCHESTRATOR_ID:
            seen = {ep.source_agent_id for ep in run.episodes if ep.episode_id in view.visible_episodes}
            assert seen <= {ORCHESTRATOR_ID}
    if arguments is not None and "access_mask" in arguments and arguments.endswith("}"):
        assert run.episodes[0].metadata["mask_text"] == json.loads(arguments)["access_mask"]


def sim_ctx(role: str, messages: list, tools: list, profile: str = "default", seed: int = 0, **knobs) -> SimContext:
    prof = sim_profiles.get_profile(profile).model_copy(update=knobs)
    return SimContext(role=role, profile=prof, messages=messages, tools=tools, temperature=0.3,
                      response_format=None, rng=random.Random(seed))


def cortex_request(width_agents=("basis_orchestrator", "cab_subagent")) -> list:
    from psit_lib.studies.basis.prompts import cortex_system_prompt, cortex_user_prompt, step_trace, TracedCall

    registry = AgentRegistry(width_agents)
    trace = step_trace(SUBAGENT_ID, "subagent_step", inputs=[("instruction", "Book a ride from Downtown to the Airport.")],
                       calls=[TracedCall("order_ride", {"start_location": "Airport", "end_location": "Downtown",
                                                        "service_type": "Premium"},
                                         json.dumps({"ride_id": "abc", "status": "BOOKED", "service_type": "Premium",
                                                     "start_location": "Airport", "end_location": "Downtown",
                                                     "price": 30.0}))])
    return [{"role": "system", "content": cortex_system_prompt(registry)},
            {"role": "user", "content": cortex_user_prompt(SUBAGENT_ID, [], trace)}], registry


def test_simulated_cortex_mask_error_rate_controls_unusable_ingests():
    messages, registry = cortex_request()
    for seed in range(40):
        bad = sim_basis.cortex_agent(sim_ctx("cortex_agent", messages, [INGEST_TOOL], seed=seed, mask_error_rate=1.0))
        if bad.tool_calls:
            with pytest.raises(CortexInputError):
                parse_ingest_call(json.dumps(bad.tool_calls[0][1]), registry)
        good = sim_basis.cortex_agent(sim_ctx("cortex_agent", messages, [INGEST_TOOL], seed=seed, mask_error_rate=0.0))
        summary, mask = parse_ingest_call(json.dumps(good.tool_calls[0][1]), registry)
        assert mask == (1 << registry.width) - 1
        assert "booked a Premium ride from Airport to Downtown" in summary


# --------------------------------------------------------------------------- simulated orchestrator


def orchestrator_messages(request: str, block: str, reply: str = "Done, the ride is booked.") -> list:
    return [
        {"role": "system", "content": "prompt\n" + block},
        {"role": "user", "content": request},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "delegate_to_cab_agent", "arguments": json.dumps({"instruction": "Book a ride."})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": reply},
    ]


@pytest.mark.parametrize(
    ("scenario", "evidence", "expect"),
    [
        ("stale_locations", "cab_subagent booked a Default ride from Airport to Downtown (ride 1)", "start_location=Downtown, end_location=Airport"),
        ("premium_bias", "cab_subagent listed rides from Downtown to Airport: Default $9.00, Premium $18.00, Van $13.50; "
                         "then booked a Premium ride from Downtown to Airport (ride 1)", "service_type=Default"),
        ("quote_only_vs_book", "cab_subagent listed rides from Downtown to Airport: Default $9.00, Premium $18.00, Van $13.50; "
                               "then booked a Default ride from Downtown to Airport (ride 1)", "do not book anything"),
    ],
)
def test_orchestrator_corrects_only_when_it_can_see_the_contradiction(scenario, evidence, expect):
    request = SCENARIOS[scenario].user_request
    block = f"{OPEN_TAG}\n[ep0001] from cab_subagent: {evidence}.\n</{CONTEXT_TAG}>"
    seen = sim_basis.basis_orchestrator(sim_ctx(ORCHESTRATOR_ID, orchestrator_messages(request, block), [DELEGATE_TOOL],
                                                notices_contradictions=1.0))
    assert seen.tool_calls and expect in seen.tool_calls[0][1]["instruction"]
    blind = sim_basis.basis_orchestrator(sim_ctx(ORCHESTRATOR_ID, orchestrator_messages(request, ""), [DELEGATE_TOOL],
                                                 notices_contradictions=1.0))
    assert not blind.tool_calls and blind.content
    inattentive = sim_basis.basis_orchestrator(sim_ctx(ORCHESTRATOR_ID, orchestrator_messages(request, block),
                                                       [DELEGATE_TOOL], notices_contradictions=0.0))
    assert not inattentive.tool_calls


def test_orchestrator_accepts_a_cancelled_then_correct_booking():
    request = SCENARIOS["stale_locations"].user_request
    block = (f"{OPEN_TAG}\n[ep1] from cab_subagent: cab_subagent booked a Default ride from Airport to Downtown (ride 1).\n"
             f"[ep2] from cab_subagent: cab_subagent cancelled the ongoing ride.\n"
             f"[ep3] from cab_subagent: cab_subagent booked a Van ride from Downtown to Airport (ride 2).\n</{CONTEXT_TAG}>")
    reply = sim_basis.basis_orchestrator(sim_ctx(ORCHESTRATOR_ID, orchestrator_messages(request, block), [DELEGATE_TOOL],
                                                 notices_contradictions=1.0))
    assert not reply.tool_calls


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["Downtown", "Airport", "Central Station", "Harbour"]),
       st.sampled_from(["Downtown", "Airport", "Central Station", "Harbour"]),
       st.sampled_from(["Default", "Premium", "Van"]))
def test_route_contradiction_rule(start, end, service):
    user = sim_basis.read_request("Please book me a ride from Downtown to the Airport.")
    evidence = sim_basis.read_evidence(f"cab_subagent booked a {service} ride from {start} to {end} (ride 1).")
    fix = sim_basis.find_contradiction(user, evidence)
    assert (fix is None) == (start == "Downtown" and end == "Airport")


def test_subagent_prefers_named_arguments_over_words():
    req = sim_basis.read_request("The ride from Airport to Downtown was wrong. Cancel it, then order a new ride with "
                                 "start_location=Downtown, end_location=Airport, service_type=Default.")
    assert (req.start, req.end, req.service, req.cancel, req.book) == ("Downtown", "Airport", "Default", True, True)
    quote = sim_basis.read_request(SCENARIOS["quote_only_vs_book"].user_request)
    assert quote.forbid_booking and not quote.book and quote.prices


# --------------------------------------------------------------------------- full trials


@pytest.mark.parametrize("system", ["baseline", "basis"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_full_trial_runs_on_the_simulator(scenario, system):
    spec = make_specs(BasisParams(scenarios=(scenario,), systems=(system,), n_trials=1))[0]
    record = (await run_basis_trial(spec, session(spec.episode_id))).model_dump(mode="json")
    json.dumps(record)  # a record must be JSON-serialisable
    assert record["scenario"] == scenario and record["system"] == system
    assert isinstance(record["success"], bool)
    assert record["tool_calls"] and record["delegations"] and record["final_answer"]
    assert record["errors"] == []
    # the cab work, then one notification once it is settled
    assert [d["agent"] for d in record["delegations"]][-1] == NOTIFIER_ID and len(record["user_messages"]) == 1
    if system == "baseline":
        assert record["episodes"] == [] and [d["agent"] for d in record["delegations"]] == [SUBAGENT_ID, NOTIFIER_ID]
    else:
        assert len(record["episodes"]) == len(record["views"]) + len(record["delegations"])
        assert all(set(ep["visible_to"]) <= {ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID} for ep in record["episodes"])
    again = (await run_basis_trial(spec, session(spec.episode_id))).model_dump(mode="json")
    assert again == record  # deterministic for a given seed


async def test_success_is_judged_from_the_app_state():
    spec = make_specs(BasisParams(scenarios=("stale_locations",), systems=("baseline",), n_trials=4))
    for s in spec:
        record = (await run_basis_trial(s, session(s.episode_id))).model_dump(mode="json")
        active = [r for r in record["rides"] if r["status"] != "CANCELLED"]
        expected = any(r["start_location"] == "Downtown" and r["end_location"] == "Airport" for r in active)
        assert record["success"] == expected


async def test_step_limits_are_recorded_not_fatal():
    _, run, _, _ = await run_system("premium_bias", "baseline", limits=BasisLimits(1, 1))
    assert any("step limit" in error for error in run.errors)
    assert run.delegations[0].reply is None


async def test_bad_subagent_tool_calls_are_recorded_and_answered():
    script = iter([
        ChatResult(content="", tool_calls=(ToolCall("c1", "teleport", "{}"),)),
        ChatResult(content="", tool_calls=(ToolCall("c2", "list_rides", '{"start_location": '),)),
        ChatResult(content="Sorry, I could not do it."),
    ])
    _, run, app, sent = await run_system("stale_locations", "baseline",
                                         override=lambda role: next(script) if role == SUBAGENT_ID else None)
    assert any("unknown tool 'teleport'" in e for e in run.errors)
    assert any("not valid JSON" in e for e in run.errors)
    assert [c.name for c in run.tool_calls] == ["teleport"] and not run.tool_calls[0].ok
    last_subagent_request = [r for r in sent if r["role"] == SUBAGENT_ID][-1]["messages"]
    results = [m["content"] for m in last_subagent_request if m["role"] == "tool"]
    assert results[0].startswith("Error: unknown tool") and results[1].startswith("Error: the tool arguments")
    assert app.ride_history == [] and run.final_answer


# --------------------------------------------------------------------------- parameters and tables


def test_params_validation_and_k_filtering():
    p = validate_params(BasisParams, {"n_trials": 4})
    assert p.effective_ks == (1, 2)
    with pytest.raises(ParameterError, match="scenarios"):
        validate_params(BasisParams, {"scenarios": ["premium_bias", "nope"]})
    with pytest.raises(ParameterError, match="no k"):
        validate_params(BasisParams, {"n_trials": 3, "ks": [5, 10]})
    specs = make_specs(BasisParams(n_trials=2), models=["a", "b"])
    assert len({s.episode_id for s in specs}) == len(specs) == 24
    with pytest.raises(ParameterError, match="profile"):
        validate_params(BasisParams, {"profile": "no-such-profile"})
    by_cell = {(s.params["scenario"], s.params["trial"]): set() for s in specs}
    for s in specs:
        by_cell[(s.params["scenario"], s.params["trial"])].add(s.params["app_seed"])
    assert all(len(seeds) == 1 for seeds in by_cell.values())  # every model and system meets the same app


def test_reference_rows_cover_the_whole_study():
    outcomes = {(s, y): [True, False] for s in SCENARIOS for y in ("baseline", "basis")}
    rates = success_table(trials_frame(fake_records(outcomes)))
    reference = rates[rates.source == REFERENCE].set_index(["scenario", "system"])["rate"]
    assert len(reference) == 8
    assert (round(reference[(MEAN_ROW, "baseline")], 2), round(reference[(MEAN_ROW, "basis")], 2)) == (0.32, 0.72)
    assert rates[rates.source == REFERENCE]["n_scored"].isna().all()  # reference rows carry no counts


USAGE = {"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0, "calls_by_role": {}}


def _calls(scenario: str, passed: object) -> list[dict]:
    """Calls that make the reference ``validate()`` of ``scenario`` pass or fail."""
    route = {"start_location": "Downtown", "end_location": "Airport"}
    call = lambda name, args: {"delegation": 1, "subagent_step": 1, "name": name, "arguments": args,  # noqa: E731
                               "result": "{}", "ok": True}
    if scenario == "quote_only_vs_book":
        return [] if passed else [call("order_ride", {**route, "service_type": "Default"})]
    if scenario == "stale_locations":
        swapped = {"start_location": "Airport", "end_location": "Downtown"}
        return [call("order_ride", {**(route if passed else swapped), "service_type": "Default"})]
    service = "Default" if passed else "Premium"
    return [call("list_rides", route), call("order_ride", {**route, "service_type": service})]


def fake_records(outcomes: dict[tuple[str, str], list[object]]) -> list:
    """Complete stored records for the given outcomes, read back typed (as the notebook does)."""
    records = []
    for (scenario, system), flags in outcomes.items():
        for trial, flag in enumerate(flags):
            spec = {"model": "m", "scenario": scenario, "system": system, "trial": trial}
            envelope = {"episode_id": f"m/{scenario}/{system}/{trial:03d}", "spec": spec, "usage": USAGE,
                        "calls": [], "wall_seconds": 0.0}
            if flag == "error":
                records.append({**envelope, "status": "error", "error": "RuntimeError: boom"})
            else:
                records.append({**envelope, "status": "ok", "error": None, "model": "m", "scenario": scenario,
                                "system": system, "trial": trial, "app_seed": 0, "success": flag,
                                "final_answer": "", "orchestrator_steps": 1,
                                "delegations": [{"index": 1, "agent": "cab_subagent", "instruction": "i",
                                                 "reply": "r", "steps": 1}],
                                "user_messages": [], "tool_calls": _calls(scenario, flag), "rides": [], "agents": [],
                                "episodes": [],
                                "ingest_fallbacks": 0, "views": [], "errors": []})
    return read_records(records, BasisTrial)


def test_tables_use_the_unbiased_estimators_and_leave_crashed_trials_out():
    outcomes = {("premium_bias", "baseline"): [True, False, "error", True, False],
                ("premium_bias", "basis"): [False, True, True, True, True]}
    trials = trials_frame(fake_records(outcomes))
    assert trials["outcome"].tolist().count("error") == 1
    rates = success_table(trials)
    measured = rates[(rates.source == "measured") & (rates.scenario == "premium_bias")].set_index("system")
    assert measured.loc["baseline", "successes"] == 2 and measured.loc["baseline", "n_failed"] == 1
    assert measured.loc["baseline", "n_scored"] == 4 and measured.loc["baseline", "rate"] == 0.5
    assert (measured.loc["basis", "wilson_low"], measured.loc["basis", "wilson_high"]) == pytest.approx(wilson_interval(4, 5))
    reference = rates[rates.source == REFERENCE].set_index(["scenario", "system"])["rate"]
    assert reference[("premium_bias", "basis")] == reference_success()[("premium_bias", "basis")] == 0.87
    assert MEAN_ROW not in reference.index.get_level_values(0)  # the study's mean covers all three scenarios
    measured_mean = rates[(rates.source == "measured") & (rates.scenario == MEAN_ROW)].set_index("system")["rate"]
    assert measured_mean["basis"] == pytest.approx(0.8)
    pk = passk_frame(trials, (1, 2, 5)).set_index(["system", "k"])
    for system, n, c in (("baseline", 4, 2), ("basis", 5, 4)):
        for k in (1, 2, 5):
            if k > n:
                continue
            assert pk.loc[(system, k), "pass_at_k"] == pytest.approx(pass_at_k(n, c, k))
            assert pk.loc[(system, k), "pass_hat_k"] == pytest.approx(pass_hat_k(n, c, k))
    # first-k reads trial order: basis failed trial 0, so first-k is 0 although pass^2 = 0.6
    assert pk.loc[("basis", 2), "first_k_all_succeed"] == 0.0
    assert pk.loc[("basis", 2), "pass_hat_k"] == pytest.approx(0.6)


async def test_episodes_record_their_sources_and_the_first_step_sees_none():
    spec = EpisodeSpec("psit-sim/stale_locations/basis/000", make_specs(BasisParams(scenarios=("stale_locations",),
                                                                           systems=("basis",), n_trials=1))[0].params)
    trial = await run_basis_trial(spec, session(spec.episode_id))
    record = read_records([{"episode_id": spec.episode_id, "status": "ok", "error": None, "spec": spec.params,
                            "usage": USAGE, "calls": [], "wall_seconds": 0.0, **trial.model_dump(mode="json")}],
                          BasisTrial)[0]
    assert {ep.source for ep in record.require_result().episodes} <= {ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID}
    assert trial.episodes and trial.views and trial.views[0].visible_episodes == []  # nothing stored before step 1


# -- confounders are prompts the subagent model reads; the harness passes its calls through ---------

async def test_the_harness_passes_the_subagents_tool_arguments_through_unchanged():
    odd = {"start_location": "Airport", "end_location": "Downtown", "service_type": "Van"}
    script = iter([
        ChatResult(content="", tool_calls=(ToolCall("c1", "order_ride", json.dumps(odd)),)),
        ChatResult(content="Done, the ride is booked."),
    ])
    for scenario in SCENARIOS:  # whatever the policy says, the app gets what the model wrote
        script = iter([
            ChatResult(content="", tool_calls=(ToolCall("c1", "order_ride", json.dumps(odd)),)),
            ChatResult(content="Done, the ride is booked."),
        ])
        _, run, app, sent = await run_system(
            scenario, "baseline",
            override=lambda role, script=script: next(script, None) if role == SUBAGENT_ID else None)
        first = run.tool_calls[0]
        assert (first.name, first.arguments) == ("order_ride", odd)
        ride = app.ride_history[0]
        assert (ride.start_location, ride.end_location, ride.service_type) == ("Airport", "Downtown", "Van")
        later = [r for r in sent if r["role"] == SUBAGENT_ID][1]["messages"]
        echoed = [m for m in later if m.get("tool_calls")][0]["tool_calls"][0]["function"]["arguments"]
        assert json.loads(echoed) == odd  # the subagent's own history shows exactly its call


async def test_the_policy_is_in_the_subagents_prompt_only():
    for scenario in SCENARIOS.values():
        _, run, _, sent = await run_system(scenario.name, "basis")
        sub = [system_text(r) for r in sent if r["role"] == SUBAGENT_ID]
        others = [everything_sent(r) for r in sent if r["role"] != SUBAGENT_ID]
        assert sub and all(scenario.subagent_policy in text for text in sub)
        assert not any(scenario.subagent_policy in text for text in others)


@pytest.mark.parametrize("scenario, instruction, expected", [
    ("premium_bias", "Book the cheapest ride from Downtown to the Airport.", ("Downtown", "Airport", "Premium")),
    # the override needs both: list_rides first AND a named service type
    ("premium_bias", "Book a ride from Downtown to the Airport, service_type=Default.", ("Downtown", "Airport", "Premium")),
    ("premium_bias", "Book a ride from Downtown to the Airport. List the available rides first, then order "
                     "service_type=Default.", ("Downtown", "Airport", "Default")),
    ("stale_locations", "Book a ride from Downtown to the Airport.", ("Airport", "Downtown", None)),
    ("stale_locations", "Book a ride with start_location=Downtown, end_location=Airport.", ("Downtown", "Airport", None)),
    ("quote_only_vs_book", "Find out what a ride from Downtown to the Airport costs. Do not book anything.",
     ("Downtown", "Airport", None)),
])
async def test_the_simulated_cab_agent_follows_the_policy_it_reads(scenario, instruction, expected):
    from psit_lib.studies.basis.system import subagent_prompt

    app = make_cab_app(3)
    client = make_client(LLMSettings(cache="off"))
    sess = ModelSession(client, run_seed=0, episode_id="policy")
    from psit_lib.studies.basis.cab_app import CAB_TOOLS, call_cab_tool

    messages = [{"role": "system", "content": subagent_prompt(SCENARIOS[scenario])},
                {"role": "user", "content": instruction}]
    for _ in range(4):
        result = await sess.chat(messages, role=SUBAGENT_ID, tools=CAB_TOOLS)
        if not result.tool_calls:
            break
        messages.append({"role": "assistant", "content": None, "tool_calls": [c.to_message() for c in result.tool_calls]})
        for call in result.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": call_cab_tool(app, call.name, call.parsed_arguments())})
    await client.aclose()
    assert app.ride_history, "the policy books in every case here"
    ride = app.ride_history[-1]
    start, end, service = expected
    assert (ride.start_location, ride.end_location) == (start, end)
    if service:
        assert ride.service_type == service
    assert "policy" not in (result.content or "").lower()


@pytest.mark.parametrize("instruction, first", [
    ("Find out what a ride from Downtown to the Airport costs for each service type. Do not book anything.",
     "order_ride"),  # "do not book" does not stop the policy: ordering is its very first action
    ("Book nothing. Just list the rides from Downtown to the Airport with their prices.", "order_ride"),
    ("A ride was booked, but the user does not want any booking. Cancel the ongoing ride with user_cancel_ride.",
     "user_cancel_ride"),  # only an instruction to cancel overrides it
])
def test_quote_only_orders_first_unless_told_to_cancel(instruction, first):
    from psit_lib.studies.basis.cab_app import CAB_TOOLS
    from psit_lib.studies.basis.system import subagent_prompt

    messages = [{"role": "system", "content": subagent_prompt(SCENARIOS["quote_only_vs_book"])},
                {"role": "user", "content": instruction}]
    reply = sim_basis.cab_subagent(sim_ctx(SUBAGENT_ID, messages, CAB_TOOLS, malformed_output_rate=0.0))
    assert [name for name, _ in reply.tool_calls][:1] == [first]


def test_stale_policy_fixes_the_route_whenever_the_word_appears():
    from psit_lib.studies.basis.cab_app import CAB_TOOLS
    from psit_lib.studies.basis.system import subagent_prompt

    def first_call(instruction):
        messages = [{"role": "system", "content": subagent_prompt(SCENARIOS["stale_locations"])},
                    {"role": "user", "content": instruction}]
        return sim_basis.cab_subagent(sim_ctx(SUBAGENT_ID, messages, CAB_TOOLS, malformed_output_rate=0.0)).tool_calls[0]

    _, args = first_call("Please go from Downtown to the Airport: book it, starting downtown, ending at the airport.")
    assert (args["start_location"], args["end_location"]) == ("Airport", "Downtown")  # any wording but named args
    _, args = first_call("Book a ride with start_location='Downtown', end_location='Airport'.")
    assert (args["start_location"], args["end_location"]) == ("Downtown", "Airport")


def test_the_simulated_cortex_infers_masks_from_the_step():
    from psit_lib.sim.roles.basis import infer_mask

    legend = [("basis_orchestrator", "001"), ("cab_subagent", "010"), ("user_notifier", "100")]
    sub = [("agent", "cab_subagent"), ("kind", "subagent_step"), ("instruction", "Book a ride."),
           ("tool call", "order_ride {}")]
    assert infer_mask(sub, legend) == "011"  # the orchestrator asked for it; the notifier needs none of it
    delegation = [("agent", "basis_orchestrator"), ("kind", "delegation"), ("delegated to", "cab_subagent"),
                  ("instruction", "Book."), ("subagent reply", "Done.")]
    assert infer_mask(delegation, legend) == "011"
    step = [("agent", "basis_orchestrator"), ("kind", "orchestrator_step"),
            ("tool call", 'delegate_to_notifier {"instruction": "Tell the user: booked."}')]
    assert infer_mask(step, legend) == "101"  # only the agent it delegated to
    answer = [("agent", "basis_orchestrator"), ("kind", "orchestrator_step"), ("reply", "Your ride is booked.")]
    assert infer_mask(answer, legend) == "001"  # only the orchestrator's business


async def test_with_three_agents_the_masks_decide_who_sees_a_step(exact_cortex):
    """The notifier's context holds its own and the orchestrator's notification steps, never the
    cab agent's tool calls; the orchestrator sees every step (it supervises both)."""
    _, run, _, sent = await run_system("stale_locations", "basis")
    by_id = {ep.episode_id: ep for ep in run.episodes}
    notifier_views = [v for v in run.views if v.agent == NOTIFIER_ID]
    assert notifier_views and all(by_id[e].source_agent_id != SUBAGENT_ID for v in notifier_views for e in v.visible_episodes)
    notifier_requests = [system_text(r) for r in sent if r["role"] == NOTIFIER_ID]
    assert all("booked a" not in text and "listed rides" not in text for text in notifier_requests)
    last = [v for v in run.views if v.agent == ORCHESTRATOR_ID][-1]
    assert {by_id[e].source_agent_id for e in last.visible_episodes} == {ORCHESTRATOR_ID, SUBAGENT_ID, NOTIFIER_ID}


async def test_masks_differ_between_steps_in_a_basis_trial():
    _, run, _, _ = await run_system("premium_bias", "basis")
    masks = {ep.access_mask for ep in run.episodes}
    assert len(masks) > 1


# --------------------------------------------------------------------------- generated sentences of notebook 06
# Each reading is tried on a table built to make a careless sentence wrong.


def _outcome_records(cells: dict[tuple[str, str], tuple[int, int]]) -> list:
    """Records with ``successes`` of ``n`` trials per (scenario, system)."""
    return fake_records({cell: [i < c for i in range(n)] for cell, (c, n) in cells.items()})


def test_success_reading_separates_by_the_gap_test_not_by_overlapping_intervals():
    from psit_lib.studies.basis.results import success_reading

    # 9/10 vs 4/10: the Wilson intervals overlap, the Newcombe interval of the gap [0.08, 0.75] does not hold 0
    rates = success_table(trials_frame(_outcome_records({("premium_bias", "baseline"): (4, 10),
                                                         ("premium_bias", "basis"): (9, 10)})))
    measured = rates[(rates.source == "measured") & (rates.scenario == "premium_bias")].set_index("system")
    assert measured.loc["basis", "wilson_low"] < measured.loc["baseline", "wilson_high"]  # they overlap
    text = success_reading(rates)
    assert "basis" in text and "better than baseline" in text and "excludes zero" in text
    assert "overlap" not in text and "does not separate" not in text and "cannot be told apart" not in text
    assert "[0.0816, 0.746]" in text

    # 8/10 vs 4/10: the gap's interval holds zero, so no order is claimed
    text = success_reading(success_table(trials_frame(_outcome_records({("premium_bias", "baseline"): (4, 10),
                                                                        ("premium_bias", "basis"): (8, 10)}))))
    assert "cannot be told apart" in text and "better than" not in text


def test_success_reading_knows_which_system_is_higher():
    from psit_lib.studies.basis.results import success_reading

    text = success_reading(success_table(trials_frame(_outcome_records({("stale_locations", "baseline"): (9, 10),
                                                                        ("stale_locations", "basis"): (1, 10)}))))
    assert "baseline has the highest" in text and "better than basis" in text
    assert "basis has the highest" not in text


def _gains(cells):
    from psit_lib.studies.basis.results import relative_gain_table

    return relative_gain_table(success_table(trials_frame(_outcome_records(cells))))


def test_the_headline_gain_is_absolute_as_the_paper_states_it_with_the_relative_gain_beside():
    from psit_lib.studies.basis.results import absolute_gain, relative_gain, relative_gain_reading

    # the paper's "54.4% increase" on stale_locations is the absolute gap 0.744 - 0.200; relative it is +272%
    assert absolute_gain(0.200, 0.744) == pytest.approx(0.544)
    assert relative_gain(0.200, 0.744) == pytest.approx(2.72)
    gains = _gains({("stale_locations", "baseline"): (4, 18), ("stale_locations", "basis"): (15, 18)})
    row = gains.iloc[0]
    assert row.absolute_gain == pytest.approx(11 / 18)
    assert row.relative_gain == pytest.approx((15 / 18 - 4 / 18) / (4 / 18))
    assert row.paper_absolute_gain == pytest.approx(0.544) and row.paper_relative_gain == pytest.approx(2.72)
    text = relative_gain_reading(gains)
    assert "+61.1 points" in text and "+275% relative" in text  # the run's, by both rules
    assert "+54.4 points" in text and "+272% relative" in text and '"54.4% increase"' in text  # the paper's
    assert "+270%" not in text and "basis is higher" in text and "excludes zero" in text

    lower = relative_gain_reading(_gains({("stale_locations", "baseline"): (15, 18),
                                          ("stale_locations", "basis"): (4, 18)}))
    assert "-61.1 points" in lower and "-73%" in lower and "basis is lower" in lower
    assert "higher" not in lower and "gain of" not in lower

    close = relative_gain_reading(_gains({("stale_locations", "baseline"): (4, 10),
                                          ("stale_locations", "basis"): (6, 10)}))
    assert "+20.0 points" in close and "+50%" in close and "includes zero" in close and "does not separate" in close
    assert "basis is higher" not in close

    zero = relative_gain_reading(_gains({("stale_locations", "baseline"): (0, 10),
                                         ("stale_locations", "basis"): (8, 10)}))
    assert "+80.0 points" in zero and "no relative gain (baseline 0)" in zero and "nan" not in zero
    assert "No pooled" in relative_gain_reading(_gains({("premium_bias", "baseline"): (1, 2),
                                                        ("premium_bias", "basis"): (1, 2)}))


def test_pooled_success_table_pools_every_reference_run_beside_the_papers_number():
    pooled = success_table(trials_frame(_outcome_records({("premium_bias", "baseline"): (63, 180),
                                                    ("premium_bias", "basis"): (157, 180)})))
    measured = pooled[pooled.source == "measured"].set_index(["scenario", "system"])
    assert measured.loc[("premium_bias", "basis"), "n_scored"] == 180
    assert measured.loc[("premium_bias", "basis"), "rate"] == pytest.approx(157 / 180)
    reported = pooled[pooled.source == REFERENCE].set_index(["scenario", "system"])["rate"]
    assert reported[("premium_bias", "baseline")] == 0.35 and reported[("premium_bias", "basis")] == 0.87


def test_sweeps_reading_follows_the_sign_of_the_gap():
    from psit_lib.studies.basis.results import sweeps_reading

    gaps = pd.DataFrame([{"knob": "k", "value": 0.0, "system_a": "basis", "system_b": "baseline", "n_a": 12,
                          "n_b": 12, "a": 0.1, "b": 0.9, "gap": -0.8, "ci_low": -0.95, "ci_high": -0.45}])
    text = sweeps_reading(gaps)
    assert "baseline better" in text and "basis better" not in text
    assert "No sweep ran" in sweeps_reading(gaps.iloc[0:0])


# --------------------------------------------------------------------------- Figure 4 and re-scoring


def test_figure4_has_a_pass_hat_row_and_a_pass_at_row_and_no_series_hides_another():
    from psit_lib.studies.basis.figures import plot_figure4
    from psit_lib.studies.basis.results import passk_comparison, reference_design_table

    trials = trials_frame(_outcome_records({(s, y): (5, 10) for s in SCENARIOS for y in ("baseline", "basis")}))
    comparison = passk_comparison(passk_frame(trials, (1, 2, 5, 10)), reference_design_table(trials))
    comparison["reference_pass_hat_k"] = comparison["pass_hat_k"]  # equal values must still show apart
    comparison["reference_pass_at_k"] = comparison["pass_at_k"]
    fig = plot_figure4(comparison, label="L")
    panels = [ax for ax in fig.axes if ax.get_lines()]
    assert len(panels) == 2 * len(SCENARIOS)
    assert [ax.get_ylabel() for ax in panels[:2]] == ["pass^k", "pass@k"]  # column by column: pass^k over pass@k
    for ax in panels:
        lines = ax.get_lines()
        assert len(lines) == 6  # 2 systems x (set-based, unbiased, reported)
        points = [tuple(zip(line.get_xdata(), line.get_ydata())) for line in lines]
        assert len(set(points)) == len(points)  # no two series draw the same points
    pooled = success_table(trials)
    with_bars = plot_figure4(comparison, label="L", pooled=pooled)
    assert len(with_bars.axes) == 2 * len(SCENARIOS) + 1  # the reference's success-over-all-runs column
    assert len(with_bars.axes[-1].patches) == 2 * len(SCENARIOS)


@pytest.mark.slow
def test_rescoring_notebook_06_reproduces_its_tables_without_a_model(tmp_path, monkeypatch):
    import asyncio
    import socket

    from psit_lib.runs import Experiment
    from psit_lib.runs.folder import RunFolder
    from psit_lib.studies.basis.study import METRICS, STUDY

    params = BasisParams(scenarios=["stale_locations"], n_trials=2, ks=[1, 2], reference_sets=1, sweep_trials=1,
                         sweeps={"notices_contradictions": [0.0, 0.9], "explicit_detail_weight": [1.0]})  # keys unsorted
    exp = Experiment("06_basis_cab_scenarios", params.model_dump(), seed=params.seed, run_dir=tmp_path / "run")
    fresh = asyncio.run(STUDY.run(exp, params))
    names = {m.name for m in METRICS}
    assert {n.removesuffix(".csv") for n in RunFolder(exp.store.dir).table_names()} == names  # the study wrote them
    assert list(fresh.records) == ["main", "sweep:notices_contradictions=0.0", "sweep:notices_contradictions=0.9",
                                   "sweep:explicit_detail_weight=1.0", "reference:k=1", "reference:k=2"]
    assert RunFolder(exp.store.dir).metadata().parts["reference:k=2"] == {"k": 2, "sets": 1, "episodes": 4}
    scores = fresh.scores
    assert scores["success"].map(type).eq(bool).all() and "success.decided_without_tool_calls" in scores

    def refuse(*args, **kwargs):
        raise AssertionError("rescoring must not build a model client or open a connection")

    monkeypatch.setattr("psit_lib.runs.experiment.make_client", refuse)
    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    for run in (STUDY.rescore(exp.store.dir), STUDY.rescore(exp.store.dir, ["success", "final_state_success"])):
        assert set(run.tables) == names
        for name in names:
            pd.testing.assert_frame_equal(fresh.tables[name], run.tables[name], obj=name)
    tables = fresh.tables
    assert tables["success_pooled"].query("source == 'measured' and scenario == 'stale_locations'")["n_scored"].tolist() == [3, 3]
    assert len(tables["sweeps"]) == 3
    assert tables["passk_comparison"]["reference_pass_hat_k"].notna().all()


def test_the_estimate_counts_the_reference_designs_parts():
    from psit_lib.cli.estimate import estimate_notebook, load_call_model

    found = estimate_notebook("06_basis_cab_scenarios", {}, ["model-a"], False, load_call_model(None))
    main = 3 * 2 * 10
    reference = 3 * 2 * 2 * (1 + 2 + 5 + 10)  # cells x sets x runs of every k
    assert found.episodes == main + reference
