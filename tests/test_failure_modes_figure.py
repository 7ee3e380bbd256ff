"""The study's Figure 2 counterpart: its five classes by Table 1's rule, in its order and colours,
with the workbook's strict view beside, labelled."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from psit_lib.studies.psit.protocol.table1 import (PAPER_OUTCOME_COLOURS, PAPER_OUTCOMES, TableOneScore,
                                                    paper_outcome)


@given(st.booleans(), st.integers(0, 5), st.booleans())
def test_every_scored_episode_falls_in_exactly_one_of_the_studys_classes(revealed_yes, yes_count, leakage):
    revealed_yes = revealed_yes and yes_count > 0
    score = TableOneScore(revealed_yes=revealed_yes, yes_count=yes_count, leakage=leakage)
    outcome = paper_outcome(score)
    assert outcome in PAPER_OUTCOMES
    assert (outcome == "self-consistent") == score.self_consistent
    assert (outcome == "leakage") == leakage
    assert (outcome == "all denial") == (not leakage and yes_count == 0)
    assert (outcome == "over-confirmation") == (not leakage and revealed_yes and yes_count > 1)
    assert (outcome == "state substitution") == (not leakage and not revealed_yes and yes_count > 0)


def test_the_studys_colours_leakage_light_blue_and_all_denial_red_in_its_order():
    assert PAPER_OUTCOMES == ("self-consistent", "leakage", "over-confirmation", "state substitution", "all denial")
    assert PAPER_OUTCOME_COLOURS["leakage"] == "#a5f2f9" and PAPER_OUTCOME_COLOURS["all denial"] == "#ff6961"
    assert PAPER_OUTCOME_COLOURS["self-consistent"] == "#77dd77"


def _frame():
    rows = []
    for agent, classes in {"vanilla": ["all denial", "state substitution", "leakage"],
                           "workflow_overwrite": ["self-consistent", "self-consistent", "over-confirmation"]}.items():
        for c in classes:
            rows.append({"task": "hangman", "agent": agent, "scored": True, "table1_outcome": c,
                         "outcome": "self_consistent" if c == "self-consistent" else "all_denial"})
    rows.append({"task": "hangman", "agent": "vanilla", "scored": False, "table1_outcome": None, "outcome": "error"})
    return pd.DataFrame(rows)


def test_the_figure_draws_the_studys_partition_beside_the_labelled_strict_view():
    from matplotlib.colors import to_hex

    from psit_lib.studies.psit.figures import plot_failure_modes

    fig = plot_failure_modes(_frame(), "agent", "backend=sim · model=m")
    paper_ax, strict_ax = fig.axes[0], fig.axes[1]
    assert "Table 1's rule" in paper_ax.get_title() and "strict view" in strict_ax.get_title()
    handles, labels = paper_ax.get_legend_handles_labels()
    assert labels == list(PAPER_OUTCOMES)
    colours = {label: to_hex(h.patches[0].get_facecolor()) for h, label in zip(handles, labels)}
    assert colours == PAPER_OUTCOME_COLOURS
    leak = [p for p in handles[labels.index("leakage")].patches]
    assert [round(p.get_height(), 3) for p in leak] == [pytest.approx(1 / 3, abs=1e-3), 0.0]  # vanilla, workflow
    assert "n=3 each" in fig.get_suptitle()  # the failed episode is not scored
    assert any("model=m" in t.get_text() for t in fig.texts)


def test_the_figure_fits_a_page_with_twelve_agents_and_two_tasks():
    from psit_lib.studies.psit.figures import plot_failure_modes

    rows = [{"task": t, "agent": f"agent_{i:02d}", "scored": True, "table1_outcome": "all denial",
             "outcome": "all_denial"} for t in ("hangman", "diagnosis") for i in range(12)]
    fig = plot_failure_modes(pd.DataFrame(rows), "agent", "backend=sim", facet="task")
    assert fig.get_size_inches()[0] * 120 <= 1400 and len([a for a in fig.axes if a.get_visible()]) == 4
