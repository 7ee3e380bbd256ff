"""Package facades that load their names on first use (PEP 562): importing a light module of a
package, or validating parameters on the command line, must not pull in the model client, pandas
or the memory libraries. Each facade keeps its maps and literal ``__all__``; this is their one ``__getattr__``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, names: Mapping[str, str], modules: Mapping[str, str] | None = None, *,
                    namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: a name of ``names`` is taken from its module,
    a name of ``modules`` is that module; each is imported on first use and kept in ``namespace``
    (the package's ``globals()``), so the second use is a plain lookup."""
    whole = dict(modules or {})

    def __getattr__(name: str) -> Any:
        if name in whole:
            value = importlib.import_module(whole[name])
        elif name in names:
            value = getattr(importlib.import_module(names[name]), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__
