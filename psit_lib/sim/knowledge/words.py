"""English words the simulated model knows, ranked by ``wordfreq`` (README.md, "Its own knowledge"); per-length
lists, so re-imagining a secret costs a scan of one length's words."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from importlib import resources

import wordfreq

VOCABULARY_SIZE = 50_000
"""How many ranked English words the model knows (after the shape filter)."""

_SHAPE = re.compile(r"[a-z]{3,12}")


@lru_cache(maxsize=1)
def profane_words() -> frozenset[str]:
    """The words of ``better_profanity``'s maintained word list, lower-cased: the model never picks,
    fits or proposes one of them. wordfreq ranks words by use, swearing included, so without this
    the host's most common picks include profanity (a host a study would not report)."""
    text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip())


class EnglishWords:
    """The model's ranked word list with board-fitting queries."""

    def __init__(self, ranked: list[str]) -> None:
        self._frequency = {w: float(wordfreq.word_frequency(w, "en")) for w in ranked}
        order = sorted(range(len(ranked)), key=lambda i: (-self._frequency[ranked[i]], i))
        self.ranked: tuple[str, ...] = tuple(ranked[i] for i in order)
        self._by_length: dict[int, list[str]] = {}
        for word in self.ranked:
            self._by_length.setdefault(len(word), []).append(word)

    def frequency(self, word: str) -> float:
        return self._frequency.get(word) or float(wordfreq.word_frequency(word, "en"))

    def fitting(self, length: int, shown: dict[int, str], missed: frozenset[str] | set[str]) -> list[str]:
        """Words of ``length`` that explain a board, most common first (a shown letter appears nowhere
        else: the host would have uncovered it there too)."""
        return list(_fitting(self, length, tuple(sorted(shown.items())), frozenset(missed)))


@lru_cache(maxsize=4096)
def _fitting(words: EnglishWords, length: int, shown: tuple[tuple[int, str], ...],
             missed: frozenset[str]) -> tuple[str, ...]:
    at = dict(shown)
    shown_counts = Counter(at.values())
    out = []
    for word in words._by_length.get(length, ()):
        if any(word[p] != letter for p, letter in shown):
            continue
        if missed and not missed.isdisjoint(word):
            continue
        counts = Counter(word)
        if any(counts[letter] != n for letter, n in shown_counts.items()):
            continue
        out.append(word)
    return tuple(out)


@lru_cache(maxsize=1)
def english_words() -> EnglishWords:
    """The model's vocabulary: the most frequent wordfreq English words of plain shape, profanity
    (:func:`profane_words`) left out."""
    wanted, request = VOCABULARY_SIZE, 2 * VOCABULARY_SIZE
    profane = profane_words()
    while True:
        listed = wordfreq.top_n_list("en", request)
        kept = [w for w in listed if _SHAPE.fullmatch(w) and w not in profane]
        if len(kept) >= wanted or len(listed) < request:
            return EnglishWords(kept[:wanted])
        request *= 2
