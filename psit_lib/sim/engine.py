"""Turns an OpenAI chat-completions request body into a simulated completion.

This is the whole simulator seen from the wire: ``complete(body, role, profile)`` is pure
(same inputs, same output), and both the in-process transport and the loopback HTTP server
call it, so the two paths cannot disagree.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from .context import SimContext, request_rng
from .formats import format_rng, restyle
from .profiles import get_profile
from .tokens import prompt_token_count, token_count
from .wire_names import PROFILE_HEADER, ROLE_HEADER, SIM_MODEL_NAME
from .registry import GENERIC_ROLE, handler_for, resolve_role


class BadSimRequest(ValueError):
    """The request body is not a chat-completions request the simulator can read."""


def _validate(body: Any) -> None:
    if not isinstance(body, dict):
        raise BadSimRequest("request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadSimRequest("request needs a non-empty 'messages' list")
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise BadSimRequest(f"message {i} must be an object with a 'role'")


def complete(body: dict[str, Any], role: str | None, profile_name: str | None) -> dict[str, Any]:
    """A chat.completion JSON object for ``body``; the role is read from the request itself, ``role``
    (the header hint) only breaks ties."""
    _validate(body)
    profile = get_profile(profile_name or "default")
    sampling = {k: body.get(k) for k in ("messages", "tools", "tool_choice", "temperature",
                                         "max_tokens", "max_completion_tokens", "seed",
                                         "response_format", "top_p")}
    ctx = SimContext(
        role=GENERIC_ROLE, profile=profile, messages=body["messages"], tools=body.get("tools") or [],
        temperature=float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0),
        response_format=body.get("response_format"), rng=random.Random(0))
    role = resolve_role(ctx, role)
    ctx.role = role
    ctx.rng = request_rng(role, profile.family, sampling)  # knob overrides share the base's draws
    reply = handler_for(role)(ctx)
    reasoning = reply.reasoning if profile.reasoning else None
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reasoning:
        message["reasoning_content"] = reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}_{ctx.rng.randrange(16**8):08x}", "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(reply.tool_calls)]
    digest = hashlib.sha256(json.dumps(sampling, sort_keys=True).encode()).hexdigest()[:24]
    if profile.output_format != "plain":
        message = restyle(message, profile.output_format, format_rng(digest, profile.output_format))
    completion_tokens = (token_count(message.get("content"))
                         + token_count(message.get("reasoning_content") or message.get("reasoning"))
                         + sum(token_count(c["function"]["arguments"])
                               for c in message.get("tool_calls", [])))
    prompt_tokens = prompt_token_count(body["messages"])
    return {
        "id": f"chatcmpl-sim-{digest}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or SIM_MODEL_NAME,
        "system_fingerprint": f"psit-sim/{profile.name}",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def profile_from_model(model: object) -> str | None:
    """``agreeable`` for the model name ``psit-sim:agreeable``; None for any other name."""
    if isinstance(model, str) and model.startswith(SIM_MODEL_NAME + ":"):
        return model.split(":", 1)[1] or None
    return None


def handle_http(method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict[str, Any]]:
    """Shared HTTP routing for the in-process transport and the loopback server."""
    from .profiles import UnknownProfileError

    lower = {k.lower(): v for k, v in headers.items()}
    path = path.split("?", 1)[0].rstrip("/")
    if method == "GET" and path.endswith("/models"):
        return 200, {"object": "list", "data": [{"id": SIM_MODEL_NAME, "object": "model", "created": 0,
                                                  "owned_by": "psit-workbench (simulated)"}]}
    if method == "POST" and path.endswith("/chat/completions"):
        try:
            body = json.loads(raw or b"{}")
            if body.get("stream"):
                raise BadSimRequest("the simulator does not stream; send stream=false")
            return 200, complete(body, lower.get(ROLE_HEADER.lower()),
                                 profile_from_model(body.get("model")) or lower.get(PROFILE_HEADER.lower()))
        except (json.JSONDecodeError, BadSimRequest, UnknownProfileError) as exc:
            return 400, {"error": {"message": str(exc), "type": "invalid_request_error"}}
    return 404, {"error": {"message": f"the simulator serves /v1/chat/completions and /v1/models, not {path}",
                           "type": "not_found"}}
