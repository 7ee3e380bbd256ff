"""`patch_memory`: diff-style edits of the working memory, anchored by section (SPEC §3). A hunk must
land in exactly one place (never on a guessed line); one already applied is skipped, so re-sending is harmless.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from psit_lib.studies.psit.memory.matching import (
    BULLET_PREFIX,
    MatchOptions,
    ToolResult,
    collapse_whitespace,
    ensure_headers_unchanged,
    inside_any,
    last_content_index,
    make_result,
    normalize_line,
    reject_header_lines,
)
from psit_lib.studies.psit.memory.working_memory import MemoryToolError, Section, find_section

TOOL = "patch_memory"
PATCH_DEFAULTS = MatchOptions(strict_context=False, normalize_whitespace=True, case_sensitive=True)

BEGIN_PATCH = "*** Begin Patch"
UPDATE_MEMORY = "*** Update Memory"
END_PATCH = "*** End Patch"
MAX_CONTEXT_LINES = 3

_HUNK_HEADER = re.compile(r"^@@\s*section\s*:\s*(.*?)\s*(?:@@)?$", re.IGNORECASE)
_ENVELOPE_LIKE = re.compile(r"^\*\*\*\s*(begin|end|update|add|delete|move)\b", re.IGNORECASE)
_SHOWN_SECTION_LINES = 12

CONTEXT, DELETE, ADD = "context", "delete", "add"


@dataclass(frozen=True)
class HunkLine:
    """One line of a hunk: its role (context, delete or add) and its text without marker."""

    kind: str
    text: str

    @property
    def blank(self) -> bool:
        return not self.text.strip()


@dataclass(frozen=True)
class Hunk:
    """One `@@ section:` block of a patch, numbered from 1 in patch order."""

    number: int
    section_title: str
    lines: tuple[HunkLine, ...]

    def count(self, kind: str) -> int:
        return sum(1 for line in self.lines if line.kind == kind)


def _same_envelope_line(line: str, expected: str) -> bool:
    return collapse_whitespace(line).casefold() == expected.casefold()


def parse_patch(patch: str) -> list[Hunk]:
    """Parse the patch text into hunks, or raise MemoryToolError naming the malformed part."""
    lines = [line.rstrip("\r") for line in patch.split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or not _same_envelope_line(lines[0], BEGIN_PATCH):
        raise MemoryToolError(f"{TOOL}: the patch must start with the line '{BEGIN_PATCH}'.")
    if len(lines) < 2 or not _same_envelope_line(lines[1], UPDATE_MEMORY):
        raise MemoryToolError(f"{TOOL}: the second line of the patch must be '{UPDATE_MEMORY}'.")
    if len(lines) < 3 or not _same_envelope_line(lines[-1], END_PATCH):
        raise MemoryToolError(f"{TOOL}: the patch must end with the line '{END_PATCH}'.")

    hunks: list[tuple[str, list[HunkLine]]] = []
    for line in lines[2:-1]:
        stripped = line.strip()
        if stripped.startswith("@@"):
            header = _HUNK_HEADER.match(stripped)
            if header is None or not header.group(1):
                raise MemoryToolError(
                    f"{TOOL}: hunk header {stripped!r} must look like '@@ section: <Title>'."
                )
            hunks.append((header.group(1), []))
        elif _ENVELOPE_LIKE.match(stripped):
            raise MemoryToolError(
                f"{TOOL}: unexpected envelope line {stripped!r}; a patch holds one '{UPDATE_MEMORY}' block."
            )
        elif not hunks:
            if stripped:
                raise MemoryToolError(
                    f"{TOOL}: line {stripped!r} comes before the first '@@ section: <Title>' hunk header."
                )
        elif line.startswith("+"):
            hunks[-1][1].append(HunkLine(ADD, line[1:]))
        elif line.startswith("-"):
            hunks[-1][1].append(HunkLine(DELETE, line[1:]))
        elif line.startswith(" "):
            hunks[-1][1].append(HunkLine(CONTEXT, line[1:]))
        else:
            hunks[-1][1].append(HunkLine(CONTEXT, line))

    if not hunks:
        raise MemoryToolError(f"{TOOL}: the patch contains no '@@ section: <Title>' hunk.")
    parsed = []
    for number, (title, body) in enumerate(hunks, start=1):
        body = _trim_blank_context(body)
        if not any(line.kind != CONTEXT for line in body):
            raise MemoryToolError(
                f"{TOOL}: hunk {number} (section {title!r}) has no '+' or '-' line, so it changes nothing."
            )
        reject_header_lines((line.text for line in body if line.kind != CONTEXT), TOOL, f"hunk {number} line")
        parsed.append(Hunk(number, title, tuple(body)))
    return parsed


def _trim_blank_context(body: list[HunkLine]) -> list[HunkLine]:
    """Drop blank context lines at both ends of a hunk (the gaps between hunks)."""
    start, end = 0, len(body)
    while start < end and body[start].kind == CONTEXT and body[start].blank:
        start += 1
    while end > start and body[end - 1].kind == CONTEXT and body[end - 1].blank:
        end -= 1
    return body[start:end]


Match = tuple[int, ...]


def find_block(
    lines: Sequence[str],
    start: int,
    end: int,
    block: Sequence[str],
    equal: Callable[[str, str], bool],
    skip_blank: bool,
) -> list[Match]:
    """All places in `lines[start:end]` where `block` appears as consecutive (with `skip_blank`: non-blank)
    lines; overlapping occurrences all count, as they make a hunk ambiguous."""
    if not block:
        return []
    candidates = [i for i in range(start, end) if not skip_blank or lines[i].strip()]
    found = []
    for first in range(len(candidates) - len(block) + 1):
        indices = candidates[first : first + len(block)]
        if all(equal(lines[i], text) for i, text in zip(indices, block)):
            found.append(tuple(indices))
    return found


def _rebuild(lines: list[str], ops: Sequence[HunkLine], indices: Match) -> list[str]:
    """Apply `ops` at the located memory lines; memory's own text is kept for context lines."""
    located = iter(indices)
    out: list[str] = []
    previous: int | None = None
    for op in ops:
        if op.kind == ADD:
            out.append(op.text)
            continue
        index = next(located)
        if previous is not None:
            out.extend(lines[previous + 1 : index])
        if op.kind == CONTEXT:
            out.append(lines[index])
        previous = index
    return lines[: indices[0]] + out + lines[indices[-1] + 1 :]


