"""The single seam for every model call.

``LLMClient`` wraps ``openai.AsyncOpenAI`` with bounded concurrency, retries that honour
``Retry-After``, the response cache and call statistics; on the ``sim`` backend the caller hands
it an in-process transport, so the code path is a real endpoint's and this layer never imports
the simulator. ``ModelSession`` is an episode's view: a derived seed per call and its call log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import email.utils
import logging
import math
from collections import deque
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import aiohttp
import httpx2
import openai
import tenacity

from psit_lib.llm.cache import ResponseCache
from psit_lib.llm.errors import ConfigurationError, ModelCallError
from psit_lib.llm.model_settings import STOP_SEQUENCES, rejected_field, reply_budget
from psit_lib.llm.diagnostics import FLAG_TEMPLATE_DEBRIS, FLAG_TOOL_CALL_AS_TEXT, EpisodeDiagnostics, excerpt
from psit_lib.llm.reply_readers import split_reasoning, strip_template_debris, tool_call_in_text
from psit_lib.llm.replicas import QUEUE_SHARE, ReplicaPool
from psit_lib.llm.seeds import derive_seed
from psit_lib.llm.server_limits import TIMEOUT_SAFETY
from psit_lib.llm.settings import SIM_BASE_URL, LLMSettings
from psit_lib.wire import PROFILE_HEADER, ROLE_HEADER
from psit_lib.llm.types import CallRecord, ChatRequest, ChatResult, ToolCall, Usage

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
FAULT_CHARS = 160  # a fault's reason quotes this much of what the endpoint said

log = logging.getLogger("psit_lib.llm")


@dataclass
class CallStats:
    """Counters for run metadata: what the model was actually asked, and what the cache saved."""

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_role: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    """``"<model>: <field>"`` -> calls the server refused for an optional field of the model's
    settings (the field was then left out); not counted as faults or retries."""

    def add(self, other: "CallStats") -> None:
        """Count ``other``'s calls too (a worker process's, :mod:`psit_lib.runs.processes`)."""
        for name, value in dataclasses.asdict(other).items():
            mine = getattr(self, name)
            if isinstance(mine, dict):
                for key, n in value.items():
                    mine[key] = mine.get(key, 0) + n
            else:
                setattr(self, name, mine + value)

    def as_dict(self) -> dict[str, Any]:
        return {"model_calls": self.calls, "cache_hits": self.cache_hits, "retries": self.retries,
                "model_call_failures": self.failures, "faults_by_kind": dict(self.faults),
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "calls_by_role": dict(self.by_role),
                "dropped_parameters": dict(self.dropped)}


def retry_after_seconds(response: httpx2.Response | None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after`` secs or date)."""
    if response is None:
        return None
    headers = response.headers
    if headers.get("retry-after-ms"):
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


_UNANSWERED = frozenset({"timeout", "connection_refused", "connection_error"})
"""Fault kinds where the server sent no reply (the others prove it is alive)."""

SPEED_WINDOW = 32
"""Replies whose reported decoding speed sets the timeout (the slowest of them)."""

SPEED_MIN_TOKENS = 8
"""Replies shorter than this say little about speed."""

CONNECTIONS_PER_POOL = 8
"""Calls in flight per HTTP connection pool; a client holds ceil(concurrency / this) pools."""

ANNOUNCE_GROWTH = 1.25
"""The timeout is said again (one line) when it has grown by this factor since it was last said."""


@dataclass(eq=False)
class _InFlight:
    """One attempt on the wire: its deadline (an ``asyncio.timeout`` scope, moved later when the server
    slows down), when it was sent (loop time) and the tokens it may generate."""

    scope: asyncio.Timeout
    sent: float
    max_tokens: int


class EndpointFault(Exception):
    """One failed attempt, by kind; ``retryable`` faults are tried again (5xx, 429, timeouts,
    resets, malformed bodies, empty completions), ``replica_down`` ones fail over."""

    def __init__(self, kind: str, reason: str, *, retryable: bool = True, replica_down: bool = False,
                 wait: float | None = None, status: int | None = None, body: str = "") -> None:
        super().__init__(reason)
        self.kind, self.reason, self.retryable, self.replica_down, self.wait = kind, reason, retryable, replica_down, wait
        self.status, self.body = status, body
        """The HTTP status and the server's error body, when it answered with one."""
        self.url = ""
        """The replica that failed."""
        self.failed_over = False
        """Whether that replica now cools down (the next attempt goes elsewhere at once)."""

    @property
    def detail(self) -> str:
        """Everything the server said about the refusal (the SDK's message and the raw body)."""
        return f"{self.reason} {self.body}"


