"""Provenance labels (SPEC §8): every figure and table carries a one-line label, built here, so a simulator result
(its label always says "simulated") is never mistaken for a real model's. Tables get a Styler caption, which is rendered
and exported (``df.attrs`` are not), and the labelled copy's ``attrs["provenance"]`` for code to check."""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from pandas.io.formats.style import Styler

#: Backend names that mean "the offline simulated model". Names of the form ``sim-...`` /
#: ``sim_...`` / ``sim:...`` (e.g. the simulator behind its loopback HTTP server) count too.
SIMULATED_BACKEND_NAMES = frozenset({"sim", "simulated"})
SIMULATED_WORD = "simulated"
PROVENANCE_GID = "psit-provenance"
_SEPARATOR = " · "


def is_simulated_backend(backend: str) -> bool:
    """Whether ``backend`` names the offline simulated model."""
    name = backend.strip().lower()
    return name in SIMULATED_BACKEND_NAMES or name.startswith(("sim-", "sim_", "sim:"))


def provenance_label(
    backend: str,
    model: str,
    profile: str | None = None,
    *,
    simulated: bool | None = None,
) -> str:
    """One-line provenance, e.g. ``"backend=sim (simulated) · model=psit-sim · profile=default"``; pass
    ``simulated`` when the simulator sits behind another backend name; no profile part when ``profile`` is None."""
    for name, value in (("backend", backend), ("model", model)):
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"provenance_label needs a non-empty {name} name, got {value!r}.")
    if simulated is None:
        simulated = is_simulated_backend(backend)
    backend_part = f"backend={backend.strip()}"
    if simulated:
        backend_part += f" ({SIMULATED_WORD})"
    parts = [backend_part, f"model={model.strip()}"]
    if profile is not None:
        parts.append(f"profile={profile.strip() or 'default'}")
    return _SEPARATOR.join(parts)


def _check_label(label: str) -> None:
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"a provenance label must be a non-empty string, got {label!r}.")


def label_figure(fig: Figure, label: str) -> Figure:
    """Put ``label`` as the footer of ``fig`` (gid :data:`PROVENANCE_GID`: relabelling replaces it; kept by
    ``bbox_inches="tight"``) and return the figure."""
    _check_label(label)
    # Jupyter asks the figure for _repr_mimebundle_ before its PNG formatter: the answer is
    # metadata only (the PNG still comes from the inline backend), read by the report
    fig._repr_mimebundle_ = functools.partial(_figure_metadata, fig)  # type: ignore[attr-defined]
    for text in fig.texts:
        if text.get_gid() == PROVENANCE_GID:
            text.set_text(label)
            return fig
    fig.text(
        0.5, 0.005, label, ha="center", va="bottom", fontsize=7, color="dimgray", gid=PROVENANCE_GID
    )
    _fit_titles(fig)
    return fig


def _fit_titles(fig: Any) -> None:
    """Wrap each panel's title to the panel's width, and the suptitle to the panels' span (centred
    on them): a title wider than what it names runs into the legend beside it."""
    panels = [ax for ax in fig.axes if ax.get_visible()]
    for _ in range(3):  # wrapping changes the layout a little: measure again
        fig.draw_without_rendering()
        renderer = fig._get_renderer()
        changed = False
        for ax in panels:
            width = ax.get_window_extent(renderer).width
            changed |= any([_wrap(t, width, renderer) for t in _titles(ax)])
        if fig._suptitle is not None and panels:
            boxes = [ax.get_window_extent(renderer) for ax in panels]
            x0, x1 = min(b.x0 for b in boxes), max(b.x1 for b in boxes)
            fig._suptitle.set_x((x0 + x1) / 2 / fig.bbox.width)
            changed |= _wrap(fig._suptitle, x1 - x0, renderer)
        if not changed:
            return


def _wrap(text, width: float, renderer) -> bool:
    """Break ``text`` into lines no wider than ``width`` pixels; whether it changed."""
    import textwrap

    drawn = text.get_window_extent(renderer).width
    if not text.get_text() or drawn <= width:
        return False
    lines = text.get_text().split("\n")
    chars = max(8, int(max(map(len, lines)) * width / drawn) - 1)
    wrapped = "\n".join(textwrap.fill(line, chars) for line in lines)
    text.set_text(wrapped)
    return wrapped != "\n".join(lines)


FIGURE_METADATA_KEY = "psit_figure"
"""Key of a labelled figure's display metadata (under ``image/png``): its provenance and, per
panel, title and axis labels, and every text's box (:func:`text_boxes`); the report reads it (alt text,
the browser test's label and overlap checks)."""


def _axis_label(ax, which: str) -> str:
    axis = ax.xaxis if which == "x" else ax.yaxis
    own = axis.get_label().get_text() if axis.get_label().get_visible() else ""  # label_outer hides, keeps text
    if own:
        return own
    figure = ax.get_figure()
    shared = getattr(figure, f"_sup{which}label", None) if figure is not None else None
    return shared.get_text() if shared is not None else ""


