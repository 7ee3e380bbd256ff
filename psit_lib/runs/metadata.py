"""Run metadata: what produced a table (backend, model, profile, seed, versions, commit, times)."""

from __future__ import annotations

import datetime as dt
import platform
import subprocess
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from psit_lib.llm.settings import LLMSettings

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


def base_metadata(settings: LLMSettings, *, seed: int, notebook: str) -> dict[str, Any]:
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
        "git_commit": git_commit(),
        "started": now_iso(),
    }
