"""A study as one object: its plan, its per-episode scorers and the metrics (tables) over them.

The chain is inspect_ai's: plan -> episode (generation only) -> scores per episode, stored beside
the episodes -> metrics, one table each. A notebook's run is made of parts (main, each swept
value, reference sets, judge variants), each with its own metadata; :meth:`Study.rescore` redoes
scores and metrics from a run folder alone, so a saved table is reproducible from its scores.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from psit_lib.runs.folder import RunFolder, RunStore
from psit_lib.runs.params import validate_params
from psit_lib.runs.records import EpisodeRecord, StudyResult, read_records
from psit_lib.runs.runner import EpisodeFn, EpisodeSpec
from psit_lib.runs.scores import Metric, Scored, ScoreLine, Scorer, SessionFor, score_records, scores_frame
from psit_lib.runs.sweeps import sweep_model_name, sweep_model_names, sweep_part_name

if TYPE_CHECKING:
    import pandas as pd

    from psit_lib.runs.experiment import Experiment

__all__ = ["MAIN", "EpisodeView", "Part", "Scorer", "Study", "StudyNotebook", "StudyRun", "sweep_model_name",
           "sweep_model_names", "sweep_part_name"]

MAIN = "main"
"""The name of a notebook's main part."""

@dataclass(frozen=True)
class Part:
    """One part of a notebook's run: its episodes, its own metadata (a sweep part's knob, value and
    model), and the episode function when it is not the notebook's."""

    name: str
    specs: Sequence[EpisodeSpec]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    episode: EpisodeFn | None = None


@dataclass(frozen=True)
class EpisodeView:
    """How the episode explorer shows a study's episodes: its columns and its view of one episode,
    each from the stored record (a dict, any stored format) and the episode's stored score lines
    (scorer -> line), so a view can show the judge's verdicts beside what the agents did."""

    row: Callable[[dict[str, Any], Mapping[str, Mapping[str, Any]]], dict[str, Any]]
    html: Callable[[dict[str, Any], Mapping[str, Mapping[str, Any]]], str]


@dataclass(frozen=True)
class StudyNotebook:
    """One notebook's part of a study."""

    params_model: type[BaseModel]
    plan: Callable[[Any, list[str]], Sequence[EpisodeSpec]] | None = None
    """(parameters, models) -> the notebook's main episodes, ids stable across runs."""
    episode: Callable[[Any], EpisodeFn] | None = None
    """parameters -> the episode function (generation only: model calls, no verdict)."""
    scorers: Sequence[Scorer] = ()
    """The scorers of each finished episode."""
    metrics: Sequence[Metric] = ()
    """The notebook's tables, each a metric over the scored view; :meth:`Study.run` writes them all."""
    sweeps: Callable[[Any], Mapping[str, Sequence[Any]]] | None = None
    """parameters -> simulator knob -> values swept under "What decides this result"."""
    sweep_plan: Callable[[Any, dict[Any, str]], Sequence[EpisodeSpec]] | None = None
    """(parameters, {swept value: model}) -> the sweep's episodes; called once per value."""
    parts: Callable[[Any, list[str]], Sequence[Part]] | None = None
    """(parameters, models) -> the parts the notebook runs besides its main plan and sweeps."""
    reads: tuple[str, ...] = ()
    """Notebooks of the same run whose folders this one is handed (07 reads 02, 03 and 04)."""
    reads_from: Callable[[Any], str | Path | None] | None = None
    """parameters -> a run folder to read the run-mates from instead of this run's (07's ``read_from``)."""
    key_table: str | None = None
    """The table a reader takes away (its headline reads it): what ``psit export`` puts in a paper;
    None: its first metric's."""

    @property
    def table_names(self) -> list[str]:
        """The tables the notebook's run writes (one per metric)."""
        return [m.name for m in self.metrics]


