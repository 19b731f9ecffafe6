"""The public API: extract(), Extraction, ExtractionError and its kinds."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import time
from dataclasses import dataclass
from typing import Any

import pytest
from lxml import etree

import scrapy_tagratio
import scrapy_tagratio.api
from scrapy_tagratio import (
    ALGORITHMS,
    Block,
    Extraction,
    ExtractionError,
    OverviewDetector,
    extract,
)
from scrapy_tagratio.algorithms.base import Labelling
from scrapy_tagratio.document import Document
from scrapy_tagratio.overview import OverviewVerdict

ARTICLE = (
    "<html><head><title>Harbour news</title></head><body><nav>"
    + "".join(f"<a href='/s{i}'>Section {i}</a> " for i in range(10))
    + "</nav><article><h1>Quay opens</h1>"
    + "".join(
        f"<p>Paragraph {i}: the new quay opened on Monday after three years of work, "
        "and the ferries to the islands will now run twice as often in summer.</p>"
        for i in range(6)
    )
    + "</article><footer>Imprint · Privacy</footer></body></html>"
)


def test_public_names() -> None:
    for name in ("extract", "Extraction", "Block", "ExtractionError", "ALGORITHMS", "Addon",
                 "Metadata"):  # fmt: skip
        assert hasattr(scrapy_tagratio, name), name
    expected = {"cetr", "ccb", "accb", "tccb", "cetd", "cectd", "cectd-s", "textsweeper"}
    assert expected <= set(ALGORITHMS)


@pytest.mark.parametrize(
    "url", ["http://[::1/news", "https://[consent-preferences]/cookies", "//[", "http://[x]/"]
)
def test_a_url_urllib_cannot_parse_still_gives_the_extraction(url: str) -> None:
    # urllib raises ValueError on these (an unbalanced or non-address "[...]" host); the
    # URL then feeds no evidence, and the page is extracted as without one.
    page = ARTICLE.replace("</head>", "<link rel='canonical' href='/news/quay-opens'></head>")
    found = extract(page, url=url)
    assert "Paragraph 3: the new quay opened" in found.text
    assert found.url == url
    assert found.metadata.canonical_url == "/news/quay-opens"
    assert found.overview_verdict == extract(page).overview_verdict


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_params_are_the_dataclass_fields_and_a_fresh_dict(name: str) -> None:
    # params() reads the fields without asdict's deep copy (they are all plain values);
    # extract() without parameters shares one default instance, never its params dict.
    algorithm = ALGORITHMS[name]()
    assert algorithm.params() == dataclasses.asdict(algorithm)
    assert list(algorithm.params()) == [f.name for f in dataclasses.fields(algorithm)]
    first = extract(ARTICLE, algorithm=name)
    first.params["changed"] = True  # type: ignore[index]
    assert extract(ARTICLE, algorithm=name).params == algorithm.params()


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_algorithm_returns_a_complete_extraction(name: str) -> None:
    result = extract(ARTICLE, algorithm=name, url="https://example.org/news/quay-opens")
    assert isinstance(result, Extraction)
    assert result.algorithm == name
    assert "Paragraph 3: the new quay opened" in result.text
    assert result.title == "Harbour news"
    assert result.params == ALGORITHMS[name]().params()
    assert result.url == "https://example.org/news/quay-opens"
    assert 0 < result.content_share <= 1 and result.net_text_length > 0
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert {"text", "algorithm", "params", "is_overview", "blocks", "net_text_length"} <= set(data)
    assert pickle.loads(pickle.dumps(result)).text == result.text
    assert result.blocks and any(b.is_content for b in result.blocks)


@pytest.mark.parametrize("score", [math.inf, -math.inf, math.nan])
def test_a_block_with_a_score_json_cannot_hold_gives_none(score: float) -> None:
    # CETD's composite density is infinite on a page without links: Block.to_dict() is
    # JSON-ready on its own (strict JSON has no Infinity or NaN), as Extraction.to_dict().
    block = Block("node", 0, score, True, 12, "p")
    assert block.to_dict()["score"] is None
    json.dumps(block.to_dict(), allow_nan=False)


def test_a_parsed_tree_gives_the_same_result_as_bytes() -> None:
    # parsed as Scrapy parses it: the decoded text, as UTF-8
    root = etree.fromstring(ARTICLE.encode(), parser=etree.HTMLParser(encoding="utf-8"))
    from_tree = extract(root)
    from_bytes = extract(ARTICLE.encode())
    assert from_tree.text == from_bytes.text
    assert from_tree.figures() == from_bytes.figures()


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        (lambda: extract(b"\x89PNG\r\n\x1a\n" + bytes(300)), "not_html"),
        (lambda: extract(ARTICLE.encode(), max_bytes=100), "too_large"),
        (lambda: extract(ARTICLE * 200, algorithm="ccb", time_budget=0.0), "time_budget"),
        (lambda: extract(ARTICLE, algorithm="nope"), "bad_parameter"),
        (lambda: extract(ARTICLE, algorithm=""), "bad_parameter"),  # None is the default
        (lambda: extract(ARTICLE, algorithm="cetr", k=-1), "bad_parameter"),
        (lambda: extract(ARTICLE, algorithm="cetd", colour="red"), "bad_parameter"),
    ],
)
def test_errors_say_their_kind(call, kind: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ExtractionError) as caught:
        call()
    assert caught.value.kind == kind
    copy = pickle.loads(pickle.dumps(caught.value))
    assert copy.kind == kind and str(copy) == str(caught.value)


@pytest.mark.parametrize(
    ("argument", "value"),
    [
        ("url", 5),
        ("url", b"https://example.org/"),
        ("content_type", 5),
        ("max_bytes", -1),
        ("max_bytes", 2.5),
        ("max_bytes", True),
        ("time_budget", "5"),
        ("time_budget", -1),
        ("time_budget", float("nan")),
        ("now", "2024-01-01"),
        ("overview", "combined"),
        ("site_memory", {}),
    ],
)
def test_a_bad_argument_value_is_a_bad_parameter(argument: str, value: Any) -> None:
    # These raised AttributeError or TypeError, or went on silently (a NaN budget, a
    # date given as a string), or said "too_large" for a negative maximum.
    with pytest.raises(ExtractionError, match=f"^{argument} must be") as caught:
        extract(ARTICLE.encode(), **{argument: value})
    assert caught.value.kind == "bad_parameter"


@pytest.mark.parametrize("page", [None, 5, [ARTICLE], {"html": ARTICLE}])
def test_a_page_of_another_type_is_a_bad_parameter(page: Any) -> None:
    # These said kind "extraction", which the README does not list for extract().
    with pytest.raises(ExtractionError, match=r"^cannot extract from") as caught:
        extract(page)
    assert caught.value.kind == "bad_parameter"


def test_a_scrapy_response_selector_or_path_is_refused_with_what_to_give() -> None:
    # "cannot extract from HtmlResponse: give str, bytes or an lxml element" left the
    # user to find the response's body, the selector's root, the file's bytes.
    from pathlib import Path

    from scrapy.http import HtmlResponse

    response = HtmlResponse("https://example.org/a", body=ARTICLE.encode())
    for page, hint in [
        (response, "extract(response.body, url=response.url"),
        (response.selector, "of a Selector: its .root"),
        (Path("page.html"), "path.read_bytes()"),
    ]:
        with pytest.raises(ExtractionError, match=r"^cannot extract from") as caught:
            extract(page)
        assert caught.value.kind == "bad_parameter"
        assert hint in str(caught.value)
    assert extract(response.body, url=response.url).text == extract(ARTICLE).text


def test_the_content_type_may_be_scrapys_header_bytes() -> None:
    # response.headers.get("Content-Type") is bytes: it raised TypeError.
    page = ARTICLE.replace("Paragraph", "Caf\u00e9 cr\u00e8me").encode("cp1252")
    found = extract(page, content_type=b"text/html; charset=cp1252")
    assert "Caf\u00e9 cr\u00e8me 3: the new quay" in found.text
    assert found.text == extract(page, content_type="text/html; charset=cp1252").text


#: Longer than the small page's analysis takes even on a loaded machine, shorter than the
#: pause of the slow stage below.
BUDGET, PAUSE = 0.3, 0.5


@dataclass(frozen=True)
class SlowDetector(OverviewDetector):
    """The default detector, then a pause past the page's time budget."""

    def detect(self, document: Document, labelling: Labelling) -> OverviewVerdict:
        verdict = super().detect(document, labelling)
        time.sleep(PAUSE)
        return verdict


