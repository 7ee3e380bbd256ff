"""Each selected notebook's identity before any kernel starts (:mod:`psit_lib.runs.identity`): the
default run id is made from it, and a folder being resumed is checked against it.

The command line computes what the notebook's ``Experiment`` will bind (the same function, the same
parameters, the study's prompts and scorers), so a changed parameter, wording, model setting,
endpoint or plug-in stops the run with one sentence (exit 2) instead of resuming episodes made
another way; the notebook checks again itself, and ``psit run`` reports what it finds the same way.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psit_lib.cli.errors import CliError
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.folder import RunFolder
from psit_lib.runs.identity import RunIdentity

MISMATCH_ERRORS = ("IdentityMismatchError", "ParameterMismatchError")
"""The errors a notebook raises when its folder was made another way (exit status 2)."""


@dataclass(frozen=True)
class PlannedNotebook:
    """What a notebook's run will be: the episode parameters its folder binds, its identity and
    scorer versions, and their fingerprint."""

    params: dict[str, Any]
    identity: RunIdentity
    scorers: dict[str, int]
    fingerprint: str
    complete: bool
    """Whether ``params`` are the notebook's as its parameter model gives them (False for a
    notebook no study declares: then only the notebook itself can check them)."""


def notebook_models(notebook: Path, params: dict[str, Any], settings: LLMSettings) -> list[str]:
    """The models a notebook will run: its ``models`` parameter, else the environment's model."""
    from psit_lib.cli.notebooks import default_values

    models = params.get("models", default_values(notebook).get("models"))
    return [str(m) for m in models] if isinstance(models, list) and models else [settings.model]


def plan_notebook(notebook: Path, given: dict[str, Any], settings: LLMSettings, commit: str,
                  endpoints: dict[tuple[str, ...], dict[str, Any]]) -> PlannedNotebook:
    """The notebook's planned identity (``endpoints``: the ``/v1/models`` reports already asked, by models)."""
    from psit_lib.cli.notebooks import default_values
    from psit_lib.runs.identity import current_identity, endpoint_report, episode_params, fingerprint
    from psit_lib.runs.metadata import prompt_fingerprints
    from psit_lib.runs.params import validate_params
    from psit_lib.studies.registry import params_model, study_of

    values = {**default_values(notebook), **given}
    model = params_model(notebook.stem)
    if model is not None:
        values = validate_params(model, values).model_dump()
    profile = values.get("profile")
    own = settings.model_copy(update={"sim_profile": profile}) if isinstance(profile, str) and profile else settings
    models = notebook_models(notebook, given, settings)
    bound = episode_params(values, backend=own.backend, models=models, profile=own.profile_label)
    study = study_of(notebook.stem)
    prompts = prompt_fingerprints(study.prompt_catalogue()) if study is not None else None
    scorers = ({s.name: s.version for s in study.notebook(notebook.stem).scorers}
               if study is not None and notebook.stem in study.notebooks else {})
    if tuple(models) not in endpoints:
        endpoints[tuple(models)] = endpoint_report(own, models)
    identity = current_identity(own, models, prompts=prompts, code=commit, endpoint=endpoints[tuple(models)])
    return PlannedNotebook(bound, identity, scorers, fingerprint(bound, identity, scorers), model is not None)


def plan_run(notebooks: list[Path], params: dict[str, dict[str, Any]],
             settings: LLMSettings) -> dict[str, PlannedNotebook]:
    """Every selected notebook's planned identity, by notebook."""
    from psit_lib.runs.metadata import git_commit

    commit = git_commit()
    endpoints: dict[tuple[str, ...], dict[str, Any]] = {}
    return {nb.stem: plan_notebook(nb, params.get(nb.stem, {}), settings, commit, endpoints) for nb in notebooks}


def check_resumed_folders(planned: dict[str, PlannedNotebook], run_dir: Path, new_id: str | None) -> None:
    """CliError (one sentence) when a selected notebook's folder was made with another set-up,
    suggesting ``new_id``; a resume across a code change is only warned about, on stderr."""
    from psit_lib.runs.identity import check, code_change

    for stem, plan in planned.items():
        folder = RunFolder(run_dir / stem)
        if not folder.identity() and not folder.has_params():
            continue
        changes = check(folder, plan.params, plan.identity)
        if not plan.complete:  # its parameters are the notebook's to check
            changes = [c for c in changes if not c.startswith("other parameters")]
        if changes:
            from psit_lib.runs.identity import mismatch_sentence

            raise CliError(mismatch_sentence(f"{run_dir.name}/{stem}", changes, new_id))
        warning = code_change(RunIdentity.model_validate(folder.identity()), plan.identity.code)
        if warning:
            print(f"psit: {stem}: {warning}", file=sys.stderr)


def check_recorded_plugins(folders: list[RunFolder], doing: str = "resumed", *, changed: bool = True) -> None:
    """Before the parameters are read (a plug-in's agent is a name they use): CliError naming the
    first plug-in a folder was made with that is not loaded now (or, with ``changed``, whose source
    changed since), and how to load it."""
    from psit_lib.runs.identity import plugin_changes
    from psit_lib.runs.plugins import load_plugins

    loaded = load_plugins()
    for folder in folders:
        stored = RunIdentity.model_validate(folder.identity()).plugins
        changes = plugin_changes(stored, loaded, changed=changed, extra=False)
        if changes:
            raise CliError(f"{folder.dir.parent.name}/{folder.dir.name} cannot be {doing}: {changes[0]}")


def mismatch_in(errors: list[str | None]) -> str | None:
    """The first notebook error saying its folder was made another way, as its sentence."""
    for error in errors:
        if error and error.startswith(MISMATCH_ERRORS):
            return error.split(": ", 1)[1] if ": " in error else error
    return None
