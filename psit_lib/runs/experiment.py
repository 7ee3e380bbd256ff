"""What a notebook opens: settings, client, cache, run folder and store in one object.

Under ``psit run`` the folder is ``$PSIT_RUN_DIR/<notebook>`` beside the run's ``cache.sqlite``;
opened by hand it is ``<adhoc root>/<notebook>-<hash of parameters and set-up>``, outside the
repository, so another set-up is another folder, never a resume.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from psit_lib.llm.cache import ResponseCache
from psit_lib.llm.client import LLMClient, ModelSession, SamplingDefaults
from psit_lib.llm.model_settings import reply_budget
from psit_lib.llm.settings import LLMSettings

from psit_lib.runs import outputs
from psit_lib.runs.backend import make_client
from psit_lib.runs.checkpoints import kept_checkpoints
from psit_lib.runs.folder import Execution, HealthRecord, RunMetadata, RunStore
from psit_lib.runs.health import DEFAULT_SUSPECT_THRESHOLD, HealthVerdict, folder_health
from psit_lib.runs.identity import EXECUTION_PARAMS, current_identity, default_run_id, episode_params, fingerprint
from psit_lib.runs.identity import bind as bind_identity
from psit_lib.runs.metadata import (base_metadata, git_commit, now_iso, prompt_fingerprints,
                                     simulator_assumptions_table, simulator_configuration)
from psit_lib.runs.paths import adhoc_root
from psit_lib.runs.runner import EpisodeFn, EpisodeSpec, execute_episodes
from psit_lib.runs.sweeps import sweep_model_names

if TYPE_CHECKING:
    from psit_lib.analysis.claims import RunContext

__all__ = ["Experiment", "RunSummary"]

CLIENT_SPEED = ("concurrency", "endpoint_slots", "timeout", "max_retries")
"""The model client's settings that change how fast an execution goes, recorded with it."""


class RunSummary(dict[str, Any]):
    """What :meth:`Experiment.finish` returns: the execution's statistics, still a dict for code,
    shown as a two-column table (not a raw dict) where a notebook ends with it."""

    def _repr_html_(self) -> str:
        import html

        def cell(value: Any) -> str:
            if isinstance(value, dict):
                return ", ".join(f"{k}: {v}" for k, v in value.items()) or "—"
            return "—" if value is None else str(value)

        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k).replace('_', ' '))}</th>"
                       f"<td style='text-align:left'>{html.escape(cell(v))}</td></tr>" for k, v in self.items())
        return f"<table class='psit-run-summary'><caption>This execution</caption>{rows}</table>"


