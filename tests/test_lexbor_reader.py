"""The lexbor reader (:mod:`scrapy_tagratio.lexbor_reader`): its compiled walk gives the
events of its Python walk on every development page; its node tables agree with libxml2's
where the normalisation says they do (implied ``tbody`` and ``head``, markup after
``</html>``); pages lexbor must not read (deep nesting, framesets) go to the linear reader;
a compiled walk that was built for another lexbor, or that reads the probe page wrongly,
is not used."""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from benchmarks import _data
from scrapy_tagratio import lexbor_reader, reader
from scrapy_tagratio.document import Document, decode_html
from scrapy_tagratio.reader import parser_input, read_page
from tests.test_reader import (
    MANY_ATTRIBUTES,
    TRICKY_PAGES,
    assert_read_as_fast_as_the_target,
    assert_same_events,
)

LEXBOR, LEXBOR_STATUS = lexbor_reader.lexbor_status()
WALK, WALK_STATUS = lexbor_reader.lexbor_walk_status()
pytestmark = pytest.mark.skipif(not LEXBOR, reason=LEXBOR_STATUS)
needs_walk = pytest.mark.skipif(not WALK, reason=f"compiled lexbor walk: {WALK_STATUS}")
needs_data = pytest.mark.skipif(_data.benchmarks_dir() is None, reason="needs ../shared/benchmarks")


def _no_linear() -> Any:
    raise AssertionError("read by the linear reader")


def both_walks(text: str) -> tuple[Any, Any]:
    """The page read by lexbor's compiled walk and by its Python walk."""
    return tuple(  # type: ignore[return-value]
        lexbor_reader.read_lexbor(
            parser_input(text).encode("utf-8"), _no_linear, lambda: None, compiled
        )
        for compiled in (True, False)
    )


def table(html: str, name: str) -> tuple[tuple[str, ...], list[int], str]:
    """Tags, depths and visible text of the node table, read by reader ``name``."""
    default, reader.DEFAULT_READER = reader.DEFAULT_READER, name
    try:
        document = Document(html)
        nodes = document.nodes
        return nodes.tag, nodes.depth.tolist(), document.full_text
    finally:
        reader.DEFAULT_READER = default


@needs_walk
@pytest.mark.parametrize("html", list(TRICKY_PAGES.values()), ids=list(TRICKY_PAGES))
def test_the_compiled_walk_gives_the_python_walks_events(html: str) -> None:
    assert_same_events(*both_walks(html))


@needs_walk
@pytest.mark.benchmark_data
@needs_data
def test_the_compiled_walk_gives_the_python_walks_events_on_every_development_page() -> None:
    """Every tenth page of the protocol's pool by default; all 1,961 with
    ``TAGRATIO_ALL_PAGES=1`` (CI)."""
    from benchmarks import protocol

    step = 1 if os.environ.get("TAGRATIO_ALL_PAGES") == "1" else 10
    for page in protocol.pool()[::step]:
        try:
            assert_same_events(*both_walks(decode_html(page.html())))
        except AssertionError as exc:
            raise AssertionError(f"{page.key}: {exc}") from None


@pytest.mark.benchmark_data
@needs_data
def test_lexbor_and_libxml2_agree_on_the_visible_text_of_development_pages() -> None:
    """The node tables' visible text, white space aside, is libxml2's on all but a few
    pages of the pool (every tenth page; all with ``TAGRATIO_ALL_PAGES=1``). Where it is
    not, HTML5 reads the page differently: ``</br>`` is a line break there, a BOM inside
    the page is text, text between two ``</html>`` is kept, libxml2 reads some script
    code as text. Measured: 9 of 1,961 pages."""
    from benchmarks import protocol

    step = 1 if os.environ.get("TAGRATIO_ALL_PAGES") == "1" else 10
    pages = protocol.pool()[::step]
    differ = []
    for page in pages:
        text = decode_html(page.html())
        lexbor, libxml2 = (table(text, name)[2] for name in ("lexbor", "target"))
        if "".join(lexbor.split()) != "".join(libxml2.split()):
            differ.append(page.key)
    assert len(differ) <= len(pages) // 100, differ


