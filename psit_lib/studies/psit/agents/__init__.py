"""PSIT agents with forkable checkpoints: vanilla, private CoT, workflow and autonomous memory.

Names load lazily (PEP 562), so the light modules of this package (``config``, ``names``) can be
imported for parameter checks without the model client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from psit_lib.lazy import lazy_attributes

if TYPE_CHECKING:
    from psit_lib.studies.psit.agents.chat_agent import ChatAgent
    from psit_lib.studies.psit.agents.config import (KINDS, PSIT_AGENTS, STRATEGY_NAMES, AgentConfig,
                                                     UnknownAgentError, parse_agent)

_NAMES = {"ChatAgent": "psit_lib.studies.psit.agents.chat_agent",
          **{name: "psit_lib.studies.psit.agents.config"
             for name in ("KINDS", "PSIT_AGENTS", "STRATEGY_NAMES", "AgentConfig", "UnknownAgentError", "parse_agent")}}

__all__ = ["AgentConfig", "ChatAgent", "KINDS", "PSIT_AGENTS", "STRATEGY_NAMES",
           "UnknownAgentError", "parse_agent"]


__getattr__, __dir__ = lazy_attributes(__name__, _NAMES, namespace=globals())
