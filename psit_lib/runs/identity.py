"""A run folder's identity: what shaped its episodes besides the notebook's parameters.

``identity.json`` binds the endpoint's ``/v1/models`` report, the prompts' fingerprints and the
hashes of ``PSIT_PROMPTS_FILE`` and ``PSIT_MODEL_SETTINGS``: resuming with any of them changed
would mix two set-ups under one record, so it is refused in one sentence; the commit is recorded,
never refused. A field either side does not know is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from psit_lib.llm.diagnostics import excerpt
from psit_lib.llm.settings import SIM_BASE_URL, LLMSettings
from psit_lib.runs.folder import ParameterMismatchError
from psit_lib.runs.paths import digest
from psit_lib.wire import SIM_MODEL_NAME

NONE = "none"
"""The value of ``prompts_file`` and ``model_settings`` when nothing replaces the defaults."""

REPORTED_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta", "canonical_slug",
                   "hugging_face_id", "context_length")
"""What a ``/v1/models`` entry says about the model behind a name (vLLM's ``root`` and
``max_model_len``, llama.cpp's ``meta``, OpenRouter's slugs); ``created`` is left out: some
servers stamp it with the time of the request."""

COMPARED = ("endpoint", "prompts", "prompts_file", "model_settings")
"""The fields whose change refuses a resume; ``code`` is only recorded."""


class IdentityMismatchError(ParameterMismatchError):
    """A run folder is being resumed with a set-up other than the one it was made with."""


class RunIdentity(BaseModel):
    """What a folder's episodes were made with (see the module docstring); None: not known."""

    model_config = ConfigDict(extra="allow")
    endpoint: dict[str, Any] | None = None
    prompts: dict[str, str] | None = None
    prompts_file: str | None = None
    model_settings: str | None = None
    code: str | None = None

    def stored(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def compared(self) -> dict[str, Any]:
        """The fields that refuse a resume, as known (for the hash of an interactive folder)."""
        return {k: v for k, v in self.model_dump().items() if k in COMPARED and v is not None}


def prompts_file_digest(path: str | None) -> str | None:
    """The content hash of a prompts file, :data:`NONE` without one, None when it cannot be read."""
    if not path:
        return NONE
    try:
        with open(path, "rb") as fh:
            return digest(fh.read())
    except OSError:
        return None


def describe_served(listing: Iterable[Mapping[str, Any]], model: str) -> dict[str, Any]:
    """What a ``/v1/models`` listing says about ``model``: its entry's identifying fields, or,
    when no entry has that name (a server that answers under any name), every entry's."""
    entries = [{k: e[k] for k in REPORTED_FIELDS if e.get(k) is not None} for e in listing]
    base = model.split(":", 1)[0] if model.startswith(SIM_MODEL_NAME) else model
    named = [e for e in entries if e.get("id") in (model, base)]
    if named:
        return named[0]
    return {"served_as": sorted(entries, key=lambda e: str(e.get("id")))[:8]}


def endpoint_report(settings: LLMSettings, models: Iterable[str]) -> dict[str, Any]:
    """Per model name, what its endpoint's ``/v1/models`` reports about it (the first replica
    that answers; ``{"unavailable": reason}`` when none does)."""
    from psit_lib.runs.backend import list_served_models

    listings: dict[str, list[dict[str, Any]] | str] = {}
    report: dict[str, Any] = {}
    for model in dict.fromkeys(models):
        urls = (SIM_BASE_URL,) if settings.backend == "sim" else settings.urls_for(model)
        listing: list[dict[str, Any]] | str = "no endpoint"
        for url in urls:
            if url not in listings:
                try:
                    listings[url] = list_served_models(settings, url)
                except Exception as exc:  # any failure is "not known", never a crash
                    listings[url] = f"{type(exc).__name__}: {exc}"[:200]
            listing = listings[url]
            if not isinstance(listing, str):
                break
        report[model] = ({"unavailable": listing} if isinstance(listing, str)
                         else describe_served(listing, model))
    return report


def current_identity(settings: LLMSettings, models: Iterable[str], *,
                     prompts: Mapping[str, str] | None = None, code: str | None = None) -> RunIdentity:
    """The identity of a run about to start with these settings (``prompts``: the fingerprints
    of the study's templates, when known)."""
    return RunIdentity(endpoint=endpoint_report(settings, models),
                       prompts=dict(prompts) if prompts is not None else None,
                       prompts_file=prompts_file_digest(settings.prompts_file),
                       model_settings=digest(read) if (read := settings.public_dict().get("model_settings")) else NONE,
                       code=code)


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, dict) and "unavailable" in value)


