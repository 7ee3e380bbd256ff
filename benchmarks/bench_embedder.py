"""The retrieval baselines' embedder: CPU per text by runtime and batching, and how far the vectors move.

    .venv/bin/python benchmarks/bench_embedder.py [--episodes 16]

Collects the texts a 04 run embeds (its episodes on the in-process simulator, the texts recorded as
the embedder receives them), then embeds the distinct ones with all-MiniLM-L6-v2 as
sentence-transformers on PyTorch (one thread, one text at a time as the libraries ask, and in
batches) and as the workbench's ONNX Runtime model (one text at a time, and in batches). Printed
(not a test: the figures depend on the machine and its load): CPU milliseconds per text, and
each way's largest difference from PyTorch one at a time and from itself one at a time (0 means
bit-identical: the vectors do not depend on the batch).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from typing import Any, Callable

import numpy as np
from harness_overhead import notebook_plan

from psit_lib.llm import LLMSettings
from psit_lib.runs import RunStore, make_client, run_episodes
from psit_lib.studies.psit.agents.baselines import embedder


def collect_texts(episodes: int) -> list[str]:
    """Every text a 04 run of about ``episodes`` episodes asks the embedder for, in order."""
    asked: list[str] = []
    original = embedder.BatchingEmbedder.submit

    def recording(self: Any, texts: Any) -> Any:
        asked.extend(texts)
        return original(self, texts)

    embedder.BatchingEmbedder.submit = recording  # type: ignore[method-assign]
    try:
        specs, episode = notebook_plan("04", episodes)
        client = make_client(LLMSettings(cache="off", concurrency=episodes))
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(run_episodes(specs, episode, store=RunStore(folder), client=client, run_seed=0,
                                     concurrency=episodes, progress=False))
    finally:
        embedder.BatchingEmbedder.submit = original  # type: ignore[method-assign]
    return asked


def timed(embed: Callable[[], np.ndarray], n: int) -> tuple[np.ndarray, float]:
    started = time.process_time()
    vectors = embed()
    return vectors, (time.process_time() - started) / n * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    asked = collect_texts(args.episodes)
    texts = list(dict.fromkeys(asked))
    print(f"04 at {args.episodes} episodes asked for {len(asked)} texts, {len(texts)} distinct; "
          f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")

    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    reference_model = SentenceTransformer(embedder.model_path(), device="cpu")
    reference_model.encode(texts[:4], show_progress_bar=False)

    def torch_one() -> np.ndarray:
        return np.stack([reference_model.encode([t], show_progress_bar=False)[0] for t in texts])

    def torch_batched() -> np.ndarray:
        return reference_model.encode(texts, batch_size=args.batch, show_progress_bar=False)

    onnx = embedder.OnnxMiniLM()
    onnx(texts[:4])

    def onnx_one() -> np.ndarray:
        return np.concatenate([onnx([t]) for t in texts])

    def onnx_batched() -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), embedder.EMBEDDING_DIMS), np.float32)
        for start in range(0, len(order), args.batch):
            picked = order[start:start + args.batch]
            out[picked] = onnx([texts[i] for i in picked])
        return out

    reference, torch_ms = timed(torch_one, len(texts))
    rows = [("PyTorch (sentence-transformers), one at a time", reference, torch_ms, reference)]
    vectors, ms = timed(torch_batched, len(texts))
    rows.append((f"PyTorch, batches of {args.batch}", vectors, ms, reference))
    alone, ms = timed(onnx_one, len(texts))
    rows.append(("ONNX Runtime, one at a time", alone, ms, alone))
    vectors, ms = timed(onnx_batched, len(texts))
    rows.append((f"ONNX Runtime, batches of {args.batch} (sorted by length)", vectors, ms, alone))
    print(f"{'':52} {'CPU ms/text':>11} {'max |diff| vs PyTorch one':>26} {'vs itself one at a time':>24}")
    for name, vectors, ms, own in rows:
        print(f"{name:52} {ms:>11.2f} {np.abs(vectors - reference).max():>26.2e} {np.abs(vectors - own).max():>24.2e}")


if __name__ == "__main__":
    main()
