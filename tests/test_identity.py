"""A run folder's identity: a resume with other prompts, model settings or another model behind
the served name stops with one sentence (exit 2 from ``psit run``), never silently."""

from __future__ import annotations

import json

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_notebook

from loopback import HandlerServer, QuietHandler, send_json
from psit_lib.cli import main
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs import Experiment, RunFolder
from psit_lib.runs.identity import (NONE, IdentityMismatchError, RunIdentity, code_change, describe_served,
                                    identity_changes)

WORDING = """["hangman.confirm"]
version = 1
text = '''Is the secret word '{secret}'? Answer yes or no.'''
"""


class ModelsServer(HandlerServer):
    """Serves ``GET /v1/models`` with one model whose report (``meta``) a test can change."""

    def __init__(self, model: str = "m") -> None:
        self.entry = {"id": model, "object": "model", "created": 1, "owned_by": "llamacpp",
                      "meta": {"n_params": 494_032_768}}
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                send_json(self, 200, {"object": "list", "data": [{**server.entry, "created": id(self)}]})

        self._serve(Handler)


@pytest.fixture
def models_server():
    server = ModelsServer()
    yield server
    server.close()


# -- the rules --------------------------------------------------------------------------------

def test_same_setup_has_no_changes_and_unknown_fields_are_not_compared():
    a = RunIdentity(endpoint={"m": {"id": "m"}}, prompts={"x": "1"}, prompts_file=NONE, model_settings=NONE)
    assert identity_changes(a, a) == []
    assert identity_changes(RunIdentity(), a) == []  # an older folder knows nothing: nothing to compare
    unavailable = RunIdentity(endpoint={"m": {"unavailable": "timeout"}})
    assert identity_changes(unavailable, a) == []


@given(st.sampled_from(["prompts_file", "model_settings"]), st.text("0123456789abcdef", min_size=8, max_size=16))
def test_each_changed_setting_is_named(field, value):
    old = RunIdentity(**{field: NONE})
    new = RunIdentity(**{field: value})
    changes = identity_changes(old, new)
    assert len(changes) == 1 and {"prompts_file": "PSIT_PROMPTS_FILE",
                                  "model_settings": "PSIT_MODEL_SETTINGS"}[field] in changes[0]


def test_only_changed_templates_count_and_the_code_is_only_warned_about():
    old = RunIdentity(prompts={"a": "1", "b": "2"}, code="abc")
    new = RunIdentity(prompts={"a": "1", "b": "3", "c": "4"}, code="def")
    assert identity_changes(old, new) == ["other prompt wording (b)"]
    assert "abc" in code_change(old, "def") and code_change(old, "abc") is None


def test_the_served_report_keeps_what_names_the_model_and_drops_request_times():
    listing = [{"id": "m", "created": 123, "object": "model", "root": "/models/qwen.gguf"}, {"id": "other"}]
    assert describe_served(listing, "m") == {"id": "m", "root": "/models/qwen.gguf"}
    assert describe_served(listing, "alias") == {"served_as": [{"id": "m", "root": "/models/qwen.gguf"},
                                                               {"id": "other"}]}
    assert describe_served([{"id": "psit-sim"}], "psit-sim:default,knob=1") == {"id": "psit-sim"}


# -- in a notebook (Experiment) ---------------------------------------------------------------

def test_other_prompt_wording_is_refused_and_the_metadata_is_left_alone(tmp_path):
    Experiment("98_x", {"n": 1}, run_dir=tmp_path, prompts={"t.a": "Say {x}."}).finish()
    folder = RunFolder(tmp_path / "98_x")
    assert folder.identity()["endpoint"]["psit-sim"]["id"] == "psit-sim"  # the simulator reports itself
    Experiment("98_x", {"n": 1}, run_dir=tmp_path, prompts={"t.a": "Say {x}."})  # the same: resumes
    before = (folder.dir / "metadata.json").read_text()
    with pytest.raises(IdentityMismatchError, match=r"other prompt wording \(t\.a\).*--run-id NEW.*--fresh"):
        Experiment("98_x", {"n": 1}, run_dir=tmp_path, prompts={"t.a": "Please say {x}."})
    assert (folder.dir / "metadata.json").read_text() == before
    with pytest.raises(IdentityMismatchError) as refused:
        Experiment("98_x", {"n": 1}, run_dir=tmp_path, prompts={"t.a": "Please say {x}."})
    # in a notebook: the sentence alone, no traceback
    assert refused.value._render_traceback_() == [f"\x1b[31mIdentityMismatchError\x1b[0m: {refused.value}"]


def test_other_model_settings_are_refused(tmp_path):
    Experiment("98_x", {"n": 1}, run_dir=tmp_path).finish()
    settings = LLMSettings.from_env({"PSIT_MODEL_SETTINGS": '{"psit-sim": {"max_tokens": 64}}'})
    with pytest.raises(IdentityMismatchError, match="another PSIT_MODEL_SETTINGS"):
        Experiment("98_x", {"n": 1}, run_dir=tmp_path, settings=settings)