def imported(reference: str, *, call: bool = False) -> Callable[[], Any]:
    """A loader for ``"package.module:NAME"``: the object, imported when first asked (or, with
    ``call``, what calling it returns), so building a :class:`Study` imports nothing extra."""
    module, _, name = reference.partition(":")

    def load() -> Any:
        value = getattr(importlib.import_module(module), name)
        return value() if call else value

    return load


@dataclass
class StudyRun:
    """A notebook's run as :meth:`Study.run` or :meth:`Study.rescore` leaves it: the typed
    records per part, the scored view and every table (by metric name)."""

    records: dict[str, list[EpisodeRecord[Any]]]
    scored: Scored
    tables: dict[str, pd.DataFrame]

    @property
    def scores(self) -> pd.DataFrame:
        """One row per episode (inspect's ``samples_df`` shape; see :class:`Scored`)."""
        return self.scored.scores

    def part(self, name: str = MAIN) -> list[EpisodeRecord[Any]]:
        """The typed records of one part, in plan order."""
        return self.records.get(name, [])

    @property
    def main(self) -> list[EpisodeRecord[Any]]:
        return self.part(MAIN)


RunMates = str | Path | Mapping[str, str | Path] | None


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
    result_types: Mapping[str, type[StudyResult]] = field(default_factory=dict)
    """notebook -> its result type where it is not :attr:`result_type` (07's secret choices)."""
    episode_view: Callable[[], EpisodeView] | None = None
    """The study's :class:`EpisodeView` (loaded when asked; None: the explorer's generic view)."""

    def notebook(self, name: str) -> StudyNotebook:
        try:
            return self.notebooks[name]
        except KeyError:
            raise KeyError(f"study {self.name!r} backs no notebook {name!r}; it backs "
                           f"{', '.join(self.notebooks)}") from None

    def params_model(self, notebook: str) -> type[BaseModel]:
        return self.notebook(notebook).params_model

    def scorer(self, notebook: str, name: str) -> Scorer:
        """One of the notebook's scorers by name; KeyError naming the others."""
        return _by_name(self.notebook(notebook).scorers, name, f"notebook {notebook!r}", "scorer")

    def metric(self, notebook: str, table: str) -> Metric:
        """The metric that builds one of the notebook's tables; KeyError naming the others."""
        return _by_name(self.notebook(notebook).metrics, table, f"notebook {notebook!r}", "table")

    def direction(self, notebook: str, table: str, column: str) -> str | None:
        """Which way is better for a column of a table (``"higher"``, ``"lower"``, or None: no
        better or worse), as its metric declares it: what a reading of that table is handed."""
        return self.metric(notebook, table).direction(column)

    # -- plan ---------------------------------------------------------------------------------
    def plan(self, notebook: str, params: Any, models: list[str]) -> list[EpisodeSpec]:
        part = self.notebook(notebook)
        if part.plan is None:
            raise ValueError(f"notebook {notebook!r} of study {self.name!r} plans no episodes")
        return list(part.plan(params, models))

    def parts(self, notebook: str, params: Any, models: list[str],
              sweep_models: Callable[[str, Sequence[Any]], dict[Any, str]] | None = None) -> list[Part]:
        """Every part of the notebook's run, in run order: main, each swept value (only where
        ``sweep_models`` names models: the simulator), then the notebook's other parts."""
        nb = self.notebook(notebook)
        parts = [Part(MAIN, self.plan(notebook, params, models), {"models": list(models)})]
        if nb.sweeps is not None and nb.sweep_plan is not None and sweep_models is not None:
            for knob, values in nb.sweeps(params).items():
                for value, model in sweep_models(knob, list(values)).items():
                    parts.append(Part(sweep_part_name(knob, value), list(nb.sweep_plan(params, {value: model})),
                                      {"knob": knob, "value": value, "model": model}))
        if nb.parts is not None:
            parts += list(nb.parts(params, models))
        return parts

    # -- run: generation, scores, metrics, tables ---------------------------------------------
    async def run(self, exp: Experiment, params: Any, *, run_mates: RunMates = None) -> StudyRun:
        """Run every part of ``exp.notebook``, score every finished episode, compute every metric
        and write every table to the notebook folder; a :class:`StudyRun` back.

        ``run_mates``: where the notebooks this one reads are (a run folder, or notebook ->
        folder); by default the notebook's ``reads_from`` parameter, else this run's folder."""
        nb = self.notebook(exp.notebook)
        if nb.episode is None:
            raise ValueError(f"notebook {exp.notebook!r} of study {self.name!r} runs no episodes")
        episode = nb.episode(params)
        concurrency = getattr(params, "concurrency", None)
        records: dict[str, list[EpisodeRecord[Any]]] = {}
        part_meta: dict[str, dict[str, Any]] = {}
        for part in self.parts(exp.notebook, params, exp.models, exp.sweep_models):
            ran = await exp.run(part.specs, part.episode or episode, concurrency=concurrency,
                                desc=part.name.replace(":", " "))
            records[part.name] = list(ran)
            part_meta[part.name] = {**part.metadata, "episodes": len(part.specs)}
            exp.record_part(part.name, part_meta[part.name])
        mates = self._run_mates(nb, params, run_mates, exp.store.dir if exp.store.dir.parent == exp.run_dir else None)
        run = await self._score(exp.notebook, params, list(exp.models), records, exp.store,
                                backend=exp.settings.backend, profile=exp.settings.profile_label,
                                parts=part_meta, run_mates=mates, session_for=exp.scoring_session)
        exp.record_scorers({s.name: s.version for s in nb.scorers})
        for name, table in run.tables.items():
            exp.save_table(table, name)
        return run

    def _run_mates(self, nb: StudyNotebook, params: Any, given: RunMates, folder: Path | None) -> dict[str, Path]:
        """The run-mates' folders: ``given``, else the ``reads_from`` parameter's run folder, else
        the run folder holding ``folder``; only those that exist."""
        if not nb.reads:
            return {}
        if given is None and nb.reads_from is not None:
            given = nb.reads_from(params)
        if given is None and folder is not None:
            given = folder.parent
        if given is None:
            return {}
        if isinstance(given, Mapping):
            return {name: Path(path) for name, path in given.items() if Path(path).is_dir()}
        return {name: Path(given) / name for name in nb.reads if (Path(given) / name).is_dir()}

    async def _score(self, notebook: str, params: Any, models: list[str],
                     records: Mapping[str, Sequence[EpisodeRecord[Any]]], store: RunStore, *,
                     backend: str, profile: str | None, parts: Mapping[str, Mapping[str, Any]],
                     run_mates: Mapping[str, Path], session_for: SessionFor | None = None,
                     rescore: Sequence[str] = (), rewrite: bool = False) -> StudyRun:
        """Score the records (stored scores of the same version kept, except ``rescore``'s),
        store the new lines (appended; ``rewrite``: the file written afresh), and compute every
        metric from the scores as stored."""
        nb = self.notebook(notebook)
        scorers = nb.scorers
        stored_raw = store.score_lines()
        stored = {k: ScoreLine.model_validate(v) for k, v in stored_raw.items() if k[1] not in rescore}
        pairs = [(part, rec) for part, recs in records.items() for rec in recs]
        lines = await score_records(pairs, scorers, params=params, models=models, session_for=session_for,
                                    stored=stored)
        stored_lines = [line.stored() for line in lines]
        new = [line for line in stored_lines if stored_raw.get((line["episode_id"], line["scorer"])) != line]
        if new and rewrite:  # a rescore rewrites the file: each (episode, scorer) once, the new score
            merged = {**stored_raw, **{(line["episode_id"], line["scorer"]): line for line in new}}
            store.write_scores(list(merged.values()))
        else:
            store.append_scores(new)
        scored = Scored(params, models, scores_frame(pairs, stored_lines, [s.name for s in scorers]), backend,
                        profile, {p: dict(m) for p, m in parts.items()},
                        {rec.episode_id: rec for _, rec in pairs}, dict(run_mates))
        tables = {m.name: m(scored if m.parts is None else scored.only(m.parts)) for m in nb.metrics}
        return StudyRun({p: list(r) for p, r in records.items()}, scored, tables)

    # -- rescore: scores and metrics from a folder alone -------------------------------------------
    def rescore(self, folder: str | Path, scorers: Sequence[str] | None = None, *,
                run_mates: RunMates = None, session_for: SessionFor | None = None) -> StudyRun:
        """Score a folder's stored episodes again (``scorers``: recomputed even where a score of their
        version is stored; others only where missing) and compute every metric, building a model session
        only for a model-graded scorer; scores and the rescore are recorded, tables returned, not written."""
        return asyncio.run(self.rescore_async(folder, scorers, run_mates=run_mates, session_for=session_for))

    def stored_parts(self, folder: RunFolder, notebook: str | None = None) -> tuple[Any, list[str], list[Part]]:
        """A run folder's parameters (validated), models and parts as its run planned them (from
        ``params.json`` alone): what a rescore scores and the explorer lists, in plan order.
        ``notebook``: the folder's notebook when the folder is not named after it (a run by hand)."""
        notebook = notebook or folder.dir.name
        nb = self.notebook(notebook)
        run_params = folder.params()
        params = validate_params(nb.params_model, {k: v for k, v in run_params.stored().items()
                                                   if not k.startswith("_") and k in nb.params_model.model_fields})
        models, backend, profile = list(run_params.run_models), run_params.run_backend or "sim", run_params.run_profile

        def sweep_models(knob: str, values: Sequence[Any]) -> dict[Any, str]:
            return sweep_model_names(profile, knob, values) if backend == "sim" and profile else {}

        return params, models, self.parts(notebook, params, models, sweep_models)

    async def rescore_async(self, folder: str | Path, scorers: Sequence[str] | None = None, *,
                            run_mates: RunMates = None, session_for: SessionFor | None = None) -> StudyRun:
        notebook = Path(folder).name
        nb = self.notebook(notebook)
        for name in scorers or ():
            self.scorer(notebook, name)
        store = RunStore(folder)
        run_params = store.params()
        params, models, planned = self.stored_parts(store)
        backend, profile = run_params.run_backend or "sim", run_params.run_profile
        before = store.metadata()
        stored = store.records()
        records: dict[str, list[EpisodeRecord[Any]]] = {}
        part_meta: dict[str, dict[str, Any]] = {}
        for part in planned:
            raw = [stored[s.episode_id] for s in part.specs if s.episode_id in stored]
            records[part.name] = read_records(raw, self.result_types.get(notebook, self.result_type),
                                           source=store.records_source)
            part_meta[part.name] = {**part.metadata, "episodes": len(part.specs)}
        mates = self._run_mates(nb, params, run_mates, Path(folder))
        run = await self._score(notebook, params, models, records, store, backend=backend, profile=profile,
                                parts=part_meta, run_mates=mates, session_for=session_for,
                                rescore=list(scorers) if scorers is not None else [], rewrite=True)
        versions = {s.name: s.version for s in nb.scorers}
        changed = {k: v for k, v in versions.items() if before.scorer_versions.get(k) != v}
        if changed or scorers:
            from psit_lib.runs.metadata import now_iso

            before.scorer_versions = {**before.scorer_versions, **versions}
            before.rescored = [*before.rescored, {"at": now_iso(), "scorers": list(scorers or versions),
                                                  "versions_changed": changed}]
            store.write_metadata(before)
        return run

_Named = TypeVar("_Named", Scorer, Metric)


def _by_name(items: Iterable[_Named], name: str, owner: str, kind: str) -> _Named:
    """The item called ``name`` among ``items``; KeyError naming the others."""
    found = {item.name: item for item in items}
    if name not in found:
        raise KeyError(f"{owner} has no {kind} {name!r}; its {kind}s are {', '.join(found) or 'none'}")
    return found[name]
