"""The private-state study's notebooks, for :mod:`psit_lib.studies.registry` (imports nothing)."""

STUDIES = {"psit": "psit_lib.studies.psit.study:STUDY"}
CLAIMS = {"psit": "psit_lib.studies.psit.claims:claims"}

NOTEBOOKS = {
    "01_theorem_illustration": ("psit", "psit_lib.studies.psit.theorem_params:TheoremParams"),
    "02_hangman_fork_tests": ("psit", "psit_lib.studies.psit.protocol.params:ForkTestParams"),
    "03_diagnosis_ddxplus": ("psit", "psit_lib.studies.psit.protocol.params:ForkTestParams"),
    "04_memory_strategy_ablations": ("psit", "psit_lib.studies.psit.protocol.params:AblationParams"),
    "07_secret_distribution_mode_collapse": ("psit", "psit_lib.studies.psit.protocol.params:SecretChoiceParams"),
}

# 07's Appendix E counts the secrets revealed at the forks of 02, 03 and 04
RUNS_AFTER = {"07_secret_distribution_mode_collapse": ("02_hangman_fork_tests", "03_diagnosis_ddxplus",
                                                     "04_memory_strategy_ablations")}
