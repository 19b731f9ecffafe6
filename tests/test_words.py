"""The word model: hashed words of a block's text, scored by a linear model."""

from __future__ import annotations

import os
import re
import sys
import tracemalloc
import zlib
from collections.abc import Sequence
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import _data
from scrapy_tagratio import ExtractionError, reader
from scrapy_tagratio import document as document_module
from scrapy_tagratio.algorithms import words as words_module
from scrapy_tagratio.algorithms.tagratio import block_features
from scrapy_tagratio.algorithms.words import WordScores, hashed_words, word_hashes
from scrapy_tagratio.document import (
    SPLIT_MAX_CHARS,
    Document,
    collapse_white_space,
    decode_html,
)

BITS = 8
KERNEL = reader._KERNEL
needs_kernel = pytest.mark.skipif(KERNEL is None, reason="the compiled kernel is not built")
#: Texts of every width of str (one, two and four bytes a character) and the characters
#: where word boundaries are easy to get wrong: the underscore (a word character of re),
#: digits of other scripts, combining marks (not word characters: they split a word),
#: a capital whose lower case is two characters (U+0130: "i" and a combining dot).
TRICKY_TEXTS = [
    "",
    "   ",
    "Subscribe NOW, now!",
    "snake_case and __dunder__ x_1",
    "Caf\u00e9 \u00fcber 42\u00a0\u00bd \u00b2",
    "\u0130stanbul \u0130 I\u0307 e\u0301t\u00e9",
    "\u4e2d\u6587\u6587\u672c\u3002\u65e5\u672c\u8a9e\u30c6\u30ad\u30b9\u30c8",
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629 \u0661\u0662\u0663 "
    "\u0939\u093f\u0928\u094d\u0926\u0940",
    "emoji \U0001f600 \U0001d400\U0001d401 gothic \U00010330\U00010331 end",
    "one-two\u2014three\u2019s (four) [five] \u00absix\u00bb",
]


def reference_hashes(texts: Sequence[str], max_words: int) -> tuple[list[int], list[int]]:
    """:func:`word_hashes` as the module description defines it, written out here:
    ``re``'s words of the lower-cased text (counted up to ``max_words + 1``), zlib's CRC-32
    of their UTF-8 bytes."""
    found = [re.findall(r"\w+", text.lower()) for text in texts]
    kept = [words for words in found if not max_words or len(words) <= max_words]
    counts = [min(len(words), max_words + 1) if max_words else len(words) for words in found]
    return counts, [zlib.crc32(w.encode()) for ws in kept for w in ws]


def kernel_hashes(texts: Sequence[str], max_words: int) -> tuple[list[int], list[int]]:
    """The compiled kernel's :func:`~scrapy_tagratio._kernel.word_hashes`, as lists."""
    assert KERNEL is not None
    counts, hashes = KERNEL.word_hashes(list(texts), max_words)
    return np.frombuffer(counts, np.int64).tolist(), np.frombuffer(hashes, np.int64).tolist()


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


@pytest.mark.parametrize(
    "change",
    [
        {"bits": -1},  # was a ValueError of the shift
        {"max_words": -1},  # was the kernel's ValueError on every page
        {"intercept": "nan"},  # was a NaN feature on every page
        {
            "weights": WordScores(BITS, 12, np.full(1 << BITS, np.inf, np.float32), 0).to_dict()[
                "weights"
            ]
        },
    ],
)
def test_a_malformed_word_model_is_refused_when_read(change: dict[str, object]) -> None:
    """A word model whose bits or word limit are negative, or whose intercept or weights
    are not finite, is refused as its file is read (ExtractionError), not on each page
    with another exception or a NaN feature."""
    model = WordScores(BITS, 12, np.zeros(1 << BITS, dtype=np.float32), 0.0)
    with pytest.raises(ExtractionError, match="word model"):
        WordScores.from_dict({**model.to_dict(), **change})


