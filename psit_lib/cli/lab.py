"""``psit lab``: JupyterLab on working copies of the notebooks, never on the tracked ones.

Lab autosaves outputs into the file it opened, which would dirty the repository; so the notebooks are
copied under :func:`psit_lib.runs.paths.adhoc_root` and refreshed unless the copy was edited (``--refresh``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from psit_lib.cli.notebooks import available, notebooks_dir
from psit_lib.runs.paths import adhoc_root, digest

SOURCES = ".psit-lab.json"
"""In the working folder: per notebook, the hash of the repository file it was copied from and
of the copy's cell sources at that moment (to tell an edited copy from an untouched one)."""


def lab_dir() -> Path:
    """Where the working copies live."""
    return adhoc_root() / "lab"


def sources_hash(path: Path) -> str:
    """A hash of a notebook's cell sources only (outputs and metadata change when it runs)."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    text = json.dumps([(c.get("cell_type"), "".join(c.get("source") or "")) for c in cells])
    return digest(text.encode(), 64)


@dataclass(frozen=True)
class Sync:
    copied: tuple[str, ...]
    refreshed: tuple[str, ...]
    kept_edited: tuple[str, ...]  # the repository's notebook changed, the copy was edited: left alone


def sync_copies(target: Path, *, refresh: bool = False) -> Sync:
    """Copy the repository's notebooks (and ``params/``) into ``target`` as described above."""
    target.mkdir(parents=True, exist_ok=True)
    state_path = target / SOURCES
    state = json.loads(state_path.read_text(encoding="utf-8")) if state_path.exists() else {}
    copied: list[str] = []
    refreshed: list[str] = []
    kept: list[str] = []
    for nb in available():
        copy, seen = target / nb.name, state.get(nb.name) or {}
        repo_hash = digest(nb.read_bytes(), 64)
        if copy.exists() and not refresh:
            if seen.get("repo") == repo_hash:
                continue
            if seen.get("sources") != sources_hash(copy):
                kept.append(nb.name)
                continue
            refreshed.append(nb.name)
        else:
            (refreshed if copy.exists() else copied).append(nb.name)
        shutil.copyfile(nb, copy)
        state[nb.name] = {"repo": repo_hash, "sources": sources_hash(copy)}
    params = notebooks_dir() / "params"
    if params.is_dir():
        shutil.copytree(params, target / "params", dirs_exist_ok=True)
    state_path.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    return Sync(tuple(copied), tuple(refreshed), tuple(kept))


def lab_command(target: Path, extra: list[str], *, root: bool = False) -> list[str]:
    """JupyterLab from this environment, rooted at the working copies; as the root user (a
    container's), with ``--allow-root``, without which Jupyter refuses to start."""
    allow = ["--allow-root"] if root and "--allow-root" not in extra else []
    return [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={target}", *allow, *extra]


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def cmd_lab(args: argparse.Namespace) -> int:
    target = lab_dir()
    sync = sync_copies(target, refresh=args.refresh)
    print(f"working copies of the notebooks: {target} (outputs saved there, never in the repository)")
    if sync.copied or sync.refreshed:
        print(f"  copied {len(sync.copied)}, refreshed {len(sync.refreshed)} from the repository")
    for name in sync.kept_edited:
        print(f"  {name}: the repository's version changed and your copy is edited; kept "
              "(psit lab --refresh replaces every copy)")
    extra = args.lab_args
    root = running_as_root()
    if root:
        print("psit: running as root (a container?): JupyterLab is started with --allow-root")
    return subprocess.call(lab_command(target, extra[1:] if extra[:1] == ["--"] else extra, root=root))
