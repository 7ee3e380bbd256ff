"""Prompts as versioned data (``psit_lib.llm.prompts``): the loader's errors, each study's
catalogue is its whole prompts file, every template looked up at run time is catalogued, and
every template of a file is used by the code with all its slots filled."""

from __future__ import annotations

import dataclasses

import pytest

from psit_lib.llm import LLMSettings, ModelSession
from psit_lib.llm.prompts import PLACEHOLDER, SLOT, PromptBook, PromptError, load_prompts
from psit_lib.runs.backend import make_client

STUDIES = ("psit", "acc", "basis")


def book(study: str) -> PromptBook:
    return load_prompts(f"psit_lib.studies.{study}")


def catalogue(study: str) -> dict[str, str]:
    if study == "psit":
        from psit_lib.studies.psit.catalogue import prompt_catalogue
    elif study == "acc":
        from psit_lib.studies.acc.catalogue import prompt_catalogue
    else:
        from psit_lib.studies.basis.prompts import prompt_catalogue
    return prompt_catalogue()


def session(episode_id: str) -> ModelSession:
    return ModelSession(make_client(LLMSettings(cache="off")), run_seed=0, episode_id=episode_id)


SAMPLE = PromptBook.from_toml("""
["demo.confirm"]
version = 2
text = '''Is it '{secret}'? Reply with JSON {"answer": ...} only.'''

["demo.plain"]
version = 1
text = '''No slots {here}, {"a": 1} and { spaced }.'''
""", "sample.toml")


def test_render_fills_slots_and_leaves_other_braces():
    assert SAMPLE.render("demo.confirm", secret="{x}") == "Is it '{x}'? Reply with JSON {\"answer\": ...} only."
    assert SAMPLE.templates["demo.confirm"].version == 2


@pytest.mark.parametrize("call, needle", [
    (lambda: SAMPLE.render("demo.missing"), "There is no prompt template 'demo.missing' in sample.toml."),
    (lambda: SAMPLE.render("demo.confirm"), "needs a value for slot(s) secret"),
    (lambda: SAMPLE.render("demo.confirm", secret="a", lives=3), "has no slot(s) lives"),
    (lambda: SAMPLE.catalogue({"demo.nothing": {}}), "name template(s) demo.nothing"),
    (lambda: PromptBook.from_toml('["x"]\ntext = "t"\n', "f.toml"), "needs an integer version of at least 1"),
    (lambda: PromptBook.from_toml('["x"]\nversion = 1\ntext = "t"\nextra = 1\n', "f.toml"), "only version, text and about"),
    (lambda: PromptBook.from_toml('["x"\n', "f.toml"), "is not valid TOML"),
    (lambda: load_prompts("psit_lib.llm"), "has no prompts file prompts.toml"),
])
def test_errors_are_one_clear_sentence(call, needle):
    with pytest.raises(PromptError) as info:
        call()
    message = str(info.value)
    assert needle in message and "\n" not in message and message.endswith(".")


def test_a_slot_in_the_sample_is_only_a_lowercase_identifier():
    assert SAMPLE.templates["demo.plain"].slots == ("here",)
    assert SAMPLE.catalogue()["demo.plain"] == f"No slots {PLACEHOLDER}, {{\"a\": 1}} and {{ spaced }}."


@pytest.mark.parametrize("study", STUDIES)
def test_the_catalogue_is_the_whole_prompts_file(study):
    prompts = book(study)
    catalogue(study)  # imports the study (module-level prompts are read then)
    before = set(prompts.lookups)
    listed = catalogue(study)
    assert list(listed) == list(prompts.names())
    assert listed.versions == {n: t.version for n, t in prompts.templates.items()}  # type: ignore[attr-defined]
    assert all(isinstance(v, int) and v >= 1 for v in listed.versions.values())  # type: ignore[attr-defined]
    assert all(text and not SLOT.search(text) for text in listed.values())  # every slot filled
    assert prompts.lookups == before  # listing is not a use


def test_the_acc_judge_variants_are_catalogued():
    from psit_lib.studies.acc.judge import JUDGE_VARIANTS, MEMORY_TASK, SCORING_TASK

    listed = catalogue("acc")
    assert {v.template for v in JUDGE_VARIANTS.values()} <= set(listed)
    assert {listed[v.template] for v in JUDGE_VARIANTS.values()} == {v.system for v in JUDGE_VARIANTS.values()}
    # the simulated judge tells its tasks apart by these openings
    assert listed["acc.judge_memory_system"].startswith(MEMORY_TASK)
    assert all(listed[v.template].startswith(SCORING_TASK) for v in JUDGE_VARIANTS.values())


# --------------------------------------------------------------------------- used at run time


async def psit_episodes() -> None:
    from psit_lib.studies.psit.protocol.fork_test import ForkSettings, run_fork_episode
    from psit_lib.studies.psit.tasks.registry import make_task

    for task, agent, system in (("hangman", "workflow_overwrite", "neutral"), ("hangman", "private_cot", "task"),
                                ("diagnosis", "autonomous_overwrite", "task")):
        await run_fork_episode(make_task(task), agent, session(f"{task}-{agent}"), ForkSettings(system_prompt=system))


async def acc_episodes() -> None:
    from psit_lib.studies.acc.experiment import AccParams, make_specs, run_acc_episode
    from psit_lib.studies.acc.judge import JUDGE_VARIANTS, CanonicalMemory, rejudge_turn

    spec = make_specs(AccParams(n_turns=2, scenarios_per_domain=1))[0]
    await run_acc_episode(spec, session(spec.episode_id))
    for variant in JUDGE_VARIANTS.values():
        await rejudge_turn(session(variant.name), variant, CanonicalMemory(), "What is the failing node?",
                           {"a": "- the failing node is db-07.", "b": "- the failing node is unknown."}, seed=1)


