"""Accuracy metrics of the benchmark scripts, as the sources they come from define them.

* **Snippet rule** of trafilatura-eval (its README, the trafilatura project's own rule): white
  space normalised with ``re.sub(r"\\s+", " ", s).strip()``; a ``with`` snippet found as a
  substring is a true positive, else a false negative; a ``without`` snippet found is a false
  positive, else a true negative. Counts are summed over pages, then
  P = tp/(tp+fp), R = tp/(tp+fn), accuracy = (tp+tn)/all, F = 2tp/(2tp+fp+fn).
* **Word 4-gram F1** as scrapinghub/article-extraction-benchmark's ``evaluate.py`` computes it:
  tokens are ``\\w+`` matches (case kept); the shingles of a text are its word 4-grams (a text
  of fewer than 4 tokens gives one shorter shingle), counted with multiplicity; per page
  tp = sum of min(gold count, predicted count), fp and fn the excesses, all three divided by
  their sum (so long pages do not weigh more). Precision is averaged over the pages with
  tp + fp > 0 (a page with an empty prediction does not enter it), recall over the pages with
  tp + fn > 0, and F1 is the harmonic mean of the two means.
* **Word LCS** of the CETD paper (section 5.2, Eq. 1, 2 and 4): P = |LCS(a, b)| / |a|,
  R = |LCS(a, b)| / |b| over word sequences (every word occurrence distinct, not a bag of
  words), and CleanEval's score |LCS| / (|a| + |b| - |LCS|). Averaged over documents (5.4).
  The paper's tables give F1 as the harmonic mean of the averaged P and R (Table 1,
  CleanEval-Eng: P 92.96, R 94.52 -> F1 93.73), so :func:`summarise_lcs` does the same.
  Words are the same ``\\w+`` tokens as for the 4-grams. Edge cases the paper leaves open:
  an empty extraction has P = R = 0 against a non-empty gold; an empty gold gives R = 1;
  both empty give P = R = score = 1.

The LCS length is computed exactly with the bit-parallel algorithm of Allison and Dix (1986)
in Hyyrö's formulation (2004): words are mapped to integer ids, each id gets a bit mask of its
positions in ``a`` (a Python int), and one pass over ``b`` updates a row vector with four
big-integer operations per word. That is O(|a| * |b| / word size) machine work done in C, about
0.1 s for two 20,000-word texts, instead of the O(|a| * |b|) Python steps of the textbook
dynamic programme, so no page needs to be capped.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "LcsScores",
    "ShingleCounts",
    "SnippetCounts",
    "lcs_length",
    "lcs_scores",
    "normalise_whitespace",
    "score_snippets",
    "shingle_counts",
    "shingles",
    "summarise_lcs",
    "summarise_shingles",
    "tokens",
]

_WHITESPACE = re.compile(r"\s+")
_TOKEN = re.compile(r"\w+")


def normalise_whitespace(text: str | None) -> str:
    """The snippet rule's normalisation: runs of white space to one space, stripped."""
    return _WHITESPACE.sub(" ", text or "").strip()


# --------------------------------------------------------------------------- snippets
@dataclass(frozen=True)
class SnippetCounts:
    """Snippet-rule counts, summable over pages with ``+``."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0

    def __add__(self, other: SnippetCounts) -> SnippetCounts:
        return SnippetCounts(
            self.tp + other.tp, self.fn + other.fn, self.fp + other.fp, self.tn + other.tn
        )

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def accuracy(self) -> float:
        total = self.tp + self.tn + self.fp + self.fn
        return (self.tp + self.tn) / total if total else 0.0

    @property
    def f_score(self) -> float:
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else 0.0


def score_snippets(text: str | None, with_: Iterable[str], without: Iterable[str]) -> SnippetCounts:
    """Counts of one page under the snippet rule (None or empty text finds nothing)."""
    haystack = normalise_whitespace(text)
    if not haystack:
        return SnippetCounts(fn=sum(1 for _ in with_), tn=sum(1 for _ in without))
    found = [normalise_whitespace(s) in haystack for s in with_]
    leaked = [normalise_whitespace(s) in haystack for s in without]
    return SnippetCounts(
        tp=sum(found), fn=len(found) - sum(found), fp=sum(leaked), tn=len(leaked) - sum(leaked)
    )


# --------------------------------------------------------------------------- 4-grams
def tokens(text: str | None) -> list[str]:
    """Words as article-extraction-benchmark and the LCS metric see them: ``\\w+`` runs."""
    return _TOKEN.findall(text or "")


def shingles(text: str | None, n: int = 4) -> Counter[tuple[str, ...]]:
    """Word n-grams of ``text`` with counts; fewer than ``n`` tokens give one short shingle."""
    words = tokens(text)
    return Counter(
        tuple(words[i : i + n]) for i in range(max(1, len(words) - n + 1)) if words[i : i + n]
    )


@dataclass(frozen=True)
class ShingleCounts:
    """One page's shingle matching: tp, fp, fn as shares of their sum (all 0 if both empty)."""

    tp: float
    fp: float
    fn: float


