"""A researcher's own agents, tasks and studies, registered from their own modules.

A plug-in module registers what it adds when imported; ``PSIT_PLUGINS`` (module names or ``.py``
paths) or an entry point of the ``psit.plugins`` group names it. :func:`load_plugins` runs before
any parameter is validated, so ``psit run`` and every notebook see the same names.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path

PLUGINS_ENV = "PSIT_PLUGINS"
ENTRY_POINT_GROUP = "psit.plugins"

_loaded: dict[str, str] = {}  # what was loaded: entry -> where from


class PluginError(ImportError):
    """A plug-in could not be loaded (one sentence naming it and why)."""

    def _render_traceback_(self) -> list[str]:  # IPython: the sentence only, no traceback
        return [f"\x1b[31mPluginError\x1b[0m: {self}"]


def plugin_entries(env: str | None = None) -> list[str]:
    """The entries of ``PSIT_PLUGINS`` (or ``env``), in order, blanks dropped."""
    text = os.environ.get(PLUGINS_ENV, "") if env is None else env
    return [e.strip() for e in text.split(",") if e.strip()]


def is_file_entry(entry: str) -> bool:
    return entry.endswith(".py") or os.sep in entry or "/" in entry


def _import_file(path: Path) -> None:
    name = f"psit_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load_plugins(env: str | None = None) -> dict[str, str]:
    """Import every plug-in not yet loaded (entry points, then ``PSIT_PLUGINS``); what is loaded,
    entry -> source. PluginError naming the first that fails."""
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        key = f"entry point {ep.name}"
        if key in _loaded:
            continue
        try:
            target = ep.load()
            if callable(target):
                target()
        except Exception as exc:
            raise PluginError(f"the psit plug-in {ep.name!r} (entry point {ep.value}) failed to load: "
                              f"{_why(exc)}") from None
        _loaded[key] = ep.value
    for entry in plugin_entries(env):
        if entry in _loaded:
            continue
        try:
            if is_file_entry(entry):
                path = Path(entry).expanduser().resolve()
                if not path.is_file():
                    raise FileNotFoundError(f"no file {path}")
                _import_file(path)
            else:
                importlib.import_module(entry)
        except Exception as exc:
            raise PluginError(f"{PLUGINS_ENV}: the plug-in {entry!r} failed to load: {_why(exc)}") from None
        _loaded[entry] = "PSIT_PLUGINS"
    return dict(_loaded)


def absolute_entries(env: str | None = None) -> str:
    """``PSIT_PLUGINS`` with file entries made absolute, for processes that start elsewhere (a
    notebook's kernel runs in ``notebooks/``)."""
    return ",".join(str(Path(e).expanduser().resolve()) if is_file_entry(e) else e for e in plugin_entries(env))
