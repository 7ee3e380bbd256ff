"""Figures of the private-state study that only it draws: the fork-test failure modes and the
spread of revealed secrets (notebook 07).

Generic builders (rates with intervals, state size per turn) live in
:mod:`psit_lib.analysis.plots`; this module adds the outcome vocabulary of the fork test and
the secret-spread figures built on :mod:`psit_lib.studies.psit.secrets`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import (GROUP_SEPARATOR, as_columns, agent_colours, count_labels, joined_labels,
                                     legend_outside, needs_rotation, new_figure, no_data_figure, ordered_levels,
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


def _stacked(ax: Axes, shares: pd.DataFrame, colours: Sequence[str], labels: Sequence[str],
             totals: pd.Series) -> str:
    positions = np.arange(len(shares))
    bottom = np.zeros(len(shares))
    for column, colour, name in zip(shares.columns, colours, labels):
        heights = shares[column].to_numpy()
        ax.bar(positions, heights, bottom=bottom, color=colour, label=name, width=0.7, edgecolor="white")
        bottom += heights
    ax.set_ylim(0, 1.1)
    return count_labels(ax, positions, np.ones(len(positions)), totals)


def plot_failure_modes(df: pd.DataFrame, group_col: str | Sequence[str], label: str, *,
                       order: Sequence[str] | None = None, facet: str | Sequence[str] | None = None) -> Figure:
    """The study's Figure 2 counterpart: the share of each of its five classes per group, on its
    partition (Table 1's rule, ``table1_outcome``: self-consistent, leakage, over-confirmation,
    state substitution, all denial) in its order and colours; beside it, labelled, the workbook's
    strict view (``outcome``, its own classes and colours). Failed episodes are left out of both
    (never scored); ``facet`` draws one row per value of its column(s) (per task, per model)."""
    from psit_lib.studies.psit.protocol.table1 import PAPER_OUTCOME_COLOURS, PAPER_OUTCOMES

    group_cols = as_columns(group_col)
    facet_cols = as_columns(facet)
    require_columns(df, [*group_cols, "outcome", "table1_outcome", "scored", *facet_cols], "plot_failure_modes")
    scored = df[df["scored"].astype(bool)]
    title_paper = "The study's partition (Table 1's rule), its Figure 2 colours"
    title_strict = "The workbook's strict view (not the paper's partition)"
    if scored.empty:
        return no_data_figure(label, f"Fork-test failure modes: {title_paper}", width=8.0, height=3.6)
    groups = joined_labels(scored, group_cols)
    levels = ordered_levels(groups, order)
    strict = scored["outcome"].map(lambda v: Outcome(v))
    shown = [o for o in OUTCOME_ORDER if o in _JUDGED_OUTCOMES or o in set(strict)]
    facet_values = joined_labels(scored, facet_cols)
    facets = ordered_levels(facet_values, None) if facet_cols else [None]
    fig = new_figure(min(11.0, max(8.0, 0.8 * len(levels) + 4.0)),  # 1400 px at 120 dpi
                     0.8 + (3.0 if len(facets) < 4 else 2.4) * len(facets))
    axes = fig.subplots(len(facets), 2, sharey=True, sharex=True, squeeze=False)
    notes = []
    for row, value in enumerate(facets):
        mask = facet_values == value if facet_cols else pd.Series(True, index=scored.index)
        paper = pd.crosstab(groups[mask], scored.loc[mask, "table1_outcome"]).reindex(
            index=levels, columns=list(PAPER_OUTCOMES), fill_value=0)
        mine = pd.crosstab(groups[mask], strict[mask]).reindex(index=levels, columns=shown, fill_value=0)
        totals = paper.sum(axis=1)
        notes.append(_stacked(axes[row][0], paper.div(totals.where(totals > 0, 1), axis=0),
                              [PAPER_OUTCOME_COLOURS[o] for o in PAPER_OUTCOMES], PAPER_OUTCOMES, totals))
        _stacked(axes[row][1], mine.div(totals.where(totals > 0, 1), axis=0),
                 [OUTCOME_COLOURS[o] for o in shown], [OUTCOME_LABELS[o] for o in shown], totals)
        axes[row][0].set_ylabel("share of scored episodes" if value is None else f"{value}\nshare of scored episodes")
    one_note = notes[0] if len(set(notes)) == 1 else ""
    for row, note in enumerate(notes):
        if note and not one_note:
            axes[row][0].set_ylabel(f"{axes[row][0].get_ylabel()} ({note})")
    rotate = needs_rotation(levels) or len(levels) > 4
    for ax in axes[-1]:  # the rows above share these ticks and show no labels
        ax.set_xticks(np.arange(len(levels)), levels, rotation=40 if rotate else 0,
                      ha="right" if rotate else "center", fontsize=8)
    axes[0][0].set_title(title_paper, fontsize=9)
    axes[0][1].set_title(title_strict, fontsize=9)
    fig.legend(*axes[0][0].get_legend_handles_labels(), title="the study's classes", fontsize=7, title_fontsize=7,
               loc="upper left", bbox_to_anchor=(1.0, 0.95), frameon=False)
    fig.legend(*axes[0][1].get_legend_handles_labels(), title="workbook's strict outcomes", fontsize=7,
               title_fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.suptitle("Fork-test failure modes: the study's partition beside the workbook's strict view"
                 + (f" · {one_note} bar" if one_note else ""), fontsize=10)
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


ENTROPY_AXIS = "entropy of revealed secrets (bits)"


def plot_entropy_vs_temperature(
    summary: pd.DataFrame,
    *,
    label: str,
    hue: str | Sequence[str] | None = "model",
    title: str = "Secret spread vs sampling temperature",
) -> Figure:
    """Entropy of the revealed secrets against temperature from a ``secret_summary`` table (the
    table 07 saves, not a second bootstrap), one line per ``hue`` level: mode collapse shows as
    entropy falling as temperature drops; a dashed line marks log2 n, the most n samples can show."""
    hue_cols = as_columns(hue)
    require_columns(summary, [*hue_cols, "temperature", "n", "entropy", "entropy_ceiling"], "plot_entropy_vs_temperature")
    summary = summary.assign(_line=joined_labels(summary, hue_cols))
    if not (summary["n"] > 0).any():  # no readable secret anywhere: nothing to draw
        fig = no_data_figure(label, title, width=6.0, height=4.5)
        fig.axes[0].set_xlabel("temperature")
        fig.axes[0].set_ylabel(ENTROPY_AXIS)
        return fig
    lines = ordered_levels(summary["_line"], None)
    palette = agent_colours(lines)
    fig = new_figure(6.0, 4.5)
    ax = fig.add_subplot()
    for colour, line in zip(palette, lines):
        rows = summary[(summary["_line"] == line) & (summary["n"] > 0)].sort_values("temperature")
        values = rows["entropy"].to_numpy(dtype=float)
        yerr = np.clip(np.vstack([values - rows["entropy_low"].to_numpy(dtype=float),
                                  rows["entropy_high"].to_numpy(dtype=float) - values]), 0, None)
        ax.errorbar(rows["temperature"], values, yerr=yerr, marker="o", capsize=3, color=colour,
                    label=line if hue_cols else None)
    ceilings = summary.loc[summary["n"] > 0, "entropy_ceiling"].unique()
    if len(ceilings) == 1:  # one sample size: show how high n samples could possibly go
        ax.axhline(ceilings[0], ls="--", lw=1, color="grey")
        ax.annotate(f"log2 n = {ceilings[0]:.2f} (ceiling at this sample size)", (0.01, ceilings[0]),
                    xycoords=("axes fraction", "data"), va="bottom", fontsize=7, color="grey")
    ax.set_xlabel("temperature")
    ax.set_ylabel(ENTROPY_AXIS)
    ax.set_title(title)
    if hue_cols:
        ax.legend()
        legend_outside(fig, ax, title=GROUP_SEPARATOR.join(hue_cols))
    ax.grid(alpha=0.3)
    return label_figure(fig, label)