@pytest.mark.parametrize(
    "html",
    [
        "<table><tr><td>a</td><td>b</td></tr></table><table><tr><th>c</th></tr></table>",
        "<html><body><p>x</p></body></html> words<div>after</div>",
        "<html><body><p>x</p></body></html>\n<!-- c -->\n</HTML >",
        "just text, no head",
        "<p>one<!-- c -->two <b>x</b><!--d-->y</p>",
        "<frameset></frameset><body><p>the body libxml2 reads</p></body>",
    ],
    ids=["implied tbody", "after </html>", "case", "no head", "comments", "frameset"],
)
def test_normalised_shapes_agree_with_libxml2(html: str) -> None:
    assert table(html, "lexbor") == table(html, "target")


def test_misnested_formatting_keeps_the_text_in_html5s_shape() -> None:
    """Left as lexbor builds it: HTML5's adoption agency reopens the ``i`` that ``</b>``
    closed, libxml2 does not; the text is the same."""
    html = "<div><b>bold <i>both</b> italic</i> after</div>"
    lexbor, libxml2 = table(html, "lexbor"), table(html, "target")
    assert lexbor[0] == ("body", "div", "b", "i", "i")
    assert libxml2[0] == ("body", "div", "b", "i")
    assert lexbor[2] == libxml2[2]


def test_an_explicit_tbody_is_kept() -> None:
    html = "<table><tbody><tr><td>a</td></tr></tbody></table><table><tr><td>b</td></tr></table>"
    tags = table(html, "lexbor")[0]
    assert tags.count("tbody") == 2  # the one in the source, and lexbor's in the other
    assert table(html, "target")[0].count("tbody") == 1


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        (b"<div>" * 5000, (True, False, -1)),
        (b"<div>x</div>" * 5000, (False, False, -1)),
        (b"<p>" * 5000 + b"<span>" * 5000, (False, False, -1)),
        (b"<SECTION class=a>" * 4097, (True, False, -1)),
        (b"<table><TBODY class=x><tr>", (False, True, -1)),
        (
            b"<tbodyx><p></html>z</html\n a=1>q",
            (False, False, len(b"<tbodyx><p></html>z</html\n a=1>")),
        ),
        (b"<frameset cols=2>", (True, False, -1)),
        (b"", (False, False, -1)),
        (b"<select>" + b"<Option value=1>o" * 4097, (True, False, -1)),
        (b"<select>" + b"<option>o</option>" * 4096 + b"<optionx>", (False, False, -1)),
        (b"<i " + b" ".join(b"a%d" % i for i in range(10_001)) + b">", (True, False, -1)),
        (b"<i " + b" ".join(b"a%d" % i for i in range(10_000)) + b">", (False, False, -1)),
        # A quoted ">" does not end the tag (lexbor reads on), nor does "<" start one.
        (b"<i " + b' t=">"<b '.join(b"a%d" % i for i in range(5_001)) + b">", (True, False, -1)),
        (b"<i a='" + b" x" * 20_000 + b"'>", (False, False, -1)),
    ],
    ids=[
        *("deep", "flat", "p and span", "upper case", "tbody", "html end", "frameset"),
        *("empty", "many options", "options up to the limit", "many attributes"),
        *("attributes up to the limit", "attributes past quoted brackets", "one long value"),
    ],
)
def test_the_markup_scan_finds_what_lexbor_must_not_read(
    markup: bytes, expected: tuple[bool, bool, int], compiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if compiled and not WALK:
        pytest.skip(WALK_STATUS)
    if not compiled:
        monkeypatch.setattr(lexbor_reader, "_KERNEL", None)
    assert lexbor_reader.scan_markup(markup) == expected


@needs_walk
@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b"<", b">", b"a", b"B", b" ", b"\n", b'"', b"'", b"/", b"="])))
def test_both_counts_of_attributes_agree(pieces: list[bytes]) -> None:
    markup = b"".join(pieces)
    kernel = lexbor_reader._KERNEL
    assert kernel is not None
    assert kernel.most_attributes(markup) == lexbor_reader._most_attributes(markup)


def test_an_element_of_a_hundred_thousand_attributes_takes_the_linear_path() -> None:
    """Found by fuzzing: lexbor compares each attribute of an element with the others
    (100,000 distinct ones: 21 s); the reader hands such a page to libxml2's parser
    target."""
    assert_read_as_fast_as_the_target(MANY_ATTRIBUTES, "lexbor")


