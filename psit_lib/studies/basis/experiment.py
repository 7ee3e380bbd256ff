"""Notebook 06's experiment: parameters, episode specs and one BASIS trial (SPEC §6).

One trial = one scenario's request served once by one system on a fresh, seeded CabApp. The
app's seed depends on (run seed, scenario, trial), not on the system or model, so trial *i* of
every system starts from the same app.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from psit_lib.studies.basis.passk import DEFAULT_KS
from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.settings import SIM_MODEL_NAME
from psit_lib.runs.params import ModelRunParams, Sweeps, distinct
from psit_lib.runs.runner import EpisodeSpec, study_episode
from psit_lib.runs.sweeps import scaled_sweep_size
from psit_lib.studies.basis.records import BasisTrial, CortexEpisode, Ride
from psit_lib.studies.basis.scenarios import SCENARIOS
from psit_lib.studies.basis.cab_app import make_cab_app
from psit_lib.studies.basis.cortex import format_mask

from psit_lib.studies.basis.system import SYSTEMS, BasisLimits, CabMultiAgentSystem, SystemKind


def _known_scenarios(value: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [name for name in value if name not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario(s) {unknown}; choose from {list(SCENARIOS)}")
    return tuple(distinct(value, "scenario"))


def _positive_ks(value: tuple[int, ...]) -> tuple[int, ...]:
    if not value or any(k < 1 for k in value):
        raise ValueError("ks must be a non-empty list of positive integers")
    return tuple(sorted(set(value)))


class BasisParams(ModelRunParams):
    """Parameters of notebook 06 (the full study uses the defaults: 3 scenarios x 2 systems x 10)."""

    scenarios: Annotated[tuple[str, ...], AfterValidator(_known_scenarios)] = tuple(SCENARIOS)
    systems: Annotated[tuple[SystemKind, ...], AfterValidator(lambda v: tuple(distinct(v, "system")))] = SYSTEMS
    n_trials: int = Field(10, ge=1, le=10_000)
    ks: Annotated[tuple[int, ...], AfterValidator(_positive_ks)] = DEFAULT_KS
    orchestrator_max_steps: int = Field(5, ge=1, le=50)
    subagent_max_steps: int = Field(6, ge=1, le=50)
    reference_sets: int = Field(2, ge=0, le=1000, description=(
        "independent sets of k fresh trials per k for the reference code's pass^k (study: 10; 0 skips)"))
    sweeps: Sweeps = Field(
        default_factory=lambda: {"notices_contradictions": [0.0, 0.5, 0.9], "explicit_detail_weight": [0.2, 0.44, 1.0]},
        description="simulator assumption -> values, each swept with sweep_trials trials per cell")
    sweep_trials: int = Field(4, ge=0, le=10_000, description=(
        "trials per (scenario, system) at each swept value at the default n_trials, proportionally fewer below it"))

    @model_validator(mode="after")
    def _some_k_fits(self) -> "BasisParams":
        if not self.effective_ks:
            raise ValueError(f"no k in ks={list(self.ks)} is <= n_trials={self.n_trials}")
        return self

    @property
    def effective_ks(self) -> tuple[int, ...]:
        """The k values that n_trials can estimate (pass@k and pass^k need k <= n)."""
        return tuple(k for k in self.ks if k <= self.n_trials)


def app_seed(run_seed: int, scenario: str, trial: int) -> int:
    """The CabApp seed of a trial; the system is left out so both systems meet the same app."""
    return derive_seed(run_seed, f"{scenario}/{trial:03d}", "cab_app", 0)


def _spec(episode_id: str, params: BasisParams, model: str, scenario: str, system: str, trial: int,
          **design: int) -> EpisodeSpec:
    return EpisodeSpec(episode_id, {
        "model": model, "scenario": scenario, "system": system, "trial": trial, **design,
        "app_seed": app_seed(params.seed, scenario, trial),
        "orchestrator_max_steps": params.orchestrator_max_steps, "subagent_max_steps": params.subagent_max_steps})


def make_specs(params: BasisParams, models: Sequence[str] = (SIM_MODEL_NAME,)) -> list[EpisodeSpec]:
    """One episode per (model, scenario, system, trial), ids ``model/scenario/system/NNN``; the
    CabApp seed depends on neither model nor system, so every model and system meets the same apps."""
    if not models:
        raise ValueError("make_specs needs at least one model name.")
    return [_spec(f"{model}/{scenario}/{system}/{trial:03d}", params, model, scenario, system, trial)
            for model, scenario, system in itertools.product(models, params.scenarios, params.systems)
            for trial in range(params.n_trials)]


def reference_set_specs(params: BasisParams, models: Sequence[str] = (SIM_MODEL_NAME,)) -> list[EpisodeSpec]:
    """The reference code's design for pass^k and pass@k: for every k, ``reference_sets``
    independent sets of k fresh trials (their own CabApp seeds), per (model, scenario, system).
    Ids ``model/scenario/system/ref-k{k}/set{j}/run{r}``."""
    return [_spec(f"{model}/{scenario}/{system}/ref-k{k}/set{j}/run{r}", params, model, scenario, system,
                  10_000 + 1_000 * k + 100 * j + r,  # never a main-design trial's seed
                  ref_k=k, ref_set=j, ref_run=r)
            for model, scenario, system in itertools.product(models, params.scenarios, params.systems)
            for k in params.effective_ks for j in range(params.reference_sets) for r in range(k)]


def sweep_specs(params: BasisParams, sweep_models: dict[Any, str]) -> list[EpisodeSpec]:
    """``sweep_trials`` trials per (scenario, system) at every swept value (one simulated model each),
    fewer in a quick run."""
    per_value = scaled_sweep_size(params.sweep_trials, params.n_trials, BasisParams.model_fields["n_trials"].default)
    if not sweep_models or not per_value:
        return []
    return make_specs(params.model_copy(update={"n_trials": per_value,
                                                "ks": (1,)}), list(sweep_models.values()))


@study_episode(BasisTrial)
async def run_basis_trial(spec: EpisodeSpec, session: Any) -> BasisTrial:
    """Run one trial and return its record body (both verdicts recorded; the scorers recompute
    them from the stored calls and rides)."""
    params = spec.params
    name = params["scenario"]
    scenario = SCENARIOS[name]
    limits = BasisLimits(int(params["orchestrator_max_steps"]), int(params["subagent_max_steps"]))
    app = make_cab_app(int(params["app_seed"]))
    system = CabMultiAgentSystem(scenario, app, session, system=params["system"], limits=limits)
    run = await system.run()
    registry = system.registry
    rides = [Ride.model_validate(ride, from_attributes=True) for ride in app.ride_history]
    episodes = [CortexEpisode(  # masks as strings, with the agents that may see each episode
        episode_id=ep.episode_id, source=ep.source_agent_id, access_mask=format_mask(ep.access_mask, registry.width),
        visible_to=registry.agents_in(ep.access_mask), summary=ep.summary, raw_trace=ep.raw_trace,
        cortex_window=ep.metadata.get("cortex_window", []),
        **{key: ep.metadata.get(key) for key in ("kind", "step", "ingest", "mask_text", "fallback_reason")})
        for ep in run.episodes]
    return BasisTrial(
        model=params.get("model") or session.model,
        scenario=name,
        trial=int(params["trial"]),
        app_seed=int(params["app_seed"]),
        success=scenario.validate(run.tool_calls),
        final_state_success=scenario.final_state(run.tool_calls, rides),
        rides=rides,
        agents=list(registry.agent_ids),
        episodes=episodes,
        ingest_fallbacks=sum(ep.ingest == "fallback" for ep in episodes),
        **{f.name: getattr(run, f.name) for f in dataclasses.fields(run) if f.name != "episodes"},
    )
