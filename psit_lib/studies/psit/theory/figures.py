"""Figures of notebook 01: the theorem of SPEC §0 drawn from exact computation, before any model.

Four pictures carry the argument:

1. :func:`plot_set_sizes` — how fast the compatible set C_t shrinks in seeded games. While
   |C_t| >= 2 the public record has not pinned the secret down, which is when the theorem bites.
2. :func:`plot_consistency_vs_size` — P(self-consistent) of a re-imagining public-only agent
   (POCA) against |C_t|: the closed form for uniform choice, exact values on real compatible
   sets for frequency-weighted choice at a few temperatures, and Monte-Carlo points with
   Wilson intervals next to both.
3. :func:`plot_policy_outcomes` — the outcome mix of each idealised host at one fork, exact and
   Monte Carlo side by side.
4. :func:`plot_fork_diagram` — the fork itself: the history up to ``t_fork``, then the reveal
   branch and the k yes/no branches, all from one checkpoint.

Theory-only figures carry :data:`THEORY_LABEL` ("exact computation (no model)") in the
provenance footer of :func:`psit_lib.analysis.labels.label_figure`; a diagram drawn from a
live episode (:func:`fork_diagram_from_record`) carries the run's provenance label instead.
Like :mod:`psit_lib.analysis.plots`, figures are bare ``matplotlib.figure.Figure`` objects
built without pyplot, so nothing leaks into pyplot's global state or displays twice.

The helpers in the first half turn the theory module's outputs into exactly the tables these
figures draw (quantile bands, real compatible sets, weighted-POCA odds); they are pure and
seeded.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine
from matplotlib.patches import Patch

from psit_lib.analysis.labels import label_figure
from psit_lib.studies.psit.protocol.outcomes import OUTCOME_COLOURS, OUTCOME_LABELS, Outcome
from psit_lib.analysis.stats import wilson_interval
from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES, HangmanState, apply_guess
from psit_lib.studies.psit.tasks.vocabulary import Vocabulary
from psit_lib.studies.psit.theory.candidate_sets import Dictionary, compatible_set
from psit_lib.studies.psit.theory.fork_exact import FORK_OUTCOMES, exact_outcomes, p_self_consistent_uniform, simulate_outcomes
from psit_lib.studies.psit.theory.policies import ReimaginingPoca, frequency_weights

THEORY_LABEL = "exact computation (no model)"
"""Provenance footer of every figure computed without any model."""

MONTE_CARLO_NOTE = "Monte-Carlo estimates: seeded draws from the idealised hosts"
"""Added to :data:`THEORY_LABEL` when a theory figure also shows Monte-Carlo estimates."""

_FOOTER_INCHES = 0.22
_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


class NoExampleError(ValueError):
    """No seeded game produced a compatible set in the requested size range at the fork."""


def theory_label(monte_carlo: bool = False) -> str:
    """The footer of a theory figure; says so when Monte-Carlo points are drawn too."""
    return f"{THEORY_LABEL} · {MONTE_CARLO_NOTE}" if monte_carlo else THEORY_LABEL


def _new_figure(width: float, height: float) -> Figure:
    """A pyplot-free figure with a strip at the bottom for the provenance footer."""
    bottom = min(0.2, _FOOTER_INCHES / height)
    return Figure(figsize=(width, height), layout=ConstrainedLayoutEngine(rect=(0.0, bottom, 1.0, 1.0 - bottom)))


def _require(df: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{where}: the table has no column(s) {missing!r}; it has {list(df.columns)!r}.")


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


def _replay(secret: str, guesses: Sequence[str], max_lives: int) -> HangmanState:
    state = HangmanState.started(len(secret), max_lives)
    for letter in guesses:
        state = apply_guess(secret, state, letter)
    return state


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
        for row in rows.itertuples():
            if not min_size <= row.size <= max_size:
                continue
            state = _replay(secret, guesses[: row.turn], max_lives)
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


def _weighted_poca(words: Sequence[str], vocabulary: Vocabulary, temperature: float) -> ReimaginingPoca:
    return ReimaginingPoca(weights=frequency_weights(words, vocabulary, temperature),
                           name=f"frequency POCA T={temperature:g}")


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
            policy = _weighted_poca(sample.words, vocabulary, temperature)
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
            policy = _weighted_poca(sample.words, vocabulary, temperature)
            counts = simulate_outcomes(policy, sample.words, k, n_episodes, seed + 1000 * i + j)
            successes = counts[Outcome.SELF_CONSISTENT]
            low, high = wilson_interval(successes, n_episodes, alpha)
            rows.append({
                "temperature": float(temperature), "target": target, "size": sample.size,
                "game": sample.game, "turn": sample.turn, "episodes": n_episodes,
                "successes": successes, "rate": successes / n_episodes, "wilson_low": low,
                "wilson_high": high,
                "exact": exact_outcomes(policy, sample.words, k)[Outcome.SELF_CONSISTENT],
            })  # fmt: skip
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------------------------


def plot_set_sizes(
    sizes: pd.DataFrame,
    *,
    label: str = THEORY_LABEL,
    t_fork: int | None = None,
    title: str = "How fast the public record narrows the secret down",
) -> Figure:
    """Median |C_t| per turn with 50% and 80% bands across seeded games, on a log axis.

    ``sizes`` is the table of :func:`~psit_lib.studies.psit.theory.simulate_set_sizes`. A dashed line marks
    |C_t| = 1 (the secret is pinned down) and, with ``t_fork``, a vertical line the fork.
    """
    bands = size_quantiles(sizes)
    colour = sns.color_palette("colorblind")[0]
    fig = _new_figure(6.5, 4.5)
    ax = fig.add_subplot()
    turns = bands["turn"]
    ax.fill_between(turns, bands["q0.1"], bands["q0.9"], color=colour, alpha=0.15, label="10-90% of games")
    ax.fill_between(turns, bands["q0.25"], bands["q0.75"], color=colour, alpha=0.3, label="25-75% of games")
    ax.plot(turns, bands["q0.5"], "-o", color=colour, label="median")
    ax.axhline(1, color="dimgray", linestyle="--", linewidth=1)
    ax.text(turns.iloc[-1], 1.08, "secret pinned down (|C_t| = 1)", ha="right", va="bottom", fontsize=8, color="dimgray")
    if t_fork is not None:
        ax.axvline(t_fork, color="black", linestyle=":", linewidth=1)
        ax.text(t_fork, float(bands["q0.9"].max()), " fork (t_fork)", fontsize=8, va="top")
    ax.set_yscale("log")
    ax.set_ylim(bottom=0.8)
    ax.set_xticks(turns, [f"{t}\n{n}" for t, n in zip(turns, bands["running"])], fontsize=8)
    ax.set_xlabel("guesses played t  (below: games still being played)")
    ax.set_ylabel("|C_t|: words compatible with the public record (log)")
    n_games = int(bands["games"].iloc[0])
    ax.set_title(f"{title}\n({n_games} seeded games; a finished game keeps its last |C_t|)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    ax.grid(alpha=0.3, which="both")
    return label_figure(fig, label)


def plot_consistency_vs_size(
    uniform_points: pd.DataFrame,
    *,
    k: int,
    weighted_exact: pd.DataFrame | None = None,
    weighted_points: pd.DataFrame | None = None,
    label: str | None = None,
    title: str = "P(self-consistent) of a re-imagining POCA vs |C_t|",
) -> Figure:
    """P(self-consistent) against |C_t| (log x axis) for the re-imagining POCA.

    - black line: the closed form (1/n)(1 - 1/n)^(min(k, n) - 1) for uniform choice;
    - black circles: ``uniform_points`` (:func:`~psit_lib.studies.psit.theory.self_consistency_points`),
      Monte Carlo with Wilson intervals;
    - per temperature, faint dots: ``weighted_exact`` (exact value on each real set), a line
      through their median per size bin, and squares with Wilson intervals for
      ``weighted_points``.
    The footer defaults to :func:`theory_label` with the Monte-Carlo note.
    """
    _require(uniform_points, ["size", "rate", "wilson_low", "wilson_high"], "plot_consistency_vs_size")
    sizes = [int(s) for s in uniform_points["size"]]
    largest = max(sizes)
    for table in (weighted_exact, weighted_points):
        if table is not None and not table.empty:
            largest = max(largest, int(table["size"].max()))
    fig = _new_figure(10.0, 5.0)
    ax = fig.add_subplot()
    grid = np.unique(np.round(np.geomspace(1, max(largest, 2), 200)).astype(int))
    ax.plot(grid, [p_self_consistent_uniform(int(n), k) for n in grid], "-", color="black",
            label=f"uniform choice: exact (1/n)(1-1/n)^(min(k,n)-1), k={k}")
    rate = uniform_points["rate"].to_numpy(dtype=float)
    yerr = np.clip(np.vstack([rate - uniform_points["wilson_low"], uniform_points["wilson_high"] - rate]), 0, None)
    ax.errorbar(uniform_points["size"], rate, yerr=yerr, fmt="o", color="black", capsize=3, markersize=5,
                label="uniform choice: Monte Carlo (Wilson 95%)")
    temperatures: list[float] = []
    for table in (weighted_exact, weighted_points):
        if table is not None and not table.empty:
            _require(table, ["temperature", "size"], "plot_consistency_vs_size")
            temperatures = list(dict.fromkeys([*temperatures, *table["temperature"].tolist()]))
    palette = sns.color_palette("colorblind", len(temperatures) + 1)[1:]
    for colour, temperature in zip(palette, temperatures):
        if weighted_exact is not None and not weighted_exact.empty:
            rows = weighted_exact[weighted_exact["temperature"] == temperature]
            ax.scatter(rows["size"], rows["exact"], s=7, color=colour, alpha=0.25, linewidths=0)
            bins = np.unique(np.round(np.log2(rows["size"].to_numpy(dtype=float)) * 2) / 2)
            centres, medians = [], []
            for b in bins:
                in_bin = rows[np.round(np.log2(rows["size"].to_numpy(dtype=float)) * 2) / 2 == b]
                centres.append(2 ** b)
                medians.append(float(in_bin["exact"].median()))
            ax.plot(centres, medians, "-", color=colour, linewidth=2,
                    label=f"frequency^(1/T), T={temperature:g}: exact on real sets (dots), median (line)")
        if weighted_points is not None and not weighted_points.empty:
            _require(weighted_points, ["rate", "wilson_low", "wilson_high"], "plot_consistency_vs_size")
            rows = weighted_points[weighted_points["temperature"] == temperature]
            rate = rows["rate"].to_numpy(dtype=float)
            yerr = np.clip(np.vstack([rate - rows["wilson_low"], rows["wilson_high"] - rate]), 0, None)
            ax.errorbar(rows["size"], rate, yerr=yerr, fmt="s", color=colour, markeredgecolor="black",
                        capsize=3, markersize=5, label=f"T={temperature:g}: Monte Carlo (Wilson 95%)")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("|C_t|: words compatible with the public history (log)")
    ax.set_ylabel("P(self-consistent)")
    ax.set_title(title, fontsize=11)
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3, which="both")
    return label_figure(fig, label if label is not None else theory_label(monte_carlo=True))


def plot_policy_outcomes(
    policy_df: pd.DataFrame,
    *,
    label: str | None = None,
    title: str = "Fork-test outcomes of idealised hosts: exact vs Monte Carlo",
) -> Figure:
    """Per policy, two stacked bars of the outcome mix: exact (solid) and Monte Carlo (hatched).

    ``policy_df`` is the table of :func:`~psit_lib.studies.psit.theory.policy_table` (possibly several
    concatenated). The Monte-Carlo bar carries the Wilson interval of its self-consistent share.
    """
    _require(policy_df, ["policy", "outcome", "exact", "simulated", "episodes", "wilson_low", "wilson_high"],
             "plot_policy_outcomes")
    policies = list(dict.fromkeys(policy_df["policy"]))
    fig = _new_figure(max(6.0, 1.6 * len(policies) + 2.5), 4.8)
    ax = fig.add_subplot()
    width = 0.36
    for i, policy in enumerate(policies):
        rows = policy_df[policy_df["policy"] == policy].set_index("outcome")
        for offset, column, hatch in ((-0.2, "exact", None), (0.2, "simulated", "///")):
            bottom = 0.0
            for outcome in FORK_OUTCOMES:
                share = float(rows.loc[outcome.value, column]) if outcome.value in rows.index else 0.0
                ax.bar(i + offset, share, bottom=bottom, width=width, color=OUTCOME_COLOURS[outcome],
                       hatch=hatch, edgecolor="white", linewidth=0.5)
                bottom += share
        sc = rows.loc[Outcome.SELF_CONSISTENT.value]
        ax.errorbar(i + 0.2, sc["simulated"],
                    yerr=[[max(0.0, sc["simulated"] - sc["wilson_low"])], [max(0.0, sc["wilson_high"] - sc["simulated"])]],
                    fmt="none", ecolor="black", capsize=3)
        ax.text(i, -0.1, policy, transform=ax.get_xaxis_transform(), ha="center", va="top", fontsize=9)
    positions = [i + offset for i in range(len(policies)) for offset in (-0.2, 0.2)]
    episodes = int(policy_df["episodes"].iloc[0])
    ax.set_xticks(positions, ["exact", "MC"] * len(policies), fontsize=8)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("share of fork episodes")
    ax.set_title(f"{title}\n(MC: {episodes} seeded episodes per host; bar = Wilson 95% for self-consistent)", fontsize=10)
    handles = [Patch(color=OUTCOME_COLOURS[o], label=OUTCOME_LABELS[o]) for o in FORK_OUTCOMES]
    handles += [Patch(facecolor="white", edgecolor="gray", label="exact"),
                Patch(facecolor="white", edgecolor="gray", hatch="///", label="Monte Carlo")]
    ax.legend(handles=handles, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return label_figure(fig, label if label is not None else theory_label(monte_carlo=True))


def plot_fork_diagram(
    *,
    t_fork: int,
    k: int,
    label: str = THEORY_LABEL,
    moves: Sequence[str] | None = None,
    reveal: str | None = None,
    branches: Sequence[tuple[str, str | None]] | None = None,
    outcome: str | None = None,
    title: str = "The self-consistency fork test",
) -> Figure:
    """A diagram of the fork: opening and ``t_fork`` turns, one checkpoint, then the reveal
    branch and ``k`` yes/no branches side by side.

    Without data it is the schematic of SPEC §1. With data (see
    :func:`fork_diagram_from_record`) ``moves`` labels the turns, ``reveal`` is the revealed
    secret, ``branches`` the (candidate, answer) pairs (answer "yes", "no" or None for
    unreadable) and ``outcome`` the classified result.
    """
    if t_fork < 0 or k < 1:
        raise ValueError(f"Need t_fork >= 0 and k >= 1, got t_fork={t_fork}, k={k}.")
    if moves is not None and len(moves) > t_fork:
        raise ValueError(f"{len(moves)} moves given for a fork after {t_fork} turns.")
    if branches is not None and len(branches) > k:
        raise ValueError(f"{len(branches)} branches given for k={k} candidates.")
    n_rows = k + 1
    fig = _new_figure(1.1 * (t_fork + 1) + 5.5, 0.5 * n_rows + 1.6)
    ax = fig.add_subplot()
    ax.set_axis_off()
    box = dict(boxstyle="round,pad=0.35", fc="#f2f2f2", ec="gray")
    history_x = [1.3 * i for i in range(t_fork + 1)]
    for i, x in enumerate(history_x):
        if i == 0:
            text = "opening\n(host asked to\npick privately)"
        else:
            move = moves[i - 1] if moves is not None and i - 1 < len(moves) else None
            text = f"turn {i}" + (f"\nguess '{move}'" if move else "\nguess")
        ax.text(x, 0, text, ha="center", va="center", fontsize=8, bbox=box)
        if i:
            ax.annotate("", xy=(x - 0.45, 0), xytext=(history_x[i - 1] + 0.45, 0),
                        arrowprops=dict(arrowstyle="->", color="gray"))
    fork_x = history_x[-1] + 1.2
    ax.annotate("", xy=(fork_x - 0.12, 0), xytext=(history_x[-1] + 0.45, 0), arrowprops=dict(arrowstyle="->", color="gray"))
    ax.plot([fork_x], [0], marker="D", markersize=11, color="black")
    ax.text(fork_x, -0.45, "checkpoint\n(state at the fork)", ha="center", va="top", fontsize=7)
    branch_x = fork_x + 1.6
    ys = [(n_rows - 1) / 2 - row for row in range(n_rows)]
    for row, y in enumerate(ys):
        ax.annotate("", xy=(branch_x - 0.05, y), xytext=(fork_x + 0.12, 0),
                    arrowprops=dict(arrowstyle="->", color="black", connectionstyle="arc3,rad=0"))
        if row == 0:
            text = "reveal: \"answer with the word only\"" + (f"  →  '{reveal}'" if reveal else "  →  r")
            style = dict(boxstyle="round,pad=0.3", fc="#fff2cc", ec="#b38f00")
        else:
            pair = branches[row - 1] if branches is not None and row - 1 < len(branches) else None
            if pair is None:
                text = "is it r? yes/no" if row == 1 else f"is it c{row - 1}? yes/no"
                style = dict(boxstyle="round,pad=0.3", fc="white", ec="gray")
            else:
                candidate, answer = pair
                shown = answer if answer is not None else "unreadable"
                text = f"is it '{candidate}'?  →  {shown}"
                fill = {"yes": "#d9f2e6", "no": "#dde8f5"}.get(answer or "", "#eeeeee")
                style = dict(boxstyle="round,pad=0.3", fc=fill, ec="gray")
        ax.text(branch_x, y, text, ha="left", va="center", fontsize=8, bbox=style)
    ax.text(branch_x, ys[-1] - 0.75, f"1 reveal + {k} yes/no branches, each from the identical checkpoint;\n"
            "no branch sees another (the first candidate is the revealed word r)", ha="left", va="top", fontsize=7,
            color="dimgray")
    ax.set_xlim(-0.8, branch_x + 4.2)
    ax.set_ylim(ys[-1] - 1.3, ys[0] + 0.6)
    suffix = f" · outcome: {outcome}" if outcome else ""
    ax.set_title(f"{title}{suffix}", fontsize=11)
    return label_figure(fig, label)


def _answer_word(parsed: Any) -> str | None:
    if parsed is True:
        return "yes"
    if parsed is False:
        return "no"
    return None


def fork_diagram_from_record(record: Mapping[str, Any], label: str, *, k: int | None = None) -> Figure:
    """:func:`plot_fork_diagram` filled in with one live fork-test episode record.

    Uses the guessed letters of the record's public constraints, its parsed reveal and each
    candidate branch's parsed answer; ``label`` must be the run's provenance label because a
    model produced the answers. ``k`` defaults to the number of candidate branches.
    """
    constraints = record.get("constraints") or {}
    moves = list(constraints.get("guessed") or [])
    candidates = list(record.get("candidates") or [])
    branches = [(c["secret"], _answer_word(c.get("parsed"))) for c in candidates]
    n_branches = k if k is not None else max(1, len(branches))
    reveal = (record.get("reveal") or {}).get("parsed")
    t_fork = record.get("turns_played") or len(moves)
    return plot_fork_diagram(
        t_fork=t_fork, k=n_branches, label=label, moves=moves[:t_fork], reveal=reveal,
        branches=branches[:n_branches], outcome=record.get("outcome") or record.get("status"),
        title=f"Fork of episode {record.get('episode_id', '?')}",
    )


__all__ = [
    "MONTE_CARLO_NOTE",
    "THEORY_LABEL",
    "CompatibleSetSample",
    "NoExampleError",
    "compatible_set_samples",
    "fork_diagram_from_record",
    "fork_example",
    "plot_consistency_vs_size",
    "plot_fork_diagram",
    "plot_policy_outcomes",
    "plot_set_sizes",
    "size_quantiles",
    "theory_label",
    "weighted_consistency_exact",
    "weighted_consistency_points",
]
