"""The simulated ACC agent's reading of standing rules: a tag is withdrawn only when no live
rule still requires it (a later rule can require again what a withdrawn one did)."""

from __future__ import annotations

import re

import pytest

from psit_lib.sim.roles.acc import RULE_INCLUDE, RULE_NEVER, WITHDRAWN, Reading
from psit_lib.studies.acc.experiment import scenario_seed
from psit_lib.studies.acc.scenarios import build_scenario


def _reading(texts: list[str]) -> Reading:
    """Everything the texts state, noticed in full (what a reader with perfect attention takes in)."""
    reading = Reading()
    for text in texts:
        for rule_id in WITHDRAWN.findall(text):
            reading.withdrawn.add(rule_id)
        for rule_id, tag in RULE_INCLUDE.findall(text):
            reading.include[rule_id] = tag
        for rule_id, tag in RULE_NEVER.findall(text):
            reading.never[rule_id] = tag
    return reading


def _truth(rules: dict[str, str]) -> set[str]:
    include = {m.group(1) for text in rules.values() if (m := re.match(r'every answer must include "([^"]+)"', text))}
    never = {m.group(1) for text in rules.values() if (m := re.match(r'never write "([^"]+)"', text))}
    return include - never


def test_a_tag_required_again_by_a_later_rule_stays_required():
    reading = Reading(include={"R2": "INC-1", "R3": "SEV-1", "R5": "SEV-2", "R7": "SEV-1"},
                      never={"R4": "SEV-1", "R6": "SEV-2"}, withdrawn={"R3", "R4", "R5"})
    assert reading.required_tags() == ["INC-1", "SEV-1"]
    reading.withdrawn.add("R7")
    assert reading.required_tags() == ["INC-1"]


@pytest.mark.parametrize("domain", ["it_operations", "cybersecurity", "healthcare_operations"])
def test_with_full_attention_the_agent_requires_exactly_the_scenarios_live_tags(domain):
    """it_operations/000 (run seed 0) is the issue's case: R3 requires SEV-1 and is withdrawn,
    R7 requires SEV-1 again; every later answer must carry it."""
    scenario = build_scenario(domain, 50, scenario_seed(0, domain, 0))
    seen: list[str] = []
    for turn in scenario.turns:
        seen.append(turn.text)
        assert set(_reading(seen).required_tags()) == _truth(turn.rules), (domain, turn.index)
