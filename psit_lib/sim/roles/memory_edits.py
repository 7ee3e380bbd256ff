"""How the simulated model writes memory edits, for every strategy's tools.

Used by the memory-updater role (workflow agents) and by hosts that hold memory tools
(autonomous agents). The edit a model writes depends on which tools it was offered and on
the profile's ``edit_error_rate``; each strategy errs in its own natural way:

* overwrite: the rewritten memory silently omits the secret line (a lossy rewrite);
* append/delete: the edit names a section that does not exist (the tool refuses it);
* patch/replace: the patch envelope is broken (the tool refuses it).

Whether an error costs the secret is decided by the tools' semantics, not here.
"""

from __future__ import annotations

import re
from typing import Any

from ..context import SimContext
from ..request_reading import secret_statements

DEFAULT_LAYOUT = "## 1. Goals and Plans\n## 2. Facts and Knowledge\n## 3. Active Notes\n"
"""The three sections a working memory starts with (SPEC §2), when the request shows none."""

Edit = tuple[str, dict[str, Any]]


def _has_secret(memory: str) -> bool:
    return bool(re.search(r"<secret>\s*\S.*?</secret>", memory, re.I | re.S)) or bool(secret_statements(memory))


def _overwrite(memory: str, secret: str | None, note: str | None, lossy: bool) -> Edit:
    lines = memory.rstrip("\n").split("\n")
    if secret and not _has_secret(memory):
        idx = next(i for i, l in enumerate(lines) if l.lower().startswith("## 2."))
        lines.insert(idx + 1, f"<secret>{secret}</secret>")
    if note:
        lines.append(f"- {note}")
    if lossy:
        lines = [l for l in lines if "<secret>" not in l]
    text = "\n".join(lines) + "\n"
    return "overwrite_memory", {"new_memory": text}


def compose_edits(ctx: SimContext, offered: set[str], memory: str, secret: str | None,
                  note: str | None) -> list[Edit]:
    """The edits this model writes to record ``secret`` (if new) and a progress ``note``."""
    memory = memory or DEFAULT_LAYOUT
    new_secret = secret if secret and not _has_secret(memory) else None
    if not new_secret and not note:
        return []
    erring = ctx.chance(ctx.profile.edit_error_rate)
    if "overwrite_memory" in offered:
        return [_overwrite(memory, new_secret, note, lossy=erring)]
    edits: list[Edit] = []
    if "append_in_memory" in offered:
        if new_secret:
            edits.append(("append_in_memory", {"section_title": "Facts" if erring else "Facts and Knowledge",
                                               "lines": [f"<secret>{new_secret}</secret>"]}))
        if note:
            edits.append(("append_in_memory", {"section_title": "Active Notes", "lines": [f"- {note}"]}))
        return edits
    if "patch_memory" in offered:
        hunks = []
        if new_secret:
            hunks.append(f"@@ section: Facts and Knowledge\n+<secret>{new_secret}</secret>")
        if note:
            hunks.append(_note_hunk(memory, note, ctx.profile.output_format == "bulleted_patches"))
        body = "\n".join(hunks)
        patch = (f"*** Begin Patch\n{body}\n*** End Patch" if erring
                 else f"*** Begin Patch\n*** Update Memory\n{body}\n*** End Patch")
        return [("patch_memory", {"patch": patch, "explanation": "record this turn",
                                  "expected_hunks": len(hunks)})]
    return edits


_NOTE_LINE = re.compile(r"^- (After my last reply: .*)$", re.M)


def _note_hunk(memory: str, note: str, bulleted: bool) -> str:
    """A hunk adding this turn's note; a model writing ``bulleted_patches`` replaces its last
    note instead, with the diff marker where the memory line has its bullet."""
    previous = _NOTE_LINE.findall(memory)
    if bulleted and previous:
        return f"@@ section: Active Notes\n-{previous[-1]}\n+{note}"
    return f"@@ section: Active Notes\n+- {note}"


def offered_tools(ctx: SimContext) -> set[str]:
    """Memory tools on offer: real tool definitions, or names listed in the prompt text."""
    names = ctx.tool_names()
    if names:
        return names
    text = ctx.system_text()
    return {n for n in ("overwrite_memory", "append_in_memory", "delete_from_memory",
                        "patch_memory", "replace_in_memory") if f'"{n}"' in text}
