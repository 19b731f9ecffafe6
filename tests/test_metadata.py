"""Article metadata (issue 17): evidence in order of trust, dates bounded by the crawl time,
names without "By", the language checked against the text; on constructed pages and on real
pages of fundus-dev and readability-dev whose gold (their projects' parsers) says what is
right."""

from __future__ import annotations

import json
import pickle
from datetime import date, datetime, timedelta, timezone
from typing import Any
from urllib.parse import urljoin

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_tagratio import extract
from scrapy_tagratio.dates import find_date, parse_date, plausible
from scrapy_tagratio.document import Document
from scrapy_tagratio.language import bcp47, detector_available, same_language
from scrapy_tagratio.metadata import (
    SOURCES,
    Metadata,
    _absolute,
    _meta_values,
    read_metadata,
    split_names,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc)
PARAGRAPHS = "".join(
    f"<p>The harbour board met on Tuesday evening to discuss item {i} of the plan for the "
    "quay, and the members agreed that the work should start before the summer season.</p>"
    for i in range(12)
)


def page(head: str = "", before: str = "", after: str = "", lang: str = "en") -> str:
    """An article page: ``head`` markup, then in the body ``before`` the article's
    paragraphs and ``after`` them."""
    return (
        f'<html lang="{lang}"><head><title>Quay works to start in spring | The Courier</title>'
        f"{head}</head><body><article><h1>Quay works to start in spring</h1>{before}"
        f"{PARAGRAPHS}</article>{after}</body></html>"
    )


def metadata(html: str, **kwargs: Any) -> Metadata:
    found = extract(html, url="https://courier.example/news/quay", now=NOW, **kwargs).metadata
    assert found is not None
    return found


# ---------------------------------------------------------------------- dates
def test_dates_keep_the_precision_and_offset_the_page_gives() -> None:
    assert parse_date("2024-05-03T15:47:42+02:00") == datetime(
        2024, 5, 3, 15, 47, 42, tzinfo=timezone(timedelta(hours=2))
    )
    assert parse_date("2024-05-03T15:47:42.389Z").tzinfo == timezone.utc  # type: ignore[union-attr]
    assert parse_date("2024-05-03 15:47") == datetime(2024, 5, 3, 15, 47)
    assert parse_date("2024-05-03") == date(2024, 5, 3)
    assert parse_date("20240503") == date(2024, 5, 3)
    assert parse_date("Fri, 03 May 2024 15:47:42 +0000") == datetime(
        2024, 5, 3, 15, 47, 42, tzinfo=timezone.utc
    )
    assert parse_date("2024-02-30") is None and parse_date("not a date") is None


@pytest.mark.parametrize(
    "text",
    ["Published 3 May 2024", "May 3rd, 2024 at noon", "am 3. Mai 2024", "03.05.2024, 14:07",
     "le 3 mai 2024", "el 3 de mayo de 2024", "2024/05/03"],
)  # fmt: skip
def test_dates_written_in_text(text: str) -> None:
    assert find_date(text) == date(2024, 5, 3)


def test_no_date_after_the_crawl_time_or_before_the_web() -> None:
    assert plausible(datetime(2026, 11, 23, 11, 0, tzinfo=timezone.utc), NOW)
    assert not plausible(datetime(2026, 11, 23, 13, 0, tzinfo=timezone.utc), NOW)
    assert not plausible(date(2027, 1, 1), NOW)
    assert plausible(date(2026, 11, 24), NOW)  # a local date up to 14 hours ahead of UTC
    assert not plausible(date(1994, 12, 31), NOW)


def test_a_future_date_gives_way_to_the_next_evidence() -> None:
    ld = '{"@type": "NewsArticle", "datePublished": "2030-01-01T00:00:00Z"}'
    found = metadata(
        page(
            f'<script type="application/ld+json">{ld}</script>'
            '<meta property="article:published_time" content="2024-05-03T09:00:00+02:00">'
        )
    )
    assert found.published == "2024-05-03T09:00:00+02:00"
    assert found.sources["published"] == "opengraph"


