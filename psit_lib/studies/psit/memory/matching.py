"""Shared machinery of the memory edit tools (results, options, matching, header guards), kept in
one place so the five tools cannot drift apart.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Iterable

from psit_lib.studies.psit.memory.working_memory import (
    MemoryToolError,
    is_header_line,
    normalize_title,
    parse_sections,
)


# Bullet markers forgiven by deletion matching: "- ", "* ", "• " and numbered "1. " / "1) ".
BULLET_PREFIX = re.compile(r"^(?:[-*•]|\d+[.)])\s+")

# Deletion targets shorter than this (after normalisation) must equal a whole line, so a
# short word such as "e" cannot wipe every line that happens to contain it.
MIN_SUBSTRING_TARGET = 8


@dataclass(frozen=True)
class ToolResult:
    """Outcome of a successful tool call; `meta` has the same keys for every tool, so calls compare."""

    new_memory: str
    meta: dict = field(default_factory=dict)


def make_result(
    new_memory: str,
    *,
    applied_hunks: int,
    changed_lines: int,
    sections_touched: Iterable[str],
    warnings: Iterable[str],
) -> ToolResult:
    """Build a ToolResult with the canonical meta keys (sections deduplicated, order kept)."""
    touched = list(dict.fromkeys(sections_touched))
    return ToolResult(
        new_memory=new_memory,
        meta={
            "applied_hunks": applied_hunks,
            "changed_lines": changed_lines,
            "sections_touched": touched,
            "warnings": list(warnings),
        },
    )


def unchanged(memory: str, warning: str) -> ToolResult:
    """The result of a call that changes nothing (already applied, identical text)."""
    return make_result(memory, applied_hunks=0, changed_lines=0, sections_touched=[], warnings=[warning])


@dataclass(frozen=True)
class MatchOptions:
    """How strictly patch and replace match text against the memory (the matching rules of SPEC §3)."""

    strict_context: bool
    normalize_whitespace: bool
    case_sensitive: bool


def split_lines_argument(lines: list[str] | str) -> list[str]:
    """The individual lines of a list of strings or of one string with newlines."""
    return [line for piece in ([lines] if isinstance(lines, str) else lines) for line in piece.split("\n")]


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace become one space; leading and trailing whitespace go."""
    return " ".join(text.split())


def normalize_line(text: str, options: MatchOptions) -> str:
    """Comparable form of one line under the patch/replace options."""
    if options.normalize_whitespace:
        text = collapse_whitespace(text)
    if not options.case_sensitive:
        text = text.casefold()
    return text


def normalize_for_deletion(text: str) -> str:
    """Forgiving comparable form for deletion: whitespace, case and bullet markers ignored."""
    collapsed = collapse_whitespace(text).casefold()
    return BULLET_PREFIX.sub("", collapsed, count=1)


def deletion_target_matches(target: str, line: str) -> bool:
    """True if `target` selects memory line `line` (SPEC §3): a short target must equal the line,
    a longer one may match as a substring."""
    wanted = normalize_for_deletion(target)
    have = normalize_for_deletion(line)
    if not wanted:
        return False
    if len(wanted) < MIN_SUBSTRING_TARGET:
        return wanted == have
    return wanted in have


def inside_any(place: tuple[int, ...], containers: Iterable[tuple[int, ...]]) -> bool:
    """Whether ``place`` (a character span, or a match's line indices) lies within one of ``containers``."""
    return any(outer[0] <= place[0] and place[-1] <= outer[-1] for outer in containers)


def reject_header_lines(lines: Iterable[str], tool: str, role: str) -> None:
    """Raise if any line looks like a section header: headers are never added or removed."""
    for line in lines:
        if is_header_line(line):
            raise MemoryToolError(
                f"{tool}: {role} {line.strip()!r} is a section header; "
                "section headers cannot be edited, added or deleted."
            )


def ensure_headers_unchanged(before: str, after: str, tool: str) -> None:
    """Final guard: the edit must leave the exact sequence of header lines intact."""
    if [s.header for s in parse_sections(before)] != [s.header for s in parse_sections(after)]:
        raise MemoryToolError(
            f"{tool}: the edit would change the section headers; headers cannot be edited, added or deleted."
        )


def count_changed_lines(before: str, after: str) -> int:
    """Number of lines removed plus lines added between two memory texts."""
    if before == after:
        return 0
    diff = difflib.ndiff(before.split("\n"), after.split("\n"))
    return sum(1 for line in diff if line[:2] in ("- ", "+ "))


def sections_with_changes(before: str, after: str) -> list[str]:
    """Titles (as in `after`, else `before`) of sections whose body differs between texts."""
    old = {normalize_title(s.title): s for s in parse_sections(before)}
    new = {normalize_title(s.title): s for s in parse_sections(after)}
    touched = []
    for key in list(new) + [k for k in old if k not in new]:
        if key not in old or key not in new or old[key].body != new[key].body:
            touched.append((new.get(key) or old[key]).title)
    return touched


def last_content_index(lines: list[str], start: int, end: int) -> int:
    """Index after the last non-blank line of `lines[start:end]` (or `start`): appending there keeps
    the blank line that separates a section from the next header."""
    position = start
    for index in range(start, end):
        if lines[index].strip():
            position = index + 1
    return position
