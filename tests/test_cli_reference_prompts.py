"""``psit prompts from-reference``: a prompts file built from a checkout of the study's code.

The checkout here is fake (written to tmp_path with the reference repository's layout, constant
names and the way it fills its prompts: ``str.format`` slots of its own names, doubled braces,
whole system prompts that start with the plain assistant sentence, the updater's context block,
six lives stated in the opener); its wording is invented for the test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from psit_lib.cli import main
from psit_lib.cli.reference_prompts import PROMPTS_DIR, SOURCES, string_constants, to_template
from psit_lib.llm.prompts import load_prompts, read_overrides
from psit_lib.runs.metadata import prompt_fingerprints

ASSISTANT = "You are a test assistant."
MODULES = {
    "vanilla_llm_agent": {"MAIN_SYSTEM_PROMPT": f'"{ASSISTANT}"'},
    "private_cot_agent": {"MAIN_SYSTEM_PROMPT": f'"{ASSISTANT} Old thoughts sit in the history."'},
    "hangman_sct": {
        "PLAYER_START_PROMPT": '"""\nHost a word game. I have 6 lives.\n""".strip()',
        "REVEAL_SECRET_PROMPT": '"""\nName the word.\n""".strip()',
        "SCT_YES_NO_PROMPT": '"""\nIs it \\"{word}\\"? yes or no.\n""".strip()',
    },
    "diagnosis_simulator_sct": {
        "PLAYER_START_PROMPT": '"Host a case."',
        "REVEAL_SECRET_PROMPT": '"Name the condition."',
        "SCT_YES_NO_PROMPT": '"Is it {diagnosis}? yes or no."',
    },
    "reactmem_agent": {
        "MAIN_SYSTEM_PROMPT": f'"""{ASSISTANT}\nEdit your notes.\n<working_memory>\n{{working_memory}}\n</working_memory>\n"""',
        "SAVE_SECRET_HINT": '"""\\n\\nTag secrets."""',
    },
    "workflow_agent": {
        "MAIN_SYSTEM_PROMPT": f'"""{ASSISTANT}\nRead your notes.\n<working_memory>\n{{working_memory}}\n</working_memory>\n"""',
        "UPDATE_MEMORY_SYSTEM_PROMPT": ('"""Update the notes. Reply like {{"name": "t", "arguments": {{}}}}.\n'
                                        'Tools:\n{tool_guide}\n\nContext\n-------\n<working_memory>\n{working_memory}\n'
                                        '</working_memory>\n<dialogue>\n{dialogue}\n</dialogue>\n<thinking>\n{thinking}\n'
                                        '</thinking>\n<assistant_response>\n{response}\n</assistant_response>\n"""'),
        "SAVE_SECRET_HINT": '"""\\n\\nTag secrets."""',
    },
    "mem0_agent": {"MAIN_SYSTEM_PROMPT": '"""Facts:\n{user_memories}\n"""'},
    "amem_agent": {"MAIN_SYSTEM_PROMPT": '"""Notes:\n{notes_block}\n"""'},
    "lightmem_agent": {"MAIN_SYSTEM_PROMPT": '"""Memories:\n{memories}\n"""'},
    "memoryos_agent": {"MAIN_SYSTEM_PROMPT": '"""Tiers:\n{memories}\n"""'},
}


def checkout(root: Path, modules: dict[str, dict[str, str]] = MODULES) -> Path:
    folder = root / PROMPTS_DIR
    folder.mkdir(parents=True)
    for module, constants in modules.items():
        body = "\n".join(f"{name} = {value}" for name, value in constants.items())
        (folder / f"{module}.py").write_text(f'"""A prompt module."""\nimport os\n\nHELPER = os.sep\n{body}\n')
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "prompts"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    return root


def build_file(tmp_path: Path) -> Path:
    out = tmp_path / "study_prompts.toml"
    assert main(["prompts", "from-reference", str(checkout(tmp_path / "Hangman")), "-o", str(out)]) == 0
    return out