async def basis_episodes() -> None:
    from psit_lib.studies.basis.experiment import BasisParams, make_specs, run_basis_trial
    from psit_lib.studies.basis.scenarios import SCENARIOS

    for spec in make_specs(BasisParams(scenarios=(next(iter(SCENARIOS)),), systems=("baseline", "basis"), n_trials=1)):
        await run_basis_trial(spec, session(spec.episode_id))


RUNS = {"psit": psit_episodes, "acc": acc_episodes, "basis": basis_episodes}


@pytest.mark.parametrize("study", STUDIES)
async def test_every_template_looked_up_at_run_time_is_catalogued(study):
    prompts = book(study)
    prompts.lookups.clear()
    await RUNS[study]()
    assert prompts.lookups, "the episodes looked up no template"
    assert prompts.lookups <= set(catalogue(study))


# --------------------------------------------------------------------------- every template used, slots filled


def use_every_psit_prompt() -> None:
    from psit_lib.studies.psit.memory import initial_memory
    from psit_lib.studies.psit.agents import prompts as agent_prompts
    from psit_lib.studies.psit.agents.baselines import amem_adapter, base, lightmem_adapter
    from psit_lib.studies.psit.protocol import fork_test
    from psit_lib.studies.psit.protocol.candidates import candidate_request
    from psit_lib.studies.psit.tasks.registry import TASK_NAMES, make_task

    assert fork_test.NEUTRAL_SYSTEM_PROMPT
    book("psit").render("host.neutral_system")  # read once at import; looked up again here
    for name in TASK_NAMES:
        for choice in ("free", "closed"):
            task = make_task(name, choice)
            task.host_system_prompt(), task.opener(), task.reveal_prompt(), task.confirm_prompt("x")
        candidate_request(make_task(name), {}, 3, ["x"])
    agent_prompts.private_reasoning_block(["r"])
    agent_prompts.memory_block(initial_memory(), True), agent_prompts.memory_block(initial_memory(), False)
    for error in (None, "bad"):
        agent_prompts.updater_messages(initial_memory(), [], "", "", [], previous_error=error)
    base.memory_block("- a fact")
    note = {"id": "n", "content": "c", "context": "", "keywords": [], "tags": []}
    amem_adapter.analysis_messages("c", []), amem_adapter.evolution_messages(note, [])
    lightmem_adapter.extraction_messages([{"source_id": 1, "role": "user", "content": "hi"}])


def use_every_acc_prompt() -> None:
    from psit_lib.studies.acc import agents, judge

    for variant in judge.JUDGE_VARIANTS.values():
        assert variant.system
    # the agents and the live judge render theirs inside their calls; an episode covers them
    assert agents.AGENT_NAMES


def use_every_basis_prompt() -> None:
    from psit_lib.studies.basis.cortex import CONTEXT_TAG, AgentRegistry
    from psit_lib.studies.basis import prompts
    from psit_lib.studies.basis.scenarios import SCENARIOS
    from psit_lib.studies.basis.system import subagent_prompt

    prompts.orchestrator_prompt(), prompts.notifier_prompt()
    subagent_prompt(next(iter(SCENARIOS.values())))
    registry = AgentRegistry()
    registry.register(prompts.ORCHESTRATOR_ID)
    prompts.cortex_system_prompt(registry), prompts.cortex_user_prompt(prompts.ORCHESTRATOR_ID, [], "step")
    prompts.with_context("base", f"<{CONTEXT_TAG}>x</{CONTEXT_TAG}>")
    book("basis").render("basis.delegate_tool"), book("basis").render("basis.notify_tool")  # read at import
    for name in SCENARIOS:  # the scenarios' requests and policies, also read at import
        book("basis").render(f"basis.request.{name}"), book("basis").render(f"basis.policy.{name}")


@pytest.mark.parametrize("study", STUDIES)
async def test_every_template_of_the_file_is_used_with_its_slots_filled(study):
    """A render with a slot missing or an unknown slot raises, so using every template through
    the code that fills it shows that the code fills every slot the file declares."""
    prompts = book(study)
    prompts.lookups.clear()
    {"psit": use_every_psit_prompt, "acc": use_every_acc_prompt, "basis": use_every_basis_prompt}[study]()
    if study == "acc":
        await acc_episodes()
    assert set(prompts.names()) - prompts.lookups == set(), "templates in the file that no code uses"


def test_a_changed_template_changes_the_rendered_prompt_and_its_fingerprint():
    from psit_lib.runs.metadata import prompt_fingerprints

    prompts = book("psit")
    template = prompts.templates["hangman.confirm"]
    edited = PromptBook({**prompts.templates, "hangman.confirm": dataclasses.replace(template, version=2,
                                                                                    text=template.text + " ")}, "x")
    old, new = prompt_fingerprints(prompts.catalogue()), prompt_fingerprints(edited.catalogue())
    assert [n for n in old if old[n] != new[n]] == ["hangman.confirm"]


def test_run_metadata_records_each_catalogued_templates_version_beside_its_fingerprint(tmp_path):
    from psit_lib.runs.experiment import Experiment
    from psit_lib.studies.acc import prompt_catalogue

    catalogue = prompt_catalogue()
    exp = Experiment("98_versions", {"x": 1}, run_dir=tmp_path, prompts=catalogue)
    stored = exp.store.metadata()
    assert set(stored.prompt_versions) == set(stored.prompts) == set(catalogue)
    assert stored.prompt_versions == catalogue.versions and all(v >= 1 for v in stored.prompt_versions.values())