def _named_categories(axis) -> bool:
    """Whether the axis's ticks are names (agents, outcomes): categories that label themselves."""
    from matplotlib.category import StrCategoryFormatter
    from matplotlib.ticker import LogFormatter, ScalarFormatter

    formatter = axis.get_major_formatter()
    if isinstance(formatter, StrCategoryFormatter):
        return True
    if isinstance(formatter, (ScalarFormatter, LogFormatter)):
        return False
    return any(re.search(r"[A-Za-z]", label.get_text()) for label in axis.get_ticklabels())


def _tick_labels_off(axis, sides: tuple[str, str]) -> bool:
    """Whether the axis shows no tick labels (an inner panel of a shared axis: the outer panel's
    labels serve it)."""
    params = axis.get_tick_params()
    return not any(params.get(f"label{side}", side in ("bottom", "left")) for side in sides)


def figure_panels(fig: Figure) -> list[dict[str, object]]:
    """Each panel (axes with something drawn, colour bars and legend-only axes left out) with its
    title and axis labels. A panel is labelled when each axis has a label of its own or one shared
    by the whole figure (``supxlabel``), or needs none: no ticks (a panel saying there is no
    data), ticks that are names (one bar per agent) and so say what the axis holds, or no tick
    labels (an inner panel sharing the axis of a labelled outer one)."""
    panels: list[dict[str, object]] = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison or ax.get_label() == "<colorbar>":
            continue
        if not (ax.has_data() or ax.texts):
            continue
        xlabel, ylabel = _axis_label(ax, "x"), _axis_label(ax, "y")
        x_ticks = (len(ax.get_xticks()) > 0 and ax.xaxis.get_visible() and not _named_categories(ax.xaxis)
                   and not _tick_labels_off(ax.xaxis, ("bottom", "top")))
        y_ticks = (len(ax.get_yticks()) > 0 and ax.yaxis.get_visible() and not _named_categories(ax.yaxis)
                   and not _tick_labels_off(ax.yaxis, ("left", "right")))
        panels.append({"title": ax.get_title() or ax.get_title("left"), "xlabel": xlabel, "ylabel": ylabel,
                       "labelled": bool((xlabel or not x_ticks) and (ylabel or not y_ticks))})
    return panels


