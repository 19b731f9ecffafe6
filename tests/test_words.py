"""The word model: hashed words of a block's text, scored by a linear model."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from scrapy_tagratio import ExtractionError
from scrapy_tagratio.algorithms.words import WordScores, hashed_words

BITS = 8


def bucket(word: str) -> int:
    """The bucket of ``word`` as the module description defines it (CRC-32 of UTF-8)."""
    return zlib.crc32(word.encode("utf-8")) & ((1 << BITS) - 1)


def test_hashed_words_are_the_distinct_buckets_of_the_lower_cased_words() -> None:
    hashed = hashed_words(["Subscribe NOW, now!", "", "Café über 42"], BITS)
    first = hashed.buckets[hashed.starts[0] : hashed.starts[1]]
    assert sorted(first.tolist()) == sorted({bucket("subscribe"), bucket("now")})
    assert hashed.starts[1] == hashed.starts[2]  # the empty text has none
    third = hashed.buckets[hashed.starts[2] : hashed.starts[3]]
    assert sorted(third.tolist()) == sorted({bucket("café"), bucket("über"), bucket("42")})
    assert hashed.words.tolist() == [3, 0, 3]  # repeated words count


def test_scores_are_the_intercept_plus_the_unit_scaled_weights() -> None:
    weights = np.zeros(1 << BITS, dtype=np.float32)
    weights[bucket("subscribe")] = -2.0
    weights[bucket("council")] = 1.5
    model = WordScores(BITS, 0, weights, 0.25)
    scores = model.scores(["Subscribe subscribe", "the council", "", "council Subscribe"])
    expected = [0.25 - 2.0, 0.25 + 1.5 / np.sqrt(2), 0.0, 0.25 - 0.5 / np.sqrt(2)]
    assert np.allclose(scores, expected, atol=1e-6)
    assert scores.dtype == np.float32
    # Texts of more words than max_words get the neutral log-odds.
    limited = WordScores(BITS, 1, weights, 0.25).scores(["subscribe", "the council"])
    assert np.allclose(limited, [0.25 - 2.0, 0.0])


def test_word_model_round_trips_through_its_file_form() -> None:
    weights = np.linspace(-3, 3, 1 << BITS).astype(np.float16).astype(np.float32)
    model = WordScores(BITS, 12, weights, -0.5)
    again = WordScores.from_dict(model.to_dict())
    assert (again.bits, again.max_words, again.intercept) == (BITS, 12, -0.5)
    assert np.array_equal(again.weights, weights)
    with pytest.raises(ExtractionError, match="weights"):
        WordScores.from_dict({**model.to_dict(), "bits": BITS + 1})
    with pytest.raises(ExtractionError, match="malformed"):
        WordScores.from_dict({"bits": BITS})
