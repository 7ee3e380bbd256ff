"""A study as one object: what it runs, what it stores, how its tables are scored.

A :class:`Study` gathers what a study otherwise spreads over its modules: its name and result
type, the notebooks it backs (each a :class:`StudyNotebook`: the notebook's parameter model,
its plan, its episode function, its sweeps and its named scorers), its prompt catalogue, its
departures from the reproduced study and the simulator assumptions acting on it.

Generation and scoring are apart. :meth:`Study.run` plans and runs episodes (model calls);
scorers read stored, typed records and return tables without calling any model, so
:meth:`Study.rescore` recomputes a notebook's tables from its run folder alone
(``psit rescore``). A scorer gets a :class:`StoredRun`: the notebook's validated parameters,
the models and profile it ran with, and every typed record of its folder.
"""

from __future__ import annotations

import importlib

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from psit_lib.runs.folder import RunFolder
from psit_lib.runs.records import EpisodeRecord, StudyResult
from psit_lib.runs.runner import EpisodeFn, EpisodeSpec

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs.experiment import Experiment

__all__ = ["Scorer", "StoredRun", "Study", "StudyNotebook", "sweep_model_names"]


def sweep_model_names(profile: str, knob: str, values: Sequence[Any]) -> dict[Any, str]:
    """The simulated model name of each swept value, as ``Experiment.sweep_models`` names them."""
    from psit_lib.sim.profiles import with_override
    from psit_lib.wire import SIM_MODEL_NAME

    return {value: f"{SIM_MODEL_NAME}:{with_override(profile, knob, value)}" for value in values}


@dataclass(frozen=True)
class StoredRun:
    """What a scorer reads: one notebook's stored records and the parameters they ran with.

    ``records`` are given (:meth:`Study.score`) or read from ``folder`` as ``result_type`` when a
    scorer selects them (:meth:`Study.rescore`): only the episodes a scorer asks for are read, so
    a folder may also hold records of another type (notebook 05's re-judged turns)."""

    notebook: str
    params: Any
    models: list[str]
    records: list[EpisodeRecord[Any]] | None = None
    backend: str = "sim"
    profile: str | None = None
    folder: RunFolder | None = None
    result_type: type[StudyResult] | None = None

    def select(self, specs: Sequence[EpisodeSpec]) -> list[EpisodeRecord[Any]]:
        """The records of ``specs``, in plan order (episodes never recorded are left out)."""
        if self.records is None:
            if self.folder is None or self.result_type is None:
                raise ValueError("a stored run needs its records, or a folder and a result type")
            return self.folder.typed_records(self.result_type, [s.episode_id for s in specs])
        by_id = {r.episode_id: r for r in self.records}
        return [by_id[s.episode_id] for s in specs if s.episode_id in by_id]

    def sweep_models(self, knob: str, values: Sequence[Any]) -> dict[Any, str]:
        """The swept models as the run named them; empty on a real endpoint (no sweep ran)."""
        if self.backend != "sim" or not self.profile:
            return {}
        return sweep_model_names(self.profile, knob, values)


Scorer = Callable[[StoredRun], "pd.DataFrame"]
"""A pure function of the stored records: one table, named by the scorer's key."""


@dataclass(frozen=True)
class StudyNotebook:
    """One notebook's part of a study."""

    params_model: type[BaseModel]
    plan: Callable[[Any, list[str]], Sequence[EpisodeSpec]] | None = None
    """(parameters, models) -> the notebook's main episodes, ids stable across runs."""
    episode: Callable[[Any], EpisodeFn] | None = None
    """parameters -> the episode function (generation only: model calls, no scoring)."""
    scorers: Mapping[str, Scorer] = field(default_factory=dict)
    """table name -> scorer; the names are those the notebook saves its tables under."""
    sweeps: Callable[[Any], Mapping[str, Sequence[Any]]] | None = None
    """parameters -> simulator knob -> values swept under "What decides this result"."""
    sweep_plan: Callable[[Any, dict[Any, str]], Sequence[EpisodeSpec]] | None = None
    """(parameters, swept value -> model) -> the sweep's episodes."""
    key_tables: tuple[str, ...] = ()
    """The tables the report and ``psit compare`` show first."""
    further_plans: tuple[Callable[[Any, list[str]], Sequence[EpisodeSpec]], ...] = ()
    """(parameters, models) -> episodes the notebook runs besides its main plan and sweeps
    (BASIS's reference-design sets), for estimates."""
    unplanned: str = ""
    """Model calls the notebook makes that no plan lists (they depend on earlier results), said
    beside an estimate."""


