"""The offline simulated model of SPEC §8 (deterministic, information-flow faithful)."""

from .context import SimContext, SimReply
from .engine import complete
from .profiles import PROFILES, SimProfile, get_profile
from .registry import known_roles, register_role, role_assumptions
from . import roles  # noqa: F401  (registers the built-in roles)

__all__ = ["PROFILES", "SimContext", "SimProfile", "SimReply", "complete", "get_profile",
           "known_roles", "register_role", "role_assumptions"]