def identity_changes(stored: RunIdentity, current: RunIdentity) -> list[str]:
    """What differs between the identity a folder was made with and the current one, one phrase
    per difference (empty: the same set-up as far as both know). Pure."""
    changes: list[str] = []
    if stored.endpoint is not None and current.endpoint is not None:
        for model in sorted(set(stored.endpoint) & set(current.endpoint)):
            old, new = stored.endpoint[model], current.endpoint[model]
            if _known(old) and _known(new) and old != new:
                changes.append(f"the endpoint reports another model behind {model!r} "
                               f"({_difference(old, new)})")
    if stored.prompts is not None and current.prompts is not None:
        changed = sorted(n for n in set(stored.prompts) & set(current.prompts)
                         if stored.prompts[n] != current.prompts[n])
        if changed:
            changes.append(f"other prompt wording ({', '.join(changed[:4])}"
                           + (f" and {len(changed) - 4} more" if len(changed) > 4 else "") + ")")
    for field, name in (("prompts_file", "PSIT_PROMPTS_FILE"), ("model_settings", "PSIT_MODEL_SETTINGS")):
        old, new = getattr(stored, field), getattr(current, field)
        if old is not None and new is not None and old != new:
            said = {NONE: "none"}
            changes.append(f"another {name} ({said.get(old, old[:8])} -> {said.get(new, new[:8])})")
    return changes


def _difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    def short(value: Any) -> str:
        return excerpt(value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str), 40)

    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(f"{k}: {short(old.get(k))} -> {short(new.get(k))}" for k in keys[:2])


def mismatch_sentence(where: str, changes: list[str]) -> str:
    """The one sentence that stops a resume: what changed, and how to start a new run."""
    return (f"{where} was made with a different set-up: {'; '.join(changes)}; it is not resumed: "
            "start a new run with --run-id NEW, or redo this one with --fresh")


def code_change(stored: RunIdentity, commit: str | None) -> str | None:
    """A warning when a folder made at one commit is resumed at another (never a refusal)."""
    if not stored.code or not commit or stored.code == commit or "unknown" in (stored.code, commit):
        return None
    return (f"resuming episodes recorded at commit {stored.code} with commit {commit}: the episodes "
            "already recorded are kept as that code made them (--fresh redoes them)")


def fingerprint(params: Mapping[str, Any], identity: Mapping[str, Any],
                scorer_versions: Mapping[str, int] | None = None) -> str:
    """A short hash of everything that decides a folder's scores: its parameters, the compared
    fields of its identity and its scorers' versions (two folders with the same fingerprint were
    made and scored the same way, whatever the code's commit)."""
    compared = {k: v for k, v in identity.items() if k in COMPARED}
    return digest({"params": dict(params), "identity": compared, "scorers": dict(scorer_versions or {})})


def bind(store: Any, current: RunIdentity, where: str) -> str | None:
    """Check ``current`` against the identity ``store`` (a :class:`~psit_lib.runs.folder.RunStore`)
    was made with, or record it when it has none; IdentityMismatchError on a change; the code
    warning (:func:`code_change`), if any, is returned. Fields the stored identity lacks (an older
    folder) are filled in."""
    data = store.identity()
    if not data:
        store.write_identity(current.stored())
        return None
    stored = RunIdentity.model_validate(data)
    changes = identity_changes(stored, current)
    if changes:
        raise IdentityMismatchError(mismatch_sentence(where, changes))
    missing = {k: v for k, v in current.stored().items() if k not in data}
    if missing:
        store.write_identity({**data, **missing})
    return code_change(stored, current.code)
