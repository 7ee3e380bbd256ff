"""Registry and narrative sentences that were once false: each is checked against the fact it states."""

from __future__ import annotations

from pathlib import Path

import nbformat

from psit_lib.studies.basis.differences import DIFFERENCES as BASIS
from psit_lib.studies.psit.differences import DIFFERENCES as PSIT

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _entry(registry, point):
    return next(d for d in registry if d.point == point)


def test_the_reference_diagnosis_player_is_said_to_read_the_hosts_answers():
    study = _entry(PSIT, "Reading the host's replies during play").study
    assert "Diagnosis player reads every answer" in study
    assert "The scripted player does not read the host's board" not in study


def test_the_basis_headline_is_registered_as_the_papers_absolute_gain():
    entry = _entry(BASIS, "Headline gain")
    assert "54.4% increase" in entry.study and "0.744 - 0.200" in entry.study
    assert "relative" in entry.study and "percentage points" not in entry.study  # absolute number, relative sentence
    assert "not available" not in entry.why and "+270%" not in entry.here and "risk ratios" in entry.here


def test_the_reveal_reading_difference_is_registered_with_its_effect():
    entry = _entry(PSIT, "Reading the reveal for Table 1")
    assert "0.846" in entry.effect and "'cushing'" in entry.effect and "'the'" in entry.effect
    assert set(entry.notebooks) == {"02", "03", "04"}


def test_notebook_01_does_not_say_section_4_predicts_the_poca_fails():
    text = "\n".join(c.source for c in nbformat.read(NOTEBOOKS / "01_theorem_illustration.ipynb", as_version=4).cells
                     if c.cell_type == "markdown")
    assert "sections 3-4 predict" not in text
    assert "a POCA that always re-imagines the same" in text
