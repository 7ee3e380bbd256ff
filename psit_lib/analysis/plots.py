"""Figure builders shared by the studies; each returns a labelled matplotlib Figure.

Every builder takes the provenance ``label`` (see :mod:`psit_lib.analysis.labels`) and puts
it in the figure footer, so a figure made on the simulator cannot leave the notebook without
saying so.

Figures are created as bare ``matplotlib.figure.Figure`` objects, not through ``pyplot``:
nothing is registered in pyplot's global figure list, so building many figures neither leaks
memory nor makes Jupyter display each one twice (once for the pyplot figure, once for the
returned object). Callers display the returned figure or ``savefig`` it; nothing here calls
``show`` or picks a backend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.lines import Line2D
from matplotlib.ticker import MaxNLocator

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.passk import PASSK_COLUMN_LABELS
from psit_lib.analysis.secrets import secret_summary, top_k

_FOOTER_INCHES = 0.22
_GROUP_SEPARATOR = " · "


def distinct_palette(n: int) -> list:
    """``n`` colours a reader can tell apart: the colour-blind-safe palette up to its 10 colours,
    then tab20 (20 colours), then evenly spaced hues; never a repeated colour."""
    if n <= 10:
        return sns.color_palette("colorblind", max(n, 1))
    if n <= 20:
        return sns.color_palette("tab20", n)
    return sns.color_palette("husl", n)


_OUTSIDE_RIGHT: dict[str, Literal["outside right upper", "outside right center", "outside right lower"]] = {
    "upper": "outside right upper", "center": "outside right center", "lower": "outside right lower"}


def legend_outside(fig: Figure, ax, *, title: str | None = None, handles=None, labels=None,
                   where: Literal["upper", "center", "lower"] = "upper") -> None:
    """Move a legend out of the data area to the figure's right edge (constrained layout makes
    room, so nothing is drawn over the data or cut off when the figure is saved)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if ax.get_legend() is not None:
        ax.get_legend().remove()
    if handles:
        fig.legend(handles, labels, title=title, loc=_OUTSIDE_RIGHT[where], fontsize=8, frameon=False,
                   title_fontsize=9)


def needs_rotation(levels: Sequence) -> bool:
    """Tilt tick labels when they would collide: many bars, or long names."""
    return len(levels) > 4 or sum(len(str(level)) for level in levels) > 8 * len(levels) + 12


def new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure whose layout leaves a strip at the bottom for the provenance footer."""
    bottom = min(0.2, _FOOTER_INCHES / height)
    engine = ConstrainedLayoutEngine(rect=(0.0, bottom, 1.0, 1.0 - bottom))
    return Figure(figsize=(width, height), layout=engine)


#: What a figure says when its table has nothing to draw (no scored episode or turn).
NO_DATA = "no scored data"


def mark_no_data(ax, title: str | None = None, message: str = NO_DATA) -> None:
    """Say on ``ax`` that there is nothing to draw: ``message`` in the middle of the axes and in
    the title (after ``title``), no ticks. Used when every row of a figure's table is missing."""
    ax.text(0.5, 0.5, message, ha="center", va="center", transform=ax.transAxes, fontsize=11, color="dimgray")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(f"{title} ({message})" if title else message, fontsize=10 if title else None)


def no_data_figure(label: str, title: str | None = None, *, message: str = NO_DATA,
                   width: float = 6.0, height: float = 3.0) -> Figure:
    """A labelled figure with one empty axes that says there is nothing to show (see
    :func:`mark_no_data`): what a figure builder returns when its table has no scored rows."""
    fig = new_figure(width, height)
    mark_no_data(fig.add_subplot(), title, message)
    return label_figure(fig, label)


def has_values(df: pd.DataFrame, columns: Sequence[str]) -> bool:
    """Whether ``df`` has a row with a (finite or infinite, not NaN) value in one of ``columns``."""
    present = [c for c in columns if c in df.columns]
    return bool(len(df)) and bool(present) and bool(df[present].apply(pd.to_numeric, errors="coerce").notna().to_numpy().any())


def require_columns(df: pd.DataFrame, columns: Sequence[str | None], where: str) -> None:
    missing = [c for c in columns if c is not None and c not in df.columns]
    if missing:
        raise ValueError(f"{where}: the table has no column(s) {missing!r}; it has {list(df.columns)!r}.")


def as_columns(cols: str | Sequence[str] | None) -> list[str]:
    if cols is None:
        return []
    return [cols] if isinstance(cols, str) else list(cols)


def joined_labels(df: pd.DataFrame, cols: Sequence[str]) -> pd.Series:
    """One display string per row from one or more columns (e.g. "hangman · gpt-oss-20b")."""
    if not cols:
        return pd.Series(["all"] * len(df), index=df.index)
    if df.empty:
        return pd.Series([], index=df.index, dtype=object)
    return df[list(cols)].astype(str).agg(_GROUP_SEPARATOR.join, axis=1)


