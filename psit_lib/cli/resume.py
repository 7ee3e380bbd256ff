"""Before a run resumes folders: is each one's set-up (:mod:`psit_lib.runs.identity`) still this one?

Checked before any kernel starts, so a changed endpoint, prompts file or model settings stops the run
with one sentence (exit 2) instead of resuming episodes made another way; the notebook checks the
rest (template wording, parameters) itself, and ``psit run`` reports those the same way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from psit_lib.cli.errors import CliError
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.folder import RunFolder

MISMATCH_ERRORS = ("IdentityMismatchError", "ParameterMismatchError")
"""The errors a notebook raises when its folder was made another way (exit status 2)."""


def notebook_models(notebook: Path, params: dict[str, Any], settings: LLMSettings) -> list[str]:
    """The models a notebook will run: its ``models`` parameter, else the environment's model."""
    from psit_lib.cli.notebooks import default_values

    models = params.get("models", default_values(notebook).get("models"))
    return [str(m) for m in models] if isinstance(models, list) and models else [settings.model]


def check_resumed_folders(notebooks: list[Path], params: dict[str, dict[str, Any]], run_dir: Path,
                          settings: LLMSettings) -> None:
    """CliError (one sentence) when a selected notebook's folder was made with another set-up;
    a resume across a code change is only warned about, on stderr."""
    from psit_lib.runs.identity import RunIdentity, code_change, current_identity, identity_changes, mismatch_sentence
    from psit_lib.runs.metadata import git_commit

    folders = [(nb, RunFolder(run_dir / nb.stem)) for nb in notebooks]
    folders = [(nb, f) for nb, f in folders if f.identity()]
    if not folders:
        return
    commit = git_commit()
    known: dict[tuple[str, ...], RunIdentity] = {}
    for nb, folder in folders:
        models = tuple(notebook_models(nb, params.get(nb.stem, {}), settings))
        if models not in known:
            known[models] = current_identity(settings, models, code=commit)
        stored = RunIdentity.model_validate(folder.identity())
        changes = identity_changes(stored, known[models])
        if changes:
            raise CliError(mismatch_sentence(f"{run_dir.name}/{nb.stem}", changes))
        warning = code_change(stored, commit)
        if warning:
            print(f"psit: {nb.stem}: {warning}", file=sys.stderr)


def mismatch_in(errors: list[str | None]) -> str | None:
    """The first notebook error saying its folder was made another way, as its sentence."""
    for error in errors:
        if error and error.startswith(MISMATCH_ERRORS):
            return error.split(": ", 1)[1] if ": " in error else error
    return None
