"""CCB, ACCB and TCCB (Gottron 2008) checked against the paper and by hand."""

from __future__ import annotations

import gzip
import json
import math
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import _data
from scrapy_tagratio import ExtractionError, extract
from scrapy_tagratio.algorithms import ALGORITHMS
from scrapy_tagratio.algorithms.ccb import (
    ACCB,
    CCB,
    TCCB,
    blur_rounds,
    char_vector,
    settled_labels,
    token_vector,
    whole_words,
)
from scrapy_tagratio.document import Document
from scrapy_tagratio.signal import gaussian_smooth


def _source(html: str) -> Any:
    return Document.from_input(html).source


# ---------------------------------------------------------------- the content code vector
def test_char_vector_of_a_hand_written_snippet() -> None:
    html = "<body><p>Hi <b>yo</b></p></body>"
    source = _source(html)
    assert source.text == html
    # <body> <p>: 9 code chars; "Hi ": 3 content; <b>: 3 code; "yo": 2 content;
    # </b> </p>: 8 code; </body>: 7 code.
    expected = [0] * 9 + [1, 1, 1] + [0] * 3 + [1, 1] + [0] * 8 + [0] * 7
    vector = char_vector(source)
    assert vector.values.tolist() == expected
    assert vector.starts.tolist() == list(range(len(html)))


def test_accb_leaves_anchor_tags_out_of_the_vector() -> None:
    html = '<body><p>a <a href="x">b</a></p></body>'
    source = _source(html)
    ccb, accb = char_vector(source), char_vector(source, ignore_anchors=True)
    assert len(ccb) == len(html)
    # ACCB reads the page as "<body><p>a b</p></body>": the anchor's text stays content.
    assert accb.values.tolist() == [0] * 9 + [1, 1, 1] + [0] * 4 + [0] * 7
    kept = "".join(html[i] for i in accb.starts.tolist())
    assert kept == "<body><p>a b</p></body>"


def test_words_span_inline_tags_but_not_block_tags_or_spaces() -> None:
    html = "<body><p>foo<b>bar</b> baz</p><p>qux</p></body>"
    vector = char_vector(_source(html))
    words = [html[s:e] for s, e in zip(vector.word_starts, vector.word_ends, strict=True)]
    assert words == ["foo<b>bar", "baz", "qux"]


def test_tccb_tokenisation_of_a_hand_written_snippet() -> None:
    html = "<body><p>Hello big <b>world</b></p></body>"
    vector = token_vector(_source(html))
    tokens = [html[s:e] for s, e in zip(vector.starts, vector.ends, strict=True)]
    assert tokens == ["<body>", "<p>", "Hello", "big", "<b>", "world", "</b>", "</p>", "</body>"]
    assert vector.values.tolist() == [0, 0, 1, 1, 0, 1, 0, 0, 0]
    assert vector.weight.tolist() == [0, 0, 5, 3, 0, 5, 0, 0, 0]


# ---------------------------------------------------------------- blurring and threshold
A = math.exp(-0.5)  # kernel weights for sigma = 1, radius 1: [A, 1, A] / (1 + 2A)
ONE_ROUND = [1.0, (1 + A) / (1 + 2 * A), A / (1 + 2 * A), A / (1 + 2 * A), 1 / (1 + A)]


def test_one_blur_step_by_hand() -> None:
    # v = [1, 1, 0, 0, 1]; at the edges the average runs over the neighbours that exist:
    # v'0 = (1 + A) / (1 + A) = 1, v'4 = (A*0 + 1) / (A + 1).
    (blurred,) = blur_rounds(np.array([1.0, 1, 0, 0, 1]), sigma=1.0, radius=1, max_rounds=1)
    assert blurred == pytest.approx(ONE_ROUND, abs=1e-6)
    assert ONE_ROUND[1] == pytest.approx(0.72593, abs=1e-5)
    assert ONE_ROUND[4] == pytest.approx(0.62246, abs=1e-5)


def test_second_round_blurs_the_first() -> None:
    w = 1 / (1 + 2 * A)
    v = ONE_ROUND
    by_hand = [
        (v[0] + A * v[1]) / (1 + A),
        w * (A * v[0] + v[1] + A * v[2]),
        w * (A * v[1] + v[2] + A * v[3]),
        w * (A * v[2] + v[3] + A * v[4]),
        (A * v[3] + v[4]) / (1 + A),
    ]
    rounds = list(blur_rounds(np.array([1.0, 1, 0, 0, 1]), sigma=1.0, radius=1, max_rounds=2))
    assert rounds[1] == pytest.approx(by_hand, abs=1e-6)


