"""Lab without harm: running a notebook the way JupyterLab does leaves the repository clean.

``psit lab`` opens Lab on working copies (``<adhoc root>/lab/``). The test serves them with the
same command ``psit lab`` runs, reads a notebook through the server's contents API, changes its
parameters as a reader would, runs every cell on a kernel (nbclient) and saves the result back
through the contents API, as Lab's autosave does. The saved copy holds the outputs, the
repository's ``git status`` does not move, the notebook ends with the run's summary as a table
and no output carries the "Loading weights" progress bar of the embedding model.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from psit_lib.cli.lab import lab_command, lab_dir, sources_hash, sync_copies
from psit_lib.runs.paths import repo_root

NOTEBOOK = "02_hangman_fork_tests.ipynb"
SMALL = ('agents = ["vanilla", "mem0"]\nmodels = []\nn_episodes = 1\nt_fork = 3\nn_candidates = 2\n'
         'temperature = 0.3\nmax_tokens = 2048\nseed = 0\nsweep_episodes = 0\n')


def _git_status() -> set[str]:
    """``git status --porcelain``'s lines about the notebooks, and every untracked file (the
    rest of a developer's checkout may change under a running test)."""
    out = subprocess.run(["git", "-C", str(repo_root()), "status", "--porcelain", "--untracked-files=all"],
                         capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines() if line.startswith("??") or " notebooks/" in line}


def test_copies_refresh_only_untouched_notebooks(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path / "adhoc"))
    repo_nb = tmp_path / "repo"
    repo_nb.mkdir()
    (repo_nb / "01_a.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x = 1"}]}))
    (repo_nb / "02_b.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "y = 1"}]}))
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(repo_nb))
    target = lab_dir()
    first = sync_copies(target)
    assert first.copied == ("01_a.ipynb", "02_b.ipynb") and target.parent == tmp_path / "adhoc"
    # the reader runs 01 (outputs only) and edits 02's code; then the repository changes both
    ran = json.loads((target / "01_a.ipynb").read_text())
    ran["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    (target / "01_a.ipynb").write_text(json.dumps(ran))
    (target / "02_b.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "mine"}]}))
    assert sync_copies(target) == type(first)((), (), ())  # nothing changed upstream: nothing touched
    (repo_nb / "01_a.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "x = 2"}]}))
    (repo_nb / "02_b.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "source": "y = 2"}]}))
    second = sync_copies(target)
    assert second.refreshed == ("01_a.ipynb",) and second.kept_edited == ("02_b.ipynb",)
    assert "x = 2" in (target / "01_a.ipynb").read_text() and "mine" in (target / "02_b.ipynb").read_text()
    assert sync_copies(target, refresh=True).refreshed == ("01_a.ipynb", "02_b.ipynb")
    assert sources_hash(target / "02_b.ipynb") == sources_hash(repo_nb / "02_b.ipynb")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _api(base: str, path: str, token: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(f"{base}{path}", method="PUT" if body is not None else "GET",
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
def test_running_a_notebook_in_lab_leaves_the_repository_clean(tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path / "adhoc"))
    before = _git_status()
    target = lab_dir()
    sync_copies(target)
    port, token = _free_port(), "psit-test"
    server = subprocess.Popen(lab_command(target, [f"--ServerApp.port={port}", "--ServerApp.open_browser=False",
                                                   f"--IdentityProvider.token={token}", "--ServerApp.ip=127.0.0.1", "--allow-root"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/contents/"
    try:
        for _ in range(120):
            try:
                opened = _api(base, NOTEBOOK, token)
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start")
        nb = nbformat.from_dict(opened["content"])
        params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        params.source = SMALL
        NotebookClient(nb, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(target)}}).execute()
        _api(base, NOTEBOOK, token, {"type": "notebook", "format": "json", "content": nb})  # Lab's save
    finally:
        server.terminate()
        server.wait(timeout=30)
    saved = nbformat.read(target / NOTEBOOK, as_version=4)
    assert any(c.get("outputs") for c in saved.cells), "the working copy holds the outputs"
    assert _git_status() == before, "running a notebook in Lab changed the repository"
    tracked = nbformat.read(Path(repo_root()) / "notebooks" / NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in tracked.cells if c.cell_type == "code")
    texts = [json.dumps(o) for c in saved.cells for o in c.get("outputs", [])]
    assert not any("Loading weights" in t for t in texts), "a progress bar of the embedding model is left"
    last = saved.cells[-1].outputs[-1]
    assert "psit-run-summary" in last["data"]["text/html"], "the notebook ends with the run's summary as a table"
