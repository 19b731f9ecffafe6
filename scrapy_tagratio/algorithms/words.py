"""A block's words read by a learned linear model: the default algorithm's word score.

The errors the block model's structural features leave on trafilatura-eval are mostly short
page furniture *inside* the article's container that only its words tell from the article:
prompts and notes ("If you enjoyed reading this post...", "Subscribe now to our ...
edition"), newsletter boxes, disclosures, copyright lines, dates, bylines, cookie notices.
No structure or position feature separated them (development notes, issue 14). What does is
the words themselves, learned from the multilingual development sets rather than listed by
hand per language: each block's words (lower-cased runs of word characters, ``\\w+``) are
hashed into ``2 ** bits`` buckets (CRC-32 of their UTF-8 bytes: the same buckets in every
process and on every platform, unlike Python's ``hash``), the block is the set of its
buckets scaled to unit length (``1 / sqrt(buckets)`` each: a long block's many words do not
add up to a confident score), and a logistic regression fitted by ``benchmarks/train_tagratio.py``
on the labelled blocks (their labels and weights are the block model's) gives its log-odds
of being content. That log-odds is one more column of the block model (stacked: in
training, each block's score comes from a word model fitted on pages of other sites).
Blocks longer than :attr:`WordScores.max_words` words (when set) get 0, the neutral
log-odds, are left out of its fit, and their words are counted, not hashed: the structural
features decide them (furniture lines are short; on long blocks the words mostly learned
what a set's gold calls content, which another set's gold need not).

The word model ships inside the block model's file (key ``"words"``), its weights rounded to
float16 (the training script scores its blocks with the rounded weights, so the model was
validated on the very scores the extractor computes).
"""

from __future__ import annotations

import base64
import functools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..document import Document
from ..errors import ExtractionError
from ..reader import active_kernel

__all__ = ["WORD", "HashedWords", "WordScores", "hashed_words", "word_hashes"]

#: A word: a run of word characters (letters, digits and the underscore, in any script).
WORD = re.compile(r"\w+")
#: Blocks whose texts :meth:`WordScores.block_scores` builds at a time: a page of 200,000
#: blocks (a 20 MB archive) would otherwise hold all their texts, tens of MB, at once.
BLOCKS_AT_ONCE = 4096


@functools.cache
def _more_words_than(count: int) -> re.Pattern[str]:
    """A pattern that matches at a text's start where it has more than ``count`` words
    (:data:`WORD`; ``\\b`` makes each ``\\w+`` a whole word): one call in C tells a long
    text from a short one without a string per word."""
    return re.compile(rf"(?:\W*\w+\b){{{count + 1}}}")


@dataclass(frozen=True)
class HashedWords:
    """Texts as sets of hashed words, in compressed rows: text ``i``'s distinct buckets are
    ``buckets[starts[i]:starts[i + 1]]``; ``words[i]`` is its number of words (up to the
    limit it was hashed with plus one, :func:`hashed_words`)."""

    starts: np.ndarray  # int64, len(texts) + 1
    buckets: np.ndarray  # int64
    words: np.ndarray  # int64, per text


def word_hashes(texts: Sequence[str], max_words: int) -> tuple[np.ndarray, np.ndarray]:
    """Per text, lower-cased, its number of words (:data:`WORD`), counted up to
    ``max_words + 1`` (a longer text's words are neither counted nor hashed; every word
    with 0); and the CRC-32 of each word's UTF-8 bytes (:func:`zlib.crc32`), word after
    word, of the texts of at most ``max_words`` words (of every text with 0): int64
    arrays. In C with the compiled kernel (:func:`~scrapy_tagratio._kernel.word_hashes`:
    no Python string per word), else with ``re`` and ``zlib``: the same figures."""
    kernel = active_kernel()
    if kernel is not None:
        counted, hashed_bytes = kernel.word_hashes(list(texts), max_words)
        return np.frombuffer(counted, dtype=np.int64), np.frombuffer(hashed_bytes, dtype=np.int64)
    counts: list[int] = []
    hashed: list[str] = []  # the words of the texts of at most max_words words
    longer = _more_words_than(max_words).match if max_words else lambda text: None
    for text in map(str.lower, texts):
        if longer(text):
            counts.append(max_words + 1)
            continue
        words = WORD.findall(text)
        counts.append(len(words))
        hashed.extend(words)
    hashes = map(zlib.crc32, map(str.encode, hashed))
    return np.array(counts, dtype=np.int64), np.fromiter(hashes, dtype=np.int64, count=len(hashed))


