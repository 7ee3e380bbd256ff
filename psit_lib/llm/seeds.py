"""Per-call seeds.

A call's seed is derived from (run seed, episode id, call path, call index) so that identical
prompts in different episodes — or in different fork branches — are distinct samples and
distinct cache entries, while re-running the same episode reproduces every call exactly.
Branches get their own path, so the seeds do not depend on the order in which concurrent
branches happen to run.
"""

from __future__ import annotations

import hashlib


def derive_seed(run_seed: int, episode_id: str, path: str, index: int) -> int:
    """A 31-bit non-negative seed (what OpenAI-compatible servers accept)."""
    text = f"{run_seed}|{episode_id}|{path}|{index}".encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") & 0x7FFF_FFFF
