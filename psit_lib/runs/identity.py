"""A run folder's identity: everything that shaped its episodes, computed here and nowhere else.

Like inspect_ai's ``EvalSpec`` beside its ``EvalConfig``, a folder's identity is *what* ran, apart
from *how fast* it ran:

- ``params.json``: the notebook's parameters that shape episodes (:func:`episode_params`; not the
  execution settings :data:`EXECUTION_PARAMS`, which each execution records for itself), with the
  backend, model names and profile;
- ``identity.json`` (:class:`RunIdentity`): what the endpoint's ``/v1/models`` reports about each
  model, the fingerprint of every prompt template, the hashes of ``PSIT_PROMPTS_FILE`` and
  ``PSIT_MODEL_SETTINGS``, and every plug-in module loaded (name, path or distribution, hash);
- the scorers' versions, kept in the metadata (a rescore updates them).

Resuming with any part of the first two changed would mix two set-ups under one record, so it is
refused in one sentence (:func:`bind`); the code's commit is recorded, never refused, and a new
scorer version rescores. :func:`fingerprint` hashes all three: the default run id
(:func:`default_run_id`), a notebook's folder by hand and ``load_run(...).fingerprint`` are all it.
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
from psit_lib.runs.plugins import how_to_load, load_plugins
from psit_lib.wire import SIM_MODEL_NAME

NONE = "none"
"""The value of ``prompts_file`` and ``model_settings`` when nothing replaces the defaults."""

EXECUTION_PARAMS = frozenset({"concurrency", "suspect_threshold"})
"""Notebook parameters that change how fast a run goes or how its health is judged, never what an
episode is: not part of the identity (a resume may change them; each execution records its own)."""

REPORTED_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta", "canonical_slug",
                   "hugging_face_id", "context_length")
"""What a ``/v1/models`` entry says about the model behind a name (vLLM's ``root`` and
``max_model_len``, llama.cpp's ``meta``, OpenRouter's slugs); ``created`` is left out: some
servers stamp it with the time of the request."""

COMPARED = ("endpoint", "prompts", "prompts_file", "model_settings", "plugins")
"""The fields whose change refuses a resume; ``code`` is only recorded."""


class IdentityMismatchError(ParameterMismatchError):
    """A run folder is being resumed with a set-up other than the one it was made with."""


class RunIdentity(BaseModel):
    """What a folder's episodes were made with besides the parameters (see the module docstring);
    None: not known (an older folder)."""

    model_config = ConfigDict(extra="allow")
    endpoint: dict[str, Any] | None = None
    prompts: dict[str, str] | None = None
    prompts_file: str | None = None
    model_settings: str | None = None
    plugins: dict[str, dict[str, Any]] | None = None
    code: str | None = None

    def stored(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def compared(self) -> dict[str, Any]:
        """The fields that refuse a resume, as known."""
        return {k: v for k, v in self.model_dump().items() if k in COMPARED and v is not None}


def canonical(data: Any) -> Any:
    """``data`` as JSON gives it back (tuples as lists, keys as strings): what a file holds."""
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def episode_params(params: Mapping[str, Any], *, backend: str | None = None, models: Iterable[str] | None = None,
                   profile: str | None = None) -> dict[str, Any]:
    """What ``params.json`` binds: the parameters that shape episodes (no :data:`EXECUTION_PARAMS`),
    with the backend, model names and profile when given (``_backend``, ``_models``, ``_profile``)."""
    kept = {k: v for k, v in params.items() if k not in EXECUTION_PARAMS}
    if backend is not None:
        kept.update({"_backend": backend, "_models": list(models or ()), "_profile": profile})
    return canonical(kept)


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


def current_identity(settings: LLMSettings, models: Iterable[str], *, prompts: Mapping[str, str] | None = None,
                     code: str | None = None, endpoint: Mapping[str, Any] | None = None) -> RunIdentity:
    """The identity of a run about to start with these settings (``prompts``: the fingerprints
    of the study's templates, when known; ``endpoint``: the models' report when already asked);
    the plug-ins are those loaded (loading any not yet)."""
    return RunIdentity(endpoint=dict(endpoint) if endpoint is not None else endpoint_report(settings, models),
                       prompts=dict(prompts) if prompts is not None else None,
                       prompts_file=prompts_file_digest(settings.prompts_file),
                       model_settings=digest(read) if (read := settings.public_dict().get("model_settings")) else NONE,
                       plugins=load_plugins(),
                       code=code)


def fingerprint(params: Mapping[str, Any], identity: Mapping[str, Any] | RunIdentity,
                scorer_versions: Mapping[str, int] | None = None) -> str:
    """The one hash of a folder: its episode parameters, the compared fields of its identity and its
    scorers' versions (two folders with the same fingerprint were made and scored the same way,
    whatever the code's commit or how fast they ran)."""
    known = identity.compared() if isinstance(identity, RunIdentity) else {
        k: v for k, v in identity.items() if k in COMPARED and v is not None}
    return digest({"params": episode_params(params), "identity": canonical(known),
                   "scorers": dict(scorer_versions or {})})


