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
    assert list(listed) == list(prompts.templates)
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

    from psit_lib.studies.acc.scoring import judge_episode

    spec = make_specs(AccParams(n_turns=2, scenarios_per_domain=1))[0]
    episode = await run_acc_episode(spec, session(spec.episode_id))
    await judge_episode(session(spec.episode_id), episode, seed=episode.scenario_seed, answer_chars=1200)
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
    from psit_lib.studies.psit.memory.working_memory import initial_memory
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
    for library in ("mem0", "amem", "lightmem", "memoryos"):
        base.memory_block("- a fact", library)
    agent_prompts.reasoning_in_history_note()
    note = {"id": "n", "content": "c", "context": "", "keywords": [], "tags": []}
    amem_adapter.analysis_messages("c", []), amem_adapter.evolution_messages(note, [])
    lightmem_adapter.extraction_messages([{"source_id": 1, "role": "user", "content": "hi"}])


def use_every_acc_prompt() -> None:
    from psit_lib.studies.acc import judge

    for variant in judge.JUDGE_VARIANTS.values():
        assert variant.system
    # the agents and the live judge render theirs inside their calls; an episode covers them


def use_every_basis_prompt() -> None:
    from psit_lib.studies.basis.cortex import CONTEXT_TAG, AgentRegistry
    from psit_lib.studies.basis import prompts
    from psit_lib.studies.basis.scenarios import SCENARIOS
    from psit_lib.studies.basis.system import subagent_prompt

    prompts.orchestrator_prompt(), prompts.notifier_prompt()
    subagent_prompt(next(iter(SCENARIOS.values())))
    registry = AgentRegistry([prompts.ORCHESTRATOR_ID])
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
    assert set(prompts.templates) - prompts.lookups == set(), "templates in the file that no code uses"


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


# --------------------------------------------------------------------------- a user's wording (PSIT_PROMPTS_FILE)


def user_file(tmp_path, text: str):
    path = tmp_path / "study_wording.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, needle", [
    ('["hangman.confirmm"]\nversion = 1\ntext = "Is it {secret}?"\n',
     "names template(s) hangman.confirmm that no study's prompts file has (did you mean 'hangman.confirm'?)"),
    ('["hangman.confirm"]\nversion = 1\ntext = "Is it your word? yes or no"\n', "lacks the slot(s) {secret}"),
    ('["hangman.confirm"]\nversion = 1\ntext = "Is it {secret} of {length}?"\n',
     "has slot(s) {length} that the code does not fill"),
    ('["hangman.confirm"]\ntext = "Is it {secret}?"\n', "needs an integer version of at least 1"),
    ('["hangman.confirm"\n', "is not valid TOML"),
])
def test_a_bad_prompts_file_is_one_sentence_before_any_model_call(tmp_path, text, needle):
    from psit_lib.llm import ConfigurationError, LLMSettings

    path = user_file(tmp_path, text)
    with pytest.raises(ConfigurationError) as info:
        LLMSettings.from_env({"PSIT_PROMPTS_FILE": str(path)})  # what `psit run` checks before any notebook
    message = str(info.value)
    assert message.startswith("PSIT_PROMPTS_FILE") and needle in message and "\n" not in message
    with pytest.raises(ConfigurationError, match="cannot be read"):
        LLMSettings.from_env({"PSIT_PROMPTS_FILE": str(tmp_path / "missing.toml")})


def test_a_user_template_replaces_the_workbenchs_by_name_and_the_catalogue_says_so(tmp_path):
    from psit_lib.llm import LLMSettings
    from psit_lib.llm.prompts import read_overrides
    from psit_lib.runs.metadata import prompt_fingerprints

    path = user_file(tmp_path, '["hangman.confirm"]\nversion = 7\ntext = "Is the word {secret}? yes/no."\n'
                               '["acc.judge_memory_system"]\nversion = 1\ntext = "Judge."\n')
    settings = LLMSettings.from_env({"PSIT_PROMPTS_FILE": str(path)})
    assert settings.public_dict()["prompts_file"] == str(path)
    ours = book("psit")
    theirs = ours.with_overrides(read_overrides(str(path)))
    assert theirs.render("hangman.confirm", secret="apple") == "Is the word apple? yes/no."
    assert set(theirs.overridden) == {"hangman.confirm"}  # the acc template is the acc book's business
    assert theirs.overridden["hangman.confirm"] == {"file": str(path), "version": 7,
                                                    "replaces_version": ours.templates["hangman.confirm"].version}
    listed = theirs.catalogue()
    assert listed.overridden == theirs.overridden and listed.versions["hangman.confirm"] == 7
    old, new = prompt_fingerprints(ours.catalogue()), prompt_fingerprints(listed)
    assert [n for n in old if old[n] != new[n]] == ["hangman.confirm"]
    assert ours.catalogue().overridden == {} and ours.render("hangman.confirm", secret="x") != "Is the word x? yes/no."


@pytest.mark.slow
def test_a_run_with_a_prompts_file_asks_the_users_wording_and_records_it(tmp_path):
    """In a fresh process (as a notebook kernel under ``psit run``): the study's task renders the
    user's wording, and the run metadata records which templates were replaced, from where."""
    import json
    import os
    import subprocess
    import sys

    path = user_file(tmp_path, '["hangman.confirm"]\nversion = 3\ntext = "Is your secret word \'{secret}\'? yes or no."\n')
    script = (
        "import json\n"
        "from psit_lib.studies.psit.tasks.registry import make_task\n"
        "from psit_lib.studies.psit.catalogue import prompt_catalogue\n"
        "from psit_lib.runs.experiment import Experiment\n"
        f"exp = Experiment('96_prompts_file', {{'x': 1}}, run_dir={str(tmp_path)!r}, prompts=prompt_catalogue())\n"
        "stored = exp.store.metadata()\n"
        "print(json.dumps({'asked': make_task('hangman').confirm_prompt('apple'),\n"
        "                  'overrides': stored.model_dump()['prompt_overrides'],\n"
        "                  'version': stored.prompt_versions['hangman.confirm'],\n"
        "                  'file': stored.settings['prompts_file']}))\n")
    env = {**os.environ, "PSIT_PROMPTS_FILE": str(path), "PSIT_RESULTS_DIR": str(tmp_path / "results")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["asked"] == "Is your secret word 'apple'? yes or no."
    assert seen["overrides"] == {"hangman.confirm": {"file": str(path), "version": 3,
                                                     "replaces_version": book("psit").templates["hangman.confirm"].version}}
    assert seen["version"] == 3 and seen["file"] == str(path)
