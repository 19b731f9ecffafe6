"""Properties of :func:`scrapy_tagratio.extract` on random and mutated HTML, every algorithm.

For any input, generated as a random tree of tags, text and attributes or as byte-level
mutations of a real-looking article page and (when the benchmark data is here) of a real
small page of the development set:

1. ``extract`` returns an Extraction or raises ExtractionError, nothing else;
2. the main text is an order-preserving selection of the page's text: the words of
   ``Extraction.text`` form a subsequence of the words of the page's text. The page's text is
   what the method sees: for DOM methods (the labelling has a node mask) the visible text,
   ``Document.full_text``; for source-based methods (CETR, CCB family) the cleaned source with
   its tags stripped, ``strip_tags([document.source.text])``, since they read hidden elements'
   text too. Words are white-space separated, so a method that glues two words or cuts one
   in two violates the property;
3. the same input gives the same output (text, HTML, scores).

An algorithm whose run raises NotImplementedError is skipped with that reason.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from functools import cache
from html import escape

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from benchmarks import _data
from scrapy_tagratio import ALGORITHMS, ExtractionError, extract
from scrapy_tagratio.algorithms import get_algorithm
from scrapy_tagratio.document import Document, strip_tags
from tests.badinput import article_page

ALGORITHM_NAMES = sorted(ALGORITHMS)
# Shrinking a failure can take minutes per algorithm: it is on only with TAGRATIO_SHRINK=1,
# so that a failing algorithm does not blow the module's time (the failing input is printed,
# and the example database replays it first on the next run).
PROPERTY_SETTINGS = settings(
    max_examples=30,
    derandomize=True,  # the same examples on every run: CI must not be a lottery
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate]
    + ([Phase.shrink] if os.environ.get("TAGRATIO_SHRINK") == "1" else []),
)

# ----------------------------------------------------------------------- random trees
_TAGS = (
    "div", "p", "span", "a", "b", "i", "em", "strong", "ul", "ol", "li", "table", "tr",
    "td", "h1", "h2", "h3", "article", "section", "nav", "header", "footer", "aside",
    "main", "blockquote", "pre", "form", "button", "label", "select", "option", "br", "img",
    "hr", "script", "style", "noscript", "font", "center",
)  # fmt: skip
_VOID = frozenset({"br", "img", "hr"})
_RAW_TEXT = frozenset({"script", "style"})
_ATTRIBUTES = st.sampled_from(
    [
        ' class="content"', ' class="nav menu"', ' id="main"', ' href="/page"',
        ' style="display:none"', " hidden", ' aria-hidden="true"', ' onclick="go()"',
        ' lang="de"', ' title="a &amp; b"',
    ]
)  # fmt: skip
_VOCABULARY = (
    "the", "harbour", "quay", "opens", "Łódź", "Москва", "東京", "北京", "Read", "more",
    "...", "&", "<", ">", "\u00a0", "1", "2024", "don't", "e-mail",
)  # fmt: skip
_WORD = st.one_of(
    st.sampled_from(_VOCABULARY),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=8),
)
_TEXT = st.lists(_WORD, min_size=1, max_size=15).map(lambda words: escape(" ".join(words)))


def _element(tag: str, attributes: list[str], children: list[str]) -> str:
    if tag in _VOID:
        return f"<{tag}{''.join(attributes)}>"
    inner = "var shown = 1 < 2;" if tag in _RAW_TEXT else "".join(children)
    return f"<{tag}{''.join(attributes)}>{inner}</{tag}>"


_TREE = st.recursive(
    _TEXT,
    lambda children: st.builds(
        _element,
        st.sampled_from(_TAGS),
        st.lists(_ATTRIBUTES, max_size=2, unique=True),
        st.lists(children, max_size=5),
    ),
    max_leaves=40,
)
RANDOM_PAGES = st.builds(
    lambda body, separator: (
        f"<html><head><title>Random</title></head><body>{separator.join(body)}</body></html>"
    ),
    st.lists(_TREE, min_size=1, max_size=4),
    st.sampled_from(["", "\n"]),
)

# ----------------------------------------------------------------------- mutated bytes
#: A real small page of the development set (6 kB, a German engineering firm's service page),
#: used when ../shared/benchmarks is on this machine, beside the generated article page.
REAL_PAGE_ID = "rs-ingenieure.de.tragwerksplanung"


def _base_pages() -> list[bytes]:
    bases = [article_page().encode("utf-8")]
    with suppress(FileNotFoundError, KeyError):  # no benchmark data: the generated page only
        bases.append(_data.load_page("trafilatura", REAL_PAGE_ID).html)
    return bases


_FRAGMENTS = (
    b"<", b">", b"</", b"</div>", b"<div>", b"<p>", b"<!--", b"-->", b"<script>", b"&#",
    b"&amp", b'"', b"\x00", b"\xff\xfe", b"\xe2\x82", b"<a href=", b"<![CDATA[", b"\n",
)  # fmt: skip
_MUTATION = st.tuples(
    st.sampled_from(["delete", "insert", "fragment", "duplicate", "truncate"]),
    st.floats(0.0, 1.0),
    st.integers(1, 300),
    st.binary(min_size=1, max_size=8),
    st.sampled_from(_FRAGMENTS),
)


def _mutate(data: bytes, mutations: Sequence[tuple[str, float, int, bytes, bytes]]) -> bytes:
    for kind, where, length, payload, fragment in mutations:
        at = int(where * len(data))
        if kind == "delete":
            data = data[:at] + data[at + length :]
        elif kind == "insert":
            data = data[:at] + payload + data[at:]
        elif kind == "fragment":
            data = data[:at] + fragment + data[at:]
        elif kind == "duplicate":
            data = data[:at] + data[at : at + length] + data[at:]
        else:
            data = data[:at]
    return data


MUTATED_PAGES = st.builds(
    _mutate, st.sampled_from(_base_pages()), st.lists(_MUTATION, min_size=1, max_size=6)
)


# ----------------------------------------------------------------------- the properties
@cache
def is_source_based(algorithm: str) -> bool:
    """True when the algorithm labels source text rather than DOM nodes (no node mask)."""
    labelling = get_algorithm(algorithm)().run(Document.from_input(article_page()))
    return labelling.content_nodes is None


def page_words(algorithm: str, html: str | bytes) -> list[str]:
    """Words of the page's text as ``algorithm`` sees the page (see the module docstring)."""
    document = Document.from_input(html)
    if is_source_based(algorithm):
        return strip_tags([document.source.text]).split()
    return document.full_text.split()


