"""The PSIT tasks by name, built once per process (tasks are immutable).

The workbench's own tasks are :data:`TASK_NAMES`; a researcher's module adds one with
:func:`register_task` (loaded as a plug-in: :mod:`psit_lib.runs.plugins`), after which notebooks
that take a ``tasks`` parameter (04, 07) accept its name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names are checked without importing the tasks (psit run validates parameters)
    from psit_lib.studies.psit.tasks.base import PsitTask

TASK_NAMES = ("hangman", "diagnosis")
"""The workbench's own tasks (the notebooks' defaults)."""

TaskFactory = Callable[[str], "PsitTask"]
"""``factory(condition_choice)`` -> the task (a :class:`~psit_lib.studies.psit.tasks.base.PsitTask`)."""
_REGISTERED: dict[str, TaskFactory] = {}


def register_task(name: str, factory: TaskFactory) -> None:
    """Make ``name`` a task: ``factory(condition_choice)`` builds it (once per process). A
    workbench task's name cannot be taken."""
    if name in TASK_NAMES:
        raise ValueError(f"{name!r} is a workbench task; register yours under another name")
    _REGISTERED[name] = factory
    make_task.cache_clear()


def known_tasks() -> list[str]:
    """Every task name: the workbench's and the registered ones."""
    return [*TASK_NAMES, *_REGISTERED]


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
    if name in _REGISTERED:
        return _REGISTERED[name](condition_choice)
    raise UnknownTaskError(f"unknown task {name!r}; choose from {', '.join(known_tasks())}")


def validate_task_names(tasks: list[str]) -> list[str]:
    """A parameter list of task names: known, at least one, no repeats."""
    if not tasks:
        raise ValueError("name at least one task")
    unknown = [t for t in tasks if t not in known_tasks()]
    if unknown:
        raise ValueError(f"unknown task {unknown[0]!r}; choose from {', '.join(known_tasks())}")
    if len(set(tasks)) != len(tasks):
        raise ValueError("a task is listed twice")
    return list(tasks)
