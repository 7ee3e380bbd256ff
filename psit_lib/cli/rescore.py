"""``psit rescore RUN [NOTEBOOK ...] [--scorer NAME]``: score a run's stored episodes again
(:meth:`psit_lib.runs.study.Study.rescore`) and compare each table with the one the run saved.

Model-graded scorers call through the run's response cache in replay mode: never a new call.
"""

from __future__ import annotations

import argparse
import difflib
import tempfile
from pathlib import Path
from typing import Any

from psit_lib.cli.errors import CliError, did_you_mean
from psit_lib.cli.notebooks import chosen
from psit_lib.cli.run import check_run_id
from psit_lib.runs.folder import RunFolder, notebook_folders
from psit_lib.runs.load import resolve_run


def compare_table(rescored: Path, saved: Path) -> str | None:
    """None when the two CSV files hold the same table, else the first differing line."""
    new, old = rescored.read_text().splitlines(), saved.read_text().splitlines()
    if new == old:
        return None
    for line in difflib.unified_diff(old, new, "saved", "rescored", n=0, lineterm=""):
        if line[:1] in "+-" and not line.startswith(("---", "+++")):
            return f"first difference: {line}"
    return "the tables differ"


def replay_sessions(folder: RunFolder) -> Any:
    """Sessions for model-graded scorers: the folder's models behind the run's response cache in
    replay mode, each episode's client by its ``model``; built only when first asked."""
    from psit_lib.llm.cache import ResponseCache
    from psit_lib.llm.client import ModelSession, SamplingDefaults
    from psit_lib.llm.settings import LLMSettings
    from psit_lib.runs.backend import make_client

    stored = folder.params()
    settings = LLMSettings.from_env(cache="replay", sim_profile=stored.run_profile or None)
    cache = ResponseCache(folder.dir.parent / "cache.sqlite", mode="replay")
    clients: dict[str, Any] = {}
    metadata = folder.metadata()
    seed = metadata.seed or 0
    sampled = metadata.scoring_sampling
    sampling = SamplingDefaults(temperature=float(sampled.get("temperature", SamplingDefaults.temperature)),
                                max_tokens=int(sampled.get("max_tokens", SamplingDefaults.max_tokens)))

    def session_for(record: Any, scorer: Any) -> ModelSession:
        model = str(record.spec.get("model") or (stored.run_models or [settings.model])[0])
        if model not in clients:
            clients[model] = make_client(settings.model_copy(update={"model": model}), cache=cache)
        return ModelSession(clients[model], run_seed=seed, episode_id=record.episode_id, sampling=sampling,
                            path=f"score/{scorer.name}")

    return session_for


def rescore_folder(folder: RunFolder, scorers: list[str] | None = None) -> tuple[bool, str]:
    """(reproduced, the line to print) for one notebook folder."""
    from psit_lib.runs.outputs import save_table
    from psit_lib.studies.registry import study_of

    name = folder.dir.name
    study = study_of(name)
    if study is None or not study.notebook(name).table_names:
        return True, f"{name}: no scorer (skipped)"
    nb = study.notebook(name)
    graded = any(s.model_graded for s in nb.scorers if scorers is None or s.name in scorers)
    tables = study.rescore(folder.dir, scorers, session_for=replay_sessions(folder) if graded else None).tables
    saved = set(folder.table_names())
    reproduced, differing = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for table_name, table in tables.items():
            if f"{table_name}.csv" not in saved:
                continue
            diff = compare_table(save_table(table, Path(tmp), table_name), folder.tables_dir / f"{table_name}.csv")
            if diff is None:
                reproduced.append(table_name)
            else:
                differing.append(f"table {table_name!r} differs ({diff})")
    unsaved = sorted(set(tables) - {n.removesuffix(".csv") for n in saved})
    extra = f"; not saved by the run: {', '.join(unsaved)}" if unsaved else ""
    if differing:
        return False, f"{name}: " + "; ".join(differing) + f" (reproduced {len(reproduced)} tables)"
    return True, f"{name}: reproduced {len(reproduced)} tables ({', '.join(reproduced)}){extra}"


def scorers_of(folders: list[RunFolder]) -> dict[str, list[str]]:
    """Each notebook folder's scorers by name (none for a notebook no study declares)."""
    from psit_lib.studies.registry import study_of

    found = {}
    for folder in folders:
        study = study_of(folder.dir.name)
        nb = study.notebooks.get(folder.dir.name) if study is not None else None
        found[folder.dir.name] = [s.name for s in nb.scorers] if nb is not None else []
    return found


def check_scorers(named: list[str], known: dict[str, list[str]]) -> None:
    """A ``--scorer`` no chosen notebook has is a usage error naming the scorers there are."""
    every = sorted({name for names in known.values() for name in names})
    for name in named:
        if name not in every:
            raise CliError(f"no chosen notebook of the run has a scorer {name!r}{did_you_mean(name, every)}; "
                           f"the scorers are {', '.join(every) or 'none'}")


def cmd_rescore(args: argparse.Namespace) -> int:
    """Print one line per notebook; 0 when every compared table was reproduced, 1 otherwise. A
    ``--scorer`` is recomputed in the notebooks that have it; the others are rescored as stored."""
    from psit_lib.cli.resume import check_recorded_plugins
    from psit_lib.cli.run import load_plugins_once

    run_dir = resolve_run(check_run_id(args.run))
    folders = chosen(args.notebooks, notebook_folders(run_dir), lambda f: f.dir.name, " of the run")
    if not folders:
        raise CliError(f"run {args.run!r} holds no notebook with episode records")
    load_plugins_once()
    check_recorded_plugins(folders, "rescored")  # its plug-ins' agents and scorers are names its records use
    named = list(args.scorer or [])
    known = scorers_of(folders)
    check_scorers(named, known)
    ok = True
    for folder in folders:
        try:
            reproduced, line = rescore_folder(folder, [n for n in named if n in known[folder.dir.name]] or None)
        except Exception as exc:  # one notebook's failure is reported, the others still rescored
            from psit_lib.runs.runner import describe_error

            reproduced, line = False, f"{folder.dir.name}: cannot rescore: {describe_error(exc)}"
        ok &= reproduced
        print(line, flush=True)
    return 0 if ok else 1
