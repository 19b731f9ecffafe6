"""The benchmark metrics on small examples worked by hand (benchmarks/metrics.py)."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.metrics import (
    LcsScores,
    ShingleCounts,
    SnippetCounts,
    lcs_length,
    lcs_scores,
    score_snippets,
    shingle_counts,
    shingles,
    summarise_lcs,
    summarise_shingles,
    tokens,
)


# ----------------------------------------------------------------------- snippet rule
def test_snippet_rule_counts_one_page() -> None:
    # "quick brown" is found once white space is normalised; "lazy dog" is not;
    # boilerplate "fox jumps" leaked, "Menu" did not.
    counts = score_snippets(
        "The  quick\nbrown fox jumps.", ["quick \n brown", "lazy dog"], ["fox jumps", "Menu"]
    )
    assert counts == SnippetCounts(tp=1, fn=1, fp=1, tn=1)


def test_snippet_rule_empty_text_misses_every_with_and_avoids_every_without() -> None:
    assert score_snippets("", ["a", "b"], ["c"]) == SnippetCounts(tp=0, fn=2, fp=0, tn=1)
    assert score_snippets(None, ["a"], []) == SnippetCounts(fn=1)
    assert score_snippets(" \n ", ["a"], ["b"]) == SnippetCounts(fn=1, tn=1)


def test_snippet_rule_sums_counts_before_the_ratios() -> None:
    total = SnippetCounts(1, 1, 1, 1) + SnippetCounts(tp=0, fn=2, fp=0, tn=1)
    assert total == SnippetCounts(tp=1, fn=3, fp=1, tn=2)
    assert total.precision == pytest.approx(1 / 2)  # tp / (tp + fp)
    assert total.recall == pytest.approx(1 / 4)  # tp / (tp + fn)
    assert total.accuracy == pytest.approx(3 / 7)  # (tp + tn) / 7
    assert total.f_score == pytest.approx(2 / 6)  # 2tp / (2tp + fp + fn)


def test_snippet_rule_is_a_substring_match_not_a_word_match() -> None:
    # The trafilatura rule matches substrings: "art" is found inside "start".
    assert score_snippets("a start", ["art"], []).tp == 1


# ----------------------------------------------------------------------- 4-grams
def test_tokens_are_word_character_runs() -> None:
    assert tokens("Don't stop-me, now!") == ["Don", "t", "stop", "me", "now"]
    assert tokens("") == []


def test_shingles_count_repeats_and_short_texts_give_one_shingle() -> None:
    assert shingles("x x x x x") == {("x", "x", "x", "x"): 2}
    assert shingles("hello world") == {("hello", "world"): 1}
    assert shingles("") == {}


def test_shingle_counts_of_one_page_are_shares() -> None:
    # gold 4-grams: (one two three four), (two three four five)
    # predicted:    (one two three four), (two three four six)
    # tp = 1, fp = 1, fn = 1, each divided by 3.
    counts = shingle_counts("one two three four five", "one two three four six")
    assert counts.tp == pytest.approx(1 / 3)
    assert counts.fp == pytest.approx(1 / 3)
    assert counts.fn == pytest.approx(1 / 3)


def test_shingle_f1_averages_precision_and_recall_over_pages() -> None:
    pages = [
        # P = 1/2, R = 1/2 (the page above)
        shingle_counts("one two three four five", "one two three four six"),
        # gold abcd bcde cdef; predicted those and defx efxy: tp 3, fp 2, fn 0 -> P 3/5, R 1
        shingle_counts("a b c d e f", "a b c d e f x y"),
        # empty prediction: tp + fp = 0, so no precision; recall 0
        shingle_counts("x y z w", ""),
    ]
    assert pages[1] == ShingleCounts(3 / 5, 2 / 5, 0.0)
    assert pages[2] == ShingleCounts(0.0, 0.0, 1.0)
    precision, recall, f1 = summarise_shingles(pages)
    assert precision == pytest.approx((1 / 2 + 3 / 5) / 2)  # 0.55
    assert recall == pytest.approx((1 / 2 + 1 + 0) / 3)  # 0.5
    assert f1 == pytest.approx(2 * 0.55 * 0.5 / 1.05)  # 0.5238...


def test_shingle_perfect_and_both_empty_pages() -> None:
    assert summarise_shingles([shingle_counts("a b c d e", "a b c d e")]) == (1.0, 1.0, 1.0)
    # both empty: no shingles at all, the page enters neither mean
    assert shingle_counts("", "") == ShingleCounts(0.0, 0.0, 0.0)
    assert summarise_shingles([shingle_counts("", "")]) == (0.0, 0.0, 0.0)


# ----------------------------------------------------------------------- LCS
def test_lcs_of_two_sentences_worked_by_hand() -> None:
    extracted = ["the", "cat", "sat", "on", "the", "mat"]
    gold = ["the", "dog", "sat", "on", "a", "mat", "today"]
    # Common subsequence: the, sat, on, mat (no fifth word can be added in order).
    assert lcs_length(extracted, gold) == 4
    scores = lcs_scores("the dog sat on a mat today", "the cat sat on the mat")
    assert scores.precision == pytest.approx(4 / 6)  # LCS / |extracted|
    assert scores.recall == pytest.approx(4 / 7)  # LCS / |gold|
    assert scores.score == pytest.approx(4 / (6 + 7 - 4))  # CETD Eq. 4


def test_lcs_treats_every_occurrence_as_distinct() -> None:
    # a b a b vs b a b a: "a b a" or "b a b", 3 (a bag of words would say 4).
    assert lcs_length("abab", "baba") == 3
    assert lcs_length("aaaa", "aa") == 2
    assert lcs_length([], ["a"]) == 0
    assert lcs_length(["a"], ["b"]) == 0


def test_lcs_scores_edge_cases() -> None:
    assert lcs_scores("", "") == LcsScores(1.0, 1.0, 1.0)
    assert lcs_scores("some gold text", "") == LcsScores(0.0, 0.0, 0.0)
    empty_gold = lcs_scores("", "extracted words")
    assert (empty_gold.precision, empty_gold.recall) == (0.0, 1.0)


def test_lcs_summary_is_the_mean_per_document_and_f1_of_the_means() -> None:
    documents = [LcsScores(1.0, 0.5, 0.5), LcsScores(0.5, 1.0, 0.5)]
    precision, recall, f1, score = summarise_lcs(documents)
    assert (precision, recall, score) == (0.75, 0.75, 0.5)
    assert f1 == pytest.approx(0.75)
    # CETD Table 1, CleanEval-Eng: P 92.96 %, R 94.52 % -> F1 93.73 %
    _, _, table_f1, _ = summarise_lcs([LcsScores(0.9296, 0.9452, 0.0)])
    assert round(table_f1 * 100, 2) == 93.73


def _lcs_by_dynamic_programming(a: list[int], b: list[int]) -> int:
    """The textbook O(nm) table: the independent reference for the bit-parallel version."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(0, 5), max_size=40),
    st.lists(st.integers(0, 5), max_size=40),
)
def test_bit_parallel_lcs_equals_dynamic_programming(a: list[int], b: list[int]) -> None:
    assert lcs_length(a, b) == _lcs_by_dynamic_programming(a, b)


