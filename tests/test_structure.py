"""Repeated sibling structures: comment threads and teaser lists, found without words."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_tagratio import reader
from scrapy_tagratio.cleaning import name_codes
from scrapy_tagratio.document import Document
from scrapy_tagratio.reader import kernel_status
from scrapy_tagratio.structure import MIN_REPEATS, find_structures, repeated_items

STORY = "".join(
    f"<p>Paragraph {i}: the council met on Tuesday evening and agreed to repair the old sea "
    "wall before the winter storms arrive, after a long debate about the harbour.</p>"
    for i in range(6)
)


def comment(i: int, replies: str = "") -> str:
    # Class names in no known vocabulary: the detection must not read them.
    return (
        f"<li class='x{i}'><div class='k1'><a href='https://reader{i}.example/'>Reader {i}</a>"
        f" <time datetime='2024-01-0{i + 1}'>January {i + 1}</time></div>"
        f"<div class='k2'><p>I think the wall should have been repaired years ago; the "
        f"council wasted time on studies (reader {i}).</p></div>"
        f"<div class='k3'><a href='#reply-{i}'>Reply</a></div>{replies}</li>"
    )


def teaser(i: int) -> str:
    return (
        f"<li><a href='/stories/{i}'><h3>Another story about the town, number {i}</h3></a>"
        f"<p>A short summary of story {i}.</p></li>"
    )


def page(*parts: str) -> Document:
    return Document.from_input("<html><body>" + "".join(parts) + "</body></html>")


def test_comment_thread_after_the_article_is_found_and_the_article_is_not() -> None:
    doc = page(
        "<article><h1>Council repairs the wall</h1>",
        STORY,
        "</article><ol>",
        *(comment(i) for i in range(4)),
        "</ol>",
    )
    found = find_structures(doc)
    thread = doc.text_of(found.comment)
    for i in range(4):
        assert f"(reader {i})" in thread
        assert f"Reader {i}" in thread
    assert "Paragraph" not in thread
    assert not found.teaser.any()
    assert found.comment_items.sum() == 4
    assert set(np.asarray(doc.nodes.tag)[found.comment_items]) == {"li"}


def test_replies_nested_in_comments_belong_to_the_thread() -> None:
    replies = "<ol>" + "".join(comment(5 + j) for j in range(2)) + "</ol>"
    doc = page(STORY, "<ol>", comment(0, replies), comment(1), comment(2), "</ol>")
    thread = doc.text_of(find_structures(doc).comment)
    assert "(reader 5)" in thread and "(reader 6)" in thread


def test_too_few_repeats_are_no_thread() -> None:
    doc = page(STORY, "<ol>", *(comment(i) for i in range(MIN_REPEATS - 1)), "</ol>")
    assert not find_structures(doc).comment.any()


def test_teaser_list_links_to_distinct_pages_through_headlines() -> None:
    doc = page("<article>", STORY, "</article><ul>", *(teaser(i) for i in range(5)), "</ul>")
    found = find_structures(doc)
    teasers = doc.text_of(found.teaser)
    assert all(f"summary of story {i}" in teasers for i in range(5))
    assert "Paragraph" not in teasers
    assert not found.comment.any()


def test_a_page_is_measured_once_and_shared_read_only() -> None:
    """The default algorithm and the overview detector both ask for a page's structures:
    the second call returns the first result, whose arrays nobody may write into; another
    ``min_repeats`` is measured afresh."""
    doc = page("<article>", STORY, "</article><ul>", *(teaser(i) for i in range(5)), "</ul>")
    found = find_structures(doc)
    assert find_structures(doc) is found
    with pytest.raises(ValueError, match="read-only"):
        found.teaser[0] = True
    other = find_structures(doc, min_repeats=MIN_REPEATS + 3)
    assert other is not found and not other.teaser_items.any()  # 5 teasers < 6 repeats
    assert find_structures(page(STORY)) is not found  # another page, another result


def test_teasers_that_all_lead_to_one_page_are_no_teaser_list() -> None:
    items = [teaser(i).replace(f"/stories/{i}", "/stories/same") for i in range(5)]
    doc = page(STORY, "<ul>", *items, "</ul>")
    assert not find_structures(doc).teaser.any()


def test_a_menu_of_short_links_is_no_teaser_list() -> None:
    menu = "".join(f"<li><a href='/section/{i}'>Section {i}</a></li>" for i in range(8))
    doc = page("<ul>", menu, "</ul>", STORY)
    assert not find_structures(doc).teaser.any()


def test_article_sections_with_headings_are_no_thread() -> None:
    # Repeated sections of one article: heading, paragraph with an inline link, a date line.
    sections = "".join(
        f"<section><h2>Part {i}</h2><div><a href='/src/{i}'>Source {i}</a> "
        f"<time>2024</time></div><p>The long text of part {i} of the article goes on about "
        "the harbour and the wall for a while.</p></section>"
        for i in range(4)
    )
    doc = page(sections)
    assert not find_structures(doc).comment.any()


def test_a_layout_column_holding_most_of_the_page_makes_no_teaser_list() -> None:
    # Three sibling columns, each led by a headline linking to another page: the shape of a
    # teaser list, but the first column holds most of the page's text (the article, its
    # title linking to its permalink), so the group is the page's layout (a dragnet-dev
    # page of this shape had its whole article flagged as teasers).
    columns = [
        f"<div><h2><a href='/2024/wall'>Council repairs the wall</a></h2>{STORY}</div>",
        *(f"<div><h3><a href='/other/{i}'>Another story about the town {i}</a></h3></div>"
          for i in range(2)),
    ]  # fmt: skip
    doc = page(*columns)
    found = find_structures(doc).without_layout(doc.nodes)
    assert (found.group >= 0).sum() == 3  # the columns are a repeated structure
    assert not found.teaser.any() and not found.comment.any()
    assert find_structures(doc).teaser.any()  # what the overview detector reads


def test_the_layout_rule_leaves_a_teaser_list_beside_an_article() -> None:
    # The same columns hold no article: each is a small part of the page, a teaser list.
    columns = [
        f"<div><h3><a href='/other/{i}'>Another story about the town {i}</a></h3></div>"
        for i in range(3)
    ]
    doc = page(f"<article>{STORY}</article>", *columns)
    found = find_structures(doc)
    assert found.without_layout(doc.nodes) is found
    assert found.teaser_items.sum() == 3


def test_paragraphs_are_never_items() -> None:
    doc = page(STORY)
    assert (repeated_items(doc.nodes) < 0).all()


def _groups_by(name: str, nodes: Any, min_repeats: int) -> list[int]:
    saved, reader.DEFAULT_READER = reader.DEFAULT_READER, name
    try:
        return [int(i) for i in repeated_items(nodes, min_repeats)]
    finally:
        reader.DEFAULT_READER = saved


@given(
    st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["li", "div", "a", "p"])), max_size=80),
    st.integers(1, 4),
)
def test_the_groups_of_repeated_siblings(spec: list[tuple[int, str]], min_repeats: int) -> None:
    """Per node of random trees (each node the child of the last one, ``climb`` levels
    up), its group: the siblings of its tag, when at least ``min_repeats`` of them and the
    tag not a paragraph, numbered by parent, then by tag code; the kernel's one pass gives
    the numpy path's groups and numbers."""
    parent, tags = [-1], ["body"]
    for climb, tag in spec:
        node = len(parent) - 1
        for _ in range(climb):
            node = max(parent[node], 0)
        parent.append(node)
        tags.append(tag)
    nodes = dataclasses.replace(
        Document.from_input("<p>x</p>").nodes,
        tag=tuple(tags),
        tag_codes=name_codes(tags),
        parent=np.array(parent, np.int32),
    )
    codes = {tag: code for code, tag in enumerate(dict.fromkeys(tags))}
    siblings: dict[tuple[int, int], list[int]] = {}
    for i, (up, tag) in enumerate(zip(parent, tags, strict=True)):
        if up >= 0 and tag != "p":
            siblings.setdefault((up, codes[tag]), []).append(i)
    expected = [-1] * len(tags)
    if len(tags) > min_repeats:  # a smaller table has no group
        groups = sorted(key for key, items in siblings.items() if len(items) >= min_repeats)
        for number, key in enumerate(groups):
            for i in siblings[key]:
                expected[i] = number
    assert _groups_by("target", nodes, min_repeats) == expected
    if kernel_status()[0]:
        assert _groups_by("kernel", nodes, min_repeats) == expected


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_sibling_groups_refuse_a_parent_after_its_child_and_a_stray_code() -> None:
    """The C pass indexes its per-parent and per-code arrays unchecked otherwise."""
    from scrapy_tagratio import _kernel

    ones, codes = np.ones(3, dtype=np.uint8), np.arange(3, dtype=np.intp)
    with pytest.raises(ValueError, match="does not come before"):
        _kernel.sibling_groups(np.array([-1, 0, 5], np.int32), codes, ones, 3, 2)
    with pytest.raises(ValueError, match="not below"):
        _kernel.sibling_groups(np.array([-1, 0, 0], np.int32), codes, ones, 2, 2)


