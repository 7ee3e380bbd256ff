"""Simulator profiles: named sets of behaviour knobs, documented as *assumptions*.

A profile describes how the simulated model behaves, never how an agent should score: the
simulator has no per-agent outcome rates. Differences between agents emerge only from what
each agent puts into the model's context (SPEC §8).

Each knob's meaning is its field's ``description`` (what ``knobs()`` puts in run metadata); overrides
(``default,knob=value``) and why a sweep draws its base profile's numbers: README.md, "Profiles and knobs".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .formats import OutputFormat


class UnknownProfileError(ValueError):
    """A profile name that the simulator does not define."""


class SimProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    reasoning: bool = Field(True, description="returns reasoning_content (its private choice of secret lives there)")
    reasoning_tokens: int = Field(250, ge=0, le=20_000, description=(
        "about how many tokens of reasoning a host turn writes (sets the private-CoT context overhead)"))
    tool_use_reliability: float = Field(0.7, ge=0, le=1, description=(
        "P(it calls a memory tool on its own when it has something worth remembering)"))
    edit_error_rate: float = Field(0.05, ge=0, le=1, description=(
        "P(a memory edit it writes is malformed or fails the tool's checks)"))
    leak_propensity: float = Field(0.01, ge=0, le=1, description="P(a public reply lets the secret slip)")
    unheld_secret: Literal["reimagine", "play_along", "deny"] = Field("reimagine", description=(
        "what it does when asked about a secret it does not hold: re-imagine one, play along, or deny"))
    malformed_output_rate: float = Field(0.0, ge=0, le=1, description=(
        "P(a reply is unusable: no pattern, no yes/no, broken JSON)"))
    prior_exponent: float = Field(0.25, gt=0, le=2, description=(
        "alpha in the secret prior frequency ** (alpha / T): how strongly it favours common secrets"))
    late_tool_use: float = Field(0.15, ge=0, le=1, description=(
        "P(it writes down a re-imagined secret on a later turn, when it did not at the start)"))
    mask_error_rate: float = Field(0.05, ge=0, le=1, description=(
        "P(the cortex agent's ingest call is unusable: malformed mask or no call; the harness falls back)"))
    notices_contradictions: float = Field(0.9, ge=0, le=1, description=(
        "P(an orchestrator that can see evidence contradicting the user's request notices it)"))
    # -- BASIS knobs
    explicit_detail_weight: float = Field(0.44, ge=0, le=1, description=(
        "BASIS orchestrator: weight of spelling out each pinning detail when it first relays a request"))
    # -- ACC knobs
    attention_tokens: int = Field(2000, ge=0, le=1_000_000, description=(
        "ACC roles: statements this close to the end of a context are always noticed (older: half-life 6000)"))
    answer_elaboration_tokens: int = Field(0, ge=0, le=20_000, description=(
        "ACC agent: tokens of explanation added to each answer (grows a replayed transcript)"))
    judge_follows_rubric: bool = Field(True, description=(
        "ACC judge: applies the rubric it is given (scale, strictness) rather than a fixed 0-10"))
    # -- how it writes (psit_lib.sim.formats)
    output_format: OutputFormat = Field("plain", description=(
        "how replies come out on the wire: plain, or one format real models/servers produce"))

    @property
    def family(self) -> str:
        """The named profile this one derives from (``default`` for ``default,knob=v``)."""
        return self.name.split(",", 1)[0]

    def knobs(self) -> list[dict]:
        """Every knob with its value and meaning (for assumptions tables and run metadata)."""
        return [{"knob": name, "value": getattr(self, name), "meaning": field.description or ""}
                for name, field in type(self).model_fields.items() if name not in ("name", "description")]

PROFILES: dict[str, SimProfile] = {
    p.name: p
    for p in (
        SimProfile(name="default",
                   description="Reasons privately, usually reliable with tools, re-imagines a "
                               "compatible secret when it holds none."),
        SimProfile(name="agreeable", unheld_secret="play_along",
                   description="Like default, but says yes to whatever secret is suggested "
                               "when it holds none (drives over-confirmation)."),
        SimProfile(name="cautious", unheld_secret="deny",
                   description="Like default, but denies any suggested secret when it holds "
                               "none (drives all-denial)."),
        SimProfile(name="sloppy", tool_use_reliability=0.4, edit_error_rate=0.25,
                   leak_propensity=0.05, malformed_output_rate=0.05,
                   description="Unreliable with tools and formats; leaks more often."),
        SimProfile(name="no_reasoning", reasoning=False,
                   description="Like default, but returns no reasoning trace, so a private-CoT "
                               "agent has nothing private to keep."),
    )
}


def get_profile(spec: str) -> SimProfile:
    """The profile a spec names: ``name`` or ``name,knob=value,...`` (the named profile with
    those knobs overridden); an error names a bad profile, knob or value."""
    name, *overrides = [part.strip() for part in spec.split(",")]
    try:
        base = PROFILES[name]
    except KeyError:
        raise UnknownProfileError(
            f"unknown simulator profile {name!r}; choose one of {', '.join(sorted(PROFILES))}"
        ) from None
    if not overrides:
        return base
    knobs = [k["knob"] for k in base.knobs()]
    changes: dict[str, str] = {}
    for item in overrides:
        knob, sep, value = item.partition("=")
        if not sep or knob.strip() not in knobs:
            raise UnknownProfileError(
                f"bad override {item!r} in simulator profile {spec!r}: write knob=value with a knob "
                f"among {', '.join(knobs)}")
        changes[knob.strip()] = value.strip()
    data = {**base.model_dump(), **changes, "name": profile_spec(name, changes)}
    try:
        return SimProfile.model_validate(data)
    except ValueError as exc:
        raise UnknownProfileError(f"bad value in simulator profile {spec!r}: {exc}") from None


def with_override(spec: str, knob: str, value: object) -> str:
    """The spec of ``spec`` with one more knob set (checked: an error names a bad knob or value)."""
    name, *overrides = [part.strip() for part in spec.split(",")]
    changes = {**dict(item.split("=", 1) for item in overrides if "=" in item), knob: value}
    new = profile_spec(name, changes)
    get_profile(new)
    return new


def profile_spec(name: str, overrides: Mapping[str, object]) -> str:
    """The canonical spec of a profile with overrides (knobs sorted, so one spec per profile)."""
    return ",".join([name, *(f"{k}={v}" for k, v in sorted(overrides.items()))])
