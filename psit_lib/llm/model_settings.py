"""Per-model request settings (``PSIT_MODEL_SETTINGS``, docs/real_models.md, "Per-model request settings").

Models differ in what a request must carry (a reasoning model's larger ``max_tokens``, a
reasoning effort, a provider's own field); an optional field the server refuses (HTTP 400/422)
is dropped for that model with a warning and a count in the run metadata, never silently.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, Mapping

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from psit_lib.data_files import resolve_config_path
from psit_lib.llm.errors import ConfigurationError

ENV = "PSIT_MODEL_SETTINGS"
INLINE_SOURCE = "inline JSON"
"""The recorded source of settings given in the variable itself."""

CORE_FIELDS = frozenset({"model", "messages", "temperature", "max_tokens", "max_completion_tokens", "seed",
                         "tools", "tool_choice", "response_format", "stream", "n"})
"""Request fields the harness sets itself: a model's ``extra_body`` may not set them."""


class ModelRequestSettings(BaseModel):
    """One model's request settings (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_tokens: int | None = Field(default=None, ge=16, le=1_000_000)
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra_body")
    @classmethod
    def _no_core_fields(cls, body: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(body) & CORE_FIELDS)
        if clash:
            raise ValueError(f"extra_body may not set {', '.join(clash)} (the harness sets it)")
        return body

    def optional_fields(self) -> dict[str, Any]:
        """The fields sent only where the server accepts them, by top-level name."""
        fields = dict(self.extra_body)
        if self.reasoning_effort is not None:
            fields["reasoning_effort"] = self.reasoning_effort
        return fields


def parse_model_settings(text: str, source: str) -> dict[str, ModelRequestSettings]:
    """``model name -> settings`` from YAML or JSON text; a ConfigurationError in one sentence."""
    try:
        data = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{ENV}: {source} is not valid YAML or JSON ({' '.join(str(exc).split())}).") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"{ENV}: {source} must map each model name to its settings.")
    out: dict[str, ModelRequestSettings] = {}
    for model, entry in data.items():
        if not isinstance(model, str) or not model.strip():
            raise ConfigurationError(f"{ENV}: {source} has a model name that is not a non-empty string ({model!r}).")
        try:
            out[model.strip()] = ModelRequestSettings.model_validate(entry or {})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "settings"
            hint = (" (temperature is the notebook parameter `temperature`, not a model setting)"
                    if where == "temperature" else "")
            raise ConfigurationError(f"{ENV}: in {source}, model {model!r} has an invalid {where}: "
                                     f"{first['msg']}{hint}.") from None
    return out


def load_model_settings(value: str) -> tuple[str, dict[str, ModelRequestSettings]]:
    """(source, settings) for the value of ``PSIT_MODEL_SETTINGS``: inline JSON (starting with
    ``{``) or the path of a YAML/JSON file."""
    value = value.strip()
    if value.startswith("{"):
        try:
            json.loads(value)
        except ValueError as exc:
            raise ConfigurationError(f"{ENV} holds inline JSON that does not parse ({exc}).") from None
        return INLINE_SOURCE, parse_model_settings(value, "the inline JSON")
    path = resolve_config_path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{ENV}={value!r} cannot be read ({exc.strerror or exc}).") from None
    return str(path), parse_model_settings(text, str(path))


def rejected_field(status: int, error_text: str, candidates: Mapping[str, Any] | set[str]) -> str | None:
    """The optional field a 400/422 refusal names, or None. Servers say it in many ways (``"param":
    "reasoning_effort"``, "Extra inputs are not permitted ... 'reasoning'"): a field counts when it is a
    whole word of the error, not part of a longer name such as ``--reasoning-parser``."""
    if status not in (400, 422) or not error_text:
        return None
    for name in sorted(candidates, key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", error_text):
            return name
    return None


# -- runaway bounds on real servers ---------------------------------------------------------------
REPLY_CAP = 512
"""Tokens for a host's reply (a turn of the game, the reveal, a yes/no): the test models' well-formed
turns are under 30 tokens; in a 2-slot qwen2.5-coder-0.5b 02 run 9 of 25 host turns ran to 2048,
and four of them in one history overflowed the slot's 8,192-token context."""

ROLE_CAPS: dict[str, int] = {"candidate_generator": 256, "amem_note_analysis": REPLY_CAP,
                             "amem_evolution": REPLY_CAP, "lightmem_extraction": REPLY_CAP}
"""Roles whose whole reply is short by design: the candidate list, and the memory baselines' own JSON
(at most 283 tokens in a real 02 run, where 7 of its 8 replies of 2048 were these roles' repeated keys)."""

STOP_SEQUENCES = ("<|im_end|>", "<|im_start|>", "<end_of_turn>", "<start_of_turn>")
"""Chat-template turn markers: a model that writes one as text has run on into the next turn
(everything after it is cut from the reply anyway: ``reply_readers.strip_template_debris``).
Four, the most OpenAI's API accepts; a server that refuses ``stop`` gets calls without it."""


def role_cap(role: str) -> int | None:
    """The most tokens a call by ``role`` needs on a real server (None: the run's default).

    The simulator never runs away and is not capped (its draws depend on the request)."""
    if role in ROLE_CAPS:
        return ROLE_CAPS[role]
    return REPLY_CAP if role.endswith("_host") else None

def reply_budget(role: str, run_max_tokens: int, own: ModelRequestSettings | None, simulated: bool) -> int:
    """The generated-token budget a call by ``role`` carries: the model's own ``max_tokens`` (PSIT_MODEL_SETTINGS)
    else the run's; on a real server without the model's own, capped by :func:`role_cap` (a host's replies at
    :data:`REPLY_CAP`, below the private-state study's 2,048: such a run's Table 1 cells are not comparable)."""
    budget = own.max_tokens if own is not None and own.max_tokens else run_max_tokens
    if simulated or (own is not None and own.max_tokens):
        return budget
    cap = role_cap(role)
    return min(budget, cap) if cap else budget