def _corners(text, renderer) -> list[list[float]] | None:
    """The four corners (pixels) of a text as drawn, rotated with it; None when it shows nothing."""
    if not text.get_visible() or not text.get_text().strip():
        return None
    box = text.get_window_extent(renderer)
    if box.width <= 0 or box.height <= 0:
        return None
    angle = np.deg2rad(text.get_rotation())
    if abs(np.sin(2 * angle)) < 1e-6:  # upright or a quarter turn: the box is the text's
        return [[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]]
    # the box of rotated text is the rectangle around its tilted extent, about the same centre
    rotation = text.get_rotation()
    text.set_rotation(0)
    upright = text.get_window_extent(renderer)
    text.set_rotation(rotation)
    c, s = np.cos(angle), np.sin(angle)
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [upright.width / 2, upright.height / 2]
    return (half @ np.array([[c, s], [-s, c]]) + [(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2]).tolist()


def text_boxes(fig: Figure) -> list[dict[str, object]]:
    """Every piece of text of ``fig`` as laid out and drawn (titles, suptitle, axis labels, tick
    labels, texts in a panel, legends, the footer): its kind, its text and its corners in pixels.
    The report carries them so the browser test can check that no two overlap."""
    from matplotlib.text import Text

    drawn: Any = fig
    drawn.draw_without_rendering()  # runs the layout engine: boxes are where the text is drawn
    renderer = drawn._get_renderer()
    sup = (drawn._suptitle, drawn._supxlabel, drawn._supylabel)
    found: list[tuple[str, Any]] = [*zip(("suptitle", "supxlabel", "supylabel"), sup),
                                       *(("text", t) for t in fig.texts if t not in sup)]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += [("title", t) for t in _titles(ax)]
        found += [("text", t) for t in ax.texts]
        if ax.axison:
            axis: Any
            for axis in (ax.xaxis, ax.yaxis):
                found.append((f"{axis.axis_name}label", axis.label))
                for tick in axis._update_ticks():  # the ticks drawn: inside the view limits
                    found += [(f"{axis.axis_name}tick", tick.label1), (f"{axis.axis_name}tick", tick.label2)]
        found.append(("legend", ax.get_legend()))
    found += [("legend", legend) for legend in fig.legends]
    boxes: list[dict[str, object]] = []
    for kind, artist in found:
        if artist is None:
            continue
        if isinstance(artist, Text):
            corners = _corners(artist, renderer)
            text = artist.get_text()
        else:  # a legend: its whole box, title and entries
            extent = artist.get_window_extent(renderer)
            corners = ([[extent.x0, extent.y0], [extent.x1, extent.y0], [extent.x1, extent.y1], [extent.x0, extent.y1]]
                       if artist.get_visible() and extent.width > 0 else None)
            text = " ".join(t.get_text() for t in artist.get_texts())[:60]
        if corners is not None:
            boxes.append({"kind": kind, "text": text[:60], "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in corners]})
    return boxes


def _titles(ax: Any) -> list:
    return [ax._left_title, ax.title, ax._right_title]


def _figure_metadata(fig: Figure, include=None, exclude=None):
    """A figure's ``_repr_mimebundle_``: no data of its own, metadata for its PNG."""
    try:
        meta = {"provenance": figure_provenance(fig), "panels": figure_panels(fig), "text": text_boxes(fig)}
    except Exception:  # never keep a figure from showing; the report flags a figure without metadata
        return {}, {}
    return {}, {"image/png": {FIGURE_METADATA_KEY: meta}}


def figure_provenance(fig: Figure) -> str | None:
    """The provenance footer of ``fig``, or None when it has none."""
    for text in fig.texts:
        if text.get_gid() == PROVENANCE_GID:
            return text.get_text()
    return None


SIGNIFICANT_DIGITS = 3
SMALLEST_POSITIONAL = 1e-4
"""Below this a number is written with an exponent (0.0000056 is misread; 5.6e-06 is not)."""


def format_number(value: object) -> object:
    """Numbers as a reader wants them in a table: 3 significant digits (no exponent for large
    values: 1234.6 shows as 1235; one below 1e-4, a small p-value say, as 5.43e-06, never 0),
    integers whole, a dash for a missing value; anything else unchanged."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else value
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        if value != value:  # NaN
            return "—"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        if abs(value) >= 10 ** SIGNIFICANT_DIGITS:
            return f"{value:.0f}"
        if abs(value) < SMALLEST_POSITIONAL:
            return f"{value:.{SIGNIFICANT_DIGITS}g}"
        return np.format_float_positional(value, precision=SIGNIFICANT_DIGITS, unique=False, fractional=False,
                                          trim="-")
    if isinstance(value, str):
        return plain_numbers(value)
    return value


_EXPONENT = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")


def plain_numbers(text: str) -> str:
    """``text`` with every number written with an exponent rewritten as :func:`format_number`
    writes it ("[1.234e-02, 0.812]" as "[0.0123, 0.812]")."""
    return _EXPONENT.sub(lambda m: str(format_number(float(m.group()))), text)


def _is_text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column))


def compact_table(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """The table a reader needs, and the text columns with one value on every row lifted out for the caption
    (``{column: value}``; an empty one dropped). A meaningful index becomes columns; numeric columns stay even when constant
    (a reader compares them across tables); one-row tables and the last column are left as they are."""
    table = df.copy()
    default_index = isinstance(table.index, pd.RangeIndex) and table.index.name is None and table.index.start == 0
    if not default_index:
        table = table.reset_index()
    lifted: dict[str, str] = {}
    if len(table) > 1 and not isinstance(table.columns, pd.MultiIndex):
        for column in list(table.columns):
            values = table[column]
            if len(table.columns) > 1 and _is_text(values) and values.nunique(dropna=False) == 1:
                value = values.iloc[0]
                shown = "—" if value is None or value != value else str(value)
                if shown.strip():  # a column empty on every row says nothing: dropped unmentioned
                    lifted[str(column)] = shown
                table = table.drop(columns=column)
    table.attrs = dict(df.attrs)
    return table, lifted


_TABLE_STYLES = [
    {"selector": "caption", "props": "caption-side: top; text-align: left; font-size: 0.9em; color: #444; "
                                     "width: max-content; max-width: 45em;"},
    {"selector": "th", "props": "text-align: left;"},
]
_NUMBER_TEXT = re.compile(r"^[-+−]?[\d.,]+%?\*?$|^[—–-]$")


def _reads_as_numbers(column: pd.Series) -> bool:
    """Whether a column shows numbers (to right-align): a numeric column, or text that is all
    numbers as printed ("1.00*", "—")."""
    if not _is_text(column):
        return True
    values = [v for v in column.tolist() if v is not None and v == v]
    return bool(values) and all(isinstance(v, str) and _NUMBER_TEXT.match(v.strip()) for v in values)


def label_table(df: pd.DataFrame, label: str) -> Styler:
    """A compact (:func:`compact_table`), captioned Styler of a copy of ``df``: numbers as :func:`format_number` writes
    them, text left and numbers right; the caption is the lifted values then ``label``, also in the copy's ``attrs``."""
    _check_label(label)
    labelled, lifted = compact_table(df)
    labelled.attrs["provenance"] = label
    labelled.attrs["lifted"] = lifted
    caption = _SEPARATOR.join([*(f"{k}: {v}" for k, v in lifted.items()), label])
    styler = labelled.style.set_caption(caption).format(format_number).hide(axis="index")
    styler = styler.set_table_styles(_TABLE_STYLES)
    if labelled.columns.is_unique:
        numeric = [c for c in labelled.columns if _reads_as_numbers(labelled[c])]
        text = [c for c in labelled.columns if c not in numeric]
        for columns, side in ((numeric, "right"), (text, "left")):
            if columns:
                styler = styler.set_properties(subset=columns, **{"text-align": side})
    return styler
