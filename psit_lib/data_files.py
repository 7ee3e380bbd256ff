"""Where the workbench's data files are: the one resolver of ``data/`` and of configuration paths.

``data/`` is not package data (a wheel carries ``psit_lib`` without it), so :func:`data_root`
looks in three places and otherwise says what to do. This module imports nothing from
``psit_lib`` (the lowest layer, beside ``wire``); the simulator keeps its own copy of the rule.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "PSIT_DATA_DIR"
"""Environment variable naming the data root (the folder holding ``ddxplus/`` and ``reference/``)."""


class DataFilesNotFoundError(FileNotFoundError):
    """No data folder was found (a non-editable install without ``$PSIT_DATA_DIR``, or a wrong one)."""


def checkout_root() -> Path | None:
    """The checkout this ``psit_lib`` was imported from (it has ``pyproject.toml``), or None for an installed package."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() else None


def resolve_config_path(value: str) -> Path:
    """The absolute path a ``PSIT_MODEL_SETTINGS``/``PSIT_PROMPTS_FILE`` value names: notebooks run
    in ``notebooks/``, so a relative path found neither there nor in the checkout is returned as given."""
    path = Path(value.strip()).expanduser()
    root = checkout_root()
    if not path.is_absolute() and not path.exists() and root is not None and (root / path).exists():
        return (root / path).resolve()
    return path.resolve()


def data_root() -> Path:
    """The data folder: ``$PSIT_DATA_DIR``, else ``data/`` of the checkout this ``psit_lib`` was
    imported from (recognised by its ``pyproject.toml``), else ``./data``."""
    configured = os.environ.get(DATA_DIR_ENV)
    if configured:
        root = Path(configured)
        if not root.is_dir():
            raise DataFilesNotFoundError(
                f"{DATA_DIR_ENV} is set to {root}, which is not a folder; point it at a copy of the "
                "repository's data/ folder (with ddxplus/ and reference/) or unset it.")
        return root
    checkout = checkout_root()
    if checkout is not None and (checkout / "data").is_dir():
        return checkout / "data"
    here = Path.cwd() / "data"
    if here.is_dir():
        return here
    raise DataFilesNotFoundError(
        f"The workbench's data/ folder was not found (psit_lib is imported from {Path(__file__).parent}, "
        f"not from a checkout with data/, and there is no ./data): set {DATA_DIR_ENV} to a copy of the repository's "
        "data/ folder, or install the workbench in editable mode from its checkout (pip install -e .).")


def data_dir(*parts: str) -> Path:
    """A path under the data folder, e.g. ``data_dir("ddxplus")`` or ``data_dir("reference")``."""
    return data_root().joinpath(*parts)
