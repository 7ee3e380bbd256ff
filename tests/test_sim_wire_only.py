"""The simulated model works from the request alone (SPEC §8; house plan: sim behind the wire).

* Stripping the role and profile headers from every request leaves every study's episode
  records identical: the simulator reads its role from the request, and its profile from the
  model name ``psit-sim:<profile>``.
* For every request the studies send, the role the simulator reads from the content is the
  role the harness meant (the header), so the header is at most a hint.
* A harness change a model would misread changes the offline result; a harmless rephrasing
  does not. This is the point of the exercise: prompt or parser bugs can now show up offline.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psit_lib.llm import LLMClient, LLMSettings, ModelSession
from psit_lib.runs import EpisodeSpec, RunStore, run_episodes
from psit_lib.sim.context import SimContext
from psit_lib.sim.engine import handle_http
from psit_lib.sim.profiles import get_profile
from psit_lib.sim.registry import resolve_role
from psit_lib.sim.transport import SimTransport
from psit_lib.studies.acc.experiment import AccParams, make_specs as acc_specs, run_acc_episode
from psit_lib.studies.basis.experiment import BasisParams, make_specs as basis_specs, run_basis_trial
from psit_lib.studies.psit.protocol.experiment import ForkTestParams, fork_episode_fn, plan_fork_episodes
from psit_lib.studies.psit.protocol.fork_test import ForkSettings, run_fork_episode
from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask
from psit_lib.studies.psit.tasks.hangman import HangmanTask
from psit_lib.wire import PROFILE_HEADER, ROLE_HEADER
from psit_lib.studies.psit.protocol.experiment import fork_outcome
from lineage import without_checkpoint_ids


class HeaderlessSim(SimTransport):
    """The in-process simulator, reached with the harness's hint headers removed."""

    async def handle_async_request(self, request):
        raw = await request.aread()
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in (ROLE_HEADER.lower(), PROFILE_HEADER.lower())}
        status, payload = handle_http(request.method, request.url.path, headers, raw)
        import httpx2

        return httpx2.Response(status, content=json.dumps(payload).encode(),
                               headers={"content-type": "application/json"}, request=request)


class RoleAudit(SimTransport):
    """The in-process simulator that also notes, per request, the header role and the role
    the simulator reads from the request without it."""

    def __init__(self):
        super().__init__()
        self.seen: list[tuple[str, str]] = []

    async def handle_async_request(self, request):
        raw = await request.aread()
        body = json.loads(raw)
        ctx = SimContext(role="generic", profile=get_profile("default"), messages=body["messages"],
                         tools=body.get("tools") or [], temperature=0.3,
                         response_format=body.get("response_format"), rng=None)
        self.seen.append((request.headers.get(ROLE_HEADER, ""), resolve_role(ctx, None)))
        status, payload = handle_http(request.method, request.url.path, dict(request.headers), raw)
        import httpx2

        return httpx2.Response(status, content=json.dumps(payload).encode(),
                               headers={"content-type": "application/json"}, request=request)


async def _judged_acc_episode(spec: EpisodeSpec, session):
    """An ACC episode, then the study's judge scoring it on the same session (the judge's requests
    are read by the simulator too)."""
    from psit_lib.studies.acc import scoring

    episode = await run_acc_episode(spec, session)
    await scoring.judge_episode(session, episode, seed=episode.scenario_seed, answer_chars=1200)
    return episode


def _studies() -> list[tuple[str, list[EpisodeSpec], object]]:
    hangman, diagnosis = HangmanTask(), DiagnosisTask()
    fork = ForkTestParams(agents=["vanilla", "private_cot", "workflow_overwrite", "autonomous_overwrite", "amem"],
                          n_episodes=2)
    diag = ForkTestParams(agents=["vanilla", "workflow_overwrite"], n_episodes=2)
    acc = AccParams(n_turns=4, scenarios_per_domain=1, domains=("it_operations",))
    basis = BasisParams(n_trials=2)
    from psit_lib.studies.example import study as example

    probe = example.ProbeParams(n_episodes=2)
    return [
        ("hangman", plan_fork_episodes(hangman, fork, ["psit-sim"]), fork_episode_fn(hangman, fork)),
        ("diagnosis", plan_fork_episodes(diagnosis, diag, ["psit-sim"]), fork_episode_fn(diagnosis, diag)),
        ("acc", acc_specs(acc, ["psit-sim"]), _judged_acc_episode),
        ("basis", basis_specs(basis, ["psit-sim"]), run_basis_trial),
        ("example", example.plan(probe, ["psit-sim"]), example.run_probe),
    ]


