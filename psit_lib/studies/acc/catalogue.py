"""Every prompt template of the ACC study, by name (for run metadata; see ``runs.metadata``)."""

from __future__ import annotations

from psit_lib.studies.acc.agents import AGENT_SYSTEM, COMPRESSOR_SYSTEM
from psit_lib.studies.acc.judge import MEMORY_SYSTEM, SCORING_SYSTEM


def prompt_catalogue() -> dict[str, str]:
    """name -> template text of the agents, the compressor and the judge."""
    return {"acc.agent_system": AGENT_SYSTEM, "acc.compressor_system": COMPRESSOR_SYSTEM,
            "acc.judge_memory_system": MEMORY_SYSTEM, "acc.judge_scoring_system": SCORING_SYSTEM}
