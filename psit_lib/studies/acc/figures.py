"""Figures of the ACC study (notebook 05) that the shared plot builders do not cover."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import agent_colours, agent_palette, has_values, legend_outside, mark_no_data, new_figure, no_data_figure

RATES = ("hallucination", "drift")


def plot_rates_per_turn(per_turn: pd.DataFrame, label: str, facet: str | None = None) -> Figure:
    """Hallucination and drift rate per turn (mean over episodes), one column each, per agent;
    with ``facet`` (e.g. ``"domain"``) one row per value (the study's per-domain Figure 7). A rate
    with no scored turn in a panel says so there; with none at all the figure says "no scored data"."""
    if not has_values(per_turn, RATES):
        fig = no_data_figure(label, "Hallucination and drift per turn", width=10.5, height=3.4)
        fig.axes[0].set_xlabel("turn")
        return fig
    rows = list(dict.fromkeys(per_turn[facet])) if facet else [None]
    agents = list(per_turn["agent"].cat.categories if hasattr(per_turn["agent"], "cat")
                  else dict.fromkeys(per_turn["agent"]))
    palette = agent_palette(agents)
    fig = new_figure(10.5, 0.6 + 2.8 * len(rows))
    axes = fig.subplots(len(rows), 2, sharey=True, sharex=True, squeeze=False)
    legend_ax = None  # the first panel drawn carries the legend
    for r, value in enumerate(rows):
        part = per_turn if facet is None else per_turn[per_turn[facet] == value]
        for ax, metric in zip(axes[r], RATES):
            title = f"{metric} per turn" + ("" if value is None else f" · {value}")
            if not has_values(part, [metric]):
                mark_no_data(ax, title)
                continue
            sns.lineplot(data=part.dropna(subset=[metric]), x="turn", y=metric, hue="agent", hue_order=agents,
                         marker="o", palette=palette, ax=ax, legend=legend_ax is None)
            legend_ax = ax if legend_ax is None else legend_ax
            ax.set_ylabel(f"{metric} rate (share of turns)", visible=True)  # each column its own measure
            ax.tick_params(axis="y", labelleft=True)
            ax.set_title(title, fontsize=10)
            ax.set_ylim(-0.05, 1.05)
            ax.grid(alpha=0.3)
    legend_outside(fig, legend_ax, title="agent")
    return label_figure(fig, label)


def plot_footprint_by_domain(table: pd.DataFrame, label: str) -> Figure:
    """Mean memory footprint per domain and agent (bars, log scale): the study's Figure 5b; with
    no answered turn the figure says "no scored data"."""
    if not has_values(table, ["mean_tokens"]):
        return no_data_figure(label, "Memory footprint per domain", width=8.0, height=4.0)
    agents = list(dict.fromkeys(table["agent"].astype(str)))
    fig = new_figure(8.0, 4.0)
    ax = fig.add_subplot()
    sns.barplot(data=table.astype({"agent": str}), x="domain", y="mean_tokens", hue="agent", hue_order=agents,
                palette=agent_colours(agents), ax=ax)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylabel("mean tokens carried per turn (symlog)")
    ax.set_title("Memory footprint per domain")
    ax.grid(axis="y", alpha=0.3)
    legend_outside(fig, ax, title="agent")
    return label_figure(fig, label)


def plot_outcome(scores: pd.DataFrame, label: str) -> Figure:
    """The paper's outcome figure: each agent's judge score per criterion as mean ± std across
    scored turns on the judge's 0-10 scale, each bar clipped to the scale (a standard deviation is
    not bounded by it, a score is; the title says so); "no scored data" when nothing was scored."""
    title = "Judge scores per agent: mean ± std across turns, bars clipped to 0-10 (the paper's outcome figure)"
    if not has_values(scores, ["mean"]):
        return no_data_figure(label, title, width=8.0, height=4.5)
    criteria = list(dict.fromkeys(scores["criterion"]))
    agents = list(dict.fromkeys(scores["agent"].astype(str)))
    palette = agent_colours(agents)
    width, step = 0.7, 0.7 / len(agents)
    fig = new_figure(8.0, 4.5)
    ax = fig.add_subplot()
    for h, agent in enumerate(agents):
        rows = scores[scores["agent"].astype(str) == agent].set_index("criterion").reindex(criteria)
        xs = [i - width / 2 + step * (h + 0.5) for i in range(len(criteria))]
        mean, std = rows["mean"].to_numpy(dtype=float), rows["std"].fillna(0).to_numpy(dtype=float)
        yerr = [np.minimum(std, np.clip(mean, 0, 10)), np.minimum(std, 10 - np.clip(mean, 0, 10))]
        ax.errorbar(xs, mean, yerr=yerr, fmt="o", capsize=3, color=palette[h], label=agent)
    ax.set_xticks(range(len(criteria)), [c.replace("_", " ") for c in criteria])
    ax.set_ylim(-0.3, 10.3)
    ax.set_ylabel("judge score (0-10), mean ± std clipped")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    legend_outside(fig, ax, title="agent")
    return label_figure(fig, label)
