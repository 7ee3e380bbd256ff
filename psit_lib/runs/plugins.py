"""A researcher's own agents, tasks and studies, registered from their own modules.

A plug-in module registers what it adds when imported; ``PSIT_PLUGINS`` (module names or ``.py``
paths) or an entry point of the ``psit.plugins`` group names it. :func:`load_plugins` runs before
any parameter is validated, so ``psit run`` and every notebook see the same names.

A plug-in is code that shapes episodes, so each one loaded is part of a run's identity
(:mod:`psit_lib.runs.identity`): its name, where it came from (file path, or distribution and
version) and a hash of its source, taken when it was imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from psit_lib.runs.paths import digest

PLUGINS_ENV = "PSIT_PLUGINS"
ENTRY_POINT_GROUP = "psit.plugins"

_loaded: dict[str, dict[str, Any]] = {}  # what was loaded: its name -> where from and its content hash


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


def plugin_name(entry: str) -> str:
    """The name a plug-in is recorded under: a file's name (wherever it lies, so a relative and an
    absolute path name one plug-in), else the module's."""
    return Path(entry).name if is_file_entry(entry) else entry


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


def source_hash(path: Path) -> str:
    """A hash of a module's source: the file, or every ``.py`` file of a package's folder."""
    if path.name == "__init__.py":
        files = sorted(p for p in path.parent.rglob("*.py") if "__pycache__" not in p.parts)
        return digest({str(p.relative_to(path.parent)): digest(p.read_bytes()) for p in files})
    return digest(path.read_bytes())


def _module_record(module: str) -> dict[str, Any]:
    """Where an imported module came from: its file's hash, and its distribution and version when
    it is installed from one."""
    record: dict[str, Any] = {"module": module}
    found = importlib.util.find_spec(module)
    if found is not None and found.origin and Path(found.origin).is_file():
        record["sha"] = source_hash(Path(found.origin))
    top = module.split(".", 1)[0]
    for dist in metadata.packages_distributions().get(top, [])[:1]:
        record["distribution"] = f"{dist}=={metadata.version(dist)}"
    return record


def load_plugins(env: str | None = None) -> dict[str, dict[str, Any]]:
    """Import every plug-in not yet loaded (entry points, then ``PSIT_PLUGINS``); what is loaded,
    name -> its record (``path`` or ``module``, ``distribution``, ``sha``, ``source``). PluginError
    naming the first that fails."""
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
        module = str(ep.value).split(":", 1)[0]
        found = _module_record(module) if module in sys.modules else {"module": module}
        dist = getattr(ep, "dist", None)
        if dist is not None:
            found["distribution"] = f"{dist.name}=={dist.version}"
        _loaded[key] = {**found, "source": f"entry point {ep.value}"}
    for entry in plugin_entries(env):
        key = plugin_name(entry)
        if key in _loaded:
            continue
        try:
            if is_file_entry(entry):
                path = Path(entry).expanduser().resolve()
                if not path.is_file():
                    raise FileNotFoundError(f"no file {path}")
                content = path.read_bytes()
                _import_file(path)
                record: dict[str, Any] = {"path": str(path), "sha": digest(content)}
            else:
                importlib.import_module(entry)
                record = _module_record(entry)
        except Exception as exc:
            raise PluginError(f"{PLUGINS_ENV}: the plug-in {entry!r} failed to load: {_why(exc)}") from None
        _loaded[key] = {**record, "source": PLUGINS_ENV}
    return {name: dict(record) for name, record in _loaded.items()}


def how_to_load(name: str, record: dict[str, Any]) -> str:
    """How to load a recorded plug-in again, as a user would type it."""
    if str(record.get("source", "")).startswith("entry point"):
        dist = record.get("distribution")
        return f"install {dist}" if dist else f"install the package that provides the psit.plugins {name}"
    return f"{PLUGINS_ENV}={record.get('path') or record.get('module') or name}"


def absolute_entries(env: str | None = None) -> str:
    """``PSIT_PLUGINS`` with file entries made absolute, for processes that start elsewhere (a
    notebook's kernel runs in ``notebooks/``)."""
    return ",".join(str(Path(e).expanduser().resolve()) if is_file_entry(e) else e for e in plugin_entries(env))
