"""Cosine top-k over stored vectors: the retrieval rule the reimplemented baselines share.

Pure and deterministic: ties are broken by position in the store (older first), so the same
store and query always give the same ranking.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def cosine_scores(query: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[float]:
    """Cosine similarity of ``query`` with each stored vector (0 for a zero vector)."""
    if not vectors:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
    norms[norms == 0] = 1.0
    return (matrix @ q / norms).tolist()


def top_k(query: Sequence[float], vectors: Sequence[Sequence[float]], k: int) -> list[int]:
    """Indices of the ``k`` most similar vectors, best first; ties keep store order."""
    if k < 1:
        raise ValueError(f"top_k needs k >= 1, got {k}")
    scores = cosine_scores(query, vectors)
    order = sorted(range(len(scores)), key=lambda i: (-round(scores[i], 9), i))
    return order[:k]


async def recall_top_k(items: Sequence[dict], query_text: str, k: int, render) -> str:
    """The ``k`` stored items (each with a ``vector``) nearest to ``query_text``, rendered one
    per line best first; '' for an empty store. Embedding runs off the event loop, batched."""
    if not items:
        return ""
    from psit_lib.studies.psit.agents.baselines.embedder import embed_async

    query = await embed_async(query_text)
    return "\n".join(render(items[i]) for i in top_k(query, [item["vector"] for item in items], k))