def ordered_levels(values: pd.Series, order: Sequence | None) -> list:
    present = list(dict.fromkeys(values.tolist()))
    if order is None:
        return present
    return [level for level in order if level in set(present)] + [v for v in present if v not in set(order)]


def plot_rate_intervals(
    rate_df: pd.DataFrame,
    x: str | Sequence[str],
    label: str,
    *,
    hue: str | None = None,
    y: str = "rate",
    low: str = "wilson_low",
    high: str = "wilson_high",
    title: str = "Self-consistency rate (Wilson 95% interval)",
    ylabel: str = "self-consistency rate",
) -> Figure:
    """Point estimates with interval error bars, one point per row of ``rate_df`` (see ``rate_table``).

    ``hue`` levels are dodged side by side within each ``x`` category. A table without a value
    of ``y`` (nothing scored) gives a figure that says "no scored data".
    """
    x_cols = as_columns(x)
    require_columns(rate_df, [*x_cols, hue, y, low, high], "plot_rate_intervals")
    if not has_values(rate_df, [y]):
        fig = no_data_figure(label, title, width=6.0, height=4.5)
        fig.axes[0].set_ylabel(ylabel)
        return fig
    x_values = joined_labels(rate_df, x_cols)
    x_levels = ordered_levels(x_values, None)
    hue_values = rate_df[hue].astype(str) if hue else pd.Series([""] * len(rate_df), index=rate_df.index)
    hue_levels = ordered_levels(hue_values, None)
    palette = distinct_palette(len(hue_levels))
    width = 0.7
    step = width / len(hue_levels)

    fig = new_figure(min(11.0, max(5.0, 0.8 * len(x_levels) * max(1, len(hue_levels) / 2) + 3.0)), 4.5)
    ax = fig.add_subplot()
    x_index = {level: i for i, level in enumerate(x_levels)}
    for h, level in enumerate(hue_levels):
        rows = rate_df[hue_values == level]
        xs = np.array([x_index[v] for v in x_values[hue_values == level]]) - width / 2 + step * (h + 0.5)
        rate = rows[y].to_numpy(dtype=float)
        yerr = np.vstack([rate - rows[low].to_numpy(dtype=float), rows[high].to_numpy(dtype=float) - rate])
        ax.errorbar(xs, rate, yerr=np.clip(yerr, 0, None), fmt="o", capsize=3, color=palette[h], label=level or None)
    rotate = needs_rotation(x_levels)
    ax.set_xticks(range(len(x_levels)), x_levels, rotation=30 if rotate else 0, ha="right" if rotate else "center")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if hue:
        legend_outside(fig, ax, title=hue)
    ax.grid(axis="y", alpha=0.3)
    return label_figure(fig, label)


def plot_state_size(
    df: pd.DataFrame,
    x: str = "turn",
    y: str = "tokens",
    hue: str = "agent",
    *,
    label: str,
    title: str = "Private state size per turn (mean, 95% CI)",
    n_boot: int = 1000,
    seed: int = 0,
) -> Figure:
    """Mean private-state size per turn with bootstrap 95% bands, on a log y axis.

    A log axis cannot show zero, yet a vanilla agent's private state is exactly 0 tokens; when
    zeros occur the axis is symmetric-log (linear below 1 token, logarithmic above) and says so.
    With no row (no finished episode) the figure says "no scored data".
    """
    require_columns(df, [x, y, hue], "plot_state_size")
    values = df[y].astype(float)
    if (values < 0).any():
        raise ValueError(f"plot_state_size: column {y!r} has negative sizes.")
    if not has_values(df, [y]):
        fig = no_data_figure(label, title, width=8.0, height=4.5)
        fig.axes[0].set_ylabel(y)
        return fig
    fig = new_figure(8.0, 4.5)
    ax = fig.add_subplot()
    levels = ordered_levels(df[hue], None)
    sns.lineplot(
        data=df, x=x, y=y, hue=hue, hue_order=levels, errorbar=("ci", 95), n_boot=n_boot, seed=seed,
        marker="o", ax=ax, palette=distinct_palette(len(levels)),
    )
    legend_outside(fig, ax, title=hue)
    if (values > 0).all():
        ax.set_yscale("log")
        ax.set_ylabel(f"{y} (log scale)")
    else:
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylim(bottom=0)
        ax.set_ylabel(f"{y} (symlog: linear below 1, log above)")
    if pd.api.types.is_integer_dtype(df[x]):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    return label_figure(fig, label)


