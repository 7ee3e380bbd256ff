"""Per-trial scoring of the BASIS study: a trial's verdicts recomputed from what reached the app.

A trial's record (:class:`~psit_lib.studies.basis.records.BasisTrial`) keeps the calls that reached
the CabApp and the rides standing at the end. Its verdicts are computed here from those alone:

* ``success``: the reference scenario's ``validate()`` on the log of calls (the study's rule);
* ``final_state_success``: this workbench's final-state check (a labelled second view).

Both are pure functions of the stored trial, so every table of notebook 06 (success rates,
pass^k and pass@k, the reference design's sets, the sweeps) is a metric over these scores.
"""

from __future__ import annotations

from typing import Any

from psit_lib.studies.basis.records import BasisTrial


def success(trial: BasisTrial) -> bool:
    """The reference ``validate()`` of the trial's scenario, on the calls that reached the app."""
    from psit_lib.studies.basis.scenarios import SCENARIOS

    return bool(SCENARIOS[trial.scenario].validate(trial.tool_calls))


def final_state_success(trial: BasisTrial) -> bool:
    """The workbench's final-state check: the rides standing at the end and the calls made."""
    from psit_lib.studies.basis.scenarios import SCENARIOS

    return bool(SCENARIOS[trial.scenario].final_state(trial.tool_calls, trial.rides))


def trial_facts(trial: BasisTrial) -> dict[str, Any]:
    """What the tables show beside a verdict: delegations, ingest fallbacks, recorded errors and
    whether the trial was decided without any CabApp call its scenario needs."""
    return {"delegations": len(trial.delegations), "ingest_fallbacks": trial.ingest_fallbacks,
            "recorded_errors": len(trial.errors), "decided_without_tool_calls": bool(trial.decided_without_tool_calls)}
