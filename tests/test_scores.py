"""The scoring chain's core: Score, Scorer, Metric, Scored, parts, Study.run and Study.rescore.

A toy study (no model call in its episodes) runs through the same path as the real ones: every
part is run and recorded in the metadata, every finished episode scored and the scores stored in
the folder, every metric written as a table; a rescore from the folder alone gives the same
tables, an old folder without scores is scored in full, and a new scorer version is recorded.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pandas as pd
import pytest
from pydantic import BaseModel

from psit_lib.runs import Experiment
from psit_lib.runs.records import StudyResult
from psit_lib.runs.runner import EpisodeSpec, study_episode
from psit_lib.runs.scores import Metric, Score, ScoreContext, Scored, Scorer, metric, score_records, scorer
from psit_lib.runs.study import MAIN, Part, Study, StudyNotebook, sweep_model_name, sweep_part_name

NOTEBOOK = "91_toy"


class ToyParams(BaseModel):
    n: int = 4
    fail_index: int = -1
    sweep_values: list[str] = ["reimagine", "deny"]
    extra: bool = False


class Toy(StudyResult):
    schema_version: int = 1
    number: int
    word: str


def _plan(params: ToyParams, models: list[str]) -> list[EpisodeSpec]:
    return [EpisodeSpec(f"toy/{m}/{i}", {"model": m, "index": i, "group": "even" if i % 2 == 0 else "odd"})
            for m in models for i in range(params.n)]


def _episode(params: ToyParams):
    @study_episode(Toy)
    async def episode(spec: EpisodeSpec, session: Any) -> Toy:
        if spec.params["index"] == params.fail_index:
            raise RuntimeError("this episode fails on purpose")
        return Toy(number=spec.params["index"] * 3, word="ab" * spec.params["index"])
    return episode


CALLS = {"parity": 0}


@scorer("parity", version=1)
def parity(record, ctx: ScoreContext) -> Score:
    CALLS["parity"] += 1
    number = record.require_result().number
    return Score(value=number % 2 == 0, explanation=f"{number} is {'even' if number % 2 == 0 else 'odd'}",
                 metadata={"number": number, "part": ctx.part})


@scorer("length")
def length(record, ctx: ScoreContext) -> Score:
    return Score(value=len(record.require_result().word))


@metric("by_group", higher_is_better={"even_share": True})
def by_group(scored: Scored) -> pd.DataFrame:
    main = scored.part(MAIN)
    ok = main[main["status"] == "ok"]
    table = ok.groupby("group", sort=True).agg(even_share=("parity", "mean"), mean_number=("parity.number", "mean"),
                                              mean_length=("length", "mean")).reset_index()
    table["failed"] = [int(((main["group"] == g) & (main["status"] != "ok")).sum()) for g in table["group"]]
    return table


@metric("sweep_rows")
def sweep_rows(scored: Scored) -> pd.DataFrame:
    rows = [{"part": p, "value": meta.get("value"), "n": len(scored.part(p))} for p, meta in scored.parts.items()]
    return pd.DataFrame(rows, columns=["part", "value", "n"])


def _sweep_plan(params: ToyParams, models: dict[Any, str]) -> list[EpisodeSpec]:
    return [EpisodeSpec(f"toy-sweep/{m}/{i}", {"model": m, "index": i, "group": "sweep"})
            for m in models.values() for i in range(2)]


def _extra(params: ToyParams, models: list[str]) -> list[Part]:
    if not params.extra:
        return []
    return [Part("reference", [EpisodeSpec("toy-ref/0", {"model": models[0], "index": 1, "group": "ref"})],
                 {"design": "reference"})]


def _study(scorers=(parity, length)) -> Study:
    return Study(name="toy", result_type=Toy, notebooks={NOTEBOOK: StudyNotebook(
        params_model=ToyParams, plan=_plan, episode=_episode, scorers=scorers, metrics=(by_group, sweep_rows),
        sweeps=lambda p: {"unheld_secret": p.sweep_values}, sweep_plan=_sweep_plan, parts=_extra)},
        prompt_catalogue=dict, differences=list, simulator_assumptions=dict)


def _run(tmp_path, params: ToyParams, study: Study | None = None):
    exp = Experiment(NOTEBOOK, params.model_dump(), run_dir=tmp_path / "run")
    run = asyncio.run((study or _study()).run(exp, params))
    exp.finish()
    return exp, run


def _forbid_models(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("rescoring must not build a model client")

    monkeypatch.setattr("psit_lib.runs.experiment.make_client", refuse)
    monkeypatch.setattr("psit_lib.runs.backend.make_client", refuse)


def test_score_and_scorer_contract():
    assert Score().value is None and Score(value=0.5, metadata={"k": 1}).metadata == {"k": 1}
    with pytest.raises(ValueError):
        Score(value=1, unknown=2)  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        Scorer("has.dot", lambda r, c: Score())
    with pytest.raises(ValueError):
        Scorer("ok", lambda r, c: Score(), version=0)
    assert parity.name == "parity" and parity.version == 1 and not parity.model_graded
    assert by_group.direction("even_share") == "higher" and by_group.direction("mean_number") is None
    assert Metric("m", by_group.fn, {"x": False}).direction("x") == "lower"


def test_run_scores_every_part_writes_every_table_and_stores_scores(tmp_path):
    params = ToyParams(n=4, fail_index=3, extra=True)
    exp, run = _run(tmp_path, params)
    profile = exp.settings.sim_profile
    # parts: main, one per swept value (named in one place), then the notebook's own
    sweep_parts = [sweep_part_name("unheld_secret", v) for v in params.sweep_values]
    assert list(run.records) == [MAIN, *sweep_parts, "reference"]
    meta = exp.store.metadata()
    assert meta.parts[sweep_parts[1]] == {"knob": "unheld_secret", "value": "deny", "episodes": 2,
                                          "model": sweep_model_name(profile, "unheld_secret", "deny")}
    assert meta.parts["reference"] == {"design": "reference", "episodes": 1}
    assert meta.scorer_versions == {"parity": 1, "length": 1}
    # one row per episode, failed one kept without scores; metadata flattened into columns
    scores = run.scores
    assert len(scores) == 4 + 2 * 2 + 1
    failed = scores[scores["status"] == "error"]
    assert len(failed) == 1 and failed["parity"].isna().all() and "fails on purpose" in failed["error"].iat[0]
    assert {"episode_id", "part", "model", "index", "group", "parity", "parity.number", "parity.part",
            "length"} <= set(scores.columns)
    assert list(scores.loc[scores["part"] == MAIN, "parity.number"].dropna()) == [0, 3, 6]
    # every metric is written as a table
    assert exp.store.table_names() == ["by_group.csv", "sweep_rows.csv"]
    saved = pd.read_csv(exp.store.tables_dir / "by_group.csv")
    assert list(saved["even_share"]) == [1.0, 0.0] and list(saved["failed"]) == [0, 1]
    # the scores file: one line per (finished episode, scorer)
    lines = exp.store.score_lines()
    assert len(lines) == 2 * (3 + 4 + 1)
    line = lines[("toy/" + exp.models[0] + "/1", "parity")]
    assert line == {"episode_id": f"toy/{exp.models[0]}/1", "part": MAIN, "scorer": "parity", "version": 1,
                    "value": False, "explanation": "3 is odd", "metadata": {"number": 3, "part": MAIN}}


def test_resume_keeps_stored_scores_and_rescore_reproduces_tables_without_a_client(tmp_path, monkeypatch):
    params = ToyParams(n=4)
    exp, run = _run(tmp_path, params)
    CALLS["parity"] = 0
    _, again = _run(tmp_path, params)  # a resume: episodes and scores reused
    assert CALLS["parity"] == 0
    for name, table in run.tables.items():
        pd.testing.assert_frame_equal(table, again.tables[name])
    size = (exp.store.dir / "scores.jsonl").stat().st_size
    _forbid_models(monkeypatch)
    rescored = _study().rescore(exp.store.dir)
    assert CALLS["parity"] == 0 and (exp.store.dir / "scores.jsonl").stat().st_size == size  # nothing new
    for name, table in run.tables.items():
        pd.testing.assert_frame_equal(table, rescored.tables[name])
    # a named scorer is computed again even where its score is stored
    _study().rescore(exp.store.dir, ["parity"])
    assert CALLS["parity"] == 4 + 4
    assert exp.store.metadata().rescored[-1]["scorers"] == ["parity"]
    with pytest.raises(KeyError, match="no scorer 'nope'"):
        _study().rescore(exp.store.dir, ["nope"])


def test_an_old_folder_without_scores_is_scored_in_full(tmp_path, monkeypatch):
    exp, run = _run(tmp_path, ToyParams(n=3))
    (exp.store.dir / "scores.jsonl").unlink()
    assert not (exp.store.dir / "scores.jsonl").exists()
    _forbid_models(monkeypatch)
    rescored = _study().rescore(exp.store.dir)
    assert len(exp.store.score_lines()) == 2 * (3 + 4)
    for name, table in run.tables.items():
        pd.testing.assert_frame_equal(table, rescored.tables[name])


def test_a_new_scorer_version_is_recomputed_and_recorded(tmp_path):
    exp, run = _run(tmp_path, ToyParams(n=2))
    bumped = Scorer("parity", lambda r, c: Score(value=True, metadata={"number": r.require_result().number}),
                    version=2)
    path = exp.store.dir / "scores.jsonl"
    before = len(path.read_text().splitlines())
    rescored = _study((bumped, length)).rescore(exp.store.dir)
    assert rescored.scores.loc[rescored.scores["part"] == MAIN, "parity"].tolist() == [True, True]
    assert len(path.read_text().splitlines()) == before  # rewritten: the new version replaces the old lines
    lines = exp.store.score_lines()
    assert {line["version"] for (_, s), line in lines.items() if s == "parity"} == {2}
    meta = exp.store.metadata()
    assert meta.scorer_versions["parity"] == 2 and meta.rescored[-1]["versions_changed"] == {"parity": 2}


def test_a_partial_last_score_line_is_skipped(tmp_path):
    exp, _ = _run(tmp_path, ToyParams(n=2))
    path = exp.store.dir / "scores.jsonl"
    before = exp.store.score_lines()
    path.write_bytes(path.read_bytes() + b'{"episode_id": "toy/x/0", "sco')
    assert exp.store.score_lines() == before
    exp.store.append_scores([{"episode_id": "e", "scorer": "s", "value": 1}])
    assert exp.store.score_lines()[("e", "s")]["value"] == 1
    assert all(json.loads(line) for line in path.read_text().splitlines()[:-2])


def test_model_graded_scorers_need_a_session_and_get_one_per_episode(tmp_path):
    exp, run = _run(tmp_path, ToyParams(n=2))
    seen: list[tuple[str, str]] = []

    @scorer("judge", model_graded=True)
    async def judge(record, ctx: ScoreContext) -> Score:
        assert ctx.session is not None
        seen.append((record.episode_id, ctx.session))
        return Score(value=1)

    records = [(MAIN, r) for r in run.main]
    with pytest.raises(ValueError, match="calls a model"):
        asyncio.run(score_records(records, [judge], params=None, models=exp.models))
    lines = asyncio.run(score_records(records, [judge], params=None, models=exp.models,
                                      session_for=lambda rec, sc: f"session {rec.episode_id} {sc.name}"))
    assert [line.value for line in lines] == [1, 1]
    assert seen == [(r.episode_id, f"session {r.episode_id} judge") for r in run.main]
    session = exp.scoring_session(run.main[0], judge)
    assert session.path == "score/judge" and session.episode_id == run.main[0].episode_id


def test_no_sweep_part_on_a_real_endpoint():
    study = _study()
    parts = study.parts(NOTEBOOK, ToyParams(n=1), ["m"], None)
    assert [p.name for p in parts] == [MAIN]
    parts = study.parts(NOTEBOOK, ToyParams(n=1), ["m"], lambda knob, values: {v: f"m:{v}" for v in values})
    assert [p.name for p in parts] == [MAIN, "sweep:unheld_secret=reimagine", "sweep:unheld_secret=deny"]
    assert [s.params["model"] for s in parts[2].specs] == ["m:deny", "m:deny"]


def test_a_table_s_direction_is_its_metric_s():
    study = _study()
    assert study.direction(NOTEBOOK, "by_group", "even_share") == "higher"
    assert study.direction(NOTEBOOK, "by_group", "mean_length") is None
    with pytest.raises(KeyError, match="no table 'nope'"):
        study.direction(NOTEBOOK, "nope", "x")


def test_a_model_graded_scorer_is_rescored_from_the_run_s_cache_without_a_new_call(tmp_path, monkeypatch):
    """A scorer that calls a model gets a session through the run's response cache; ``psit rescore``'s
    sessions replay that cache (a call the run never made would fail), so the scores and tables
    come back the same with sockets forbidden."""
    import socket

    from psit_lib.cli.rescore import replay_sessions
    from psit_lib.runs.folder import RunFolder

    @scorer("judge", model_graded=True)
    async def judge(record, ctx: ScoreContext) -> Score:
        reply = await ctx.session.chat([{"role": "user", "content": f"Is {record.require_result().number} even?"}],
                                       role="judge")
        return Score(value=reply.content, metadata={"cached": reply.cached})

    @metric("judged")
    def judged(scored: Scored) -> pd.DataFrame:
        return scored.part(MAIN)[["episode_id", "judge"]]

    study = Study(name="toy", result_type=Toy, notebooks={NOTEBOOK: StudyNotebook(
        params_model=ToyParams, plan=_plan, episode=_episode, scorers=(judge,), metrics=(judged,))},
        prompt_catalogue=dict, differences=list, simulator_assumptions=dict)
    exp, run = _run(tmp_path, ToyParams(n=3), study)
    assert run.tables["judged"]["judge"].notna().all()
    assert not any(run.scores["judge.cached"])                   # made now, through the cache
    assert exp.store.metadata().scoring_sampling == {"temperature": 0.3, "max_tokens": 2048}

    def refuse(*args, **kwargs):
        raise AssertionError("no socket may be opened while rescoring")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    folder = RunFolder(exp.store.dir)
    again = study.rescore(folder.dir, ["judge"], session_for=replay_sessions(folder))
    pd.testing.assert_frame_equal(again.tables["judged"], run.tables["judged"])
    assert all(again.scores["judge.cached"])                     # every call replayed


def test_a_metric_reads_only_the_parts_it_declares_and_a_rescore_rewrites_the_scores_file(tmp_path):
    seen: list[set[str]] = []

    @metric("sweeps_only", parts=("sweep:",))
    def sweeps_only(scored: Scored) -> pd.DataFrame:
        seen.append(set(scored.scores["part"]) | set(scored.parts))
        return pd.DataFrame({"n": [len(scored.scores)]})

    study = Study(name="toy", result_type=Toy, notebooks={NOTEBOOK: StudyNotebook(
        params_model=ToyParams, plan=_plan, episode=_episode, scorers=(parity,), metrics=(sweeps_only,),
        sweeps=lambda p: {"unheld_secret": p.sweep_values}, sweep_plan=_sweep_plan)},
        prompt_catalogue=dict, differences=list, simulator_assumptions=dict)
    exp, run = _run(tmp_path, ToyParams(n=2), study)
    assert seen[-1] == {"sweep:unheld_secret=reimagine", "sweep:unheld_secret=deny"}
    assert list(run.tables["sweeps_only"]["n"]) == [4]
    path = exp.store.dir / "scores.jsonl"
    lines = len(path.read_text().splitlines())
    study.rescore(exp.store.dir, ["parity"])
    study.rescore(exp.store.dir, ["parity"])
    assert len(path.read_text().splitlines()) == lines  # one line per (episode, scorer), never appended twice