@pytest.mark.parametrize("max_words", [0, 1, 3])
def test_word_hashes_are_res_words_hashed_by_zlib_on_both_paths(
    max_words: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module's words and hashes, with the kernel where it is built and without it
    (the pure path), are those :func:`reference_hashes` writes out, on texts of every
    string width and tricky word boundaries; texts of more than ``max_words`` words are
    counted but not hashed."""
    expected = reference_hashes(TRICKY_TEXTS, max_words)
    counts, hashes = word_hashes(TRICKY_TEXTS, max_words)
    assert (counts.tolist(), hashes.tolist()) == expected
    monkeypatch.setattr(words_module, "active_kernel", lambda: None)
    counts, hashes = word_hashes(TRICKY_TEXTS, max_words)
    assert (counts.tolist(), hashes.tolist()) == expected
    # Combining marks split words: "i" "stanbul" "i" "i" "e" "t\u00e9" (U+0130 lowers to "i"
    # and a combining dot).
    assert reference_hashes(["\u0130stanbul \u0130 I\u0307 e\u0301t\u00e9"], 0)[0] == [6]


#: Any code point, lone surrogates included (``st.text()`` alone never draws them), and
#: often one of the characters where words split or join.
ANY_CHARACTER = st.one_of(
    st.characters(exclude_categories=()), st.sampled_from("\ud800\udfff\x00_ \u0130\u0301")
)


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(ANY_CHARACTER), max_size=6), max_words=st.integers(0, 4))
def test_the_kernels_word_hashes_are_those_of_re_and_zlib(texts: list[str], max_words: int) -> None:
    """On any texts (any code points, lone surrogates and NULs included), the kernel's
    words and hashes, and the pure path's, are ``re``'s and zlib's."""
    expected = reference_hashes(texts, max_words)
    assert kernel_hashes(texts, max_words) == expected
    with mock.patch.object(words_module, "active_kernel", lambda: None):
        counts, hashes = word_hashes(texts, max_words)
    assert (counts.tolist(), hashes.tolist()) == expected


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(st.sampled_from("ab AB_1\u00e9\u0130\u4e2d-")), max_size=8),
    max_words=st.integers(0, 3),
)
def test_hashed_words_are_each_texts_sorted_distinct_buckets(
    texts: list[str], max_words: int
) -> None:
    """Per text, its buckets in order and without repeats (:func:`numpy.unique`'s of its
    words' buckets, as the module description defines them; none over ``max_words``
    words), on texts sharing words and buckets (``BITS`` is small), with the kernel where
    it is built and without it."""
    for kernel in (KERNEL, None) if KERNEL is not None else (None,):
        with mock.patch.object(words_module, "active_kernel", lambda kernel=kernel: kernel):
            hashed = hashed_words(texts, BITS, max_words)
        for i, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            kept = not max_words or len(words) <= max_words
            expected = sorted({bucket(word) for word in words}) if kept else []
            assert hashed.buckets[hashed.starts[i] : hashed.starts[i + 1]].tolist() == expected
            assert hashed.words[i] == (min(len(words), max_words + 1) if max_words else len(words))
        assert hashed.starts[0] == 0 and hashed.starts[-1] == len(hashed.buckets)


@needs_kernel
@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(st.text(ANY_CHARACTER), max_size=6),
    words=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "x_1"]), max_size=60),
    bits=st.sampled_from([0, 1, 3, 8, 18, 32, 40]),
    max_words=st.integers(0, 30),
)
def test_the_kernels_hashed_words_are_the_pure_paths(
    texts: list[str], words: list[str], bits: int, max_words: int
) -> None:
    """The kernel's distinct buckets are numpy's sort of the page's keys, on any texts
    and on a text of many words, repeated (a short text's buckets are sorted by insertion,
    a long one's by ``qsort``), for every width of bucket (0 bits: one bucket; 32 and more:
    the whole CRC-32)."""
    texts = [*texts, " ".join(words), "-".join(words[:17])]
    found = hashed_words(texts, bits, max_words)
    with mock.patch.object(words_module, "active_kernel", lambda: None):
        expected = hashed_words(texts, bits, max_words)
    for field in ("starts", "buckets", "words"):
        assert getattr(found, field).tolist() == getattr(expected, field).tolist(), field


#: Characters of runs of text: white space of every kind, capitals (ASCII, Latin-1, Greek
#: with the capital sigma, U+0130), combining marks, word characters of every width.
RUN_CHARACTERS = " \t\n\xa0\u3000Ab_1\xc9\xe9\u0130I\u0307\u03a3\u03c3\u0391\u4e2d\U0001d400-."


@needs_kernel
@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(st.text(st.sampled_from(RUN_CHARACTERS), max_size=8), min_size=1, max_size=8),
    data=st.data(),
    bits=st.sampled_from([0, 3, 8, 32]),
    max_words=st.integers(0, 4),
)
def test_the_kernels_words_of_runs_are_those_of_the_joined_texts(
    runs: list[str], data: st.DataObject, bits: int, max_words: int
) -> None:
    """``span_hashed_words`` reads the words of spans of runs of text as the pure path
    reads the spans' texts (joined, white space collapsed, ``str.lower``): a word going on
    from one run into the next, capitals lower-cased a character at a time, and the two
    characters ``str.lower`` maps otherwise (U+0130 into two, the capital sigma by the
    letters around it) read from the lower-cased text."""
    pieces = data.draw(st.lists(st.integers(0, len(runs) - 1), max_size=10))
    ends = st.integers(0, len(pieces))
    spans = data.draw(st.lists(st.tuples(ends, ends).map(sorted), max_size=6))
    texts = [collapse_white_space("".join(runs[p] for p in pieces[a:b])) for a, b in spans]
    starts, stops = (np.array([span[i] for span in spans], np.int64) for i in (0, 1))
    found = KERNEL.span_hashed_words(  # type: ignore[union-attr]
        runs, np.array(pieces, np.int32), starts, stops, bits, max_words
    )
    with mock.patch.object(words_module, "active_kernel", lambda: None):
        expected = hashed_words(texts, bits, max_words)
    for part, field in zip(found, ("starts", "buckets", "words"), strict=True):
        assert np.frombuffer(part, np.int64).tolist() == getattr(expected, field).tolist()


