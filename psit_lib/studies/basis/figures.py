"""Figures of the BASIS study that only it draws: pass@k and pass^k curves (notebook 06).

Generic builders (rates with intervals, state size per turn) live in
:mod:`psit_lib.analysis.plots`.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import agent_colours, has_values, legend_outside, new_figure, no_data_figure, ordered_levels, require_columns
from psit_lib.studies.basis.passk import PASSK_COLUMN_LABELS


def plot_passk_curves(
    passk_df: pd.DataFrame,
    *,
    label: str,
    group_col: str = "group",
    show_first_k: bool = False,
    title: str = "pass@k (solid) and pass^k (dashed)",
) -> Figure:
    """pass@k (solid) and pass^k (dashed) against k per group, from :func:`passk_table` output.

    With ``show_first_k`` the reference code's first-k estimate is drawn as crosses, to show
    how far a single ordering can sit from the unbiased pass^k. A table without an estimate (no
    scored trial, or k above every group's trials) gives a figure that says "no scored data".
    """
    require_columns(passk_df, [group_col, "k", "pass_at_k", "pass_hat_k"], "plot_passk_curves")
    if not has_values(passk_df, ["pass_at_k", "pass_hat_k"]):
        fig = no_data_figure(label, title, width=7.5, height=4.5)
        fig.axes[0].set_xlabel("k")
        fig.axes[0].set_ylabel("estimated probability")
        return fig
    groups = ordered_levels(passk_df[group_col], None)
    palette = agent_colours(groups)
    fig = new_figure(7.5, 4.5)
    ax = fig.add_subplot()
    for colour, group in zip(palette, groups):
        rows = passk_df[passk_df[group_col] == group].sort_values("k")
        ax.plot(rows["k"], rows["pass_at_k"], "-o", color=colour, label=str(group))
        ax.plot(rows["k"], rows["pass_hat_k"], "--s", color=colour)
        if show_first_k and "first_k_all_succeed" in rows.columns:
            ax.plot(rows["k"], rows["first_k_all_succeed"], "x", color=colour, markersize=8)
    ks = sorted(passk_df["k"].unique())
    ax.set_xscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("k")
    ax.set_ylabel("estimated probability")
    ax.set_title(title)
    style_handles = [
        Line2D([], [], color="gray", linestyle="-", marker="o", label=PASSK_COLUMN_LABELS["pass_at_k"].split(" (")[0]),
        Line2D([], [], color="gray", linestyle="--", marker="s", label=PASSK_COLUMN_LABELS["pass_hat_k"].split(" (")[0]),
    ]
    if show_first_k:
        style_handles.append(Line2D([], [], color="gray", linestyle="", marker="x", label="first k all succeed"))
    handles, labels = ax.get_legend_handles_labels()
    legend_outside(fig, ax, title=group_col, handles=handles, labels=labels, where="upper")
    legend_outside(fig, ax, handles=style_handles, labels=[h.get_label() for h in style_handles], where="lower")
    ax.grid(alpha=0.3)
    return label_figure(fig, label)
