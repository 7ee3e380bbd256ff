"""Provenance labels: which backend, model and profile produced a figure or table (SPEC §8).

Results computed on the offline simulated model must never be mistaken for results of a real
model, so every figure and table carries a one-line label, and a label for the simulator
always contains the word "simulated". Building the label in one place makes that rule
impossible to forget in a notebook cell.

Tables: :func:`label_table` returns a pandas ``Styler`` whose caption is the label, and the
labelled copy of the data (``styler.data``) also carries it in ``attrs["provenance"]``.
A Styler was chosen over only setting ``df.attrs`` because ``attrs`` are invisible when a
table is displayed or exported, while a caption is rendered in notebooks and kept by
``Styler.to_html`` / ``to_latex``; the ``attrs`` copy lets code check the label too.
"""

from __future__ import annotations

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
    """One-line provenance, e.g. ``"backend=sim (simulated) · model=psit-sim · profile=default"``.

    ``simulated`` defaults to :func:`is_simulated_backend`; pass True when the simulator is
    reached under another backend name (e.g. a generic OpenAI-compatible URL pointing at it).
    The profile part is left out when ``profile`` is None (real endpoints have no profile).
    """
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
    """Put ``label`` as a small footer at the bottom of ``fig`` and return the figure.

    The footer text has gid :data:`PROVENANCE_GID`; labelling again replaces it rather than
    stacking a second footer. Figures saved with ``bbox_inches="tight"`` keep it.
    """
    _check_label(label)
    for text in fig.texts:
        if text.get_gid() == PROVENANCE_GID:
            text.set_text(label)
            return fig
    fig.text(
        0.5, 0.005, label, ha="center", va="bottom", fontsize=7, color="dimgray", gid=PROVENANCE_GID
    )
    return fig


def figure_provenance(fig: Figure) -> str | None:
    """The provenance footer of ``fig``, or None when it has none."""
    for text in fig.texts:
        if text.get_gid() == PROVENANCE_GID:
            return text.get_text()
    return None


SIGNIFICANT_DIGITS = 3


def format_number(value: object) -> object:
    """Numbers as a reader wants them in a table: 3 significant digits (no exponent for large
    values: 1234.6 shows as 1235), integers whole, a dash for a missing value; anything else
    unchanged."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else value
    if isinstance(value, (int,)) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        if value != value:  # NaN
            return "—"
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.0f}" if abs(value) >= 10 ** SIGNIFICANT_DIGITS else f"{value:.{SIGNIFICANT_DIGITS}g}"
    return value


def label_table(df: pd.DataFrame, label: str) -> Styler:
    """A Styler of a copy of ``df`` captioned with ``label`` (numbers to 3 significant digits,
    missing values as a dash); the copy carries ``attrs["provenance"]``."""
    _check_label(label)
    labelled = df.copy()
    labelled.attrs["provenance"] = label
    return labelled.style.set_caption(label).format(format_number)
