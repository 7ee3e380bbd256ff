"""Agent names: which exist, their canonical form, the registry of agent families.

Light on purpose (no model client): parameter validation imports it before any
kernel starts (``psit run``).
"""

from __future__ import annotations

from typing import Any, Callable

from psit_lib.studies.psit.agents.config import ALL_PSIT_AGENTS, UnknownAgentError, parse_agent

AgentBuilder = Callable[[str, str, str], Any]
"""``builder(name, system_prompt, host_role)`` -> an agent with the ``ForkableAgent`` protocol."""
_FAMILIES: dict[str, AgentBuilder] = {}

# Agents whose module is imported only when one of them is built, so the fork test and the
# parameter checks work without their heavy optional dependencies (torch, memory libraries).
OPTIONAL_AGENTS: dict[str, str] = {name: "psit_lib.studies.psit.agents.baselines"
                                   for name in ("mem0", "amem", "lightmem", "memoryos")}


def register_agent_family(prefix: str, builder: AgentBuilder) -> None:
    """Agents whose name is ``prefix`` or starts with ``prefix + '_'`` are built by ``builder``."""
    _FAMILIES[prefix] = builder


def family_builder(text: str) -> AgentBuilder | None:
    """The registered builder of a lowercase agent name, if a family claims it."""
    return next((b for prefix, b in _FAMILIES.items() if text == prefix or text.startswith(prefix + "_")), None)


def known_agents() -> list[str]:
    """Every agent name the registry knows: the PSIT agents, the baselines and the registered families."""
    return list(dict.fromkeys([*ALL_PSIT_AGENTS, *OPTIONAL_AGENTS, *_FAMILIES]))


def canonical_agent_name(name: str) -> str:
    """The table name of an agent, or UnknownAgentError listing every agent the registry knows."""
    text = name.strip().lower()
    if text in OPTIONAL_AGENTS or family_builder(text):
        return text
    try:
        return parse_agent(text).name
    except UnknownAgentError:
        raise UnknownAgentError(f"unknown agent {name!r}; valid agents: {', '.join(known_agents())}") from None


def validate_agent_names(names: list[str]) -> list[str]:
    """Canonical names for a parameter list of agents: known, at least one, no repeats."""
    canonical = []
    for name in names:
        try:
            canonical.append(canonical_agent_name(name))
        except UnknownAgentError as exc:
            raise ValueError(str(exc)) from None
    if not canonical:
        raise ValueError("name at least one agent")
    if len(set(canonical)) != len(canonical):
        raise ValueError("an agent is listed twice")
    return canonical