def first_out_of_order_word(words: Sequence[str], reference: Sequence[str]) -> int | None:
    """Index of the first of ``words`` that breaks the subsequence, None if there is none."""
    position = 0
    for index, word in enumerate(words):
        try:
            position = reference.index(word, position) + 1
        except ValueError:
            return index
    return None


def check_properties(algorithm: str, html: str | bytes) -> None:
    try:
        first = extract(html, algorithm=algorithm)
    except ExtractionError:
        with pytest.raises(ExtractionError):
            extract(html, algorithm=algorithm)
        return
    second = extract(html, algorithm=algorithm)
    assert (first.text, first.html) == (second.text, second.html), "same input, other output"
    if first.block_scores is not None and second.block_scores is not None:
        assert np.array_equal(
            first.block_scores.scores, second.block_scores.scores, equal_nan=True
        ), "same input, other scores"
    else:
        assert first.block_scores is second.block_scores is None
    check_whole_blocks(algorithm, html)
    words = first.text.split()
    reference = page_words(algorithm, html)
    broken = first_out_of_order_word(words, reference)
    assert broken is None, (
        f"word {broken} {words[broken]!r} of the text is not in order in the page's text; "
        f"text words {words[max(0, broken - 3) : broken + 3]!r}"
    )


def check_whole_blocks(algorithm: str, html: str | bytes) -> None:
    """A DOM method keeps or leaves whole layout blocks, and its content characters are
    those of its node mask: the overview detector reads the main content per block and
    takes its size from the labelling (``page_evidence.teaser_evidence``)."""
    if is_source_based(algorithm):
        return
    document = Document.from_input(html)
    labelling = get_algorithm(algorithm)().run(document)
    content, nodes = labelling.content_nodes, document.nodes
    assert content is not None
    assert np.array_equal(content, content[nodes.block]), "a block split by the content mask"
    assert labelling.content_chars == int(nodes.own_chars[content].sum())


@pytest.mark.parametrize("algorithm", ALGORITHM_NAMES)
@PROPERTY_SETTINGS
@given(html=RANDOM_PAGES)
def test_random_html_gives_an_ordered_selection_of_the_page_text(algorithm: str, html: str) -> None:
    check_properties(algorithm, html)


@pytest.mark.parametrize("algorithm", ALGORITHM_NAMES)
@PROPERTY_SETTINGS
@given(html=MUTATED_PAGES)
def test_mutated_page_gives_an_ordered_selection_of_the_page_text(
    algorithm: str, html: bytes
) -> None:
    check_properties(algorithm, html)


def test_subsequence_check_catches_reordered_and_foreign_words() -> None:
    """The helper the properties rest on: order matters, repeats must be available."""
    reference = ["a", "b", "c", "a", "d"]
    assert first_out_of_order_word(["a", "c", "a"], reference) is None
    assert first_out_of_order_word(["c", "b"], reference) == 1
    assert first_out_of_order_word(["a", "a", "a"], reference) == 2
    assert first_out_of_order_word(["x"], reference) == 0
