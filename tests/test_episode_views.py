"""Each study's episode view, on hand-made stored records shaped like a run's: ACC turn by turn (the query, each
agent's answer with what it carried, the judge's verdict from the judge score's rows, the CCS and its diff, each
turn folded behind a line that already says what the judge found) and BASIS as the exchange (the user's request,
each step with the cortex episodes its mask let it see, the app calls, the replies, what the user was told, the
rides, the cortex), with the explorer's columns of each; and the explorer's table in plan order with a part
column and no score shown twice."""

from __future__ import annotations

import json

import pytest
from bs4 import BeautifulSoup

from psit_lib.studies.acc.conversation_view import VIEW as ACC
from psit_lib.studies.basis.conversation_view import VIEW as BASIS


def _text(page: str) -> str:
    return " ".join(BeautifulSoup(page, "html.parser").get_text(" ").split())


def _ccs(facts: list[tuple[str, str]], rules: list[str]) -> dict:
    return {"episodic_trace": [], "semantic_gist": "an outage", "focal_entities": [], "goal_orientation": "answer",
            "relational_map": [{"subject": s, "relation": "is", "object": o} for s, o in facts],
            "constraints": rules, "predictive_cue": "", "uncertainty_signal": "", "retrieved_artifacts": []}


def _acc_record() -> dict:
    def turn(n: int, query: str, ccs: dict) -> dict:
        return {"turn": n, "topic": "evidence_update", "query": query, "judge": None, "agents": {
            "acc": {"answer": f"acc answer {n}", "footprint_tokens": 40 + n,
                    "details": {"ccs": ccs, "ccs_error": None, "recalled": ["t1"], "qualified": ["t1"]}},
            "transcript": {"answer": f"transcript answer {n}", "footprint_tokens": 100 * n,
                           "details": {"replayed_messages": 2 * (n - 1)}}}}

    turns = [turn(1, "The failing node is db-07. Tag every answer INC-1.", _ccs([("failing node", "db-07")], ["R1: tag INC-1"])),
             turn(2, "Correction: the failing node is cache-03.", _ccs([("failing node", "cache-03")], ["R1: tag INC-1"]))]
    result = {"schema_version": 2, "model": "m", "domain": "it_operations", "scenario_id": "it/seed1", "scenario_seed": 1,
              "n_turns": 2, "turns": turns, "ccs_failures": 0, "judge_failures": None, "memory_failures": 0}
    return {"format": 2, "episode_id": "m/it_operations/000", "status": "ok", "error": None,
            "spec": {"model": "m", "domain": "it_operations", "index": 0, "n_turns": 2},
            "usage": {"calls": 6, "cache_hits": 0, "prompt_tokens": 10, "completion_tokens": 5, "calls_by_role": {}},
            "calls": [], "wall_seconds": 0.1, "result": result}


def _verdict(turn: int, agent: str, unsupported: int, violations: int) -> dict:
    return {"turn": turn, "agent": agent, "status": "ok", "error": None, "relevance": 9.0, "answer_quality": 8.0,
            "instruction_following": 7.0, "coherence": 9.0, "supported_claims": 2, "unsupported_claims": unsupported,
            "active_constraints": 1, "violations": violations, "omitted_required": 0,
            "hallucination": unsupported / (2 + unsupported), "drift": None if turn < 2 else violations / 1.0}


ACC_SCORES = {"judge": {"scorer": "judge", "value": 1.0, "explanation": "4 of 4 answers scored", "metadata": {
    "rows": [_verdict(1, "acc", 0, 0), _verdict(1, "transcript", 0, 0), _verdict(2, "acc", 0, 0),
             _verdict(2, "transcript", 2, 1)],
    "memories": [{"turn": 1, "memory": {"facts": {"failing node": "db-07"}}},
                 {"turn": 2, "memory": {"facts": {"failing node": "cache-03"}}}]}},
    "footprint": {"scorer": "footprint", "value": 41.5, "explanation": "mean tokens"}}


def test_the_acc_view_reads_turn_by_turn_with_the_judge_and_the_state():
    page = ACC.html(_acc_record(), ACC_SCORES)
    soup = BeautifulSoup(page, "html.parser")
    turns = soup.select("details.ep-turn")
    assert len(turns) == 2 and not any(t.has_attr("open") for t in turns)  # every turn folded behind its line
    line = " ".join(turns[1].summary.get_text(" ").split())
    assert "turn 2" in line and "Correction: the failing node is cache-03." in line
    assert "transcript: H 0.5 · D 1" in line and "acc: H 0 · D 0" in line  # what the judge found, before opening
    second = " ".join(turns[1].get_text(" ").split())
    assert "transcript answer 2" in second and "acc answer 2" in second
    assert "2 earlier messages replayed" in second and "recalled t1" in second
    assert "2 unsupported" in second and "1 violated" in second  # the verdict on each answer
    assert "+ Fact: the failing node is cache-03." in second and "- Fact: the failing node is db-07." in second
    assert "cache-03" in turns[1].select("details")[-1].get_text()  # the judge's canonical memory, folded
    assert "scores:" in _text(page) and "footprint" in _text(page)
    row = ACC.row(_acc_record(), ACC_SCORES)
    assert row["turns"] == 2 and row["scenario"] == "it/seed1"
    assert row["H transcript (pooled)"] == 0.333 and row["D transcript (pooled)"] == 1.0 and row["H acc (pooled)"] == 0


