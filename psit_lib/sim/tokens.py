"""The simulated model's own token counter (o200k_base, from the ``bpe-openai`` wheel).

A served model reports usage in its own tokenizer; the simulator does the same with o200k,
offline. It is deliberately the simulator's own code: the harness counts tokens separately.
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _encoding():
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


@lru_cache(maxsize=8192)
def token_count(text: str | None) -> int:
    """Tokens in ``text`` (0 for None or empty)."""
    return len(_encoding().encode(text)) if text else 0


def padded(target_tokens: int, pool: tuple[str, ...], tail: tuple[str, ...] = ()) -> str:
    """Sentences of ``pool`` in turn, then ``tail``, until about ``target_tokens`` tokens.
    Deterministic and draws no random numbers, so a reply's length never changes a choice."""
    lines: list[str] = []
    while token_count(" ".join([*lines, *tail])) < target_tokens:
        lines.append(pool[len(lines) % len(pool)])
    return " ".join([*lines, *tail])


def prompt_token_count(messages: list[dict]) -> int:
    """Prompt tokens of a chat request: message texts and tool-call arguments, plus framing."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        total += 4 + token_count(content or "")
        for call in message.get("tool_calls") or ():
            total += token_count((call.get("function") or {}).get("arguments", ""))
    return total
