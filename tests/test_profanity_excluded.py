"""The simulator and the harness keep separate code but leave out the same maintained word list
(better_profanity's): wordfreq ranks words by use, swearing included, and the reference run's most
revealed simulated Hangman secret was once a profanity."""

from __future__ import annotations

from better_profanity.utils import get_complete_path_of_file, read_wordlist

from psit_lib.sim.knowledge.words import english_words, profane_words
from psit_lib.sim.roles.hangman import _opening_pool
from psit_lib.studies.psit.tasks.vocabulary import excluded_words, get_vocabulary


def _listed() -> set[str]:
    """The package's own list, read by the package's own reader."""
    return {word.strip().lower() for word in read_wordlist(get_complete_path_of_file("profanity_wordlist.txt"))}


def test_both_sides_read_the_same_maintained_list():
    assert profane_words() == excluded_words() == _listed()
    assert len(_listed()) > 800 and {"fucking", "shit"} <= _listed()


def test_no_listed_word_is_a_simulated_secret_a_candidate_or_a_compatible_word():
    listed = _listed()
    assert not listed & set(english_words().ranked)
    assert not listed & set(_opening_pool()[0])
    assert not listed & set(get_vocabulary().words)
    assert "fucking" not in get_vocabulary() and "planet" in get_vocabulary()
