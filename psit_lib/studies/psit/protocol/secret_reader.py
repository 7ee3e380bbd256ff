"""Read the secrets agents revealed, from episode records: one row per episode.

The mode-collapse analysis (SPEC §4, last item) looks at *which* secrets were revealed,
whichever experiment produced them: the fork tests of notebooks 02-04 reveal at the fork
(:func:`folder_reveals` reads their folders, read only), the quick secret-choice experiment of
notebook 07 right after the opener (its ``secret`` scorer reads each record). Both record a
result with ``reveal.parsed``, so one reader serves them.

Nothing is dropped: a failed episode, or one whose reveal could not be read, stays as a row
with ``secret`` None, so :func:`psit_lib.studies.psit.secrets.secret_summary` counts it in
``n_missing`` and the top-k and entropy figures simply leave it out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from psit_lib.runs.folder import RunFolder
from psit_lib.runs.records import EpisodeRecord, flat_record, read_records
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode

#: Columns of the reveals table (one row per episode).
COLUMNS = ("task", "model", "agent", "temperature", "secret", "status", "episode_id", "source_notebook")


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


def folder_reveals(folder: RunFolder) -> list[dict[str, Any]]:
    """The rows of one fork-test notebook folder; none when it holds no record asking for the
    secret. The temperature is the run's own, the model the spec's (else the run's one model)."""
    raw = list(folder.records().values()) if folder.has_records() else []
    if not has_reveal_records(raw):
        return []
    params, metadata = folder.params(), folder.metadata()
    models = params.run_models
    return rows_from_records(read_records(raw, ForkEpisode, source=folder.records_source),
                             source_notebook=str(metadata.notebook or folder.dir.name),
                             default_temperature=_number(params.temperature),
                             default_model=models[0] if len(models) == 1 else metadata.model)
