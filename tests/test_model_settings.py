"""Per-model request settings by configuration (``PSIT_MODEL_SETTINGS``, ``llm.model_settings``):
the file is checked in one sentence, a model's settings reach its requests (and its cache key),
and an optional field a real HTTP server refuses is dropped once, said once, and recorded in the
run metadata, never silently; the study's own configuration file holds its four models."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st

from loopback import HandlerServer, QuietHandler, send_json
from psit_lib.llm import ConfigurationError, LLMClient, LLMSettings, ModelCallError, ModelSession
from psit_lib.llm.cache import request_key
from psit_lib.llm.model_settings import ModelRequestSettings, parse_model_settings, rejected_field
from psit_lib.runs.backend import make_client
from psit_lib.sim.engine import handle_http

MESSAGES = [{"role": "user", "content": "hello"}]
REPO = Path(__file__).resolve().parents[1]


class PickyServer(HandlerServer):
    """An OpenAI-compatible loopback server that refuses named top-level request fields the way
    real servers do (OpenAI's 400 with ``param``, or a validator's 422 listing the field), and
    answers every other request from the simulator; it keeps every request body it got."""

    def __init__(self, refused: dict[str, tuple[int, dict]]) -> None:
        self.bodies: list[dict] = []
        lock = threading.Lock()
        outer = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw)
                with lock:
                    outer.bodies.append(body)
                for name, (status, payload) in refused.items():
                    if name in body:
                        send_json(self, status, payload)
                        return
                status, reply = handle_http("POST", self.path, dict(self.headers.items()), raw)
                send_json(self, status, reply)


        self._serve(Handler)



OPENAI_400 = (400, {"error": {"message": "Unrecognized request argument supplied: reasoning_effort",
                              "type": "invalid_request_error", "param": "reasoning_effort", "code": None}})
VALIDATOR_422 = (422, {"detail": [{"type": "extra_forbidden", "loc": ["body", "reasoning"],
                                   "msg": "Extra inputs are not permitted", "input": {"include": True}}]})


@pytest.fixture
def picky():
    servers: list[PickyServer] = []

    def start(refused):
        servers.append(PickyServer(refused))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def settings_for(url: str, model_settings: dict, **kw) -> LLMSettings:
    base = dict(backend="openai", base_urls=(url,), model="psit-sim", cache="off", max_retries=2,
                backoff_base=0.01, backoff_max=0.1, timeout=10.0,
                model_settings={m: ModelRequestSettings.model_validate(s) for m, s in model_settings.items()})
    return LLMSettings(**{**base, **kw})


async def chat(client: LLMClient, episode: str = "e1", **kw):
    return await ModelSession(client, run_seed=3, episode_id=episode).chat(MESSAGES, role="generic", **kw)


# --------------------------------------------------------------------------- the file


@pytest.mark.parametrize("text, needle", [
    ("m: {temperature: 0.7}", "temperature is the notebook parameter"),
    ("m: {max_tokens: 4}", "invalid max_tokens"),
    ("m: {reasoning_effort: extreme}", "invalid reasoning_effort"),
    ("m: {extra_body: {messages: []}}", "extra_body may not set messages"),
    ("m: {top_k: 3}", "invalid top_k"),
    ("- a\n- b\n", "must map each model name to its settings"),
    ("m: [unclosed", "is not valid YAML or JSON"),
])
def test_a_bad_settings_file_is_one_sentence_naming_the_variable(text, needle):
    with pytest.raises(ConfigurationError) as info:
        parse_model_settings(text, "models.yaml")
    message = str(info.value)
    assert message.startswith("PSIT_MODEL_SETTINGS") and needle in message and "\n" not in message


def test_settings_come_from_a_file_or_inline_json_and_are_recorded(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("qwen3-32b:\n  max_tokens: 4096\n  reasoning_effort: high\n  extra_body: {reasoning: {include: true}}\n")
    s = LLMSettings.from_env({"PSIT_MODEL_SETTINGS": str(path), "PSIT_MODEL": "qwen3-32b"})
    own = s.request_settings()
    assert own is not None and own.max_tokens == 4096
    assert own.optional_fields() == {"reasoning": {"include": True}, "reasoning_effort": "high"}
    recorded = s.public_dict()
    assert recorded["model_settings_source"] == str(path)
    assert recorded["model_settings"]["qwen3-32b"]["max_tokens"] == 4096
    inline = LLMSettings.from_env({"PSIT_MODEL_SETTINGS": '{"a": {"max_tokens": 100}}', "PSIT_MODEL": "b"})
    assert inline.model_settings["a"].max_tokens == 100 and inline.request_settings() is None
    with pytest.raises(ConfigurationError, match="cannot be read"):
        LLMSettings.from_env({"PSIT_MODEL_SETTINGS": str(tmp_path / "missing.yaml")})
    with pytest.raises(ConfigurationError, match="inline JSON that does not parse"):
        LLMSettings.from_env({"PSIT_MODEL_SETTINGS": "{not json"})


@pytest.mark.parametrize("status, text, expected", [
    (400, '{"error": {"message": "Unrecognized request argument supplied: reasoning_effort"}}', "reasoning_effort"),
    (422, "Extra inputs are not permitted: body.reasoning", "reasoning"),
    (400, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort"),
    (400, "start the server with --reasoning-parser to get reasoning_content", None),
    (400, "This model's maximum context length is 8192 tokens", None),
    (500, "reasoning_effort", None),
])
def test_a_refusal_names_a_field_only_as_a_whole_word(status, text, expected):
    assert rejected_field(status, text, {"reasoning", "reasoning_effort"}) == expected


NAMES = st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True)
PROSE = st.text(alphabet="abc XYZ.,:;()[]{}'\"\n", max_size=40)


@given(NAMES, PROSE, PROSE, st.sampled_from(['"{}"', "'{}'", " {} ", " {}:", "[{}]"]))
def test_a_field_named_in_a_refusal_is_found_and_a_longer_name_is_not(name, before, after, quoted):
    assert rejected_field(400, before + quoted.format(name) + after, {name}) == name
    assert rejected_field(422, before + quoted.format(name) + after, {name}) == name
    assert rejected_field(400, before + quoted.format(f"x{name}_y") + after, {name}) is None
    assert rejected_field(400, before + quoted.format(f"--{name}-parser") + after, {name}) is None
    assert rejected_field(429, before + quoted.format(name) + after, {name}) is None


# --------------------------------------------------------------------------- requests


async def test_a_models_settings_reach_its_requests_and_its_cache_key(picky):
    server = picky({})
    own = {"psit-sim": {"max_tokens": 4096, "reasoning_effort": "low", "extra_body": {"reasoning": {"include": True}}}}
    client = LLMClient(settings_for(server.url, own))
    await chat(client)
    await chat(client, episode="e2", max_tokens=64)  # a call's own max_tokens stands
    first, second = server.bodies
    assert first["max_tokens"] == 4096 and second["max_tokens"] == 64
    assert first["reasoning_effort"] == "low" and first["reasoning"] == {"include": True}
    assert first["temperature"] == 0.3  # temperature stays the run's
    plain = LLMClient(settings_for(server.url, {"another-model": {"max_tokens": 4096}}))
    await chat(plain)
    assert server.bodies[-1]["max_tokens"] == 2048 and "reasoning_effort" not in server.bodies[-1]
    from psit_lib.llm.types import ChatRequest

    base = ChatRequest(role="r", messages=tuple(MESSAGES), model="m")
    assert request_key(base) != request_key(ChatRequest(role="r", messages=tuple(MESSAGES), model="m",
                                                        extra={"reasoning_effort": "low"}))


async def test_a_refused_field_is_dropped_once_with_one_warning_over_real_http(picky, caplog):
    server = picky({"reasoning_effort": OPENAI_400})
    own = {"psit-sim": {"reasoning_effort": "high", "extra_body": {"reasoning": {"include": True}}}}
    client = LLMClient(settings_for(server.url, own))
    with caplog.at_level(logging.WARNING, logger="psit_lib.llm"):
        first = await chat(client)
        second = await chat(client, episode="e2")
    assert first.content and second.content
    sent = [("reasoning_effort" in b, "reasoning" in b) for b in server.bodies]
    assert sent == [(True, True), (False, True), (False, True)]  # refused once, then never sent
    warnings = [r for r in caplog.records if r.name == "psit_lib.llm"]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage()
    assert "'reasoning_effort'" in warnings[0].getMessage() and "HTTP 400" in warnings[0].getMessage()
    stats = client.stats.as_dict()
    assert stats["dropped_parameters"] == {"psit-sim: reasoning_effort": 1}
    assert stats["retries"] == 0 and stats["faults_by_kind"] == {} and stats["model_calls"] == 2


async def test_several_refused_fields_are_dropped_one_by_one(picky):
    server = picky({"reasoning_effort": OPENAI_400, "reasoning": VALIDATOR_422})
    own = {"psit-sim": {"reasoning_effort": "high", "extra_body": {"reasoning": {"include": True}}}}
    client = LLMClient(settings_for(server.url, own))
    await chat(client)
    assert len(server.bodies) == 3 and not {"reasoning", "reasoning_effort"} & set(server.bodies[-1])
    assert client.stats.dropped == {"psit-sim: reasoning_effort": 1, "psit-sim: reasoning": 1}


async def test_a_refusal_that_names_no_optional_field_still_fails_the_call(picky):
    server = picky({"reasoning_effort": (400, {"error": {"message": "maximum context length exceeded"}})})
    client = LLMClient(settings_for(server.url, {"psit-sim": {"reasoning_effort": "high"}}))
    with pytest.raises(ModelCallError, match="HTTP 400"):
        await chat(client)
    assert len(server.bodies) == 1 and client.stats.dropped == {}


async def test_the_run_metadata_records_the_settings_and_the_dropped_field(picky, tmp_path):
    from psit_lib.runs.experiment import Experiment

    server = picky({"reasoning_effort": OPENAI_400})
    settings = settings_for(server.url, {"model-b": {"reasoning_effort": "high", "max_tokens": 4096}}, model="model-a")
    exp = Experiment("97_model_settings", {"x": 1}, run_dir=tmp_path, settings=settings, models=["model-a", "model-b"])
    await chat(exp.clients["model-a"])
    await chat(exp.clients["model-b"])
    await chat(exp.clients["model-b"], episode="e2")
    exp.finish()
    stored = exp.store.metadata()
    assert stored.settings["model_settings"]["model-b"]["reasoning_effort"] == "high"
    assert stored.last_execution is not None
    assert stored.last_execution.model_dump()["dropped_parameters"] == {"model-b: reasoning_effort": 1}
    assert [b.get("max_tokens") for b in server.bodies] == [2048, 4096, 4096, 4096]
    assert [b["model"] for b in server.bodies] == ["model-a", "model-b", "model-b", "model-b"]


async def test_the_simulator_backend_accepts_the_settings_unchanged():
    client = make_client(LLMSettings(cache="off", model_settings={
        "psit-sim": ModelRequestSettings(max_tokens=4096, reasoning_effort="low")}))
    assert (await chat(client)).content
    assert client.stats.dropped == {}


# --------------------------------------------------------------------------- the study's configuration

STUDY_MODELS = ("openai/gpt-oss-20b", "openai/gpt-oss-120b", "qwen/qwen3-32b", "qwen/qwen3-235b-a22b-thinking-2507")


def test_the_study_model_settings_file_holds_the_four_models_as_the_reference_configured_them():
    path = REPO / "notebooks" / "params" / "study_model_settings.yaml"
    s = LLMSettings.from_env({"PSIT_MODEL_SETTINGS": str(path)})
    assert tuple(s.model_settings) == STUDY_MODELS
    budgets = {m: v.max_tokens for m, v in s.model_settings.items()}
    assert budgets == {**{m: 2048 for m in STUDY_MODELS[:3]}, STUDY_MODELS[3]: 4096}
    # reasoning kept (the reference's OpenRouter body), effort left to the provider ('auto')
    assert all(v.optional_fields() == {"reasoning": {"include": True}} for v in s.model_settings.values())


def test_the_study_params_file_names_the_four_models_for_the_psit_notebooks():
    from psit_lib.cli.notebooks import load_params, resolve_notebooks
    from psit_lib.studies.psit.reference import study_model

    path = REPO / "notebooks" / "params" / "study_models.yaml"
    notebooks = resolve_notebooks(["2", "3", "4", "7"])
    params = load_params(str(path), [], notebooks)
    for name, values in params.items():
        assert tuple(values["models"]) == STUDY_MODELS, name
        assert values.get("temperature", 0.3) == 0.3 and values["max_tokens"] == 2048
    assert all(params[n]["n_episodes"] == 50 for n in params if not n.startswith("07"))
    assert [study_model(m) for m in STUDY_MODELS] == ["GPT-OSS 20B", "GPT-OSS 120B", "Qwen3 32B", "Qwen3 235B"]
    assert set(yaml.safe_load(path.read_text())) <= {p.stem for p in notebooks}
    scale = yaml.safe_load((REPO / "notebooks" / "params" / "study_scale.yaml").read_text())
    for name, values in params.items():  # the study's sizes agree with the study-scale file's
        shared = set(values) & set(scale[name]) - {"models"}
        assert shared and all(values[k] == scale[name][k] for k in shared), name


@pytest.mark.slow
def test_the_dry_run_of_the_study_configuration_lists_the_four_models_per_notebook(tmp_path):
    import os
    import subprocess
    import sys
    import time

    class Listing(HandlerServer):  # the dry run asks the endpoint what it serves, as the run would
        def __init__(self) -> None:
            class Handler(QuietHandler):
                def do_GET(self) -> None:
                    send_json(self, 200, {"object": "list", "data": [{"id": m} for m in STUDY_MODELS]}) \
                        if self.path.endswith("/models") else send_json(self, 404, {})

            self._serve(Handler)

    server = Listing()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PSIT_")}
    env.update(PSIT_RESULTS_DIR=str(tmp_path / "results"), PSIT_FIGURES_DIR=str(tmp_path / "figures"),
               PSIT_BACKEND="openai", PSIT_MODEL=STUDY_MODELS[0], PSIT_MODEL_SETTINGS="notebooks/params/study_model_settings.yaml",
               PSIT_MODEL_ENDPOINTS=";".join(f"{m}={server.url}" for m in STUDY_MODELS))
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "psit_lib.cli", "run", "2", "3", "4", "7", "--dry-run",
                               "-f", "notebooks/params/study_models.yaml"], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=120)
    finally:
        server.close()
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60  # nothing runs (test_dry_run holds the 30 s bound at study scale)
    blocks: dict[str, list[list[str]]] = {}
    for line in done.stdout.splitlines():
        if line[:2].isdigit() or line.startswith("total"):  # each model's share of the total: not a notebook's
            current = blocks.setdefault(line.split()[0], [])
        elif line.startswith("  ") and line.split()[0] in STUDY_MODELS + ("simulator",):
            current.append(line.split())
    assert len(blocks.pop("total")) == len(STUDY_MODELS)
    assert sorted(blocks) == ["02_hangman_fork_tests", "03_diagnosis_ddxplus", "04_memory_strategy_ablations",
                              "07_secret_distribution_mode_collapse"]
    for notebook, rows in blocks.items():
        assert tuple(r[0] for r in rows) == STUDY_MODELS, notebook  # no simulator sweeps on a real endpoint
        assert all(int(r[1].replace(",", "")) > 0 and float(r[2].replace(",", "")) > 0 for r in rows)
        assert [r[r.index("(max_tokens") + 1].rstrip(",") for r in rows] == ["2048", "2048", "2048", "4096"]
    assert not (tmp_path / "results").exists()


def test_configuration_files_named_from_the_checkout_are_found_from_notebooks_too(tmp_path, monkeypatch):
    """Notebooks run with ``notebooks/`` as their directory; ``psit run`` hands them absolute paths."""
    from psit_lib.cli.preflight import check_settings

    monkeypatch.chdir(REPO / "notebooks")
    s = LLMSettings.from_env({"PSIT_MODEL_SETTINGS": "notebooks/params/study_model_settings.yaml"})
    assert s.model_settings_source == str(REPO / "notebooks" / "params" / "study_model_settings.yaml")
    elsewhere = tmp_path / "mine"
    elsewhere.mkdir()
    (elsewhere / "models.yaml").write_text("m: {max_tokens: 100}\n")
    (elsewhere / "wording.toml").write_text('["hangman.confirm"]\nversion = 1\ntext = "Is it {secret}?"\n')
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PSIT_MODEL_SETTINGS", "models.yaml")
    monkeypatch.setenv("PSIT_PROMPTS_FILE", "wording.toml")
    for name in ("PSIT_BACKEND", "PSIT_MODEL", "PSIT_BASE_URLS", "PSIT_MODEL_ENDPOINTS", "PSIT_SIM_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    check_settings(probe=False)
    import os

    assert os.environ["PSIT_MODEL_SETTINGS"] == str(elsewhere / "models.yaml")
    assert os.environ["PSIT_PROMPTS_FILE"] == str(elsewhere / "wording.toml")
