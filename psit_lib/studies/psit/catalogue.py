"""Every prompt template of the private-state study, by name (for run metadata).

Run metadata stores a short hash of each template (``runs.metadata.prompt_fingerprints``), so
two runs can be compared by the prompts they used. Templates with a slot are rendered with a
fixed placeholder, so the hash changes exactly when the wording does.
"""

from __future__ import annotations

from psit_lib.studies.psit.agents import prompts as agent_prompts
from psit_lib.studies.psit.agents.baselines import amem_adapter, base, lightmem_adapter
from psit_lib.studies.psit.protocol.candidates import candidate_request
from psit_lib.studies.psit.protocol.fork_test import NEUTRAL_SYSTEM_PROMPT
from psit_lib.studies.psit.tasks.registry import TASK_NAMES, make_task

SLOT = "<X>"


def prompt_catalogue() -> dict[str, str]:
    """name -> template text for the tasks, the agents' private blocks and the baselines."""
    catalogue: dict[str, str] = {"host.neutral_system": NEUTRAL_SYSTEM_PROMPT}
    catalogue["diagnosis.opener_closed_list"] = make_task("diagnosis", "closed").opener()
    for name in TASK_NAMES:
        task = make_task(name)
        catalogue.update({
            f"{name}.host_system": task.host_system_prompt(),
            f"{name}.opener": task.opener(),
            f"{name}.reveal": task.reveal_prompt(),
            f"{name}.confirm": task.confirm_prompt(SLOT),
            f"{name}.candidates": candidate_request(task, {}, 0, [])[0]["content"],
        })
    catalogue.update({
        "agent.private_reasoning_intro": agent_prompts.PRIVATE_REASONING_INTRO,
        "agent.workflow_memory_intro": agent_prompts.WORKFLOW_MEMORY_INTRO,
        "agent.autonomous_memory_intro": agent_prompts.AUTONOMOUS_MEMORY_INTRO,
        "agent.updater_system": agent_prompts.UPDATER_SYSTEM,
        "agent.updater_retry": agent_prompts.updater_messages("", [], "", "", [], previous_error=SLOT)[1]["content"],
        "baseline.memory_block_intro": base.MEMORY_BLOCK_INTRO,
        "baseline.amem_analysis": amem_adapter.ANALYSIS_SYSTEM,
        "baseline.amem_evolution": amem_adapter.EVOLUTION_SYSTEM,
        "baseline.lightmem_extraction": lightmem_adapter.EXTRACTION_SYSTEM,
    })
    return catalogue
