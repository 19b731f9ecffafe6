"""Markdown output (issue 17): the structure of the extracted content survives.

On real pages of the development sets the page's own headings, list items and data tables
(read with lxml's tree, independently of the extractor's walk) are checked against the
Markdown wherever the extractor kept their text; on a constructed page, every construct.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import numpy as np
import pytest
from badinput import cases
from conftest import REPO
from lxml import html as lxml_html

from scrapy_tagratio import ExtractionError, extract
from scrapy_tagratio.__main__ import main
from scrapy_tagratio.document import Document
from scrapy_tagratio.formats import markdown_of

PARAGRAPH = (
    "<p>The harbour board met on Tuesday evening and agreed that the works on the quay "
    "should start in spring, before the summer season brings the ferries back.</p>"
)


def words(text: str) -> str:
    return " ".join(text.split())


def unmarked(line: str) -> str:
    """A Markdown line without quote prefixes and emphasis markers."""
    return words(re.sub(r"\*\*|\*|`", "", re.sub(r"^(?:> )+", "", line)))


_LIST_ITEM = re.compile(r"(?:-|\d+\.) (.*)")


def structure(html: bytes, url: str | None) -> dict[str, tuple[int, int]]:
    """(found in the Markdown, kept by the extractor) for the page's headings, list items
    (without nested blocks, outside tables) and the first rows of its data tables."""
    result = extract(html, url=url, with_markdown=True)
    assert result.markdown is not None
    kept_lines = set(result.text.split("\n"))
    lines = [unmarked(line) for line in result.markdown.split("\n")]
    tree = lxml_html.fromstring(html)
    headings = [
        (int(e.tag[1]), words(e.text_content()))
        for e in tree.iter("h1", "h2", "h3", "h4", "h5", "h6")
    ]
    # The headline is Extraction.title, not a heading of the text (a line of the text can
    # still read the same: a table's cell that names the article's subject).
    headings = [(level, text) for level, text in headings if text in kept_lines - {result.title}]
    items = [
        words(e.text_content())
        for e in tree.iter("li")
        if not e.xpath(".//ul|.//ol|.//table|.//p|.//div|ancestor::table")
    ]
    items = [text for text in items if text and text in kept_lines]
    rows = []
    for table in tree.iter("table"):
        first = table.xpath(".//tr")[:1]
        cells = [words(c.text_content()) for c in first[0].xpath("./td|./th")] if first else []
        if len(cells) > 1 and all(c in kept_lines for c in cells if c) and any(cells):
            rows.append(unmarked("| " + " | ".join(cells)))
    listed = {m.group(1) for m in map(_LIST_ITEM.fullmatch, lines) if m}
    return {
        "headings": (sum(f"{'#' * n} {t}" in lines for n, t in headings), len(headings)),
        "items": (sum(t in listed for t in items), len(items)),
        "tables": (sum(any(m.startswith(row) for m in lines) for row in rows), len(rows)),
    }


@pytest.mark.benchmark_data
@pytest.mark.parametrize(
    ("dataset", "page_id", "at_least"),
    [
        # (The page's h1 is its headline: Extraction.title, not in the text.)
        ("readability", "readability__blogger", {"headings": 6, "items": 22}),
        ("readability", "readability__keep-tabular-data", {"headings": 6, "items": 6, "tables": 1}),
        ("readability", "readability__wikipedia-2", {"headings": 10, "items": 300, "tables": 1}),
        ("fundus", "ch__NZZ_2024_07_18", {"headings": 15, "items": 4}),
        # (Its list of foods is the article's: the Province's lists, once used here, were
        # its subscription prompts, hidden by class and cleaned.)
        ("fundus", "us__WorldTruth_2023_04_28", {"headings": 4, "items": 11}),
    ],
)
def test_real_pages_keep_headings_lists_and_tables(
    benchmark_set: Any, dataset: str, page_id: str, at_least: dict[str, int]
) -> None:
    page = benchmark_set(dataset).load_page(dataset, page_id)
    found = structure(page.html, page.url)
    for kind, (in_markdown, kept) in found.items():
        # A list item's text can also be a line of its own elsewhere on the page (kept
        # there): one in a hundred may be such a case.
        assert in_markdown >= kept - kept // 100, (kind, found)
        assert kept >= at_least.get(kind, 0), (kind, found)


@pytest.mark.benchmark_data
def test_code_in_single_cell_tables_becomes_code_blocks(benchmark_set: Any) -> None:
    page = benchmark_set("readability").load_page("readability", "readability__002")
    markdown = extract(page.html, url=page.url, with_markdown=True).markdown
    assert markdown is not None and markdown.count("```\n") >= 20
    assert "| --- |" not in markdown


def markdown_of_page(html: str) -> str:
    """The Markdown of a whole page (every element kept: the writer alone is tested)."""
    document = Document.from_input(html)
    return markdown_of(document, np.ones(len(document.nodes), dtype=bool))


def test_every_construct_on_a_constructed_page() -> None:
    html = (
        "<html><body><article><h1>Quay works</h1>" + PARAGRAPH * 3
        + "<h2>The <em>plan</em></h2><p>Work starts in <strong>March </strong>and ends "
        "<i></i>in May.</p>"
        "<ul><li>Dredging the berth</li><li>New fenders<ul><li>Timber</li></ul></li></ul>"
        "<ol><li>Survey</li><li>Tender</li></ol>"
        "<table><tr><th>Phase</th><th></th><th>Cost</th></tr>"
        "<tr><td>Dredging</td><td>spring</td><td>1 | 2 m</td></tr></table>"
        "<blockquote><p>We are ready to start.</p></blockquote>"
        "<pre>line one\n  line two</pre>" + PARAGRAPH * 3 + "</article></body></html>"
    )  # fmt: skip
    markdown = markdown_of_page(html)
    expected = [
        "# Quay works",
        "## The *plan*",
        "Work starts in **March** and ends in May.",
        "- Dredging the berth\n- New fenders\n   - Timber",
        "1. Survey\n2. Tender",
        "| Phase |  | Cost |\n| --- | --- | --- |\n| Dredging | spring | 1 \\| 2 m |",
        "> We are ready to start.",
        "```\nline one\n  line two\n```",
    ]
    position = 0
    for block in expected:
        found = markdown.find(block, position)
        assert found >= 0, (block, markdown)
        position = found + len(block)


def test_nested_emphasis_keeps_its_spaces_outside_the_markers() -> None:
    html = (
        "<html><body><article>" + PARAGRAPH * 3
        + "<p>Then <b> the <i>works </i></b>start, <strong> </strong>at last.</p>"
        + PARAGRAPH * 3 + "</article></body></html>"
    )  # fmt: skip
    assert "Then **the *works*** start, at last." in markdown_of_page(html)


def test_nested_emphasis_costs_time_linear_in_its_depth() -> None:
    """Closing each of n nested emphases once joined all the text inside it (quadratic:
    100,000 levels took 4.5 s, 25 times the extraction without Markdown; found by
    fuzzing). Eight times the depth must cost about eight times the time, not 64."""

    def seconds(depth: int) -> float:
        page = "<html><body><p>" + "<b>a " * depth + "</b>" * depth + "</p></body></html>"
        start = time.perf_counter()
        extract(page, with_markdown=True, metadata=False)
        return time.perf_counter() - start

    seconds(1_000)  # warm
    small, large = min(seconds(10_000) for _ in range(2)), seconds(80_000)
    assert large <= 20 * small, (small, large)


def test_a_layout_table_is_read_as_blocks() -> None:
    html = (
        "<html><body><table><tr><td><h1>Quay works</h1>" + PARAGRAPH * 6
        + "</td></tr></table></body></html>"
    )  # fmt: skip
    markdown = markdown_of_page(html)
    assert markdown.startswith("# Quay works\n\nThe harbour board")
    assert "|" not in markdown


def test_cli_format_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    page = REPO / "example_project" / "site" / "local" / "library-reopens.html"
    assert main(["extract", str(page), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    # The headline is the extraction's title, not the text's first line.
    assert out.startswith("Children's room rebuilt and the local history collection saved.\n\n")
    assert "Alderwick library reopens seven months after flood" not in out


LIGHT_CASES = {name: case for name, case in cases().items() if not case.heavy}


@pytest.mark.parametrize("case_name", sorted(LIGHT_CASES))
def test_bad_input_gives_markdown_and_metadata_or_extraction_error(case_name: str) -> None:
    case = LIGHT_CASES[case_name]
    try:
        result = extract(case.data, content_type=case.content_type, with_markdown=True)
    except ExtractionError:
        return
    assert isinstance(result.markdown, str) and "\x00" not in result.markdown
    if case.word is not None and case.word in result.text:
        assert case.word in result.markdown
    assert result.metadata is not None
    json.dumps(result.metadata.to_dict())
