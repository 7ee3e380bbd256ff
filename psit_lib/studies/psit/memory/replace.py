"""`replace_in_memory`: exact-span replacement in the working memory (SPEC §3). The tool refuses to
guess: the occurrences found must equal `expected_replacements`; re-sending an applied one is a no-op.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import Any

from psit_lib.studies.psit.memory.matching import (
    MatchOptions,
    ToolResult,
    count_changed_lines,
    ensure_headers_unchanged,
    inside_any,
    make_result,
    unchanged,
    reject_header_lines,
)
from psit_lib.studies.psit.memory.working_memory import MemoryToolError, find_section, parse_sections

TOOL = "replace_in_memory"
REPLACE_DEFAULTS = MatchOptions(strict_context=True, normalize_whitespace=False, case_sensitive=True)

# Without strict_context, pre/post context may sit this many lines away from the span.
LOOSE_CONTEXT_LINES = 3

Span = tuple[int, int]


def text_pattern(text: str, options: MatchOptions) -> str:
    """Regex source matching `text` literally, or with whitespace normalised.

    Normalised, a run of spaces and tabs matches any run of spaces and tabs (none at all at the
    start or end of `text`), and a run holding line breaks matches the same number of line
    breaks with any spaces around them: a space never matches a line break, so "foo " cannot
    join two list lines.
    """
    if not options.normalize_whitespace:
        return re.escape(text)
    parts = [part for part in re.split(r"(\s+)", text) if part]
    out = []
    for i, part in enumerate(parts):
        if not part.isspace():
            out.append(re.escape(part))
        elif "\n" in part:
            out.append(r"[ \t]*" + r"[ \t]*".join(["\n"] * part.count("\n")) + r"[ \t]*")
        else:
            out.append(r"[ \t]*" if i in (0, len(parts) - 1) else r"[ \t]+")
    return "".join(out)


@dataclass(frozen=True)
class _Layout:
    """Character geometry of a memory text: line starts and header character ranges."""

    memory: str
    line_starts: tuple[int, ...]

    @classmethod
    def of(cls, memory: str) -> "_Layout":
        return cls(memory, (0, *(match.end() for match in re.finditer("\n", memory))))

    def line_of(self, position: int) -> int:
        return bisect.bisect_right(self.line_starts, position) - 1

    def line_start(self, line: int) -> int:
        return self.line_starts[max(0, min(line, len(self.line_starts) - 1))]

    def line_end(self, line: int) -> int:
        line = max(0, min(line, len(self.line_starts) - 1))
        if line + 1 < len(self.line_starts):
            return self.line_starts[line + 1] - 1
        return len(self.memory)

    def region_of_body(self, start_line: int, end_line: int) -> Span:
        """Character range of lines `start_line+1 .. end_line-1` (a section body, no header)."""
        if start_line + 1 >= len(self.line_starts):
            return (len(self.memory), len(self.memory))
        begin = self.line_starts[start_line + 1]
        finish = self.line_end(end_line - 1) if end_line - 1 > start_line else begin
        return (begin, max(begin, finish))


class _ContextCheck:
    """Decides whether pre/post context surrounds a span, under the replace options."""

    def __init__(self, layout: _Layout, pre: str | None, post: str | None, options: MatchOptions):
        flags = 0 if options.case_sensitive else re.IGNORECASE
        gap = r"\s*" if options.normalize_whitespace else ""
        self.layout = layout
        self.strict = options.strict_context
        self.pre = re.compile(text_pattern(pre, options), flags) if pre else None
        self.post = re.compile(text_pattern(post, options), flags) if post else None
        self.pre_adjacent = re.compile(f"(?:{self.pre.pattern}){gap}\\Z", flags) if self.pre else None
        self.post_adjacent = re.compile(f"{gap}(?:{self.post.pattern})", flags) if self.post else None

    def anchors_found(self, region: Span) -> bool:
        """Whether every given context string occurs in the region."""
        memory = self.layout.memory
        return all(pattern.search(memory, *region) for pattern in (self.pre, self.post) if pattern is not None)

    def accepts(self, span: Span) -> bool:
        start, end = span
        memory, layout = self.layout.memory, self.layout
        if self.pre is not None:
            if self.strict:
                if self.pre_adjacent is None or not self.pre_adjacent.search(memory, 0, start):
                    return False
            else:
                window = layout.line_start(layout.line_of(start) - LOOSE_CONTEXT_LINES)
                if not self.pre.search(memory, window, start):
                    return False
        if self.post is not None:
            if self.strict:
                if self.post_adjacent is None or not self.post_adjacent.match(memory, end):
                    return False
            else:
                window = layout.line_end(layout.line_of(end) + LOOSE_CONTEXT_LINES)
                if not self.post.search(memory, end, window):
                    return False
        return True


def replace_in_memory(
    memory: str,
    old_string: str,
    new_string: str,
    explanation: str,
    section_title: str | None = None,
    expected_replacements: int = 1,
    pre_context: str | None = None,
    post_context: str | None = None,
    options: dict[str, Any] | None = None,
) -> ToolResult:
    """Replace exactly `expected_replacements` occurrences of `old_string` (in `section_title`'s body, with
    the given context right before/after) by `new_string`; any mismatch raises MemoryToolError."""
    if not old_string.strip():
        raise MemoryToolError(f"{TOOL}: old_string must not be empty.")
    pre, post = pre_context or None, post_context or None
    resolved = replace(REPLACE_DEFAULTS, **(options or {}))
    reject_header_lines(new_string.split("\n"), TOOL, "new_string line")

    layout = _Layout.of(memory)
    if section_title is not None:
        section = find_section(memory, section_title)
        region = layout.region_of_body(section.start, section.end)
        scope = f"section {section.title!r}"
    else:
        region = (0, len(memory))
        scope = "the memory"

    flags = 0 if resolved.case_sensitive else re.IGNORECASE
    context = _ContextCheck(layout, pre, post, resolved)
    old_pattern = re.compile(text_pattern(old_string, resolved), flags)
    old_spans = [m.span() for m in old_pattern.finditer(memory, *region) if context.accepts(m.span())]

    new_spans: list[Span] = []
    if new_string.strip():
        new_pattern = re.compile(text_pattern(new_string, resolved), flags)
        new_spans = [m.span() for m in new_pattern.finditer(memory, *region)]
    # An occurrence of old_string inside an occurrence of new_string was already replaced
    # (e.g. "apple" -> "apple pie"); counting it again would break idempotence.
    pending = [span for span in old_spans if not inside_any(span, new_spans)]

    if not pending:
        if old_spans or any(context.accepts(span) for span in new_spans):
            return unchanged(memory, f"{TOOL}: already applied (new_string is in place in {scope}); nothing changed.")
        if not new_string.strip() and (pre or post) and context.anchors_found(region):
            # a deletion pinned by its context, done before: the context is there, the text is gone
            return unchanged(memory, f"{TOOL}: already applied (nothing{_context_note(pre, post)} is left "
                                     f"to delete in {scope}); nothing changed.")
        hint = " (if it was removed already, there is nothing left to do)" if not new_string.strip() else ""
        raise MemoryToolError(
            f"{TOOL}: old_string {old_string!r} not found in {scope}{_context_note(pre, post)}{hint}."
        )
    if len(pending) != expected_replacements:
        raise MemoryToolError(
            f"{TOOL}: old_string {old_string!r} occurs {len(pending)} times in {scope}"
            f"{_context_note(pre, post)} but expected_replacements is {expected_replacements}; "
            "set expected_replacements or add section_title/pre_context/post_context."
        )

    sections = parse_sections(memory)
    for span in pending:
        for other in sections:
            header_start = layout.line_start(other.start)
            if span[0] < header_start + len(other.header) and span[1] > header_start:
                raise MemoryToolError(
                    f"{TOOL}: old_string {old_string!r} overlaps the section header {other.header.strip()!r}; "
                    "headers cannot be edited (pass section_title to search only a section body)."
                )

    pieces, cursor = [], 0
    for start, end in pending:
        pieces.extend([memory[cursor:start], new_string])
        cursor = end
    pieces.append(memory[cursor:])
    new_memory = "".join(pieces)
    ensure_headers_unchanged(memory, new_memory, TOOL)

    touched: list[str] = []
    for start, _ in pending:
        line = layout.line_of(start)
        touched.extend(s.title for s in sections if s.start <= line < s.end)
    return make_result(
        new_memory,
        applied_hunks=len(pending),
        changed_lines=count_changed_lines(memory, new_memory),
        sections_touched=touched,
        warnings=[],
    )


def _context_note(pre: str | None, post: str | None) -> str:
    parts = [f"{name} {text!r}" for name, text in (("pre_context", pre), ("post_context", post)) if text]
    return f" with {' and '.join(parts)}" if parts else ""
