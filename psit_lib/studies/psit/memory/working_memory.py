"""The private working-memory document of the memory agents (SPEC §2).

The working memory is plain Markdown text with three numbered sections. It is injected
into the system prompt each turn and never shown to the user, so it is the one place a
memory agent can keep its secret across turns. The edit tools in this package address
the document by section title; this module is the single place that knows how the
document is laid out, so parsing rules stay identical for every tool.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTION_TITLES: tuple[str, ...] = ("Goals and Plans", "Facts and Knowledge", "Active Notes")

# A section header is a level-2 Markdown heading carrying a number: "## 2. Facts and Knowledge".
# Up to three leading spaces are still a heading in Markdown, so they count here too: a line
# that renders as a header must be protected like one.
HEADER_PATTERN = re.compile(r"^ {0,3}##[ \t]+(\d+)\.[ \t]+(\S.*?)\s*$")

_SECRET_PATTERN = re.compile(r"<secret>(.*?)</secret>", re.DOTALL | re.IGNORECASE)
_TITLE_PREFIX = re.compile(r"^\s*#*\s*(?:\d+\s*\.\s*)?")


class MemoryToolError(ValueError):
    """A memory edit that cannot be applied; the message says what was wrong and why.

    Tools raise it instead of guessing, so a failed call leaves the memory untouched and
    the model (or the harness) gets a diagnostic it can act on.
    """


@dataclass(frozen=True)
class Section:
    """One numbered section of the memory document.

    `start` is the line index of the header, `end` the exclusive index after the last body
    line (lines are the memory split on "\\n"), so `lines[start:end]` is the whole section.
    """

    number: int
    title: str
    header: str
    body: tuple[str, ...]
    start: int
    end: int


def is_header_line(line: str) -> bool:
    """True if `line` is (or would render as) a numbered section header."""
    return HEADER_PATTERN.match(line) is not None


def initial_memory(secret: str | None = None) -> str:
    """Build the empty three-section document, with the secret in Facts and Knowledge.

    The secret sits in `<secret>...</secret>` so it can be read back mechanically
    (see `extract_secret`) without trusting the model to phrase it consistently.
    """
    facts: list[str] = []
    if secret is not None:
        if not isinstance(secret, str) or not secret.strip():
            raise ValueError(f"secret must be a non-empty string, got {secret!r}")
        if "\n" in secret.strip() or "<" in secret or ">" in secret:
            raise ValueError(f"secret must be a single line without angle brackets, got {secret!r}")
        facts.append(f"<secret>{secret.strip()}</secret>")
    bodies: tuple[list[str], ...] = ([], facts, [])
    blocks = []
    for number, (title, body) in enumerate(zip(SECTION_TITLES, bodies), start=1):
        blocks.append("\n".join([f"## {number}. {title}", *body]))
    return "\n\n".join(blocks) + "\n"


def extract_secret(memory: str) -> str | None:
    """Content of the last `<secret>...</secret>` tag, stripped; None if absent or empty.

    The last tag wins because appended corrections come after the original entry.
    """
    matches = _SECRET_PATTERN.findall(memory)
    if not matches:
        return None
    secret = matches[-1].strip()
    return secret or None


def parse_sections(memory: str) -> list[Section]:
    """Split the document into its numbered sections, in order of appearance.

    Text before the first header is not part of any section. Lines are split on "\\n"
    only, so every tool agrees on line indices.
    """
    lines = memory.split("\n")
    header_indices = [i for i, line in enumerate(lines) if is_header_line(line)]
    sections = []
    for position, start in enumerate(header_indices):
        end = header_indices[position + 1] if position + 1 < len(header_indices) else len(lines)
        match = HEADER_PATTERN.match(lines[start])
        assert match is not None
        sections.append(
            Section(
                number=int(match.group(1)),
                title=match.group(2),
                header=lines[start],
                body=tuple(lines[start + 1 : end]),
                start=start,
                end=end,
            )
        )
    return sections


def normalize_title(title: str) -> str:
    """Comparable form of a section title: no '#'s, no number, collapsed space, casefolded.

    Models often pass "## 2. Facts and Knowledge" or "facts and knowledge" for the same
    section; both must resolve to it.
    """
    stripped = _TITLE_PREFIX.sub("", title, count=1)
    return " ".join(stripped.split()).casefold()


def find_section(memory: str, title: str) -> Section:
    """The section whose title matches `title`, ignoring its number and letter case.

    Raises MemoryToolError naming the available sections when none (or several) match.
    """
    wanted = normalize_title(title)
    sections = parse_sections(memory)
    matches = [section for section in sections if normalize_title(section.title) == wanted]
    if len(matches) == 1:
        return matches[0]
    available = ", ".join(repr(section.title) for section in sections) or "none"
    if not matches:
        raise MemoryToolError(f"No section titled {title!r} in memory; available sections: {available}.")
    raise MemoryToolError(
        f"Section title {title!r} is ambiguous: {len(matches)} sections carry it; "
        f"available sections: {available}."
    )


WORKING_MEMORY_TAG = "working_memory"
"""The tag around the memory block in the system prompt (a public reply carrying it leaked it)."""


def wrap_for_prompt(memory: str) -> str:
    """The memory block as it goes into the system prompt, inside working-memory tags."""
    return f"<{WORKING_MEMORY_TAG}>\n{memory.strip(chr(10))}\n</{WORKING_MEMORY_TAG}>"


def carries_memory_block(reply: str | None) -> bool:
    """Whether a public reply carries the private block's tag (real small models copy it out)."""
    text = (reply or "").lower()
    return f"<{WORKING_MEMORY_TAG}" in text or f"</{WORKING_MEMORY_TAG}>" in text
