"""Run metadata: what produced a table (backend, model, profile, seed, versions, commit, times)."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from importlib import metadata as importlib_metadata
from pathlib import Path
from collections.abc import Iterable, Mapping
from typing import Any

from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.paths import digest

PACKAGES = ("psit-lib", "openai", "langgraph", "pandas", "numpy", "scipy", "statsmodels",
            "wordfreq", "pydantic", "papermill")


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit(start: Path | None = None) -> str:
    """The commit of the working tree (with ``+dirty`` when it has changes), or 'unknown'."""
    cwd = start or Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (sha + ("+dirty" if dirty else "")) if sha else "unknown"


def base_metadata(settings: LLMSettings, *, seed: int, notebook: str, commit: str | None = None) -> dict[str, Any]:
    return {
        "notebook": notebook,
        "backend": settings.backend,
        "simulated": settings.simulated,
        "model": settings.model,
        "profile": settings.profile_label,
        "seed": seed,
        "settings": settings.public_dict(),
        "packages": package_versions(),
        "python": platform.python_version(),
        "git_commit": commit or git_commit(),
        "started": now_iso(),
    }


def prompt_fingerprints(templates: Mapping[str, str]) -> dict[str, str]:
    """A short SHA-256 of every prompt template, by name: two runs whose prompts differ show it."""
    return {name: digest(text.encode(), 12) for name, text in sorted(templates.items())}


def simulator_configuration(settings: LLMSettings, roles: Iterable[str]) -> dict[str, Any] | None:
    """What the simulated model assumed in this run: every knob of its profile and the declared
    constants of each role that answered calls (None on a real endpoint)."""
    if not settings.simulated:
        return None
    from psit_lib.sim import get_profile, role_assumptions

    profile = get_profile(settings.sim_profile)
    return {"profile": profile.name,
            "knobs": {k["knob"]: k["value"] for k in profile.knobs()},
            "roles": {role: {name: item["value"] if isinstance(item, dict) else item
                             for name, item in constants.items()}
                      for role, constants in role_assumptions(sorted(set(roles))).items()}}


def simulator_assumptions_table(settings: LLMSettings, roles: Iterable[str],
                                knobs: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Rows (source, assumption, value, meaning): the profile's knobs (all, or ``knobs``) and the
    named roles' constants; empty on a real endpoint, which has no such assumptions."""
    if not settings.simulated:
        return []
    from psit_lib.sim import get_profile, role_assumptions

    profile = get_profile(settings.sim_profile)
    wanted = None if knobs is None else set(knobs)
    rows = [{"source": f"profile {profile.name}", "assumption": k["knob"], "value": k["value"], "meaning": k["meaning"]}
            for k in profile.knobs() if wanted is None or k["knob"] in wanted]
    for role, constants in role_assumptions(list(roles)).items():
        rows += [{"source": f"role {role}", "assumption": name,
                  "value": item.get("value") if isinstance(item, dict) else item,
                  "meaning": item.get("meaning", "") if isinstance(item, dict) else ""}
                 for name, item in constants.items()]
    return rows
