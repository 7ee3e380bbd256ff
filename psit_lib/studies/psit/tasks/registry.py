"""The PSIT tasks by name, built once per process (tasks are immutable)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names are checked without importing the tasks (psit run validates parameters)
    from psit_lib.studies.psit.tasks.base import PsitTask

TASK_NAMES = ("hangman", "diagnosis")


class UnknownTaskError(ValueError):
    """A task name the workbook does not define."""


@lru_cache(maxsize=None)
def make_task(name: str, condition_choice: str = "free") -> PsitTask:
    """The task object for ``name`` (imports lazily: diagnosis loads its dataset).
    ``condition_choice`` is the diagnosis host's choice: ``free`` (the study) or ``closed``."""
    if name == "hangman":
        from psit_lib.studies.psit.tasks.hangman import HangmanTask

        return HangmanTask()
    if name == "diagnosis":
        from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask

        return DiagnosisTask(choice=condition_choice)
    raise UnknownTaskError(f"unknown task {name!r}; choose from {', '.join(TASK_NAMES)}")


def validate_task_names(tasks: list[str]) -> list[str]:
    """A parameter list of task names: known, at least one, no repeats."""
    if not tasks:
        raise ValueError("name at least one task")
    unknown = [t for t in tasks if t not in TASK_NAMES]
    if unknown:
        raise ValueError(f"unknown task {unknown[0]!r}; choose from {', '.join(TASK_NAMES)}")
    if len(set(tasks)) != len(tasks):
        raise ValueError("a task is listed twice")
    return list(tasks)