def test_an_unjudged_or_failed_acc_episode_says_so():
    assert "not judged" in _text(ACC.html(_acc_record(), {}))
    failed = {**_acc_record(), "status": "error", "error": "the compressor timed out", "result": None}
    assert "error: the compressor timed out" in _text(ACC.html(failed, {}))


def _basis_record(system: str = "basis") -> dict:
    episodes = [{"episode_id": "ep0000", "source": "basis_orchestrator", "kind": "orchestrator_step", "step": "step 1",
                 "access_mask": "011", "visible_to": ["basis_orchestrator", "cab_subagent"], "summary": "delegated",
                 "ingest": "ok", "mask_text": "011", "fallback_reason": None, "cortex_window": [], "raw_trace": "..."}]
    result = {
        "schema_version": 5, "model": "m", "scenario": "premium_bias", "system": system, "trial": 0, "app_seed": 1,
        "success": True, "final_state_success": True, "final_answer": "Booked the Default ride.", "orchestrator_steps": 2,
        "delegations": [{"index": 1, "agent": "cab_subagent", "instruction": "Book the cheapest ride.",
                         "reply": "Booked: Default, $11.80.", "steps": 2}],
        "user_messages": ["Your ride is booked: Default, $11.80."],
        "tool_calls": [{"delegation": 1, "subagent_step": 1, "name": "list_rides", "ok": True,
                        "arguments": {"start_location": "Downtown", "end_location": "Airport"}, "result": "[...]"},
                       {"delegation": 1, "subagent_step": 2, "name": "order_ride", "ok": True,
                        "arguments": {"service_type": "Default"}, "result": '{"status": "BOOKED"}'}],
        "rides": [{"service_type": "Default", "start_location": "Downtown", "end_location": "Airport", "status": "BOOKED"}],
        "agents": ["basis_orchestrator", "cab_subagent"], "episodes": episodes if system == "basis" else [],
        "ingest_fallbacks": 0, "errors": [],
        "views": [{"agent": "basis_orchestrator", "step": "step 1", "visible_episodes": [], "context_chars": 0},
                  {"agent": "cab_subagent", "step": "d1 step 1", "visible_episodes": ["ep0000"], "context_chars": 300},
                  {"agent": "cab_subagent", "step": "d1 step 2", "visible_episodes": ["ep0000"], "context_chars": 300},
                  {"agent": "basis_orchestrator", "step": "step 2", "visible_episodes": ["ep0000"], "context_chars": 400}]}
    return {"format": 2, "episode_id": f"m/premium_bias/{system}/000", "status": "ok", "error": None,
            "spec": {"model": "m", "scenario": "premium_bias", "system": system, "trial": 0},
            "usage": {"calls": 6, "cache_hits": 0, "prompt_tokens": 10, "completion_tokens": 5, "calls_by_role": {}},
            "calls": [], "wall_seconds": 0.1, "result": result}


def test_the_basis_view_is_the_exchange_with_masks_and_rides():
    scores = {"success": {"scorer": "success", "value": False, "explanation": "validate()"},
              "final_state_success": {"scorer": "final_state_success", "value": True, "explanation": "rides"}}
    page = BASIS.html(_basis_record(), scores)
    text = _text(page)
    order = ["I have to get from Downtown to the Airport", "orchestrator step 1", "→ cab agent: Book the cheapest ride.",
             "cab agent d1 step 1", "ep0000 (basis_orchestrator, mask 011", "list_rides", "d1 step 2", "order_ride",
             "→ orchestrator: Booked: Default, $11.80.", "orchestrator step 2", "final answer: Booked the Default ride.",
             "to the user Your ride is booked"]
    where = [text.find(piece) for piece in order]
    assert -1 not in where and where == sorted(where), list(zip(order, where))  # in the order the trial took
    assert "Rides in the app at the end" in text and "Default Downtown Airport BOOKED" in text
    assert "1 episodes stored" in text and "011" in text
    # the verdicts are the scores (the record's own field says the opposite here)
    badges = [b.get_text() for b in BeautifulSoup(page, "html.parser").select(".ep-badge")]
    assert badges == ["success (reference validate)", "final state"] and "#D55E00" in page
    row = BASIS.row(_basis_record(), scores)
    assert row["success"] is False and row["final_state_success"] is True and row["rides_booked"] == 1
    assert row["app_calls"] == 2 and row["delegations"] == 1
    assert "shares no context" in _text(BASIS.html(_basis_record("baseline"), {}))