def test_dates_of_comments_related_lists_and_footers_do_not_win() -> None:
    elsewhere = (
        '<section class="comments"><time datetime="2024-06-01">1 June</time></section>'
        '<ul class="related"><li><time datetime="2024-06-02">2 June</time></li></ul>'
        '<footer><time datetime="2024-06-03">3 June</time></footer>'
    )
    assert metadata(page(after=elsewhere)).published is None
    byline = '<p class="byline">By Ann Lee <time datetime="2024-05-03">3 May</time></p>'
    found = metadata(page(before=byline, after=elsewhere))
    assert (found.published, found.sources["published"]) == ("2024-05-03", "time element")
    assert found.authors == ("Ann Lee",)
    # The article's own <header> holds its byline and time.
    header = '<header><p class="byline">By Ann Lee</p><time datetime="2024-05-04">4 May</time>'
    found = metadata(page(before=header + "</header>", after=elsewhere))
    assert (found.authors, found.published) == (("Ann Lee",), "2024-05-04")
    # A byline written out: the names end where the date starts, and the date is read.
    found = metadata(page(before='<div class="byline">By Ann Lee May 3, 2024 9:00 AM</div>'))
    assert (found.authors, found.published) == (("Ann Lee",), "2024-05-03")
    assert found.sources["authors"] == "byline" and found.sources["published"] == "text"


# ---------------------------------------------------------------------- names
@pytest.mark.parametrize(
    ("byline", "names"),
    [
        ("By Jane Doe and John Smith", ["Jane Doe", "John Smith"]),
        ("Von Anna Martel und Lea Wagner, Nairobi", ["Anna Martel", "Lea Wagner", "Nairobi"]),
        ("Smith, John", ["Smith, John"]),
        ("Elena Oberholzer (obe); Oliver Maksan (oma)", ["Elena Oberholzer", "Oliver Maksan"]),
        ("Reuters", ["Reuters"]),
        ("https://www.facebook.com/someone", []),
        ("Bild: SN/APA/KEYSTONE", []),
    ],
)
def test_names_from_bylines(byline: str, names: list[str]) -> None:
    assert split_names(byline) == names


# ---------------------------------------------------------------------- evidence
def test_json_ld_graph_references_and_lists() -> None:
    ld = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "WebSite", "@id": "#site", "name": "The Courier"},
            {
                "@type": ["NewsArticle"],
                "headline": "Quay works to start in spring",
                "author": [
                    {"@id": "#ann"}, {"@type": "Person", "givenName": "Bo", "familyName": "Ek"}
                ],
                "datePublished": "2024-05-03T09:00:00+02:00",
                "dateModified": "2024-05-04T10:00:00+02:00",
                "image": [{"@type": "ImageObject", "url": "/img/quay.jpg"}],
                "inLanguage": "en-GB",
            },
            {"@type": "Person", "@id": "#ann", "name": "By Ann Lee"},
        ],
    }  # fmt: skip
    found = metadata(page(f'<script type="application/ld+json">{json.dumps(ld)}</script>'))
    assert found.headline == "Quay works to start in spring"
    assert found.authors == ("Ann Lee", "Bo Ek")
    assert (found.published, found.modified) == (
        "2024-05-03T09:00:00+02:00", "2024-05-04T10:00:00+02:00"
    )  # fmt: skip
    assert found.image == "https://courier.example/img/quay.jpg"
    assert (found.site_name, found.page_type, found.language) == (
        "The Courier", "NewsArticle", "en-GB"
    )  # fmt: skip
    assert set(found.sources.values()) == {"json-ld"}


@pytest.mark.parametrize(
    ("opening", "closing"),
    [("<!--", "-->"), ("//<![CDATA[\n", "\n//]]>"), (" \n// <!--", "// -->\n "), ("", "")],
    ids=["comment", "script-commented CDATA", "script-commented comment", "bare"],
)
def test_json_ld_wrapped_in_a_comment_or_cdata_is_read(opening: str, closing: str) -> None:
    ld = '{"@type": "NewsArticle", "author": {"name": "Ann Lee"}, "note": "a --> b ]]> c"}'
    found = metadata(page(f'<script type="application/ld+json">{opening}{ld}{closing}</script>'))
    assert found.authors == ("Ann Lee",)
    assert found.sources["authors"] == "json-ld"


def test_broken_json_ld_is_skipped_and_meta_used() -> None:
    found = metadata(
        page(
            '<script type="application/ld+json">{"@type": "NewsArticle", "headline": </script>'
            '<meta name="author" content="Ann Lee"><meta name="date" content="2024-05-03">'
            '<link rel="canonical" href="/news/quay-works">'
        )
    )
    assert found.authors == ("Ann Lee",) and found.published == "2024-05-03"
    assert found.canonical_url == "https://courier.example/news/quay-works"
    assert found.sources["authors"] == found.sources["published"] == "meta"


