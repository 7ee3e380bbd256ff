"""Every prompt template of the ACC study by name (its ``prompts.toml``, judge variants included), for run metadata."""

from __future__ import annotations

from psit_lib.llm.prompts import load_prompts

PROMPTS = load_prompts(__package__ or "psit_lib.studies.acc")


def prompt_catalogue() -> dict[str, str]:
    """name -> template text of the agents, the compressor and the judge (with its variants);
    ``.versions`` gives each one's version."""
    return PROMPTS.catalogue()