#: Random elements: a tag, characters of text (none, meta-, headline- and body-sized), the
#: children, and how many times the element repeats (siblings of one shape make items).
_ELEMENT = st.deferred(
    lambda: st.tuples(
        st.sampled_from(["li", "div", "a", "h1", "h3", "time", "span", "p"]),
        st.sampled_from([0, 5, 25, 120]),
        st.lists(_ELEMENT, max_size=4),
        st.integers(1, 3),
    )
)


def _markup(element: tuple[str, int, list[Any], int]) -> str:
    tag, chars, children, copies = element
    href = " href='/s'" if tag == "a" else ""
    inner = "".join(map(_markup, children))
    return f"<{tag}{href}>{'w' * chars}{inner}</{tag}>" * copies


@given(
    st.lists(_ELEMENT, min_size=1, max_size=6),
    st.lists(st.sampled_from([*map(comment, range(3)), *map(teaser, range(3))]), max_size=5),
)
def test_the_kernels_item_tests_are_the_numpy_paths(elements: list[Any], items: list[str]) -> None:
    """Per item of random pages (repeated elements of random shapes: links, headings,
    times and text of meta, headline and body sizes, nested; and comments and teasers in
    a list), the kernel's pass finds the comment-like items and the teasers' headline
    links that the numpy path finds."""
    from scrapy_tagratio.structure import _item_tests

    nodes = page(*map(_markup, elements), "<ol>", *items, "</ol>").nodes
    items = np.flatnonzero(repeated_items(nodes, 2) >= 0)
    saved, reader.DEFAULT_READER = reader.DEFAULT_READER, "target"
    try:
        looks, headline = _item_tests(nodes, items)
    finally:
        reader.DEFAULT_READER = saved
    if kernel_status()[0]:
        reader.DEFAULT_READER, saved = "kernel", reader.DEFAULT_READER
        try:
            compiled = _item_tests(nodes, items)
        finally:
            reader.DEFAULT_READER = saved
        assert compiled[0].tolist() == looks.tolist()
        assert compiled[1].tolist() == headline.tolist()


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_item_tests_refuse_indices_outside_the_table() -> None:
    """The C pass indexes its per-node arrays by ends, blocks and items unchecked
    otherwise."""
    from scrapy_tagratio import _kernel

    def tests(end: list[int], block: list[int], items: list[int]) -> Any:
        n = len(end)
        ints, floats = np.zeros(n, np.int32), np.zeros(n)
        return _kernel.item_tests(
            np.array(end, np.int32), ints, ints, np.zeros(n, np.uint8),
            np.array(block, np.int64), floats, floats, np.zeros(n, np.uint8),
            np.array(items, np.intp), 100.0, 30.0, 20.0, 0.2,
        )  # fmt: skip

    assert tests([2, 2], [0, 0], [1]) == (b"\x00", np.array([-1], np.int64).tobytes())
    for end, block, items in (([3, 2], [0, 0], [1]), ([2, 2], [0, 2], [1]), ([2, 2], [0, 0], [2])):
        with pytest.raises(ValueError, match="outside the table"):
            tests(end, block, items)


