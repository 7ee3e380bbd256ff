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
    FIGURE_METADATA_KEY,
    figure_panels,
    figure_provenance,
    format_number,
    plain_numbers,
    is_simulated_backend,
    label_figure,
    label_table,
    provenance_label,
)
from psit_lib.studies.psit.protocol.outcomes import Outcome
from psit_lib.analysis.plots import AGENT_COLOURS, agent_colours, agent_palette, plot_rate_intervals, plot_state_size
from psit_lib.analysis.stats import rate_table
from psit_lib.studies.psit.figures import plot_entropy_vs_temperature
from psit_lib.studies.psit.secrets import secret_summary

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


def test_entropy_vs_temperature(episodes):
    fig = plot_entropy_vs_temperature(secret_summary(episodes, ["task", "temperature"], "secret", n_boot=100),
                                      label=LABEL, hue="task")
    assert footer_of(fig) == LABEL
    assert "entropy" in fig.axes[0].get_ylabel()


def test_builders_do_not_register_pyplot_figures(episodes):
    before = plt.get_fignums()
    plot_rate_intervals(rate_table(episodes, ["task", "agent"], "self_consistent"), "agent", LABEL)
    assert plt.get_fignums() == before


def test_figures_save_with_the_footer(episodes, tmp_path):
    fig = plot_rate_intervals(rate_table(episodes, ["task", "agent"], "self_consistent"), "agent", LABEL)
    path = tmp_path / "bars.png"
    fig.savefig(path, dpi=50, bbox_inches="tight")
    assert path.stat().st_size > 0


