"""Notebook parameter validation: one clear sentence naming the bad parameter (``ParameterError``,
shown by IPython and papermill as its message alone, not a traceback wall)."""

from __future__ import annotations

from typing import Annotated, Any, Sequence, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class ParameterError(ValueError):
    """A notebook parameter has a bad value."""

    def _render_traceback_(self) -> list[str]:  # IPython hook: show the sentence only
        return [f"\x1b[31mParameterError\x1b[0m: {self}"]


class NotebookParams(BaseModel):
    """Base for notebook parameter models: unknown names are errors, values are checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def validate_params(model: type[M], values: dict[str, Any]) -> M:
    """Build ``model`` from ``values`` or raise ParameterError naming the first bad parameter.
    Plug-ins (:mod:`psit_lib.runs.plugins`) are loaded first: their agents and tasks are names
    the parameters may use."""
    from psit_lib.runs.plugins import load_plugins

    load_plugins()
    try:
        return model(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "parameters"
        if err["type"] == "extra_forbidden":
            raise ParameterError(f"unknown parameter {name!r}; valid ones are "
                                 f"{', '.join(model.model_fields)}") from None
        message = err["msg"].removeprefix("Value error, ")
        raise ParameterError(f"parameter {name!r} is invalid: {message} "
                             f"(got {err.get('input')!r})") from None


def notebook_values(namespace: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Pick the model's parameters out of a notebook's global namespace."""
    return {name: namespace[name] for name in model.model_fields if name in namespace}


def distinct(values: Sequence[T], what: str, *, allow_empty: bool = False) -> Sequence[T]:
    """``values`` unchanged, or ValueError when empty (unless allowed) or holding a repeat."""
    if not values and not allow_empty:
        raise ValueError(f"name at least one {what}")
    if len(set(values)) != len(values):
        raise ValueError(f"a {what} is listed twice")
    return values


def check_profile(profile: str | None) -> str | None:
    """A simulator profile name (or None for the environment's), checked against the simulator."""
    if profile is not None:
        from psit_lib.sim.profiles import get_profile

        get_profile(profile)
    return profile


def check_sweep_values(knob: str, values: Sequence[Any]) -> None:
    """ValueError (one sentence) unless ``knob`` is a simulator knob and takes every value."""
    from psit_lib.sim.profiles import UnknownProfileError, get_profile, with_override

    knobs = [k["knob"] for k in get_profile("default").knobs()]
    if knob not in knobs:
        raise ValueError(f"{knob!r} is not a simulator knob; choose from {', '.join(knobs)}")
    for value in values:
        try:
            with_override("default", knob, value)
        except UnknownProfileError as exc:
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            if len(lines) >= 3 and "validation error" in lines[0]:  # pydantic: the knob's own message
                detail = lines[2].split(" [type=")[0]
                raise ValueError(f"sweep value {value!r} is not a value of the simulator knob {knob!r}: "
                                 f"{detail[:1].lower()}{detail[1:]}") from None
            raise ValueError(" ".join(lines)) from None


def check_sweeps(sweeps: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """A ``sweeps`` parameter (simulator knob -> values), every knob and value checked."""
    for knob, values in sweeps.items():
        check_sweep_values(knob, values)
    return sweeps


Sweeps = Annotated[dict[str, list[Any]], AfterValidator(check_sweeps)]
"""The type of a notebook's ``sweeps`` parameter: knobs and values checked against the simulator."""


class ModelRunParams(NotebookParams):
    """Parameters every notebook that calls models shares (models and profile are not secrets:
    endpoint URLs and keys stay in the environment)."""

    models: list[str] = Field(default_factory=list)
    profile: Annotated[str | None, AfterValidator(check_profile)] = None
    seed: int = 0
    temperature: float = Field(0.3, ge=0.0, le=2.0)
    max_tokens: int = Field(2048, ge=16, le=131_072)
    concurrency: int = Field(16, ge=1, le=4096)
    suspect_threshold: float = Field(0.2, ge=0.0, le=1.0)
    """Share of unreadable replies (or flagged episodes) per agent and role above which the
    notebook's results are marked suspect (psit_lib.runs.health)."""

    @field_validator("models")
    @classmethod
    def _distinct_models(cls, models: list[str]) -> list[str]:
        if any(not isinstance(m, str) or not m.strip() for m in models):
            raise ValueError("model names must be non-empty strings")
        return list(distinct(models, "model", allow_empty=True))
