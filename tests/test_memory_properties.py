"""Property tests of the memory tools (SPEC §3): idempotence, purity, header safety, robustness."""

from __future__ import annotations

import pytest

import re
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from psit_lib.studies.psit.memory.patch import patch_memory
from psit_lib.studies.psit.memory.replace import replace_in_memory
from psit_lib.studies.psit.memory.tools import append_in_memory, apply_tool_call, delete_from_memory
from psit_lib.studies.psit.memory.working_memory import SECTION_TITLES, MemoryToolError, parse_sections
from psit_lib.studies.psit.memory.matching import normalize_for_deletion

SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
TOOL_NAMES = ["overwrite_memory", "append_in_memory", "delete_from_memory", "patch_memory", "replace_in_memory"]

words = st.sampled_from(["planet", "python", "apple", "lives", "guess", "e", "a", "t", "note", "plan", "fact"])
bullets = st.sampled_from(["", "- ", "* ", "• ", "1. "])
body_lines = st.builds(
    lambda bullet, parts, tail: bullet + " ".join(parts) + tail,
    bullets,
    st.lists(words, min_size=1, max_size=4),
    st.sampled_from(["", ":", " 5", ", e", "  "]),
)


@st.composite
def memories(draw) -> str:
    """A well-formed three-section memory with random bullet lines and blank lines."""
    blocks = []
    for number, title in enumerate(SECTION_TITLES, start=1):
        body = draw(st.lists(st.one_of(body_lines, body_lines, st.just("")), max_size=6))
        blocks.append("\n".join([f"## {number}. {title}", *body]))
    return "\n\n".join(blocks) + draw(st.sampled_from(["", "\n"]))


def headers(memory: str) -> list[str]:
    return [section.header for section in parse_sections(memory)]


def patch_text(title: str, body: list[str]) -> str:
    return "\n".join(["*** Begin Patch", "*** Update Memory", f"@@ section: {title}", *body, "*** End Patch"])


@st.composite
def patches_for(draw, memory: str) -> str:
    """A plausible single-hunk patch: replace, insert or delete near an existing line."""
    section = draw(st.sampled_from(parse_sections(memory)))
    lines = memory.split("\n")
    content = [i for i in range(section.start, section.end) if lines[i].strip()]
    kind = draw(st.sampled_from(["replace", "insert", "delete", "append"]))
    new_line = draw(body_lines.filter(lambda line: line.strip()))
    if kind == "append" or len(content) < 2:
        return patch_text(section.title, [f"+{new_line}"])
    position = draw(st.integers(min_value=1, max_value=len(content) - 1))
    context, target = lines[content[position - 1]], lines[content[position]]
    # A duplicated target can legitimately be deleted again on re-application (the patch
    # still matches), so aim at lines that are unique in their section.
    assume(sum(" ".join(lines[i].split()) == " ".join(target.split()) for i in content) == 1)
    body = {
        "replace": [f" {context}", f"-{target}", f"+{new_line}"],
        "insert": [f" {context}", f"+{new_line}"],
        "delete": [f" {context}", f"-{target}"],
    }[kind]
    return patch_text(section.title, body)


@pytest.mark.slow
@SETTINGS
@given(memories(), st.data())
def test_reapplying_an_applied_patch_changes_nothing(memory: str, data: st.DataObject) -> None:
    patch = data.draw(patches_for(memory))
    try:
        first = patch_memory(memory, patch, "property")
    except MemoryToolError:
        assume(False)
    event("first patch applied" if first.meta["applied_hunks"] else "first patch was a no-op")
    second = patch_memory(first.new_memory, patch, "property")
    assert second.new_memory == first.new_memory
    assert second.meta["applied_hunks"] == 0 and second.meta["changed_lines"] == 0


@pytest.mark.slow
@SETTINGS
@given(memories(), st.data())
def test_reapplying_an_applied_replace_changes_nothing(memory: str, data: st.DataObject) -> None:
    # old_string: a slice of one content line, sometimes running into the next line.
    offsets, position = [], 0
    for line in memory.split("\n"):
        if line.strip() and not line.startswith("## "):
            offsets.append((position, position + len(line)))
        position += len(line) + 1
    assume(offsets)
    line_start, line_end = data.draw(st.sampled_from(offsets))
    start = data.draw(st.integers(min_value=line_start, max_value=line_end - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=min(len(memory), line_end + 2)))
    old_string = memory[start:end]
    assume(old_string.strip())
    pre = data.draw(st.integers(min_value=0, max_value=min(start, 6)))
    post = data.draw(st.integers(min_value=0, max_value=min(len(memory) - end, 6)))
    new_string = data.draw(st.one_of(body_lines, words, st.just(old_string + " (checked)"), st.just("")))
    arguments = {
        "section_title": data.draw(st.one_of(st.none(), st.sampled_from(SECTION_TITLES))),
        "pre_context": memory[start - pre : start] or None,
        "post_context": memory[end : end + post] or None,
        "options": {
            "normalize_whitespace": data.draw(st.booleans()),
            "strict_context": data.draw(st.booleans()),
            "case_sensitive": data.draw(st.booleans()),
        },
    }
    try:
        first = replace_in_memory(memory, old_string, new_string, "property", **arguments)
    except MemoryToolError:
        assume(False)
    event("first replace applied" if first.meta["applied_hunks"] else "first replace was a no-op")
    # If new_string plus its surroundings spell old_string again, the replacement genuinely
    # applies again (like a patch on a duplicated line); the property is about the rest.
    options = arguments["options"]

    def canonical(text: str) -> str:
        text = re.sub(r"\s+", " ", text) if options["normalize_whitespace"] else text
        return text if options["case_sensitive"] else text.lower()

    old_text, new_text, result = (canonical(text) for text in (old_string, new_string, first.new_memory))
    if old_text in new_text:
        assume(result.count(old_text) == result.count(new_text) * new_text.count(old_text))
    else:
        assume(old_text not in result)
    try:
        second = replace_in_memory(first.new_memory, old_string, new_string, "property", **arguments)
    except MemoryToolError:
        # Only a deletion (empty new_string) may fail on re-application: nothing marks its place.
        assert not new_string.strip()
        return
    assert second.new_memory == first.new_memory