def _lab(colour: str) -> np.ndarray:
    """CIELAB of an sRGB hex colour (D65), to measure how far apart two colours look."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_the_agent_palette_gives_twelve_agents_twelve_colours_a_reader_can_tell_apart():
    from psit_lib.studies.psit.agents.config import ALL_PSIT_AGENTS
    from psit_lib.studies.psit.agents.names import OPTIONAL_AGENTS

    agents = [*ALL_PSIT_AGENTS, *OPTIONAL_AGENTS]  # not known_agents(): other tests register families of their own
    assert len(agents) == 12 and set(agents) <= set(AGENT_COLOURS)
    colours = [AGENT_COLOURS[a] for a in agents]
    labs = [_lab(c) for c in colours]
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(labs) for b in labs[i + 1:])
    assert closest > 20, f"two agents' colours are only {closest:.1f} CIELAB units apart"


def test_an_agent_has_one_colour_whatever_else_a_figure_shows():
    alone = agent_palette(["mem0"])
    mixed = agent_palette(["vanilla", "mem0", "my_new_agent", "other"])
    assert alone["mem0"] == mixed["mem0"] == AGENT_COLOURS["mem0"]
    assert len(set(mixed.values())) == 4  # names outside the workbook get unused colours
    assert agent_palette(["other", "my_new_agent"]) == agent_palette(["my_new_agent", "other"])
    assert len(set(agent_palette([f"a{i}" for i in range(40)]).values())) == 40
    assert agent_colours(["mem0", "vanilla"]) == [AGENT_COLOURS["mem0"], AGENT_COLOURS["vanilla"]]


def test_rate_dots_colour_each_agent_label_both_axes_and_show_n(episodes):
    rates = rate_table(episodes[episodes.task == "hangman"], ["agent"], "self_consistent")
    fig = plot_rate_intervals(rates, "agent", LABEL)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "agent" and ax.get_ylabel()
    colours = {matplotlib.colors.to_hex(line.get_color()) for line in ax.lines}
    assert AGENT_COLOURS["vanilla"] in colours and len(colours) == 2
    assert not ax.texts and ax.get_title().endswith("n=20 each")  # one n for all, said once
    uneven = plot_rate_intervals(rates.assign(n_scored=[20, 7]), "agent", LABEL).axes[0]
    assert sorted(t.get_text() for t in uneven.texts) == ["n=20", "n=7"] and "each" not in uneven.get_title()


def test_state_size_uses_the_agent_colours_and_gives_n(episodes):
    data = episodes.replace({"agent": {"workflow": "workflow_overwrite"}})
    fig = plot_state_size(data, label=LABEL, n_boot=50)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any(t.startswith("workflow_overwrite (n=") for t in texts)
    line_colours = {matplotlib.colors.to_hex(line.get_color()) for line in fig.axes[0].lines}
    assert AGENT_COLOURS["workflow_overwrite"] in line_colours and AGENT_COLOURS["vanilla"] in line_colours


def test_a_labelled_figure_tells_jupyter_its_panels_and_axis_labels():
    fig = Figure()
    left, right = fig.subplots(1, 2)
    left.plot([0, 1], [0, 1])
    left.set_xlabel("turn")
    left.set_ylabel("rate")
    right.plot([0, 1], [1, 0])
    label_figure(fig, LABEL)
    data, meta = fig._repr_mimebundle_()
    assert data == {}
    info = meta["image/png"][FIGURE_METADATA_KEY]
    assert info["provenance"] == LABEL
    assert [p["labelled"] for p in info["panels"]] == [True, False]
    fig.supxlabel("turn")
    fig.supylabel("rate")
    assert all(p["labelled"] for p in figure_panels(fig))
    bars = Figure()
    ax = bars.add_subplot()
    ax.bar([0, 1], [0.2, 0.8])
    ax.set_xticks([0, 1], ["vanilla", "mem0"])  # names label their axis; the numeric y axis still needs one
    assert [p["labelled"] for p in figure_panels(bars)] == [False]
    ax.set_ylabel("share")
    assert [p["labelled"] for p in figure_panels(bars)] == [True]
    seaborn_bars = Figure()
    import seaborn as sns

    sns.barplot(data=pd.DataFrame({"agent": ["a", "b"], "v": [1, 2]}), x="agent", y="v", ax=seaborn_bars.add_subplot())
    assert figure_panels(seaborn_bars)[0]["labelled"]  # categorical ticks come back as a list
    stacked = Figure()
    top, bottom = stacked.subplots(2, 1, sharex=True)
    for ax in (top, bottom):
        ax.plot([0, 1], [0, 1])
        ax.set_ylabel("rate")
    assert [p["labelled"] for p in figure_panels(stacked)] == [True, False]  # the outer panel needs its label
    bottom.set_xlabel("turn")
    assert all(p["labelled"] for p in figure_panels(stacked))


def test_label_table_is_compact_and_keeps_what_varies():
    df = pd.DataFrame({"task": ["hangman"] * 2, "model": ["psit-sim"] * 2, "agent": ["vanilla", "mem0"],
                       "n": [10, 10], "rate": [0.148148, 5.56e-05], "interval": ["[5.56e-05, 0.812]", "[0.1, 0.2]"]})
    styled = label_table(df.set_index(["task", "agent"]), LABEL)
    assert list(styled.data.columns) == ["agent", "n", "rate", "interval"]  # index shown as columns, n kept
    assert styled.caption == f"task: hangman · model: psit-sim · {LABEL}"
    page = styled.to_html()
    assert "0.148" in page and "0.148148" not in page and "5.56e-05" in page
    assert "row_heading" not in page  # no index column
    blank = label_table(df.assign(note=""), LABEL)
    assert "note" not in blank.data.columns and "note" not in blank.caption
    one_row = label_table(df.head(1), LABEL)
    assert "task" in one_row.data.columns  # a single row keeps its columns


@pytest.mark.parametrize("value,shown", [(5.56e-05, "5.56e-05"), (1.234e-02, "0.0123"), (0.148148, "0.148"), (1234.6, "1235"),
                                         (2.0, "2"), (float("nan"), "—"), (-0.000123456, "-0.000123")])
def test_numbers_have_three_significant_digits_and_an_exponent_only_when_tiny(value, shown):
    assert format_number(value) == shown
    if "e" in repr(value):  # text keeps other numbers as written, rewrites exponents only
        assert plain_numbers(f"[{value!r}, 0.812]") == f"[{shown}, 0.812]"


def test_judge_score_bars_stay_on_the_0_to_10_scale_and_every_rate_panel_names_its_measure():
    from psit_lib.studies.acc.figures import plot_outcome, plot_rates_per_turn

    scores = pd.DataFrame([{"agent": "acc", "criterion": "relevance", "mean": 8.5, "std": 3.3},
                           {"agent": "acc", "criterion": "coherence", "mean": 1.0, "std": 2.0}])
    ax = plot_outcome(scores, LABEL).axes[0]
    (bars,) = ax.containers
    ends = [tuple(np.round(seg[:, 1], 6)) for seg in bars.lines[2][0].get_segments()]
    assert ends == [(5.2, 10.0), (0.0, 3.0)] and "clipped" in ax.get_title() and ax.get_ylim()[1] < 10.5
    per_turn = pd.DataFrame([{"agent": a, "domain": d, "turn": t, "hallucination": 0.1 * t, "drift": 0.05 * t}
                             for a in ("acc", "transcript") for d in ("it", "health") for t in (1, 2, 3)])
    fig = plot_rates_per_turn(per_turn, LABEL, facet="domain")
    assert [p["ylabel"] for p in figure_panels(fig)] == ["hallucination rate (share of turns)",
                                                         "drift rate (share of turns)"] * 2  # and shown
