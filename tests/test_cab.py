"""The CabApp wrapper and the three BASIS scenarios, run against the real ARE CabApp."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from psit_lib.studies.basis.cab_app import CAB_TOOLS, CAB_TOOL_NAMES, CabApp, call_cab_tool, make_cab_app

from psit_lib.studies.basis.records import AppCall
from psit_lib.studies.basis.scenarios import SCENARIOS

D, A = "Downtown", "Airport"


def route(start: str = D, end: str = A, **extra) -> dict:
    return {"start_location": start, "end_location": end, **extra}


# --------------------------------------------------------------------------- the app


def test_the_real_are_cab_app_is_wrapped():
    app = make_cab_app(1)
    assert isinstance(app, CabApp)
    assert type(app).__module__ == "are.simulation.apps.cab"
    assert set(app.d_service_config) == {"Default", "Premium", "Van"}


def test_same_seed_same_trial_and_different_seed_different_trial():
    def trial(seed: int) -> list[str]:
        app = make_cab_app(seed)
        return [
            call_cab_tool(app, "list_rides", route()),
            call_cab_tool(app, "order_ride", route(service_type="Default")),
            call_cab_tool(app, "get_current_ride_status", {}),
        ]

    assert trial(5) == trial(5)
    assert trial(5) != trial(6)


@pytest.mark.slow
def test_trials_are_reproducible_across_processes():
    """ARE seeds from Python's randomised str hash; make_cab_app must not depend on it."""
    code = (
        "from psit_lib.studies.basis.cab_app import make_cab_app, call_cab_tool\n"
        "app = make_cab_app(11)\n"
        "print(call_cab_tool(app, 'get_quotation', {'start_location': 'Downtown', "
        "'end_location': 'Airport', 'service_type': 'Van'}))\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": seed}
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1


def test_clock_is_frozen_at_the_simulated_now():
    quote = json.loads(call_cab_tool(make_cab_app(0), "get_quotation", route(service_type="Default")))
    assert quote["ride_time"] == "2025-06-02 09:00:00"


def test_make_cab_app_rejects_non_int_seeds():
    with pytest.raises(TypeError):
        make_cab_app("3")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- tool schemas


def test_tool_schemas_agree_with_the_real_signatures():
    assert [t["function"]["name"] for t in CAB_TOOLS] == list(CAB_TOOL_NAMES)
    for tool in CAB_TOOLS:
        fn = tool["function"]
        params = [p for p in inspect.signature(getattr(CabApp, fn["name"]).__wrapped__).parameters.values()]
        params = [p for p in params if p.name != "self"]
        assert list(fn["parameters"]["properties"]) == [p.name for p in params]
        assert fn["parameters"]["required"] == [p.name for p in params if p.default is inspect.Parameter.empty]
        assert fn["description"]
        for p in params:
            prop = fn["parameters"]["properties"][p.name]
            expected = {"int": "integer"}.get(getattr(p.annotation, "__name__", ""), "string")
            assert prop["type"] == expected, (fn["name"], p.name)


def test_service_type_schema_lists_the_apps_service_types():
    quote = next(t for t in CAB_TOOLS if t["function"]["name"] == "get_quotation")
    assert quote["function"]["parameters"]["properties"]["service_type"]["enum"] == ["Default", "Premium", "Van"]


# --------------------------------------------------------------------------- calling tools


def test_every_tool_runs_and_returns_text():
    app = make_cab_app(2)
    calls = [
        ("get_quotation", route(service_type="Premium")),
        ("list_rides", route()),
        ("order_ride", route(service_type="Van")),
        ("get_current_ride_status", {}),
        ("get_ride", {"idx": 0}),
        ("get_ride_history", {"offset": 0, "limit": 5}),
        ("get_ride_history_length", {}),
        ("user_cancel_ride", {}),
    ]
    assert sorted(name for name, _ in calls) == sorted(CAB_TOOL_NAMES)
    results = [call_cab_tool(app, name, args) for name, args in calls]
    assert all(isinstance(r, str) and not r.startswith("Error") for r in results), results
    assert [q["service_type"] for q in json.loads(results[1])] == ["Default", "Premium", "Van"]
    assert json.loads(results[2])["status"] == "BOOKED"
    assert json.loads(results[6]) == 1
    assert app.ride_history[0].status == "CANCELLED"


@pytest.mark.parametrize(
    "name, args, fragment",
    [
        ("fly", {}, "unknown tool"),
        ("order_ride", {"start_location": D}, "missing a required argument"),
        ("get_quotation", route(service_type="Limo"), "Invalid service type"),
        ("get_ride", {"idx": "0"}, "must be of type"),
        ("get_ride", {"idx": 3}, "does not exist"),
        ("user_cancel_ride", {}, "no on-going ride"),
        ("get_ride_history_length", {"x": 1}, "unexpected keyword"),
        ("list_rides", ["Downtown", "Airport"], "must be a JSON object"),
    ],
)
def test_errors_come_back_as_text(name, args, fragment):
    result = call_cab_tool(make_cab_app(0), name, args)
    assert result.startswith("Error") and fragment in result


