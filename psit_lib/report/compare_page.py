"""Runs side by side on one offline page (``psit compare A B --html``): per shared notebook, what the configurations
set differently and, per saved rate table, each series' (run · model) rates with Wilson intervals and their difference
from the first series with Newcombe intervals."""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from psit_lib.analysis.stats import wilson_interval
from psit_lib.analysis.sweeps import proportion_gap
from psit_lib.runs.folder import RunFolder, notebooks_with_metadata

from .page_head import html_page

COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")
MARKERS = ("o", "s", "^", "D", "v", "P")
RATE_COLUMNS = ("successes", "n_scored")
SERIES_COLUMN = "model"  # a run's cells are split by model: each (run, model) is one series
CONFIG_KEYS = ("backend", "model", "profile", "seed", "simulated", "git_commit", "python")


@dataclass(frozen=True)
class Run:
    label: str  # "A", "B", ...
    path: Path


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def configuration(folder: Path) -> dict[str, Any]:
    """A notebook folder's configuration, flat: its parameters and what its metadata records
    (settings, simulator, prompt fingerprints, package versions); ``psit compare`` reads it too."""
    run = RunFolder(folder)
    meta = run.metadata()
    flat: dict[str, Any] = {}
    _flatten("param", run.params().stored(), flat)
    _flatten("", {k: getattr(meta, k) for k in CONFIG_KEYS}, flat)
    _flatten("simulator", meta.simulator or {}, flat)
    _flatten("prompts", meta.prompts, flat)
    _flatten("packages", meta.packages, flat)
    return flat


def config_differences(folders: list[Path]) -> pd.DataFrame:
    """Keys whose value differs between any of the folders, one column per folder."""
    configs = [configuration(f) for f in folders]
    keys = sorted({k for c in configs for k in c})
    rows = [[k, *(str(c.get(k, "—")) for c in configs)] for k in keys
            if len({repr(c.get(k, "—")) for c in configs}) > 1]
    return pd.DataFrame(rows, columns=["setting", *(str(i) for i in range(len(folders)))])


def rate_series(runs: list[Run], notebook: str, table: str) -> pd.DataFrame:
    """One row per (series, cell) of a rate table across runs: series, cell, k, n, rate, Wilson."""
    rows = []
    for run in runs:
        frame = pd.read_csv(RunFolder(run.path / notebook).tables_dir / table)
        keys = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
                and c not in (SERIES_COLUMN, "source")]
        keys = [c for c in keys if frame[c].nunique() > 1] or keys  # a column with one value names no cell
        for _, r in frame.iterrows():
            k, n = r["successes"], r["n_scored"]
            if k != k or n != n or int(n) == 0:
                continue
            low, high = wilson_interval(int(k), int(n))
            series = f"{run.label} · {r[SERIES_COLUMN]}" if SERIES_COLUMN in frame.columns else run.label
            rows.append({"series": series, "cell": " · ".join(str(r[c]) for c in keys), "k": int(k), "n": int(n),
                         "rate": int(k) / int(n), "low": low, "high": high})
    return pd.DataFrame(rows, columns=["series", "cell", "k", "n", "rate", "low", "high"])


def differences(series: pd.DataFrame) -> pd.DataFrame:
    """Each series' rate minus the first series' per cell, with the Newcombe 95% interval."""
    names = list(dict.fromkeys(series["series"]))
    if len(names) < 2:
        return pd.DataFrame(columns=["series", "cell", "difference", "low", "high"])
    base = series[series.series == names[0]].set_index("cell")
    rows = []
    for name in names[1:]:
        for _, r in series[series.series == name].iterrows():
            if r["cell"] not in base.index:
                continue
            b = base.loc[r["cell"]]
            gap, low, high = proportion_gap(int(r["k"]), int(r["n"]), int(b["k"]), int(b["n"]))
            rows.append({"series": name, "cell": r["cell"], "difference": gap, "low": low, "high": high})
    return pd.DataFrame(rows, columns=["series", "cell", "difference", "low", "high"])


def dot_plot_figure(series: pd.DataFrame, diffs: pd.DataFrame, label: str | None = None) -> Any:
    """The overlaid dot plot and the differences (a matplotlib figure, laid out), with ``label``
    (which backends and models made the series) as its footer."""
    import matplotlib.pyplot as plt

    from psit_lib.analysis.labels import label_figure

    names = list(dict.fromkeys(series["series"]))
    cells = list(dict.fromkeys(series["cell"]))
    height = 1.2 + 0.42 * len(cells) * max(1.0, len(names) / 2)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, height), sharey=True,
                                      gridspec_kw={"width_ratios": [3, 2]}, constrained_layout=True)
    step = 0.7 / max(len(names), 1)
    y_of = {c: i for i, c in enumerate(cells)}
    for j, name in enumerate(names):
        part = series[series.series == name]
        offset = (j - (len(names) - 1) / 2) * step
        ys = [y_of[c] + offset for c in part.cell]
        colour, marker = COLOURS[j % len(COLOURS)], MARKERS[j % len(MARKERS)]
        left.errorbar(part.rate, ys, xerr=[part.rate - part.low, part.high - part.rate], fmt=marker, color=colour,
                      capsize=2, markersize=5, label=name)
        gap = diffs[diffs.series == name]
        if len(gap):
            gys = [y_of[c] + offset for c in gap.cell]
            right.errorbar(gap.difference, gys, xerr=[gap.difference - gap.low, gap.high - gap.difference],
                           fmt=marker, color=colour, capsize=2, markersize=5)
    left.set_yticks(range(len(cells)), cells)
    left.invert_yaxis()
    left.set_xlim(-0.02, 1.02)
    left.set_xlabel("rate (Wilson 95% interval)")
    left.set_ylabel("cell")
    left.set_title("Rate per cell", fontsize=10, loc="left")
    right.axvline(0, color="#999", lw=0.8)
    right.set_xlim(-1.05, 1.05)
    right.set_xlabel(f"difference from {names[0]}\n(Newcombe 95%)")
    right.set_title("Difference per cell", fontsize=10, loc="left")
    for axis in (left, right):
        axis.grid(axis="x", color="#eee")
    fig.legend(loc="outside upper center", ncol=min(len(names), 2 if max(map(len, names)) > 40 else 4),
               frameon=False, fontsize=9)
    if label:  # the footer gets a band of its own (constrained layout leaves figure texts out); the legend is on top
        fig.get_layout_engine().set(rect=(0, 14 / (72 * height), 1, 1 - 14 / (72 * height)))  # type: ignore[call-arg,union-attr]
        label_figure(fig, label)
    fig.canvas.draw()
    return fig


