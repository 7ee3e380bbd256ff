"""Every notebook follows the conventions: a parameters cell papermill can read in full,
validation right after it, a provenance banner, no committed outputs."""

from __future__ import annotations

import ast
import re as _re
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


# -- no hand-written results ----------------------------------------------------------------------
# A reading written by hand goes stale when a parameter, the profile or the endpoint changes, and
# then contradicts the table above it; readings are generated from the tables instead
# (psit_lib.analysis.readings). Markdown may describe the protocol and its parameters, so a
# number next to a parameter's name (alpha 0.05, temperature 0.3, k=5) is allowed.
_NOT_PROSE = _re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|\]\([^)]*\)|<[^>]+>", _re.S)
_NUMERIC_RESULT = _re.compile(
    r"\d+(?:\.\d+)?\s*%(?!\s*(?:Wilson\s+|Newcombe\s+|bootstrap\s+)?(?:interval|band|confidence|CI))"  # a percentage, not a level
    r"|(?<![\w.§])\d*\.\d+(?![\w.])"           # a decimal
    r"|\b\d+\s+(?:of|out of)\s+\d+\b"          # "7 of 8"
    r"|\b\d+(?:\.\d+)?\s*(?:x|×|times)\s+(?:more|less|higher|lower|fewer)", _re.I)
_PARAMETER_CONTEXT = _re.compile(
    r"(?:\b(?:alpha|temperature|threshold|weight|probability|mix|level|version|SPEC)|(?<![A-Za-z])[pkTn]|[=≈~])"
    r"\s*(?:of\s*)?[:=]?\s*$")


def numeric_claims(markdown: str) -> list[str]:
    """Numbers in prose that read like results (percentages, decimals, "n of m", "x times
    more"), ignoring code, maths, links and numbers that follow a parameter's name."""
    prose = _NOT_PROSE.sub(" ", markdown)
    found = []
    for match in _NUMERIC_RESULT.finditer(prose):
        before = prose[max(0, match.start() - 14):match.start()]
        if _PARAMETER_CONTEXT.search(before):
            continue
        found.append(prose[max(0, match.start() - 30):match.end() + 10].replace("\n", " "))
    return found


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name[:2] in {"02", "03", "04", "05", "06", "07"}],
                         ids=lambda p: p.stem)
def test_markdown_states_no_numeric_result(path):
    notebook = nbformat.read(path, as_version=4)
    claims = [(i, claim) for i, cell in enumerate(notebook.cells) if cell.cell_type == "markdown"
              for claim in numeric_claims(cell.source)]
    assert not claims, f"hand-written numbers in markdown (generate them from the tables): {claims}"


def test_the_numeric_claim_check_finds_results_and_spares_parameters():
    assert numeric_claims("ACC drifts 0.005 against 0.187 for replay.")
    assert numeric_claims("BASIS raised reliability from 32% to 72%.")
    assert numeric_claims("The memory agent was self-consistent in 7 of 8 episodes.")
    assert numeric_claims("Private CoT carries 10x more context.")
    assert not numeric_claims("One-sided Fisher at alpha 0.05, temperature 0.3, `p = 0.01`, $P = 1/n$.")
    assert not numeric_claims("The study ran 50 episodes per cell on 49 conditions (SPEC §7, Table 1).")
    assert not numeric_claims("Rates with Wilson 95% intervals and 95% bands.")
