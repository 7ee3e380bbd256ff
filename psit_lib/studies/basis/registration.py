"""The BASIS study's notebook, for :mod:`psit_lib.studies.registry` (imports nothing)."""

STUDIES = {"basis": "psit_lib.studies.basis.study:STUDY"}
CLAIMS = {"basis": "psit_lib.studies.basis.claims:claims"}
NOTEBOOKS = {"06_basis_cab_scenarios": ("basis", "psit_lib.studies.basis.experiment:BasisParams")}
