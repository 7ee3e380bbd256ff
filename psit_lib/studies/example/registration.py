"""The example study's notebook, for :mod:`psit_lib.studies.registry` (imports nothing)."""

STUDIES = {"example": "psit_lib.studies.example.study:STUDY"}
NOTEBOOKS = {"90_example_reveal_probe": ("example", "psit_lib.studies.example.study:ProbeParams")}