def hashed_words(texts: Sequence[str], bits: int, max_words: int = 0) -> HashedWords:
    """The distinct ``bits``-bit buckets of the words of each text of at most ``max_words``
    words (of every text with 0; a longer text has none), and every text's number of
    words up to ``max_words + 1`` (see the module description): the words hashed by
    :func:`word_hashes`, each text's buckets made distinct and sorted by one sort of
    (text, bucket) keys, the distinct ones those unlike their predecessor
    (:func:`numpy.unique`'s result; numpy 2's hash table behind it takes several times as
    long on a page's thousand keys); with the compiled kernel, each text's few buckets
    sorted and made distinct in C (:func:`~scrapy_tagratio._kernel.hashed_words`: the
    same arrays, without numpy's dozen calls on small arrays a page)."""
    kernel = active_kernel()
    if kernel is not None:
        found = kernel.hashed_words(list(texts), bits, max_words)
        return HashedWords(*(np.frombuffer(part, dtype=np.int64) for part in found))
    counts, hashes = word_hashes(texts, max_words)
    hashed = np.where(counts <= max_words, counts, 0) if max_words else counts
    text_of = np.repeat(np.arange(len(counts), dtype=np.int64), hashed)
    keys = np.sort((text_of << bits) | (hashes & ((1 << bits) - 1)))
    keys = keys[np.diff(keys, prepend=-1) != 0]  # keys are not negative: the first differs
    starts = np.searchsorted(keys >> bits, np.arange(len(counts) + 1))
    return HashedWords(starts.astype(np.int64), keys & ((1 << bits) - 1), counts)


@dataclass(frozen=True, eq=False)
class WordScores:
    """A logistic regression over hashed words: ``intercept + sum(weights[bucket]) /
    sqrt(buckets)`` per text (its log-odds of being content)."""

    bits: int
    #: Texts of more words than this score 0 (the neutral log-odds); 0: no limit.
    max_words: int
    weights: np.ndarray  # float32, 2 ** bits (float16 values)
    intercept: float

    def scores_of(self, hashed: HashedWords) -> np.ndarray:
        """Per text of ``hashed`` (hashed with :attr:`bits`), its log-odds (float32)."""
        sizes = np.diff(hashed.starts)
        sums = np.zeros(len(sizes))
        filled = sizes > 0
        if filled.any():
            # reduceat over the filled rows' starts: an empty row would take its next's.
            sums[filled] = np.add.reduceat(
                self.weights[hashed.buckets].astype(np.float64), hashed.starts[:-1][filled]
            )
        scores = self.intercept + sums / np.sqrt(np.maximum(sizes, 1))
        neutral = ~filled
        if self.max_words:
            neutral |= hashed.words > self.max_words
        return np.where(neutral, 0.0, scores).astype(np.float32)

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Per text, its log-odds (float32; see :meth:`scores_of`)."""
        return self.scores_of(hashed_words(texts, self.bits, self.max_words))

    def block_scores(self, document: Document, blocks: np.ndarray) -> np.ndarray:
        """Per node of ``blocks``, the log-odds of the text its layout block owns
        (:meth:`Document.block_texts`): with the compiled kernel, its words read from the
        block's runs of text (:func:`~scrapy_tagratio._kernel.span_hashed_words`: no text
        built, the same buckets); else the texts built :data:`BLOCKS_AT_ONCE` blocks at a
        time (:meth:`Document.block_text_chunks`)."""
        kernel = active_kernel()
        if kernel is not None:
            found = kernel.span_hashed_words(
                *document.block_runs(blocks), self.bits, self.max_words
            )
            return self.scores_of(HashedWords(*(np.frombuffer(b, np.int64) for b in found)))
        chunks = document.block_text_chunks(blocks, BLOCKS_AT_ONCE)
        return np.concatenate([np.zeros(0, np.float32), *map(self.scores, chunks)])

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WordScores:
        """The word model as its model file holds it; :class:`ExtractionError` if malformed
        (a negative size or limit, a weight or intercept not finite, weights not ``2 **
        bits``): read once per process, so a bad file fails there, not on every page."""
        try:
            bits = int(data["bits"])
            weights = np.frombuffer(base64.b64decode(data["weights"]), dtype="<f2")
            model = cls(
                bits, int(data["max_words"]), weights.astype(np.float32), float(data["intercept"])
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ExtractionError(f"malformed word model: {exc}") from exc
        if bits < 0 or model.max_words < 0:
            raise ExtractionError(f"malformed word model: bits {bits}, max_words {model.max_words}")
        if not (np.isfinite(model.intercept) and np.isfinite(model.weights).all()):
            raise ExtractionError("malformed word model: an intercept or weight is not finite")
        if len(model.weights) != 1 << bits:
            raise ExtractionError(f"word model has {len(model.weights)} weights for {bits} bits")
        return model

    def to_dict(self) -> dict[str, Any]:
        """The inverse of :meth:`from_dict` (the weights as base64 little-endian float16)."""
        return {
            "bits": self.bits,
            "max_words": self.max_words,
            "intercept": self.intercept,
            "weights": base64.b64encode(self.weights.astype("<f2").tobytes()).decode("ascii"),
        }