def test_meta_values_keep_the_keys_read_in_document_order() -> None:
    # Only the keys the metadata reads are kept (and only their contents cleaned), each
    # under its lower-case name, in document order, microdata told apart.
    head = (
        '<meta name="viewport" content="width=device-width">'
        '<meta property=" OG:Title " content="First &amp;amp; best">'
        '<meta name="description" itemprop="description" content="Both">'
        '<meta name="og:title" content="Second">'
        '<meta name="robots" content="index">'
    )
    values = _meta_values(Document(page(head)).page)
    assert values == {
        "og:title": [("First & best", False), ("Second", False)],
        "description": [("Both", False), ("Both", True)],
    }


def test_the_headline_is_the_title_without_the_site_name() -> None:
    found = metadata(page('<meta property="og:site_name" content="The Courier">'))
    assert found.headline == "Quay works to start in spring"
    # Without any site name declared, the <h1> tells which part of <title> is the headline.
    html = page().replace("<h1>Quay works to start in spring</h1>", "")
    assert metadata(html).headline == "Quay works to start in spring | The Courier"
    assert extract(page(), now=NOW).title == "Quay works to start in spring"


def test_the_site_name_is_read_off_the_host_when_none_is_declared() -> None:
    # No og:site_name, no <h1>: "Courier" is the site by its host, with or without a
    # numbered www prefix; on another host the title is the headline as it stands.
    html = (
        page()
        .replace("The Courier", "Courier")
        .replace("<h1>Quay works to start in spring</h1>", "")
    )
    for host in ("courier.example", "www.courier.example", "www2.courier.example"):
        found = extract(html, url=f"https://{host}/news/quay", now=NOW).metadata
        assert found is not None and found.headline == "Quay works to start in spring", host
    other = extract(html, url="https://news.example/quay", now=NOW).metadata
    assert other is not None and other.headline == "Quay works to start in spring | Courier"


def test_metadata_is_frozen_json_ready_and_picklable() -> None:
    result = extract(page('<meta name="author" content="Ann Lee">'), now=NOW)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["metadata"]["authors"] == ["Ann Lee"]
    assert set(data["metadata"]["sources"].values()) <= set(SOURCES)
    assert pickle.loads(pickle.dumps(result)).metadata == result.metadata
    with pytest.raises(AttributeError):
        result.metadata.headline = "x"  # type: ignore[misc, union-attr]
    assert extract(page(), metadata=False).metadata is None


# ---------------------------------------------------------------------- language
def test_language_tags_are_bcp47() -> None:
    assert [bcp47(t) for t in ("en_us", "zh-hant-tw", "DE", "x-default", "")] == [
        "en-US", "zh-Hant-TW", "de", None, None
    ]  # fmt: skip
    assert same_language("nb-NO", "no") and not same_language("de-AT", "en")


def test_without_detection_the_declaration_is_taken() -> None:
    document = Document.from_input(page(lang="de"))  # English text declared German
    found = read_metadata(document.page, text=document.full_text, now=NOW, detect=False)
    assert (found.language, found.sources["language"]) == ("de", "meta")


@pytest.mark.skipif(not detector_available(), reason="py3langid (scrapy-tagratio[lang]) absent")
def test_a_wrong_declaration_is_overruled_by_the_text() -> None:
    found = metadata(page(lang="de"))  # English text declared German
    assert (found.language, found.sources["language"]) == ("en", "text")
    right = metadata(page(lang="en-GB"))
    assert (right.language, right.sources["language"]) == ("en-GB", "meta")


# ---------------------------------------------------------------------- real pages
@pytest.mark.benchmark_data
@pytest.mark.parametrize(
    ("dataset", "page_id", "checked"),
    [
        # JSON-LD people given as givenName + familyName
        ("fundus", "at__DerStandard_2024_05_03", ("title", "authors", "published")),
        # Dublin Core "Last, First"
        ("fundus", "uk__Nature_2026_02_07", ("title", "authors", "published")),
        # initials in brackets after every name
        ("fundus", "ch__NZZ_2024_07_18", ("title", "authors", "published")),
        # a title with entities escaped twice
        ("fundus", "de__Golem_2024_04_28", ("title", "published")),
        # Wikipedia: the JSON-LD headline is a description, the name is the title
        ("readability", "readability__wikipedia-2", ("title",)),
        # no metadata: <title> over an <h1> that is the site's section name
        ("readability", "readability__webmd-1", ("title",)),
        ("readability", "readability__aclu", ("title", "published")),
    ],
)
def test_real_pages_against_their_gold(
    benchmark_set: Any, dataset: str, page_id: str, checked: tuple[str, ...]
) -> None:
    from benchmarks.metadata import fold, same_day

    data = benchmark_set(dataset)
    real = data.load_page(dataset, page_id)
    found = extract(real.html, url=real.url, now=NOW).metadata
    gold = real.gold
    if "title" in checked:
        assert fold(found.headline) == fold(gold["title"])
    if "authors" in checked:
        assert [fold(a) for a in found.authors] == [fold(a) for a in gold["authors"]]
    if "published" in checked:
        assert same_day(gold["published"], found.published)