def test_empty_and_tiny_pages() -> None:
    for html in ("", "<p>x</p>", "<html><body></body></html>"):
        found = find_structures(Document.from_input(html))
        assert not found.comment.any() and not found.teaser.any()


REAL_PAGES = [
    # (trafilatura-eval page, kind, a class word of its items: checked by hand)
    ("0ac0531f1f0543f4a3f68159e5fd1875", "comment", "comment"),
    ("Dezubekizacja_reaktywacja._Czyli_daty_maja_znaczenie_-_Dziennik.pl", "comment", "comments"),
    ("Raptastisch.net-Seitenhieb", "teaser", "rpwe-li"),
]


@pytest.mark.parametrize(("page_id", "kind", "word"), REAL_PAGES)
def test_real_pages(benchmark_set: Any, page_id: str, kind: str, word: str) -> None:
    """On real development pages the structures are found, and no gold main-text snippet
    lies inside them."""
    real = benchmark_set("trafilatura").load_page("trafilatura", page_id)
    gold = real.gold
    doc = Document.from_input(real.html, url=real.url)
    found = find_structures(doc)
    items = np.flatnonzero(getattr(found, f"{kind}_items"))
    assert items.size >= MIN_REPEATS
    assert any(word in doc.nodes.hint[i] for i in items)
    flagged = " ".join(doc.text_of(getattr(found, kind)).split())
    assert flagged
    assert not [s for s in gold["with"] if " ".join(s.split()) in flagged]
