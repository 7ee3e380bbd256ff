"""``psit rescore RUN [NOTEBOOK ...]``: recompute a run's tables from its stored records, no model.

For each notebook folder of the run, the study that backs the notebook
(:mod:`psit_lib.studies.registry`) runs its scorers over the folder's typed records
(:meth:`psit_lib.runs.study.Study.rescore`; no client is built). Each rescored table is written
as the notebook wrote it (``runs.outputs.save_table``, CSV) and compared with the table the
notebook saved under the same name in ``<folder>/tables/``.
"""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

from psit_lib.cli.errors import CliError
from psit_lib.cli.notebooks import names_notebook
from psit_lib.cli.run import check_run_id
from psit_lib.runs.folder import RunFolder, notebook_folders
from psit_lib.runs.paths import results_root


def _chosen(folders: list[RunFolder], names: list[str]) -> list[RunFolder]:
    if not names:
        return folders
    chosen = []
    for name in names:
        matches = [f for f in folders if names_notebook(name, f.dir.name)]
        if len(matches) != 1:
            raise CliError(f"no single notebook of the run matches {name!r}; it holds "
                           f"{', '.join(f.dir.name for f in folders) or 'no notebook with records'}")
        chosen.append(matches[0])
    return chosen


def compare_table(rescored: Path, saved: Path) -> str | None:
    """None when the two CSV files hold the same table, else the first differing line."""
    new, old = rescored.read_text().splitlines(), saved.read_text().splitlines()
    if new == old:
        return None
    for line in difflib.unified_diff(old, new, "saved", "rescored", n=0, lineterm=""):
        if line[:1] in "+-" and not line.startswith(("---", "+++")):
            return f"first difference: {line}"
    return "the tables differ"


def rescore_folder(folder: RunFolder) -> tuple[bool, str]:
    """(reproduced, the line to print) for one notebook folder."""
    from psit_lib.runs.outputs import save_table
    from psit_lib.studies.registry import study_of

    name = folder.dir.name
    study = study_of(name)
    if study is None or not study.notebook(name).scorers:
        return True, f"{name}: no scorer (skipped)"
    tables = study.rescore_tables(folder.dir)  # either kind of study (scorers and metrics, or table functions)
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
    extra = f"; not saved by the notebook: {', '.join(unsaved)}" if unsaved else ""
    if differing:
        return False, f"{name}: " + "; ".join(differing) + f" (reproduced {len(reproduced)} tables)"
    return True, f"{name}: reproduced {len(reproduced)} tables ({', '.join(reproduced)}){extra}"


def rescore(run_id: str, notebooks: list[str]) -> int:
    """Print one line per notebook; 0 when every compared table was reproduced, 1 otherwise."""
    run_dir = results_root() / check_run_id(run_id)
    if not run_dir.is_dir():
        raise CliError(f"no run {run_id!r} in {results_root()}")
    folders = _chosen(notebook_folders(run_dir), notebooks)
    if not folders:
        raise CliError(f"run {run_id!r} holds no notebook with episode records")
    ok = True
    for folder in folders:
        try:
            reproduced, line = rescore_folder(folder)
        except Exception as exc:  # one notebook's failure is reported, the others still rescored
            from psit_lib.runs.runner import describe_error

            reproduced, line = False, f"{folder.dir.name}: cannot rescore: {describe_error(exc)}"
        ok &= reproduced
        print(line, flush=True)
    return 0 if ok else 1