def test_lcs_of_long_pages_is_fast() -> None:
    generator = random.Random(7)
    a = [f"w{generator.randrange(2000)}" for _ in range(20_000)]
    b = a[::2] + [f"x{i}" for i in range(10_000)]
    start = time.perf_counter()
    assert lcs_length(a, b) == 10_000  # every other word of a, then nothing in common
    assert time.perf_counter() - start < 5.0


def test_the_leave_one_set_out_floors_are_every_set_and_the_mean_margin() -> None:
    """Issue 14's floors as ``benchmarks.accuracy --loso`` prints them: a set under
    trafilatura fails the first however far ahead the mean is; the mean must lead by 0.01."""
    from benchmarks.accuracy import _floors

    ahead = _floors(["a", "b"], [0.95, 0.90], [0.949, 0.88])
    assert ahead[0].endswith("every set >= 0: met") and "b +0.02000" in ahead[0]
    assert ahead[1] == "tagratio - trafilatura, mean F: +0.01050; >= 0.01: met"
    one_under = _floors(["a", "b"], [0.98, 0.9499], [0.90, 0.95])
    assert one_under[0].endswith("NOT met") and one_under[1].endswith(": met")
    close = _floors(["a"], [0.955], [0.95])
    assert close[1].endswith("NOT met")
