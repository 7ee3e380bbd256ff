"""Notebook 07's machinery: the reveal reader on recorded run folders, the quick secret-choice
experiment on the simulator (temperature really applied, entropy rising with it), the plan,
the parameters and the chi-square references."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psit_lib.runs.folder import RunFolder
from psit_lib.studies.psit.protocol.appendix_e import COLUMNS, folder_reveals, rows_from_records
from psit_lib.studies.psit.secrets import chi_square_vs_prior, shannon_entropy
from psit_lib.llm import LLMSettings
from psit_lib.studies.psit.protocol import secret_choice as sc
from psit_lib.runs import RunStore, run_episodes
from psit_lib.runs.records import EpisodeRecord, flat_record, read_records
from psit_lib.studies.psit.protocol.records import ForkEpisode, SecretChoiceEpisode
from psit_lib.runs.params import ParameterError, validate_params
from recording import RecordingClient


def _write_jsonl(path, records, partial_tail: str = ""):
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + partial_tail)


def _fork_record(eid, secret, *, status="ok", agent="vanilla"):
    """A complete stored fork-test record (the reader validates every field)."""
    result = None
    if status == "ok":
        result = ForkEpisode(
            task="hangman", agent=agent, model="m1",
            failure=None if secret else "reveal answer unreadable", transcript=[], turns_played=4, constraints={},
            private_state_at_fork="", state_size_per_turn=[], memory_edits=[], hidden_calls=[],
            reveal={"question": "reveal?", "answer": str(secret), "parsed": secret, "compatible": True},
            candidates=[], candidate_search=None, branch_hidden_calls=[])
    return EpisodeRecord[ForkEpisode](
        episode_id=eid, status=status, error=None if status == "ok" else "ModelCallError: boom",
        spec={"task": "hangman", "model": "m1", "agent": agent, "index": 0},
        usage={"calls": 0, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0, "calls_by_role": {}},
        calls=[], wall_seconds=0.0, result=result).stored()


@pytest.fixture
def run_folder(tmp_path):
    """A hand-written run folder: a fork-test notebook, a notebook without reveals, a cache file."""
    run = tmp_path / "run-x"
    fork = run / "02_hangman_fork_tests"
    fork.mkdir(parents=True)
    records = [
        _fork_record("hangman/m1/vanilla/0000", "planet"),
        _fork_record("hangman/m1/vanilla/0001", "stale"),
        _fork_record("hangman/m1/vanilla/0002", None),                     # unreadable reveal
        _fork_record("hangman/m1/vanilla/0003", None, status="error"),     # failed episode
        _fork_record("hangman/m1/vanilla/0001", "planet"),                 # a retry: newest wins
    ]
    _write_jsonl(fork / "episodes.jsonl", records, partial_tail='{"episode_id": "hangman/m1/van')
    (fork / "params.json").write_text(json.dumps({"temperature": 0.3, "_models": ["m1"]}))
    (fork / "metadata.json").write_text(json.dumps({"notebook": "02_hangman_fork_tests"}))
    basis = run / "06_basis_cab_scenarios"
    basis.mkdir()
    _write_jsonl(basis / "episodes.jsonl", [{"episode_id": "b/0", "status": "ok", "spec": {"scenario": "x"}}])
    (run / "notebooks").mkdir()
    (run / "cache.sqlite").write_bytes(b"")
    return run


def _fork_reveals(run_folder) -> pd.DataFrame:
    return pd.DataFrame(folder_reveals(RunFolder(run_folder / "02_hangman_fork_tests")), columns=list(COLUMNS))


def _quick_reveals(records) -> pd.DataFrame:
    """The ``secret`` scorer's rows of the quick experiment's records."""
    rows = rows_from_records(read_records(records, SecretChoiceEpisode), source_notebook=sc.NOTEBOOK)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def test_reader_reads_a_notebook_folder_keeping_failed_episodes_as_missing(run_folder):
    df = _fork_reveals(run_folder)
    assert len(df) == 4                                             # newest record per id, partial line dropped
    by_id = df.set_index("episode_id")
    assert by_id.loc["hangman/m1/vanilla/0001", "secret"] == "planet"
    assert by_id["status"].to_dict() == {
        "hangman/m1/vanilla/0000": "ok", "hangman/m1/vanilla/0001": "ok",
        "hangman/m1/vanilla/0002": "unparseable", "hangman/m1/vanilla/0003": "error"}
    assert df["secret"].isna().sum() == 2
    assert (df["temperature"] == 0.3).all() and (df["model"] == "m1").all()
    assert Counter(df["secret"].dropna()) == Counter(planet=2)
    assert folder_reveals(RunFolder(run_folder / "06_basis_cab_scenarios")) == []  # no reveals: none read
    assert folder_reveals(RunFolder(run_folder / "nowhere")) == []


def test_reader_reads_records_stored_flat_by_older_runs_alike(run_folder):
    """Records written before the result was nested (format 1, flat) give the same table."""
    records = run_folder / "02_hangman_fork_tests" / "episodes.jsonl"
    nested = _fork_reveals(run_folder)
    lines = [json.loads(line) for line in records.read_text().splitlines()[:5]]
    assert all(line["format"] == 2 for line in lines)
    _write_jsonl(records, [flat_record(line) for line in lines])
    assert "format" not in records.read_text() and '"result"' not in records.read_text()
    flat = _fork_reveals(run_folder)
    pd.testing.assert_frame_equal(flat, nested)


def test_plan_is_deterministic_unique_and_stable_when_growing():
    params = sc.SecretChoiceParams(tasks=["hangman", "diagnosis"], temperatures=[1.5, 0.1], n_samples=3)
    plan = sc.plan_secret_choice(params, ["m1", "m2"])
    assert plan == sc.plan_secret_choice(params, ["m1", "m2"])
    ids = [s.episode_id for s in plan]
    assert len(ids) == len(set(ids)) == 2 * 2 * 2 * 3
    assert ids[0] == "hangman/m1/T0.10/0000"          # temperatures are sorted by validation
    assert {s.params["temperature"] for s in plan} == {0.1, 1.5}
    assert all(s.params["agent"] == "vanilla" for s in plan)
    bigger = sc.plan_secret_choice(params.model_copy(update={"n_samples": 5}), ["m1", "m2"])
    assert set(ids) <= {s.episode_id for s in bigger}  # more samples never renames old episodes


@pytest.mark.parametrize("values, fragment", [
    ({"tasks": ["chess"]}, "tasks"), ({"tasks": []}, "tasks"),
    ({"temperatures": [0.3, 0.3]}, "temperatures"), ({"temperatures": [2.5]}, "temperatures"),
    ({"agent": "telepath"}, "agent"), ({"read_from": "/no/such/run"}, "read_from"),
    ({"n_sample": 3}, "n_sample"),
])
def test_bad_parameters_are_named(values, fragment):
    with pytest.raises(ParameterError, match=fragment):
        validate_params(sc.SecretChoiceParams, values)


async def _run_quick(tmp_path, params, name="07_secret_distribution_mode_collapse"):
    client = RecordingClient(LLMSettings(cache="off"))
    store = RunStore(tmp_path / "run" / name)
    specs = sc.plan_secret_choice(params, [client.settings.model])
    records = await run_episodes(specs, sc.secret_choice_episode_fn(params), store=store, client=client,
                                 run_seed=params.seed, progress=False)
    return client, records


async def test_quick_experiment_applies_each_episode_temperature_and_is_read_back(tmp_path):
    params = sc.SecretChoiceParams(temperatures=[0.1, 1.5], n_samples=2, seed=3)
    client, records = await _run_quick(tmp_path, params)
    assert len(records) == 2 * 2 * 2 and all(r["status"] == "ok" for r in records)
    for rec in records:
        assert rec["usage"]["calls"] == 2                      # opener + reveal, logged by the runner
        assert rec["temperature"] == rec["spec"]["temperature"]
    sent = Counter((r.role, r.temperature) for r in client.requests)
    assert sent == {("hangman_host", 0.1): 4, ("hangman_host", 1.5): 4,
                    ("diagnosis_host", 0.1): 4, ("diagnosis_host", 1.5): 4}
    df = _quick_reveals(records)
    assert len(df) == 8 and df["secret"].notna().all()
    assert set(df["temperature"]) == {0.1, 1.5}
    hangman = df[df.task == "hangman"]
    assert all(sc.make_task("hangman").vocabulary.frequency(w) > 0 for w in hangman["secret"])
    diagnosis = df[df.task == "diagnosis"]
    assert set(diagnosis["secret"]) <= set(sc.domain_of("diagnosis"))
    for rec in records:                                        # the reveal fits the public opening
        if rec["task"] == "hangman":
            assert rec["reveal"]["compatible"] is True
            assert len(rec["reveal"]["parsed"]) == rec["opening"]["constraints"]["length"]


async def test_simulated_hangman_secrets_spread_out_as_temperature_rises(tmp_path):
    """SPEC §8: the simulator draws secrets from prior ** (alpha / T), so entropy rises with T."""
    params = sc.SecretChoiceParams(tasks=["hangman"], temperatures=[0.1, 1.5], n_samples=24, seed=11)
    _, records = await _run_quick(tmp_path, params)
    df = _quick_reveals(records)
    entropy = {t: shannon_entropy(part["secret"].tolist()) for t, part in df.groupby("temperature")}
    assert entropy[1.5] > entropy[0.1] + 0.5
    summary = sc.metrics_table(df, ["task", "model", "temperature"], n_boot=50)
    assert "entropy falls" not in sc.spread_reading(summary, df, n_boot=50)  # n_boot=50: rises or not told apart
    assert summary.set_index("temperature").loc[0.1, "top_share"] > summary.set_index("temperature").loc[1.5, "top_share"]


def test_min_n_for_test_and_chi_square_table_say_when_a_test_is_possible():
    assert sc.min_n_for_test(dict.fromkeys("abcd", 1.0)) == 20
    assert sc.min_n_for_test({"a": 3.0, "b": 1.0}) == 20          # the pooled rest needs 5 too
    conditions = sc.domain_of("diagnosis")
    assert len(conditions) == 49 and len(sc.domain_of("diagnosis")) == 49
    small = pd.DataFrame({"task": "diagnosis", "model": "m", "secret": list(conditions[:10])})
    row = sc.chi_square_table(small, ["task", "model"]).iloc[0]
    assert pd.isna(row["chi2"]) and "needs n_in_prior >= 245" in row["note"]
    collapsed = pd.DataFrame({"task": "diagnosis", "model": "m", "secret": [conditions[0]] * 300})
    row = sc.chi_square_table(collapsed, ["task", "model"]).iloc[0]
    assert row["n"] == 300 and row["dof"] == 48 and row["p_value"] < 1e-6
    spread = pd.DataFrame({"task": "diagnosis", "model": "m", "secret": list(conditions) * 6})
    assert sc.chi_square_table(spread, ["task", "model"]).iloc[0]["p_value"] == pytest.approx(1.0)
    hangman = pd.DataFrame({"task": "hangman", "model": "m", "secret": ["planet"] * 200})
    refs = sc.chi_square_table(hangman, ["task", "model"]).set_index("reference")
    assert refs.loc["wordfreq frequency", "p_value"] < 1e-4      # "planet" is far from word frequency
    assert pd.isna(refs.loc["uniform over vocabulary", "chi2"])
    off = pd.DataFrame({"task": "diagnosis", "model": "m", "secret": ["lyme disease"] * 100 + [conditions[0]] * 10})
    row = sc.chi_square_table(off, ["task", "model"]).iloc[0]
    assert row["n_in_prior"] == 10 and row["out_of_prior_share"] == pytest.approx(100 / 110)


def test_attractor_rows_are_labelled_reference_rows_with_local_counts():
    df = pd.DataFrame({"task": ["hangman"] * 3 + ["diagnosis"], "secret": ["planet", "planet", "stone", "Sarcoidosis"]})
    rows = sc.attractor_rows(df).set_index("attractor")
    assert (rows["source"] == "reference study (reported)").all()
    assert rows.loc["planet", "revealed here"] == 2 and rows.loc["planet", "rank here"] == 1
    assert rows.loc["python", "revealed here"] == 0 and pd.isna(rows.loc["python", "rank here"])
    assert (rows.loc[["Sarcoidosis"], "of"] == 1).all()                 # reported for two models
    assert len(rows) == 8 and rows.loc[["Sarcoidosis"], "reported for"].tolist() == ["GPT-OSS 120B", "Qwen3 235B"]


def test_sweep_banner_replaces_the_single_temperature():
    banner = "**Backend:** `sim` · **seed:** `0` · **temperature:** `0.3`"
    assert sc.sweep_banner(banner, [0.1, 1.5]) == "**Backend:** `sim` · **seed:** `0` · **temperatures (swept):** `0.1, 1.5`"


@given(st.lists(st.integers(1, 40), min_size=2, max_size=8), st.sampled_from([1, 5]))
@settings(max_examples=60, deadline=None)
def test_min_n_for_test_is_exactly_where_the_pooling_rule_first_allows_a_test(weights, min_expected):
    prior = {f"s{i}": float(w) for i, w in enumerate(weights)}
    n = sc.min_n_for_test(prior, min_expected)
    assert chi_square_vs_prior({"s0": n}, prior, min_expected) is not None
    if n > 1:
        assert chi_square_vs_prior({"s0": n - 1}, prior, min_expected) is None


def test_min_n_for_test_refuses_a_single_secret_prior():
    with pytest.raises(ValueError, match="at least two"):
        sc.min_n_for_test({"planet": 1.0, "python": 0.0})


def test_the_pooling_rule_reads_expectations_that_sum_to_the_threshold_as_reaching_it():
    """Found by hypothesis: at n = 2 the four small cells of this prior expect 1.0 in sum, which
    floating point adds to just under 1.0; the test exists there, as min_n_for_test says."""
    prior = {f"s{i}": float(w) for i, w in enumerate([1, 2, 22, 30, 5])}
    assert sc.min_n_for_test(prior, 1) == 2
    assert chi_square_vs_prior({"s0": 2}, prior, 1) is not None