def test_cli_json_carries_the_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import REPO

    from scrapy_tagratio.__main__ import main

    page = str(REPO / "example_project" / "site" / "local" / "library-reopens.html")
    assert main(["extract", page, "-f", "json"]) == 0
    found = json.loads(capsys.readouterr().out)["metadata"]
    assert found["headline"] == "Alderwick library reopens seven months after flood"
    assert (found["authors"], found["published"]) == (["Daniel Okafor"], "2024-04-26")
    assert main(["extract", page, "-f", "json", "--no-metadata"]) == 0
    assert json.loads(capsys.readouterr().out)["metadata"] is None


# ---------------------------------------------------------------------- bad JSON-LD


def test_json_ld_nested_deeper_than_the_stack_is_skipped() -> None:
    """Found by fuzzing: a JSON-LD script of 5,000 nested arrays (an 11 KB page) made
    ``json.loads`` raise RecursionError, which failed the extraction of every algorithm;
    the script is unreadable, the page's other metadata is still read."""
    for deep in ("[" * 5_000 + "]" * 5_000, '{"a":' * 5_000 + "1" + "}" * 5_000):
        head = (
            f'<script type="application/ld+json">{deep}</script>'
            '<script type="application/ld+json">'
            '{"@type":"NewsArticle","author":{"@type":"Person","name":"Jo Bloggs"}}</script>'
        )
        found = metadata(page(head))
        assert found.authors == ("Jo Bloggs",)
        assert found.headline == "Quay works to start in spring"


def test_lone_surrogate_escapes_in_json_ld_are_replaced() -> None:
    """Found by fuzzing: JSON reads ``\\ud83d`` without its low half (a string cut by a
    JavaScript substring) as a lone surrogate, and the metadata could not be written as
    UTF-8 (a feed export failed); it reads as U+FFFD, and a whole pair as its character."""
    head = (
        '<script type="application/ld+json">{"@type":"NewsArticle",'
        '"headline":"Quay works \\ud83d\\ude00 to start \\ud83d",'
        '"author":{"@type":"Person","name":"Jo \\ude00Bloggs"}}</script>'
    )
    found = metadata(page(head))
    assert found.headline == "Quay works \U0001f600 to start \ufffd"
    assert found.authors == ("Jo \ufffdBloggs",)
    json.dumps(found.to_dict(), ensure_ascii=False).encode("utf-8")


def _joined(url: str, address: str) -> str:
    """What ``urljoin`` makes of ``address`` on the page ``url`` (as declared when either
    does not parse)."""
    try:
        return urljoin(url, address)
    except ValueError:
        return address


@pytest.mark.parametrize(
    "address",
    [
        "https://example.com/news/a-story.html",  # taken as it is, not parsed
        "https://example.com/a?b=1#top",
        "https://example.com/a?",  # urljoin drops a bare "?" or "#"
        "https://example.com/a#",
        "https://example.com/a;",  # and empty path parameters
        "http:///no-host",  # no host: resolved against the page
        " https://example.com/a",  # white space stripped
        "https://exa\tmple.com/a",  # a tab dropped
        "HTTPS://example.com/a",  # the scheme lowered
        "https://[::1/a",  # a broken host: as declared
        "/images/1.jpg",
        "../up",
    ],
)
def test_addresses_are_resolved_as_urljoin_resolves_them(address: str) -> None:
    for url in ("https://example.com/news/", "http://example.com/", "ftp://x/y"):
        assert _absolute(url, address) == _joined(url, address)


@given(
    st.sampled_from(["https://example.com/a/b", "http://example.com", "ftp://x/", "https://[x"]),
    st.sampled_from(["https://", "http://", "HTTP://", "https:", "//", "/", ""]),
    st.text(alphabet="ab./?#;:[]@ \t\n\x00\x1f%\u00e9", max_size=12),
)
def test_any_address_is_resolved_as_urljoin_resolves_it(url: str, scheme: str, rest: str) -> None:
    """The addresses :func:`_absolute` takes as they are, unparsed, are those ``urljoin``
    gives back unchanged: every other spelling goes through ``urljoin``."""
    assert _absolute(url, scheme + rest) == _joined(url, scheme + rest)
