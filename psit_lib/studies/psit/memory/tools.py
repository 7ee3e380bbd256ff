"""The five memory-update tools of SPEC §3 and their dispatcher. Every tool is pure (a `ToolResult` or
`MemoryToolError`), so a failure cannot leave a half-edited memory behind.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ValidationError

from psit_lib.studies.psit.memory.matching import (
    ToolResult,
    count_changed_lines,
    deletion_target_matches,
    ensure_headers_unchanged,
    last_content_index,
    make_result,
    unchanged,
    normalize_for_deletion,
    reject_header_lines,
    sections_with_changes,
    split_lines_argument,
)
from psit_lib.studies.psit.memory.patch import patch_memory
from psit_lib.studies.psit.memory.replace import replace_in_memory
from psit_lib.studies.psit.memory.tool_schemas import TOOL_ARGUMENTS
from psit_lib.studies.psit.memory.working_memory import (
    SECTION_TITLES,
    MemoryToolError,
    extract_secret,
    find_section,
    normalize_title,
    parse_sections,
)

def overwrite_memory(memory: str, new_memory: str) -> ToolResult:
    """Replace the whole memory; never fails on content, but warns when a standard section or the
    stored secret is lost (almost always a model slip)."""
    tool = "overwrite_memory"
    if new_memory == memory:
        return unchanged(memory, f"{tool}: new_memory is identical to the current memory; nothing changed.")
    warnings = []
    present = {normalize_title(section.title) for section in parse_sections(new_memory)}
    missing = [title for title in SECTION_TITLES if normalize_title(title) not in present]
    if missing:
        warnings.append(f"{tool}: new_memory has no section(s) {', '.join(repr(t) for t in missing)}.")
    old_secret, new_secret = extract_secret(memory), extract_secret(new_memory)
    if old_secret is not None and new_secret is None:
        warnings.append(f"{tool}: new_memory drops the <secret>...</secret> entry.")
    elif old_secret is not None and new_secret != old_secret:
        warnings.append(f"{tool}: new_memory changes the value inside <secret>...</secret>.")
    return make_result(
        new_memory,
        applied_hunks=1,
        changed_lines=count_changed_lines(memory, new_memory),
        sections_touched=sections_with_changes(memory, new_memory),
        warnings=warnings,
    )


def append_in_memory(memory: str, section_title: str, lines: list[str] | str) -> ToolResult:
    """Append `lines` after the last non-blank line of a section (blank lines are dropped)."""
    tool = "append_in_memory"
    new_lines = [line for line in split_lines_argument(lines) if line.strip()]
    if not new_lines:
        raise MemoryToolError(f"{tool}: lines contains no non-blank line to append.")
    reject_header_lines(new_lines, tool, "line")
    section = find_section(memory, section_title)

    existing = {normalize_for_deletion(line) for line in section.body if line.strip()}
    warnings = [
        f"{tool}: line {line.strip()!r} was already in section {section.title!r}; appended again."
        for line in new_lines
        if normalize_for_deletion(line) in existing
    ]
    memory_lines = memory.split("\n")
    at = last_content_index(memory_lines, section.start, section.end)
    new_memory = "\n".join(memory_lines[:at] + new_lines + memory_lines[at:])
    ensure_headers_unchanged(memory, new_memory, tool)
    return make_result(
        new_memory,
        applied_hunks=1,
        changed_lines=len(new_lines),
        sections_touched=[section.title],
        warnings=warnings,
    )


def delete_from_memory(memory: str, section_title: str, lines: list[str] | str) -> ToolResult:
    """Delete the section lines matched by each target in `lines` (whitespace, case and bullets
    forgiven); a target that matches no line fails the whole call."""
    tool = "delete_from_memory"
    targets = [line for line in split_lines_argument(lines) if normalize_for_deletion(line)]
    if not targets:
        raise MemoryToolError(f"{tool}: lines contains no non-blank target to delete.")
    reject_header_lines(targets, tool, "target")
    section = find_section(memory, section_title)

    memory_lines = memory.split("\n")
    body = range(section.start + 1, section.end)
    doomed: set[int] = set()
    missing, warnings = [], []
    for target in targets:
        hits = [i for i in body if deletion_target_matches(target, memory_lines[i])]
        if not hits:
            missing.append(target.strip())
        elif len(hits) > 1:
            warnings.append(f"{tool}: target {target.strip()!r} matched {len(hits)} lines; all were deleted.")
        doomed.update(hits)
    if missing:
        shown = [line.strip() for line in section.body if line.strip()]
        raise MemoryToolError(
            f"{tool}: no line of section {section.title!r} matches {missing!r} "
            f"(targets under 8 characters must equal a whole line); section lines: {shown!r}."
        )
    if any("<secret>" in memory_lines[i].lower() for i in doomed):
        warnings.append(f"{tool}: a deleted line held the <secret>...</secret> entry.")
    new_memory = "\n".join(line for i, line in enumerate(memory_lines) if i not in doomed)
    ensure_headers_unchanged(memory, new_memory, tool)
    return make_result(
        new_memory,
        applied_hunks=len(targets),
        changed_lines=len(doomed),
        sections_touched=[section.title],
        warnings=warnings,
    )


TOOL_FUNCTIONS: dict[str, Callable[..., ToolResult]] = {
    "overwrite_memory": overwrite_memory,
    "append_in_memory": append_in_memory,
    "delete_from_memory": delete_from_memory,
    "patch_memory": patch_memory,
    "replace_in_memory": replace_in_memory,
}


def apply_tool_call(memory: str, name: str, arguments: Mapping[str, Any] | str) -> ToolResult:
    """Validate one model tool call against tool_schemas.py and run it; MemoryToolError is the only
    exception bad input gets out."""
    if not isinstance(memory, str):
        raise MemoryToolError(f"memory must be a string, got {type(memory).__name__}.")
    if not isinstance(name, str) or name not in TOOL_FUNCTIONS:
        raise MemoryToolError(f"Unknown memory tool {name!r}; known tools: {', '.join(TOOL_FUNCTIONS)}.")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError) as error:
            raise MemoryToolError(f"{name}: arguments are not valid JSON ({error}).") from None
    if not isinstance(arguments, Mapping):
        raise MemoryToolError(f"{name}: arguments must be an object, got {type(arguments).__name__}.")
    bad_keys = [key for key in arguments if not isinstance(key, str)]
    if bad_keys:
        raise MemoryToolError(f"{name}: argument names must be strings, got {bad_keys[0]!r}.")
    try:
        parsed = TOOL_ARGUMENTS[name].model_validate(dict(arguments))
    except ValidationError as error:
        problems = [f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
                    for item in error.errors(include_url=False, include_input=False)]
        raise MemoryToolError(f"{name}: invalid arguments ({'; '.join(problems)}).") from None
    kwargs = {field: getattr(parsed, field) for field in type(parsed).model_fields}
    if isinstance(kwargs.get("options"), BaseModel):
        kwargs["options"] = kwargs["options"].model_dump(exclude_none=True)
    return TOOL_FUNCTIONS[name](memory, **kwargs)
