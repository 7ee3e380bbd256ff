"""The tables notebook 01's figures draw, computed from the theory module (pure and seeded).

Quantile bands of |C_t| over seeded games, real compatible sets sampled at chosen sizes, a
worked fork example, and the exact and Monte-Carlo self-consistency of frequency-weighted
POCAs. Plotting lives in :mod:`psit_lib.studies.psit.theory.figures`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from psit_lib.analysis.plots import require_columns as _require
from psit_lib.studies.psit.protocol.outcomes import Outcome
from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES, HangmanState
from psit_lib.studies.psit.tasks.vocabulary import Vocabulary
from psit_lib.studies.psit.theory.candidate_sets import Dictionary, compatible_set, replay
from psit_lib.studies.psit.theory.fork_exact import consistency_point, exact_outcomes
from psit_lib.studies.psit.theory.policies import frequency_poca

THEORY_LABEL = "exact computation (no model)"
"""Provenance footer of every figure computed without any model."""

MONTE_CARLO_NOTE = "Monte-Carlo estimates: seeded draws from the idealised hosts"
"""Added to :data:`THEORY_LABEL` when a theory figure also shows Monte-Carlo estimates."""

_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


class NoExampleError(ValueError):
    """No seeded game produced a compatible set in the requested size range at the fork."""


def theory_label(monte_carlo: bool = False) -> str:
    """The footer of a theory figure; says so when Monte-Carlo points are drawn too."""
    return f"{THEORY_LABEL} · {MONTE_CARLO_NOTE}" if monte_carlo else THEORY_LABEL




# --------------------------------------------------------------------------------------------
# Data for the figures
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompatibleSetSample:
    """A real compatible set C_t: game ``game`` of the seeded table, after ``turn`` guesses."""

    game: int
    turn: int
    secret: str
    state: HangmanState
    words: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.words)


def size_quantiles(sizes: pd.DataFrame, quantiles: Sequence[float] = _QUANTILES) -> pd.DataFrame:
    """Quantiles of |C_t| across games per turn, from :func:`~psit_lib.studies.psit.theory.simulate_set_sizes`.

    A game that ended (won or lost) keeps its last |C_t| for the later turns, because its public
    record no longer changes; ``running`` counts the games still being played at each turn.
    Columns: ``turn``, ``running``, ``games`` and one ``q<quantile>`` column per quantile
    (e.g. ``q0.5`` is the median).
    """
    _require(sizes, ["game", "turn", "size"], "size_quantiles")
    if sizes.empty:
        raise ValueError("size_quantiles: the table of set sizes is empty.")
    if any(not 0.0 <= q <= 1.0 for q in quantiles):
        raise ValueError(f"Quantiles must lie in [0, 1], got {list(quantiles)}.")
    wide = sizes.pivot(index="game", columns="turn", values="size").sort_index(axis=1)
    running = wide.notna().sum(axis=0)
    filled = wide.ffill(axis=1)
    table = pd.DataFrame({"turn": filled.columns.astype(int), "running": running.to_numpy(), "games": len(filled)})
    for q in quantiles:
        table[f"q{q:g}"] = filled.quantile(q, axis=0).to_numpy()
    return table.reset_index(drop=True)


def compatible_set_samples(
    sizes: pd.DataFrame,
    dictionary: Dictionary,
    *,
    min_size: int = 2,
    max_size: int = 1000,
    max_lives: int = DEFAULT_LIVES,
) -> list[CompatibleSetSample]:
    """The real compatible sets of the seeded games with ``min_size <= |C_t| <= max_size``.

    ``sizes`` is the table of :func:`~psit_lib.studies.psit.theory.simulate_set_sizes` on the same
    ``dictionary``; each (game, turn) is replayed from its secret and guesses. Each distinct
    set is kept once (the first game and turn that produced it), in (game, turn) order.
    """
    _require(sizes, ["game", "turn", "guess", "size", "secret"], "compatible_set_samples")
    if min_size < 1 or max_size < min_size:
        raise ValueError(f"Need 1 <= min_size <= max_size, got min_size={min_size}, max_size={max_size}.")
    samples: list[CompatibleSetSample] = []
    seen: set[tuple[str, ...]] = set()
    for game, rows in sizes.sort_values(["game", "turn"]).groupby("game", sort=True):
        guesses = [g for g in rows["guess"].tolist() if g]
        secret = rows["secret"].iloc[0]
        states = replay(secret, guesses, max_lives)  # once per game; a turn past the game's end is its last state
        for row in rows.itertuples():
            if not min_size <= row.size <= max_size:
                continue
            state = states[min(row.turn, len(states) - 1)]
            words = tuple(compatible_set(dictionary, state))
            if words in seen:
                continue
            seen.add(words)
            samples.append(CompatibleSetSample(int(game), int(row.turn), secret, state, words))
    return samples


def fork_example(
    samples: Sequence[CompatibleSetSample], turn: int, min_size: int, max_size: int
) -> CompatibleSetSample:
    """The first sample taken after ``turn`` guesses whose |C_t| lies in [min_size, max_size]:
    the worked example of the notebook (a real fork point of a seeded game)."""
    for sample in samples:
        if sample.turn == turn and min_size <= sample.size <= max_size:
            return sample
    raise NoExampleError(
        f"No seeded game has {min_size}..{max_size} compatible words after {turn} guesses; "
        "widen the size range or play more games."
    )


def weighted_consistency_exact(
    samples: Sequence[CompatibleSetSample], vocabulary: Vocabulary, temperatures: Sequence[float], k: int
) -> pd.DataFrame:
    """Exact P(self-consistent) of the frequency-weighted re-imagining POCA on each real set.

    The POCA draws a word with probability proportional to frequency^(1/T) at every reply;
    the other candidates are drawn uniformly from the rest of C_t (the exact computation of
    :func:`~psit_lib.studies.psit.theory.exact_outcomes` for any set size). Columns ``temperature``,
    ``game``, ``turn``, ``size``, ``exact``.
    """
    rows = []
    for temperature in temperatures:
        for sample in samples:
            policy = frequency_poca(sample.words, vocabulary, temperature)
            rows.append({
                "temperature": float(temperature), "game": sample.game, "turn": sample.turn,
                "size": sample.size,
                "exact": exact_outcomes(policy, sample.words, k)[Outcome.SELF_CONSISTENT],
            })  # fmt: skip
    return pd.DataFrame(rows, columns=["temperature", "game", "turn", "size", "exact"])


def _nearest_samples(samples: Sequence[CompatibleSetSample], targets: Sequence[int]) -> list[tuple[int, CompatibleSetSample]]:
    """For each target size, the sample closest on a log scale (first on ties); each sample once."""
    chosen: list[tuple[int, CompatibleSetSample]] = []
    used: set[int] = set()
    for target in targets:
        best = min(range(len(samples)), key=lambda i: (abs(math.log(samples[i].size / target)), i))
        if best not in used:
            used.add(best)
            chosen.append((int(target), samples[best]))
    return chosen


def weighted_consistency_points(
    samples: Sequence[CompatibleSetSample],
    vocabulary: Vocabulary,
    temperatures: Sequence[float],
    targets: Sequence[int],
    k: int,
    n_episodes: int,
    seed: int,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Monte-Carlo P(self-consistent) of the frequency-weighted POCA with Wilson intervals.

    For each target size the real set nearest on a log scale is used (a set chosen for two
    targets is simulated once). Point j of temperature i uses seed ``seed + 1000 * i + j``.
    Columns ``temperature``, ``target``, ``size``, ``game``, ``turn``, ``episodes``,
    ``successes``, ``rate``, ``wilson_low``, ``wilson_high``, ``exact``.
    """
    if not samples:
        raise ValueError("weighted_consistency_points needs at least one compatible-set sample.")
    rows = []
    chosen = _nearest_samples(samples, targets)
    for i, temperature in enumerate(temperatures):
        for j, (target, sample) in enumerate(chosen):
            policy = frequency_poca(sample.words, vocabulary, temperature)
            rows.append({"temperature": float(temperature), "target": target, "size": sample.size,
                         "game": sample.game, "turn": sample.turn,
                         **consistency_point(policy, sample.words, k, n_episodes, seed + 1000 * i + j, alpha)})
    return pd.DataFrame(rows)
