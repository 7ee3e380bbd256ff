"""The studies' reported numbers (data/reference) and the summary table that shows them beside a run."""

from __future__ import annotations

import pandas as pd
import pytest

from psit_lib.analysis.reference import REFERENCE_SOURCE, reference_table
from psit_lib.studies.basis.reference import reference_mean, reference_passk, reference_success
from psit_lib.studies.psit.protocol import experiment as fx
from psit_lib.studies.psit.reference import mode_collapse_attractors, reference_models, self_consistency_reference
from psit_lib.analysis.stats import rate_table


def test_psit_table1_has_every_method_task_and_model_once():
    table = reference_table("psit_table1_self_consistency")
    counts = table.groupby(["method", "task"]).size()
    assert set(counts) == {len(reference_models())} and len(reference_models()) == 4
    assert table["self_consistency_pct"].between(0, 100).all()


def test_self_consistency_reference_filters_agents_and_labels_rows():
    ref = self_consistency_reference("hangman", ["vanilla", "workflow_overwrite"])
    assert set(ref["agent"]) == {"vanilla", "workflow_overwrite"}
    assert (ref["source"] == REFERENCE_SOURCE).all()
    assert ref["rate"].between(0, 1).all()
    # baselines never carry the study's asterisk; at least one working-memory cell does
    assert not ref.loc[ref["agent"] == "vanilla", "significant"].any()
    assert ref.loc[ref["agent"] == "workflow_overwrite", "significant"].any()


def test_mode_collapse_attractors_name_a_secret_per_task_and_model():
    attractors = mode_collapse_attractors()
    assert attractors[("hangman", "GPT-OSS 120B")] == "planet"
    assert all(isinstance(secret, str) and secret for secret in attractors.values())


def test_basis_reference_mean_is_the_mean_of_the_scenario_success_rates():
    success = reference_success()
    for system, mean in reference_mean().items():
        rates = [rate for (scenario, s), rate in success.items() if s == system]
        assert mean == pytest.approx(sum(rates) / len(rates))
    passk = reference_passk()
    assert set(passk["k"]) == {1, 2, 5, 10}
    assert (passk["pass_hat_k"] <= passk["pass_at_k"] + 1e-9).all()


def _episodes(counts: dict[str, tuple[int, int]]) -> pd.DataFrame:
    rows = []
    for agent, (wins, n) in counts.items():
        rows += [{"task": "hangman", "model": "m", "agent": agent, "self_consistent": i < wins, "scored": True}
                 for i in range(n)]
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_summary_table_stars_only_methods_better_than_every_baseline():
    agents = ["vanilla", "mem0", "private_cot", "workflow_overwrite"]
    df = _episodes({"vanilla": (0, 20), "mem0": (1, 20), "private_cot": (3, 20), "workflow_overwrite": (19, 20)})
    rates = rate_table(df, ["task", "model", "agent"], "self_consistent")
    sig = fx.significance(df, agents)
    stars = fx.stars(sig)
    assert set(sig["baseline"]) == {"vanilla", "mem0"}
    assert dict(zip(stars["method"], stars["marker"])) == {"private_cot": "", "workflow_overwrite": "*"}
    summary = fx.summary_table(rates, stars, ["hangman"], agents)
    assert summary.at["workflow_overwrite", "hangman · m (this run)"] == "0.95*"
    assert summary.at["vanilla", "hangman · m (this run)"] == "0.00"
    reference = summary.filter(like="reference").iloc[:, 0]
    assert reference["workflow_overwrite"].count("/") == 3 and "*" in reference["workflow_overwrite"]
    assert all(cell.strip().rstrip("*").startswith(("0.", "1.")) for cell in reference["workflow_overwrite"].split("/"))


def test_significance_without_a_baseline_is_empty_not_an_error():
    df = _episodes({"workflow_overwrite": (5, 5)})
    sig = fx.significance(df, ["workflow_overwrite"])
    stars = fx.stars(sig)
    assert sig.empty and stars.empty and "marker" in stars.columns
