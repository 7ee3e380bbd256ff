"""The one figure only the BASIS study draws: the paper's Figure 4 (generic ones are in analysis.plots)."""

from __future__ import annotations

from typing import Literal

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import agent_palette, new_figure, no_data_figure, ordered_levels, require_columns


#: (column, line style, marker, what it is) of the series Figure 4 draws in every panel.
FIGURE4_SERIES: tuple[tuple[str, Literal["-", "--", ":"], str, str], ...] = (
    ("reference_{m}", "-", "o", "set-based (the paper's design)"),
    ("{m}", "--", "s", "unbiased C(n,k) estimator (main trials)"),
    ("study_reported_{m}", ":", "^", "paper, reported (reference)"),
)


def plot_figure4(comparison: pd.DataFrame, *, label: str, pooled: pd.DataFrame | None = None,
                 systems: tuple[str, ...] = ("baseline", "basis")) -> Figure:
    """The paper's Figure 4 laid out as the reference code's ``evals/plot_all_scenarios.py`` (pass^k over
    pass@k per scenario, pooled success last); series are shifted along k so none hides another."""
    require_columns(comparison, ["scenario", "system", "k", "pass_hat_k", "pass_at_k"], "plot_figure4")
    scenarios = ordered_levels(comparison["scenario"], None)
    if not scenarios:
        return no_data_figure(label, "Figure 4: pass^k and pass@k", width=7.5, height=4.5)
    models = ordered_levels(comparison["model"], None) if "model" in comparison.columns else [None]
    extra = pooled is not None
    fig = new_figure(min(11.5, 2.8 * (len(scenarios) + extra) + 0.6), 1.0 + 5.6 * len(models))  # a page wide
    grid = fig.add_gridspec(2 * len(models), len(scenarios) + extra)
    palette = agent_palette(systems)
    n_series = len(systems) * len(FIGURE4_SERIES)
    first = None
    for block, model in enumerate(models):
        of_model = comparison if model is None else comparison[comparison["model"] == model]
        named = "" if len(models) == 1 else f"{model}\n"
        for col, scenario in enumerate(scenarios):
            part = of_model[of_model["scenario"] == scenario]
            for row, (metric, title) in enumerate((("pass_hat_k", "pass^k"), ("pass_at_k", "pass@k"))):
                ax = fig.add_subplot(grid[2 * block + row, col], sharex=first, sharey=first)
                first = first or ax
                index = 0
                for system in systems:
                    rows = part[part["system"] == system].sort_values("k")
                    for template, linestyle, marker, _ in FIGURE4_SERIES:
                        column = template.format(m=metric)
                        shift = 1.06 ** (index - (n_series - 1) / 2)
                        index += 1
                        if column not in rows.columns or rows.empty or not rows[column].notna().any():
                            continue
                        ax.plot(rows["k"] * shift, rows[column], linestyle=linestyle, marker=marker,
                                color=palette[system], alpha=0.55 if column.startswith("study_") else 1.0, markersize=5)
                ks = sorted(part["k"].unique())
                ax.set_xscale("log")
                ax.set_xticks(ks, [str(k) for k in ks])
                ax.minorticks_off()
                ax.set_ylim(-0.04, 1.04)
                ax.grid(alpha=0.3)
                ax.set_title(f"{scenario}: {title}", fontsize="medium")
                ax.set_ylabel(f"{named}{title}")  # every panel labelled, so none is read without its measure
                ax.set_xlabel("k")
        if pooled is not None:
            mine = pooled if model is None else pooled[(pooled["source"] != "measured") | (pooled["model"] == model)]
            _success_bars(fig.add_subplot(grid[2 * block:2 * block + 2, len(scenarios)]), mine, scenarios, systems,
                          palette)
    handles = [Line2D([], [], color=palette[s], linestyle="-", label=s) for s in systems]
    handles += [Line2D([], [], color="gray", linestyle=linestyle, marker=marker, label=what)
                for _, linestyle, marker, what in FIGURE4_SERIES]
    # the title heads the legend above the panels: a suptitle and a legend would both claim the top
    fig.legend(handles=handles, loc="outside upper center", ncols=3, fontsize="small", frameon=False,
               title="Figure 4: pass^k (top) and pass@k (bottom) per scenario"
                     + (", success over all runs (right)" if extra else "")
                     + ("" if len(models) == 1 else ", two rows per model"), title_fontsize="large")
    return label_figure(fig, label)


def _success_bars(ax, pooled: pd.DataFrame, scenarios: list, systems: tuple[str, ...], palette: dict) -> None:
    """Pooled success per scenario and system (bars, Wilson 95% whiskers), the paper's as a diamond."""
    import numpy as np

    width = 0.8 / len(systems)
    x = np.arange(len(scenarios))
    for i, system in enumerate(systems):
        offset = (i - (len(systems) - 1) / 2) * width
        mine = pooled[(pooled["system"] == system) & (pooled["source"] == "measured")].set_index("scenario")
        paper = pooled[(pooled["system"] == system) & (pooled["source"] != "measured")].set_index("scenario")
        rates = [mine["rate"].get(s, np.nan) for s in scenarios]
        low = [r - mine["wilson_low"].get(s, np.nan) for s, r in zip(scenarios, rates)]
        high = [mine["wilson_high"].get(s, np.nan) - r for s, r in zip(scenarios, rates)]
        ax.bar(x + offset, rates, width, color=palette[system], alpha=0.8, yerr=[low, high], capsize=3)
        ax.plot(x + offset, [paper["rate"].get(s, np.nan) for s in scenarios], linestyle="", marker="D",
                color="black", markerfacecolor="white", markersize=6)
    ax.set_xticks(x, [str(s) for s in scenarios], rotation=30, ha="right")
    ax.set_ylim(0, 1.04)
    ax.set_ylabel("success rate over all runs")
    ax.set_title("success over all runs (◇: paper)")
    ax.grid(alpha=0.3, axis="y")
