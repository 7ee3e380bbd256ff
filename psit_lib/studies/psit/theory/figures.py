"""Figures of notebook 01: the theorem of SPEC §0 drawn from exact computation, before any model.

They carry :data:`THEORY_LABEL` in their provenance footer and, like :mod:`psit_lib.analysis.plots`,
are bare ``Figure`` objects built without pyplot; their tables come from
:mod:`psit_lib.studies.psit.theory.figure_data`.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.plots import legend_outside, new_figure as _new_figure, require_columns as _require
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, OUTCOME_LABELS, Outcome
from psit_lib.studies.psit.theory.figure_data import THEORY_LABEL, theory_label
from psit_lib.studies.psit.theory.fork_exact import FORK_OUTCOMES, p_self_consistent_uniform

def plot_set_sizes(
    bands: pd.DataFrame,
    *,
    label: str = THEORY_LABEL,
    t_fork: int | None = None,
    title: str = "How fast the public record narrows the secret down",
) -> Figure:
    """Median |C_t| per turn with 50% and 80% bands across seeded games, on a log axis.

    ``bands`` is :func:`~psit_lib.studies.psit.theory.figure_data.size_quantiles`' table. A dashed line
    marks |C_t| = 1 (the secret is pinned down) and, with ``t_fork``, a vertical line the fork.
    """
    colour = sns.color_palette("colorblind")[0]
    fig = _new_figure(6.5, 4.5)
    ax = fig.add_subplot()
    turns = bands["turn"]
    ax.fill_between(turns, bands["q0.1"], bands["q0.9"], color=colour, alpha=0.15, label="10-90% of games")
    ax.fill_between(turns, bands["q0.25"], bands["q0.75"], color=colour, alpha=0.3, label="25-75% of games")
    ax.plot(turns, bands["q0.5"], "-o", color=colour, label="median")
    ax.axhline(1, color="dimgray", linestyle="--", linewidth=1)
    ax.text(turns.iloc[-1], 1.08, "secret pinned down (|C_t| = 1)", ha="right", va="bottom", fontsize=8, color="dimgray")
    if t_fork is not None:
        ax.axvline(t_fork, color="black", linestyle=":", linewidth=1)
        ax.text(t_fork, float(bands["q0.9"].max()), " fork (t_fork)", fontsize=8, va="top")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xticks(turns, [f"{t}\n{n}" for t, n in zip(turns, bands["running"])], fontsize=8)
    ax.set_xlabel("guesses played t  (below: games still being played)")
    ax.set_ylabel("|C_t|: words compatible with the public record (log)")
    n_games = int(bands["games"].iloc[0])
    ax.set_title(f"{title}\n({n_games} seeded games; a finished game keeps its last |C_t|)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    ax.grid(alpha=0.3, which="both")
    return label_figure(fig, label)


def plot_consistency_vs_size(
    uniform_points: pd.DataFrame,
    *,
    k: int,
    weighted_exact: pd.DataFrame | None = None,
    weighted_points: pd.DataFrame | None = None,
    label: str | None = None,
    title: str = "P(self-consistent) of a re-imagining POCA vs |C_t|",
) -> Figure:
    """P(self-consistent) against |C_t| (log x axis) for the re-imagining POCA.

    - black line: the closed form (1/n)(1 - 1/n)^(min(k, n) - 1) for uniform choice;
    - black circles: ``uniform_points`` (:func:`~psit_lib.studies.psit.theory.self_consistency_points`),
      Monte Carlo with Wilson intervals;
    - per temperature, faint dots: ``weighted_exact`` (exact value on each real set), a line
      through their median per size bin, and squares with Wilson intervals for
      ``weighted_points``.
    The footer defaults to :func:`theory_label` with the Monte-Carlo note.
    """
    _require(uniform_points, ["size", "rate", "wilson_low", "wilson_high"], "plot_consistency_vs_size")
    tables = [table for table in (weighted_exact, weighted_points) if table is not None and not table.empty]
    for table in tables:
        _require(table, ["temperature", "size"], "plot_consistency_vs_size")
    largest = max([int(s) for s in uniform_points["size"]] + [int(table["size"].max()) for table in tables])
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    grid = np.unique(np.round(np.geomspace(1, max(largest, 2), 200)).astype(int))
    ax.plot(grid, [p_self_consistent_uniform(int(n), k) for n in grid], "-", color="black",
            label=f"uniform choice: exact (1/n)(1-1/n)^(min(k,n)-1), k={k}")
    rate = uniform_points["rate"].to_numpy(dtype=float)
    yerr = np.clip(np.vstack([rate - uniform_points["wilson_low"], uniform_points["wilson_high"] - rate]), 0, None)
    ax.errorbar(uniform_points["size"], rate, yerr=yerr, fmt="o", color="black", capsize=3, markersize=5,
                label="uniform choice: Monte Carlo (Wilson 95%)")
    temperatures = list(dict.fromkeys(t for table in tables for t in table["temperature"].tolist()))
    palette = sns.color_palette("colorblind", len(temperatures) + 1)[1:]
    for colour, temperature in zip(palette, temperatures):
        if weighted_exact is not None and not weighted_exact.empty:
            rows = weighted_exact[weighted_exact["temperature"] == temperature]
            ax.scatter(rows["size"], rows["exact"], s=7, color=colour, alpha=0.25, linewidths=0)
            medians = rows["exact"].groupby(np.round(np.log2(rows["size"].to_numpy(dtype=float)) * 2) / 2).median()
            ax.plot(2 ** medians.index.to_numpy(), medians.to_numpy(), "-", color=colour, linewidth=2,
                    label=f"frequency^(1/T), T={temperature:g}: exact on real sets (dots), median (line)")
        if weighted_points is not None and not weighted_points.empty:
            _require(weighted_points, ["rate", "wilson_low", "wilson_high"], "plot_consistency_vs_size")
            rows = weighted_points[weighted_points["temperature"] == temperature]
            rate = rows["rate"].to_numpy(dtype=float)
            yerr = np.clip(np.vstack([rate - rows["wilson_low"], rows["wilson_high"] - rate]), 0, None)
            ax.errorbar(rows["size"], rate, yerr=yerr, fmt="s", color=colour, markeredgecolor="black",
                        capsize=3, markersize=5, label=f"T={temperature:g}: Monte Carlo (Wilson 95%)")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("|C_t|: words compatible with the public history (log)")
    ax.set_ylabel("P(self-consistent)")
    ax.set_title(title, fontsize=11)
    legend_outside(fig, ax)
    ax.grid(alpha=0.3, which="both")
    return label_figure(fig, label if label is not None else theory_label(monte_carlo=True))


def plot_policy_outcomes(
    policy_df: pd.DataFrame,
    *,
    label: str | None = None,
    title: str = "Fork-test outcomes of idealised hosts: exact vs Monte Carlo",
) -> Figure:
    """Per policy, two stacked bars of the outcome mix: exact (solid) and Monte Carlo (hatched).

    ``policy_df`` is the table of :func:`~psit_lib.studies.psit.theory.policy_table` (possibly several
    concatenated). The Monte-Carlo bar carries the Wilson interval of its self-consistent share.
    """
    _require(policy_df, ["policy", "outcome", "exact", "simulated", "episodes", "wilson_low", "wilson_high"],
             "plot_policy_outcomes")
    policies = list(dict.fromkeys(policy_df["policy"]))
    fig = _new_figure(max(6.0, 1.6 * len(policies) + 2.5), 4.8)
    ax = fig.add_subplot()
    width = 0.36
    for i, policy in enumerate(policies):
        rows = policy_df[policy_df["policy"] == policy].set_index("outcome")
        for offset, column, hatch in ((-0.2, "exact", None), (0.2, "simulated", "///")):
            bottom = 0.0
            for outcome in FORK_OUTCOMES:
                share = float(rows.loc[outcome.value, column]) if outcome.value in rows.index else 0.0
                ax.bar(i + offset, share, bottom=bottom, width=width, color=OUTCOME_COLOURS[outcome],
                       hatch=hatch, edgecolor="white", linewidth=0.5)
                bottom += share
        sc = rows.loc[Outcome.SELF_CONSISTENT.value]
        ax.errorbar(i + 0.2, sc["simulated"],
                    yerr=[[max(0.0, sc["simulated"] - sc["wilson_low"])], [max(0.0, sc["wilson_high"] - sc["simulated"])]],
                    fmt="none", ecolor="black", capsize=3)
        ax.text(i, -0.1, policy, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=9)
    positions = [i + offset for i in range(len(policies)) for offset in (-0.2, 0.2)]
    episodes = int(policy_df["episodes"].iloc[0])
    ax.set_xticks(positions, ["exact", "MC"] * len(policies), fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of fork episodes")
    ax.set_title(f"{title}\n(MC: {episodes} seeded episodes per host; bar = Wilson 95% for self-consistent)", fontsize=10)
    handles = [Patch(color=OUTCOME_COLOURS[o], label=OUTCOME_LABELS[o]) for o in FORK_OUTCOMES]
    handles += [Patch(facecolor="white", edgecolor="gray", label="exact"),
                Patch(facecolor="white", edgecolor="gray", hatch="///", label="Monte Carlo")]
    legend_outside(fig, ax, handles=handles, labels=[h.get_label() for h in handles])
    return label_figure(fig, label if label is not None else theory_label(monte_carlo=True))


def plot_fork_diagram(*, t_fork: int, k: int, label: str = THEORY_LABEL,
                      title: str = "The self-consistency fork test") -> Figure:
    """The schematic of SPEC §1: opening and ``t_fork`` turns, one checkpoint, then the reveal
    branch and ``k`` yes/no branches side by side."""
    if t_fork < 0 or k < 1:
        raise ValueError(f"Need t_fork >= 0 and k >= 1, got t_fork={t_fork}, k={k}.")
    n_rows = k + 1
    fig = _new_figure(1.1 * (t_fork + 1) + 5.5, 0.5 * n_rows + 1.6)
    ax = fig.add_subplot()
    ax.set_axis_off()
    box = dict(boxstyle="round,pad=0.35", fc="#f2f2f2", ec="gray")
    history_x = [1.3 * i for i in range(t_fork + 1)]
    for i, x in enumerate(history_x):
        text = "opening\n(host asked to\npick privately)" if i == 0 else f"turn {i}\nguess"
        ax.text(x, 0, text, ha="center", va="center", fontsize=8, bbox=box)
        if i:
            ax.annotate("", xy=(x - 0.45, 0), xytext=(history_x[i - 1] + 0.45, 0),
                        arrowprops=dict(arrowstyle="->", color="gray"))
    fork_x = history_x[-1] + 1.2
    ax.annotate("", xy=(fork_x - 0.12, 0), xytext=(history_x[-1] + 0.45, 0), arrowprops=dict(arrowstyle="->", color="gray"))
    ax.plot([fork_x], [0], marker="D", markersize=11, color="black")
    ax.text(fork_x, -0.45, "checkpoint\n(state at the fork)", ha="center", va="top", fontsize=7)
    branch_x = fork_x + 1.6
    ys = [(n_rows - 1) / 2 - row for row in range(n_rows)]
    for row, y in enumerate(ys):
        ax.annotate("", xy=(branch_x - 0.05, y), xytext=(fork_x + 0.12, 0),
                    arrowprops=dict(arrowstyle="->", color="black", connectionstyle="arc3,rad=0"))
        if row == 0:
            text = "reveal: \"answer with the word only\"  →  r"
            style = dict(boxstyle="round,pad=0.3", fc="#fff2cc", ec="#b38f00")
        else:
            text = "is it r? yes/no" if row == 1 else f"is it c{row - 1}? yes/no"
            style = dict(boxstyle="round,pad=0.3", fc="white", ec="gray")
        ax.text(branch_x, y, text, ha="left", va="center", fontsize=8, bbox=style)
    ax.text(branch_x, ys[-1] - 0.75, f"1 reveal + {k} yes/no branches, each from the identical checkpoint;\n"
            "no branch sees another (the first candidate is the revealed word r)", ha="left", va="top", fontsize=7,
            color="dimgray")
    ax.set_xlim(-0.8, branch_x + 4.2)
    ax.set_ylim(ys[-1] - 1.3, ys[0] + 0.6)
    ax.set_title(title, fontsize=11)
    return label_figure(fig, label)
