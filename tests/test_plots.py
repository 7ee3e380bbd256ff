"""Figure builders return labelled Figures; provenance labels and table captions follow the rule."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from pandas.io.formats.style import Styler

from psit_lib.analysis.labels import (
    figure_provenance,
    is_simulated_backend,
    label_figure,
    label_table,
    provenance_label,
)
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, Outcome
from psit_lib.studies.basis.passk import passk_table
from psit_lib.analysis.plots import plot_rate_intervals, plot_state_size
from psit_lib.analysis.stats import rate_table
from psit_lib.studies.basis.figures import plot_passk_curves
from psit_lib.studies.psit.figures import plot_entropy_vs_temperature, plot_outcome_bars, plot_topk_facets

LABEL = provenance_label("sim", "psit-sim", "default")


@pytest.fixture(scope="module")
def episodes() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for task in ("hangman", "diagnosis"):
        for agent, p in (("vanilla", 0.05), ("workflow", 0.85)):
            for i in range(20):
                outcome = Outcome.SELF_CONSISTENT if rng.random() < p else Outcome.ALL_DENIAL
                rows.append(
                    {
                        "task": task,
                        "model": "psit-sim",
                        "agent": agent,
                        "outcome": outcome.value,
                        "self_consistent": outcome is Outcome.SELF_CONSISTENT,
                        "secret": rng.choice(["planet", "python", "apple", "river"]) if i % 7 else None,
                        "temperature": (0.3, 1.0)[i % 2],
                        "turn": i % 4,
                        "tokens": 0 if agent == "vanilla" else int(rng.integers(50, 500)),
                    }
                )
    return pd.DataFrame(rows)


def footer_of(fig: Figure) -> str | None:
    return figure_provenance(fig)


def test_provenance_label_marks_the_simulator():
    assert LABEL == "backend=sim (simulated) · model=psit-sim · profile=default"
    assert "simulated" in provenance_label("sim-http", "psit-sim", "leaky")
    assert "simulated" in provenance_label("openai", "psit-sim", None, simulated=True)
    real = provenance_label("vllm", "Qwen3-32B")
    assert real == "backend=vllm · model=Qwen3-32B" and "simulated" not in real
    assert is_simulated_backend("SIM") and not is_simulated_backend("simple-server")
    with pytest.raises(ValueError, match="model"):
        provenance_label("sim", " ", "default")


def test_label_figure_adds_one_footer_and_replaces_it():
    fig = Figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    label_figure(fig, "first")
    label_figure(fig, LABEL)
    footers = [t for t in fig.texts if t.get_text() in {"first", LABEL}]
    assert len(footers) == 1 and footer_of(fig) == LABEL
    with pytest.raises(ValueError):
        label_figure(fig, "")


def test_label_table_captions_a_styler_and_keeps_the_data():
    df = pd.DataFrame({"agent": ["vanilla"], "rate": [0.1]})
    styled = label_table(df, LABEL)
    assert isinstance(styled, Styler)
    assert styled.caption == LABEL
    assert styled.data.attrs["provenance"] == LABEL
    assert "provenance" not in df.attrs  # the caller's table is not mutated
    assert "simulated" in styled.to_html()


def test_outcome_bars(episodes):
    fig = plot_outcome_bars(episodes, ["task", "agent"], "outcome", LABEL)
    assert isinstance(fig, Figure) and footer_of(fig) == LABEL
    ax = fig.axes[0]
    colours = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches}
    assert OUTCOME_COLOURS[Outcome.SELF_CONSISTENT].lower() in colours
    # each bar stacks to 1
    tops = {}
    for patch in ax.patches:
        x = round(patch.get_x(), 6)
        tops[x] = max(tops.get(x, 0.0), patch.get_y() + patch.get_height())
    assert all(top == pytest.approx(1.0) for top in tops.values()) and len(tops) == 4


def test_outcome_bars_refuse_unknown_outcomes(episodes):
    bad = episodes.assign(outcome="confused")
    with pytest.raises(ValueError, match="not an Outcome"):
        plot_outcome_bars(bad, "agent", "outcome", LABEL)


def test_rate_intervals(episodes):
    rates = rate_table(episodes, ["task", "agent"], "self_consistent")
    fig = plot_rate_intervals(rates, "agent", LABEL, hue="task")
    assert isinstance(fig, Figure) and footer_of(fig) == LABEL
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["vanilla", "workflow"]


def test_state_size_uses_a_log_axis(episodes):
    fig = plot_state_size(episodes, label=LABEL, n_boot=100)
    assert footer_of(fig) == LABEL
    assert fig.axes[0].get_yscale() == "symlog"  # vanilla has zero-sized private state
    positive = episodes[episodes.tokens > 0]
    assert plot_state_size(positive, label=LABEL, n_boot=100).axes[0].get_yscale() == "log"


def test_topk_facets(episodes):
    fig = plot_topk_facets(episodes, label=LABEL, facet_col=("task", "model"), k=3, col_wrap=3)
    assert footer_of(fig) == LABEL
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 2
    assert len(visible[0].patches) == 3


def test_entropy_vs_temperature(episodes):
    fig = plot_entropy_vs_temperature(episodes, label=LABEL, hue="task", n_boot=100)
    assert footer_of(fig) == LABEL
    assert "entropy" in fig.axes[0].get_ylabel()
    with pytest.raises(ValueError, match="domain_size"):
        plot_entropy_vs_temperature(episodes, label=LABEL, metric="normalised_entropy")


def test_passk_curves():
    table = passk_table({"basis": [True, True, False, True] * 3, "plain": [False, True, False] * 4})
    fig = plot_passk_curves(table, label=LABEL, show_first_k=True)
    assert footer_of(fig) == LABEL
    assert fig.axes[0].get_xlabel() == "k"


def test_builders_do_not_register_pyplot_figures(episodes):
    before = plt.get_fignums()
    plot_outcome_bars(episodes, "agent", "outcome", LABEL)
    assert plt.get_fignums() == before


def test_figures_save_with_the_footer(episodes, tmp_path):
    fig = plot_outcome_bars(episodes, "agent", "outcome", LABEL)
    path = tmp_path / "bars.png"
    fig.savefig(path, dpi=50, bbox_inches="tight")
    assert path.stat().st_size > 0
