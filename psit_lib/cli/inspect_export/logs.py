"""A notebook's episodes as Inspect eval logs: one log per model and part of the run (main, each swept
value, each reference set), one sample per episode, written with inspect_ai's own API.

A sample holds the episode as it happened (:mod:`~psit_lib.cli.inspect_export.episodes`), its usage
(per model and per role) and wall time, every stored score with its explanation and version, and
the agent, model, part and the private state as metadata. A failed episode is a sample with its
error and no score. Each log's results are means over its scores, overall and per agent (what
inspect_ai's ``grouped(mean(), "agent")`` gives), and the shares of each label of a labelling score.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from inspect_ai.event import timeline_build
from inspect_ai.log import (EvalConfig, EvalDataset, EvalError, EvalLog, EvalMetric, EvalResults, EvalRevision,
                            EvalSample, EvalScore, EvalSpec, EvalStats, write_eval_log)
from inspect_ai.model import ModelUsage
from inspect_ai.scorer import Score

from psit_lib.cli.inspect_export.episodes import SHOWN, first_user_text, tell
from psit_lib.cli.inspect_export.trace import TIMES, Trace, usage_of
from psit_lib.runs.folder import RunFolder

MAIN = "main"


def planned_parts(folder: RunFolder) -> dict[str, str]:
    """Each planned episode's part, as the notebook's study plans the run from its recorded
    parameters (what ``psit rescore`` reads); empty when that cannot be done (no registered study,
    parameters this code no longer reads)."""
    try:
        from psit_lib.runs.params import validate_params
        from psit_lib.runs.sweeps import sweep_model_names
        from psit_lib.studies.registry import study_of

        study = study_of(folder.dir.name)
        if study is None:
            return {}
        run = folder.params()
        model = study.params_model(folder.dir.name)
        params = validate_params(model, {k: v for k, v in run.stored().items()
                                         if not k.startswith("_") and k in model.model_fields})

        def sweep_models(knob: str, values: Any) -> dict[Any, str]:
            return sweep_model_names(run.run_profile, knob, values) if run.run_backend == "sim" and run.run_profile else {}

        parts = study.parts(folder.dir.name, params, list(run.run_models), sweep_models)
    except Exception:  # a run this code cannot plan again: the scores say the parts
        return {}
    return {spec.episode_id: part.name for part in parts for spec in part.specs}


def _value(value: Any) -> Any:
    """A stored score value as Inspect takes it (None: no score)."""
    if isinstance(value, float) and value != value:
        return None
    return value


def explanation(line: dict[str, Any]) -> str:
    """A stored score's explanation; for a scorer that stores none, what it recorded beside the
    value (its metadata's plain values), so no score stands unexplained."""
    if line.get("explanation"):
        return str(line["explanation"])
    plain = [f"{str(k).replace('_', ' ')}: {v}" for k, v in (line.get("metadata") or {}).items()
             if isinstance(v, (str, int, float, bool))]
    return "recorded with it: " + "; ".join(plain) if plain else "the scorer stored no explanation"


def sample_scores(lines: dict[str, dict[str, Any]]) -> dict[str, Score]:
    """An episode's stored scores, each with its explanation and metadata (its version too)."""
    scores = {}
    for name, line in lines.items():
        value = _value(line.get("value"))
        if value is None:
            continue
        scores[name] = Score(value=value, explanation=explanation(line),
                             metadata={"version": line.get("version"), **(line.get("metadata") or {})})
    return scores


def _agent(record: dict[str, Any]) -> str | None:
    spec, result = record.get("spec") or {}, record.get("result") or {}
    turns = result.get("turns") if isinstance(result, dict) else None
    if spec.get("agent") or spec.get("system"):
        return str(spec.get("agent") or spec.get("system"))
    if isinstance(turns, list) and turns and isinstance(turns[0], dict) and isinstance(turns[0].get("agents"), dict):
        return ", ".join(turns[0]["agents"])  # ACC: every agent answers in each episode
    return None


def sample_of(record: dict[str, Any], lines: dict[str, dict[str, Any]], *, notebook: str, part: str, model: str,
              start: datetime) -> EvalSample:
    """One episode as an Inspect sample."""
    eid = str(record["episode_id"])
    trace = Trace(eid, model)
    tell(trace, record, lines)
    seconds = float(record.get("wall_seconds") or 0.0)
    trace.timed(start, seconds)
    calls = list(record.get("calls") or [])
    usage = record.get("usage") or {}
    result: dict[str, Any] = record["result"] if isinstance(record.get("result"), dict) else {}
    roles = sorted({str(c.get("role")) for c in calls})
    metadata: dict[str, Any] = {
        "notebook": notebook, "part": part, "model": model, "agent": _agent(record),
        "task": (record.get("spec") or {}).get("task") or result.get("task") or (record.get("spec") or {}).get("scenario"),
        "status": record.get("status"), "spec": record.get("spec") or {},
        **({"private state at the checkpoint": result["private_state_at_fork"]}
           if isinstance(result.get("private_state_at_fork"), str) else {}),
        "calls": {"all": usage.get("calls"), "served from the response cache": usage.get("cache_hits"),
                  "by role": usage.get("calls_by_role") or {}},
        "times": TIMES,
        "system prompts": record.get("system_prompts") or {},
        "result": {k: v for k, v in result.items() if k not in SHOWN},
        "diagnostics": record.get("diagnostics") or {},
    }
    error = record.get("error")
    return EvalSample(
        id=eid, epoch=1, input=first_user_text(record, trace.messages), target="", messages=trace.messages,
        events=trace.events, timelines=[timeline_build(trace.events)] if trace.events else None,
        scores=sample_scores(lines) if record.get("status") == "ok" else None,
        metadata={k: v for k, v in metadata.items() if v is not None and v != {}},
        model_usage={model: ModelUsage(input_tokens=int(usage.get("prompt_tokens") or 0),
                                       output_tokens=int(usage.get("completion_tokens") or 0),
                                       total_tokens=int(usage.get("prompt_tokens") or 0)
                                       + int(usage.get("completion_tokens") or 0))},
        role_usage={role: usage_of([c for c in calls if str(c.get("role")) == role]) for role in roles},
        total_time=seconds, working_time=seconds,
        error=EvalError(message=str(error), traceback="", traceback_ansi="") if record.get("status") != "ok" else None)


def results_of(samples: list[EvalSample]) -> EvalResults:
    """Per scorer: the mean of a numeric or yes/no score, overall (``all``) and per agent when the
    log has several; the share of each label of a labelling score."""
    names = list(dict.fromkeys(name for s in samples for name in (s.scores or {})))
    scores = []
    for name in names:
        values = [(s.metadata.get("agent"), s.scores[name].value) for s in samples if s.scores and name in s.scores]
        numeric = all(isinstance(v, (int, float)) for _, v in values)
        metrics: dict[str, EvalMetric] = {}
        if numeric:
            groups: dict[str, list[float]] = {"all": [float(v) for _, v in values]}  # type: ignore[arg-type]
            agents = {str(a) for a, _ in values}
            for agent, value in values if len(agents) > 1 else []:
                groups.setdefault(str(agent), []).append(float(value))  # type: ignore[arg-type]
            metrics = {g: EvalMetric(name=g, value=sum(v) / len(v)) for g, v in groups.items()}
        elif all(isinstance(v, str) for _, v in values):
            counts = Counter(str(v) for _, v in values)
            metrics = {label: EvalMetric(name=label, value=n / len(values)) for label, n in counts.most_common()}
        if metrics:
            scores.append(EvalScore(name=name, scorer=name, metrics=metrics))
    ok = [s for s in samples if s.error is None]
    return EvalResults(total_samples=len(samples), completed_samples=len(ok), scores=scores)


def _when(text: str | None) -> datetime:
    try:
        return datetime.fromisoformat(str(text)) if text else datetime.now(timezone.utc)
    except ValueError:
        return datetime.now(timezone.utc)


def _total(usages: list[dict[str, ModelUsage]]) -> dict[str, ModelUsage]:
    out: dict[str, ModelUsage] = {}
    for usage in usages:
        for key, value in usage.items():
            out[key] = out[key] + value if key in out else value
    return out


def inspect_logs(folder: RunFolder, run_id: str) -> list[EvalLog]:
    """One :class:`EvalLog` per model and part of a notebook's run folder."""
    records = folder.records()
    lines: dict[str, dict[str, dict[str, Any]]] = {}
    for (eid, scorer), line in folder.score_lines().items():
        lines.setdefault(eid, {})[scorer] = line
    meta, params = folder.metadata(), folder.params()
    planned = planned_parts(folder)
    only = list(meta.parts)[0] if len(meta.parts) == 1 else MAIN
    start, end = _when(meta.started), meta.ended
    groups: dict[tuple[str, str], list[EvalSample]] = {}
    for eid, record in records.items():
        model = str((record.get("spec") or {}).get("model") or (record.get("result") or {}).get("model") or "?")
        part = next((str(line["part"]) for line in (lines.get(eid) or {}).values() if line.get("part")), None)
        part = part or planned.get(eid) or only
        groups.setdefault((model, part), []).append(
            sample_of(record, lines.get(eid) or {}, notebook=folder.dir.name, part=part, model=model, start=start))
    logs = []
    for (model, part), samples in groups.items():
        key = f"{run_id}/{folder.dir.name}/{model}/{part}"
        spec = EvalSpec(
            eval_id=hashlib.sha256(key.encode()).hexdigest()[:22], run_id=run_id, created=start.isoformat(),
            task=folder.dir.name, task_display_name=folder.dir.name if part == MAIN else f"{folder.dir.name} · {part}",
            model=model, tags=[part], dataset=EvalDataset(name=folder.dir.name, samples=len(samples)), config=EvalConfig(),
            task_args=params.stored(), packages=dict(meta.packages),
            revision=EvalRevision(type="git", origin="", commit=meta.git_commit) if meta.git_commit else None,
            metadata={"part": part, "backend": meta.backend, "simulated": meta.simulated, "profile": meta.profile,
                      "seed": meta.seed, "psit run": run_id, "part metadata": meta.parts.get(part) or {}})
        stats = EvalStats(started_at=start.isoformat(), completed_at=end or "",
                          model_usage=_total([s.model_usage for s in samples]),
                          role_usage=_total([s.role_usage for s in samples]))
        logs.append(EvalLog(eval=spec, status="success", samples=samples, results=results_of(samples), stats=stats))
    return logs


def log_name(notebook: str, log: EvalLog) -> str:
    """``<notebook>-<model>[-<part>].eval``, safe as a file name (a simulator sweep's model is named
    by its part: ``psit-sim:default,knob=value`` is the part ``sweep:knob=value``)."""
    part = str((log.eval.metadata or {}).get("part") or MAIN)
    stem = f"{notebook}-{log.eval.model.split(':', 1)[0]}" + ("" if part == MAIN else f"-{part}")
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", stem) + ".eval"


def write_logs(folders: list[RunFolder], run_id: str, out: Path) -> list[Path]:
    """Every notebook folder's logs under ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for folder in folders:
        if not folder.has_records():
            continue
        for log in inspect_logs(folder, run_id):
            path = out / log_name(folder.dir.name, log)
            write_eval_log(log, str(path))
            written.append(path)
    return written