def dot_plot(series: pd.DataFrame, diffs: pd.DataFrame, label: str | None = None, alt: str = "") -> str:
    """:func:`dot_plot_figure` as an ``<img>`` carrying the figure's metadata (its text boxes, for
    the same overlap check as every notebook figure)."""
    import matplotlib.pyplot as plt

    from psit_lib.analysis.labels import FIGURE_METADATA_KEY, figure_panels, figure_provenance, text_boxes

    fig = dot_plot_figure(series, diffs, label)
    meta = {"provenance": figure_provenance(fig), "panels": figure_panels(fig), "text": text_boxes(fig)}
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    src = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
    return (f"<img class='psit-compare-figure' alt='{html.escape(alt)}' src='{src}' "
            f"data-{FIGURE_METADATA_KEY.replace('_', '-')}='{html.escape(json.dumps(meta, ensure_ascii=False), quote=True)}'>")


def series_label(runs: list[Run]) -> str:
    """The compare figure's footer: each run's backend and models (every figure says who made it)."""
    from .runs_index import run_entry

    parts = []
    for run in runs:
        entry = run_entry(run.path)
        backends = sorted({str(RunFolder(run.path / nb).metadata().backend or "?") for nb in entry.notebooks})
        parts.append(f"{run.label}: backend={'/'.join(backends)} · model={', '.join(entry.models) or '?'}")
    return " | ".join(parts)


def _table_html(frame: pd.DataFrame, caption: str) -> str:
    def cell(v: Any) -> str:
        return f"{v:.3g}" if isinstance(v, float) else html.escape(str(v))

    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in frame.itertuples(index=False))
    return f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _run_summary(run: Run) -> dict[str, str]:
    from .runs_index import run_entry

    entry = run_entry(run.path)
    return {"run": f"{run.label} = {entry.run_id}", "date": entry.date, "commit": entry.commit,
            "models": ", ".join(entry.models), "notebooks": " ".join(n.split("_", 1)[0] for n in entry.notebooks),
            "status": entry.status}


_STYLE = """
table { margin: 0.5em 0 1.2em; font-size: 0.85em; }
th, td { padding: 0.3em 0.6em; overflow-wrap: break-word; }
caption { text-align: left; color: #444; padding-bottom: 0.3em; }
img.psit-compare-figure { max-width: 100%; height: auto; display: block; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #dde; }
"""


def compare_html(paths: list[Path]) -> str:
    """The page comparing the runs in ``paths`` (labelled A, B, C, ... in order); one run's page
    compares its models."""
    runs = [Run(chr(ord("A") + i), p) for i, p in enumerate(paths)]
    parts = ["<h1>Runs side by side</h1>",
             _table_html(pd.DataFrame([_run_summary(r) for r in runs]), "The runs compared")]
    holders: dict[str, list[Run]] = {}
    for run in runs:
        for nb in notebooks_with_metadata(run.path):
            holders.setdefault(nb, []).append(run)
    # one run: its models side by side; several: the notebooks two or more of them hold
    shared = {nb: rs for nb, rs in sorted(holders.items()) if len(rs) > 1 or len(runs) == 1}
    if not shared:
        parts.append("<p>No notebook is in two of these runs: nothing to compare.</p>")
    label = series_label(runs)
    for nb, rs in shared.items():
        parts.append(f"<h2 id='{html.escape(nb)}'>{html.escape(nb)} ({', '.join(r.label for r in rs)})</h2>")
        if len(rs) > 1:
            diff = config_differences([r.path / nb for r in rs])
            diff.columns = ["setting", *(r.label for r in rs)]
            parts.append(_table_html(diff, "Configuration differences") if len(diff)
                         else "<p>Configuration: identical.</p>")
        tables = set.intersection(*(set(RunFolder(r.path / nb).table_names()) for r in rs))
        drawn = len(parts)
        for table in sorted(tables):
            first = pd.read_csv(RunFolder(rs[0].path / nb).tables_dir / table, nrows=1)
            if not all(c in first.columns for c in RATE_COLUMNS):
                continue
            series = rate_series(rs, nb, table)
            if series.empty:
                continue
            diffs = differences(series)
            name = Path(table).stem
            parts.append(f"<h3>{html.escape(name)}</h3>"
                         + dot_plot(series, diffs, label, f"{name}: rates per cell of each run, and differences"))
            parts.append(_table_html(diffs, f"{name}: difference from {series.series.iloc[0]} per cell "
                                            "(Newcombe 95%)") if len(diffs) else "")
        if len(parts) == drawn:
            parts.append("<p>No rate table (successes over scored episodes) to set side by side; its tables are in "
                         "each run's folder.</p>")
    return html_page("Runs side by side", "".join(parts), _STYLE)


__all__ = ["compare_html", "config_differences", "differences", "rate_series"]