def test_another_model_behind_the_served_name_is_refused(tmp_path, models_server):
    settings = LLMSettings.from_env({"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": models_server.url,
                                     "PSIT_MODEL": "m"})
    Experiment("98_x", {"n": 1}, run_dir=tmp_path, settings=settings).finish()
    Experiment("98_x", {"n": 1}, run_dir=tmp_path, settings=settings)  # 'created' differs: not a change
    models_server.entry["meta"] = {"n_params": 268_098_176}
    with pytest.raises(IdentityMismatchError, match="another model behind 'm'.*n_params"):
        Experiment("98_x", {"n": 1}, run_dir=tmp_path, settings=settings)


def test_by_hand_another_setup_is_another_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_ADHOC_DIR", str(tmp_path))
    a = Experiment("98_x", {"n": 1}, prompts={"t.a": "Say {x}."})
    b = Experiment("98_x", {"n": 1}, prompts={"t.a": "Please say {x}."})
    assert a.store.dir != b.store.dir
    assert Experiment("98_x", {"n": 1}, prompts={"t.a": "Say {x}."}).store.dir == a.store.dir


# -- psit run --------------------------------------------------------------------------------

NOTEBOOK = """
from psit_lib.runs import Experiment
from psit_lib.studies.psit.catalogue import prompt_catalogue
exp = Experiment("98_ident", {"x": x}, seed=0, prompts=prompt_catalogue())
exp.finish()
"""


@pytest.fixture
def ident_notebook(tmp_path, monkeypatch):
    nb = new_notebook(cells=[new_code_cell("x = 1", metadata={"tags": ["parameters"]}), new_code_cell(NOTEBOOK)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "nbs").mkdir()
    nbformat.write(nb, tmp_path / "nbs" / "98_ident.ipynb")
    monkeypatch.setenv("PSIT_NOTEBOOKS_DIR", str(tmp_path / "nbs"))
    return tmp_path / "results" / "r1" / "98_ident"


def _one_sentence(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].count(". ") == 0
    return lines[0]


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
def test_psit_run_stops_a_resume_with_another_prompts_file_or_model_settings(ident_notebook, tmp_path,
                                                                             monkeypatch, capsys):
    args = ["run", "98", "--run-id", "r1", "--no-progress", "--no-report"]
    assert main(args) == 0
    metadata = (ident_notebook / "metadata.json").read_text()
    capsys.readouterr()
    wording = tmp_path / "wording.toml"
    wording.write_text(WORDING)
    monkeypatch.setenv("PSIT_PROMPTS_FILE", str(wording))
    assert main(args) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "r1/98_ident" in line and "PSIT_PROMPTS_FILE" in line and "--run-id NEW" in line and "--fresh" in line
    assert (ident_notebook / "metadata.json").read_text() == metadata  # nothing ran, nothing rewritten
    monkeypatch.delenv("PSIT_PROMPTS_FILE")
    monkeypatch.setenv("PSIT_MODEL_SETTINGS", '{"psit-sim": {"max_tokens": 64}}')
    assert main(args) == 2
    assert "PSIT_MODEL_SETTINGS" in _one_sentence(capsys.readouterr().err)
    assert main([*args, "--fresh"]) == 0  # a new start is allowed
    assert json.loads((ident_notebook / "identity.json").read_text())["model_settings"] != NONE


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
def test_psit_run_stops_when_another_model_is_behind_the_served_name(ident_notebook, models_server,
                                                                     monkeypatch, capsys):
    for name, value in {"PSIT_BACKEND": "openai", "PSIT_BASE_URLS": models_server.url, "PSIT_MODEL": "m"}.items():
        monkeypatch.setenv(name, value)
    args = ["run", "98", "--run-id", "r1", "--no-progress", "--no-report"]
    assert main(args) == 0
    capsys.readouterr()
    models_server.entry["meta"] = {"n_params": 1}
    assert main(args) == 2
    line = _one_sentence(capsys.readouterr().err)
    assert "another model behind 'm'" in line and "--run-id NEW" in line


@pytest.mark.slow  # runs psit run or a notebook's kernel (the fast tier: -m 'not slow')
def test_psit_run_reports_other_parameters_found_by_the_notebook_as_a_usage_error(ident_notebook, capsys):
    args = ["run", "98", "--run-id", "r1", "--no-progress", "--no-report"]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "-p", "x=2"]) == 2
    err = capsys.readouterr().err
    assert "other parameters (x: 1 -> 2)" in err and "--run-id NEW" in err


def test_the_fingerprint_covers_parameters_setup_and_scorer_versions_but_not_the_commit():
    from psit_lib.runs.identity import fingerprint

    setup = {"prompts_file": NONE, "model_settings": NONE, "code": "abc"}
    base = fingerprint({"n": 1}, setup, {"consistent": 1})
    assert fingerprint({"n": 1}, {**setup, "code": "def"}, {"consistent": 1}) == base
    assert fingerprint({"n": 2}, setup, {"consistent": 1}) != base
    assert fingerprint({"n": 1}, {**setup, "prompts_file": "ab12"}, {"consistent": 1}) != base
    assert fingerprint({"n": 1}, setup, {"consistent": 2}) != base