@dataclass(frozen=True)
class _HunkOutcome:
    lines: list[str]
    applied: bool
    warnings: tuple[str, ...]


def _section_preview(lines: list[str], section: Section) -> str:
    shown = [line for line in lines[section.start + 1 : section.end] if line.strip()]
    if not shown:
        return "the section is empty"
    preview = " | ".join(shown[:_SHOWN_SECTION_LINES])
    more = f" | ... ({len(shown) - _SHOWN_SECTION_LINES} more)" if len(shown) > _SHOWN_SECTION_LINES else ""
    return f"section lines: {preview}{more}"


def _fail_if_ambiguous(matches: list[Match], label: str) -> None:
    if len(matches) > 1:
        places = ", ".join(f"line {m[0] + 1}" for m in matches)
        raise MemoryToolError(
            f"{TOOL}: {label} is ambiguous: its context and '-' lines match at {places}; "
            "add context lines that occur only once."
        )


def _apply_hunk(lines: list[str], hunk: Hunk, options: MatchOptions) -> _HunkOutcome:
    """Apply one hunk, skip it as already applied, or raise; failing that, retry with list bullets ignored
    (a model writes ``-Old line`` for the memory line ``- Old line``), the new lines getting the bullet."""
    section = find_section("\n".join(lines), hunk.section_title)
    label = f"hunk {hunk.number} (section {section.title!r})"

    def equal(memory_line: str, text: str) -> bool:
        return normalize_line(memory_line, options) == normalize_line(text, options)

    def equal_ignoring_bullet(memory_line: str, text: str) -> bool:
        if equal(memory_line, text):
            return True
        bare = BULLET_PREFIX.sub("", memory_line.lstrip(), count=1)
        return bare != memory_line.lstrip() and not BULLET_PREFIX.match(text.lstrip()) and equal(bare, text)

    outcome = _locate(lines, hunk, options, equal, section, label)
    if outcome is None and any(op.kind != ADD for op in hunk.lines):
        bulleted = _with_bullets(lines, hunk, section)
        if bulleted is not None:
            outcome = _locate(lines, bulleted, options, equal_ignoring_bullet, section, label)
            if outcome is not None and outcome.applied:
                note = f"{TOOL}: {label} matched only when list bullets are ignored; new lines keep the bullet."
                outcome = _HunkOutcome(outcome.lines, True, (*outcome.warnings, note))
    if outcome is not None:
        return outcome
    wanted = [op.text.strip() for op in hunk.lines if op.kind != ADD]
    hint = " (they may have been removed already)" if not any(op.kind == ADD for op in hunk.lines) else ""
    raise MemoryToolError(
        f"{TOOL}: {label} not found: the lines {wanted!r} do not occur together in the section{hint}; "
        f"{_section_preview(lines, section)}."
    )


