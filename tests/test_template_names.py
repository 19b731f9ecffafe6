"""The vocabulary of web templates: what an element's class, id, role and itemprop words name."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scrapy_tagratio.algorithms.template_names import hint_flags
from scrapy_tagratio.document import Document
from scrapy_tagratio.reader import kernel_status


def test_hints_read_class_words_as_components() -> None:
    doc = Document.from_input(
        "<body><div class='menu-item'>a</div><div class='update-info'>b</div>"
        "<div class='sd_sharing'>c</div><div class='address'>d</div><div id='ad'>e</div></body>"
    )
    flags = hint_flags(doc.nodes)
    flagged = [doc.nodes.hint[i].strip() for i in range(len(flags)) if flags[i]]
    assert flagged == ["menu-item", "sd_sharing", "ad"]


def test_state_classes_and_builder_wrappers_name_no_region() -> None:
    """A class that holds a boilerplate word as the state of its element (``has-ads``,
    ``no-comments``, ``with-sidebar``: the element holds or lacks such a region) or as a
    page builder's wrapper of every element (Elementor's ``elementor-widget-container``)
    names no boilerplate region; the other words of the same hint still do
    (``elementor-widget-nav-menu`` is a menu, ``widget no-padding`` a widget)."""
    doc = Document.from_input(
        "<body><section class='o-section o-section--has-ads'>a</section>"
        "<div class='post has-sidebar no-comments with-sidebar'>b</div>"
        "<div class='elementor-widget-container'>c</div>"
        "<div class='elementor-element elementor-widget-text-editor'>d</div>"
        "<div class='elementor-widget elementor-widget-nav-menu'>e</div>"
        "<div class='widget no-padding'>f</div><div class='post-ads'>g</div></body>"
    )
    flags = hint_flags(doc.nodes)
    flagged = [doc.nodes.hint[i].strip() for i in range(len(flags)) if flags[i]]
    assert flagged == [
        "elementor-widget elementor-widget-nav-menu",
        "widget no-padding",
        "post-ads",
    ]


def test_hints_are_read_only_where_asked() -> None:
    """``where`` limits the reading to the marked nodes (block_features reads only the
    text blocks and their ancestors); the marked nodes' flags are the full reading's."""
    doc = Document.from_input(
        "<body><div class='sidebar'><p>x <span class='share'>y</span></p></div>"
        "<nav class='menu'></nav><div class='content'><p>z</p></div></body>"
    )
    nodes = doc.nodes
    full = hint_flags(nodes)
    assert full.sum() == 3  # sidebar, share, menu
    where = nodes.with_ancestors(nodes.block_chars > 0)
    assert not where.all()  # the span and the empty nav are no text block's ancestors
    assert np.array_equal(hint_flags(nodes, where=where), full & where)
    assert not hint_flags(nodes, where=np.zeros(len(nodes), dtype=bool)).any()


#: Pieces of random hints for every test of :func:`hint_flags`: letters and words of their
#: vocabularies and of the body's names, prefixes and extensions of them, the words of
#: classes that name no region, separators, a digit, accents, a combining mark, another
#: script and a superscript digit.
_HINT_PIECES = st.sampled_from(
    [
        *"adscomentbyrlupfixq", "ad", "ads", "nav", "comment", "comments", "list", "thread",
        "disqus", "repl", "reply", "replies", "references", "reflist", "footnotes",
        "endnotes", "bibliography", "art", "article", "post", "entry", "text", "page",
        "story", "body", "content", "container", "inner", "has", "no", "with", "without",
        "elementor", "widget", "articlebody",
        " ", "-", "_", "--", "  ", "2",
        ":", ".", "é", "ß", "İ", "\u0300", "日", "\u00b2",
    ]
)  # fmt: skip


#: The classes that name no region as the expression reads (``_NOT_REGIONS`` is written
#: with the first letters before the tests of what precedes them, for speed).
_NOT_REGIONS_AS_READ = re.compile(
    r"(?:\b|(?<=_))(?:has|no|with|without)[-_]\S*|\belementor[-_]widget"
)


@given(st.lists(_HINT_PIECES, max_size=12).map("".join))
@settings(max_examples=400)
@example("o-section--has-ads no_x _no ano-x hasno-y without-z")
@example("xelementor-widget elementor_widget é-elementor-widget")
def test_the_classes_naming_no_region_are_those_the_expression_reads(hint: str) -> None:
    """``_NOT_REGIONS`` finds and replaces the spans that its readable form does."""
    from scrapy_tagratio.algorithms.template_names import _NOT_REGIONS

    assert _NOT_REGIONS.subn(" ", hint) == _NOT_REGIONS_AS_READ.subn(" ", hint)


@given(st.lists(_HINT_PIECES, max_size=12).map("".join))
@settings(max_examples=400)
# A boilerplate word with the article body's names (each of the kernel's doubts) and with
# the classes that name no region.
@example("nav article-body")
@example("sidebar articlebody")
@example("share post_content")
@example("menu entry-content")
@example("o-section--has-ads")
@example("no_comments")
@example("post with-sidebar")
@example("without-ads")
@example("elementor-widget-nav-menu")
@example("elementor-widget-container")
def test_the_hint_tests_name_what_their_regular_expressions_name(hint: str) -> None:
    """Each test of :func:`hint_flags` names a hint as its regular expression does, on
    both paths: with the kernel, only the hints holding its words (``starts_words``) are
    read further, so every hint it names must hold them (a thread's container), or the
    words must be the test itself (the boilerplate words, less the article body's names
    that overrule, the comments' and the notes' words); and the body's name is the one
    BODY_HINT finds (the kernel's ``word_pairs`` finds it alone). Words at a
    word's start or inside one, "ad" and "ads" whole or not, separators, digits, accents,
    combining marks and other scripts (``re``'s word characters)."""
    import scrapy_tagratio.algorithms.template_names as module
    from scrapy_tagratio import reader

    words = hint.replace("-", " ").replace("_", " ")
    regions = _NOT_REGIONS_AS_READ.sub(" ", hint).replace("-", " ").replace("_", " ")
    expected = {
        module.BOILERPLATE_NAMES: module.BOILERPLATE_HINT.search(regions) is not None
        and module.CONTENT_HINT.search(words) is None,
        module.COMMENT_NAMES: module.COMMENT_HINT.search(words) is not None,
        module.NOTES_NAMES: module.NOTES_HINT.search(words) is not None,
        module.THREAD_NAMES: module.THREAD_HINT.search(words) is not None,
    }
    found = module.BODY_HINT.search(words)
    body = -1 if found is None else module.BODY_NAME_LIST.index("".join(found.group().split()))
    for path in ("kernel", "target") if reader.kernel_status()[0] else ("target",):
        saved, reader.DEFAULT_READER = reader.DEFAULT_READER, path
        try:
            for test, answer in expected.items():
                assert test.named([hint], np.array([0])).tolist() == [answer], (path, test)
            assert module._body_numbers([hint], np.array([0])).tolist() == [body], path
        finally:
            reader.DEFAULT_READER = saved


def test_the_word_test_reads_the_vocabulary_of_the_regular_expression() -> None:
    """The kernel's words are the regular expression's: its words as prefixes, and the
    two words of its one pattern (``ads?\\b``) whole."""
    import scrapy_tagratio.algorithms.template_names as module

    prefixes = {w for group in module._BOILERPLATE_PREFIXES for w in group}
    assert prefixes | {r"ads?\b"} == set(module.BOILERPLATE_WORDS)
    assert {w for group in module._BOILERPLATE_WHOLE for w in group} == {"ad", "ads"}


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_word_test_reads_the_texts_asked_for() -> None:
    """``starts_words`` answers for each text it is given the index of, and refuses an
    index outside the list and a vocabulary of the wrong shape."""
    import scrapy_tagratio.algorithms.template_names as module
    from scrapy_tagratio import _kernel

    test = module.COMMENT_NAMES
    texts = ["comment-list", "site-nav", "reply", "replyto", "", "x disqus_thread"]
    read = np.array([5, 0, 1, 2, 3, 4, 0], dtype=np.int64)
    found = _kernel.starts_words(texts, read, test.prefixes, test.whole)
    assert list(bytes(found)) == [1, 1, 0, 1, 0, 0, 1]
    for wrong in (-1, len(texts)):
        outside = np.array([wrong], dtype=np.int64)
        with pytest.raises(IndexError):
            _kernel.starts_words(texts, outside, test.prefixes, test.whole)
    with pytest.raises(ValueError, match="one tuple of words per ASCII character"):
        _kernel.starts_words(texts, read, (), test.whole)


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_words_and_doubts_read_the_texts_asked_for() -> None:
    """``words_and_doubts`` gives 0 (none of the words), 1 (a word, no doubt) or 2 (a
    word and a doubt) for each text it is given the index of, and refuses an index
    outside the list and a vocabulary of the wrong shape."""
    import scrapy_tagratio.algorithms.template_names as module
    from scrapy_tagratio import _kernel

    test = module.BOILERPLATE_NAMES
    assert test.doubts is not None
    texts = ["site-nav", "has-sidebar", "entry-content share", "story", ""]
    read = np.array([0, 1, 2, 3, 4, 0], dtype=np.int64)
    found = _kernel.words_and_doubts(texts, read, test.prefixes, test.whole, test.doubts)
    assert list(bytes(found)) == [1, 2, 2, 0, 0, 1]
    for wrong in (-1, len(texts)):
        outside = np.array([wrong], dtype=np.int64)
        with pytest.raises(IndexError):
            _kernel.words_and_doubts(texts, outside, test.prefixes, test.whole, test.doubts)
    with pytest.raises(ValueError, match="one tuple of words per ASCII character"):
        _kernel.words_and_doubts(texts, read, test.prefixes, test.whole, ())


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_pair_test_reads_the_texts_asked_for() -> None:
    """``word_pairs`` gives for each text it is given the index of the number of its first
    pair at the leftmost word start, and refuses an index outside the list and a
    vocabulary of the wrong shape."""
    from scrapy_tagratio import _kernel

    firsts, seconds = ("post", "art"), (("body", "entry"), ("content",))
    texts = ["x-post__entry art-content", "postbody2", "art content", "apost body", ""]
    read = np.array([0, 1, 2, 3, 4, 2], dtype=np.int64)
    found = np.frombuffer(_kernel.word_pairs(texts, read, firsts, seconds), dtype=np.int64)
    assert found.tolist() == [1, -1, 2, -1, -1, 2]
    for wrong in (-1, len(texts)):
        outside = np.array([wrong], dtype=np.int64)
        with pytest.raises(IndexError):
            _kernel.word_pairs(texts, outside, firsts, seconds)
    with pytest.raises(ValueError, match="one tuple of second words per first word"):
        _kernel.word_pairs(texts, read, firsts, seconds[:1])