def imported(reference: str, *, call: bool = False) -> Callable[[], Any]:
    """A loader for ``"package.module:NAME"``: the object, imported when first asked (or, with
    ``call``, what calling it returns), so building a :class:`Study` imports nothing extra."""
    module, _, name = reference.partition(":")

    def load() -> Any:
        value = getattr(importlib.import_module(module), name)
        return value() if call else value

    return load


@dataclass(frozen=True)
class Study:
    """A study: its notebooks, result type, prompts, departures and simulator assumptions."""

    name: str
    result_type: type[StudyResult]
    notebooks: Mapping[str, StudyNotebook]
    prompt_catalogue: Callable[[], Mapping[str, str]]
    differences: Callable[[], Sequence[Any]]
    """The study's ``DIFFERENCES`` (loaded when asked)."""
    simulator_assumptions: Callable[[], Mapping[str, Any]]
    """The study's ``SIMULATOR_ASSUMPTIONS``: notebook -> roles and knobs acting on it."""

    def notebook(self, name: str) -> StudyNotebook:
        try:
            return self.notebooks[name]
        except KeyError:
            raise KeyError(f"study {self.name!r} backs no notebook {name!r}; it backs "
                           f"{', '.join(self.notebooks)}") from None

    def params_model(self, notebook: str) -> type[BaseModel]:
        return self.notebook(notebook).params_model

    # -- generation ---------------------------------------------------------------------------
    def plan(self, notebook: str, params: Any, models: list[str]) -> list[EpisodeSpec]:
        part = self.notebook(notebook)
        if part.plan is None:
            raise ValueError(f"notebook {notebook!r} of study {self.name!r} plans no episodes")
        return list(part.plan(params, models))

    async def run(self, exp: Experiment, params: Any) -> list[EpisodeRecord[Any]]:
        """Plan the notebook's main episodes (``exp.notebook``) and run them; typed records back."""
        part = self.notebook(exp.notebook)
        if part.episode is None:
            raise ValueError(f"notebook {exp.notebook!r} of study {self.name!r} runs no episodes")
        specs = self.plan(exp.notebook, params, exp.models)
        return await exp.run(specs, part.episode(params), concurrency=getattr(params, "concurrency", None))

    async def run_sweeps(self, exp: Experiment, params: Any) -> list[EpisodeRecord[Any]]:
        """Run every sweep of the notebook (none on a real endpoint); typed records back."""
        part = self.notebook(exp.notebook)
        if part.sweeps is None or part.sweep_plan is None or part.episode is None:
            return []
        records: list[EpisodeRecord[Any]] = []
        for knob, values in part.sweeps(params).items():
            models = exp.sweep_models(knob, values)
            records += await exp.run(part.sweep_plan(params, models), part.episode(params),
                                     concurrency=getattr(params, "concurrency", None))
        return records

    # -- scoring (no model call) --------------------------------------------------------------
    def score(self, records: Sequence[EpisodeRecord[Any]], *, notebook: str, params: Any,
              models: Sequence[str], backend: str = "sim", profile: str | None = None) -> dict[str, pd.DataFrame]:
        """Every scorer of the notebook over ``records``: table name -> table."""
        return self.score_run(StoredRun(notebook, params, list(models), list(records), backend, profile))

    def score_experiment(self, exp: Experiment, params: Any, records: Sequence[EpisodeRecord[Any]] | None = None,
                         tables: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
        """The tables (every scorer of ``exp``'s notebook, or ``tables``) over ``records`` just run
        by ``exp``, or, without them, over every record of ``exp``'s folder: in a notebook, the same
        scorers :meth:`rescore` runs later over the folder (whatever the folder is named)."""
        run = StoredRun(exp.notebook, params, list(exp.models), None if records is None else list(records),
                        exp.settings.backend, exp.settings.profile_label, exp.store, self.result_type)
        return self.score_run(run, tables)

    def score_run(self, run: StoredRun, tables: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
        scorers = self.notebook(run.notebook).scorers
        return {name: scorers[name](run) for name in (tables if tables is not None else scorers)}

    def stored_run(self, folder: str | Path) -> StoredRun:
        """A notebook folder's stored run: its parameters (validated), models and typed records."""
        run_folder = RunFolder(folder)
        notebook = Path(folder).name
        part = self.notebook(notebook)
        stored = run_folder.params().stored()
        values = {k: v for k, v in stored.items() if not k.startswith("_")}
        params = part.params_model.model_validate(values)
        models = [str(m) for m in stored.get("_models") or []]
        return StoredRun(notebook, params, models, None, str(stored.get("_backend") or "sim"),
                         stored.get("_profile"), run_folder, self.result_type)

    def rescore(self, notebook_folder: str | Path) -> dict[str, pd.DataFrame]:
        """The notebook's tables recomputed from its folder's stored records; no client is built."""
        return self.score_run(self.stored_run(notebook_folder))