@needs_kernel
def test_the_kernels_words_of_runs_read_a_final_sigma_and_a_dotted_capital_i_as_str_lower() -> None:
    """Spans whose lower case ``str.lower`` does not give a character at a time: the
    final sigma ("\u039f\u0394\u039f\u03a3" ends in "\u03c2", a sigma inside a word is
    "\u03c3"), U+0130 ("i" and a combining dot: two words around it), a word going on
    from one run into the next, white space of several kinds between runs."""
    runs = ["\u039f\u0394\u039f\u03a3", " \u03a3\u039f", "\u0130stanbul", "Fre", "edom\u3000\n"]
    pieces = np.array([0, 1, 2, 3, 4, 0, 3, 4], np.int32)
    starts, stops = np.array([0, 1, 2, 3, 5], np.int64), np.array([2, 2, 3, 5, 8], np.int64)
    texts = ["\u039f\u0394\u039f\u03a3 \u03a3\u039f", "\u03a3\u039f", "\u0130stanbul", "Freedom"]
    texts.append("\u039f\u0394\u039f\u03a3Freedom")
    found = KERNEL.span_hashed_words(runs, pieces, starts, stops, 32, 0)  # type: ignore[union-attr]
    words = [re.findall(r"\w+", text.lower()) for text in texts]
    assert [len(w) for w in words] == [2, 1, 2, 1, 1]
    assert np.frombuffer(found[2], np.int64).tolist() == [len(w) for w in words]
    assert np.frombuffer(found[1], np.int64).tolist() == [
        bucket for w in words for bucket in sorted({zlib.crc32(word.encode()) for word in w})
    ]


@needs_kernel
def test_the_kernels_words_of_runs_refuse_what_they_would_read_out_of_bounds() -> None:
    spans = np.zeros(1, np.int64), np.ones(1, np.int64)
    with pytest.raises(IndexError, match="piece 2 is not one of the 2 runs of text"):
        KERNEL.span_hashed_words(["a", "b"], np.array([2], np.int32), *spans, 8, 0)  # type: ignore[union-attr]
    with pytest.raises(IndexError, match=r"span \[0, 1\) is not within 0 pieces"):
        KERNEL.span_hashed_words(["a"], np.zeros(0, np.int32), *spans, 8, 0)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="one stop per start"):
        KERNEL.span_hashed_words(["a"], np.zeros(1, np.int32), spans[0], spans[1][:0], 8, 0)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="bits must be 0 or more"):
        KERNEL.span_hashed_words(["a"], np.zeros(1, np.int32), *spans, -1, 0)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="max_words must be 0 or more"):
        KERNEL.span_hashed_words(["a"], np.zeros(1, np.int32), *spans, 8, -1)  # type: ignore[union-attr]


@needs_kernel
def test_the_kernel_refuses_a_negative_word_limit() -> None:
    with pytest.raises(ValueError, match="max_words must be 0 or more, not -1"):
        KERNEL.word_hashes(["text"], -1)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="max_words must be 0 or more, not -1"):
        KERNEL.hashed_words(["text"], 8, -1)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="bits must be 0 or more, not -1"):
        KERNEL.hashed_words(["text"], -1, 0)  # type: ignore[union-attr]


@needs_kernel
@pytest.mark.benchmark_data
@pytest.mark.skipif(_data.benchmarks_dir() is None, reason="needs ../shared/benchmarks")
def test_the_kernels_word_hashes_are_those_of_re_and_zlib_on_development_pages() -> None:
    """On the block texts of the protocol's pool (the texts the word model reads), the
    kernel's words and hashes are ``re``'s and zlib's, and its buckets read from the
    blocks' runs (``span_hashed_words``) those of the texts: every tenth page by default,
    all of them with ``TAGRATIO_ALL_PAGES=1`` (CI's kernel run)."""
    from benchmarks import protocol

    step = 1 if os.environ.get("TAGRATIO_ALL_PAGES") == "1" else 10
    for page in protocol.pool()[::step]:
        document = Document(decode_html(page.html()))
        blocks = block_features(document, None)[0]
        texts = document.block_texts(blocks)
        assert kernel_hashes(texts, 12) == reference_hashes(texts, 12), page.key
        # The words read from the blocks' runs of text are those of their texts.
        found = KERNEL.span_hashed_words(*document.block_runs(blocks), 18, 12)  # type: ignore[union-attr]
        expected = hashed_words(texts, 18, 12)
        for part, field in zip(found, ("starts", "buckets", "words"), strict=True):
            assert np.frombuffer(part, np.int64).tolist() == getattr(expected, field).tolist()