def connection_fault(exc: BaseException, timeout: float) -> EndpointFault:
    """The fault of a call that got no HTTP reply, read from the root of the exception chain: the
    aiohttp transport reports a refused connection or a dropped one as a connect timeout."""
    cause = exc
    while cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, (ConnectionRefusedError, aiohttp.ClientConnectorError, httpx2.ConnectError)):
        return EndpointFault("connection_refused", f"connection error ({excerpt(str(cause), FAULT_CHARS)})", replica_down=True)
    if isinstance(cause, (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError)) and not isinstance(
            cause, (aiohttp.ServerTimeoutError, TimeoutError)):
        return EndpointFault("connection_error", f"connection error ({excerpt(str(cause), FAULT_CHARS)})")
    if isinstance(exc, openai.APITimeoutError) or isinstance(cause, (TimeoutError, httpx2.TimeoutException)):
        # not ``replica_down``: the pool decides (a lone replica is never marked down by timeouts)
        return EndpointFault("timeout", f"timeout after {timeout:g}s")
    return EndpointFault("connection_error", f"connection error ({excerpt(str(cause), FAULT_CHARS)})")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _result_from_body(data: Any) -> ChatResult:
    """The ChatResult of a chat.completion body (parsed JSON), read directly: building the SDK's
    response objects cost more CPU than the rest of a call. Anything that is not a completion
    is an endpoint fault (retried), never a guessed reply."""
    if not isinstance(data, dict):
        raise EndpointFault("malformed_body", f"a body that is not a chat completion ({excerpt(str(data), FAULT_CHARS)})")
    choices = data.get("choices")
    if not choices:
        raise EndpointFault("no_choices", "a completion with no choices")
    choice = choices[0] if isinstance(choices, list) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or not isinstance(message, dict):
        raise EndpointFault("malformed_body", f"a completion without a message ({excerpt(str(choices), FAULT_CHARS)})")
    calls = []
    for i, tc in enumerate(message.get("tool_calls") or ()):
        fn = tc.get("function") if isinstance(tc, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
            raise EndpointFault("malformed_body", f"a tool call without a function name ({excerpt(str(tc), FAULT_CHARS)})")
        calls.append(ToolCall(id=_text(tc.get("id")) or f"call_{i}", name=fn["name"],
                              arguments=_text(fn.get("arguments")) or "{}"))
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    # A server without a reasoning parser leaves <think>...</think> in the content: it is the
    # model's private reasoning, never part of the public reply.
    content, inline = split_reasoning(_text(message.get("content")) or "")
    field = _text(message.get("reasoning_content")) or _text(message.get("reasoning")) or ""
    reasoning = "\n".join(r for r in (field, inline) if r) or None
    return ChatResult(
        content=content,
        reasoning=reasoning,
        tool_calls=tuple(calls),
        usage=Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))),
        finish_reason=_text(choice.get("finish_reason")),
        model=_text(data.get("model")) or "",
    )


