"""Where results go: the repository, the results root and the figures copy.

``PSIT_RESULTS_DIR`` moves the results root (default ``results/`` in the repository);
``PSIT_FIGURES_DIR`` moves the copy of the latest run's figures (default ``figures/``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def repo_root() -> Path:
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def results_root() -> Path:
    return Path(os.environ.get("PSIT_RESULTS_DIR") or repo_root() / "results")


def figures_dir() -> Path:
    return Path(os.environ.get("PSIT_FIGURES_DIR") or repo_root() / "figures")


def params_hash(params: dict[str, Any]) -> str:
    text = json.dumps(params, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]
