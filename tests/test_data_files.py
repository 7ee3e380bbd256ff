"""The one resolver of the harness's data folder (psit_lib.data_files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from psit_lib import data_files
from psit_lib.analysis.reference import reference_table
from psit_lib.data_files import DataFilesNotFoundError, data_dir, data_root
from psit_lib.studies.psit.tasks.diagnosis_data import default_data_dir

REPO_DATA = Path(__file__).resolve().parents[1] / "data"


def test_the_checkout_data_folder_by_default(monkeypatch):
    monkeypatch.delenv("PSIT_DATA_DIR", raising=False)
    assert data_root() == REPO_DATA
    assert default_data_dir() == REPO_DATA / "ddxplus"
    assert len(reference_table("psit_table1_self_consistency"))


def test_the_environment_variable_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_DATA_DIR", str(tmp_path))
    assert data_dir("ddxplus") == tmp_path / "ddxplus"
    assert default_data_dir() == tmp_path / "ddxplus"
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "reference" / "x.csv")):
        reference_table("x")


def test_a_wrong_environment_variable_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("PSIT_DATA_DIR", str(tmp_path / "missing"))
    with pytest.raises(DataFilesNotFoundError, match="PSIT_DATA_DIR is set to .* which is not a folder"):
        data_dir("reference")


def test_an_install_without_data_falls_back_to_the_current_folder_then_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("PSIT_DATA_DIR", raising=False)
    installed = tmp_path / "site-packages" / "psit_lib"
    installed.mkdir(parents=True)
    monkeypatch.setattr(data_files, "__file__", str(installed / "data_files.py"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataFilesNotFoundError, match="set PSIT_DATA_DIR .*pip install -e"):
        data_root()
    (tmp_path / "data").mkdir()
    assert data_root() == tmp_path / "data"
