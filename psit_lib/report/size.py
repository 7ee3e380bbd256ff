"""How many bytes a run's report takes, measured on a rendered report and estimated for a planned run.

A report is the files its pages share (the table library, the notebook stylesheet, the index, the protocol),
then per notebook its page and figures, and its episodes: the explorer's rows and the compressed side files
of its views, which grow with the episodes and, where episodes have turns (ACC), with the turns. So a measured
report gives per notebook its fixed bytes and its bytes per *unit* (an episode, or a turn), and a plan's size is
the shared bytes plus each notebook's fixed bytes plus its units times its bytes per unit
(``data/report_size.json``, written by ``benchmarks/report_bytes.py``; ``psit run --dry-run`` prints the
estimate). Measured on the simulator: real models' replies are longer and vary more, so their views are
larger and compress less; the estimate is a floor for them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psit_lib.runs.folder import RunFolder

REPORT_SIZE = "report_size.json"
MB = 1_000_000


def episode_units(params: Mapping[str, Any]) -> int:
    """How many units an episode is: its turns where it has turns, else one."""
    return int(params.get("n_turns") or 1)


def _record_units(record: Mapping[str, Any]) -> int:
    result = record.get("result") or {}
    turns = result.get("turns") if isinstance(result, dict) else None
    return len(turns) if isinstance(turns, list) and turns else episode_units(record.get("spec") or {})


@dataclass(frozen=True)
class NotebookBytes:
    """One notebook's part of a rendered report."""

    notebook: str
    page: int  # its page and the figures it shows first
    episodes: int  # its explorer's side files
    rows: int  # its explorer's table data (about the bytes of its rows as JSON)
    n_episodes: int
    units: int

    @property
    def per_unit(self) -> float:
        """Bytes per unit (an episode, or a turn): the explorer's rows and side files."""
        return (self.episodes + self.rows) / self.units if self.units else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"page_bytes": self.page - self.rows, "episode_bytes": self.episodes, "row_bytes": self.rows,
                "episodes": self.n_episodes, "units": self.units, "bytes_per_unit": round(self.per_unit, 1)}


def _figures_of(page: str) -> list[str]:
    return re.findall(r"src=['\"](figures/[0-9a-f]+\.png)['\"]", page)


def measure(run_dir: Path) -> tuple[int, list[NotebookBytes]]:
    """The shared bytes of ``run_dir``'s rendered report and each notebook's part (a figure shared
    by pages counts for the first page that shows it; the index's thumbnails are its pages')."""
    from .explorer import episodes_table

    report = run_dir / "report"
    pages = sorted(p for p in report.glob("*.html") if p.stem[:1].isdigit())
    shown: set[str] = set()
    parts: list[NotebookBytes] = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        figures = [f for f in dict.fromkeys(_figures_of(text)) if f not in shown]
        shown.update(figures)
        folder = RunFolder(run_dir / page.stem)
        records = folder.records() if folder.has_records() else {}
        table = episodes_table(folder, page.stem) if records else None
        parts.append(NotebookBytes(
            notebook=page.stem, page=page.stat().st_size + sum((report / f).stat().st_size for f in figures),
            episodes=sum(p.stat().st_size for p in (report / "episodes").glob(f"{page.stem}-*.js")),
            rows=len(table.to_json(orient="values")) if table is not None else 0,
            n_episodes=len(records), units=sum(_record_units(r) for r in records.values())))
    total = sum(p.stat().st_size for p in report.rglob("*") if p.is_file())
    return total - sum(p.page + p.episodes for p in parts), parts


def measured_model(run_dir: Path, *, commit: str = "", when: str = "") -> dict[str, Any]:
    """The size model of a rendered report (what ``data/report_size.json`` holds)."""
    shared, parts = measure(run_dir)
    return {"measured": when, "commit": commit, "run": run_dir.name, "shared_bytes": shared,
            "notebooks": {p.notebook: p.as_dict() for p in parts}}


def load_model(path: Path | None = None) -> dict[str, Any] | None:
    """The measured size model (None when there is none to read)."""
    from psit_lib.data_files import data_dir

    path = path or data_dir(REPORT_SIZE)
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class SizeEstimate:
    total: float
    episodes: float  # of which: the explorers' rows and side files
    unmeasured: tuple[str, ...]  # notebooks the model has no measure of (not counted)


def estimate_bytes(plans: Mapping[str, Iterable[Mapping[str, Any]]], model: Mapping[str, Any]) -> SizeEstimate:
    """A report's bytes for ``plans`` (notebook -> each planned episode's parameters)."""
    known = model.get("notebooks") or {}
    total, episodes, unmeasured = float(model.get("shared_bytes") or 0), 0.0, []
    for notebook, specs in plans.items():
        entry = known.get(notebook)
        if entry is None:
            unmeasured.append(notebook)
            continue
        grown = float(entry["bytes_per_unit"]) * sum(episode_units(p) for p in specs)
        total += float(entry["page_bytes"]) + grown
        episodes += grown
    return SizeEstimate(total, episodes, tuple(unmeasured))


def planned(values: Mapping[str, Mapping[str, Any]], models: list[str], simulated: bool) -> dict[str, list[dict[str, Any]]]:
    """Each notebook's planned episodes' parameters (main, each swept value on the simulator, the
    notebook's other parts), from its study's plan; notebooks without one are left out."""
    from psit_lib.studies.registry import params_model, study_of

    found = {}
    for notebook, given in values.items():
        study, model = study_of(notebook), params_model(notebook)
        if study is None or model is None or study.notebook(notebook).plan is None:
            continue
        params = model(**given)
        run_models = list(getattr(params, "models", None) or models)
        sweeps = (lambda knob, swept: {value: f"sweep:{knob}={value}" for value in swept}) if simulated else None
        found[notebook] = [dict(spec.params) for part in study.parts(notebook, params, run_models, sweeps)
                           for spec in part.specs]
    return found


def report_size_line(values: Mapping[str, Mapping[str, Any]], models: list[str], simulated: bool) -> str:
    """The dry-run's line on the report: its estimated size for these notebooks and parameters."""
    model = load_model()
    if model is None:
        return "report: no size model to estimate from (benchmarks/report_bytes.py --write makes data/report_size.json)"
    size = estimate_bytes(planned(values, models, simulated), model)
    missed = f"; {', '.join(size.unmeasured)} not measured, not counted" if size.unmeasured else ""
    return (f"report: about {size.total / MB:.1f} MB, of which {size.episodes / MB:.1f} MB the episode explorers' rows "
            f"and views (measured on the simulator's report at commit {str(model.get('commit', '?'))[:10]}; real "
            f"models' replies make it larger){missed}.")


__all__ = ["NotebookBytes", "REPORT_SIZE", "SizeEstimate", "estimate_bytes", "load_model", "measure", "measured_model",
           "planned", "report_size_line"]
