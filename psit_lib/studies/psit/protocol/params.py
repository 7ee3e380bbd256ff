"""Parameter models of the fork-test and secret-choice notebooks (02, 03, 04, 07).

Light on purpose: no agent, pandas or episode code, so ``psit run`` can validate every
parameter value before a kernel starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from psit_lib.runs.params import ModelRunParams, NotebookParams, check_profile
from psit_lib.studies.psit.agents.config import PSIT_AGENTS, STRATEGY_NAMES, UnknownAgentError
from psit_lib.studies.psit.agents.names import canonical_agent_name, validate_agent_names
from psit_lib.studies.psit.protocol.sweeps import NamedSweep, check_sweep_name, named_sweep
from psit_lib.studies.psit.tasks.registry import TASK_NAMES, validate_task_names

if TYPE_CHECKING:
    from psit_lib.studies.psit.protocol.fork_test import ForkSettings


class ForkTestParams(ModelRunParams):
    """Parameters of a fork-test notebook (defaults small; the study uses n_episodes=50).

    The protocol choices default to the study's reference code; the alternatives are kept so
    their effect can be measured (see each notebook's "Differences from the study")."""

    agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: list(PSIT_AGENTS))
    n_episodes: int = Field(10, ge=1, le=100_000)
    t_fork: int = Field(4, ge=1, le=26, description="turns before the fork, the opener counted as turn 1")
    n_candidates: int = Field(5, ge=2, le=50)
    candidate_order: Literal["reference", "sampled"] = "reference"
    system_prompt: Literal["neutral", "task"] = "neutral"
    private_cot_layout: Literal["interleaved", "system_block"] = "interleaved"
    condition_choice: Literal["free", "closed"] = "free"
    sweep: Annotated[str, AfterValidator(check_sweep_name)] = Field(
        "host_without_a_secret", description="the study's sweep shown in 'What decides this result' "
                                             "(protocol/sweeps.py: a name, never a simulator knob)")
    sweep_agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: ["workflow_overwrite", "vanilla"],
        description="(method, baseline) whose gap is swept", min_length=2, max_length=2)
    sweep_episodes: int = Field(6, ge=0, le=100_000, description=(
        "episodes per agent and value at the default n_episodes, proportionally fewer below it (0: no sweep)"))

    @property
    def swept(self) -> NamedSweep:
        """The sweep the ``sweep`` parameter names (its knob and values are the study's)."""
        return named_sweep(self.sweep)

    def fork_settings(self) -> ForkSettings:
        from psit_lib.studies.psit.protocol.fork_test import ForkSettings

        return ForkSettings(t_fork=self.t_fork, n_candidates=self.n_candidates,
                            candidate_order=self.candidate_order, system_prompt=self.system_prompt,
                            agent_options=(("reasoning_layout", self.private_cot_layout),))


WORKBOOK_AGENTS = ("vanilla", "private_cot",
                   *(f"{family}_{strategy}" for family in ("workflow", "autonomous") for strategy in STRATEGY_NAMES))
"""Every agent the workbook defines (the retrieval baselines are the memory libraries')."""
GRID_AGENTS = [*WORKBOOK_AGENTS, "mem0", "amem", "lightmem", "memoryos"]


class AblationParams(ForkTestParams):
    agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: list(GRID_AGENTS))
    tasks: Annotated[list[str], AfterValidator(validate_task_names)] = Field(
        default_factory=lambda: list(TASK_NAMES))
    n_episodes: int = Field(4, ge=1, le=100_000)
    sweep: Annotated[str, AfterValidator(check_sweep_name)] = "unprompted_memory_tool_use"
    sweep_agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: ["autonomous_overwrite", "vanilla"],
        description="(method, baseline) whose gap is swept", min_length=2, max_length=2)


class SecretChoiceParams(NotebookParams):
    """Parameters of notebook 07 (defaults small; a study would use n_samples=200 or more)."""

    tasks: Annotated[list[str], AfterValidator(validate_task_names)] = Field(
        default_factory=lambda: list(TASK_NAMES))
    temperatures: list[float] = Field(default_factory=lambda: [0.1, 0.3, 0.7, 1.0, 1.5])
    n_samples: int = Field(40, ge=1, le=100_000)
    models: list[str] = Field(default_factory=list)
    agent: str = "vanilla"
    max_tokens: int = Field(2048, ge=16, le=131_072)
    seed: int = 0
    profile: Annotated[str | None, AfterValidator(check_profile)] = None
    concurrency: int = Field(16, ge=1, le=4096)
    n_boot: int = Field(1000, ge=10, le=100_000)
    read_from: str | None = None
    suspect_threshold: float = Field(0.2, ge=0.0, le=1.0)

    @field_validator("temperatures")
    @classmethod
    def _valid_temperatures(cls, temperatures: list[float]) -> list[float]:
        if not temperatures:
            raise ValueError("name at least one temperature")
        bad = [t for t in temperatures if not 0.0 <= t <= 2.0]
        if bad:
            raise ValueError(f"temperature {bad[0]!r} is outside [0, 2]")
        if len({round(t, 6) for t in temperatures}) != len(temperatures):
            raise ValueError("a temperature is listed twice")
        return sorted(float(t) for t in temperatures)

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, agent: str) -> str:
        try:
            return canonical_agent_name(agent)
        except UnknownAgentError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("read_from")
    @classmethod
    def _existing_folder(cls, read_from: str | None) -> str | None:
        if read_from is not None and not Path(read_from).is_dir():
            raise ValueError(f"{read_from!r} is not a folder (give a run folder such as results/<run-id>)")
        return read_from
