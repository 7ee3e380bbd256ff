"""``psit prompts from-reference PATH``: a prompts file built from a local checkout of the study's code.

The workbench carries no copied text: the study's wording is read (as text, never run) from the
researcher's own checkout of chandar-lab/Hangman into a TOML replacing our templates by name
(``PSIT_PROMPTS_FILE``). A reference file that no longer fits is an error naming it, never a partial file.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from psit_lib.cli.errors import CliError

PROMPTS_DIR = Path("src") / "hangman" / "prompts"
VANILLA = ("vanilla_llm_agent", "MAIN_SYSTEM_PROMPT")


@dataclass(frozen=True)
class Source:
    """One of our templates built from reference constants (joined in order)."""

    template: str
    module: str
    constants: tuple[str, ...]
    slots: dict[str, str] = field(default_factory=dict)
    """reference slot -> our slot"""
    after_vanilla: bool = False
    """drop the reference's leading helpful-assistant sentence (we append to the host's system prompt)"""
    part: Callable[[str], str] | None = None
    """a further cut of the joined text (the updater's two halves)"""
    formatted: bool = True
    """whether the reference filled it with str.format (doubled braces are literal)"""


_CONTEXT = re.compile(r"\n\s*Context\s*\n-+\s*\n")


def _split_context(text: str) -> tuple[str, str]:
    """The updater prompt's instructions and its context block (the reference sends both in one
    message; the workbench sends the instructions as the system message and the context as the user's)."""
    found = _CONTEXT.search(text)
    if found is None:
        raise CliError("the reference updater prompt has no 'Context' section to split at")
    return text[:found.start()].rstrip(), text[found.end():].strip()


def _lives(text: str) -> str:
    """The reference's opener states six lives in its text; ours fills the number."""
    if not re.search(r"\b6 lives\b", text):
        raise CliError("the reference Hangman opener no longer states '6 lives'")
    return re.sub(r"\b6 lives\b", "{lives} lives", text, count=1)


SOURCES: tuple[Source, ...] = (
    Source("host.neutral_system", VANILLA[0], (VANILLA[1],), formatted=False),
    Source("hangman.opener", "hangman_sct", ("PLAYER_START_PROMPT",), part=_lives, formatted=False),
    Source("hangman.reveal", "hangman_sct", ("REVEAL_SECRET_PROMPT",), formatted=False),
    Source("hangman.confirm", "hangman_sct", ("SCT_YES_NO_PROMPT",), {"word": "secret"}),
    Source("diagnosis.opener", "diagnosis_simulator_sct", ("PLAYER_START_PROMPT",), formatted=False),
    Source("diagnosis.reveal", "diagnosis_simulator_sct", ("REVEAL_SECRET_PROMPT",), formatted=False),
    Source("diagnosis.confirm", "diagnosis_simulator_sct", ("SCT_YES_NO_PROMPT",), {"diagnosis": "secret"}),
    Source("agent.private_reasoning_in_history", "private_cot_agent", ("MAIN_SYSTEM_PROMPT",),
           after_vanilla=True, formatted=False),
    Source("agent.workflow_memory_intro", "workflow_agent", ("MAIN_SYSTEM_PROMPT",), after_vanilla=True),
    Source("agent.autonomous_memory_intro", "reactmem_agent", ("MAIN_SYSTEM_PROMPT", "SAVE_SECRET_HINT"),
           after_vanilla=True),
    Source("agent.updater_system", "workflow_agent", ("UPDATE_MEMORY_SYSTEM_PROMPT",), {"tool_guide": "tools"},
           part=lambda text: _split_context(text)[0]),
    Source("agent.updater_user", "workflow_agent", ("UPDATE_MEMORY_SYSTEM_PROMPT", "SAVE_SECRET_HINT"),
           {"thinking": "reasoning", "response": "answer"}, part=lambda text: _split_context(text)[1]),
    Source("baseline.mem0_memories", "mem0_agent", ("MAIN_SYSTEM_PROMPT",), {"user_memories": "memories"}),
    Source("baseline.amem_memories", "amem_agent", ("MAIN_SYSTEM_PROMPT",), {"notes_block": "memories"}),
    Source("baseline.lightmem_memories", "lightmem_agent", ("MAIN_SYSTEM_PROMPT",)),
    Source("baseline.memoryos_memories", "memoryos_agent", ("MAIN_SYSTEM_PROMPT",)),
)


def string_constants(path: Path) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments of a Python file (also ``NAME = "text".strip()``),
    read from its syntax tree (nothing is imported or run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as exc:
        raise CliError(f"cannot read {path} ({exc})") from None
    found: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        value = node.value
        strip = False
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "strip"
                and not value.args):
            value, strip = value.func.value, True
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found[node.targets[0].id] = value.value.strip() if strip else value.value
    return found


_FORMAT_SLOT = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")


def to_template(text: str, slots: dict[str, str], formatted: bool) -> str:
    """A reference format string as one of our templates: its slots renamed, doubled braces made single."""
    if not formatted:
        return text
    renamed = _FORMAT_SLOT.sub(lambda m: "{" + slots.get(m.group(1), m.group(1)) + "}", text)
    return renamed.replace("{{", "{").replace("}}", "}")


def _memory_tags(text: str) -> str:
    """The updater's context shows the memory inside its tags; our ``{memory}`` slot brings its own."""
    return re.sub(r"<working_memory>\s*\{working_memory\}\s*</working_memory>", "{memory}", text)


def build(checkout: Path) -> dict[str, tuple[str, str]]:
    """template name -> (text, where it came from), for every entry of :data:`SOURCES`."""
    folder = checkout / PROMPTS_DIR
    if not folder.is_dir():
        raise CliError(f"{checkout} is not a checkout of the study's reference code (no {PROMPTS_DIR})")
    modules: dict[str, dict[str, str]] = {}

    def constants(module: str) -> dict[str, str]:
        if module not in modules:
            modules[module] = string_constants(folder / f"{module}.py")
        return modules[module]

    vanilla = constants(VANILLA[0]).get(VANILLA[1], "").strip()
    out: dict[str, tuple[str, str]] = {}
    for source in SOURCES:
        found = constants(source.module)
        missing = [c for c in source.constants if c not in found]
        if missing:
            raise CliError(f"{PROMPTS_DIR / source.module}.py has no {', '.join(missing)} (needed for "
                           f"{source.template})")
        text = "".join(found[c] for c in source.constants)
        if source.after_vanilla and vanilla and text.lstrip().startswith(vanilla):
            text = text.lstrip()[len(vanilla):]
        if source.part is not None:
            text = source.part(text)
        text = to_template(_memory_tags(text) if source.template == "agent.updater_user" else text,
                           source.slots, source.formatted).strip()
        out[source.template] = (text, f"{PROMPTS_DIR / source.module}.py: {' + '.join(source.constants)}")
    return out


def _toml_string(text: str) -> str:
    """A TOML string holding ``text`` byte for byte: a multi-line literal when it can, else a basic string."""
    if "'''" not in text and not text.endswith("'") and not text.startswith("\n"):
        return f"'''{text}'''"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def prompts_file(checkout: Path) -> str:
    """The TOML text of a prompts file with the study's wording, checked against the workbench's
    templates (every slot the code fills, no other)."""
    from psit_lib.llm.prompts import PromptBook, check_overrides, workbench_templates
    from psit_lib.runs.metadata import git_commit
    from psit_lib.llm.errors import ConfigurationError

    built = build(checkout)
    lines = [f"# The study's prompts, read from a local checkout of its reference code ({checkout},",
             f"# commit {git_commit(checkout)}) by `psit prompts from-reference`. Name this file in",
             "# PSIT_PROMPTS_FILE to run the study's wording; the run metadata records it.", ""]
    for name, (text, where) in built.items():
        lines += [f'["{name}"]', "version = 1", f"about = {_toml_string('from the reference: ' + where)}",
                  f"text = {_toml_string(text)}", ""]
    body = "\n".join(lines)
    try:
        check_overrides(PromptBook.from_toml(body, "the built prompts file"), workbench_templates())
    except (ConfigurationError, LookupError) as exc:
        raise CliError(f"the reference's prompts do not fit the workbench's templates: {exc}") from None
    return body


def cmd_from_reference(args: argparse.Namespace) -> int:
    body = prompts_file(Path(args.path).expanduser())
    target = Path(args.output)
    target.write_text(body, encoding="utf-8")
    count = body.count("\nversion = 1")
    print(f"wrote {count} templates with the study's wording to {target}\n"
          f"run them with: export PSIT_PROMPTS_FILE={target.resolve()}")
    return 0