def default_run_id(fingerprints: Mapping[str, str]) -> str:
    """A run's default id from its notebooks' fingerprints: another parameter, wording, model
    setting, plug-in or scorer version is another run, unless the user names an existing one."""
    return "run-" + digest(dict(sorted(fingerprints.items())), 8)


def _known(value: Any) -> bool:
    return value is not None and not (isinstance(value, dict) and "unavailable" in value)


def plugin_changes(stored: Mapping[str, Any] | None, current: Mapping[str, Any] | None,
                   *, changed: bool = True, extra: bool = True) -> list[str]:
    """What differs between the plug-ins a folder was made with and those loaded now, one phrase
    each naming the plug-in and how to load it: those not loaded, then (``changed``) those whose
    source changed, then (``extra``) those loaded now that were not."""
    if stored is None or current is None:
        return []
    changes = []
    for name in sorted(stored):
        old, new = stored[name], current.get(name)
        if new is None:
            changes.append(f"the plug-in {name!r} it was made with is not loaded ({how_to_load(name, old)} loads it)")
        elif changed and (old.get("sha") != new.get("sha") or old.get("distribution") != new.get("distribution")):
            was = old.get("distribution") or str(old.get("sha", "?"))[:8]
            now = new.get("distribution") or str(new.get("sha", "?"))[:8]
            changes.append(f"the plug-in {name!r} has changed since ({was} -> {now})")
    if extra:
        changes += [f"the plug-in {name!r} is loaded now but was not when it was made" for name in sorted(current)
                    if name not in stored]
    return changes


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
    return changes + plugin_changes(stored.plugins, current.plugins)


def params_changes(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """The episode parameters that differ (``name: old -> new``), execution settings left out."""
    old, new = episode_params(stored), episode_params(current)
    return [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


def _difference(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    def short(value: Any) -> str:
        return excerpt(value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str), 40)

    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(f"{k}: {short(old.get(k))} -> {short(new.get(k))}" for k in keys[:2])


def mismatch_sentence(where: str, changes: list[str], new_id: str | None = None) -> str:
    """The one sentence that stops a resume: what changed, a new run id to use instead (this set-up's
    own default when known), and last the way that discards the folder's episodes."""
    start = f"start a new run with --run-id {new_id}" if new_id else "start a new run with a new --run-id"
    return (f"{where} was made with a different set-up: {'; '.join(changes)}; it is not resumed: {start}, "
            "or redo it with --fresh, which replaces its episodes")


def code_change(stored: RunIdentity, commit: str | None) -> str | None:
    """A warning when a folder made at one commit is resumed at another (never a refusal)."""
    if not stored.code or not commit or stored.code == commit or "unknown" in (stored.code, commit):
        return None
    return (f"resuming episodes recorded at commit {stored.code} with commit {commit}: the episodes "
            "already recorded are kept as that code made them (--fresh redoes them)")


def check(store: Any, params: Mapping[str, Any], current: RunIdentity) -> list[str]:
    """What differs between the set-up a folder (a :class:`~psit_lib.runs.folder.RunFolder`) was
    made with and ``params`` and ``current``: parameters first, then the rest of the identity.
    Empty for a new folder, or one made before identities were recorded (nothing to compare)."""
    changes = []
    if store.has_params():
        moved = params_changes(store.params().stored(), params)
        changes += [f"other parameters ({'; '.join(moved)})"] if moved else []
    data = store.identity()
    if data:
        changes += identity_changes(RunIdentity.model_validate(data), current)
    return changes


def bind(store: Any, params: Mapping[str, Any], current: RunIdentity, where: str,
         new_id: str | None = None) -> str | None:
    """Bind a folder (a :class:`~psit_lib.runs.folder.RunStore`) to ``params`` (episode parameters)
    and ``current``: record them in a new folder, check them against an existing one
    (IdentityMismatchError, nothing written, on a change). Fields an older folder's identity lacks
    are filled in; the code warning (:func:`code_change`), if any, is returned."""
    changes = check(store, params, current)
    if changes:
        raise IdentityMismatchError(mismatch_sentence(where, changes, new_id))
    if not store.has_params():
        store.write_params(episode_params(params))
    data = store.identity()
    if not data:
        store.write_identity(current.stored())
        return None
    missing = {k: v for k, v in current.stored().items() if k not in data}
    if missing:
        store.write_identity({**data, **missing})
    return code_change(RunIdentity.model_validate(data), current.code)
