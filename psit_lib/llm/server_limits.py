"""What an endpoint serves, asked before a real run, and the concurrency and timeout that follow.

A small server queues calls beyond its slots and queued time counts against the timeout, so the
endpoint is asked its slots and context (llama.cpp ``/props``, vLLM ``/v1/models``, Ollama
``/api/ps``) and, with every slot busy, its decoding speed; :func:`plan_sizing` (pure) turns that
into calls in flight and a timeout. A setting the user made always stands. During the run the client
lengthens the timeout as replies report slower decoding, and sizes a server that reports no slots by
its replies' latency (``llm.client``, ``llm.replicas``).
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

PROBE_TIMEOUT = 3.0
"""Seconds each introspection request may take (a server that does not answer reports nothing)."""

CALIBRATION_TOKENS = 32
"""Tokens each speed-measuring completion asks for."""

CALIBRATION_TIMEOUT = 60.0

TIMEOUT_SAFETY = 4.0
"""A timeout covers this many times the measured time of a full reply: on a shared 2-core machine a
2-slot llama-server measured at 11.1 tokens/s fell to 4.6 when the load rose to 10, and at twice
a reply it cancelled a 2048-token reply 1,600 tokens in (its retry, same seed, runs away again)."""

MIN_TIMEOUT = 120.0
"""Never below the default timeout: a measured speed only ever lengthens it."""


@dataclass(frozen=True)
class ServerLimits:
    """What one endpoint reported about itself (None: not reported)."""

    url: str
    server: str | None = None
    """``llama.cpp``, ``vllm``, ``ollama`` or None when nothing answered."""
    slots: int | None = None
    """Requests it runs at once."""
    context: int | None = None
    """Tokens of context one request may use."""
    tokens_per_second: float | None = None
    """Decoding speed of one request while every slot decodes, measured by short completions."""

    def describe(self) -> str:
        parts = [f"{self.slots} slots" if self.slots else "slots not reported"]
        if self.context:
            parts.append(f"{self.context} tokens of context")
        if self.tokens_per_second:
            parts.append(f"{self.tokens_per_second:.1f} tokens/s measured")
        return f"{self.url} ({self.server or 'unknown server'}: {', '.join(parts)})"


@dataclass(frozen=True)
class Sizing:
    """The concurrency and timeout a run uses, and the one line that says so."""

    endpoint_slots: dict[str, int]
    """Calls in flight per replica URL (only those the server reported)."""
    timeout: float | None
    """A timeout derived from a measured speed (None: keep the setting)."""
    message: str


def server_root(base_url: str) -> str:
    """``http://h:8080/v1`` -> ``http://h:8080``: llama.cpp and Ollama serve their own routes there."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _get_json(url: str, api_key: str | None, timeout: float, body: dict[str, Any] | None = None) -> Any:
    """The JSON a GET of ``url`` answers (a POST of ``body`` when given)."""
    request = urllib.request.Request(url) if body is None else urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def _positive_int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 1 else None


