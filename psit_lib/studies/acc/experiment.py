"""Notebook 05's experiment: parameters, episode specs and one live evaluation (SPEC §5). A scenario's seed
depends on (run seed, domain, scenario index) only, so every model meets the same scripts.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.settings import SIM_MODEL_NAME
from psit_lib.runs.params import ModelRunParams, Sweeps, distinct
from psit_lib.runs.runner import EpisodeSpec, study_episode

from psit_lib.studies.acc.agents import DEFAULT_RETRIEVAL_KS, make_agents
from psit_lib.studies.acc.judge import JUDGE_VARIANTS
from psit_lib.studies.acc.records import AccEpisode, AccTurn
from psit_lib.studies.acc.scenarios import DOMAINS, PAPER_DOMAINS, build_scenario

SWEEPS: dict[str, tuple[object, ...]] = {"attention_tokens": (500, 2000, 8000), "answer_elaboration_tokens": (0, 400)}
"""The study's sweeps under "What decides this result": simulator assumption -> values (the
notebook names no knob; ``sweeps`` overrides this on the command line)."""


class AccParams(ModelRunParams):
    """Parameters of notebook 05 (the full study: notebooks/params/study_scale.yaml). One top-5
    retrieval agent, as the paper; ``retrieval_ks=[3, 5]`` runs both (a four-way judge: a
    registered difference)."""

    domains: tuple[str, ...] = PAPER_DOMAINS
    n_turns: int = Field(10, ge=1, le=1000)
    scenarios_per_domain: int = Field(1, ge=1, le=100_000)
    retrieval_ks: tuple[int, ...] = Field(DEFAULT_RETRIEVAL_KS, min_length=1, description=(
        "one retrieval agent per k; one (top-5) keeps the paper's three-way judge"))
    recall_limit: int = Field(8, ge=1, le=100)
    max_qualified: int = Field(3, ge=0, le=16)
    gate_min_score: float = Field(0.1, ge=0.0, le=1.0)
    judge_answer_chars: int = Field(1200, ge=100, le=100_000)
    n_boot: int = Field(1000, ge=100, le=100_000)
    judge_variants: tuple[str, ...] = Field(("standard", "strict_rubric", "five_point", "reversed_order"),
                                            description="judge prompts every recorded turn is re-scored with")
    sweeps: Sweeps = Field(
        default_factory=lambda: {knob: list(values) for knob, values in SWEEPS.items()},
        description="simulator assumption -> values, each swept on a small run (the study's SWEEPS by default)")
    sweep_turns: int = Field(12, ge=2, le=1000, description="turns of each swept run (first domain)")
    sweep_scenarios: int = Field(3, ge=2, le=10_000, description=(
        "scenarios of the first domain per swept value; the gap's interval is over scenarios"))

    @field_validator("judge_variants", "domains")
    @classmethod
    def _known(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        variants = info.field_name == "judge_variants"
        known, what = (list(JUDGE_VARIANTS), "judge variant") if variants else (list(DOMAINS), "domain")
        unknown = [v for v in value if v not in known]
        if unknown:
            raise ValueError(f"unknown {what}(s) {unknown}; choose from {known}")
        return tuple(distinct(value, what, allow_empty=variants))


def scenario_seed(run_seed: int, domain: str, index: int) -> int:
    """The script seed of a scenario (independent of model and of everything the agents do)."""
    return derive_seed(run_seed, f"{domain}/{index:03d}", "acc_scenario", 0)


def make_specs(params: AccParams, models: Sequence[str] = (SIM_MODEL_NAME,)) -> list[EpisodeSpec]:
    """One episode per (model, domain, scenario index), ids ``model/domain/NNN``."""
    if not models:
        raise ValueError("make_specs needs at least one model name.")
    specs = []
    for model, domain in itertools.product(models, params.domains):
        for index in range(params.scenarios_per_domain):
            specs.append(EpisodeSpec(f"{model}/{domain}/{index:03d}", {
                "model": model, "domain": domain, "index": index,
                "scenario_seed": scenario_seed(params.seed, domain, index),
                "n_turns": params.n_turns, "retrieval_ks": list(params.retrieval_ks),
                "recall_limit": params.recall_limit, "max_qualified": params.max_qualified,
                "gate_min_score": params.gate_min_score,
                "judge_answer_chars": params.judge_answer_chars,
            }))
    return specs


@study_episode(AccEpisode)
async def run_acc_episode(spec: EpisodeSpec, session: Any) -> AccEpisode:
    """Run one scenario live (generation only): per turn the scripted query and every agent's
    answer, in the fixed order. The judge scores the stored turns afterwards (the study's
    ``judge`` scorer, on this episode's ``judge`` branch)."""
    p = spec.params
    scenario = build_scenario(p["domain"], int(p["n_turns"]), int(p["scenario_seed"]))
    agents = make_agents(session, ks=tuple(int(k) for k in p["retrieval_ks"]), recall_limit=int(p["recall_limit"]),
                         max_qualified=int(p["max_qualified"]), min_score=float(p["gate_min_score"]))
    turns: list[AccTurn] = []
    for turn in scenario.turns:
        query = turn.text  # the judge plays the user: it issues the scripted query
        answers = {agent.name: await agent.respond(turn.index, query) for agent in agents}  # fixed order
        turns.append(AccTurn(turn=turn.index, topic=turn.topic, query=query, agents=answers))
    return AccEpisode(
        model=p.get("model") or session.model,
        domain=p["domain"], scenario_id=scenario.scenario_id,
        scenario_seed=int(p["scenario_seed"]), n_turns=len(turns),
        turns=turns,
        ccs_failures=sum(not t.agents["acc"].details["ccs_valid"] for t in turns))
