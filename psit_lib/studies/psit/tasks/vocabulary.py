"""The English word list behind Hangman, indexed for fast constraint queries.

"Which words explain the public replies?" is asked thousands of times per run, so the vocabulary is
indexed per word length as numpy arrays. Source: ``wordfreq`` English without the words of
``better_profanity``'s word list; ``n_words`` counts the lowercase ASCII words of 3..12 letters kept
*after* those filters.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np
import wordfreq

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
MIN_WORD_LENGTH = 3
MAX_WORD_LENGTH = 12
DEFAULT_VOCABULARY_SIZE = 50_000

_WORD_PATTERN = re.compile(rf"[a-z]{{{MIN_WORD_LENGTH},{MAX_WORD_LENGTH}}}")
_LETTER_CODE = {letter: code for code, letter in enumerate(ALPHABET)}


class VocabularyQueryError(ValueError):
    """A constraint query was malformed (position outside the word, or a non a-z letter)."""


def is_vocabulary_word(word: str) -> bool:
    """Whether ``word`` has the shape the vocabulary keeps (lowercase a-z, 3..12 letters)."""
    return _WORD_PATTERN.fullmatch(word) is not None


def _letter_code(letter: str) -> int:
    code = _LETTER_CODE.get(letter)
    if code is None:
        raise VocabularyQueryError(f"Constraint letter {letter!r} is not a single lowercase a-z letter.")
    return code


@dataclass(frozen=True)
class _LengthBucket:
    """All vocabulary words of one length, most frequent first; letter codes per position and letter
    counts per word are contiguous rows, so each constraint is one vectorised comparison."""

    words: np.ndarray  # dtype object, shape (n,)
    letters_by_position: np.ndarray  # uint8, shape (length, n)
    letter_counts: np.ndarray  # uint8, shape (26, n)

    @classmethod
    def build(cls, words: list[str]) -> _LengthBucket:
        length = len(words[0])
        codes = np.frombuffer("".join(words).encode("ascii"), dtype=np.uint8).reshape(len(words), length)
        codes = codes - ord("a")
        counts = np.zeros((len(ALPHABET), len(words)), dtype=np.uint8)
        for position in range(length):
            np.add.at(counts, (codes[:, position], np.arange(len(words))), 1)
        return cls(
            words=np.array(words, dtype=object),
            letters_by_position=np.ascontiguousarray(codes.T),
            letter_counts=counts,
        )


class Vocabulary:
    """Frequency-ranked English words with a per-length index for Hangman constraint queries."""

    def __init__(self, words: Iterable[str], frequencies: Mapping[str, float]):
        """Index ``words`` by descending frequency (ties keep their order); duplicates and misshapen
        words are rejected loudly, as they would silently distort candidate sampling."""
        word_list = list(words)
        if len(set(word_list)) != len(word_list):
            raise ValueError("Vocabulary words must be distinct; the given list has duplicates.")
        for word in word_list:
            if not is_vocabulary_word(word):
                raise ValueError(f"Vocabulary word {word!r} is not 3..12 lowercase a-z letters.")
            if word not in frequencies:
                raise ValueError(f"Vocabulary word {word!r} has no frequency.")
        ranked = sorted(range(len(word_list)), key=lambda i: (-frequencies[word_list[i]], i))
        self._words: tuple[str, ...] = tuple(word_list[i] for i in ranked)
        self._frequencies: dict[str, float] = {word: float(frequencies[word]) for word in self._words}
        by_length: dict[int, list[str]] = {}
        for word in self._words:
            by_length.setdefault(len(word), []).append(word)
        self._buckets = {length: _LengthBucket.build(group) for length, group in by_length.items()}

    @property
    def words(self) -> tuple[str, ...]:
        """All words, most frequent first."""
        return self._words

    @property
    def lengths(self) -> tuple[int, ...]:
        """Word lengths present in the vocabulary, ascending."""
        return tuple(sorted(self._buckets))

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return word in self._frequencies

    def frequency(self, word: str) -> float:
        """Frequency of ``word`` (wordfreq's number; also answers for words outside the index)."""
        if word in self._frequencies:
            return self._frequencies[word]
        return float(wordfreq.word_frequency(word, "en"))

    def matching(self, length: int, known: Mapping[int, str], absent: Iterable[str]) -> list[str]:
        """Words of ``length`` letters with ``known`` letters at their 0-based positions and no
        ``absent`` letter, most frequent first. Hangman semantics: a revealed letter occurs at
        exactly its revealed positions (the host would have revealed any other occurrence)."""
        bucket = self._buckets.get(length)
        for position, letter in known.items():
            if not 0 <= position < length:
                raise VocabularyQueryError(
                    f"Known position {position} is outside a word of length {length}."
                )
            _letter_code(letter)
        absent_codes = [_letter_code(letter) for letter in absent]
        if bucket is None:
            return []
        mask = np.ones(len(bucket.words), dtype=bool)
        for position, letter in known.items():
            mask &= bucket.letters_by_position[position] == _LETTER_CODE[letter]
        for code in absent_codes:
            mask &= bucket.letter_counts[code] == 0
        for letter, occurrences in Counter(known.values()).items():
            mask &= bucket.letter_counts[_LETTER_CODE[letter]] == occurrences
        return bucket.words[mask].tolist()

    def compatible(self, length: int | None, known: Mapping[int, str], absent: Iterable[str]) -> list[str]:
        """Words a public Hangman record allows (every length before the opening says one), by
        length, most frequent first within each."""
        lengths = self.lengths if length is None else (length,)
        return [word for n in lengths for word in self.matching(n, known, absent)]


@lru_cache(maxsize=1)
def excluded_words() -> frozenset[str]:
    """Words the vocabulary leaves out: ``better_profanity``'s maintained profanity list, lower-cased.
    wordfreq counts use, swearing included, so its most frequent words would put profanity among the
    fork's candidates (the reference code's list keeps them: a registered difference)."""
    text = resources.files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8")
    return frozenset(line.strip().lower() for line in text.splitlines() if line.strip())


def _ranked_vocabulary_words(n_words: int) -> list[str]:
    """The ``n_words`` most frequent wordfreq English words that have vocabulary shape and are not
    :func:`excluded_words`."""
    request = max(2 * n_words, 1_000)
    excluded = excluded_words()
    while True:
        ranked = wordfreq.top_n_list("en", request)
        kept = [word for word in ranked if is_vocabulary_word(word) and word not in excluded]
        if len(kept) >= n_words or len(ranked) < request:
            return kept[:n_words]
        request *= 2


@lru_cache(maxsize=4)
def get_vocabulary(n_words: int = DEFAULT_VOCABULARY_SIZE) -> Vocabulary:
    """The shared vocabulary of the ``n_words`` most frequent words (built once per size)."""
    if n_words < 1:
        raise ValueError(f"Vocabulary size must be positive, got {n_words}.")
    words = _ranked_vocabulary_words(n_words)
    frequencies = {word: wordfreq.word_frequency(word, "en") for word in words}
    return Vocabulary(words, frequencies)
