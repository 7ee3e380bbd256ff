"""Notebook 07's scorer and tables: the secret each episode revealed, and the metrics over it.

The ``secret`` scorer reads the revealed secret from an episode's reveal as the reader of revealed
secrets does (:mod:`~psit_lib.studies.psit.protocol.secret_reader`); the tables (the spread per
temperature, the chi-square fits, Appendix E's top-10 lists and the attractors) are metrics over
those scores. Appendix E and the attractors' fork counts read the fork tests of 02 and 03 from the
folders the study hands in (``Scored.run_mates``), never from the environment.
"""

from __future__ import annotations

import pandas as pd

from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, scorer
from psit_lib.studies.psit.protocol import appendix_e
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.studies.psit.protocol.secret_reader import rows_from_records

GROUPS = ["task", "model", "temperature"]


@scorer("secret", version=1)
def secret_scorer(record, ctx: ScoreContext) -> Score:
    """The secret read from the episode's reveal (None when unreadable; ``status`` says which)."""
    row = rows_from_records([record], source_notebook=sc.NOTEBOOK)[0]
    return Score(value=row["secret"], explanation=f"reveal {row['status']}", metadata={"status": row["status"]})


def fork_reveals(scored: Scored) -> pd.DataFrame:
    """The main fork-test reveals of the run-mates 02 and 03 (Appendix E's source)."""
    return appendix_e.main_fork_reveals(scored.run_mates)


def secret_spread(scored: Scored) -> pd.DataFrame:
    return sc.metrics_table(sc.secret_frame(scored), GROUPS, n_boot=scored.params.n_boot, seed=scored.params.seed)


def chi_square(scored: Scored) -> pd.DataFrame:
    return sc.chi_square_table(sc.secret_frame(scored), GROUPS)


def appendix_e_top10(scored: Scored) -> pd.DataFrame:
    return appendix_e.top_secrets(fork_reveals(scored))


def attractors(scored: Scored) -> pd.DataFrame:
    return sc.attractor_table(sc.secret_frame(scored), fork_reveals(scored))


SCORERS: tuple[Scorer, ...] = (secret_scorer,)
METRICS: tuple[Metric, ...] = (
    Metric("secret_spread", secret_spread),  # a spread has no better or worse (mode collapse is described)
    Metric("chi_square", chi_square),
    Metric("appendix_e_top10", appendix_e_top10),
    Metric("attractors", attractors),
)
"""Notebook 07's tables, by the names they are saved under."""
