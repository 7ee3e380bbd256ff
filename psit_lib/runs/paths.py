"""Where results go: the results root (``PSIT_RESULTS_DIR``), the figures copy (``PSIT_FIGURES_DIR``,
written only by ``psit run``) and interactive runs, kept under :func:`adhoc_root` so a notebook run
by hand never mixes with or replaces what ``psit run`` produced."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from psit_lib.data_files import checkout_root


def repo_root() -> Path:
    return checkout_root() or Path.cwd()


def results_root() -> Path:
    return Path(os.environ.get("PSIT_RESULTS_DIR") or repo_root() / "results")


def figures_dir() -> Path:
    return Path(os.environ.get("PSIT_FIGURES_DIR") or repo_root() / "figures")


def digest(data: Any, length: int = 16) -> str:
    """A short SHA-256 of ``data`` as canonical JSON (bytes as they are): the one hash of identities,
    fingerprints, prompt texts and by-hand folder names."""
    raw = data if isinstance(data, bytes) else json.dumps(data, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()[:length]


def adhoc_root() -> Path:
    """Where notebooks run by hand (no ``psit run``, so no ``PSIT_RUN_DIR``) keep their run
    folders: ``PSIT_ADHOC_DIR``; else ``adhoc/`` under ``PSIT_RESULTS_DIR`` when that is set
    (results moved on purpose stay together); else the user's cache,
    ``$XDG_CACHE_HOME/psit/adhoc`` (``~/.cache/psit/adhoc``), never the repository."""
    if os.environ.get("PSIT_ADHOC_DIR"):
        return Path(os.environ["PSIT_ADHOC_DIR"])
    if os.environ.get("PSIT_RESULTS_DIR"):
        return Path(os.environ["PSIT_RESULTS_DIR"]) / "adhoc"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "psit" / "adhoc"