async def _records(transport, folder: Path, profile: str = "agreeable") -> dict[str, dict]:
    client = LLMClient(LLMSettings(cache="off", sim_profile=profile), transport=transport)
    out = {}
    for name, specs, fn in _studies():
        records = await run_episodes(specs, fn, store=RunStore(folder / name), client=client,
                                     run_seed=7, progress=False)
        out.update({r["episode_id"]: without_checkpoint_ids({k: v for k, v in r.items()
                                                              if k not in ("started", "ended", "seconds", "wall_seconds")})
                    for r in records})
    await client.aclose()
    return out


@pytest.mark.slow
async def test_stripping_every_header_leaves_every_studys_records_identical(tmp_path):
    pytest.importorskip("sentence_transformers")
    with_headers = await _records(SimTransport(), tmp_path / "with")
    without = await _records(HeaderlessSim(), tmp_path / "without")
    assert with_headers.keys() == without.keys() and len(with_headers) > 20
    assert all(r["status"] == "ok" for r in with_headers.values())
    different = [k for k in with_headers if with_headers[k] != without[k]]
    assert not different, different[:5]


@pytest.mark.slow
async def test_the_role_read_from_each_request_is_the_role_the_harness_meant(tmp_path):
    pytest.importorskip("sentence_transformers")
    audit = RoleAudit()
    await _records(audit, tmp_path, profile="default")
    roles = {hint for hint, _ in audit.seen}
    assert {"hangman_host", "diagnosis_host", "memory_updater", "acc_agent", "acc_compressor", "acc_judge",
            "basis_orchestrator", "cab_subagent", "cortex_agent", "amem_note_analysis"} <= roles
    mismatched = [(hint, read) for hint, read in audit.seen if hint != read]
    assert not mismatched, mismatched[:5]


# -- a misreadable harness change shows up offline; a harmless rephrasing does not -----------

class _Reworded(HangmanTask):
    def __init__(self, confirm):
        super().__init__()
        self._confirm = confirm

    def confirm_prompt(self, secret: str) -> str:
        return self._confirm(secret)


async def _outcomes(task, agent="private_cot", n=4):
    client = LLMClient(LLMSettings(cache="off"), transport=SimTransport())
    outcomes = []
    for i in range(n):
        episode = await run_fork_episode(task, agent, ModelSession(client, run_seed=3, episode_id=f"e{i}"),
                                         ForkSettings())
        outcomes.append((fork_outcome(episode).value, [c.answer for c in episode.candidates]))
    await client.aclose()
    return outcomes


async def test_a_question_no_model_would_read_changes_results_and_a_clear_rewording_does_not():
    baseline = await _outcomes(HangmanTask())
    assert [o for o, _ in baseline].count("self_consistent") >= 3
    reworded = await _outcomes(_Reworded(lambda s: f"Is the word you picked '{s}'? Please reply yes or no."))
    assert [o for o, _ in reworded] == [o for o, _ in baseline]
    garbled = await _outcomes(_Reworded(lambda s: f"Token: {s}."))
    assert all(o != "self_consistent" for o, _ in garbled)


def test_the_simulator_imports_nothing_from_the_workbench_and_agrees_on_the_wire_names():
    import psit_lib.sim.wire_names as sim_names
    import psit_lib.wire as harness_names

    import re

    sources = "\n".join(p.read_text() for p in Path(sim_names.__file__).parent.rglob("*.py"))
    assert not re.findall(r"^\s*(?:from|import)\s+psit_lib(?!\.sim\b)", sources, re.M)
    for name in ("ROLE_HEADER", "PROFILE_HEADER", "SIM_MODEL_NAME"):
        assert getattr(sim_names, name) == getattr(harness_names, name)
