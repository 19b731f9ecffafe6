"""The page read as events (:mod:`scrapy_tagratio.reader`), by either reader, is the tree
lxml builds from the same bytes: same elements, parents, depths, subtrees and text, on
hand-written pages that stress the parser and on real development pages. The reference is
lxml's own tree builder, independent of the readers. The two readers (the parser target and
the compiled kernel) give identical events on every development page."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from badinput import large_page
from lxml import etree

from benchmarks import _data
from scrapy_tagratio import document as document_module
from scrapy_tagratio import lexbor_reader, reader
from scrapy_tagratio.decoding import _decode, _decode_utf8, _utf8_reading
from scrapy_tagratio.document import Document, decode_html
from scrapy_tagratio.events import _BATCH
from scrapy_tagratio.reader import (
    EVENT_TEXT,
    READERS,
    PageEvents,
    kernel_status,
    read_page,
    sax_status,
)

KERNEL_BUILT, KERNEL_STATUS = kernel_status()
SAX_USED, SAX_STATUS = sax_status()
#: The readers through libxml2's parser, whose events are its tree's (lexbor's HTML5 trees
#: differ in places: tests/test_lexbor_reader.py).
LIBXML2_READERS = ["target", "kernel"]
needs_kernel = pytest.mark.skipif(not KERNEL_BUILT, reason=f"compiled reader: {KERNEL_STATUS}")
needs_sax = pytest.mark.skipif(not SAX_USED, reason=f"the kernel's SAX reader: {SAX_STATUS}")
#: Arrays of :class:`PageEvents`, compared element by element between readers.
ARRAYS = ("parent", "depth", "end", "hints", "kinds", "nodes", "pieces")

TRICKY_PAGES = {
    "comments split text": "<p>one<!-- c -->two <b>x</b><!--d-->y</p>",
    "implied html, body and p": "text first<p>para<p>second para<div>block</div>",
    "unclosed and misnested": "<div><b>bold <i>both</b> italic</i> after</div><table><td>x",
    "entities and white space": "<p>a&amp;b&nbsp;c&#x41;\n\t d</p>  <p>  </p>",
    "script and style text": "<body><script>if (a < b) { x = '</p>'; }</script>tail"
    "<style>p{}</style><p>t</p><script type='application/ld+json'>{}</script></body>",
    "head content": "<html><head><title>T &amp; U</title><meta name=x content=y>"
    "<link rel=next href=/2></head><body><p>b</p></body></html>",
    "content after the end": "<html><body><p>x</p></body></html> words<div>after</div>",
    "deep nesting": "<div>" * 300 + "deep" + "</div>" * 300,
}


#: Tags, parents, depths, subtree ends, and the text directly in each element.
TreeView = tuple[list[str], list[int], list[int], list[int], dict[int, str]]


def tree_view(data: bytes) -> TreeView:
    """Tags, parents, depths, subtree ends and text per owning element, from lxml's tree
    (the source code in ``script`` and ``style``, which the reader drops, left out)."""
    parser = etree.HTMLParser(
        encoding="utf-8",
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        no_network=True,
        default_doctype=False,
    )
    root = etree.fromstring(data, parser)
    elements = list(root.iter(etree.Element))
    index = {el: i for i, el in enumerate(elements)}
    parents = [index.get(el.getparent(), -1) for el in elements]
    depths = [0] * len(elements)
    for i in range(1, len(elements)):
        depths[i] = depths[parents[i]] + 1
    ends = [i + sum(1 for _ in el.iter(etree.Element)) for i, el in enumerate(elements)]
    texts: dict[int, str] = {}
    for i, el in enumerate(elements):
        code = el.tag in ("script", "style") and "ld+json" not in el.get("type", "")
        own = ("" if code else el.text or "") + "".join(child.tail or "" for child in el)
        if own:
            texts[i] = own
    return [el.tag for el in elements], parents, depths, ends, texts


def event_view(page: PageEvents) -> TreeView:
    """The same from the events, for the first root: after ``</html>`` libxml2 starts a
    second root, which its tree builder drops (the Document reads the first body only)."""
    n = int(page.end[0])
    texts: dict[int, str] = {}
    is_text = page.kinds == EVENT_TEXT
    for node, piece in zip(
        page.nodes[is_text].tolist(), page.pieces[is_text].tolist(), strict=True
    ):
        if 0 <= node < n:
            texts[node] = texts.get(node, "") + page.texts[piece]
    return (
        page.tags[:n],
        page.parent[:n].tolist(),
        page.depth[:n].tolist(),
        page.end[:n].tolist(),
        texts,
    )


def assert_same(html: str, name: str) -> None:
    assert event_view(read_page(html, reader=name)) == tree_view(html.encode("utf-8"))


def assert_same_events(one: PageEvents, other: PageEvents) -> None:
    assert one.tags == other.tags
    assert one.texts == other.texts
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(one, name), getattr(other, name), err_msg=name)
    assert one.attributes == other.attributes


@pytest.mark.parametrize("name", LIBXML2_READERS)
@pytest.mark.parametrize("html", list(TRICKY_PAGES.values()), ids=list(TRICKY_PAGES))
def test_events_give_the_tree_lxml_builds(html: str, name: str) -> None:
    assert_same(html, name)


@pytest.mark.parametrize("name", LIBXML2_READERS)
def test_events_of_development_pages_give_the_tree_lxml_builds(
    benchmark_set: Any, name: str
) -> None:
    for page in benchmark_set("trafilatura").pages("trafilatura", limit=60):
        text = decode_html(page.html)
        if text.strip():
            assert_same(text, name)


@needs_kernel
@pytest.mark.benchmark_data
@pytest.mark.skipif(_data.benchmarks_dir() is None, reason="needs ../shared/benchmarks")
def test_both_readers_give_the_same_events_on_every_development_page() -> None:
    """The kernel's events, hints and attributes are the target's on all 1,961 pages of the
    protocol's pool, so the models fitted on the target's node tables need no refit; where
    the kernel reads pages by libxml2's SAX callbacks, so does its walk of the tree. Every
    tenth page by default; all of them with ``TAGRATIO_ALL_PAGES=1`` (CI's kernel run)."""
    from benchmarks import protocol

    step = 1 if os.environ.get("TAGRATIO_ALL_PAGES") == "1" else 10
    for page in protocol.pool()[::step]:
        text = decode_html(page.html())
        try:
            kernel = read_page(text, reader="kernel")
            assert_same_events(kernel, read_page(text, reader="target"))
            if SAX_USED:
                assert_same_events(reader._read_tree(text, lambda: None), kernel)
        except AssertionError as exc:
            raise AssertionError(f"{page.key}: {exc}") from None


@needs_kernel
@pytest.mark.parametrize("sax", [True, False], ids=["SAX reader", "tree walk"])
@pytest.mark.parametrize(
    ("html", "elements", "limit"),
    [
        # deeper than libxml2's tree keeps
        ("<div>" * 3000 + "deep" + "</div>" * 3000, 3002, reader.KERNEL_MAX_CHARS),
        ("<p>" + "<b>x</b>" * 2000 + "</p>", 2003, 10_000),  # html, body, p and the b
    ],
    ids=["beyond the tree's depth cap", "above the kernel's size limit"],
)
def test_pages_the_tree_cannot_hold_are_read_whole(
    html: str, elements: int, limit: int, sax: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if sax and not SAX_USED:
        pytest.skip(SAX_STATUS)
    monkeypatch.setattr(reader, "KERNEL_MAX_CHARS", limit)
    if not sax:
        monkeypatch.setattr(reader, "_SAX", None)
    kernel, target = read_page(html, reader="kernel"), read_page(html, reader="target")
    assert len(kernel) == elements
    assert_same_events(kernel, target)


#: A page whose one element has 100,000 distinct attributes (found by fuzzing).
MANY_ATTRIBUTES = (
    "<html><body><div " + " ".join(f"a{i}" for i in range(100_000)) + ">x</div></body>"
)


def assert_read_as_fast_as_the_target(html: str, name: str) -> None:
    """Reader ``name`` reads ``html`` in at most three times the target's time (plus 0.1
    s) and gives the target's events: it handed the page to the target."""
    start = time.perf_counter()
    target = read_page(html, reader="target")
    reference = time.perf_counter() - start
    start = time.perf_counter()
    page = read_page(html, reader=name)
    seconds = time.perf_counter() - start
    assert seconds <= 3 * reference + 0.1, f"{seconds:.2f} s, the target {reference:.3f} s"
    assert_same_events(page, target)


@needs_kernel
def test_the_tree_walk_leaves_an_element_of_a_hundred_thousand_attributes_to_the_target(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """libxml2 compares each attribute of an element with the others as it builds its tree
    (100,000 distinct ones: 28 s); where the kernel walks that tree (lxml without the SAX
    functions), such a page is read by the target, which builds none."""
    monkeypatch.setattr(reader, "_SAX", None)
    assert_read_as_fast_as_the_target(MANY_ATTRIBUTES, "kernel")


class _Late(Exception):
    """The deadline passed (raised by a test's ``check_deadline``)."""


@needs_sax
def test_a_deadline_raising_inside_the_sax_reader_stops_the_parse() -> None:
    """``check_deadline`` raising in libxml2's callbacks (every batch of elements with
    attributes) stops the parser there, and the exception reaches the caller: it is
    called no more after it raised; the next page reads as before."""
    html = "<html><body>" + '<div class="c">x</div>' * (10 * _BATCH) + "</body></html>"
    calls = []

    def check_deadline() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise _Late

    assert len(html) <= reader._FEED_CHARS  # one part: the SAX reader's
    with pytest.raises(_Late):
        read_page(html, check_deadline, reader="kernel")
    assert len(calls) == 2
    page = TRICKY_PAGES["comments split text"]
    assert_same_events(read_page(page, reader="kernel"), read_page(page, reader="target"))


def _not_called(*args: Any) -> PageEvents:
    raise AssertionError("the SAX reader fell back")


def _pushed(html: str) -> PageEvents:
    """``html`` read by the SAX reader in parts (more than :data:`reader._FEED_CHARS`),
    with neither the tree walk nor the target to fall back to."""
    data = reader.parser_input(html).encode("utf-8")
    assert len(data) > reader._FEED_CHARS
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "_read_tree", _not_called)
        patch.setattr(reader, "_read_target", _not_called)
        return read_page(html, reader="kernel", utf8=data)


@needs_sax
def test_the_sax_reader_pushes_a_large_page_as_the_tree_walk_reads_it() -> None:
    """A generated archive page of 3 MB (the speed benchmark's 20 MB page, smaller), pushed
    to libxml2 in parts by the SAX reader, from its bytes and from its text: the tree
    walk's events (the tree of a page fed in parts through lxml) and the target's."""
    data = large_page(3_000_000)
    html = data.decode("utf-8")
    pushed = _pushed(html)
    assert len(pushed) > 50_000
    assert_same_events(pushed, reader._read_tree(html, lambda: None, data))
    assert_same_events(read_page(html, reader="kernel"), pushed)
    assert_same_events(read_page(html, reader="target", utf8=data), pushed)


@needs_sax
@pytest.mark.benchmark_data
@pytest.mark.skipif(_data.benchmarks_dir() is None, reason="needs ../shared/benchmarks")
def test_the_sax_reader_pushes_pool_pages_run_together_as_the_tree_walk_reads_them() -> None:
    """Development pages (every seventh of the pool) run together into a page over 2 MB:
    real markup in every part, documents ending and starting again at arbitrary places."""
    from benchmarks import protocol

    texts: list[str] = []
    for page in protocol.pool()[::7]:
        texts.append(decode_html(page.html()))
        if sum(map(len, texts)) > 2 * reader._FEED_CHARS:
            break
    html = "".join(texts)
    pushed = _pushed(html)
    assert_same_events(pushed, reader._read_tree(html, lambda: None))
    assert_same_events(pushed, read_page(html, reader="target"))


@needs_sax
def test_the_sax_reader_keeps_nesting_the_tree_drops() -> None:
    """Deeper than libxml2's tree keeps (it stops at depth 2048 and drops what is below,
    the text with it; the tree walk then hands the page to the target): the SAX reader,
    pushing the page in parts, keeps every element and the innermost text, as the target
    does, with no fall-back."""
    depth = 200_000
    html = "<div>" * depth + "deep" + "</div>" * depth
    pushed = _pushed(html)
    assert len(pushed) == depth + 2  # html, body and the divs
    assert int(pushed.depth.max()) == depth + 1
    assert pushed.texts == ["deep"]
    assert_same_events(pushed, read_page(html, reader="target"))


#: A page with the awkward places for a part to end, and those places: (a piece of the
#: page, bytes into it): inside a tag's name, an attribute's name and its value, two-,
#: three- and four-byte UTF-8 sequences, named, decimal and hexadecimal entities (in text
#: and in an attribute), a script's end tag and a comment.
SPLIT_PAGE = (
    '<html><head><title>T</title></head><body><div class="a b" title="x &amp; y">'
    "caf\u00e9 \u4e2d\u6587 \U0001f600 a&amp;b &eacute; &#233; &#x41;&nbsp;</div>"
    "<script>if (a < b) {}</script><p>one<!-- cc -->two</p></body></html>"
)
SPLIT_PLACES = [
    ("<title>", 3), ("<div", 2), ("class", 2), ('"x &amp;', 5), ("\u00e9", 1),
    ("\u4e2d", 1), ("\u6587", 2), ("\U0001f600", 1), ("\U0001f600", 3), ("a&amp;b", 3),
    ("&eacute;", 4), ("&#233;", 3), ("&#x41;", 3), ("&nbsp;", 5), ("</script>", 5),
    ("<!-- cc", 6), ("</p>", 2),
]  # fmt: skip


@needs_sax
def test_parts_ending_at_awkward_places_give_the_events_of_one_part() -> None:
    """The push parser waits for the rest of a tag, a character or an entity cut at a
    part's end: every cut of :data:`SPLIT_PLACES` (and at every byte, and a part a byte)
    gives the events of the page read whole."""
    html = SPLIT_PAGE
    data = html.encode("utf-8")
    cuts = [data.index(piece.encode("utf-8")) + into for piece, into in SPLIT_PLACES]
    kernel = reader._KERNEL
    whole = reader._read_sax(kernel, [data], lambda: None)
    assert_same_events(whole, read_page(html, reader="target"))
    assert sum(0x80 <= data[cut] < 0xC0 for cut in cuts) == 5  # in a UTF-8 sequence
    for cut in [*cuts, *range(1, len(data))]:
        pushed = reader._read_sax(kernel, [data[:cut], data[cut:]], lambda: None)
        try:
            assert_same_events(pushed, whole)
        except AssertionError as exc:
            raise AssertionError(f"cut at {cut}: {data[cut - 10 : cut + 10]!r}") from exc
    single = reader._read_sax(kernel, [data[i : i + 1] for i in range(len(data))], lambda: None)
    assert_same_events(single, whole)


@needs_sax
@pytest.mark.parametrize(
    ("body", "raise_at", "after_parts"),
    [
        ('<div class="c">x</div>' * (10 * _BATCH), 2, None),
        ("<p>some words</p>" * 1_000, 3, [2, 3, 4]),  # one part taken ahead
    ],
    ids=["in a callback", "between parts"],
)
def test_a_deadline_raising_while_parts_are_pushed_stops_the_parse(
    body: str, raise_at: int, after_parts: list[int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline mid-push: raising in a callback (every batch of elements with
    attributes) stops the parser in that part and no more are pushed; a page without
    attributes reaches no such callback, and the deadline is checked after each part
    instead. Either way the exception reaches the caller, before the last part, and the
    next page reads as before."""
    monkeypatch.setattr(reader, "_FEED_CHARS", 1_000)
    data = f"<html><body>{body}</body></html>".encode()
    parts: list[int] = []
    calls: list[int] = []

    def counted() -> Any:
        for start in range(0, len(data), reader._FEED_CHARS):
            parts.append(start)
            yield data[start : start + reader._FEED_CHARS]

    def check_deadline() -> None:
        calls.append(len(parts))
        if len(calls) == raise_at:
            raise _Late

    with pytest.raises(_Late):
        reader._read_sax(reader._KERNEL, counted(), check_deadline)
    assert len(calls) == raise_at
    assert len(parts) < len(data) // reader._FEED_CHARS
    if after_parts is not None:
        assert calls == after_parts
    page = "".join(TRICKY_PAGES.values()) * 100
    assert_same_events(read_page(page, reader="kernel"), read_page(page, reader="target"))


def _assert_the_tree_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the SAX reader not used, the kernel reader walks the tree, with the target's
    events (the tricky pages run together)."""
    monkeypatch.setattr(reader, "_SAX", None)
    walked = []
    read_tree = reader._read_tree

    def spied(*args: Any) -> PageEvents:
        walked.append(1)
        return read_tree(*args)

    monkeypatch.setattr(reader, "_read_tree", spied)
    html = "".join(TRICKY_PAGES.values())
    assert_same_events(read_page(html, reader="kernel"), read_page(html, reader="target"))
    assert walked


@needs_sax
def test_without_libxml2s_functions_the_tree_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where libxml2's HTML parser is not found in the module named (one not loaded, or
    loaded without it: the kernel's own), the SAX reader is not used and the kernel
    reader walks the tree, with the same events; the functions found before are kept."""
    kernel = reader._KERNEL
    assert kernel is not None
    for module in ("/nonexistent/etree.so", kernel.__file__):
        sax, why = reader._load_sax(kernel, module)
        assert sax is None
        assert "not found" in why
    _assert_the_tree_is_walked(monkeypatch)
    html = "".join(TRICKY_PAGES.values())
    sax = reader._read_sax(kernel, [html.encode()], lambda: None)
    assert_same_events(sax, reader._read_tree(html, lambda: None))


@needs_sax
def test_without_the_push_parser_the_tree_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    """One of libxml2's push functions missing (``htmlParseChunk`` under a name lxml's
    module does not export): the SAX reader is not used for any page, the kernel reader
    walks the tree (a page in parts too), with the target's events."""
    from scrapy_tagratio import _kernel

    names = tuple(
        b"htmlParseChunk_absent" if name == b"htmlParseChunk" else name
        for name in _kernel._LIBXML2_NAMES
    )
    assert names != _kernel._LIBXML2_NAMES
    monkeypatch.setattr(_kernel, "_LIBXML2_NAMES", names)
    sax, why = reader._load_sax(_kernel, etree.__file__ or "")
    assert sax is None
    assert "not found" in why
    monkeypatch.setattr(reader, "_FEED_CHARS", 50)
    _assert_the_tree_is_walked(monkeypatch)


def test_a_kernel_built_for_other_versions_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(etree, "LXML_VERSION", (5, 0, 0, 0))
    kernel, why = reader._load_kernel()
    assert kernel is None
    assert "running" in why or "not built" in why or "older sources" in why


@needs_kernel
def test_a_kernel_built_from_older_sources_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from scrapy_tagratio import _kernel

    monkeypatch.delattr(_kernel, "subtree_mask")
    loaders = [reader._load_kernel]
    if lexbor_reader.lexbor_status()[0]:  # with selectolax, lexbor's walk loads it too
        loaders.append(lexbor_reader._load_walk)
    for load in loaders:
        kernel, why = load()
        assert kernel is None
        assert "older sources (no subtree_mask)" in why


def test_the_package_calls_only_the_kernel_functions_it_checks_for() -> None:
    """Every ``kernel.NAME(`` of the modules that use the compiled kernel is in
    :data:`lexbor_reader.KERNEL_FUNCTIONS`, so a stale kernel is refused at import rather than
    failing on a page (signal.py's ``kernel`` is a smoothing kernel)."""
    sources = [path.read_text() for path in Path(reader.__file__).parent.rglob("*.py")]
    called = {
        name
        for source in sources
        if re.search(r"active_kernel|_KERNEL\b", source)
        for name in re.findall(r"\b_?(?:kernel|KERNEL)\.([a-z_]+)\(", source)
    }
    assert called and called <= set(lexbor_reader.KERNEL_FUNCTIONS)


def test_the_kernel_is_there_where_ci_builds_it() -> None:
    """CI sets TAGRATIO_EXPECT_KERNEL=1 in the run that builds the kernel: a build that
    failed silently (the install survives it by design) fails here."""
    if os.environ.get("TAGRATIO_EXPECT_KERNEL") != "1":
        pytest.skip("TAGRATIO_EXPECT_KERNEL is not set")
    assert KERNEL_BUILT, KERNEL_STATUS
    assert SAX_USED, SAX_STATUS
    expected = os.environ.get(reader.READER_VARIABLE) or "kernel"
    assert expected == reader.DEFAULT_READER


def test_an_unknown_reader_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(reader.READER_VARIABLE, "html5lib")
    with pytest.raises(ValueError, match="TAGRATIO_READER='html5lib'"):
        reader._default_reader()
    for name in READERS:
        monkeypatch.setenv(reader.READER_VARIABLE, f" {name.upper()} ")
        assert reader._default_reader() == name


@pytest.mark.parametrize("name", list(READERS))
def test_feeding_in_small_parts_changes_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    html = "".join(TRICKY_PAGES.values()) * 3
    whole = read_page(html, reader=name)
    monkeypatch.setattr(reader, "_FEED_CHARS", 7)
    assert_same_events(read_page(html, reader=name), whole)


@pytest.mark.parametrize("name", list(READERS))
def test_attributes_the_analysis_reads_are_recorded(name: str) -> None:
    page = read_page(
        '<html itemscope itemtype="https://schema.org/WebPage"><head>'
        '<meta property="og:title" content="Headline"><link rel="next" href="/p2">'
        '<script type="application/ld+json">{"@type": "NewsArticle"}</script></head>'
        '<body><div class="Post-Body" id="Main" role="main" itemprop="articleBody">'
        '<a href="/x" onclick="go()">x</a><img src="i.png" alt="pic">'
        '<p style="display: none">hidden</p><p aria-hidden="true">also</p>'
        "<p hidden>too</p><p style='color: red'>shown</p></div></body></html>",
        reader=name,
    )
    tags, found = page.tags, page.attributes
    div = tags.index("div")
    assert page.hints[div] == "post-body main main articlebody"
    assert [tags[i] for i in found.hidden] == ["p", "p", "p"]
    assert [tags[i] for i in found.onclick] == ["a"]
    assert found.itemtypes == ["https://schema.org/WebPage"]
    assert found.metas == [("og:title", None, None, "Headline")]
    assert found.rels == ["next"]
    assert page.own_text(found.json_ld[0]) == '{"@type": "NewsArticle"}'
    assert found.kept[tags.index("a")] == ("/x", None, None)
    assert found.kept[tags.index("img")] == (None, "i.png", "pic")


@pytest.mark.parametrize("name", ["target", "lexbor-python"])
def test_the_pure_readers_hold_equal_runs_of_text_and_links_once(name: str) -> None:
    """A large page repeats many runs of text ("Reply", a recurring paragraph) and links
    (a tag's): the pure readers keep one object for equal runs, whole or joined from pieces
    around a comment, and for equal links (issue 18: both are held for the page's life)."""
    page = read_page(
        "<div><p>Reply</p><p>one<!-- c -->two</p><p>Reply</p><p>one<!-- d -->two</p>"
        '<a href="/tag/a">x</a><a href="/tag/a">y</a></div>',
        reader=name,
    )
    assert page.texts == ["Reply", "onetwo", "Reply", "onetwo", "x", "y"]
    assert page.texts[0] is page.texts[2]
    assert page.texts[1] is page.texts[3]
    first, second = (page.attributes.kept[i] for i, tag in enumerate(page.tags) if tag == "a")
    assert first == ("/tag/a", None, None)
    assert first is second


@pytest.mark.parametrize("name", list(READERS))
def test_a_page_without_elements_reads_as_an_empty_body(name: str) -> None:
    for html in ("", "   \n", "\x00\x00", "</div>\n"):
        page = read_page(html, reader=name)
        assert page.tags == ["html", "body"]
        assert page.texts == []


@pytest.mark.parametrize("name", list(READERS))
def test_attributes_the_metadata_reads_are_recorded(name: str) -> None:
    page = read_page(
        '<html lang="de-AT"><head><meta http-equiv="Content-Language" content="de">'
        '<link rel="canonical" href="/a"><meta itemprop="datePublished" content="2024-05-03">'
        '</head><body><article itemscope><h1 itemprop="headline">Head</h1>'
        '<a rel="author" href="/ann">Ann</a><time datetime="2024-05-03T10:00+02:00">3 May</time>'
        '<span itemprop="author">Bo</span></article></body></html>',
        reader=name,
    )
    tags, found = page.tags, page.attributes
    assert found.languages == ["de-AT", "de"]
    assert [(tags[i], rel) for i, rel in zip(found.rel_owners, found.rels, strict=True)] == [
        ("link", "canonical"), ("a", "author")
    ]  # fmt: skip
    assert found.kept[found.rel_owners[0]][0] == "/a"
    assert found.datetimes == [(tags.index("time"), "2024-05-03T10:00+02:00")]
    assert found.itemprops == [
        (tags.index("h1"), "headline", None),
        (tags.index("span"), "author", None),
    ]
    assert ("datePublished", "2024-05-03") in [(m[2], m[3]) for m in found.metas]


@needs_kernel
def test_the_kernels_piece_lengths_are_those_of_str_split() -> None:
    """The node table's C (characters with white space collapsed) is counted in C with the
    kernel: the same figure as ``len(" ".join(text.split()))`` for every kind of white
    space ``str.split`` knows (no-break, ideographic, separators) and none it does not."""
    from scrapy_tagratio.document import _collapsed_lengths

    texts = [
        "",
        "   ",
        "one",
        "  two  words ",
        "a\u00a0b\u3000c\u2028d\x1ce\u200bf",  # U+200B is not white space
        "\tl\u00e9\u00e8ve\n\n  \u4e2d\u6587 \U0001f600 x\x85",
        "x" * 5000 + " \r\n " + "y",
        "caf\u00e9\u00a0au\x85lait\x1f \u00ff\u00a0",  # one byte a character: the table
    ]
    kernel = reader._KERNEL
    assert kernel is not None
    pieces = [6, 0, 4, 1, 3, 2, 5, 4, 7]
    got = np.frombuffer(kernel.piece_lengths(texts, np.array(pieces, np.int32)), np.int64)
    assert got.tolist() == [len(" ".join(texts[i].split())) for i in pieces]
    assert got.tolist() == _collapsed_lengths([texts[i] for i in pieces]).tolist()
    with pytest.raises(IndexError, match="not one of the 8 runs"):
        kernel.piece_lengths(texts, np.array([0, 8], np.int32))


@needs_kernel
def test_the_kernels_span_text_lengths_are_those_of_len() -> None:
    """The text of spans of events (nested, empty, the whole page) that decides which
    hidden elements are cleaned away: the lengths of the runs of text among them."""
    texts = ["", " ", "ab", "l\u00e9\u00e8ve", "\u4e2d\u6587", "\U0001f600x", "x" * 5000]
    pieces = [-1, 0, -1, 1, 2, -1, -1, 3, 4, 5, -1, 6, -1]  # -1: an opening or closing
    spans = [(0, 13), (2, 6), (3, 3), (7, 10), (12, 13), (13, 13)]
    kernel = reader._KERNEL
    assert kernel is not None
    starts, stops = (np.array(ends, np.int64) for ends in zip(*spans, strict=True))
    found = kernel.span_text_lengths(texts, np.array(pieces, np.int32), starts, stops)
    assert np.frombuffer(found, np.int64).tolist() == [
        sum(len(texts[p]) for p in pieces[start:stop] if p >= 0) for start, stop in spans
    ]
    with pytest.raises(IndexError, match="not within 13 events"):
        kernel.span_text_lengths(texts, np.array(pieces, np.int32), stops, starts)
    with pytest.raises(IndexError, match="not one of the 7 runs"):
        kernel.span_text_lengths(texts, np.array([7], np.int32), starts[:0], stops[:0])


#: Page bytes and their HTTP Content-Type: UTF-8 (declared, detected, with a byte order
#: mark), UTF-8 declared as latin-1, ASCII declared as cp1252, real latin-1, invalid
#: UTF-8, and bytes the preparation of the text changes (NUL, XML declaration, an
#: unclosed title, a blank page).
ENCODED_PAGES: dict[str, tuple[bytes, str | None]] = {
    "utf-8 declared": ("<p>caf\u00e9 \u2014 \U0001f600</p>".encode(), "text/html; charset=utf-8"),
    "utf-8 detected": ("<p>na\u00efve \u4e2d\u6587</p>".encode(), None),
    "utf-8 with bom": (b"\xef\xbb\xbf" + "<p>\u00e9t\u00e9</p>".encode(), None),
    "utf-8 declared latin-1": ("<p>\u00fcber</p>".encode(), "text/html; charset=iso-8859-1"),
    "ascii declared cp1252": (b"<p>plain</p>", "text/html; charset=windows-1252"),
    "latin-1": ("<p>\u00fcber</p>".encode("latin-1"), "text/html; charset=iso-8859-1"),
    "invalid utf-8": (b"<p>bad \xff\xfe byte \xc3</p>", "text/html; charset=utf-8"),
    "replacement character": ("<p>\ufffd kept</p>".encode(), "text/html; charset=utf-8"),
    "nul": (b"<p>a\x00b</p>", "text/html; charset=utf-8"),
    "xml declaration": (b'<?xml version="1.0"?><p>x</p>', "text/html; charset=utf-8"),
    "unclosed title": ("<title>T\u00edtulo<p>body</p>".encode(), "text/html; charset=utf-8"),
    "blank": (b"  \n ", "text/html; charset=utf-8"),
}


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("page", list(ENCODED_PAGES.values()), ids=list(ENCODED_PAGES))
def test_bytes_handed_over_as_they_are_give_the_decoded_texts_events(
    page: tuple[bytes, str | None], name: str
) -> None:
    """A page whose bytes are its text in UTF-8 goes to the parser as it is (not encoded
    again): the decoder says so only when it is true, and the events are those of the
    text."""
    data, content_type = page
    text, same = _decode_utf8(data, content_type)
    assert text == decode_html(data, content_type)
    assert not same or text.encode("utf-8", "surrogatepass") == data
    assert_same_events(
        read_page(text, reader=name, utf8=data if same else None), read_page(text, reader=name)
    )


def test_utf8_pages_are_handed_over_as_they_are() -> None:
    """The common cases take the short way (a literal U+FFFD is left to the long way:
    it cannot be told from a replaced byte without decoding again)."""
    short = {name for name, page in ENCODED_PAGES.items() if _decode_utf8(*page)[1]}
    assert short == {
        "utf-8 declared", "utf-8 detected", "utf-8 declared latin-1", "ascii declared cp1252",
        "nul", "xml declaration", "unclosed title", "blank",
    }  # fmt: skip


#: Texts :func:`reader.parser_input` may or may not change, with the head's title where
#: the patterns' Unicode readings differ from the bytes' (a dotless i matches "i" without
#: case, "\u00e9" is a letter, no-break space is white space).
PREPARED_TEXTS = [
    "<title>T</title><p>x</p>",
    "<html><head><TITLE lang=en>T\u00edtulo</Title ><body>x",
    "<title>T<p>unclosed</p></title>",
    "<title>T</title><p>a\x00b</p>",
    "  <?xml version='1.0'?><title>T</title>",
    "\u00a0<?xml version='1.0'?><title>T</title>",
    "\x1c<?xml?><title>T</title>",
    "<?xml  <title>T</title> ?>",
    "<p>no title at all</p>",
    "<t\u0131tle>dotless</t\u0131tle><title>T</title>",
    "<t\u0131tle>dotless</title><p>x",
    "<title\u00e9>x</title><title>T</title>",
    "<title>T</title\u00a0><title>U</title>",
    "<title>T</title\u2003>",
    "<title a='>'>T</title>",
    "<title>T</title\n>",
    "<title foo </title>",
    "<title></title>" + "<p>\u4e2d</p>" * 100,
    "<script>x</script><title>T</title>x</title>",
]


@pytest.mark.parametrize("text", PREPARED_TEXTS)
def test_pages_read_from_their_bytes_are_those_the_preparation_leaves(text: str) -> None:
    """The bytes alone (and their head's text) say a page needs no preparation only when
    :func:`reader.parser_input` leaves its text as it is."""
    if reader._prepared_as_is(text.encode()):
        assert reader.parser_input(text) == text


@needs_kernel
def test_the_kernels_utf8_check_is_that_of_decoding() -> None:
    """``utf8_valid`` accepts what ``bytes.decode("utf-8")`` accepts: every lead byte with
    every second byte and the tails that end, cut or break a sequence, after ASCII or not
    (the eight-byte stride), and every character's encoding."""
    kernel = reader._KERNEL
    assert kernel is not None

    def decodes(data: bytes) -> bool:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    tails = (b"", b"\x80", b"\xbf\x80", b"\x80\x80\x80", b"a", b"\xc0")
    for lead in range(256):
        for second in range(256):
            for before in (b"", b"abcdefgh"):
                for tail in tails:
                    data = before + bytes((lead, second)) + tail
                    assert kernel.utf8_valid(data) == decodes(data), data
    for code in range(0, 0x110000, 3):
        if not 0xD800 <= code <= 0xDFFF:
            assert kernel.utf8_valid(chr(code).encode() * 3)


#: More pages for the choice of encoding: meta charsets, an HTTP charset over a meta one,
#: UTF-16 with and without a byte order mark, a declaration w3lib does not know.
CHARSET_PAGES: dict[str, tuple[bytes, str | None]] = {
    **ENCODED_PAGES,
    "meta utf-8": ('<meta charset="utf-8"><p>\u00e9</p>'.encode(), None),
    "meta latin-1 over utf-8": ('<meta charset="latin-1"><p>\u00e9</p>'.encode(), None),
    "meta koi8-r": ('<meta charset="koi8-r"><p>\u00e9</p>'.encode(), None),
    "http utf-8 over meta koi8-r": (
        '<meta charset="koi8-r"><p>\u00e9</p>'.encode(),
        "text/html; charset=utf-8",
    ),
    "http koi8-r over meta utf-8": (b'<meta charset="utf-8"><p>x</p>', "text/html; charset=koi8-r"),
    "utf-16 declared": ("<p>x</p>".encode("utf-16-be"), "text/html; charset=utf-16"),
    "utf-16 with bom": ("<p>x</p>".encode("utf-16"), None),
    "unknown charset": (b'<meta charset="no-such"><p>x</p>', None),
    "utf8 label": ("<p>\u00e9</p>".encode(), "text/html; charset=utf8"),
}


@pytest.mark.parametrize("page", list(CHARSET_PAGES.values()), ids=list(CHARSET_PAGES))
def test_bytes_said_to_be_read_as_utf8_are(page: tuple[bytes, str | None]) -> None:
    """Where :func:`_utf8_reading` says so, well-formed UTF-8 bytes decode (as Scrapy
    does, w3lib choosing the encoding) to their UTF-8 reading, and a page read by the
    Document from its bytes gives the events of its decoded text."""
    data, content_type = page
    if _utf8_reading(data, content_type) and decodes_as_utf8(data):
        assert _decode(data, content_type) == data.decode("utf-8")
    document = Document(data, content_type=content_type)
    assert_same_events(document.page, read_page(_decode(data, content_type)))


def decodes_as_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


#: A page with a title, as bytes that are read from their bytes (True) or decoded first.
TITLED = "<html><head><title>T\u00edtulo</title></head><body><p>caf\u00e9 \ufffd</p>"
TITLED_PAGES: list[tuple[bytes, str | None, bool]] = [
    (TITLED.encode(), None, False),  # no charset declared: the detection's, decoded
    (TITLED.encode(), "text/html; charset=utf-8", True),
    (TITLED.encode(), "text/html; charset=windows-1252", True),
    (TITLED.encode("latin-1", "replace"), "text/html; charset=windows-1252", False),
    (TITLED.encode() + b"\xff", "text/html; charset=utf-8", False),
    (b"\xef\xbb\xbf" + TITLED.encode(), None, False),
    (TITLED.replace("caf", "c\x00af").encode(), None, False),
    (TITLED.replace("</title>", "").encode(), None, False),
    (TITLED.encode(), "text/html; charset=koi8-r", False),
]


@pytest.mark.parametrize(
    ("data", "content_type", "as_bytes"),
    TITLED_PAGES,
    ids=[
        "utf-8 undeclared", "utf-8 declared", "utf-8 declared cp1252", "cp1252", "invalid utf-8",
        "byte order mark", "nul", "unclosed title", "utf-8 declared koi8-r",
    ],
)  # fmt: skip
def test_most_pages_are_read_from_their_bytes(
    data: bytes, content_type: str | None, as_bytes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Well-formed UTF-8 pages declared UTF-8 (or a legacy charset) with a closed title go
    to the SAX reader as their bytes, without being decoded; the others (a page that
    declares no charset among them), and every page on the other paths, are decoded. The
    events are those of the decoded text."""
    decoded: list[bytes] = []
    original = document_module._decode_utf8

    def counting(data: bytes, content_type: str | None) -> tuple[str, bool]:
        decoded.append(data)
        return original(data, content_type)

    monkeypatch.setattr(document_module, "_decode_utf8", counting)
    page = Document(data, content_type=content_type).page
    assert (data not in decoded) == (as_bytes and SAX_USED and reader.DEFAULT_READER == "kernel")
    assert_same_events(page, read_page(_decode(data, content_type)))


@needs_kernel
def test_hints_beyond_the_kernels_cache_read_as_the_targets() -> None:
    """The kernel keeps the hints it has lower-cased by their bytes, a bounded number of
    them (emptied when full): a page with more distinct hints than that, repeated, still
    gets the target's hints."""
    classes = [f"Box-{i} \u00c9t\u00e9" for i in range(20_000)]
    body = "".join(f'<div class="{name}" id="I{i % 7}">x</div>' for i, name in enumerate(classes))
    html = f"<html><body>{body}{body[: len(body) // 3]}</body></html>"
    assert_same_events(read_page(html, reader="kernel"), read_page(html, reader="target"))


#: A run of text in many pieces, and the bound of its reading, as a multiple of lxml's
#: parse of the page: stray "<" characters (libxml2 reports each as text of its own) and
#: text between comments (lexbor's tree holds a text node between each two).
MANY_PIECES = {
    "stray-lt": ("<html><body><p>" + "< " * 500_000 + "</p></body></html>", 40),
    "between-comments": ("<html><body><p>" + "a<!---->" * 400_000 + "</p></body></html>", 6),
}


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("page", list(MANY_PIECES))
def test_a_run_of_text_in_many_pieces_is_read_in_linear_time(name: str, page: str) -> None:
    """Found by fuzzing: the pieces were added to the run one by one, each copying the run
    so far (1 MB of "< " took the target 12 s, 560 times lxml's parse; text between
    400,000 comments took lexbor's walks 13 times it)."""
    html, ratio = MANY_PIECES[page]
    start = time.perf_counter()
    etree.fromstring(html.encode(), etree.HTMLParser(huge_tree=True))
    parse = time.perf_counter() - start
    start = time.perf_counter()
    events = read_page(html, reader=name)
    seconds = time.perf_counter() - start
    assert seconds <= ratio * parse + 0.1, f"{seconds:.2f} s, lxml's parse {parse:.3f} s"
    text = "".join(html.split("<p>")[1].split("</p>")[0].split("<!---->"))
    assert events.texts == [text]


#: Pages of 100,000 distinct names, of attributes and of elements.
MANY_NAMES = {
    "attributes": "<html><body>" + "".join(f"<i a{i}=b>x</i>" for i in range(100_000)),
    "elements": "<html><body>" + "".join(f"<x-t{i}>x</x-t{i}>" for i in range(100_000)),
}


@needs_kernel
@pytest.mark.parametrize("walk", ["SAX reader", "tree walk"])
@pytest.mark.parametrize("page", list(MANY_NAMES))
def test_thousands_of_distinct_names_are_coded_in_linear_time(walk: str, page: str) -> None:
    """Found by fuzzing: the kernel's table of name codes put names close together in
    libxml2's dictionary in one slot, and its probes grew with every new name (100,000
    attribute or element names: 17 to 94 times lxml's parse of the page)."""
    html = MANY_NAMES[page]
    start = time.perf_counter()
    etree.fromstring(html.encode(), etree.HTMLParser(huge_tree=True))
    parse = time.perf_counter() - start
    start = time.perf_counter()
    if walk == "SAX reader":
        events = read_page(html, reader="kernel")
    else:
        events = reader._read_tree(html, lambda: None)
    seconds = time.perf_counter() - start
    assert seconds <= 8 * parse + 0.05, f"{seconds:.2f} s, lxml's parse {parse:.3f} s"
    assert len(events.tags) == 100_002  # html, body and the names'


def test_title_text_and_json_ld_sources_are_read_once_per_page() -> None:
    # The first <title>'s text and the JSON-LD scripts' sources, as text_under and
    # own_text give them, kept on the page for the metadata and the overview detector.
    html = (
        "<html><head><title> The  first\ntitle </title>"
        '<script type="application/ld+json">{"@type": "NewsArticle"}</script>'
        "<script>var x = 1;</script>"
        '<script type="application/ld+json">[{"@type": "WebSite"}]</script>'
        "</head><body><title>Second</title><p>Text</p></body></html>"
    )
    page = Document(html).page
    assert page.title_text == "The first title" == page.text_under(page.tags.index("title"))
    assert page.json_ld_sources == ['{"@type": "NewsArticle"}', '[{"@type": "WebSite"}]']
    assert page.json_ld_sources == [page.own_text(s) for s in page.attributes.json_ld]
    assert Document("<html><body><p>No title</p></body></html>").page.title_text == ""
