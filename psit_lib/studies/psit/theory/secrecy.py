"""How much of a host's secret the public record gives away: exact conditional entropies.

The deterministic POCA of :mod:`psit_lib.studies.psit.theory.policies` passes the fork test every time, so
consistency alone does not separate it from a host with private state. Secrecy does: its word
is a function of the public history, so an observer who knows the policy has
H(secret | public history) = 0 bits, whereas a host that drew its word privately and uniformly
keeps E[log2 |C_t|] bits hidden. This module computes both exactly on a small dictionary.

It also computes the exact distribution of public histories each host produces. That makes
the proof idea of SPEC §0 checkable: a re-imagining POCA whose replies are drawn from the same
distribution as the private host's posterior produces *exactly the same* public histories, so
nothing public can tell the two worlds apart, yet only one of them has a secret.

"The secret" is read as the word the host would reveal at the end of the history: the
committed word for the private-state host, the fresh draw for the re-imagining POCA, the first
compatible word for the deterministic POCA. The player's guesses are fixed in advance (the
workbench player chooses letters from the letters already guessed and its own generator only,
never from the patterns, so a random player is a mixture over such sequences).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from psit_lib.studies.psit.tasks.hangman_rules import DEFAULT_LIVES, HangmanState, apply_guess, format_slots
from psit_lib.studies.psit.theory.candidate_sets import replay
from psit_lib.studies.psit.theory.policies import HostPolicy, check_compatible


@dataclass(frozen=True)
class PublicHistory:
    """One possible public record: the opening pattern, then the pattern after each guess.

    ``probability`` is how likely the host produces it; ``compatible`` is C_t at its end, in
    dictionary order.
    """

    patterns: tuple[str, ...]
    probability: float
    compatible: tuple[str, ...]


def _histories_of_private_host(
    policy: HostPolicy, words: list[str], guesses: Sequence[str], max_lives: int
) -> list[PublicHistory]:
    """Joint route: draw the secret once from the prior, play every guess by rule R for it."""
    prior = policy.belief(words)
    grouped: dict[tuple[str, ...], list[str]] = {}
    for word in words:
        grouped.setdefault(tuple(s.pattern_text for s in replay(word, guesses, max_lives)), []).append(word)
    histories = []
    for patterns, group in grouped.items():
        probability = sum(prior.get(word, 0.0) for word in group)
        if probability > 0:
            histories.append(PublicHistory(patterns, probability, tuple(group)))
    return histories


def _histories_of_public_host(
    policy: HostPolicy, words: list[str], guesses: Sequence[str], max_lives: int
) -> list[PublicHistory]:
    """Reply-by-reply route: before every reply the host draws a word from its belief over the
    current compatible set and answers by rule R for that word; nothing else is remembered."""
    histories: list[PublicHistory] = []
    opening = policy.belief(words)
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    frontier: list[tuple[HangmanState, tuple[str, ...], float, list[str]]] = []
    for length, group in by_length.items():
        probability = sum(opening.get(word, 0.0) for word in group)
        if probability > 0:
            state = HangmanState.started(length, max_lives)
            frontier.append((state, (state.pattern_text,), probability, group))
    while frontier:
        state, patterns, probability, compatible = frontier.pop()
        turn = len(patterns) - 1
        if state.finished or turn >= len(guesses):
            histories.append(PublicHistory(patterns, probability, tuple(compatible)))
            continue
        letter = guesses[turn]
        belief = policy.belief(compatible)
        outcomes: dict[str, tuple[HangmanState, list[str]]] = {}
        for word in compatible:
            after = apply_guess(word, state, letter)
            outcomes.setdefault(format_slots(after.slots), (after, []))[1].append(word)
        for shown, (after, group) in outcomes.items():
            share = sum(belief.get(word, 0.0) for word in group)
            if share > 0:
                frontier.append((after, (*patterns, shown), probability * share, group))
    return histories


def history_distribution(
    policy: HostPolicy,
    dictionary: Sequence[str],
    guesses: Sequence[str],
    max_lives: int = DEFAULT_LIVES,
) -> list[PublicHistory]:
    """Every public history ``policy`` can produce against the fixed ``guesses``, with its exact
    probability, sorted by pattern sequence. The private-state host is computed through its
    secret (prior over ``dictionary``); public-only hosts reply by reply."""
    words = check_compatible(dictionary)
    if len(set(guesses)) != len(guesses):
        raise ValueError(f"Guesses {list(guesses)} repeat a letter; the player never does.")
    if policy.keeps_private_state:
        histories = _histories_of_private_host(policy, words, guesses, max_lives)
    else:
        histories = _histories_of_public_host(policy, words, guesses, max_lives)
    return sorted(histories, key=lambda history: history.patterns)


def secret_entropy(
    policy: HostPolicy,
    dictionary: Sequence[str],
    guesses: Sequence[str],
    max_lives: int = DEFAULT_LIVES,
) -> tuple[float, float]:
    """(H(secret | public history, policy), E[log2 |C_t|]) in bits, exactly, averaged over the
    histories the host produces: what it keeps secret, and the most any host could."""
    histories = history_distribution(policy, dictionary, guesses, max_lives)
    hidden = sum(history.probability * -sum(q * math.log2(q) for q in policy.belief(list(history.compatible)).values()
                                            if q > 0) for history in histories)
    return hidden, sum(history.probability * math.log2(len(history.compatible)) for history in histories)


def entropy_table(
    policies: Sequence[HostPolicy],
    dictionary: Sequence[str],
    guesses: Sequence[str],
    max_lives: int = DEFAULT_LIVES,
) -> pd.DataFrame:
    """Per policy and turn t = 0..len(guesses): H(secret | history) and E[log2 |C_t|] in bits."""
    rows = [(policy.name, turn, *secret_entropy(policy, dictionary, guesses[:turn], max_lives))
            for policy in policies for turn in range(len(guesses) + 1)]
    return pd.DataFrame(rows, columns=["policy", "turn", "conditional_entropy_bits", "expected_log2_size"])


def entropy_views(entropy: pd.DataFrame, hosts: Sequence[HostPolicy]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Policy x turn tables of H(secret | public history) and E[log2 |C_t|], in host order."""
    order = [h.name for h in hosts]
    conditional = entropy.pivot(index="policy", columns="turn", values="conditional_entropy_bits").reindex(order)
    room = entropy.pivot(index="policy", columns="turn", values="expected_log2_size").reindex(order)
    return conditional, room