def _average_of_existing_neighbours(values: np.ndarray, sigma: float, radius: int) -> np.ndarray:
    """One blur round written out as the paper describes it: per entry, the Gaussian-weighted
    average of the entries within ``radius`` that exist."""
    out = np.empty_like(values)
    for i in range(values.size):
        j = np.arange(max(0, i - radius), min(values.size, i + radius + 1))
        w = np.exp(-((j - i) ** 2) / (2 * sigma**2))
        out[i] = (w * values[j]).sum() / w.sum()
    return out


@pytest.mark.parametrize(("n", "radius"), [(1, 40), (50, 40), (300, 40), (1000, 25), (900, 3)])
def test_blur_rounds_average_the_neighbours_that_exist(n: int, radius: int) -> None:
    rng = np.random.default_rng(n)
    values = rng.integers(0, 2, n).astype(float)
    reference = values
    for blurred in blur_rounds(values, sigma=radius / 3, radius=radius, max_rounds=8):
        reference = _average_of_existing_neighbours(reference, radius / 3, radius)
        np.testing.assert_allclose(blurred, reference, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("n", "radius"), [(5000, 40), (30000, 25), (30000, 100)])
def test_fast_blur_equals_repeated_gaussian_smoothing(n: int, radius: int) -> None:
    """Long vectors take the FFT path (convolution powers, edges patched; with the wide
    range it switches to one FFT convolution per round): each round still equals the
    shared Gaussian smoothing (CETR Eq. 1-3, edges renormalised) of the previous one, to
    the single-precision FFT's 1e-6 that the docstring states."""
    rng = np.random.default_rng(7)
    values = np.repeat(rng.integers(0, 2, n // 10), 10).astype(float)
    reference = values
    for blurred in blur_rounds(values, sigma=radius / 3, radius=radius, max_rounds=14):
        reference = gaussian_smooth(reference, radius / 3, radius)
        np.testing.assert_allclose(blurred, reference, rtol=0, atol=1e-6)


def test_threshold_rule_keeps_content_elements_above_t() -> None:
    vector = np.array([1.0, 1, 0, 0, 1])
    kw = {"sigma": 1.0, "radius": 1, "settle": 1.0, "max_rounds": 1}
    for threshold, expected in [
        (0.75, [0]),  # 1.0 > 0.75; 0.726 and 0.622 are not
        (0.7, [0, 1]),
        (0.6, [0, 1, 4]),
        (0.2, [0, 1, 4]),  # code elements (0.274) are never content
    ]:
        values, extracted, rounds = settled_labels(vector, threshold=threshold, **kw)
        assert rounds == 1
        assert values == pytest.approx(ONE_ROUND, abs=1e-6)
        assert np.flatnonzero(extracted).tolist() == expected


def test_words_are_extracted_entirely() -> None:
    html = "<body><p>Hello world</p></body>"
    vector = char_vector(_source(html))
    extracted = np.zeros(len(vector), dtype=bool)
    extracted[[9, 10, 11]] = True  # "Hel"
    assert whole_words(vector, extracted).tolist() == [True, False]


def _runs_page(seed: int = 0, n_runs: int = 300) -> np.ndarray:
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(n_runs):
        parts += [1.0] * int(rng.integers(5, 200)) + [0.0] * int(rng.integers(5, 100))
    return np.array(parts)


def test_convergence_is_bounded() -> None:
    vector = _runs_page()
    kw = {"sigma": 40 / 3, "radius": 40, "threshold": 0.75}
    # The strict reading ("until the set is unchanged") does not settle here within 5 rounds
    # (the set keeps shrinking as the blur widens): max_rounds stops it.
    _, fourth, rounds = settled_labels(vector, settle=0.0, max_rounds=4, **kw)
    assert rounds == 4
    _, fifth, strict = settled_labels(vector, settle=0.0, max_rounds=5, **kw)
    assert strict == 5
    assert (fourth != fifth).any()  # still changing when the bound stopped it
    *_, default = settled_labels(vector, settle=0.01, max_rounds=50, **kw)
    assert 1 <= default < 50
    *_, eager = settled_labels(vector, settle=1.0, max_rounds=50, **kw)
    assert eager == 1


def test_rounds_check_the_deadline() -> None:
    page = "<body>" + "<p>Some words of text here.</p><i></i>" * 20000 + "</body>"
    with pytest.raises(ExtractionError, match="time budget"):
        extract(page, algorithm="ccb", time_budget=0.0)
    document = Document.from_input(page, deadline=time.monotonic() - 1.0)
    vector = char_vector(Document.from_input(page).source)
    with pytest.raises(ExtractionError, match="CCB blurring"):
        settled_labels(
            vector.values,
            sigma=40 / 3,
            radius=40,
            threshold=0.75,
            settle=0.01,
            max_rounds=50,
            document=document,
        )


# ---------------------------------------------------------------- whole algorithm
ARTICLE = " ".join(
    ["Content code blurring finds long homogeneously formatted regions of text."] * 12
)
NAV = "".join(f'<li class="menu-item"><a href="/section/{i}/">Menu {i}</a></li>' for i in range(15))


def _page(body: str) -> str:
    return (
        f"<html><head><title>T</title></head><body><ul>{NAV}</ul>{body}<ul>{NAV}</ul></body></html>"
    )


@pytest.mark.parametrize("name", ["ccb", "accb", "tccb"])
def test_article_kept_navigation_left_out(name: str) -> None:
    result = extract(_page(f"<p>{ARTICLE}</p>"), algorithm=name)
    assert "Content code blurring finds long" in result.text
    assert "Menu" not in result.text
    assert result.threshold == 0.75
    assert result.algorithm == name


def test_anchor_heavy_paragraph_scores_higher_under_accb() -> None:
    linked = " ".join(
        f'word{i} <a href="https://example.org/articles/2024/a-long-path/{i}.html">link text</a>'
        for i in range(40)
    )
    html = _page(f"<p>{linked}</p>")
    source = _source(html)
    start, end = source.text.index("word0"), source.text.index("word39")
    means = {}
    for ignore_anchors in (False, True):
        vector = char_vector(source, ignore_anchors=ignore_anchors)
        values, _, _ = settled_labels(
            vector.values, sigma=40 / 3, radius=40, threshold=0.75, settle=0.01, max_rounds=50
        )
        inside = (vector.starts >= start) & (vector.starts < end) & (vector.values == 1)
        means[ignore_anchors] = float(values[inside].mean())
    assert means[True] > 0.75 > means[False]
    assert "word20 link text word21" in extract(html, algorithm="accb").text
    assert "word20" not in extract(html, algorithm="ccb").text


def test_inline_tags_do_not_split_words_and_blocks_break_lines() -> None:
    body = f"<p>{ARTICLE} con<b>tent</b> code. {ARTICLE}</p><p>{ARTICLE}</p>"
    text = extract(_page(body), algorithm="ccb").text
    assert "content code." in text
    assert len(text.splitlines()) == 2


@pytest.mark.parametrize(
    ("name", "kind"), [("ccb", "char-run"), ("accb", "char-run"), ("tccb", "token")]
)
def test_block_scores_and_character_figures(name: str, kind: str) -> None:
    body = f"<p>{ARTICLE} see <a>linked</a> {ARTICLE}</p>"
    result = extract(_page(body), algorithm=name)
    scores = result.block_scores
    assert scores is not None and scores.kind == kind
    labels = scores.labels
    assert labels.any() and not labels.all()
    assert (labels[1:] != labels[:-1]).all()  # maximal runs alternate
    assert ((scores.scores >= 0) & (scores.scores <= 1)).all()
    # Content blocks hold the extracted text: non-space characters, none lost or added.
    content_chars = int(scores.text_lengths[labels].sum())
    assert content_chars == len(re.sub(r"\s", "", result.text))
    total = int(scores.text_lengths.sum())
    assert result.content_share == pytest.approx(content_chars / total)
    assert "linked" in result.text
    assert result.link_density == pytest.approx(len("linked") / content_chars)


def test_variants_change_only_defaults() -> None:
    assert ALGORITHMS["ccb"] is CCB and ALGORITHMS["accb"] is ACCB and ALGORITHMS["tccb"] is TCCB
    assert (CCB().unit, CCB().ignore_anchors, CCB().blur_range) == ("char", False, 40)
    assert (ACCB().unit, ACCB().ignore_anchors, ACCB().blur_range) == ("char", True, 40)
    assert (TCCB().unit, TCCB().blur_range) == ("token", 25)
    assert CCB().threshold == ACCB().threshold == TCCB().threshold == 0.75
    page = _page(f"<p>{ARTICLE}</p>")
    assert (
        extract(page, algorithm="ccb", ignore_anchors=True).text
        == extract(page, algorithm="accb").text
    )


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("blur_range", 0),
        ("blur_range", 2.5),
        ("blur_range", "40"),
        ("threshold", 0.0),
        ("threshold", 1.5),
        ("threshold", float("nan")),
        ("settle", -0.01),
        ("settle", 2),
        ("max_rounds", 0),
        ("max_rounds", 10**6),
        ("max_rounds", True),
        ("unit", "word"),
        ("ignore_anchors", "yes"),
    ],
)
def test_bad_parameters_are_named(param: str, value: Any) -> None:
    with pytest.raises(ExtractionError, match=param):
        extract("<p>x</p>", algorithm="ccb", **{param: value})


