"""Notebook parameter validation: one clear sentence naming the bad parameter.

Each notebook declares a pydantic model of its parameters; the cell right after the
``parameters`` cell calls :func:`validate_params`. On bad input it raises ``ParameterError``,
which IPython renders as just its message (``_render_traceback_``) instead of a traceback wall,
and which stops papermill with the same sentence.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound=BaseModel)


class ParameterError(ValueError):
    """A notebook parameter has a bad value."""

    def _render_traceback_(self) -> list[str]:  # IPython hook: show the sentence only
        return [f"\x1b[31mParameterError\x1b[0m: {self}"]


class NotebookParams(BaseModel):
    """Base for notebook parameter models: unknown names are errors, values are checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def validate_params(model: type[M], values: dict[str, Any]) -> M:
    """Build ``model`` from ``values`` or raise ParameterError naming the first bad parameter."""
    try:
        return model(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "parameters"
        if err["type"] == "extra_forbidden":
            raise ParameterError(f"unknown parameter {name!r}; valid ones are "
                                 f"{', '.join(model.model_fields)}") from None
        raise ParameterError(f"parameter {name!r} is invalid: {err['msg']} "
                             f"(got {err.get('input')!r})") from None


def notebook_values(namespace: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Pick the model's parameters out of a notebook's global namespace."""
    return {name: namespace[name] for name in model.model_fields if name in namespace}