@pytest.mark.slow
def test_deep_nesting_takes_the_linear_path() -> None:
    """100,000 nested ``div``: lexbor would take tens of seconds (quadratic); the reader
    hands the page to libxml2's parser target, which reads every level."""
    html = "<div>" * 100_000 + "deep" + "</div>" * 100_000
    start = time.perf_counter()
    page = read_page(html, reader="lexbor")
    assert time.perf_counter() - start < 10
    assert_same_events(page, read_page(html, reader="target"))


def test_a_select_of_thousands_of_options_takes_the_linear_path() -> None:
    """Found by fuzzing: lexbor is quadratic in the options of one ``select`` (20,000,
    a 360 KB page: 1.5 s; 100,000: 51 s); the reader hands such a page to libxml2's
    parser target, in about the time lxml parses it."""
    html = "<html><body><select>" + "<option>o</option>" * 20_000 + "</select><p>after</p>"
    start = time.perf_counter()
    etree.fromstring(html.encode(), etree.HTMLParser())
    parse = time.perf_counter() - start
    start = time.perf_counter()
    page = read_page(html, reader="lexbor")
    seconds = time.perf_counter() - start
    assert seconds <= 20 * parse + 0.1, f"{seconds:.2f} s, lxml's parse {parse:.3f} s"
    assert_same_events(page, read_page(html, reader="target"))


def test_a_page_above_the_size_limit_is_read_without_a_tree(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As with libxml2's tree: lexbor's, held beside the events, would cost more memory
    than the events (the target holds no tree)."""
    monkeypatch.setattr(reader, "KERNEL_MAX_CHARS", 1_000)
    html = "<p>a</br>b</p>" * 200  # HTML5 reads </br> as <br>, libxml2 drops it
    assert "br" not in read_page(html, reader="lexbor").tags  # libxml2's parse
    monkeypatch.setattr(reader, "KERNEL_MAX_CHARS", 100_000)
    assert "br" in read_page(html, reader="lexbor").tags


@needs_walk
def test_a_walk_built_for_another_lexbor_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lexbor_reader, "_version", lambda: "0.0.1")
    kernel, why = lexbor_reader._load_walk()
    assert kernel is None
    assert "running" in why


@needs_walk
def test_a_walk_that_reads_the_probe_page_wrongly_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a changed node layout would do (read other fields): the probe page catches it."""
    kernel = lexbor_reader.lexbor_walk_kernel()
    walk = kernel.walk_lexbor  # type: ignore[union-attr]

    def skewed(root: int, recorder: Any, *args: Any) -> None:
        walk(root, recorder, *args)
        recorder.texts.append("garbage")

    monkeypatch.setattr(kernel, "walk_lexbor", skewed)
    refused, why = lexbor_reader._load_walk()
    assert refused is None
    assert "differently" in why


def test_lexbor_is_chosen_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(reader.READER_VARIABLE, "lexbor")
    assert reader._default_reader() == "lexbor"


def test_the_compiled_walk_is_there_where_ci_builds_it() -> None:
    """CI sets TAGRATIO_EXPECT_KERNEL=1 where it builds the kernel beside selectolax."""
    if os.environ.get("TAGRATIO_EXPECT_KERNEL") != "1":
        pytest.skip("TAGRATIO_EXPECT_KERNEL is not set")
    assert WALK, WALK_STATUS


@needs_walk
@pytest.mark.parametrize(
    "html",
    [
        "<p>a<math><style><x>inner</x> tail</style></math>b</p>",
        "<svg><script><g>inner</g>code</script></svg><p>after</p>",
        "<math><style><x>\x1b",
    ],
    ids=["math style", "svg script", "fuzzed"],
)
def test_both_walks_read_elements_inside_a_foreign_style_or_script_alike(html: str) -> None:
    """Found by fuzzing: in svg and math, lexbor's ``style`` and ``script`` are elements
    that hold elements; the Python walk's recorder kept skipping text inside those, the
    compiled walk read it (as after every element's start)."""
    compiled, python = both_walks(html)
    assert_same_events(compiled, python)
    assert any("inner" in text or "\x1b" in text for text in python.texts)