def read_props(body: Any) -> tuple[int | None, int | None]:
    """(slots, context per slot) from llama.cpp's ``/props`` body."""
    if not isinstance(body, dict):
        return None, None
    settings = body.get("default_generation_settings")
    context = _positive_int(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return _positive_int(body.get("total_slots")), context


def read_models_context(body: Any, model: str) -> int | None:
    """The context ``/v1/models`` reports for ``model`` (vLLM's ``max_model_len``, llama.cpp's
    ``meta.n_ctx``); the only listed model's when the name is not listed."""
    data = body.get("data") if isinstance(body, dict) else None
    entries = [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []
    named = [m for m in entries if m.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in named:
        meta = entry.get("meta")
        meta = meta if isinstance(meta, dict) else {}
        found = _positive_int(entry.get("max_model_len")) or _positive_int(meta.get("n_ctx"))
        if found:
            return found
    return None


def read_ollama_context(body: Any, model: str) -> int | None:
    """The ``context_length`` Ollama's ``/api/ps`` reports for a loaded ``model``."""
    loaded = body.get("models") if isinstance(body, dict) else None
    for entry in loaded if isinstance(loaded, list) else ():
        if isinstance(entry, dict) and model in (entry.get("name"), entry.get("model")):
            return _positive_int(entry.get("context_length"))
    return None


def measure_speed(base_url: str, model: str, api_key: str | None, timeout: float = CALIBRATION_TIMEOUT,
                  at_once: int = 1) -> float | None:
    """Decoding tokens/s of one of ``at_once`` short completions sent together (the slowest),
    or None when none succeeds."""
    if at_once > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(at_once) as pool:
            speeds = [s for s in pool.map(lambda _: measure_speed(base_url, model, api_key, timeout),
                                          range(at_once)) if s]
        return min(speeds) if speeds else None
    body = {"model": model, "max_tokens": CALIBRATION_TOKENS, "temperature": 0, "seed": 0,
            "messages": [{"role": "user", "content": "Count from one to twenty in words."}]}
    started = time.monotonic()
    try:
        data = _get_json(base_url.rstrip("/") + "/chat/completions", api_key, timeout, body)
    except (OSError, ValueError):
        return None
    return read_speed(data, time.monotonic() - started)


def read_speed(data: Any, wall: float) -> float | None:
    """llama.cpp's ``timings.predicted_per_second``, else completion tokens over wall time."""
    if not isinstance(data, dict):
        return None
    timings = data.get("timings")
    if isinstance(timings, dict):
        speed = timings.get("predicted_per_second")
        if isinstance(speed, (int, float)) and speed > 0:
            return float(speed)
    usage = data.get("usage")
    tokens = _positive_int(usage.get("completion_tokens")) if isinstance(usage, dict) else None
    return tokens / wall if tokens and wall > 0 else None


def probe(base_url: str, model: str, api_key: str | None = None, *, timeout: float = PROBE_TIMEOUT,
          measure: bool = True) -> ServerLimits:
    """Ask ``base_url`` what it serves; every route that does not answer reports nothing."""
    root = server_root(base_url)
    try:
        slots, context = read_props(_get_json(root + "/props", api_key, timeout))
        if slots:
            speed = measure_speed(base_url, model, api_key, at_once=slots) if measure else None
            return ServerLimits(base_url, "llama.cpp", slots, context, speed)
    except (OSError, ValueError):
        pass
    for server, url, read in (("vllm", base_url.rstrip("/") + "/models", read_models_context),
                              ("ollama", root + "/api/ps", read_ollama_context)):
        try:
            context = read(_get_json(url, api_key, timeout), model)
        except (OSError, ValueError):
            continue
        if context:
            return ServerLimits(base_url, server, None, context)
    return ServerLimits(base_url)


def plan_sizing(limits: Sequence[ServerLimits], *, env: Mapping[str, str], concurrency: int, timeout: float,
                max_tokens: int) -> Sizing:
    """The run's per-replica slots (the reported ones) and timeout (``TIMEOUT_SAFETY`` full replies at the
    measured speed, at least ``MIN_TIMEOUT``), unless ``PSIT_ENDPOINT_CONCURRENCY`` or ``PSIT_TIMEOUT``
    is set; the message is one line naming those variables."""
    user_slots = bool(env.get("PSIT_ENDPOINT_CONCURRENCY", "").strip())
    user_timeout = bool(env.get("PSIT_TIMEOUT", "").strip())
    slots = {} if user_slots else {lim.url: lim.slots for lim in limits if lim.slots}
    speeds = [max_tokens / lim.tokens_per_second for lim in limits if lim.tokens_per_second]
    new_timeout = None
    if speeds and not user_timeout:
        new_timeout = float(max(MIN_TIMEOUT, math.ceil(TIMEOUT_SAFETY * max(speeds))))
    used_timeout = new_timeout or timeout
    unreported = [lim.url for lim in limits if not lim.slots]
    if slots:
        per = ", ".join(f"{n} at {url}" for url, n in slots.items())
        how = f"calls in flight: {per} (the server's slots)"
    elif user_slots:
        how = f"calls in flight per replica: {env['PSIT_ENDPOINT_CONCURRENCY'].strip()} (PSIT_ENDPOINT_CONCURRENCY)"
    else:
        how = (f"up to {concurrency} calls in flight (PSIT_CONCURRENCY), halved while replies queue towards "
               "their timeout")
    if new_timeout is not None:
        when = (f"timeout {used_timeout:g}s per attempt ({TIMEOUT_SAFETY:g} x {max_tokens} tokens at the measured "
                f"{min(lim.tokens_per_second or math.inf for lim in limits):.1f} tokens/s)")
    else:
        when = f"timeout {used_timeout:g}s per attempt" + (" (PSIT_TIMEOUT)" if user_timeout else "")
    note = ""
    if unreported and not user_slots:
        note = (f"; {', '.join(unreported)} reported no slot count: set PSIT_ENDPOINT_CONCURRENCY to what one "
                "server runs at once (vLLM --max-num-seqs, OLLAMA_NUM_PARALLEL) to fix the count, and PSIT_TIMEOUT")
    elif not user_timeout:
        note = "; PSIT_ENDPOINT_CONCURRENCY and PSIT_TIMEOUT change them"
    return Sizing(slots, new_timeout, f"model server: {how}; {when}{note}")


def format_endpoint_slots(slots: Mapping[str, int]) -> str:
    """``{url: n}`` -> ``url=n,url=n`` (the per-replica form of ``PSIT_ENDPOINT_CONCURRENCY``)."""
    return ",".join(f"{url}={n}" for url, n in slots.items())