class LLMClient:
    """Makes chat-completions calls for the whole process; one per run."""

    def __init__(self, settings: LLMSettings | None = None, *, cache: ResponseCache | None = None,
                 transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.settings = settings or LLMSettings.from_env()
        self.cache = cache
        self.stats = CallStats()
        self._transport = transport
        self._clients: dict[str, openai.AsyncOpenAI] = {}
        self._ssl: Any = None
        """One TLS context for every pool (building one costs ~20 ms of CPU; 32 pools at 256)."""
        self._replicas: ReplicaPool | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._backoff = tenacity.wait_random_exponential(multiplier=self.settings.backoff_base,
                                                         max=self.settings.backoff_max)
        """Exponential backoff with full jitter, capped: uniform(0, min(max, base * 2**retry))."""
        self._turn = 0
        self._speeds: deque[float] = deque(maxlen=SPEED_WINDOW)
        """Decoding speeds (tokens/s) the server reported in its latest replies."""
        self._flights: set[_InFlight] = set()
        """Attempts on the wire, whose deadlines follow the server's speed."""
        self._said_timeout = self.settings.timeout
        """The longest timeout said so far (the setting until the server slows down)."""
        self._dropped: dict[str, str] = {}
        """Optional request fields the server refused (field -> its reason): never sent again."""
        self._in_flight = 0

    # -- endpoints -----------------------------------------------------------------------
    def _pool(self) -> ReplicaPool:
        if self._replicas is None:
            urls = (SIM_BASE_URL,) if self.settings.backend == "sim" else self.settings.urls_for(self.settings.model)
            slots = {url: self.settings.slots_for(url) for url in urls}
            # a real server that reports no slots (and whose count the user did not set) is sized by what it does
            adaptive = {} if self.settings.backend == "sim" else {
                url: self.settings.concurrency for url, n in slots.items() if n is None}
            self._replicas = ReplicaPool(urls, slots=slots, adaptive=adaptive)
        return self._replicas

    def _openai(self, base_url: str) -> openai.AsyncOpenAI:
        """A client for ``base_url``, one of a few in turn: an HTTP connection pool scans all its
        connections on every request, so at high concurrency several small pools cost far less
        CPU per call than one large pool (see benchmarks/harness_overhead.py)."""
        shards = max(1, -(-self.settings.concurrency // CONNECTIONS_PER_POOL))
        self._turn = (self._turn + 1) % shards
        key = f"{base_url}#{self._turn}"
        if key not in self._clients:
            pool = 2 * CONNECTIONS_PER_POOL
            transport = self._transport
            if transport is None and self.settings.backend == "sim":
                raise ConfigurationError(
                    "the simulator backend has no network address: build the client with "
                    "psit_lib.runs.make_client(), which connects it to the in-process simulator")
            if self._ssl is None:
                self._ssl = httpx2.create_ssl_context()
            # openai's aiohttp client: about half the CPU per call of httpx's own pool at 256 in
            # flight (benchmarks/harness_overhead.py); a given transport (the simulator's) stands.
            http = openai.DefaultAioHttpClient(
                transport=transport, verify=self._ssl,
                limits=httpx2.Limits(max_connections=pool, max_keepalive_connections=pool),
                timeout=self.settings.timeout)
            api_key = self.settings.api_key.get_secret_value() if self.settings.api_key else "not-needed"
            self._clients[key] = openai.AsyncOpenAI(
                base_url=base_url, api_key=api_key, max_retries=0, http_client=http,
                timeout=self.settings.timeout)
        return self._clients[key]

    # -- calls ---------------------------------------------------------------------------
    async def chat(self, request: ChatRequest) -> ChatResult:
        """One chat completion: cache, then the endpoint with retries; raises ModelCallError."""
        if self.cache is not None:
            hit = self.cache.get(request)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        self._in_flight += 1
        try:
            async with self._semaphore:
                result = await self._call_with_retries(request)
        finally:
            self._in_flight -= 1
        self.stats.calls += 1
        self.stats.by_role[request.role] = self.stats.by_role.get(request.role, 0) + 1
        self.stats.prompt_tokens += result.usage.prompt_tokens
        self.stats.completion_tokens += result.usage.completion_tokens
        if self.cache is not None:
            self.cache.put(request, result)
        return result

    async def _attempt(self, request: ChatRequest, url: str) -> ChatResult:
        """One HTTP attempt through the OpenAI client; every way an endpoint can fail becomes an
        :class:`EndpointFault`. Its deadline is an ``asyncio`` timeout, not the HTTP client's, so that it
        can move later while the reply is being generated (:meth:`_observe_speed`)."""
        client = self._openai(url)
        named = request.model.partition(":")[2] if request.model.startswith("psit-sim:") else ""  # psit-sim:<profile>
        headers = {ROLE_HEADER: request.role, PROFILE_HEADER: named or self.settings.sim_profile}
        timeout = self.timeout_for(request)
        loop = asyncio.get_running_loop()
        sent = loop.time()
        try:
            async with asyncio.timeout_at(sent + timeout) as scope:
                flight = _InFlight(scope, sent, request.max_tokens)
                self._flights.add(flight)
                try:
                    # ``post`` skips the SDK's per-field request transform (tens of ms for long
                    # histories); the body is already plain JSON of the wire format. No read timeout
                    # here: the deadline above is the attempt's.
                    response = await client.post("/chat/completions", body=request.wire_body(), cast_to=httpx2.Response,
                                                 options={"headers": headers,
                                                          "timeout": httpx2.Timeout(timeout, read=None)})
                finally:
                    self._flights.discard(flight)
            data = json.loads(response.content)
        except TimeoutError:
            raise EndpointFault("timeout", f"timeout after {round((scope.when() or loop.time()) - sent, 1):g}s") from None
        except openai.APIStatusError as exc:
            kind = "http_429" if exc.status_code == 429 else f"http_{exc.status_code // 100}xx"
            raise EndpointFault(kind, f"HTTP {exc.status_code} ({excerpt(exc.message, FAULT_CHARS)})",
                                retryable=exc.status_code in RETRYABLE_STATUS,
                                wait=retry_after_seconds(exc.response), status=exc.status_code,
                                body=_body_text(exc.response)) from None
        except openai.APIConnectionError as exc:  # APITimeoutError included (connecting, waiting for a connection)
            raise connection_fault(exc, timeout) from None
        except (openai.APIResponseValidationError, ValueError) as exc:  # JSONDecodeError is a ValueError
            raise EndpointFault("malformed_body", f"a body that is not a chat completion ({excerpt(str(exc), FAULT_CHARS)})") from None
        self._observe_speed(data, request.max_tokens)
        return _result_from_body(data)

    def timeout_for(self, request: ChatRequest) -> float:
        """Seconds this request's attempt may take once sent: the setting, lengthened to
        ``TIMEOUT_SAFETY`` full replies (its ``max_tokens``) at the slowest decoding speed the
        server reported in its recent replies (llama.cpp's ``timings``), never shortened: a
        busy CPU server decodes several times slower than it did alone."""
        return self._timeout_at_speed(request.max_tokens)

    def _timeout_at_speed(self, max_tokens: int) -> float:
        if not self._speeds:
            return self.settings.timeout
        return max(self.settings.timeout, math.ceil(TIMEOUT_SAFETY * max_tokens / min(self._speeds)))

    def _observe_speed(self, data: Any, max_tokens: int) -> None:
        """Record the speed a reply reports; when the server has slowed down, move the deadline of every
        attempt still on the wire to what its timeout is now (never earlier), and say so once it has grown."""
        timings = data.get("timings") if isinstance(data, dict) else None
        if not isinstance(timings, dict):
            return
        speed, tokens = timings.get("predicted_per_second"), timings.get("predicted_n")
        if not (isinstance(speed, (int, float)) and speed > 0 and isinstance(tokens, int) and tokens >= SPEED_MIN_TOKENS):
            return
        self._speeds.append(float(speed))
        for flight in self._flights:
            deadline = flight.sent + self._timeout_at_speed(flight.max_tokens)
            when = flight.scope.when()
            if when is not None and deadline > when and not flight.scope.expired():
                flight.scope.reschedule(deadline)
        longest = max([max_tokens, *(f.max_tokens for f in self._flights)])
        now = self._timeout_at_speed(longest)
        if now >= ANNOUNCE_GROWTH * self._said_timeout:
            log.warning("model server: replies now decode at %.1f tokens/s (the slowest of its latest %d): an attempt "
                        "of %d tokens times out after %gs (%g x its tokens at that speed; it was %gs), attempts "
                        "already sent included", min(self._speeds), len(self._speeds), longest, now,
                        TIMEOUT_SAFETY, self._said_timeout)
            self._said_timeout = now

    async def _send(self, request: ChatRequest, url: str) -> ChatResult:
        """One attempt, without the optional fields this server refused; a refusal (HTTP 400 or
        422) that names another optional field drops it and sends the call again at once."""
        while True:
            sent = request.without(self._dropped)
            try:
                return await self._attempt(sent, url)
            except EndpointFault as exc:
                name = rejected_field(exc.status or 0, exc.detail, set(sent.extra or {}))
                if name is None:
                    raise
                self._drop(name, self.settings.model, exc)

    def _drop(self, name: str, model: str, fault: EndpointFault) -> None:
        """Leave ``name`` out of this and every later call, saying so once (and counting it)."""
        key = f"{model}: {name}"
        self.stats.dropped[key] = self.stats.dropped.get(key, 0) + 1
        if name not in self._dropped:
            self._dropped[name] = reason = f"HTTP {fault.status}: {excerpt(fault.body or fault.reason, 200)}"
            log.warning("model %s: the server refused the request field %r (%s); it is left out of this and "
                        "every later call (PSIT_MODEL_SETTINGS; recorded as dropped_parameters in the run metadata)",
                        model, name, reason)

    async def _call_with_retries(self, request: ChatRequest) -> ChatResult:
        """Attempts on a replica with a free slot (the wait is not timed), endpoint faults retried by
        tenacity (backoff, Retry-After, at once elsewhere when this replica went down); every failed
        attempt is counted by kind: ``sum(faults) == retries + failures``."""
        pool = self._pool()
        attempts = self.settings.max_retries + 1
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(attempts),
            retry=tenacity.retry_if_exception(lambda exc: isinstance(exc, EndpointFault) and exc.retryable),
            wait=lambda state: self._wait(state, pool), before_sleep=self._count_retry, reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._attempt_on_replica(request, pool)
        except EndpointFault as fault:
            self.stats.failures += 1
            if not fault.retryable:
                raise ModelCallError(f"the endpoint refused the call with {fault.reason} for "
                                     f"{request.describe()}") from None
            hint = ""
            if fault.kind == "timeout" and pool.slots_of(fault.url) is None:
                hint = (" (a server that runs few calls at once queues the rest, and queued time counts against"
                        " PSIT_TIMEOUT: set PSIT_ENDPOINT_CONCURRENCY to its slot count, see the README)")
            raise ModelCallError(f"model call failed after {attempts} tries, last: {fault.reason}{hint}; "
                                 f"endpoint {fault.url}; {request.describe()}") from None
        raise AssertionError("unreachable: tenacity returns or raises")  # pragma: no cover

    async def _attempt_on_replica(self, request: ChatRequest, pool: ReplicaPool) -> ChatResult:
        """One attempt on a replica with a free slot; a fault is counted, marks the replica by
        its kind, and carries the replica and whether it now cools down."""
        url = await pool.slot()
        sent = pool.now()
        try:
            result = await self._send(request, url)
        except EndpointFault as exc:
            exc.url = url
            exc.failed_over = pool.release(url, failed=exc.replica_down, timed_out=exc.kind == "timeout",
                                           answered=exc.kind not in _UNANSWERED, sent_at=sent)
            self.stats.faults[exc.kind] = self.stats.faults.get(exc.kind, 0) + 1
            raise
        except BaseException:
            pool.release(url)
            raise
        queued = pool.now() - sent > QUEUE_SHARE * self.timeout_for(request)
        pool.release(url, answered=True, queued=queued, sent_at=sent)
        return result

    def _count_retry(self, state: tenacity.RetryCallState) -> None:
        self.stats.retries += 1

    def _wait(self, state: tenacity.RetryCallState, pool: ReplicaPool) -> float:
        """No wait when the replica just went down and another is healthy (fail over at once);
        else the server's Retry-After (capped), else exponential backoff with full jitter."""
        fault = state.outcome.exception() if state.outcome is not None else None
        if isinstance(fault, EndpointFault):
            if fault.failed_over and pool.healthy_count() > 0:
                return 0.0
            if fault.wait is not None:
                return min(fault.wait, self.settings.backoff_max)
        return self._backoff(state)

    async def close_connections(self) -> None:
        """Close the HTTP pools when no call is in flight (the next call opens new ones): an
        aiohttp pool belongs to the event loop that opened it, and one left open is reported as
        unclosed when it is collected."""
        if self._in_flight:
            return
        clients, self._clients = self._clients, {}
        for client in clients.values():
            await client.close()

    async def aclose(self) -> None:
        await self.close_connections()
        if self.cache is not None:
            self.cache.close()


def _body_text(response: httpx2.Response | None) -> str:
    try:
        return response.text if response is not None else ""
    except Exception:  # a body that cannot be read adds nothing to the error text
        return ""


@dataclass
class SamplingDefaults:
    """The run's sampling parameters (SPEC §1: temperature 0.3, 2048 generated tokens)."""

    temperature: float = 0.3
    max_tokens: int = 2048


class ModelSession:
    """An episode's handle on the model: derived seeds, per-branch paths and a call log."""

    def __init__(self, client: LLMClient, *, run_seed: int, episode_id: str,
                 sampling: SamplingDefaults | None = None, path: str = "main",
                 log: list[CallRecord] | None = None, diagnostics: EpisodeDiagnostics | None = None,
                 system_prompts: dict[str, str] | None = None) -> None:
        self.client = client
        self.run_seed = run_seed
        self.episode_id = episode_id
        self.sampling = sampling or SamplingDefaults()
        self.path = path
        self.log: list[CallRecord] = [] if log is None else log
        self.diagnostics = EpisodeDiagnostics() if diagnostics is None else diagnostics
        self.system_prompts: dict[str, str] = {} if system_prompts is None else system_prompts
        """Per role, the system message of its first call: what the episode record keeps of each prompt."""
        self._index = 0

    def branch(self, name: str) -> "ModelSession":
        """A child session for a fork branch: own seed path, shared call log and diagnostics."""
        return ModelSession(self.client, run_seed=self.run_seed, episode_id=self.episode_id,
                            sampling=self.sampling, path=f"{self.path}/{name}", log=self.log,
                            diagnostics=self.diagnostics, system_prompts=self.system_prompts)

    @property
    def model(self) -> str:
        return self.client.settings.model

    async def chat(self, messages: Sequence[dict[str, Any]], *, role: str,
                   tools: Sequence[dict[str, Any]] | None = None, tool_choice: Any = None,
                   response_format: dict[str, Any] | None = None,
                   temperature: float | None = None, max_tokens: int | None = None) -> ChatResult:
        index = self._index
        self._index += 1
        if messages and messages[0].get("role") == "system" and role not in self.system_prompts:
            self.system_prompts[role] = str(messages[0].get("content") or "")
        seed = derive_seed(self.run_seed, self.episode_id, self.path, index)
        # the model's own settings replace the run's max_tokens (a call's own stands) and add their
        # optional fields; on a real server short roles are capped and turn markers stop a runaway
        settings = self.client.settings
        own = settings.request_settings()
        default_max = reply_budget(role, self.sampling.max_tokens, own, settings.simulated)
        extra = dict(own.optional_fields()) if own is not None else {}
        if not settings.simulated:
            extra.setdefault("stop", list(STOP_SEQUENCES))
        request = ChatRequest(
            role=role, messages=tuple(messages), model=settings.wire_model(),
            temperature=self.sampling.temperature if temperature is None else temperature,
            max_tokens=default_max if max_tokens is None else max_tokens,
            seed=seed, tools=tuple(tools) if tools else None, tool_choice=tool_choice,
            response_format=response_format, extra=extra or None)
        try:
            result = await self.client.chat(request)
        except Exception as exc:
            self.log.append(CallRecord(role, self.path, index, seed, False, 0, 0, error=str(exc),
                                       max_tokens=request.max_tokens))
            raise
        self.log.append(CallRecord(role, self.path, index, seed, result.cached,
                                   result.usage.prompt_tokens, result.usage.completion_tokens,
                                   max_tokens=request.max_tokens, finish_reason=result.finish_reason))
        kept = strip_template_debris(result.content)
        if kept != result.content.strip():
            # The model ran on past its turn (``<|im_end|>user ...``): what follows a template
            # token is not its reply, and must reach no transcript, board or secret.
            self.diagnostics.flag(FLAG_TEMPLATE_DEBRIS, role, result.content, "cut at the first template token")
            result = dataclasses.replace(result, content=kept)
        if tools and not result.tool_calls:
            names = {t.get("function", {}).get("name") for t in tools if isinstance(t, dict)}
            named = tool_call_in_text(result.content, {n for n in names if isinstance(n, str)})
            if named:
                self.diagnostics.flag(FLAG_TOOL_CALL_AS_TEXT, role, result.content,
                                      f"{named} written as text, not as a tool call")
        return result

    def usage_summary(self) -> dict[str, Any]:
        """Totals for the episode record: calls, cache hits, tokens, calls per role."""
        by_role: dict[str, int] = {}
        for rec in self.log:
            by_role[rec.role] = by_role.get(rec.role, 0) + 1
        return {"calls": len(self.log), "cache_hits": sum(r.cached for r in self.log),
                "prompt_tokens": sum(r.prompt_tokens for r in self.log),
                "completion_tokens": sum(r.completion_tokens for r in self.log),
                "calls_by_role": by_role}