def _with_bullets(lines: list[str], hunk: Hunk, section: Section) -> Hunk | None:
    """The hunk with its '+' lines given the bullet of the section's list, if it has one."""
    bullets = [m.group(0) for line in lines[section.start:section.end] if (m := BULLET_PREFIX.match(line.lstrip()))]
    if not bullets:
        return None
    bullet = bullets[0]
    new_lines = [replace(op, text=bullet + op.text.lstrip()) if op.kind == ADD and op.text.strip()
                 and not BULLET_PREFIX.match(op.text.lstrip()) else op for op in hunk.lines]
    return replace(hunk, lines=tuple(new_lines))


def _locate(lines: list[str], hunk: Hunk, options: MatchOptions, equal: Callable[[str, str], bool],
            section: Section, label: str) -> _HunkOutcome | None:
    """Apply the hunk, or skip it as applied before; None when its lines are not found."""
    start, end = section.start, section.end
    ops = hunk.lines
    adds = [op.text for op in ops if op.kind == ADD]
    has_deletes = any(op.kind == DELETE for op in ops)
    has_context = any(op.kind == CONTEXT for op in ops)

    if not has_deletes and not has_context:
        if find_block(lines, start, end, adds, equal, skip_blank=False):
            present = f"{TOOL}: {label} is already applied (its '+' lines are present); skipped."
            return _HunkOutcome(lines, False, (present,))
        at = last_content_index(lines, start, end)
        return _HunkOutcome(lines[:at] + adds + lines[at:], True, ())

    def blocks(phase_ops: Sequence[HunkLine]) -> tuple[list[str], list[str]]:
        old_block = [op.text for op in phase_ops if op.kind != ADD]
        new_block = [op.text for op in phase_ops if op.kind != DELETE]
        return old_block, new_block

    already = _HunkOutcome(lines, False, (f"{TOOL}: {label} is already applied; skipped.",))
    loose_ops = [op for op in ops if not (op.kind == CONTEXT and op.blank)]
    can_loosen = not options.strict_context and not any(op.kind == DELETE and op.blank for op in ops)

    # A. Locate the hunk by its context and '-' lines: exactly, then (without strict_context)
    #    ignoring blank lines. The first way that finds them decides.
    located: list[tuple[str | None, Sequence[HunkLine], bool]] = [(None, ops, False)]
    if can_loosen:
        located.append((f"{TOOL}: {label} matched only when blank lines are ignored.", loose_ops, True))
    for phase_warning, phase_ops, skip_blank in located:
        old_block, new_block = blocks(phase_ops)
        old_matches = find_block(lines, start, end, old_block, equal, skip_blank)
        if not old_matches:
            continue
        new_matches = find_block(lines, start, end, new_block, equal, skip_blank)
        if new_matches and all(inside_any(m, new_matches) for m in old_matches):
            return already
        _fail_if_ambiguous(old_matches, label)
        warnings = (phase_warning,) if phase_warning else ()
        return _HunkOutcome(_rebuild(lines, phase_ops, old_matches[0]), True, warnings)

    # B. Old lines gone from their place, result (context and '+' lines) in place: applied before.
    old_loose, new_loose = blocks(loose_ops)
    if new_loose and find_block(lines, start, end, new_loose, equal, True):
        if not find_block(lines, start, end, old_loose, equal, True):
            return already

    # C. Without strict_context, stale context is forgiven: locate by the '-' lines alone.
    if can_loosen and has_deletes and has_context:
        changes_only = [op for op in loose_ops if op.kind != CONTEXT]
        deleted, added = blocks(changes_only)
        old_matches = find_block(lines, start, end, deleted, equal, True)
        added_matches = find_block(lines, start, end, added, equal, True)
        if not old_matches and added_matches:
            return already
        if old_matches:
            _fail_if_ambiguous(old_matches, label)
            stale = f"{TOOL}: {label}: context lines not found; located by its '-' lines alone."
            return _HunkOutcome(_rebuild(lines, changes_only, old_matches[0]), True, (stale,))

    return None




