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
# (psit_lib.analysis.result_sentences). Markdown may describe the protocol and its parameters, so a
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


# -- notebooks import only the study facades ------------------------------------------------------
# A notebook is a composition of one study's public functions: it imports from the study's package
# (its facade, which also re-exports what it needs from psit_lib.runs), from psit_lib.analysis, and
# from IPython, pandas and matplotlib. Deep module paths would make every module a public API.
STUDY_FACADES = ("psit_lib.studies.psit", "psit_lib.studies.acc", "psit_lib.studies.basis", "psit_lib.studies.example")
NOTEBOOK_IMPORTABLE = frozenset({*STUDY_FACADES, "psit_lib.analysis", "psit_lib.report"})  # report: the explorer
NOTEBOOK_LIBRARIES = ("IPython", "pandas", "matplotlib")


def _cell_ast(source: str) -> ast.Module:
    """A code cell's syntax tree, IPython magics and shell escapes dropped, top-level await allowed."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    return compile(code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def _allowed_module(module: str) -> bool:
    return module in NOTEBOOK_IMPORTABLE or any(module == lib or module.startswith(lib + ".")
                                                for lib in NOTEBOOK_LIBRARIES)


def disallowed_imports(source: str) -> list[str]:
    """Modules a code cell imports from that are neither a study facade, psit_lib.analysis, nor
    IPython, pandas or matplotlib (relative imports count as disallowed)."""
    found = []
    for node in ast.walk(_cell_ast(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if not _allowed_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if node.level or not _allowed_module(module):
                found.append(module)
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_only_study_facades(path):
    nb = nbformat.read(path, as_version=4)
    offending = {i: disallowed_imports(c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    offending = {i: found for i, found in offending.items() if found}
    assert not offending, (f"import from a study's package ({', '.join(STUDY_FACADES)}), psit_lib.analysis, "
                           f"IPython, pandas or matplotlib only; export what is missing from the facade: {offending}")


def test_the_import_check_finds_deep_and_foreign_imports():
    bad = ("%matplotlib inline\nfrom psit_lib.runs import Experiment\nfrom psit_lib.studies.psit.protocol import "
           "experiment as fx\nimport numpy as np\nfrom .local import x\nimport psit_lib.studies.acc.metrics\n"
           "from psit_lib.analysis.sweeps import sweep_reading")
    assert disallowed_imports(bad) == ["psit_lib.runs", "psit_lib.studies.psit.protocol", "numpy", ".local",
                                       "psit_lib.studies.acc.metrics", "psit_lib.analysis.sweeps"]
    good = ("%matplotlib inline\nimport pandas as pd\nimport matplotlib.pyplot as plt\n"
            "from IPython.display import Markdown, display\nfrom psit_lib.analysis import label_table\n"
            "from psit_lib.studies.psit import Experiment, fork_tests as fx\nfrom psit_lib.studies.basis import results\n"
            "records = await exp.run(specs, fn)")
    assert disallowed_imports(good) == []


# -- no simulator names outside the parameters cell -----------------------------------------------
# Which simulator roles and knobs act on a notebook is the study's declaration
# (psit_lib/studies/*/assumptions.py, shown with simulator_assumptions(exp)); a notebook that spells
# them goes stale when the simulator changes. No code cell names a knob, not even the parameters cell:
# a notebook picks one of its study's named sweeps.

def simulator_names() -> frozenset[str]:
    """Every knob of the simulator's profiles and every role it registers."""
    from psit_lib.sim import known_roles
    from psit_lib.sim.profiles import SimProfile

    knobs = {name for name in SimProfile.model_fields if name not in ("name", "description")}
    return frozenset(knobs | set(known_roles()))


def simulator_names_in(source: str, names: frozenset[str]) -> list[str]:
    """The simulator knob and role names written in a code cell's string literals (as whole
    words; comments and magics are ignored)."""
    import io
    import tokenize

    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    found = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.STRING:
            found += [word for word in _re.findall(r"[A-Za-z0-9_]+", token.string) if word in names]
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_simulator_names_outside_the_parameters_cell(path):
    names = simulator_names()
    nb = nbformat.read(path, as_version=4)
    offending = {i: simulator_names_in(c.source, names) for i, c in enumerate(nb.cells)
                 if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])}
    offending = {i: found for i, found in offending.items() if found}
    assert not offending, ("simulator knobs or roles named in code cells; declare them in the study "
                           f"(psit_lib/studies/*/assumptions.py) and call simulator_assumptions(exp): {offending}")


def test_the_simulator_name_check_finds_knobs_and_roles():
    names = simulator_names()
    assert {"unheld_secret", "reasoning", "hangman_host", "acc_judge"} <= names
    bad = ('label_table(exp.simulator_assumptions(["hangman_host", "memory_updater"], ["unheld_secret", '
           '"reasoning_tokens"]), f"Simulator assumptions · {exp.label}")\nexp.sweep_models("prior_exponent", [1.0])')
    assert simulator_names_in(bad, names) == ["hangman_host", "memory_updater", "unheld_secret", "reasoning_tokens",
                                              "prior_exponent"]
    good = ('%matplotlib inline\nsweep_records = await STUDY.run_sweeps(exp, P)  # e.g. unheld_secret\n'
            'label_table(simulator_assumptions(exp), f"Simulator assumptions acting on this notebook · {exp.label}")')
    assert simulator_names_in(good, names) == []


def simulator_knobs() -> frozenset[str]:
    """The knobs of the simulator's profiles, as the simulator lists them."""
    from psit_lib.sim.profiles import get_profile

    return frozenset(str(k["knob"]) for k in get_profile("default").knobs())


