"""Figure builders shared by the studies; each returns a matplotlib Figure with the provenance ``label`` as footer.

Bare ``Figure`` objects, not pyplot's: nothing is registered globally, so many figures neither leak memory nor show twice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.ticker import MaxNLocator

from psit_lib.analysis.labels import label_figure
from psit_lib.analysis.stats import as_columns, require_columns

_FOOTER_INCHES = 0.22
GROUP_SEPARATOR = " · "


AGENT_COLOURS: dict[str, str] = {
    "vanilla": "#7f7f7f",                   # grey: the baseline without private state
    "private_cot": "#0072b2",               # blue
    "workflow_overwrite": "#009e73",        # green
    "workflow_append_delete": "#e69f00",    # orange
    "workflow_patch_replace": "#d55e00",    # vermillion
    "autonomous_overwrite": "#cc79a7",      # pink
    "autonomous_append_delete": "#56b4e9",  # sky blue
    "autonomous_patch_replace": "#999933",  # olive
    "mem0": "#882255",                      # wine
    "amem": "#6a3d9a",                      # violet
    "lightmem": "#8c510a",                  # brown
    "memoryos": "#000000",                  # black
}
"""One colour per agent of the workbook, the same in every figure of every notebook, so a reader
follows an agent from figure to figure. Twelve colours chosen to stay apart at twelve agents
(Okabe-Ito's eight plus four dark tones; tests check the smallest CIELAB distance)."""

_EXTRA_COLOURS = ("#1b9e77", "#e7298a", "#66a61e", "#a6761d", "#386cb0", "#f0027f", "#bf5b17", "#666666",
                  "#7570b3", "#d95f02", "#1f78b4", "#b15928")


def agent_palette(names: Sequence[object]) -> dict[str, str]:
    """``{name: colour}`` for ``names`` (agents, or any other series of a figure): a workbook agent
    always gets its :data:`AGENT_COLOURS` colour; other names take, in sorted order, the first
    colours not already used in the figure (so the same set of names is coloured the same way in
    every figure); never a repeated colour."""
    keys = [str(name) for name in dict.fromkeys(names)]
    colours = {name: AGENT_COLOURS[name] for name in keys if name in AGENT_COLOURS}
    unknown = sorted(name for name in keys if name not in colours)
    spare = [c for c in (*_EXTRA_COLOURS, *AGENT_COLOURS.values()) if c not in set(colours.values())]
    if len(unknown) > len(spare):
        spare += [_hex(c) for c in sns.color_palette("husl", len(unknown) - len(spare))]
    colours.update(zip(unknown, spare))
    return {name: colours[name] for name in keys}


def agent_colours(names: Sequence[object]) -> list[str]:
    """The colours of :func:`agent_palette` as a list in the order of ``names``."""
    palette = agent_palette(names)
    return [palette[str(name)] for name in names]


def _hex(colour: Sequence[float]) -> str:
    return "#" + "".join(f"{round(255 * c):02x}" for c in colour[:3])


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


#: Most lines one panel of :func:`plot_state_size` draws; more agents get a panel each.
MAX_LINES = 4

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


def note_figure(label: str, text: str, *, width: float = 8.0) -> Figure:
    """A figure that is one line of text (and its label): what a figure builder returns when the
    run cannot draw it at all, instead of an empty box the size of the figure."""
    fig = Figure(figsize=(width, 0.5))
    fig.text(0.01, 0.62, text, fontsize=9, color="dimgray", va="center", ha="left")
    return label_figure(fig, label)


def has_values(df: pd.DataFrame, columns: Sequence[str]) -> bool:
    """Whether ``df`` has a row with a (finite or infinite, not NaN) value in one of ``columns``."""
    present = [c for c in columns if c in df.columns]
    return bool(len(df)) and bool(present) and bool(df[present].apply(pd.to_numeric, errors="coerce").notna().to_numpy().any())


def joined_labels(df: pd.DataFrame, cols: Sequence[str]) -> pd.Series:
    """One display string per row from one or more columns (e.g. "hangman · gpt-oss-20b")."""
    if not cols:
        return pd.Series(["all"] * len(df), index=df.index)
    if df.empty:
        return pd.Series([], index=df.index, dtype=object)
    return df[list(cols)].astype(str).agg(GROUP_SEPARATOR.join, axis=1)


def ordered_levels(values: pd.Series, order: Sequence | None) -> list:
    present = list(dict.fromkeys(values.tolist()))
    if order is None:
        return present
    return [level for level in order if level in set(present)] + [v for v in present if v not in set(order)]


def count_labels(ax, xs, tops, counts) -> str:
    """Each point's (or bar's) n above it, upright when they stand close; when every one has the
    same n nothing is written on the panel and "n=N each" is returned for its title (one number
    instead of a row of labels that collide with four models)."""
    shown = [(x, top, int(n)) for x, top, n in zip(xs, tops, counts) if top == top and n == n]
    if len(shown) > 1 and len({n for *_, n in shown}) == 1:
        return f"n={shown[0][2]} each"
    crowded = len(shown) > 2.5 * ax.get_figure().get_figwidth()
    for x, top, n in shown:
        ax.annotate(f"n={n}", (x, min(top, 1.0)), xytext=(0, 3), textcoords="offset points", ha="center",
                    va="bottom", fontsize=7, color="dimgray", rotation=90 if crowded else 0)
    if crowded:
        ax.set_ylim(top=1.22)
    return ""


def _titled(title: str, note: str) -> str:
    return f"{title} · {note}" if note else title


def plot_rate_intervals(
    rate_df: pd.DataFrame,
    x: str | Sequence[str],
    label: str,
    *,
    hue: str | None = None,
    facet: str | None = None,
    y: str = "rate",
    low: str = "wilson_low",
    high: str = "wilson_high",
    title: str = "Self-consistency rate (Wilson 95% interval)",
    ylabel: str = "self-consistency rate",
) -> Figure:
    """Point estimates with interval error bars, one per row of ``rate_df`` (``rate_table``): ``hue`` levels dodged
    within each ``x``, one row of panels per ``facet`` value (four models stay readable); no value: "no scored data"."""
    x_cols = as_columns(x)
    require_columns(rate_df, [*x_cols, hue, facet, y, low, high], "plot_rate_intervals")
    if not has_values(rate_df, [y]):
        fig = no_data_figure(label, title, width=6.0, height=4.5)
        fig.axes[0].set_ylabel(ylabel)
        return fig
    x_values = joined_labels(rate_df, x_cols)
    x_levels = ordered_levels(x_values, None)
    hue_values = rate_df[hue].astype(str) if hue else pd.Series([""] * len(rate_df), index=rate_df.index)
    hue_levels = ordered_levels(hue_values, None)
    if hue:
        palette = agent_colours(hue_levels)
    elif x_cols == ["agent"]:
        palette = [agent_palette(x_levels)[v] for v in x_values]  # one colour per agent, every point
    else:
        palette = [AGENT_COLOURS["private_cot"]]
    n_col = next((c for c in ("n_scored", "n") if c in rate_df.columns), None)
    width = 0.7
    step = width / len(hue_levels)
    facets = ordered_levels(rate_df[facet].astype(str), None) if facet else [None]
    fig = new_figure(min(11.0, max(5.0, 0.8 * len(x_levels) * max(1, len(hue_levels) / 2) + 3.0)),
                     0.9 + 3.6 * len(facets))
    axes = fig.subplots(len(facets), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    x_index = {level: i for i, level in enumerate(x_levels)}
    for ax, value in zip(axes, facets):
        in_facet = rate_df[facet].astype(str) == value if facet else pd.Series(True, index=rate_df.index)
        positions, tops, counts = [], [], []
        for h, level in enumerate(hue_levels):
            mask = in_facet & (hue_values == level)
            rows = rate_df[mask]
            xs = np.array([x_index[v] for v in x_values[mask]]) - width / 2 + step * (h + 0.5)
            rate = rows[y].to_numpy(dtype=float)
            yerr = np.clip(np.vstack([rate - rows[low].to_numpy(dtype=float), rows[high].to_numpy(dtype=float) - rate]),
                           0, None)
            if hue or len(palette) == 1:
                ax.errorbar(xs, rate, yerr=yerr, fmt="o", capsize=3, color=palette[h if hue else 0],
                            label=level if hue and ax is axes[0] else None)
            else:
                colours = [c for c, keep in zip(palette, mask) if keep]
                for x_pos, r, err, colour in zip(xs, rate, yerr.T, colours):
                    ax.errorbar([x_pos], [r], yerr=err.reshape(2, 1), fmt="o", capsize=3, color=colour)
            positions += list(xs)
            tops += list(rows[high].to_numpy(dtype=float))
            counts += list(rows[n_col]) if n_col else [float("nan")] * len(rows)
        ax.set_ylim(-0.02, 1.08 if n_col else 1.02)
        note = count_labels(ax, positions, tops, counts)
        ax.set_ylabel(ylabel if value is None else f"{value}\n{ylabel}")
        ax.grid(axis="y", alpha=0.3)
        if value is not None and ax is not axes[0]:
            ax.set_title(_titled(str(value), note), fontsize=10)
        else:
            ax.set_title(_titled(title if value is None else f"{title}\n{value}", note))
    rotate = needs_rotation(x_levels)
    axes[-1].set_xticks(range(len(x_levels)), x_levels, rotation=30 if rotate else 0,
                        ha="right" if rotate else "center")
    axes[-1].set_xlabel(GROUP_SEPARATOR.join(x_cols))
    if hue:
        legend_outside(fig, axes[0], title=hue)
    return label_figure(fig, label)


def mean_interval(n_boot: int, seed: int) -> Callable[[Any], tuple[float, float]]:
    """seaborn's ``errorbar=("ci", 95)`` of a mean as a callable: the same resamples, drawn one at a time from
    ``default_rng(seed)`` as seaborn's bootstrap draws them, but their means taken at once (seaborn takes
    each in Python: about a second of every figure of twelve agents' turns). Integer sizes sum exactly, so
    the interval is seaborn's to the bit."""
    def interval(values: Any) -> tuple[float, float]:
        data = np.asarray(values)
        n = len(data)
        rng = np.random.default_rng(seed)
        picks = np.stack([rng.integers(0, n, n, dtype=np.intp) for _ in range(n_boot)])
        means = (np.nanmean if np.isnan(data.sum()) else np.mean)(data[picks], axis=1)
        low, high = np.nanpercentile(means, (2.5, 97.5))
        return float(low), float(high)

    return interval


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
    """Mean private-state size per turn with bootstrap 95% bands on a log axis; beyond :data:`MAX_LINES` agents, one panel
    each, the others faint. A vanilla agent's state is 0 tokens, which a log axis cannot show: with zeros the axis is
    symlog (linear below 1 token) and starts below 0, so a line at 0 is drawn above the axis."""
    require_columns(df, [x, y, hue], "plot_state_size")
    values = df[y].astype(float)
    if (values < 0).any():
        raise ValueError(f"plot_state_size: column {y!r} has negative sizes.")
    if not has_values(df, [y]):
        fig = no_data_figure(label, title, width=8.0, height=4.5)
        fig.axes[0].set_ylabel(y)
        return fig
    levels = ordered_levels(df[hue], None)
    palette = {level: agent_palette(levels)[str(level)] for level in levels}
    counts = df.groupby([hue, x], observed=True).size().groupby(level=0, observed=True).max()
    named = {level: f"{level} (n={int(counts[level])})" if level in counts.index else str(level) for level in levels}
    line = dict(x=x, y=y, errorbar=mean_interval(n_boot, seed), marker="o")
    if len(levels) <= MAX_LINES:
        fig = new_figure(8.0, 4.5)
        ax = fig.add_subplot()
        sns.lineplot(data=df, hue=hue, hue_order=levels, ax=ax, palette=palette, **line)
        handles, labels = ax.get_legend_handles_labels()
        legend_outside(fig, ax, title=f"{hue} (episodes per point)", handles=handles,
                       labels=[named.get(name, name) for name in labels])
        axes = [ax]
        ax.set_title(title)
    else:
        n_cols = 4
        n_rows = -(-len(levels) // n_cols)
        fig = new_figure(11.0, 0.9 + 2.3 * n_rows)
        grid = fig.subplots(n_rows, n_cols, sharex=True, sharey=True, squeeze=False)
        means = df.groupby([hue, x], observed=True)[y].mean().reset_index()
        axes = list(grid.ravel()[:len(levels)])
        for ax, level in zip(axes, levels):
            for other in levels:  # every agent faint, for scale
                part = means[means[hue] == other]
                ax.plot(part[x], part[y], color="lightgrey", lw=1, zorder=1)
            sns.lineplot(data=df[df[hue] == level], ax=ax, color=palette[level], legend=False, **line)
            ax.set_title(named[level], fontsize=9, color=palette[level])
            ax.set(xlabel="", ylabel="")
        for ax in grid.ravel()[len(levels):]:
            ax.set_visible(False)
        for ax in axes[-n_cols:]:  # the lowest panel of each column shows the turns
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel(x)
        fig.suptitle(f"{title}: one panel per {hue} (episodes per point), the others in grey")
    scale = "log" if (values > 0).all() else "symlog"
    for ax in axes:
        if scale == "log":
            ax.set_yscale("log")
        else:
            ax.set_yscale("symlog", linthresh=1.0)
            ax.set_ylim(bottom=-0.4)
        if pd.api.types.is_integer_dtype(df[x]):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3, which="both")
    ylabel = f"{y} (log scale)" if scale == "log" else f"{y} (symlog: linear below 1, log above)"
    axes[0].set_ylabel(ylabel) if len(axes) == 1 else fig.supylabel(ylabel, fontsize=10)
    return label_figure(fig, label)


def plot_forest(gaps: pd.DataFrame, label: str, *, rows: Sequence[str] = ("task", "model", "comparison"),
                source: str = "source", title: str = "Method − baseline (Newcombe 95%)",
                xlabel: str = "gap in self-consistency (method − baseline)") -> Figure:
    """A forest plot: one line per ``rows`` label, a point with its interval (``gap``, ``low``,
    ``high``) per ``source`` (this run beside the paper), dodged vertically; a line at zero."""
    require_columns(gaps, [*rows, source, "gap", "low", "high"], "plot_forest")
    if not has_values(gaps, ["gap"]):
        return no_data_figure(label, title, width=7.0, height=3.0)
    names = joined_labels(gaps, list(rows))
    levels = ordered_levels(names, None)
    sources = ordered_levels(gaps[source].astype(str), None)
    colours = agent_palette(sources)
    step = 0.7 / max(1, len(sources))
    fig = new_figure(10.0, min(14.0, 1.4 + 0.32 * len(levels) * max(1, len(sources) / 2)))
    ax = fig.add_subplot()
    index = {level: i for i, level in enumerate(levels)}
    for s, name in enumerate(sources):
        part = gaps[gaps[source].astype(str) == name]
        ys = np.array([index[v] for v in names[part.index]]) - 0.35 + step * (s + 0.5)
        gap = part["gap"].to_numpy(dtype=float)
        err = np.vstack([gap - part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float) - gap])
        ax.errorbar(gap, ys, xerr=np.clip(err, 0, None), fmt="o", capsize=2, color=colours[name], label=name)
    ax.axvline(0, color="dimgray", lw=1)
    ax.set_yticks(range(len(levels)), levels)
    ax.invert_yaxis()
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    legend_outside(fig, ax, title=source, where="center")
    return label_figure(fig, label)


def plot_rate_by_size(rates: pd.DataFrame, label: str, *, facet: str = "task",
                      line: Sequence[str] = ("source", "group", "family"),
                      title: str = "Self-consistency against model size within each family (Wilson 95% intervals)",
                      min_sizes: int = 2) -> Figure:
    """Rate against model size (billions of parameters, log axis), one panel per ``facet``, one line
    per ``line`` label (those of its columns the table has: a ``family`` column keeps model families apart,
    so no line joins GPT-OSS to Qwen3); a figure that says so when the run (``source`` "this run") has fewer than
    ``min_sizes`` model sizes."""
    line = [c for c in line if c in rates.columns]
    require_columns(rates, [facet, *line, "size", "rate", "wilson_low", "wilson_high"], "plot_rate_by_size")
    run = rates[rates["source"] == "this run"] if "source" in rates.columns else rates
    sizes = run["size"].nunique()
    if sizes < min_sizes:
        known = "no known size" if sizes == 0 else f"{sizes} known size"
        return note_figure(label, f"{title}: not drawn, this run's models have {known} (the figure needs {min_sizes}).")
    panels = ordered_levels(rates[facet].astype(str), None)
    names = joined_labels(rates, list(line))
    lines = ordered_levels(names, None)
    colours = agent_palette(lines)
    fig = new_figure(4.5 * len(panels) + 2.5, 4.0)
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True)[0]
    for ax, panel in zip(axes, panels):
        for name in lines:
            part = rates[(rates[facet].astype(str) == panel) & (names == name)].sort_values("size")
            if part.empty:
                continue
            rate = part["rate"].to_numpy(dtype=float)
            err = np.vstack([rate - part["wilson_low"].to_numpy(dtype=float),
                             part["wilson_high"].to_numpy(dtype=float) - rate])
            dashed = "paper" in name
            ax.errorbar(part["size"], rate, yerr=np.clip(err, 0, None), fmt="o--" if dashed else "o-", capsize=3,
                        color=colours[name], label=name, alpha=0.7 if dashed else 1.0)
        ax.set_xscale("log")
        sizes = sorted(set(rates["size"]))
        ax.set_xticks(sizes, [f"{v:g}" for v in sizes])
        ax.minorticks_off()
        ax.set_xlabel("model size (billions of parameters, log)")
        ax.set_title(panel)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("rate")
    fig.suptitle(title)
    legend_outside(fig, axes[-1], title=GROUP_SEPARATOR.join(line))
    return label_figure(fig, label)