def plot_topk_facets(
    df: pd.DataFrame,
    *,
    label: str,
    secret_col: str = "secret",
    facet_col: str | Sequence[str] = ("task", "model"),
    k: int = 10,
    col_wrap: int = 3,
    title: str = "Most frequent revealed secrets",
) -> Figure:
    """Top-``k`` revealed secrets as horizontal share bars, one panel per facet (e.g. task · model).

    Missing secrets (unparseable reveals) are left out; each panel states how many reveals it
    counts.
    """
    facet_cols = as_columns(facet_col)
    require_columns(df, [*facet_cols, secret_col], "plot_topk_facets")
    if col_wrap < 1:
        raise ValueError(f"col_wrap must be at least 1, got {col_wrap!r}.")
    facets = joined_labels(df, facet_cols)
    levels = ordered_levels(facets, None) or ["(no data)"]
    ncols = min(col_wrap, len(levels))
    nrows = math.ceil(len(levels) / ncols)
    fig = new_figure(3.6 * ncols, 0.25 * k * nrows + 1.2 * nrows + 0.5)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    colour = sns.color_palette("colorblind")[0]
    for ax, level in zip(axes, levels):
        secrets = df.loc[facets == level, secret_col].dropna().tolist()
        ax.set_title(f"{level} (n={len(secrets)})", fontsize=9)
        if not secrets:
            ax.text(0.5, 0.5, "no revealed secrets", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        table = top_k(secrets, k)
        ax.barh(table["secret"].astype(str), table["share"], color=colour)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("share of reveals", fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes[len(levels):]:
        ax.set_visible(False)
    fig.suptitle(title if df[secret_col].notna().any() else f"{title} ({NO_DATA})")
    return label_figure(fig, label)


_ENTROPY_METRICS = {
    "entropy": "entropy of revealed secrets (bits)",
    "effective_number": "effective number of secrets",
    "top_share": "share of the most frequent secret",
    "normalised_entropy": "normalised entropy",
}


def plot_entropy_vs_temperature(
    df: pd.DataFrame,
    *,
    label: str,
    temperature_col: str = "temperature",
    secret_col: str = "secret",
    hue: str | Sequence[str] | None = "model",
    metric: str = "entropy",
    domain_size: int | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    title: str = "Secret spread vs sampling temperature",
) -> Figure:
    """A spread metric of the revealed secrets against temperature, one line per ``hue`` level.

    Mode collapse shows as entropy (or effective number) falling as temperature drops. Error
    bars are centred bootstrap 95% intervals from :func:`secret_summary` (none for normalised
    entropy); for entropy a dashed line marks log2 n, the most n samples can show. Without a
    readable secret the figure says "no scored data".
    """
    if metric not in _ENTROPY_METRICS:
        raise ValueError(f"metric must be one of {sorted(_ENTROPY_METRICS)}, got {metric!r}.")
    if metric == "normalised_entropy" and domain_size is None:
        raise ValueError("metric='normalised_entropy' needs domain_size.")
    hue_cols = as_columns(hue)
    require_columns(df, [*hue_cols, temperature_col, secret_col], "plot_entropy_vs_temperature")
    data = df.assign(_line=joined_labels(df, hue_cols))
    summary = secret_summary(
        data, ["_line", temperature_col], secret_col, domain_size=domain_size, n_boot=n_boot, seed=seed
    )
    if not (summary["n"] > 0).any():  # no readable secret anywhere: nothing to draw
        fig = no_data_figure(label, title, width=6.0, height=4.5)
        fig.axes[0].set_xlabel(temperature_col)
        fig.axes[0].set_ylabel(_ENTROPY_METRICS[metric])
        return fig
    lines = ordered_levels(data["_line"], None)
    palette = distinct_palette(len(lines))
    fig = new_figure(6.0, 4.5)
    ax = fig.add_subplot()
    for colour, line in zip(palette, lines):
        rows = summary[(summary["_line"] == line) & (summary["n"] > 0)].sort_values(temperature_col)
        values = rows[metric].to_numpy(dtype=float)
        if f"{metric}_low" in rows.columns:
            yerr = np.vstack([values - rows[f"{metric}_low"].to_numpy(dtype=float), rows[f"{metric}_high"].to_numpy(dtype=float) - values])
            yerr = np.clip(yerr, 0, None)
        else:
            yerr = None
        ax.errorbar(rows[temperature_col], values, yerr=yerr, marker="o", capsize=3, color=colour,
                    label=line if hue_cols else None)
    if metric == "entropy":
        ceilings = summary.loc[summary["n"] > 0, "entropy_ceiling"].unique()
        if len(ceilings) == 1:  # one sample size: show how high n samples could possibly go
            ax.axhline(ceilings[0], ls="--", lw=1, color="grey")
            ax.annotate(f"log2 n = {ceilings[0]:.2f} (ceiling at this sample size)", (0.01, ceilings[0]),
                        xycoords=("axes fraction", "data"), va="bottom", fontsize=7, color="grey")
    ax.set_xlabel(temperature_col)
    ax.set_ylabel(_ENTROPY_METRICS[metric])
    ax.set_title(title)
    if hue_cols:
        ax.legend()
        legend_outside(fig, ax, title=_GROUP_SEPARATOR.join(hue_cols))
    ax.grid(alpha=0.3)
    return label_figure(fig, label)


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
    palette = distinct_palette(len(groups))
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
