"""Figures of the private-state study that only it draws: the fork-test outcome mix.

Generic builders (rates with intervals, state size per turn, secret spread) live in
:mod:`psit_lib.analysis.plots`; this module adds the outcome vocabulary of the fork test.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import (as_columns, joined_labels, legend_outside, needs_rotation, new_figure, ordered_levels,
                                     require_columns)
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, OUTCOME_LABELS, OUTCOME_ORDER, Outcome

#: Outcomes always shown in the failure-mode legend; the others appear only when they occur.
_JUDGED_OUTCOMES = (
    Outcome.SELF_CONSISTENT,
    Outcome.OVER_CONFIRMATION,
    Outcome.STATE_SUBSTITUTION,
    Outcome.ALL_DENIAL,
    Outcome.LEAKAGE,
)

def plot_outcome_bars(
    df: pd.DataFrame,
    group_col: str | Sequence[str],
    outcome_col: str,
    label: str,
    *,
    order: Sequence[str] | None = None,
    facet: str | None = None,
    title: str = "Fork-test outcomes",
) -> Figure:
    """Stacked bars of outcome shares per group in :data:`OUTCOME_ORDER`, with fixed colours.

    ``group_col`` may name several columns; they are joined into one bar label. Each bar is
    annotated with its episode count. ``facet`` draws one row of bars per value of that column
    (e.g. per task), so a large grid stays readable at page width. Unknown outcome values raise
    ValueError.
    """
    group_cols = as_columns(group_col)
    require_columns(df, [*group_cols, outcome_col, facet], "plot_outcome_bars")
    try:
        outcomes = df[outcome_col].map(lambda v: Outcome(v))
    except ValueError as exc:
        raise ValueError(f"plot_outcome_bars: column {outcome_col!r} holds a value that is not an Outcome ({exc}).") from None
    groups = joined_labels(df, group_cols)
    levels = ordered_levels(groups, order)
    present = set(outcomes)
    shown = [o for o in OUTCOME_ORDER if o in _JUDGED_OUTCOMES or o in present]
    facets = ordered_levels(df[facet], None) if facet else [None]
    fig = new_figure(min(11.0, max(5.0, 0.55 * len(levels) + 3.0)), 0.6 + 3.0 * len(facets))
    axes = fig.subplots(len(facets), 1, sharex=True, squeeze=False)[:, 0]
    positions = np.arange(len(levels))
    for ax, value in zip(axes, facets):
        mask = df[facet] == value if facet else pd.Series(True, index=df.index)
        counts = pd.crosstab(groups[mask], outcomes[mask]).reindex(index=levels, columns=shown, fill_value=0)
        totals = counts.sum(axis=1)
        shares = counts.div(totals.where(totals > 0, 1), axis=0)
        bottom = np.zeros(len(levels))
        for outcome in shown:
            heights = shares[outcome].to_numpy()
            ax.bar(positions, heights, bottom=bottom, color=OUTCOME_COLOURS[outcome],
                   label=OUTCOME_LABELS[outcome], width=0.7)
            bottom += heights
        for x, total in zip(positions, totals):
            ax.text(x, 1.01, f"n={total}", ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("share of episodes" if value is None else f"{value}\nshare of episodes")
    rotate = needs_rotation(levels)
    axes[-1].set_xticks(positions, levels, rotation=30 if rotate else 0, ha="right" if rotate else "center")
    axes[0].set_title(title)
    legend_outside(fig, axes[0], title="outcome")
    return label_figure(fig, label)


def plot_dataset_view(counts: pd.DataFrame, shrink: pd.DataFrame, questions_before_fork: int) -> Figure:
    """Notebook 03's view of DDXPlus without any model: conditions by number of binary
    evidences, and how fast a splitting player shrinks the compatible set against a truthful host."""
    fig = new_figure(10, 3.6)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.hist(counts.binary_evidences, bins=range(0, int(counts.binary_evidences.max()) + 2), color="#4477AA")
    ax1.set(xlabel="binary evidences per condition", ylabel="conditions", title="Conditions by number of evidences")
    summary = shrink.groupby("question").compatible.describe()
    ax2.plot(summary.index, summary["mean"], marker="o", color="#CC6677", label="mean")
    ax2.fill_between(summary.index, summary["25%"], summary["75%"], alpha=0.25, color="#CC6677", label="IQR")
    ax2.axvline(questions_before_fork, ls="--", color="grey")
    ax2.annotate("fork", (questions_before_fork, 1), xycoords=("data", "axes fraction"), xytext=(3, -12),
                 textcoords="offset points", color="grey")
    ax2.set(xlabel="questions asked", ylabel="compatible conditions", yscale="log",
            title="How fast the compatible set shrinks")
    ax2.legend()
    return label_figure(fig, "dataset statistics (no model): splitting player vs a truthful host")
