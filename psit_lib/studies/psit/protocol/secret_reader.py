"""Read the secrets agents revealed, from the episode records of any run folder.

The mode-collapse analysis (SPEC §4, last item) looks at *which* secrets were revealed,
whichever experiment produced them: the fork tests of notebooks 02-04 reveal at the fork,
the quick secret-choice experiment of notebook 07 reveals right after the opener. All of
them record episodes with ``spec`` (task, model, agent, maybe temperature), ``status`` and a
result with ``reveal.parsed``, so one reader serves them all.

Nothing is dropped: a failed episode, or one whose reveal could not be read, stays as a row
with ``secret`` None, so :func:`psit_lib.studies.psit.secrets.secret_summary` counts it in
``n_missing`` and the top-k and entropy figures simply leave it out.

The reader only reads, through :class:`psit_lib.runs.folder.RunFolder`: it never creates
folders or repairs files (a notebook may be writing the same folder), and the run folder's
rules apply: the newest record per episode id wins, a partial last line from a killed run is
ignored, records of either stored format read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.runs.folder import RunFolder, notebook_folders
from psit_lib.runs.records import EpisodeRecord, flat_record, read_records
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode

#: Columns of the table :func:`read_revealed_secrets` returns.
COLUMNS = ("task", "model", "agent", "temperature", "secret", "status", "episode_id", "source_notebook")


class NoRevealRecordsError(ValueError):
    """A path holds no episode records with revealed secrets (or does not exist)."""


def has_reveal_records(records: Iterable[dict[str, Any]]) -> bool:
    """Whether any stored record's result carries a ``reveal`` block (i.e. the experiment asks
    for the secret)."""
    return any(isinstance(flat_record(r).get("reveal"), dict) for r in records)


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return number if math.isfinite(number) else float("nan")


RevealRecord = EpisodeRecord[ForkEpisode] | EpisodeRecord[SecretChoiceEpisode]


def result_type_of(records: Iterable[dict[str, Any]]) -> type[ForkEpisode] | type[SecretChoiceEpisode]:
    """Which study result a folder's stored records hold: the secret-choice experiment (an
    opening and an immediate reveal) or the fork test."""
    return SecretChoiceEpisode if any("opening" in flat_record(r) for r in records) else ForkEpisode


def _revealed(record: RevealRecord) -> str | None:
    """The secret read from the episode's reveal (None when it failed or had no readable reveal)."""
    reveal = record.result.reveal if record.result is not None else None
    return reveal.parsed if reveal is not None else None


def status_of(record: RevealRecord) -> str:
    """``ok`` (a secret was revealed and read), ``unparseable`` (no readable reveal) or ``error``."""
    if record.result is None:
        return "error"
    parsed = _revealed(record)
    return "ok" if isinstance(parsed, str) and parsed.strip() else "unparseable"


def rows_from_records(records: Iterable[RevealRecord], *, source_notebook: str,
                      default_temperature: float = float("nan"),
                      default_model: str | None = None) -> list[dict[str, Any]]:
    """One row per episode: the spec's cell, the revealed secret (None if missing), its status.

    The temperature comes from the episode's spec when the experiment varied it, else from
    ``default_temperature`` (the notebook's one temperature), else NaN.
    """
    rows = []
    for rec in records:
        status = status_of(rec)
        temperature = _number(rec.spec.get("temperature"))
        rows.append({
            "task": rec.spec["task"],
            "model": rec.spec.get("model", default_model),
            "agent": rec.spec["agent"],
            "temperature": default_temperature if math.isnan(temperature) else temperature,
            "secret": _revealed(rec) if status == "ok" else None,
            "status": status,
            "episode_id": rec.episode_id,
            "source_notebook": source_notebook,
        })
    return rows


def _folder_rows(folder: RunFolder, wanted: set[str] | None, skipped: set[str]) -> list[dict[str, Any]]:
    """The rows of one notebook folder; none when it is left out or asks for no secret."""
    metadata = folder.metadata()
    name = str(metadata.notebook or folder.dir.name)
    if name in skipped or folder.dir.name in skipped:
        return []
    if wanted is not None and name not in wanted and folder.dir.name not in wanted:
        return []
    raw = list(folder.records().values())
    if not has_reveal_records(raw):
        return []
    params = folder.params()
    models = params.run_models
    typed: Sequence[RevealRecord]
    if result_type_of(raw) is SecretChoiceEpisode:
        typed = read_records(raw, SecretChoiceEpisode, source=folder.records_source)
    else:
        typed = read_records(raw, ForkEpisode, source=folder.records_source)
    return rows_from_records(
        typed, source_notebook=name,
        default_temperature=_number(params.temperature),
        default_model=models[0] if len(models) == 1 else metadata.model)


def read_revealed_secrets(path: str | Path, *, notebooks: Iterable[str] | None = None,
                          exclude: Iterable[str] = ()) -> pd.DataFrame:
    """Every revealed secret under ``path``: one notebook folder or a whole run folder.

    A run folder (``results/<run-id>/``) is scanned one level deep; only notebooks whose
    records ask for the secret (``reveal`` blocks) count, so e.g. the BASIS notebook is
    ignored. ``notebooks`` keeps only those notebook names, ``exclude`` leaves some out (a
    notebook reading its own run folder excludes itself). Notebook names come from the
    folder's run metadata, else the folder name.

    Returns columns :data:`COLUMNS`, rows sorted by (source_notebook, episode_id); failed and
    unreadable reveals are rows with ``secret`` None (``status`` says which), and
    ``df.attrs["n_missing"]`` is their number. Raises :class:`NoRevealRecordsError` naming
    the path when nothing matching is found.
    """
    root = Path(path)
    if not root.is_dir():
        raise NoRevealRecordsError(f"{root} is not a folder of episode records (it does not exist).")
    wanted = set(notebooks) if notebooks is not None else None
    skipped = set(exclude)
    rows: list[dict[str, Any]] = []
    for folder in notebook_folders(root):
        rows += _folder_rows(folder, wanted, skipped)
    if not rows:
        which = "" if wanted is None else f" for notebooks {sorted(wanted)}"
        raise NoRevealRecordsError(
            f"{root} holds no episode records with revealed secrets{which}; point it at a run "
            "folder (results/<run-id>) or a notebook folder of a fork-test or secret-choice run.")
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    df = df.sort_values(["source_notebook", "episode_id"], kind="stable").reset_index(drop=True)
    df.attrs["n_missing"] = int(df["secret"].isna().sum())
    return df
