"""Three idealised hosts that make the theorem of SPEC §0 concrete, with no model involved.

Each host answers Hangman honestly *for some word*; they differ in where that word lives.

- :class:`ReimaginingPoca` (stochastic POCA): keeps nothing between replies. For every reply it
  re-imagines a word compatible with the public history (uniformly, or in proportion to
  weights such as word frequency) and answers by rule R for that word. Each fork branch
  re-imagines independently, so it can contradict itself: secrecy without consistency.
- :class:`FirstCompatiblePoca` (deterministic POCA): keeps nothing either, but always answers
  for the first compatible word in a fixed order. Every branch sees the same history and so
  picks the same word: consistent, but the "secret" is a function of the public history, so
  anyone who knows the policy knows it (zero conditional entropy): consistency without secrecy.
- :class:`PrivateStateAgent`: draws one word at the start, keeps it privately, and answers
  every reply and every branch for that word: consistent and secret.

A policy is summarised by :meth:`HostPolicy.belief`: the distribution, given only the public
history (through its compatible set C_t), of the word the host answers for. For the POCAs it
is the distribution each reply draws from afresh; for the private-state agent it is the
posterior of its one committed word as seen by an observer of the public record (its prior
restricted to C_t). :attr:`HostPolicy.keeps_private_state` says whether all fork branches share
one draw (True) or each draws on its own (False).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from psit_lib.studies.psit.tasks.vocabulary import Vocabulary


class PolicyInputError(ValueError):
    """A policy was asked about a compatible set it cannot handle (empty, unknown word, no weight)."""


def check_compatible(compatible: Sequence[str]) -> list[str]:
    """``compatible`` as a list, refused when empty or listing a word twice."""
    words = list(compatible)
    if not words:
        raise PolicyInputError("The compatible set is empty: no word explains the public history.")
    if len(set(words)) != len(words):
        raise PolicyInputError("The compatible set lists a word twice; pass distinct words.")
    return words


def _weighted_belief(compatible: Sequence[str], weights: Mapping[str, float] | None) -> dict[str, float]:
    """Weights restricted to ``compatible`` and normalised (uniform when ``weights`` is None)."""
    check_compatible(compatible)
    if weights is None:
        share = 1.0 / len(compatible)
        return {word: share for word in compatible}
    raw = []
    for word in compatible:
        if word not in weights:
            raise PolicyInputError(f"Word {word!r} has no weight in the policy's weight table.")
        value = float(weights[word])
        if not math.isfinite(value) or value < 0:
            raise PolicyInputError(f"Word {word!r} has weight {value!r}; weights must be finite and >= 0.")
        raw.append(value)
    total = sum(raw)
    if total <= 0:
        raise PolicyInputError("Every compatible word has weight 0, so the policy cannot choose one.")
    return {word: value / total for word, value in zip(compatible, raw)}


class HostPolicy(ABC):
    """An idealised Hangman host, described by what it answers for given the public history."""

    #: Short name for tables and legends.
    name: str
    #: True when one word is drawn once and shared by every reply and every fork branch.
    keeps_private_state: bool

    @abstractmethod
    def belief(self, compatible: Sequence[str]) -> dict[str, float]:
        """Distribution over ``compatible`` (C_t) of the word the host answers for, given only
        the public history. Probabilities sum to 1; zero-probability words may be omitted."""


@dataclass(frozen=True, eq=False)
class ReimaginingPoca(HostPolicy):
    """Stochastic POCA: each reply re-imagines a compatible word, uniformly or by ``weights``.

    ``weights`` maps words to non-negative weights (e.g. word frequency, or frequency to the
    power 1/T as in :func:`frequency_weights`); None means uniform over C_t.
    """

    weights: Mapping[str, float] | None = None
    name: str = "stochastic POCA"
    keeps_private_state: bool = field(default=False, init=False)

    def belief(self, compatible: Sequence[str]) -> dict[str, float]:
        return _weighted_belief(compatible, self.weights)


@dataclass(frozen=True, eq=False)
class FirstCompatiblePoca(HostPolicy):
    """Deterministic POCA: always answers for the first compatible word in the order the
    compatible set is given (dictionary order, i.e. frequency rank for the wordfreq vocabulary)."""

    name: str = "deterministic POCA"
    keeps_private_state: bool = field(default=False, init=False)

    def belief(self, compatible: Sequence[str]) -> dict[str, float]:
        check_compatible(compatible)
        return {compatible[0]: 1.0}


@dataclass(frozen=True, eq=False)
class PrivateStateAgent(HostPolicy):
    """Agent with private state: draws one word (uniformly or by ``weights``) and keeps it.

    Its :meth:`belief` is the observer's posterior: the prior restricted to C_t, because an
    honest host's replies rule out exactly the incompatible words and nothing else.
    """

    weights: Mapping[str, float] | None = None
    name: str = "private state"
    keeps_private_state: bool = field(default=True, init=False)

    def belief(self, compatible: Sequence[str]) -> dict[str, float]:
        return _weighted_belief(compatible, self.weights)


def frequency_weights(
    words: Sequence[str], vocabulary: Vocabulary, temperature: float = 1.0
) -> dict[str, float]:
    """Word frequency to the power 1/T for ``words``: the choice rule of the simulated model
    (SPEC §8). Low temperatures concentrate the weight on the most frequent word (mode
    collapse), which makes a re-imagining POCA look more consistent than it is."""
    if not temperature > 0:
        raise ValueError(f"Temperature must be positive, got {temperature!r}.")
    frequencies = {word: vocabulary.frequency(word) for word in words}
    top = max(frequencies.values(), default=0.0)
    if top <= 0:
        raise ValueError("None of the words has a positive frequency.")
    # Scale by the largest frequency first so that small T does not underflow to all zeros.
    return {word: (value / top) ** (1.0 / temperature) for word, value in frequencies.items()}


def compared_hosts(words: Sequence[str], vocabulary: Vocabulary, temperatures: Sequence[float]) -> list[HostPolicy]:
    """The hosts notebook 01 compares on one compatible set: the uniform re-imagining POCA, a
    frequency-weighted one per temperature, the deterministic first-compatible POCA, and the
    agent with private state."""
    return [ReimaginingPoca(), *(frequency_poca(words, vocabulary, t) for t in temperatures), FirstCompatiblePoca(),
            PrivateStateAgent()]


def frequency_poca(words: Sequence[str], vocabulary: Vocabulary, temperature: float) -> ReimaginingPoca:
    """The re-imagining POCA that draws by frequency^(1/T) (the simulated model's choice rule)."""
    return ReimaginingPoca(weights=frequency_weights(words, vocabulary, temperature),
                           name=f"frequency POCA T={temperature:g}")
