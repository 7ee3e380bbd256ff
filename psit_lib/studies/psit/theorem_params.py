"""Parameters of notebook 01 (the theorem illustration), validated before anything runs.

The notebook mixes exact computation (no model) with a tiny live fork test on the configured
backend, so its parameters come in two groups: the theory ones (word length, games, k,
Monte-Carlo episodes, temperatures of the frequency-weighted POCA, the small dictionary of
the entropy table) and the live ones (agents, episodes, model sampling). Defaults are small so
the notebook runs under nbval in well under a minute; comments in the notebook give the
full-study values.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, field_validator, model_validator

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
    sizes: list[int] = Field(default_factory=lambda: [2, 3, 5, 10, 20, 50, 100, 300])
    temperatures: list[float] = Field(default_factory=lambda: [1.0, 0.3])
    example_min_size: int = Field(10, ge=2)
    example_max_size: int = Field(40, ge=2)
    entropy_dictionary_size: int = Field(60, ge=2, le=400)
    entropy_guesses: str = "eaot"
    # Live fork test on the configured backend (through psit_lib, like notebook 02).
    # (plus models, profile, seed, temperature, max_tokens, concurrency from ModelRunParams)
    live_agents: Annotated[list[str], AfterValidator(validate_agent_names)] = Field(
        default_factory=lambda: ["vanilla", "workflow_overwrite"])
    n_live_episodes: int = Field(6, ge=1, le=10_000)

    @field_validator("sizes")
    @classmethod
    def _sizes_positive_and_distinct(cls, sizes: list[int]) -> list[int]:
        if not sizes:
            raise ValueError("give at least one compatible-set size")
        if any(size < 1 for size in sizes):
            raise ValueError("every compatible-set size must be at least 1")
        if len(set(sizes)) != len(sizes):
            raise ValueError("a compatible-set size is listed twice")
        return sorted(sizes)

    @field_validator("temperatures")
    @classmethod
    def _temperatures_positive(cls, temperatures: list[float]) -> list[float]:
        if any(not value > 0 for value in temperatures):
            raise ValueError("temperatures of the frequency-weighted POCA must be positive")
        if len(set(temperatures)) != len(temperatures):
            raise ValueError("a temperature is listed twice")
        return temperatures

    @field_validator("entropy_guesses")
    @classmethod
    def _distinct_letters(cls, guesses: str) -> str:
        if not guesses.isascii() or not guesses.isalpha() or guesses != guesses.lower():
            raise ValueError("entropy_guesses must be lowercase letters a-z, e.g. 'eaot'")
        if len(set(guesses)) != len(guesses):
            raise ValueError("entropy_guesses repeats a letter; the player never does")
        return guesses

    @model_validator(mode="after")
    def _example_range(self) -> TheoremParams:
        if self.example_min_size > self.example_max_size:
            raise ValueError(
                f"example_min_size ({self.example_min_size}) exceeds example_max_size ({self.example_max_size})"
            )
        return self