class Experiment:
    """One notebook's experiment: call ``await exp.run(specs, fn)`` then ``exp.finish()``."""

    def __init__(self, notebook: str, params: dict[str, Any], *, seed: int = 0,
                 temperature: float = 0.3, max_tokens: int = 2048,
                 models: Sequence[str] | None = None, profile: str | None = None,
                 settings: LLMSettings | None = None, run_dir: str | Path | None = None,
                 prompts: Mapping[str, str] | None = None) -> None:
        self.notebook = notebook
        self.params = dict(params)
        self.seed = seed
        self.settings = settings or LLMSettings.from_env(sim_profile=profile)
        self.models = list(models) if models else [self.settings.model]
        self.sampling = SamplingDefaults(temperature=temperature, max_tokens=max_tokens)
        commit = git_commit()
        setup = current_identity(self.settings, self.models, prompts=prompt_fingerprints(prompts or {}), code=commit)
        bound = episode_params(self.params, backend=self.settings.backend, models=self.models,
                               profile=self.settings.profile_label)
        own_id = default_run_id({notebook: fingerprint(bound, setup)})  # this set-up's run of this notebook alone
        if run_dir is None and os.environ.get("PSIT_RUN_DIR"):
            run_dir = Path(os.environ["PSIT_RUN_DIR"])
            folder = run_dir / notebook
        elif run_dir is not None:
            folder = Path(run_dir) / notebook
        else:  # by hand: another set-up is another folder, never a resume
            run_dir = adhoc_root() / f"{notebook}-{fingerprint(bound, setup)[:10]}"
            folder = Path(run_dir)
        self.run_dir = Path(run_dir)
        self.store = RunStore(folder)
        warning = bind_identity(self.store, bound, setup, f"{self.run_dir.name}/{notebook}", own_id)
        if warning:
            logging.getLogger("psit_lib.runs").warning("%s: %s", notebook, warning)
        self.cache = ResponseCache(self.run_dir / "cache.sqlite", mode=self.settings.cache)
        self.clients = {m: make_client(self.settings.model_copy(update={"model": m}), cache=self.cache)
                        for m in self.models}
        self.client = self.clients[self.models[0]]
        self._episode_counts = {"planned": 0, "resumed": 0, "done": 0}
        self._runs = 0  # exp.run calls of unswept models so far: names the phase in the progress file
        self._swept: dict[str, str] = {}  # swept model name -> its knob (sweep_models)
        self._started, self._commit = now_iso(), commit  # this execution's (the metadata keeps the first's)
        # a resume adds to the record, never replaces it: what earlier executions recorded stays
        # (their executions, parts, roles), the first execution's start and commit included
        previous = self.store.metadata().stored()
        current = base_metadata(self.settings, seed=seed, notebook=notebook, commit=commit)
        kept = {k: previous[k] for k in ("started", "git_commit") if previous.get(k)}
        self.metadata = RunMetadata.model_validate({**previous, **current, **kept,
                                                    "prompts": prompt_fingerprints(prompts or {}),
                                                    "prompt_versions": dict(getattr(prompts, "versions", {})),
                                                    # templates a user's PSIT_PROMPTS_FILE replaced
                                                    "prompt_overrides": dict(getattr(prompts, "overridden", {})),
                                                    "plugins": setup.plugins or {}})
        self.store.write_metadata(self.metadata)

    # -- provenance ---------------------------------------------------------------------------
    @property
    def label(self) -> str:
        """The provenance line every table and figure carries."""
        from psit_lib.analysis.labels import provenance_label

        return provenance_label(self.settings.backend if not self.settings.simulated else "sim",
                                ", ".join(self.models), self.settings.profile_label)

    def banner(self) -> str:
        """Markdown banner for the top of a notebook."""
        kind = ("**SIMULATED MODEL** — numbers show the protocol's information flow, not any "
                "real model's behaviour" if self.settings.simulated else "real endpoint")
        return (f"**Backend:** `{self.settings.backend}` ({kind}) · **model:** `{', '.join(self.models)}` · "
                f"**profile:** `{self.settings.profile_label}` · **seed:** `{self.seed}` · "
                f"**temperature:** `{self.sampling.temperature}`" + self._budget_line())

    def _budget_line(self) -> str:
        """The token budget that applies to a host's replies when it is not the run's ``max_tokens`` (a real endpoint
        caps them unless the model has its own, llm/model_settings.py), so the page never shows 2048 where 512 applies."""
        budgets = {m: reply_budget("task_host", self.sampling.max_tokens,
                                   self.settings.model_settings.get(m) or None, self.settings.simulated)
                   for m in self.models}
        capped = {m: b for m, b in budgets.items() if b < self.sampling.max_tokens}
        if not capped:
            return ""
        shown = ", ".join(f"`{b}` ({m})" for m, b in capped.items())
        return (f" · **host replies capped at:** {shown} tokens, below `max_tokens` = `{self.sampling.max_tokens}` "
                "(no max_tokens of the model's own in PSIT_MODEL_SETTINGS): Table 1 cells read *not comparable*")

    def run_context(self) -> "RunContext":
        """What the claims ledger needs to know about this notebook's run: the simulator or not, and its models."""
        from psit_lib.analysis.claims import RunContext

        return RunContext(simulated=self.settings.simulated, models=tuple(self.models))

    # -- running ------------------------------------------------------------------------------
    async def run(self, specs: Sequence[EpisodeSpec], episode_fn: EpisodeFn, *,
                  concurrency: int | None = None, desc: str | None = None,
                  progress: bool | None = None) -> list[Any]:
        """Run (or resume) the planned episodes; one record per spec, in plan order: typed when the
        episode function declares its ``result_type``, else flat dicts. ``progress`` defaults to a
        bar only outside ``psit run`` (whose terminal shows progress instead)."""
        if progress is None:
            progress = not os.environ.get("PSIT_RUN_DIR")
        async with kept_checkpoints(self.store.dir):  # PSIT_CHECKPOINTS=sqlite: the agents' checkpoints on disk
            counts = await execute_episodes(specs, episode_fn, store=self.store, client=self.client_for,
                                            run_seed=self.seed, sampling=self.sampling,
                                            concurrency=concurrency or self.settings.concurrency,
                                            desc=desc or self._phase(specs), progress=progress, count_progress=True)
        for key, value in counts.as_dict().items():  # every run() of the notebook counts, sweeps too
            if key in self._episode_counts:
                self._episode_counts[key] += int(value)
        ids = [s.episode_id for s in specs]
        result_type = getattr(episode_fn, "result_type", None)
        if result_type is None:
            return list(self.store.flat_records(ids).values())
        return self.store.typed_records(result_type, ids)

    def _phase(self, specs: Sequence[EpisodeSpec]) -> str:
        """This run's name in ``psit run``'s progress: ``sweep <knob>`` for swept models, ``main`` for
        the first run, ``part <n>`` for a later one (a reference set)."""
        knobs = {self._swept[m] for s in specs if (m := s.params.get("model")) in self._swept}
        if knobs:
            return "sweep " + ", ".join(sorted(knobs))
        self._runs += 1
        return "main" if self._runs == 1 else f"part {self._runs}"

    def client_for(self, spec: EpisodeSpec) -> LLMClient:
        """The client of an episode: by its ``model`` parameter when several models run."""
        return self.clients.get(spec.params.get("model", self.models[0]), self.client)

    def sweep_models(self, knob: str, values: Sequence[Any]) -> dict[Any, str]:
        """Model names running this run's profile with ``knob`` at each value, ready for a plan; empty on a
        real endpoint. Swept profiles draw the base profile's random numbers: values differ only where the knob acts."""
        if not self.settings.simulated:
            return {}
        models = sweep_model_names(self.settings.sim_profile, knob, values)
        for model in models.values():
            self._swept[model] = knob
            if model not in self.clients:
                self.clients[model] = make_client(self.settings.model_copy(update={"model": model}), cache=self.cache)
        return models

    def record_part(self, name: str, metadata: Mapping[str, Any]) -> None:
        """Record one part of the notebook's run (main, a swept value...) with its own metadata."""
        self.metadata.parts = {**self.metadata.parts, name: dict(metadata)}
        self.store.write_metadata(self.metadata)

    def record_scorers(self, versions: Mapping[str, int]) -> None:
        """Record the version of each scorer the stored scores were computed by, and the sampling
        of model-graded scorers' sessions (a rescore replays their calls with it)."""
        self.metadata.scorer_versions = {**self.metadata.scorer_versions, **versions}
        self.metadata.scoring_sampling = {"temperature": self.sampling.temperature,
                                          "max_tokens": self.sampling.max_tokens}
        self.store.write_metadata(self.metadata)

    def scoring_session(self, record: Any, scorer: Any) -> ModelSession:
        """A model-graded scorer's session for one episode: the episode's client (through the
        run's response cache, so a rescore replays), its own seed path ``score/<scorer>``."""
        spec = EpisodeSpec(record.episode_id, dict(record.spec))
        return ModelSession(self.client_for(spec), run_seed=self.seed, episode_id=record.episode_id,
                            sampling=self.sampling, path=f"score/{scorer.name}")

    def call_stats(self) -> dict[str, Any]:
        totals: dict[str, Any] = {}
        for client in self.clients.values():
            for key, value in client.stats.as_dict().items():  # per-key counts start at 1: Counter keeps them all
                totals[key] = (dict(Counter(totals.get(key)) + Counter(value)) if isinstance(value, dict)
                               else totals.get(key, 0) + value)
        return totals

    def simulator_assumptions(self, roles: Sequence[str], knobs: Sequence[str] | None = None) -> pd.DataFrame:
        """The simulated model's assumptions that act on this notebook's results: the profile's
        knobs (all, or ``knobs``) and the named roles' constants. Empty on a real endpoint."""
        rows = simulator_assumptions_table(self.settings, roles, knobs)
        return pd.DataFrame(rows, columns=["source", "assumption", "value", "meaning"])

    def declared_simulator_assumptions(self, declared: Mapping[str, tuple[Sequence[str], Sequence[str]]],
                                       where: str) -> pd.DataFrame:
        """:meth:`simulator_assumptions` for the roles and knobs a study declares for this notebook
        (``declared``: notebook -> (roles, knobs), kept in the study's ``assumptions`` module,
        ``where``), so notebooks never spell simulator names."""
        if self.notebook not in declared:
            raise KeyError(f"no simulator assumptions declared for notebook {self.notebook!r} ({where})")
        roles, knobs = declared[self.notebook]
        return self.simulator_assumptions(roles, knobs)

    def save_figure(self, fig, name: str) -> Path:
        """Save a figure (PNG and SVG) to the run folder as ``<notebook>__<name>``; only ``psit run``
        copies a complete run's figures to ``figures/`` (:func:`publish_figures`)."""
        path = self.store.figures_dir / f"{self.notebook}__{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        fig.savefig(path.with_suffix(".svg"), bbox_inches="tight")
        return path

    def save_table(self, table: pd.DataFrame, name: str) -> Path:
        """Write a result table to ``<notebook folder>/tables/<name>.csv`` and ``.parquet``, so
        runs can be compared (``psit compare``) and results reused outside the notebook."""
        return outputs.save_table(table, self.store.tables_dir, name)

    def headline(self, text: str, view: str | None = None) -> str:
        """Record the notebook's key sentence (made from its tables, never by hand) for the report's
        index, each line's whitespace collapsed; ``view`` names the table or rule it reads, shown first."""
        if view:
            text = f"*{view}:*\n{text}"
        self.metadata.headline = "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())
        self.store.write_metadata(self.metadata)
        return text

    def health(self) -> HealthVerdict:
        """The run health over every episode recorded so far (sweeps included), judged against the
        ``suspect_threshold`` parameter and recorded in the metadata for ``psit run`` and the report."""
        verdict = folder_health(self.store, float(self.params.get("suspect_threshold", DEFAULT_SUSPECT_THRESHOLD)))
        self.metadata.health = HealthRecord.model_validate(verdict.as_dict())
        self.store.write_metadata(self.metadata)
        return verdict

    def finish(self, **summary: Any) -> RunSummary:
        """Write this execution's call statistics into the run metadata and return them. The
        episode counts cover every ``run`` of this execution (main runs and sweeps), not the last."""
        records = self.store.records()
        counts = self._episode_counts
        public = self.settings.public_dict()
        execution = {"started": self._started, "ended": now_iso(), "git_commit": self._commit,
                     **self.call_stats(),
                     "episodes_recorded": len(records),
                     "episodes_failed": sum(r.get("status") != "ok" for r in records.values()),
                     "episodes_planned": counts["planned"],
                     "episodes_resumed": counts["resumed"],
                     "episodes_run": counts["done"],
                     # how this execution ran (never part of the identity): episodes and calls in flight, timeouts
                     "settings": {**{k: self.params[k] for k in sorted(EXECUTION_PARAMS) if k in self.params},
                                  **{f"client_{k}": public[k] for k in CLIENT_SPEED if k in public}},
                     **summary}
        # the models the episodes actually ran with (sweeps add simulated profiles), not only the
        # environment's model
        self.metadata.models_run = sorted({str((r.get("spec") or {}).get("model") or self.models[0])
                                           for r in records.values()})
        # every role that answered in any execution: a fully resumed one makes no calls
        roles = {*execution.get("calls_by_role", {}), *(r for e in self.metadata.executions for r in e.calls_by_role)}
        self.metadata.simulator = simulator_configuration(self.settings, roles)
        execution["health"] = self.health().status
        typed = Execution.model_validate(execution)
        self.metadata.executions = [*self.metadata.executions, typed]
        self.metadata.ended = typed.ended
        self.metadata.last_execution = typed
        self.store.write_metadata(self.metadata)
        return RunSummary(execution)
