"""Every notebook follows the conventions: a parameters cell papermill can read in full,
validation right after it, a provenance banner, no committed outputs."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import papermill
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_conventions(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    cell = code[tagged[0]]
    assigned = {t.id for node in ast.parse(cell.source).body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    assert set(papermill.inspect_notebook(str(path))) == assigned, "papermill must see every parameter"
    assert "validate_params" in code[tagged[0] + 1].source, "validation right after the parameters"
    assert any("banner()" in c.source for c in code), "a provenance banner"
    assert any(c.source.startswith("%matplotlib inline") for c in code), \
        "figures built without pyplot render only with the inline backend enabled"
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "no outputs"
    assert any(c.source.startswith("# NBVAL_CHECK_OUTPUT") for c in code), "a checked key result"
    assert nb.metadata["kernelspec"]["name"] == "python3"


LOGIC_KEYWORDS = {"def", "class", "lambda", "for", "while"}


def _logic_tokens(source: str) -> list[str]:
    """Python keywords that mean logic (definitions, loops, comprehensions) in a code cell;
    IPython magics and comments are ignored."""
    import io
    import tokenize

    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return [t.string for t in tokens if t.type == tokenize.NAME and t.string in LOGIC_KEYWORDS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_hold_no_logic(path):
    """Narrative, parameters, calls into one study's API, tables and figures: logic lives in psit_lib."""
    nb = nbformat.read(path, as_version=4)
    offending = {i: _logic_tokens(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    offending = {i: found for i, found in offending.items() if found}
    assert not offending, f"code cells define functions or loop: {offending}"


def test_the_logic_check_finds_definitions_loops_and_comprehensions():
    assert _logic_tokens("def f():\n    pass") == ["def"]
    assert _logic_tokens("x = [a for a in b]") == ["for"]
    assert _logic_tokens("%matplotlib inline\nx = 1  # for the figure") == []
