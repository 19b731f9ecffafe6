"""TAGRATIO_TEXT_FORMAT, TAGRATIO_METADATA and TAGRATIO_METADATA_FIELD (issue 17): validated
settings, and real crawls of the example site whose items carry the metadata and the chosen
format, checked against what the pages themselves say."""

from __future__ import annotations

import html
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import scrapy
from conftest import REPO, CrawlResult, CrawlSpec, LocalSite
from scrapy.http import Request, Response
from scrapy.settings import Settings

from scrapy_tagratio.settings import SettingsError, TagRatioSettings

SITE = REPO / "example_project" / "site"
ARTICLES = sorted(p for p in SITE.glob("*/*.html") if p.name != "index.html")


def settings_of(**values: Any) -> TagRatioSettings:
    return TagRatioSettings.from_settings(Settings(values))


def test_defaults_and_what_the_extraction_builds() -> None:
    s = settings_of()
    assert (s.text_format, s.metadata, s.metadata_field) == ("text", True, None)
    assert s.item_fields == ("main_text", "tagratio")
    assert (s.options.metadata, s.options.keep_markdown, s.options.keep_html) == (
        True, False, False
    )  # fmt: skip
    markdown = settings_of(TAGRATIO_TEXT_FORMAT="markdown", TAGRATIO_METADATA_FIELD="meta")
    assert markdown.options.keep_markdown and markdown.item_fields[-1] == "meta"
    assert settings_of(TAGRATIO_TEXT_FORMAT="html").options.keep_html
    off = settings_of(TAGRATIO_METADATA="false", TAGRATIO_METADATA_FIELD="meta")
    assert off.options.metadata is False and "meta" not in off.item_fields


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"TAGRATIO_TEXT_FORMAT": "rst"},
            "TAGRATIO_TEXT_FORMAT must be one of 'text', 'markdown', 'html'; got 'rst'",
        ),
        ({"TAGRATIO_METADATA": "sometimes"}, "TAGRATIO_METADATA must be True or False"),
        ({"TAGRATIO_METADATA_FIELD": ""}, "TAGRATIO_METADATA_FIELD must be a non-empty item"),
        ({"TAGRATIO_METADATA_FIELD": "tagratio"}, "must name different fields"),
    ],
)
def test_bad_values_name_the_setting(values: dict[str, Any], message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        settings_of(**values)
    assert message in str(caught.value)


# ---------------------------------------------------------------------- crawls
class ArticleSpider(scrapy.Spider):
    """Requests the example site's articles; one dict item per page."""

    name = "articles"

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_url = base_url

    async def start(self) -> AsyncIterator[Request]:
        for page in ARTICLES:
            yield Request(f"{self.base_url}/{page.relative_to(SITE).as_posix()}")

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url}


@pytest.fixture(scope="module")
def site(local_site: Callable[..., LocalSite]) -> LocalSite:
    return local_site(SITE)


def spec(name: str, site: LocalSite, **settings: Any) -> CrawlSpec:
    return CrawlSpec(
        name=name,
        spider="test_output_settings:ArticleSpider",
        settings={"ADDONS": {"scrapy_tagratio.Addon": 100}, **settings},
        args={"base_url": site.base_url},
    )


def page_says(page: Path) -> dict[str, Any]:
    """Headline, byline name and date as the page's markup gives them."""
    source = page.read_text()
    byline = re.search(r'<p class="byline">By <a[^>]*>(.*?)</a>.*?datetime="(.*?)"', source)
    headline = re.search(r"<h1>(.*?)</h1>", source)
    assert byline is not None and headline is not None
    return {
        "headline": html.unescape(headline.group(1)),
        "authors": [html.unescape(byline.group(1))],
        "published": byline.group(2),
        "language": re.search(r'<html lang="(.*?)"', source).group(1),  # type: ignore[union-attr]
    }


@pytest.mark.integration
def test_crawled_items_carry_metadata_and_the_chosen_format(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    results = run_crawls(
        [
            spec("default", site),
            spec("markdown", site, TAGRATIO_TEXT_FORMAT="markdown", TAGRATIO_METADATA_FIELD="meta"),
            spec("html-no-metadata", site, TAGRATIO_TEXT_FORMAT="html", TAGRATIO_METADATA=False),
        ]
    )
    items = {name: {i["url"]: i for i in r.items} for name, r in results.items()}
    for name, result in results.items():
        assert result.error is None and len(result.items) == len(ARTICLES), name
    for page in ARTICLES:
        url = f"{site.base_url}/{page.relative_to(SITE).as_posix()}"
        says = page_says(page)
        default, markdown = items["default"][url], items["markdown"][url]
        plain = items["html-no-metadata"][url]
        for metadata in (default["tagratio"]["metadata"], markdown["meta"]):
            assert {key: metadata[key] for key in says} == says
        assert "metadata" not in markdown["tagratio"]
        # The headline is in the metadata, and no format repeats it at the text's head.
        assert not default["main_text"].startswith(says["headline"])
        assert not markdown["main_text"].startswith(f"# {says['headline']}")
        assert plain["main_text"].startswith("<")
        assert "<h1>" not in plain["main_text"] and "<p>" in plain["main_text"]
        assert "metadata" not in plain["tagratio"]
