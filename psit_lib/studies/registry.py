"""Every study by name, and the study and parameter model of each notebook.

A study registers itself from its own folder: ``psit_lib/studies/<name>/registration.py`` is a
light module (no study code imported) naming its ``Study`` object and its notebooks, as
``"module:attribute"`` strings:

    STUDIES = {"example": "psit_lib.studies.example.study:STUDY"}
    NOTEBOOKS = {"90_example_reveal_probe": ("example", "psit_lib.studies.example.study:ProbeParams")}
    RUNS_AFTER = {}   # notebook -> notebooks of the same run whose folders it reads
    CLAIMS = {}       # study -> a function returning its paper's claims (the claims ledger reads them)

This module finds those files, so adding a study adds nothing here. A researcher's own study,
outside ``psit_lib``, calls :func:`register_study` from a plug-in (:mod:`psit_lib.runs.plugins`).

Lazy: finding the registrations imports no study. :func:`study` loads a study's ``Study`` object
(its episode code included); :func:`params_model` loads only a notebook's parameter model, from
a light module where there is one, so the command line validates parameters before a kernel
starts.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psit_lib.runs.study import Study

REGISTRATION_MODULE = "registration"

_KEYS = ("STUDIES", "NOTEBOOKS", "RUNS_AFTER", "CLAIMS")
_PLUGGED: dict[str, dict[str, Any]] = {key: {} for key in _KEYS}


@lru_cache(maxsize=1)
def _found() -> dict[str, dict[str, Any]]:
    """The registrations of the study folders under ``psit_lib/studies``, merged."""
    import psit_lib.studies as package

    merged: dict[str, dict[str, Any]] = {key: {} for key in _KEYS}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}.{REGISTRATION_MODULE}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package.__name__}.{info.name}.{REGISTRATION_MODULE}":
                raise
            continue
        for key, table in merged.items():
            table.update(getattr(module, key, {}))
    return merged


def _table(key: str) -> dict[str, Any]:
    return {**_found()[key], **_PLUGGED[key]}


def studies() -> dict[str, str]:
    """Study name -> ``"module:attribute"`` of its Study object."""
    return _table("STUDIES")


def notebooks() -> dict[str, tuple[str, str]]:
    """Notebook -> (study name, ``"module:attribute"`` of its parameter model)."""
    return _table("NOTEBOOKS")


def runs_after() -> dict[str, tuple[str, ...]]:
    """Notebook -> the notebooks of the same run whose records it reads (07's Appendix E counts
    the secrets revealed at 02's and 03's forks), so a parallel run starts it once they ended."""
    return _table("RUNS_AFTER")


def claims() -> list[Any]:
    """Every registered study's paper claims (:class:`psit_lib.analysis.claims.Claim`), the studies in the order of
    their first notebook (the private-state study's 01 first)."""
    _plugins()
    first: dict[str, str] = {}
    for notebook, (name, _) in sorted(notebooks().items()):
        first.setdefault(name, notebook)
    found = _table("CLAIMS")
    return [claim for name in sorted(found, key=lambda n: first.get(n, "~" + n)) for claim in _load(found[name])()]


def register_study(name: str, study: str, notebooks: Mapping[str, str],
                   runs_after: Mapping[str, tuple[str, ...]] | None = None, claims: str | None = None) -> None:
    """Register a study from outside ``psit_lib`` (a plug-in): ``study`` and each notebook's
    parameter model as ``"module:attribute"``."""
    _PLUGGED["STUDIES"][name] = study
    _PLUGGED["NOTEBOOKS"].update({nb: (name, model) for nb, model in notebooks.items()})
    _PLUGGED["RUNS_AFTER"].update(runs_after or {})
    if claims:
        _PLUGGED["CLAIMS"][name] = claims


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _plugins() -> None:
    from psit_lib.runs.plugins import load_plugins

    load_plugins()


def study(name: str) -> Study:
    """The study called ``name``; KeyError listing the studies otherwise."""
    _plugins()
    known = studies()
    if name not in known:
        raise KeyError(f"no study {name!r}; the studies are {', '.join(known)}")
    return _load(known[name])


def study_of(notebook: str) -> Study | None:
    """The study backing ``notebook`` (a folder or notebook stem), None when no study does."""
    _plugins()
    entry = notebooks().get(notebook)
    return study(entry[0]) if entry else None


def params_model(notebook: str) -> Any:
    """The parameter model of ``notebook``, None when no study declares one."""
    _plugins()
    entry = notebooks().get(notebook)
    return _load(entry[1]) if entry else None
