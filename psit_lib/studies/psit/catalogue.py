"""Every prompt template of the private-state study, by name (for run metadata).

The catalogue is the study's ``prompts.toml``, every template of it (``llm.prompts.PromptBook.
catalogue``). Run metadata stores a short hash of each (``runs.metadata.prompt_fingerprints``),
so two runs can be compared by the prompts they used. A slot is rendered with the fixed example
value below (the task defaults), else the placeholder ``<X>`` (``llm.prompts.PLACEHOLDER``), so the hash changes exactly when
the wording does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from psit_lib.studies.psit.memory.working_memory import wrap_for_prompt
from psit_lib.studies.psit.prompt_book import PROMPTS
from psit_lib.studies.psit.tasks.registry import TASK_NAMES, make_task


def catalogue_examples() -> dict[str, Mapping[str, object]]:
    """Fixed slot values the catalogue renders templates with (the defaults the code fills)."""
    from psit_lib.studies.psit.tasks.diagnosis import DiagnosisTask
    from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES

    closed = make_task("diagnosis", "closed")
    assert isinstance(closed, DiagnosisTask)
    conditions = {"conditions": closed.condition_list()}
    empty_updater = {"memory": wrap_for_prompt(""), "dialogue": "", "reasoning": "(none)", "answer": ""}
    return {
        "hangman.host_system": {"lives": DEFAULT_LIVES},
        "hangman.opener": {"lives": DEFAULT_LIVES},
        "diagnosis.host_system_closed_list": conditions,
        "diagnosis.opener_closed_list": conditions,
        **{f"{name}.candidates": {"count": 0, "constraints": json.dumps({"task": name}), "exclude": "[]"}
           for name in TASK_NAMES},
        "agent.updater_system": {"tools": ""},
        "agent.updater_user": empty_updater,
        "agent.updater_retry": empty_updater,
    }


def prompt_catalogue() -> dict[str, str]:
    """name -> template text for the tasks, the agents' private blocks and the baselines (every
    template of the study's ``prompts.toml``; ``.versions`` gives each one's version)."""
    return PROMPTS.catalogue(catalogue_examples())
