"""The role registry: which simulated behaviour answers a request (tiers and tie-breaking: README.md).

A real model works out its task from the request itself, so every role registers a *recogniser*
over the request and its *assumptions* (constants beyond the profile knobs, recorded in run
metadata). Importing ``psit_lib.sim`` registers the built-in roles, so the registry imports none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .context import SimContext, SimReply

RoleHandler = Callable[[SimContext], SimReply]
Recogniser = Callable[[SimContext], bool]
GENERIC_ROLE = "generic"


@dataclass(frozen=True)
class RoleSpec:
    name: str
    handler: RoleHandler
    recognise: Recogniser | None = None
    assumptions: Mapping[str, Any] = field(default_factory=dict)
    tier: int = 1


_ROLES: dict[str, RoleSpec] = {}


def register_role(name: str, *, recognise: Recogniser | None = None, tier: int = 1,
                  assumptions: Mapping[str, Any] | None = None) -> Callable[[RoleHandler], RoleHandler]:
    """Register ``fn`` as the behaviour of role ``name``, recognised by ``recognise``."""
    def decorate(fn: RoleHandler) -> RoleHandler:
        if name in _ROLES and _ROLES[name].handler is not fn:
            raise ValueError(f"simulator role {name!r} is registered twice")
        _ROLES[name] = RoleSpec(name, fn, recognise, dict(assumptions or {}), tier)
        return fn
    return decorate


def minimal_reply(ctx: SimContext) -> SimReply:
    """A valid reply for requests the simulator does not model: '{}' for JSON, else a short ack."""
    return SimReply(content="{}" if ctx.wants_json else "OK.")


def recognised_roles(ctx: SimContext) -> list[str]:
    """The accepting roles of the lowest tier that has any (registration order)."""
    accepted = [spec for spec in _ROLES.values() if spec.recognise is not None and spec.recognise(ctx)]
    if not accepted:
        return []
    top = min(spec.tier for spec in accepted)
    return [spec.name for spec in accepted if spec.tier == top]


def resolve_role(ctx: SimContext, hint: str | None = None) -> str:
    """The role this request reads as; ``hint`` (the optional header) only breaks ties."""
    accepted = recognised_roles(ctx)
    if len(accepted) == 1:
        return accepted[0]
    if accepted:
        return hint if hint in accepted else accepted[0]
    return hint if hint in _ROLES else GENERIC_ROLE


def handler_for(role: str | None) -> RoleHandler:
    spec = _ROLES.get(role or "")
    return spec.handler if spec is not None else minimal_reply


def known_roles() -> list[str]:
    return sorted(_ROLES)


def role_assumptions(roles: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The declared assumption constants of ``roles`` (default: every role)."""
    names = roles if roles is not None else sorted(_ROLES)
    return {name: dict(_ROLES[name].assumptions) for name in names if name in _ROLES}