def test_the_time_budget_holds_after_the_overview_detection() -> None:
    """The stages after the algorithm check the budget too: a page whose budget ran out in
    the detector is not read further (metadata, text and HTML outputs)."""
    assert extract(ARTICLE, time_budget=BUDGET).overview_verdict == "content"
    with pytest.raises(ExtractionError, match="during the overview detection") as caught:
        extract(ARTICLE, time_budget=BUDGET, overview=SlowDetector())
    assert caught.value.kind == "time_budget"


def test_the_time_budget_holds_after_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    read_metadata = scrapy_tagratio.api.read_metadata

    def slow_read_metadata(*args: Any, **kwargs: Any) -> Any:
        found = read_metadata(*args, **kwargs)
        time.sleep(PAUSE)
        return found

    monkeypatch.setattr(scrapy_tagratio.api, "read_metadata", slow_read_metadata)
    with pytest.raises(ExtractionError, match="during the metadata"):
        extract(ARTICLE, time_budget=BUDGET)
    assert extract(ARTICLE, time_budget=BUDGET, metadata=False).text


def test_empty_and_textless_pages_give_empty_results() -> None:
    for page in ("", "<html><body></body></html>", "<html><body><img src=x></body></html>"):
        for name in ALGORITHMS:
            assert extract(page, algorithm=name).text == "", (page, name)


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_soft_hyphens_leave_the_words(name: str) -> None:
    """A soft hyphen (``&shy;``, U+00AD) marks where a word may break and is shown only
    there: the text and the Markdown hold the words without it, whichever algorithm read
    the page."""
    word = "Mit&shy;tel&shy;al&shy;ter"
    paragraph = (
        f"<p>Schon im {word} war der Wein von den Hängen oberhalb der Stadt bekannt, und "
        f"die Winzer verkauften ihn im {word} bis nach Augsburg und Nürnberg.</p>"
    )
    html = f"<html><body><article><h1>Der Wein</h1>{paragraph * 6}</article></body></html>"
    found = extract(html, algorithm=name, with_markdown=True)
    assert "Mittelalter" in found.text and "\xad" not in found.text
    assert found.markdown is not None and "Mittelalter" in found.markdown
    assert "\xad" not in found.markdown


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_decomposed_letters_come_out_composed(name: str) -> None:
    """A page may write "é" as "e" and a combining acute accent (U+0301): the text, the
    Markdown and the title are in Unicode normalization form C, so the word reads as the
    same word precomposed (and ``\\w+`` finds it whole); the cleaned HTML keeps the
    page's characters."""
    decomposed, composed = "Cafe\u0301 de\u0301couvert", "Café découvert"
    paragraph = (
        f"<p>Le {decomposed} au coin de la rue sert un café noir aux ouvriers du port "
        "depuis le matin, et le soir il reste ouvert pour les marins qui rentrent.</p>"
    )
    html = (
        f"<html><head><title>{decomposed}</title></head><body><article>"
        f"<h1>Un autre titre</h1>{paragraph * 6}</article></body></html>"
    )
    found = extract(html, algorithm=name, with_markdown=True)
    assert composed in found.text and decomposed not in found.text
    assert found.markdown is not None and composed in found.markdown
    assert found.title == composed
    if found.html:
        assert decomposed in found.html


def test_a_decomposed_headline_is_still_the_title() -> None:
    """The headline is left out of the text when its words are the title's, whichever
    normalization form each is written in: the words are compared in form C."""
    decomposed = "Le cafe\u0301 de\u0301couvert par les marins"
    paragraph = (
        "<p>Le café au coin de la rue sert un café noir aux ouvriers du port depuis le "
        "matin, et le soir il reste ouvert pour les marins qui rentrent du large.</p>"
    )
    html = (
        "<html><head><title>Le café découvert par les marins</title></head><body>"
        f"<article><h1>{decomposed}</h1>{paragraph * 6}</article></body></html>"
    )
    found = extract(html)
    assert found.title == "Le café découvert par les marins"
    assert not found.text.startswith("Le café découvert")
    assert found.text.startswith("Le café au coin")
