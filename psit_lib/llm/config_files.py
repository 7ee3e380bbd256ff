"""Where a configuration file named by an environment variable is, wherever the reader runs.

``PSIT_MODEL_SETTINGS`` and ``PSIT_PROMPTS_FILE`` are usually given relative to the checkout
(``notebooks/params/study_model_settings.yaml``), but the notebooks run with ``notebooks/`` as
their working directory (``psit run``, Jupyter). So a relative path is read from the working
directory when the file is there, else from the checkout this ``psit_lib`` was imported from
(recognised by its ``pyproject.toml``); the settings record the absolute path that was read.
"""

from __future__ import annotations

from pathlib import Path

from psit_lib.data_files import checkout_root


def resolve_config_path(value: str) -> Path:
    """The absolute path a configuration variable names (see the module docstring); a path
    found nowhere is returned as given (absolute), for the reader to name in its error."""
    path = Path(value.strip()).expanduser()
    if path.is_absolute() or path.exists():
        return path.resolve()
    root = checkout_root()
    if root is not None and (root / path).exists():
        return (root / path).resolve()
    return path.resolve()
