"""The notebooks the command line runs: finding them, choosing them, and their parameters.

Parameters are read from each notebook's ``parameters`` cell (papermill's inspection), so the
command line never duplicates them; a parameter's comment may give its study-scale value
(``# per (model, agent); study: 50``), which ``psit list`` shows.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, TypeVar

import yaml

from psit_lib.cli.errors import CliError, did_you_mean
from psit_lib.runs.paths import repo_root

T = TypeVar("T")


def notebooks_dir() -> Path:
    return Path(os.environ.get("PSIT_NOTEBOOKS_DIR") or repo_root() / "notebooks")


def available() -> list[Path]:
    return sorted(notebooks_dir().glob("[0-9][0-9]_*.ipynb"))


def names_notebook(name: str, notebook: str) -> bool:
    """Whether ``name`` (a full name, stem, number such as ``2`` or ``02``, or name prefix) names
    the notebook ``notebook`` (a stem or run-folder name)."""
    stem = Path(name).stem
    number = stem.zfill(2) if stem.isdigit() else stem
    return notebook == stem or notebook.startswith(stem + "_") or notebook.split("_", 1)[0] == number


def resolve_notebooks(names: list[str]) -> list[Path]:
    """Notebooks by full name, stem, number (``2`` or ``02``) or name prefix; all when empty."""
    return chosen(names, available(), lambda p: p.stem)


def chosen(names: list[str], items: list[T], stem: Callable[[T], str], where: str = "") -> list[T]:
    """The one item each name names (:func:`names_notebook`), all when none is named; CliError otherwise."""
    if not names:
        return items
    out = []
    for name in names:
        matches = [item for item in items if names_notebook(name, stem(item))]
        if len(matches) != 1:
            raise CliError(f"no single notebook{where} matches {name!r}; choose from "
                           f"{', '.join(map(stem, items)) or 'none with records'} (or their numbers)")
        out.append(matches[0])
    return out


@lru_cache(maxsize=32)
def _declared(path: str, mtime: float) -> dict[str, dict[str, Any]]:
    import papermill

    return dict(papermill.inspect_notebook(path))


def declared(notebook: Path) -> dict[str, dict[str, Any]]:
    """The notebook's parameters by name (papermill's ``name``, ``default``, ``help``), in the cell's order."""
    return _declared(str(notebook), notebook.stat().st_mtime)


def load_params(path: str | None, overrides: list[str], notebooks: list[Path]) -> dict[str, dict[str, Any]]:
    """Per-notebook parameters from a YAML file (one flat mapping, or a mapping per notebook plus ``all``)
    and ``-p name=value`` overrides (``all`` < a notebook's own section < ``-p``); a key no selected notebook
    declares, or a notebook that does not exist, is an error naming it."""
    every = {p.stem for p in available()}
    params: dict[str, dict[str, Any]] = {nb.stem: {} for nb in notebooks}
    shared: dict[str, Any] = {}
    if path:
        try:
            data = yaml.safe_load(Path(path).read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CliError(f"cannot read params file {path}: {exc}") from None
        if not isinstance(data, dict):
            raise CliError(f"params file {path} must hold a mapping")
        per_notebook = {k for k in data if k == "all" or k in every or re.fullmatch(r"\d\d_\w+", str(k))}
        if per_notebook:
            for key, values in data.items():
                if key == "all":
                    shared.update(values or {})
                    continue
                if key not in every:
                    raise CliError(f"params file {path} names notebook {key!r}, which does not exist"
                                   + did_you_mean(key, every))
                if not isinstance(values, dict):
                    raise CliError(f"params for {key!r} in {path} must be a mapping")
                if key in params:
                    params[key].update(values)
        else:
            shared.update(data)
    command_line: dict[str, Any] = {}
    for item in overrides:
        if "=" not in item:
            raise CliError(f"-p takes name=value, not {item!r}")
        name, value = item.split("=", 1)
        try:
            command_line[name.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            command_line[name.strip()] = value
    names = {nb.stem: set(declared(nb)) for nb in notebooks}
    unknown = sorted(k for k in {**shared, **command_line} if not any(k in d for d in names.values()))
    if unknown:
        hints = "".join(did_you_mean(k, set().union(*names.values())) for k in unknown[:1])
        raise CliError(f"no selected notebook has parameter(s) {', '.join(unknown)}{hints}; "
                       "`psit list` shows each notebook's parameters")
    for nb in notebooks:
        explicit = params[nb.stem]
        bad = sorted(set(explicit) - names[nb.stem])
        if bad:
            raise CliError(f"{nb.stem} has no parameter(s) {', '.join(bad)}{did_you_mean(bad[0], names[nb.stem])}; "
                           f"it declares {', '.join(sorted(names[nb.stem]))}")
        params[nb.stem] = {**{k: v for k, v in shared.items() if k in names[nb.stem]}, **explicit,
                           **{k: v for k, v in command_line.items() if k in names[nb.stem]}}
        check_values(nb, params[nb.stem])
    return params


def default_values(notebook: Path) -> dict[str, Any]:
    """The notebook's parameter defaults as values (those its parameters cell writes as literals)."""
    values = {}
    for name, parameter in declared(notebook).items():
        try:
            values[name] = ast.literal_eval(parameter["default"])
        except (ValueError, SyntaxError):
            continue  # not a literal: the parameter model's own default stands in
    return values


def check_values(notebook: Path, overrides: dict[str, Any]) -> None:
    """Validate the notebook's defaults with ``overrides`` by its study's parameter model
    (:mod:`psit_lib.studies.registry`), before any kernel starts; CliError with one sentence
    naming the notebook and the parameter. Notebooks no study declares are not checked here."""
    from psit_lib.runs.params import ParameterError, validate_params
    from psit_lib.studies.registry import params_model

    model = params_model(notebook.stem)
    if model is None:
        return
    try:
        validate_params(model, {**default_values(notebook), **overrides})
    except ParameterError as exc:
        raise CliError(f"{notebook.stem}: {exc}") from None
