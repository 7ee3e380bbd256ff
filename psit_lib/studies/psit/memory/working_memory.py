"""The private working-memory document of the memory agents (SPEC §2): three numbered Markdown
sections. The single place that knows the layout, so every edit tool parses it alike.
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
    """A memory edit that cannot be applied: tools raise it instead of guessing, so the memory
    stays untouched and the model gets a diagnostic it can act on."""


@dataclass(frozen=True)
class Section:
    """One numbered section: `lines[start:end]` (the memory split on "\\n") is the whole section."""

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
    """The empty three-section document, the secret in `<secret>` tags in Facts and Knowledge so
    it is read back mechanically, never from the model's phrasing."""
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
    """Content of the last `<secret>` tag (appended corrections come last); None if absent or empty."""
    matches = _SECRET_PATTERN.findall(memory)
    if not matches:
        return None
    secret = matches[-1].strip()
    return secret or None


def parse_sections(memory: str) -> list[Section]:
    """The numbered sections in order (text before the first header is in none); lines split on
    "\\n" only, so every tool agrees on line indices."""
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
    """Comparable form of a title (no '#'s or number, collapsed space, casefolded): models pass
    "## 2. Facts and Knowledge" or "facts and knowledge" for the same section."""
    stripped = _TITLE_PREFIX.sub("", title, count=1)
    return " ".join(stripped.split()).casefold()


def find_section(memory: str, title: str) -> Section:
    """The section whose title matches `title`; MemoryToolError naming the sections otherwise."""
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