@pytest.mark.parametrize("html", ["", "plain text, no tags", "<p></p>", "<b>a</b>" * 3, "<" * 50])
@pytest.mark.parametrize("name", ["ccb", "accb", "tccb"])
def test_degenerate_pages_give_a_result(html: str, name: str) -> None:
    result = extract(html, algorithm=name)
    assert isinstance(result.text, str)
    assert 0.0 <= result.content_share <= 1.0


def test_untagged_text_is_content() -> None:
    # A neighbourhood of 1s averages to 1, at the edges too (section III-B).
    assert extract("plain text, no tags", algorithm="ccb").text == "plain text, no tags"


def test_two_megabyte_page_stays_fast() -> None:
    para = "<p>" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 8 + "</p>"
    block = f'<div class="box"><ul>{NAV}</ul>{para * 3}</div>'
    page = "<html><body>" + block * (2_000_000 // len(block)) + "</body></html>"
    started = time.process_time()
    result = extract(page, algorithm="ccb")
    assert time.process_time() - started < 10.0
    assert "Lorem ipsum dolor" in result.text and "Menu 3" not in result.text


# ---------------------------------------------------------------- real pages
EVAL = (_data.benchmarks_dir() or Path("../shared/benchmarks")) / "trafilatura-eval"
#: Pages checked by hand (2026-11): every variant keeps each gold "with" snippet (article
#: text) and none of the "without" ones (menus, related links, teasers), all present in the
#: page's full text.
REAL_PAGES = [
    (page, name)
    for page in (
        "24horas.cl-segundo",
        "aclu.org-grades",
        "abc7news.com-Napa",
        "bund-naturschutz.de-habeck",
    )
    for name in ("ccb", "accb", "tccb")
]


@pytest.mark.benchmark_data
@pytest.mark.parametrize(("page", "name"), REAL_PAGES)
def test_real_pages_main_text_found_navigation_left_out(page: str, name: str) -> None:
    if not (EVAL / "gold.json").is_file():
        pytest.skip(f"benchmark data not found at {EVAL} (set TAGRATIO_BENCHMARKS)")
    gold = json.loads((EVAL / "gold.json").read_text("utf-8"))[page]
    raw = gzip.decompress((EVAL / "pages" / f"{page}.html.gz").read_bytes())
    text = " ".join(extract(raw, algorithm=name, url=gold["url"]).text.split())
    for snippet in gold["with"]:
        assert " ".join(snippet.split()) in text
    for snippet in gold["without"]:
        assert " ".join(snippet.split()) not in text


def test_tccb_counts_each_character_of_unspaced_scripts_as_a_word() -> None:
    """Chinese and Japanese have no spaces between words: without this, a whole paragraph
    is one token and can never outweigh the tags around it."""
    source = Document.from_input("<body><p>中文字<b>ab c</b>日本</p></body>").source
    vector = token_vector(source)
    tokens = [
        source.text[s:e]
        for s, e, v in zip(vector.starts, vector.ends, vector.values, strict=True)
        if v
    ]
    assert tokens == ["中", "文", "字", "ab", "c", "日", "本"]
    # whole-word output takes the word as rendered: "中文字ab" runs across the inline tag
    words = [source.text[s:e] for s, e in zip(vector.word_starts, vector.word_ends, strict=True)]
    assert words == ["中文字<b>ab", "c</b>日本"]
