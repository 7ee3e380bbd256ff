"""The psit command line: parameter checking, headless execution, the report."""

from __future__ import annotations

import json

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from psit_lib.cli import main


def _tiny_notebook(folder):
    nb = new_notebook(cells=[
        new_markdown_cell("# 98 · Tiny"),
        new_code_cell("x = 1\nname = 'a'", metadata={"tags": ["parameters"]}),
        new_code_cell("print(f'x={x} name={name}')"),
    ])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "98_tiny.ipynb")


def test_unknown_parameter_is_rejected_before_running(tmp_path, monkeypatch, capsys):
    _tiny_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    assert main(["run", "98", "-p", "n_epsiodes=5"]) == 2
    assert "98_tiny has no parameter(s) n_epsiodes" in capsys.readouterr().err
    assert main(["run", "97"]) == 2
    assert "no single notebook matches '97'" in capsys.readouterr().err


def test_run_executes_with_parameters_and_report_renders(tmp_path, monkeypatch):
    _tiny_notebook(tmp_path / "nbs")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    params = tmp_path / "p.yaml"
    params.write_text("98_tiny:\n  name: from-file\n")
    assert main(["run", "98", "-f", str(params), "-p", "x=7", "--run-id", "r1", "--no-progress"]) == 0
    executed = json.loads((tmp_path / "results" / "r1" / "notebooks" / "98_tiny.ipynb").read_text())
    outputs = "".join("".join(o.get("text", "")) for c in executed["cells"] for o in c.get("outputs", []))
    assert "x=7 name=from-file" in outputs
    assert main(["report", "--run-id", "r1"]) == 0
    index = (tmp_path / "results" / "r1" / "report" / "index.html").read_text()
    assert "98_tiny.html" in index and "98 · Tiny" in index
