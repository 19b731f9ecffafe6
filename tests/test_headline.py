"""The headline is ``Extraction.title`` and never the head of ``text`` (headline.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scrapy_tagratio import ALGORITHMS, extract
from scrapy_tagratio.algorithms.tagratio import TagRatio
from scrapy_tagratio.document import Document
from scrapy_tagratio.headline import without_leading_headline

PARAGRAPHS = "".join(
    f"<p>Paragraph {i}: the new quay opened on Monday after three years of work, and the "
    "ferries to the islands will now run twice as often in summer.</p>"
    for i in range(6)
)


def page(article_head: str, above: str = "") -> str:
    return (
        "<html><head><title>Quay opens to ferries | Harbour News</title>"
        '<meta property="og:title" content="Quay opens to ferries"></head><body>'
        + "<nav>"
        + "".join(f"<a href='/s{i}'>Section {i}</a> " for i in range(10))
        + f"</nav>{above}<article>{article_head}{PARAGRAPHS}</article>"
        "<footer>Imprint · Privacy</footer></body></html>"
    )


def words(text: str | None) -> list[str]:
    return re.findall(r"\w+", (text or "").casefold())


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_a_headline_inside_the_article_is_the_title_not_the_texts_first_line(name: str) -> None:
    result = extract(page("<h1>Quay opens to ferries</h1>"), algorithm=name, with_markdown=True)
    assert result.title == "Quay opens to ferries"
    assert words(result.text)[:4] != ["quay", "opens", "to", "ferries"], result.text[:80]
    assert "Paragraph 3: the new quay opened" in result.text
    if result.html is not None:
        assert "<h1" not in result.html and "Paragraph 0" in result.html
        assert "Quay opens to ferries" not in (result.markdown or "")


def test_a_first_block_that_differs_from_the_headline_stays() -> None:
    kicker = "<h2>Quay opens to ferries, and the islanders celebrate</h2>"
    result = extract(page(kicker))
    assert result.title == "Quay opens to ferries"
    assert result.text.startswith("Quay opens to ferries, and the islanders celebrate")


def test_the_algorithms_blocks_and_figures_stay_its_own() -> None:
    # The papers' quantities (net text length, content share) count what the algorithm
    # kept, the headline's block included; only the text outputs leave it out.
    inside, above = extract(page("<h1>Quay opens to ferries</h1>")), extract(page(""))
    assert inside.text == above.text
    assert inside.net_text_length == above.net_text_length + len("Quay opens to ferries")
    assert any(b.tag == "h1" and b.is_content for b in inside.blocks)


@pytest.mark.parametrize(
    "head",
    ["<h1>Quay opens to ferries</h1>", "<h1>Quay opens<div>Harbour archive</div> to ferries</h1>"],
)
def test_the_text_without_the_headline_is_the_text_of_its_content(head: str) -> None:
    # A headline block holding no other block element is the text's first line, and the
    # text is the labelling's without it (not built again); a block inside it splits its
    # text over lines, and the text is built again.
    document = Document.from_input(page(head))
    labelling = TagRatio().run(document)
    output = without_leading_headline(document, labelling, "Quay opens to ferries")
    assert output is not labelling
    assert output.content_nodes is not None
    assert output.text == document.text_of(output.content_nodes)
    assert "Quay opens" not in output.text and "Paragraph 0:" in output.text


def test_a_heading_the_title_carries_with_the_site_name_is_left_out_without_metadata() -> None:
    html = page("<h1>Quay opens to ferries</h1>").replace(
        '<meta property="og:title" content="Quay opens to ferries">', ""
    )
    result = extract(html, metadata=False)
    assert result.title == "Quay opens to ferries | Harbour News"
    assert result.text.startswith("Paragraph 0")


def test_no_development_article_text_starts_with_its_headline(benchmark_set: Any) -> None:
    data = benchmark_set("fundus")
    for page_id in data.page_ids("fundus", limit=40):
        loaded = data.load_page("fundus", page_id)
        result = extract(loaded.html, url=loaded.url)
        headline = words(result.title)
        assert headline, page_id
        first_line = result.text.split("\n", 1)[0]
        assert words(first_line) != headline, (page_id, result.title)