def test_hashed_words_leaves_texts_over_the_limit_without_buckets() -> None:
    hashed = hashed_words(["one two three four", "Subscribe now", "x"], BITS, max_words=2)
    assert hashed.words.tolist() == [3, 2, 1]  # counted up to max_words + 1
    assert np.diff(hashed.starts).tolist() == [0, 2, 1]
    assert sorted(hashed.buckets[hashed.starts[1] : hashed.starts[2]].tolist()) == sorted(
        {bucket("subscribe"), bucket("now")}
    )


def test_block_scores_built_in_chunks_are_the_scores_of_all_block_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page's blocks scored a few at a time (their texts never all held) score as their
    texts do at once, on both paths; the chunks are the block texts, in order, at most
    the size asked for."""
    html = (
        "<html><body>"
        + "".join(f"<p>Line {n} of the page, <b>short</b></p><li>item {n}</li>" for n in range(40))
        + "</body></html>"
    )
    document = Document.from_input(html)
    blocks = block_features(document, None)[0]
    weights = np.linspace(-2, 2, 1 << BITS).astype(np.float32)
    model = WordScores(BITS, 4, weights, 0.1)
    for kernel in (True, False):
        if not kernel:
            monkeypatch.setattr(words_module, "active_kernel", lambda: None)
            monkeypatch.setattr("scrapy_tagratio.document.active_kernel", lambda: None)
        chunks = list(document.block_text_chunks(blocks, 7))
        assert [len(chunk) for chunk in chunks] == [7] * 11 + [3]
        assert [text for chunk in chunks for text in chunk] == document.block_texts(blocks)
        assert "Line 3 of the page, short" in chunks[0]
        monkeypatch.setattr(words_module, "BLOCKS_AT_ONCE", 7)
        chunked = model.block_scores(document, blocks)
        assert np.array_equal(chunked, model.scores(document.block_texts(blocks)))
        assert (chunked != 0).any() and (chunked == 0).any()  # short and long blocks


def test_the_pure_paths_word_score_of_a_huge_block_holds_no_list_of_its_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the kernel, the word score of a page of one block of a million words holds
    no more than a few copies of the page: its block text is collapsed without the list of
    a string per word that ``str.split`` builds (ten times the text's memory), and its
    words are counted no further than the limit."""
    page = "<html><body><p>" + "Alpha beta\n  gamma delta " * 250_000 + "</p></body></html>"
    document = Document.from_input(page)
    monkeypatch.setattr(document_module, "active_kernel", lambda: None)
    monkeypatch.setattr(words_module, "active_kernel", lambda: None)
    model = WordScores(BITS, 12, np.zeros(1 << BITS, dtype=np.float32), 0.5)
    block_features(document, None)  # the page's tables, built once
    tracemalloc.start()
    try:
        features = block_features(document, model)[1]
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        block_features(document, None)
        peak_without_words = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert features.shape[0] == 1 and features[0, -1] == 0.0  # over max_words: neutral
    assert peak - peak_without_words < 3 * len(page)
    text = document.block_texts(block_features(document, None)[0])[0]
    assert text == " ".join(("Alpha beta\n  gamma delta " * 250_000).split())


def test_a_long_texts_white_space_is_collapsed_as_str_split_does() -> None:
    """:func:`collapse_white_space` of a text too long for ``str.split`` (the pattern's
    path) is ``" ".join(text.split())``: every white space character of ``str`` (29, the
    file and group separators among them) collapsed, the ends stripped; zero-width and
    no-break characters that are not ``str`` white space kept."""
    spaces = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
    assert len(spaces) == 29
    kept = "\u200b\u2060\ufeff\u00ad"
    unit = f"{spaces}word{kept}\u00e9\U0001f600 x\x1c\x1fy "
    text = unit * (SPLIT_MAX_CHARS // len(unit) + 2)
    assert len(text) > SPLIT_MAX_CHARS
    assert collapse_white_space(text) == " ".join(text.split())
    assert collapse_white_space(" a \n b ") == "a b"


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from("ab \n\t\u00a0\u3000\x1c")))
def test_white_space_collapsed_chunk_by_chunk_is_str_splits(text: str) -> None:
    """Split a few characters at a time (chunk ends inside words and inside runs of white
    space), the collapsed text is ``" ".join(text.split())``."""
    with mock.patch.object(document_module, "SPLIT_MAX_CHARS", 3):
        assert collapse_white_space(text) == " ".join(text.split())