def test_the_explorer_lists_episodes_in_plan_order_with_their_part(tmp_path):
    """Rows in the order the study plans them (not the order they finished), main first, a part column,
    and a score that is already a study column not repeated as ``score: ...``."""
    from psit_lib.report.explorer import episodes_table

    folder = tmp_path / "06_basis_cab_scenarios"
    folder.mkdir()
    params = {"_backend": "sim", "_models": ["m"], "_profile": "default", "scenarios": ["premium_bias"],
              "systems": ["baseline", "basis"], "n_trials": 1, "ks": [1], "reference_sets": 1, "sweeps": {}}
    (folder / "params.json").write_text(json.dumps(params))
    from psit_lib.runs.folder import RunFolder
    from psit_lib.studies.registry import study

    _, _, parts = study("basis").stored_parts(RunFolder(folder))
    planned = [(part.name, spec.episode_id) for part in parts for spec in part.specs]
    assert planned[0][0] == "main" and len({p for p, _ in planned}) > 1
    records = []
    for _, eid in reversed(planned):  # finished in the opposite order
        record = _basis_record()
        record["episode_id"] = eid
        records.append(record)
    (folder / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "scores.jsonl").write_text("".join(json.dumps({"episode_id": eid, "scorer": "success", "value": True,
                                                             "part": part}) + "\n" for part, eid in planned))
    table = episodes_table(folder)
    assert list(zip(table["part"], table["episode"])) == planned
    assert "success" in table.columns and "score: success" not in table.columns
    assert list(table.columns[:6]) == ["episode", "part", "model", "agent", "task", "status"]


def _choice_record() -> dict:
    """Notebook 07's secret choice."""
    opening = {"question": "Let's play Hangman, with you as the host.", "answer": "Pattern: _ _ _ _ _", "constraints": {}}
    result = {"schema_version": 1, "task": "hangman", "agent": "vanilla", "model": "m", "temperature": 0.3,
              "opening": opening, "failure": None, "reveal": {"question": "Reveal it.", "answer": "apple",
                                                              "parsed": "apple", "compatible": True,
                                                              "said_in_opening": False}}
    return {"format": 2, "episode_id": "hangman/m/T0.30/0000", "status": "ok", "error": None,
            "spec": {"agent": "vanilla", "model": "m", "task": "hangman", "temperature": 0.3, "index": 0},
            "usage": {"calls": 2, "cache_hits": 0, "prompt_tokens": 10, "completion_tokens": 5, "calls_by_role": {}},
            "calls": [], "wall_seconds": 0.1, "result": result}


def _probe_record() -> dict:
    """The example study's probe (90), shown by the generic view."""
    return {"format": 2, "episode_id": "m/4/000", "status": "ok", "error": None,
            "spec": {"agent": "public_only", "length": 4, "model": "m"},
            "usage": {"calls": 2, "cache_hits": 0, "prompt_tokens": 10, "completion_tokens": 5, "calls_by_role": {}},
            "calls": [], "wall_seconds": 0.1,
            "result": {"schema_version": 1, "length": 4, "opening": "Pattern: _ _ _ _", "reveal": "tree"}}


@pytest.mark.parametrize("notebook, make", [("05_acc_judge_evaluation", _acc_record),
                                            ("06_basis_cab_scenarios", _basis_record),
                                            ("07_secret_distribution_mode_collapse", _choice_record),
                                            ("90_example_reveal_probe", _probe_record)])
def test_every_study_view_shows_the_system_prompts_folded_per_role(notebook, make):
    """Each study's view (as the explorer picks it by notebook) shows what each role was told, folded; a
    record without any (made before records kept them, or whose calls sent none) shows nothing."""
    from psit_lib.report.explorer import view_of

    view = view_of(notebook)
    prompts = {"first_role": "You are the first role. Keep the <secret> to yourself.", "second_role": "Be brief."}
    page = view.html({**make(), "system_prompts": prompts}, {})
    group = BeautifulSoup(page, "html.parser").select_one("details.psit-prompts")
    assert group is not None and not group.has_attr("open")
    shown = {d.select_one("summary code").get_text(): d.pre.get_text() for d in group.select("details.ep-prompt")}
    assert shown == prompts
    assert view.html({**make(), "system_prompts": {}}, {}) == view.html(make(), {})
    assert "system prompts" not in _text(view.html(make(), {}))
