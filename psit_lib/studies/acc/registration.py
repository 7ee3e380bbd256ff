"""The ACC study's notebook, for :mod:`psit_lib.studies.registry` (imports nothing)."""

STUDIES = {"acc": "psit_lib.studies.acc.study:STUDY"}
CLAIMS = {"acc": "psit_lib.studies.acc.claims:claims"}
NOTEBOOKS = {"05_acc_judge_evaluation": ("acc", "psit_lib.studies.acc.experiment:AccParams")}
