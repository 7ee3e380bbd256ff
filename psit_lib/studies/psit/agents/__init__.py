"""PSIT agents as LangGraph graphs: vanilla, private CoT, workflow and autonomous memory."""

from psit_lib.studies.psit.agents.chat_agent import ChatAgent
from psit_lib.studies.psit.agents.config import KINDS, PSIT_AGENTS, STRATEGY_NAMES, AgentConfig, UnknownAgentError, parse_agent

__all__ = ["AgentConfig", "ChatAgent", "KINDS", "PSIT_AGENTS", "STRATEGY_NAMES",
           "UnknownAgentError", "parse_agent"]