def _context_warnings(hunk: Hunk) -> list[str]:
    """Warn when a hunk carries more context than the 1-3 lines the format asks for."""
    kinds = [line.kind for line in hunk.lines]
    leading = next((i for i, kind in enumerate(kinds) if kind != CONTEXT), len(kinds))
    trailing = next((i for i, kind in enumerate(reversed(kinds)) if kind != CONTEXT), len(kinds))
    if max(leading, trailing) > MAX_CONTEXT_LINES:
        return [f"{TOOL}: hunk {hunk.number} has over {MAX_CONTEXT_LINES} context lines in a row; 1-3 suffice."]
    return []


def patch_memory(
    memory: str,
    patch: str,
    explanation: str,
    expected_hunks: int | None = None,
    expected_changes: int | None = None,
    options: dict[str, Any] | None = None,
) -> ToolResult:
    """Apply a memory patch, all hunks in order or none; `expected_hunks` and `expected_changes` ('+' and
    '-' lines) catch truncated or garbled patches."""
    resolved = replace(PATCH_DEFAULTS, **(options or {}))

    hunks = parse_patch(patch)
    if expected_hunks is not None and expected_hunks != len(hunks):
        raise MemoryToolError(
            f"{TOOL}: expected_hunks is {expected_hunks} but the patch has {len(hunks)} hunk(s)."
        )
    declared_changes = sum(h.count(ADD) + h.count(DELETE) for h in hunks)
    if expected_changes is not None and expected_changes != declared_changes:
        raise MemoryToolError(
            f"{TOOL}: expected_changes is {expected_changes} "
            f"but the patch has {declared_changes} '+'/'-' line(s)."
        )

    lines = memory.split("\n")
    applied, changed, touched, warnings = 0, 0, [], []
    for hunk in hunks:
        warnings.extend(_context_warnings(hunk))
        outcome = _apply_hunk(lines, hunk, resolved)
        warnings.extend(outcome.warnings)
        if outcome.applied:
            applied += 1
            changed += hunk.count(ADD) + hunk.count(DELETE)
            touched.append(find_section(memory, hunk.section_title).title)
        lines = outcome.lines

    new_memory = "\n".join(lines)
    ensure_headers_unchanged(memory, new_memory, TOOL)
    return make_result(
        new_memory, applied_hunks=applied, changed_lines=changed, sections_touched=touched, warnings=warnings
    )