def test_the_built_file_replaces_every_mapped_template_with_the_studys_wording(tmp_path, capsys):
    out = build_file(tmp_path)
    assert "PSIT_PROMPTS_FILE=" in capsys.readouterr().out
    commit = subprocess.run(["git", "-C", str(tmp_path / "Hangman"), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert f"commit {commit})" in out.read_text()  # the checkout's commit is recorded in the file
    ours = load_prompts("psit_lib.studies.psit")
    theirs = ours.with_overrides(read_overrides(str(out)))
    assert set(theirs.overridden) == {s.template for s in SOURCES}
    assert theirs.render("hangman.opener", lives=6) == "Host a word game. I have 6 lives."
    assert theirs.render("hangman.opener", lives=8) == "Host a word game. I have 8 lives."
    assert theirs.render("hangman.confirm", secret="apple") == 'Is it "apple"? yes or no.'
    assert theirs.render("diagnosis.confirm", secret="Croup") == "Is it Croup? yes or no."
    assert theirs.render("host.neutral_system") == ASSISTANT
    # the plain sentence is the host's system prompt already: the appended block starts after it
    assert theirs.render("agent.private_reasoning_in_history") == "Old thoughts sit in the history."
    assert theirs.render("agent.workflow_memory_intro", working_memory="M").startswith("Read your notes.\n<working")
    auto = theirs.render("agent.autonomous_memory_intro", working_memory="M")
    assert "<working_memory>\nM\n</working_memory>" in auto and auto.endswith("Tag secrets.")
    system = theirs.render("agent.updater_system", tools="TOOLS")
    assert system == 'Update the notes. Reply like {"name": "t", "arguments": {}}.\nTools:\nTOOLS'
    user = theirs.render("agent.updater_user", memory="<working_memory>\nM\n</working_memory>", dialogue="D",
                         reasoning="R", answer="A")
    assert user.startswith("<working_memory>\nM\n</working_memory>\n<dialogue>\nD") and user.endswith("Tag secrets.")
    for library, head in (("mem0", "Facts"), ("amem", "Notes"), ("lightmem", "Memories"), ("memoryos", "Tiers")):
        assert theirs.render(f"baseline.{library}_memories", memories="- x") == f"{head}:\n- x"


def test_the_run_fingerprints_change_exactly_for_the_replaced_templates(tmp_path):
    out = build_file(tmp_path)
    ours = load_prompts("psit_lib.studies.psit")
    theirs = ours.with_overrides(read_overrides(str(out)))
    old, new = prompt_fingerprints(ours.catalogue()), prompt_fingerprints(theirs.catalogue())
    assert {name for name in old if old[name] != new[name]} == {s.template for s in SOURCES}
    assert theirs.catalogue().overridden["hangman.confirm"]["file"] == str(out)


def test_a_checkout_missing_a_constant_or_a_slot_is_an_error_naming_it(tmp_path, capsys):
    broken = {**MODULES, "hangman_sct": {k: v for k, v in MODULES["hangman_sct"].items() if k != "REVEAL_SECRET_PROMPT"}}
    assert main(["prompts", "from-reference", str(checkout(tmp_path / "a", broken)), "-o", str(tmp_path / "x")]) == 2
    assert "REVEAL_SECRET_PROMPT" in capsys.readouterr().err and not (tmp_path / "x").exists()
    no_slot = {**MODULES, "mem0_agent": {"MAIN_SYSTEM_PROMPT": '"Facts."'}}
    assert main(["prompts", "from-reference", str(checkout(tmp_path / "b", no_slot)), "-o", str(tmp_path / "y")]) == 2
    assert "baseline.mem0_memories" in capsys.readouterr().err
    assert main(["prompts", "from-reference", str(tmp_path / "nothing"), "-o", str(tmp_path / "z")]) == 2


def test_string_constants_read_the_syntax_tree_without_running_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('raise SystemExit("never run")\nA = "x"\nB = """\n y \n""".strip()\nC = f"{A}"\nD = 3\n')
    assert string_constants(path) == {"A": "x", "B": "y"}


@pytest.mark.parametrize("text, slots, expected", [
    ("Is it {word}?", {"word": "secret"}, "Is it {secret}?"),
    ('{{"name": {{}}}} {tool_guide}', {"tool_guide": "tools"}, '{"name": {}} {tools}'),
    ("{{literal}}", {"literal": "no"}, "{literal}"),
])
def test_format_strings_become_templates(text, slots, expected):
    assert to_template(text, slots, formatted=True) == expected
