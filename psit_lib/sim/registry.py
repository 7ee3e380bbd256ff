"""The role registry: which simulated behaviour answers a request.

Roles are selected by the ``X-PSIT-Role`` header the harness sends (real servers ignore it).
An unknown or missing role still gets a valid, minimal reply, so third-party libraries that
never send the header keep working against the loopback server.
"""

from __future__ import annotations

from typing import Callable

from .context import SimContext, SimReply

RoleHandler = Callable[[SimContext], SimReply]
_ROLES: dict[str, RoleHandler] = {}


def register_role(name: str) -> Callable[[RoleHandler], RoleHandler]:
    def decorate(fn: RoleHandler) -> RoleHandler:
        if name in _ROLES and _ROLES[name] is not fn:
            raise ValueError(f"simulator role {name!r} is registered twice")
        _ROLES[name] = fn
        return fn
    return decorate


def minimal_reply(ctx: SimContext) -> SimReply:
    """A valid reply for roles the simulator does not model: '{}' for JSON, else a short ack.

    Requests a memory library sends without our role header (Mem0, MemoryOS) are recognised
    from their prompts and answered in the format the library parses.
    """
    from .roles.memory_libraries import library_reply

    return library_reply(ctx) or SimReply(content="{}" if ctx.wants_json else "OK.")


def handler_for(role: str | None) -> RoleHandler:
    _load_builtin_roles()
    return _ROLES.get(role or "", minimal_reply)


def known_roles() -> list[str]:
    _load_builtin_roles()
    return sorted(_ROLES)


def _load_builtin_roles() -> None:
    import psit_lib.sim.roles  # noqa: F401  (registers the task roles on import)
