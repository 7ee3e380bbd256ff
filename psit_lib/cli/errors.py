"""The command line's one error type: a sentence for the user, no traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CliError(RuntimeError):
    """A user-facing error: printed as one line, exit status 2."""


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to a misspelt one; empty when none is close."""
    close = difflib.get_close_matches(str(name), sorted(set(known)), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