def fragments(memory: str) -> st.SearchStrategy[str]:
    """Pieces of the memory (headers included) mixed with new text, to aim calls at real lines."""
    lines = memory.split("\n")
    header_lines = st.sampled_from(headers(memory))
    content = [line for line in lines if line.strip() and not line.startswith("## ")]
    real = st.sampled_from(content) if content else body_lines
    return st.one_of(real, real, real, real, real, header_lines, body_lines, st.text(max_size=20), st.just("## 4. X"))


@st.composite
def substrings(draw, memory: str) -> str:
    """A non-empty slice of the memory, possibly spanning lines or headers."""
    start = draw(st.integers(min_value=0, max_value=max(0, len(memory) - 1)))
    length = draw(st.integers(min_value=1, max_value=30))
    return memory[start : start + length] or "x"


@st.composite
def tool_calls(draw, memory: str) -> tuple[str, dict[str, Any]]:
    """A random but well-typed call of one of the four section-preserving tools."""
    name = draw(st.sampled_from(TOOL_NAMES[1:]))
    piece = fragments(memory)
    title = draw(st.sampled_from([*SECTION_TITLES, *SECTION_TITLES, "Missing Section"]))
    if name in ("append_in_memory", "delete_from_memory"):
        return name, {"section_title": title, "lines": draw(st.lists(piece, min_size=1, max_size=2))}
    if name == "patch_memory":
        marked = st.builds(lambda mark, text: mark + text, st.sampled_from([" ", "-", "+", ""]), piece)
        return name, {"patch": patch_text(title, draw(st.lists(marked, min_size=1, max_size=4))), "explanation": "p"}
    return name, {
        "old_string": draw(st.one_of(substrings(memory), piece.filter(bool))),
        "new_string": draw(st.one_of(piece, st.just(""), substrings(memory))),
        "explanation": "p",
        "section_title": draw(st.one_of(st.none(), st.just(title))),
        "options": {"normalize_whitespace": draw(st.booleans()), "case_sensitive": draw(st.booleans())},
    }


@pytest.mark.slow
@SETTINGS
@given(memories(), st.data())
def test_failing_calls_leave_memory_identical_and_headers_never_change(memory: str, data: st.DataObject) -> None:
    snapshot = "".join(memory)
    name, arguments = data.draw(tool_calls(memory))
    try:
        result = apply_tool_call(memory, name, arguments)
    except MemoryToolError:
        event(f"{name} failed")
        assert memory == snapshot
        return
    event(f"{name} succeeded")
    assert memory == snapshot
    assert headers(result.new_memory) == headers(memory)
    assert set(result.meta) == {"applied_hunks", "changed_lines", "sections_touched", "warnings"}


@pytest.mark.slow
@SETTINGS
@given(memories(), st.sampled_from(SECTION_TITLES), st.lists(body_lines, min_size=1, max_size=4, unique=True))
def test_append_then_delete_restores_the_original(memory: str, title: str, lines: list[str]) -> None:
    existing = [normalize_for_deletion(line) for line in memory.split("\n")]
    targets = [normalize_for_deletion(line) for line in lines]
    # Each appended line must be the only line its target selects (no overlap with others).
    assume(all(t and not any(t in other or other in t for other in existing if other) for t in targets))
    assume(all(a == b or (a not in b and b not in a) for a in targets for b in targets))
    appended = append_in_memory(memory, title, lines)
    restored = delete_from_memory(appended.new_memory, title, lines)
    assert restored.new_memory == memory


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
argument_names = st.sampled_from(
    ["new_memory", "section_title", "lines", "patch", "explanation", "expected_hunks", "expected_changes",
     "options", "old_string", "new_string", "expected_replacements", "pre_context", "post_context", "bogus"]
)


@SETTINGS
@given(
    memory=st.one_of(memories(), st.text(max_size=40), json_values),
    name=st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=12), json_values),
    arguments=st.one_of(
        st.dictionaries(argument_names, json_values, max_size=6),
        st.dictionaries(st.one_of(argument_names, st.integers()), json_values, max_size=4),
        json_values,
        st.text(max_size=40),
    ),
)
@pytest.mark.slow
def test_garbage_arguments_only_raise_memory_tool_error(memory: Any, name: Any, arguments: Any) -> None:
    try:
        apply_tool_call(memory, name, arguments)
    except MemoryToolError:
        pass
