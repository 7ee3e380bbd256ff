"""Figures of the ACC study (notebook 05) that the shared plot builders do not cover."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from psit_lib.analysis.labels import label_figure

RATES = ("hallucination", "drift")


def plot_rates_per_turn(per_turn: pd.DataFrame, label: str) -> Figure:
    """Hallucination and drift rate per turn (mean over episodes), one panel each, per agent."""
    fig = Figure(figsize=(10, 4), layout="constrained")
    for ax, metric in zip(fig.subplots(1, 2, sharey=True), RATES):
        sns.lineplot(data=per_turn.dropna(subset=[metric]), x="turn", y=metric, hue="agent", marker="o",
                     palette="colorblind", ax=ax)
        ax.set_title(f"{metric} rate per turn (mean over episodes)")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    return label_figure(fig, label)