def shingle_counts(gold: str | None, predicted: str | None, n: int = 4) -> ShingleCounts:
    """Per-page shingle tp/fp/fn, normalised to shares (``string_shingle_matching``)."""
    true_counts = shingles(gold, n)
    pred_counts = shingles(predicted, n)
    tp = sum((true_counts & pred_counts).values())
    fp = sum((pred_counts - true_counts).values())
    fn = sum((true_counts - pred_counts).values())
    total = tp + fp + fn
    if not total:
        return ShingleCounts(0.0, 0.0, 0.0)
    return ShingleCounts(tp / total, fp / total, fn / total)


def _precision(c: ShingleCounts) -> float:
    if c.fp == c.fn == 0:
        return 1.0
    return 0.0 if c.tp == c.fp == 0 else c.tp / (c.tp + c.fp)


def _recall(c: ShingleCounts) -> float:
    if c.fp == c.fn == 0:
        return 1.0
    return 0.0 if c.tp == c.fn == 0 else c.tp / (c.tp + c.fn)


def summarise_shingles(pages: Sequence[ShingleCounts]) -> tuple[float, float, float]:
    """(precision, recall, F1) over pages: means of the per-page values, F1 of the means."""
    precisions = [_precision(c) for c in pages if c.tp + c.fp > 0]
    recalls = [_recall(c) for c in pages if c.tp + c.fn > 0]
    precision = statistics.fmean(precisions) if precisions else 0.0
    recall = statistics.fmean(recalls) if recalls else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


# --------------------------------------------------------------------------- LCS
def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two sequences (exact, bit-parallel).

    Row vector ``v`` has a bit per position of ``a``; a 0 bit marks where the LCS so far
    grows. Per symbol ``y`` of ``b``: ``u = v & match[y]``, ``v = (v + u) | (v - u)``
    (Hyyrö 2004, Eq. of Allison-Dix); the LCS is the number of 0 bits among the low |a|.
    """
    if len(a) < len(b):
        a, b = b, a
    n = len(a)
    if not n or not b:
        return 0
    positions: dict[Hashable, list[int]] = {}
    for i, symbol in enumerate(a):
        positions.setdefault(symbol, []).append(i)
    match: dict[Hashable, int] = {}
    for symbol in set(b):
        where = positions.get(symbol)
        if where:
            bits = bytearray(n // 8 + 1)
            for i in where:
                bits[i >> 3] |= 1 << (i & 7)
            match[symbol] = int.from_bytes(bits, "little")
    full = (1 << n) - 1
    v = full
    for symbol in b:
        m = match.get(symbol)
        if m is None:
            continue
        u = v & m
        v = ((v + u) | (v - u)) & full
    return n - v.bit_count()


@dataclass(frozen=True)
class LcsScores:
    """One document's word-LCS precision, recall and CleanEval score (CETD 5.2)."""

    precision: float
    recall: float
    score: float


def lcs_scores(gold: str | None, predicted: str | None) -> LcsScores:
    """Word-level LCS precision/recall/score of ``predicted`` against ``gold``."""
    a, b = tokens(predicted), tokens(gold)
    if not a and not b:
        return LcsScores(1.0, 1.0, 1.0)
    common = lcs_length(a, b)
    precision = common / len(a) if a else 0.0
    recall = common / len(b) if b else 1.0
    return LcsScores(precision, recall, common / (len(a) + len(b) - common))


def summarise_lcs(documents: Sequence[LcsScores]) -> tuple[float, float, float, float]:
    """(precision, recall, F1, score): means over documents, F1 of the mean P and R."""
    if not documents:
        return 0.0, 0.0, 0.0, 0.0
    precision = statistics.fmean(d.precision for d in documents)
    recall = statistics.fmean(d.recall for d in documents)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, statistics.fmean(d.score for d in documents)