def knob_names_in(source: str, knobs: frozenset[str]) -> list[str]:
    """The simulator knob names a code cell writes anywhere (string literals, names, attributes,
    comments), as whole words; IPython magics are ignored."""
    import io
    import tokenize

    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    found = []
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type in (tokenize.STRING, tokenize.NAME, tokenize.COMMENT):
            found += [word for word in _re.findall(r"[A-Za-z0-9_]+", token.string) if word in knobs]
    return found


# Notebooks whose parameters still spell their sweeps' knobs (their studies' named sweeps land
# separately); every other notebook, 01-04 included, must name none in any code cell.


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_names_a_simulator_knob(path):
    """Not even the parameters cell: a notebook picks one of its study's named sweeps (a name that
    is not a knob, e.g. psit_lib/studies/psit/protocol/sweeps.py), and the study holds the knobs."""
    knobs = simulator_knobs()
    nb = nbformat.read(path, as_version=4)
    offending = {i: knob_names_in(c.source, knobs) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    offending = {i: found for i, found in offending.items() if found}
    assert not offending, f"simulator knobs named in code cells; move them into the study's sweeps: {offending}"


def test_the_knob_check_reads_strings_names_and_comments():
    knobs = simulator_knobs()
    assert {"unheld_secret", "prior_exponent", "tool_use_reliability", "attention_tokens"} <= knobs
    source = ('sweep_knob = "unheld_secret"  # or prior_exponent\nsweeps = {"attention_tokens": [500]}\n'
              'x = P.tool_use_reliability\n%config prior_exponent')
    assert knob_names_in(source, knobs) == ["unheld_secret", "prior_exponent", "attention_tokens",
                                            "tool_use_reliability"]
    assert knob_names_in('sweep = "host_without_a_secret"  # the study\'s named sweep\nP.swept.knob', knobs) == []


def test_the_psit_sweep_names_are_no_simulator_names_and_sweep_real_knobs():
    from psit_lib.runs.params import check_sweep_values
    from psit_lib.studies.psit.protocol.sweeps import SWEEPS

    names = simulator_names()
    for name, sweep in SWEEPS.items():
        assert name == sweep.name and name not in names, name
        check_sweep_values(sweep.knob, sweep.values)  # raises on a knob or value the simulator lacks


def test_declared_simulator_assumptions_name_real_knobs_and_roles():
    """Each study's per-notebook declaration names knobs and roles the simulator has, for notebooks that exist."""
    from psit_lib.sim import known_roles
    from psit_lib.sim.profiles import SimProfile
    from psit_lib.studies.acc.assumptions import SIMULATOR_ASSUMPTIONS as ACC
    from psit_lib.studies.basis.assumptions import SIMULATOR_ASSUMPTIONS as BASIS
    from psit_lib.studies.psit.assumptions import SIMULATOR_ASSUMPTIONS as PSIT

    stems = {p.stem for p in NOTEBOOKS}
    for notebook, (roles, knobs) in {**PSIT, **ACC, **BASIS}.items():
        assert notebook in stems, notebook
        assert set(roles) <= set(known_roles()), (notebook, set(roles) - set(known_roles()))
        assert set(knobs) <= set(SimProfile.model_fields), (notebook, set(knobs) - set(SimProfile.model_fields))


# -- every name a facade exports resolves ---------------------------------------------------------

def unresolved_exports(module) -> list[str]:
    """Names in ``module.__all__`` that cannot be loaded (lazy facades load them on first use)."""
    missing = []
    for name in getattr(module, "__all__", []):
        try:
            getattr(module, name)
        except (AttributeError, ImportError):
            missing.append(name)
    return missing


def type_checking_names(source: str) -> dict[str, str]:
    """name -> module of the imports under ``if TYPE_CHECKING:`` in a facade's source (for a
    module imported as a name, the module's own path)."""
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        names[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return names


@pytest.mark.parametrize("facade", [*STUDY_FACADES, "psit_lib.analysis"])
def test_facade_exports_resolve(facade):
    import importlib

    module = importlib.import_module(facade)
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice in __all__"
    assert not unresolved_exports(module), f"{facade}.__all__ names that do not load: {unresolved_exports(module)}"
    if facade in STUDY_FACADES:
        # the lazy map, __all__ and the imports mypy reads must agree
        assert set(module.__all__) == {*module._NAMES, *module._MODULES}
        declared = type_checking_names(Path(module.__file__).read_text())
        expected = {**{name: f"{where}.{name}" for name, where in module._NAMES.items()},
                    **{name: where for name, where in module._MODULES.items()}}
        assert declared == expected, {n: (declared.get(n), expected.get(n)) for n in {*declared, *expected}
                                      if declared.get(n) != expected.get(n)}


def test_the_export_checks_find_unloadable_and_mismatched_names():
    import types

    fake = types.ModuleType("fake_facade")
    fake.__all__ = ["present", "missing"]
    fake.present = 1
    assert unresolved_exports(fake) == ["missing"]
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.b import c, d as e\n"
              "    from a import f as g\nfrom x import y\n")
    assert type_checking_names(source) == {"c": "a.b.c", "e": "a.b.d", "g": "a.f"}


@pytest.mark.slow
def test_importing_a_task_module_does_not_load_the_study():
    """The facades load lazily: a light module (the command line's path to the Hangman rules, the
    ACC scenarios) does not pull in the agents (langgraph), the runner or the notebook helpers."""
    import subprocess
    import sys

    probe = ("import sys, psit_lib.studies.psit.tasks.hangman, psit_lib.studies.acc.scenarios\n"
             "heavy = ['langgraph', 'psit_lib.studies.psit.protocol.experiment', 'psit_lib.studies.psit.agents',\n"
             "         'psit_lib.studies.acc.experiment', 'psit_lib.runs.experiment', 'matplotlib']\n"
             "print(sorted(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
