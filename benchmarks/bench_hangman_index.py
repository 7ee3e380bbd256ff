"""Time Hangman candidate queries on the full vocabulary (target: well under 50 ms each).

Half of the 1000 constraint sets come from real games (a random vocabulary word and 0-8
random guesses, the state the fork would see); the other half are arbitrary lengths with a
few known letters and absent letters. Prints the load time and the mean / p95 / max query
time of ``Vocabulary.matching``.

Run: ``.venv/bin/python benchmarks/bench_hangman_index.py [--queries 1000] [--seed 0]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from psit_lib.studies.psit.tasks.hangman_rules import HangmanState, apply_guess
from psit_lib.studies.psit.tasks.vocabulary import ALPHABET, Vocabulary, get_vocabulary


def random_constraints(vocabulary: Vocabulary, rng: random.Random, from_game: bool):
    """One (length, known, absent) query, either from a simulated game or arbitrary."""
    if from_game:
        secret = rng.choice(vocabulary.words)
        state = HangmanState.started(len(secret), max_lives=len(ALPHABET))
        for letter in rng.sample(ALPHABET, rng.randint(0, 8)):
            state = apply_guess(secret, state, letter)
            if state.finished:
                break
        return state.length, state.known, sorted(state.absent)
    length = rng.randint(3, 12)
    known = {position: rng.choice("etaoinshr") for position in rng.sample(range(length), rng.randint(0, 3))}
    absent = [letter for letter in rng.sample(ALPHABET, rng.randint(0, 8)) if letter not in known.values()]
    return length, known, absent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vocabulary-size", type=int, default=50_000)
    args = parser.parse_args()

    started = time.perf_counter()
    vocabulary = get_vocabulary(args.vocabulary_size)
    load_seconds = time.perf_counter() - started

    rng = random.Random(args.seed)
    queries = [random_constraints(vocabulary, rng, from_game=i % 2 == 0) for i in range(args.queries)]
    timings_ms: list[float] = []
    result_sizes: list[int] = []
    for length, known, absent in queries:
        started = time.perf_counter()
        result = vocabulary.matching(length, known, absent)
        timings_ms.append((time.perf_counter() - started) * 1000)
        result_sizes.append(len(result))

    timings_ms.sort()
    p95 = timings_ms[min(len(timings_ms) - 1, int(0.95 * len(timings_ms)))]
    print(f"vocabulary: {len(vocabulary)} words, built in {load_seconds:.2f} s")
    print(f"queries: {len(timings_ms)} (median result size {statistics.median(result_sizes):.0f})")
    print(f"matching(): mean {statistics.fmean(timings_ms):.3f} ms, p95 {p95:.3f} ms, max {timings_ms[-1]:.3f} ms")


if __name__ == "__main__":
    main()
