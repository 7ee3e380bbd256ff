"""Private state per episode for RQ3 (the study's private-state-size figure): each scored episode's mean private
state over its turns (o200k tokens: private CoT's kept reasoning, a memory agent's block, a retrieval baseline's
retrieved block), summarised per (task, model, agent) on the log scale the figure uses."""

from __future__ import annotations

import numpy as np
import pandas as pd

SMALL_STATE = 100
"""RQ3's "typically under 100 tokens"."""
COLUMNS = ["task", "model", "agent", "episodes", "mean_tokens", "log_mean", "log_sd", "under_100"]


def state_size_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (task, model, agent) from one row per episode (``state_tokens``: its mean private state over turns):
    episodes, mean tokens, the mean and sd of log10(1 + tokens), and episodes under :data:`SMALL_STATE` tokens."""
    columns = COLUMNS
    if frame.empty:
        return pd.DataFrame(columns=columns)
    logs = frame.assign(log=np.log10(1 + frame["state_tokens"].astype(float)),
                        small=frame["state_tokens"].astype(float) < SMALL_STATE)
    table = logs.groupby(["task", "model", "agent"], sort=False).agg(
        episodes=("log", "size"), mean_tokens=("state_tokens", "mean"), log_mean=("log", "mean"),
        log_sd=("log", "std"), under_100=("small", "sum")).reset_index()
    return table[columns]