def test_a_second_order_is_refused_while_a_ride_is_on():
    app = make_cab_app(0)
    call_cab_tool(app, "order_ride", route(service_type="Default"))
    assert "on-going ride" in call_cab_tool(app, "order_ride", route(service_type="Van"))


# --------------------------------------------------------------------------- instruction reading


class Trial:
    """A fresh CabApp and the calls made on it, kept as a trial's record keeps them."""

    def __init__(self) -> None:
        self.app, self.calls = make_cab_app(0), []

    def __call__(self, name: str, args: dict) -> str:
        result = call_cab_tool(self.app, name, args)
        self.calls.append(AppCall(delegation=1, subagent_step=1, name=name, arguments=args, result=result,
                                  ok=not result.startswith("Error:")))
        return result


def _views(name: str):
    """(reference validate, final-state view) of a scenario, each taking a trial."""
    scenario = SCENARIOS[name]
    return (lambda trial: scenario.validate(trial.calls),
            lambda trial: scenario.final_state(trial.calls, trial.app.ride_history))


def test_premium_bias_views():
    validate, final = _views("premium_bias")

    app = Trial()
    app("list_rides", route())
    app("order_ride", route(service_type="Default"))
    assert validate(app) and final(app)

    app = Trial()  # booked Premium
    app("list_rides", route())
    app("order_ride", route(service_type="Premium"))
    assert not validate(app) and not final(app)

    app = Trial()  # right booking, but the rides were never listed
    app("order_ride", route(service_type="Default"))
    assert not validate(app) and not final(app)

    app = Trial()  # listed the wrong way round
    app("list_rides", route(A, D))
    app("order_ride", route(service_type="Default"))
    assert not validate(app) and not final(app)

    app = Trial()  # Premium booked then cancelled, Default booked: the user ends up right
    app("list_rides", route())
    app("order_ride", route(service_type="Premium"))
    app("user_cancel_ride", {})
    app("order_ride", route(service_type="Default"))
    assert validate(app) and final(app)

    app = Trial()  # the Default ride was cancelled again: the reference passes it (an
    app("list_rides", route())  # order_ride of Default is in the log), the final state not
    app("order_ride", route(service_type="Default"))
    app("user_cancel_ride", {})
    assert validate(app) and not final(app)

    app = Trial()  # the reference compares the strings exactly
    app("list_rides", route(" downtown ", "AIRPORT"))
    app("order_ride", route(" downtown ", "AIRPORT", service_type="Default"))
    assert not validate(app) and final(app)


def test_quote_only_views():
    validate, final = _views("quote_only_vs_book")

    app = Trial()
    app("list_rides", route())
    assert validate(app) and final(app)

    app = Trial()
    app("get_quotation", route(service_type="Van"))
    app("order_ride", route(service_type="Van"))
    assert not validate(app) and not final(app)
    app("user_cancel_ride", {})
    assert validate(app) and final(app)

    app = Trial()  # a cancel BEFORE the last order does not count
    app("order_ride", route(service_type="Van"))
    app("user_cancel_ride", {})
    app("order_ride", route(service_type="Default"))
    assert not validate(app) and not final(app)

    app = Trial()  # an order the app refused is still an order_ride call in the log
    app("order_ride", {"start_location": D})
    assert not validate(app) and final(app)


def test_stale_locations_views():
    validate, final = _views("stale_locations")

    app = Trial()
    app("order_ride", route(service_type="Default"))
    assert validate(app) and final(app)

    app = Trial()
    app("order_ride", route(A, D, service_type="Default"))
    assert not validate(app) and not final(app)

    app = Trial()
    app("order_ride", route(" downtown ", "AIRPORT", service_type="Van"))
    assert final(app) and not validate(app)  # the final-state view ignores case and spaces; the reference not

    app = Trial()  # the right ride ordered then cancelled: in the log, not in the final state
    app("order_ride", route(service_type="Default"))
    app("user_cancel_ride", {})
    assert validate(app) and not final(app)


# --------------------------------------------------------------------------- policy + app end to end


def test_scenarios_are_the_three_of_the_spec_with_user_requests():
    assert list(SCENARIOS) == ["premium_bias", "quote_only_vs_book", "stale_locations"]
    for name, scenario in SCENARIOS.items():
        assert scenario.name == name
        assert D in scenario.user_request and A in scenario.user_request
        assert scenario.subagent_policy and scenario.subagent_policy not in scenario.user_request
