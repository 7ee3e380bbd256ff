"""Text for a terminal: as wide as the terminal, at most :data:`MAX_WIDTH` columns, plain (the
markdown a headline carries for the report is left out), and help text that wraps between words."""

from __future__ import annotations

import argparse
import re
import shutil
import textwrap

MAX_WIDTH = 100
"""Wider lines are harder to read; a wider terminal still gets lines of at most this width."""

_EMPHASIS = re.compile(r"(\*{1,2})(?=\S)(.+?)(?<=\S)\1")
_CODE = re.compile(r"`([^`]*)`")
_TWO_COLUMNS = re.compile(r"^(\s*\S.*?\s{2,})(\S.*)$")


def width(cap: int = MAX_WIDTH) -> int:
    """The terminal's width (``COLUMNS`` when set, 100 when there is no terminal), at most ``cap``."""
    return max(40, min(shutil.get_terminal_size((cap, 24)).columns, cap))


def plain(text: str) -> str:
    """``text`` without markdown emphasis or code marks (``*view:*`` reads "view:"); underscores,
    which agent names carry, are kept."""
    return _CODE.sub(r"\1", _EMPHASIS.sub(r"\2", text))


def reflow(line: str, columns: int) -> list[str]:
    """One line of help text in ``columns``: as it is when it fits; else wrapped between words,
    the second column of a two-column line (``command   what it does``) kept under itself."""
    if len(line) <= columns:
        return [line]
    two = _TWO_COLUMNS.match(line)
    if two and len(two.group(1)) < columns * 0.6:
        head, rest = two.groups()
        return textwrap.wrap(rest, columns, initial_indent=head, subsequent_indent=" " * len(head),
                             break_long_words=False, break_on_hyphens=False)
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(line.strip(), columns, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's layout, with a description or epilog written line by line (the examples) kept
    line by line but reflowed to the terminal (:func:`reflow`) instead of wrapping mid-word."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(out for line in text.splitlines() for out in reflow(indent + line, width))
