"""Every study by name, and the study and parameter model of each notebook.

Lazy: importing this module imports no study. :func:`study` loads a study's ``Study`` object
(its episode code included); :func:`params_model` loads only a notebook's parameter model, from
a light module where there is one, so the command line validates parameters before a kernel
starts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psit_lib.runs.study import Study

# study name -> "module:attribute" of its Study object
STUDIES: dict[str, str] = {
    "psit": "psit_lib.studies.psit.study:STUDY",
    "acc": "psit_lib.studies.acc.study:STUDY",
    "basis": "psit_lib.studies.basis.study:STUDY",
    "example": "psit_lib.studies.example.study:STUDY",
}

# notebook -> (study name, "module:attribute" of its parameter model)
NOTEBOOKS: dict[str, tuple[str, str]] = {
    "01_theorem_illustration": ("psit", "psit_lib.studies.psit.theorem_params:TheoremParams"),
    "02_hangman_fork_tests": ("psit", "psit_lib.studies.psit.protocol.params:ForkTestParams"),
    "03_diagnosis_ddxplus": ("psit", "psit_lib.studies.psit.protocol.params:ForkTestParams"),
    "04_memory_strategy_ablations": ("psit", "psit_lib.studies.psit.protocol.params:AblationParams"),
    "05_acc_judge_evaluation": ("acc", "psit_lib.studies.acc.experiment:AccParams"),
    "06_basis_cab_scenarios": ("basis", "psit_lib.studies.basis.experiment:BasisParams"),
    "07_secret_distribution_mode_collapse": ("psit", "psit_lib.studies.psit.protocol.params:SecretChoiceParams"),
    "90_example_reveal_probe": ("example", "psit_lib.studies.example.study:ProbeParams"),  # no notebook yet
}

# notebook -> the notebooks of the same run whose records it reads (07's Appendix E counts the
# secrets revealed at 02's and 03's forks), so a parallel run starts it only once they ended
RUNS_AFTER: dict[str, tuple[str, ...]] = {
    "07_secret_distribution_mode_collapse": ("02_hangman_fork_tests", "03_diagnosis_ddxplus"),
}


def _load(target: str) -> Any:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def study(name: str) -> Study:
    """The study called ``name``; KeyError listing the studies otherwise."""
    if name not in STUDIES:
        raise KeyError(f"no study {name!r}; the studies are {', '.join(STUDIES)}")
    return _load(STUDIES[name])


def study_of(notebook: str) -> Study | None:
    """The study backing ``notebook`` (a folder or notebook stem), None when no study does."""
    entry = NOTEBOOKS.get(notebook)
    return study(entry[0]) if entry else None


def params_model(notebook: str) -> Any:
    """The parameter model of ``notebook``, None when no study declares one."""
    entry = NOTEBOOKS.get(notebook)
    return _load(entry[1]) if entry else None
