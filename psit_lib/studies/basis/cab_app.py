"""The CabApp of Meta's Agents Research Environments, wrapped for reproducible trials (SPEC §6).

The real ``CabApp`` (``are.simulation.apps.cab``) with a seeded RNG and a frozen clock per trial,
tool schemas read from its own registry, and tool calls that return text (errors too); the
multi-agent system records each call, because the app keeps no record of ``list_rides`` calls.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
import types
import typing
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any


def _import_are_cab() -> types.ModuleType:
    """Import ``are.simulation.apps.cab`` without running ``are.simulation.apps/__init__``, which
    imports every ARE app (document converters, fsspec, dotenv), reads a ``.env`` and makes a
    temporary directory. A bare package stands in for the duration of the import only, so a later
    full ``import are.simulation.apps`` works as usual and reuses the ``cab`` module."""
    if "are.simulation.apps" in sys.modules:
        return importlib.import_module("are.simulation.apps.cab")
    import are.simulation

    stand_in = types.ModuleType("are.simulation.apps")
    stand_in.__path__ = [str(Path(are.simulation.__file__).parent / "apps")]
    sys.modules["are.simulation.apps"] = stand_in
    try:
        return importlib.import_module("are.simulation.apps.cab")
    finally:
        if sys.modules.get("are.simulation.apps") is stand_in:
            del sys.modules["are.simulation.apps"]
        if getattr(are.simulation, "apps", None) is stand_in:
            delattr(are.simulation, "apps")


_are_cab = _import_are_cab()
from are.simulation.time_manager import TimeManager  # noqa: E402  (needs the import above first)

if TYPE_CHECKING:  # the same classes, named so that type checkers see them as classes
    from are.simulation.apps.cab import CabApp, Ride
else:
    CabApp = _are_cab.CabApp
    Ride = _are_cab.Ride

#: The agent-facing tools of the CabApp, in the order SPEC §6 lists them.
CAB_TOOL_NAMES: tuple[str, ...] = (
    "get_quotation",
    "list_rides",
    "order_ride",
    "user_cancel_ride",
    "get_current_ride_status",
    "get_ride",
    "get_ride_history",
    "get_ride_history_length",
)

#: The simulated "now" of every trial, in the app's own time format.
DEFAULT_RIDE_TIME = "2025-06-02 09:00:00"

START_LOCATION = "Downtown"
END_LOCATION = "Airport"
CANCELLED = "CANCELLED"


# --------------------------------------------------------------------------- the app


class FrozenClock(TimeManager):
    """A clock that always reads the same simulated time, so quotes do not depend on when a trial runs."""

    def __init__(self, timestamp: float) -> None:
        super().__init__()
        self.frozen_timestamp = timestamp

    def time(self) -> float:
        return self.frozen_timestamp


def _timestamp(ride_time: str) -> float:
    return datetime.strptime(ride_time, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc).timestamp()


def make_cab_app(seed: int, now: str = DEFAULT_RIDE_TIME) -> CabApp:
    """A fresh CabApp for one trial: RNG seeded with ``seed`` directly (ARE's ``set_seed`` hashes a
    string, which changes from one process to the next), clock frozen at ``now``."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"The CabApp seed must be an int, got {type(seed).__name__} {seed!r}.")
    app = CabApp(name="CabApp")
    app.seed = seed
    app.rng = random.Random(seed)
    app.register_time_manager(FrozenClock(_timestamp(now)))
    return app


# --------------------------------------------------------------------------- tool schemas

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_type(type_obj: Any, where: str) -> tuple[str, bool]:
    """JSON schema type of an annotation and whether it admits ``None``."""
    if type_obj in _JSON_TYPES:
        return _JSON_TYPES[type_obj], False
    if typing.get_origin(type_obj) in (types.UnionType, typing.Union):
        members = [a for a in typing.get_args(type_obj) if a is not type(None)]
        if len(members) == 1 and members[0] in _JSON_TYPES:
            return _JSON_TYPES[members[0]], True
    raise RuntimeError(f"The CabApp argument {where} has an annotation {type_obj!r} this wrapper cannot map.")


def build_cab_tools(app: CabApp) -> list[dict[str, Any]]:
    """OpenAI function-tool schemas for the app's agent tools, read from its own tool registry
    (ARE's ``AppTool.to_open_ai`` prefixes names, writes Python type names and marks optional
    arguments as required); ``service_type`` gets an enum of the app's service types."""
    by_name = {tool.func_name: tool for tool in app.get_tools()}
    if set(by_name) != set(CAB_TOOL_NAMES):
        raise RuntimeError(
            f"The installed CabApp exposes tools {sorted(by_name)}, expected {sorted(CAB_TOOL_NAMES)}."
        )
    service_types = list(app.d_service_config)
    schemas = []
    for name in CAB_TOOL_NAMES:
        tool = by_name[name]
        properties: dict[str, Any] = {}
        required: list[str] = []
        for arg in tool.args:
            json_type, nullable = _json_type(arg.type_obj, f"{name}.{arg.name}")
            prop: dict[str, Any] = {"type": json_type}
            if arg.description:
                prop["description"] = arg.description
            if arg.name == "service_type":
                prop["enum"] = service_types
            if arg.has_default and arg.default is not None:
                prop["default"] = arg.default
            properties[arg.name] = prop
            if not arg.has_default and not nullable:
                required.append(arg.name)
        description = tool.function_description or name
        if tool.return_description:
            description += f" Returns: {tool.return_description}"
        schemas.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": properties,
                        "required": required,
                        "additionalProperties": False,
                    },
                },
            }
        )
    return schemas


CAB_TOOLS: list[dict[str, Any]] = build_cab_tools(make_cab_app(0))


# --------------------------------------------------------------------------- calling tools


def _ride_dict(ride: Any) -> dict[str, Any]:
    """A ride as plain JSON, fields named as in ARE (``duration`` and ``delay`` are minutes)."""

    def rounded(x: float | None) -> float | None:
        return None if x is None else round(x, 2)

    ride_time = (
        None
        if ride.time_stamp is None
        else datetime.fromtimestamp(ride.time_stamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    )
    return {
        "ride_id": ride.ride_id,
        "status": ride.status,
        "service_type": ride.service_type,
        "start_location": ride.start_location,
        "end_location": ride.end_location,
        "distance_km": rounded(ride.distance_km),
        "price": rounded(ride.price),
        "duration": rounded(ride.duration),
        "delay": rounded(ride.delay),
        "ride_time": ride_time,
    }


def render_result(value: Any) -> str:
    """A tool result as text: strings as they are, everything else as JSON (ARE's own
    ``Ride.__str__`` divides minutes by 60 a second time)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=lambda obj: _ride_dict(obj) if isinstance(obj, Ride) else str(obj))


def call_cab_tool(app: CabApp, name: str, arguments: dict[str, Any]) -> str:
    """Run one agent tool on the app and return its result as text, errors as ``"Error: ..."``
    for the model (never raises)."""
    if name not in CAB_TOOL_NAMES:
        return f"Error: unknown tool {name!r}; available tools: {', '.join(CAB_TOOL_NAMES)}."
    if not isinstance(arguments, dict):
        return f"Error: the arguments of {name} must be a JSON object, got {type(arguments).__name__}."
    try:
        return render_result(getattr(app, name)(**arguments))
    except Exception as exc:  # the app's refusals are part of the conversation
        return f"Error: {type(exc).__name__}: {exc}"
