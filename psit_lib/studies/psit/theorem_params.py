"""Parameters of notebook 01 (the theorem illustration), validated before anything runs: the
theory ones (no model) and those of its tiny live fork test on the configured backend."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from psit_lib.studies.psit.agents.names import validate_agent_names
from psit_lib.runs.params import ModelRunParams


class TheoremParams(ModelRunParams):
    """Parameters of ``01_theorem_illustration`` (see the notebook's parameters cell)."""

    # Theory (exact computation and seeded Monte Carlo of idealised hosts; no model).
    word_length: int = Field(5, ge=3, le=12)  # the vocabulary keeps 3..12-letter words
    n_games: int = Field(200, ge=1, le=100_000)
    n_turns: int = Field(10, ge=1, le=26)
    k: int = Field(5, ge=2, le=50)
    t_fork: int = Field(4, ge=1, le=26)
    n_episodes: int = Field(2000, ge=10, le=10_000_000)
    sizes: list[Annotated[int, Field(ge=1)]] = Field(default_factory=lambda: [2, 3, 5, 10, 20, 50, 100, 300],
                                                     min_length=1)
    temperatures: list[Annotated[float, Field(gt=0)]] = Field(default_factory=lambda: [1.0, 0.3])
    example_min_size: int = Field(10, ge=2)
    example_max_size: int = Field(40, ge=2)
    entropy_dictionary_size: int = Field(60, ge=2, le=400)
    entropy_guesses: str = Field("eaot", pattern="^[a-z]+$")
    # Live fork test on the configured backend (through psit_lib, like notebook 02).
    # (plus models, profile, seed, temperature, max_tokens, concurrency from ModelRunParams)
    live_agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: ["vanilla", "workflow_overwrite"])
    n_live_episodes: int = Field(6, ge=1, le=10_000)

    @field_validator("sizes", "temperatures", "entropy_guesses")
    @classmethod
    def _distinct(cls, values: Any, info: ValidationInfo) -> Any:
        if len(set(values)) != len(values):
            raise ValueError("a value is listed twice")
        return sorted(values) if info.field_name == "sizes" else values

    @model_validator(mode="after")
    def _example_range(self) -> TheoremParams:
        if self.example_min_size > self.example_max_size:
            raise ValueError(
                f"example_min_size ({self.example_min_size}) exceeds example_max_size ({self.example_max_size})"
            )
        return self
