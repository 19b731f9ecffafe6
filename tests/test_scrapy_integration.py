"""Real Scrapy crawls with the add-on against a real HTTP server on 127.0.0.1.

The served site is the example project's bundled news site (original articles) plus
generated pages: a front page that is nothing but headline links (an overview page by any
measure), a JSON feed carrying raw HTML for the pipeline, a text/plain page, and the
bad-input corpus of ``badinput.py``. Crawls run in one subprocess per test (see
``conftest.run_crawls``); the spiders below are what they run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import html
import inspect
import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pydantic
import pytest
import scrapy
from badinput import cases, large_page
from conftest import REPO, CrawlResult, CrawlSpec, LocalSite, python_env
from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.spiders import CrawlSpider, Rule
from scrapy.utils.reactor import install_reactor
from scrapy.utils.test import get_crawler

from scrapy_tagratio import DEFAULT_ALGORITHM, extract
from scrapy_tagratio.middlewares import (
    ERROR_META,
    EXTRACTION_META,
    TagRatioDownloaderMiddleware,
    TagRatioSpiderMiddleware,
)
from scrapy_tagratio.pipelines import TagRatioPipeline
from scrapy_tagratio.settings import SettingsError

pytestmark = pytest.mark.integration

SCRAPY_VERSION = tuple(int(part) for part in scrapy.__version__.split(".")[:2])
SITE = REPO / "example_project" / "site"
ARTICLES = sorted(p for p in SITE.glob("*/*.html") if p.name != "index.html")
ADDON = {"ADDONS": {"scrapy_tagratio.Addon": 100}}
CETR_ARTICLE = "/science/tidal-turbine-first-power.html"
MIDDLEWARES = "scrapy_tagratio.middlewares"


def paragraphs(page: Path) -> list[str]:
    """The article's paragraphs, read from its source (the story-body div)."""
    body = re.search(r'<div class="story-body">(.*?)</div>', page.read_text(), re.S)
    assert body is not None
    return [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", body.group(1))]


def headline(page: Path) -> str:
    """The article's headline: its title without the site's name."""
    title = re.search(r"<title>(.*?)</title>", page.read_text(), re.S)
    assert title is not None
    return html.unescape(title.group(1)).split(" | ")[0]


def path_of(url: str) -> str:
    return "/" + url.split("/", 3)[3]


# ---------------------------------------------------------------------- item kinds
class PageItem(scrapy.Item):
    url = scrapy.Field()
    kind = scrapy.Field()
    main_text = scrapy.Field()
    tagratio = scrapy.Field()


@dataclasses.dataclass
class PageDataclass:
    url: str
    kind: str
    main_text: str | None = None
    tagratio: dict[str, Any] | None = None


@attrs.define
class PageAttrs:
    url: str
    kind: str
    main_text: str | None = None
    tagratio: dict[str, Any] | None = None


class PageModel(pydantic.BaseModel):
    url: str
    kind: str
    main_text: str | None = None
    tagratio: dict[str, Any] | None = None


class BareItem(scrapy.Item):
    url = scrapy.Field()


ITEM_KINDS: dict[str, Callable[[str], Any]] = {
    "dict": lambda url: {"url": url, "kind": "dict"},
    "scrapy.Item": lambda url: PageItem(url=url, kind="scrapy.Item"),
    "dataclass": lambda url: PageDataclass(url=url, kind="dataclass"),
    "attrs": lambda url: PageAttrs(url=url, kind="attrs"),
    "pydantic": lambda url: PageModel(url=url, kind="pydantic"),
}


# ---------------------------------------------------------------------- spiders
class SiteSpider(scrapy.Spider):
    """Starts at /front.html (headline links only) and follows its links once; yields one
    item of every kind per page, raw-HTML items from the JSON feed, and a raw-HTML start
    item that never sees a response."""

    name = "site"

    def __init__(self, base_url: str, start_item_file: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_url = base_url
        self.start_item_file = start_item_file

    async def start(self) -> AsyncIterator[Any]:
        yield Request(self.base_url + "/front.html", callback=self.parse_front)
        yield Request(
            self.base_url + "/front-tagged.html",
            meta={"tagratio_settings": {"TAGRATIO_OVERVIEW_ACTION": "tag"}},
        )
        yield {
            "url": "start-item",
            "kind": "start-raw",
            "raw_html": Path(self.start_item_file).read_text(),
        }

    async def parse_front(self, response: Response) -> AsyncIterator[Any]:
        for item in self.parse(response):
            yield item
        for href in response.css("a::attr(href)").getall():
            meta = (
                {"tagratio_settings": {"TAGRATIO_ALGORITHM": "cetr"}}
                if href == CETR_ARTICLE
                else {}
            )
            yield response.follow(href, meta=meta)

    def parse(self, response: Response) -> Iterator[Any]:
        for make in ITEM_KINDS.values():
            yield make(response.url)
        if response.url.endswith(".json"):
            for story in json.loads(response.text)["stories"]:
                yield {"url": story["url"], "kind": "raw", "raw_html": story["html"]}


class BadInputSpider(scrapy.Spider):
    """Requests every bad-input page and yields one item per response."""

    name = "badinput"

    def __init__(self, pages: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pages: dict[str, str] = json.loads(pages)

    async def start(self) -> AsyncIterator[Request]:
        for case, url in self.pages.items():
            meta: dict[str, Any] = {"case": case}
            if case == "time-budget":
                meta["tagratio_settings"] = {"TAGRATIO_TIME_BUDGET": 1e-6}
            yield Request(url, meta=meta, dont_filter=True)

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url, "case": response.meta["case"]}


# ---------------------------------------------------------------------- the site
FRONT = """<!DOCTYPE html><html><head><title>All stories</title></head><body>
<h1>All stories</h1><ul>{links}</ul>
<p><a href="/data/stories.json">Stories as JSON</a> <a href="/notes.txt">Notes</a></p>
</body></html>"""


@pytest.fixture(scope="module")
def site(local_site: Callable[..., LocalSite]) -> LocalSite:
    server = local_site(SITE)
    links = "".join(
        f'<li><a href="/{p.relative_to(SITE).as_posix()}">{headline(p)}</a></li>' for p in ARTICLES
    )
    server.add("/front.html", FRONT.format(links=links))
    server.add("/front-tagged.html", FRONT.format(links=links))
    stories = {
        "stories": [
            {"url": "raw-article", "html": ARTICLES[0].read_text()},
            {"url": "raw-overview", "html": FRONT.format(links=links)},
        ]
    }
    server.add("/data/stories.json", json.dumps(stories), "application/json")
    server.add("/notes.txt", "Editor's notes: nothing to see here.", "text/plain; charset=utf-8")
    return server


def site_spec(name: str, site: LocalSite, **settings: Any) -> CrawlSpec:
    return CrawlSpec(
        name=name,
        spider="test_scrapy_integration:SiteSpider",
        settings={**ADDON, **settings},
        args={"base_url": site.base_url, "start_item_file": str(ARTICLES[1])},
    )


def check_site_crawl(result: CrawlResult, site: LocalSite) -> None:
    assert result.error is None
    assert result.live_children == 0  # the worker pool stopped with the crawl
    by_page: dict[str, dict[str, dict[str, Any]]] = {}
    for item in result.items:
        by_page.setdefault(item["url"], {})[item["kind"]] = item

    # Article pages, reached only through the overview front page: every item kind gets
    # the main text (it holds the article's first and last paragraphs, as on the page)
    # and the scores; the text is what extract() finds in the page.
    for page in ARTICLES:
        url = site.url("/" + page.relative_to(SITE).as_posix())
        items = by_page.pop(url)
        assert set(items) == set(ITEM_KINDS)
        expected_algorithm = "cetr" if url.endswith(CETR_ARTICLE) else DEFAULT_ALGORITHM
        expected_text = extract(page.read_bytes(), algorithm=expected_algorithm).text
        first, *_, last = paragraphs(page)
        for item in items.values():
            assert first in item["main_text"] and last in item["main_text"]
            assert item["main_text"] == expected_text
            scores = item["tagratio"]
            assert scores["algorithm"] == expected_algorithm
            assert scores["is_overview"] is False
            assert scores["net_text_length"] > 500
            assert {"params", "content_share", "link_density", "overview_score"} <= set(scores)

    # The front page is an overview page: its items are dropped, its links were followed.
    assert site.url("/front.html") not in by_page
    # The same page with a per-request override to "tag": items kept, marked.
    tagged = by_page.pop(site.url("/front-tagged.html"))
    assert set(tagged) == set(ITEM_KINDS)
    assert all(item["tagratio"]["is_overview"] is True for item in tagged.values())

    # Non-HTML responses pass untouched: no text, no scores.
    for path in ("/notes.txt", "/data/stories.json"):
        items = by_page.pop(site.url(path))
        assert set(items) == set(ITEM_KINDS)
        assert "main_text" not in items["dict"] and "tagratio" not in items["dict"]
        assert items["dataclass"]["main_text"] is None

    # The pipeline: raw-HTML items (from the JSON feed and a start item) are extracted,
    # the overview one dropped.
    raw_article = by_page.pop("raw-article")["raw"]
    assert paragraphs(ARTICLES[0])[0] in raw_article["main_text"]
    assert raw_article["tagratio"]["is_overview"] is False
    start_item = by_page.pop("start-item")["start-raw"]
    assert paragraphs(ARTICLES[1])[0] in start_item["main_text"]
    assert "raw-overview" not in by_page
    assert by_page == {}

    stats = result.tagratio_stats()
    assert all(isinstance(v, int) for v in stats.values()), stats
    # 9 HTML pages (2 fronts, 7 articles) + 3 raw-HTML items.
    assert stats["tagratio/pages_extracted"] == 9 + 3
    assert stats["tagratio/overview_pages"] == 3
    assert stats["tagratio/items_dropped"] == len(ITEM_KINDS) + 1
    assert stats["tagratio/skipped/non_html"] == 2
    # Every item of the 9 HTML pages and the 3 raw-HTML items, dropped ones included (the
    # pipeline drops them after the spider middleware annotated them).
    assert stats["tagratio/items_annotated"] == 9 * len(ITEM_KINDS) + 3
    # The drops went through Scrapy's DropItem: its stats and signal saw them.
    assert result.stats["item_dropped_count"] == len(ITEM_KINDS) + 1
    assert result.stats["item_dropped_reasons_count/OverviewPageDropped"] == len(ITEM_KINDS) + 1
    assert stats["tagratio/extraction_time_us"] > 0
    assert not any(k.startswith("tagratio/errors/") for k in stats)


def test_addon_crawl_in_reactor_thread_and_in_workers(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    # Without the site memory: with it a page's text depends on which pages of the site
    # came before it, and concurrent pages come in another order in each crawl
    # (test_site_memory.py compares the two paths one page at a time).
    results = run_crawls(
        [
            site_spec("inline", site, TAGRATIO_SITE_MEMORY=False),
            site_spec("workers", site, TAGRATIO_WORKERS=2, TAGRATIO_SITE_MEMORY=False),
            site_spec("bad-setting", site, TAGRATIO_OVERVIEW_ACTION="bogus"),
            site_spec("ignore", site, TAGRATIO_OVERVIEW_ACTION="ignore"),
        ]
    )
    check_site_crawl(results["inline"], site)
    check_site_crawl(results["workers"], site)
    # The same items, whichever way they were extracted.
    assert sorted(json.dumps(i, sort_keys=True) for i in results["inline"].items) == sorted(
        json.dumps(i, sort_keys=True) for i in results["workers"].items
    )
    bad = results["bad-setting"]
    assert bad.error is not None
    if SCRAPY_VERSION >= (2, 14):  # 2.13 reports an AttributeError of its engine instead
        assert "TAGRATIO_OVERVIEW_ACTION" in bad.error
    [line] = [line for line in bad.log.splitlines() if "Bad scrapy-tagratio setting" in line]
    assert "TAGRATIO_OVERVIEW_ACTION must be one of 'drop', 'tag', 'ignore', 'off'" in line
    assert "'bogus'" in line
    assert bad.items == [] and "response_received_count" not in bad.stats
    # "ignore": the overview front page never reaches its callback, so none of its links
    # are followed; the page with a per-request "tag" still yields its items.
    ignore = results["ignore"]
    assert {item["url"] for item in ignore.items} == {site.url("/front-tagged.html"), "start-item"}
    assert ignore.stats["tagratio/pages_ignored"] == 1
    assert ignore.stats["downloader/response_count"] == 2


def test_workers_under_a_non_asyncio_reactor(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    results = run_crawls(
        [site_spec("select", site, TAGRATIO_WORKERS=2)],
        reactor="twisted.internet.selectreactor.SelectReactor",
    )
    check_site_crawl(results["select"], site)


# ---------------------------------------------------------------------- bad input
BAD_CASES = (
    "empty", "whitespace", "png", "pdf", "gzip", "truncated-mid-tag", "deep-nesting-100k",
    "cp1251-undeclared", "rss-as-html", "all-links",
)  # fmt: skip
NOT_HTML = {"png", "pdf", "gzip"}


def test_bad_input_crawl_delivers_every_item(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    server = local_site()
    corpus = cases()
    pages = {name: server.add(f"/bad/{name}", corpus[name].data, "text/html") for name in BAD_CASES}
    pages["too-large"] = server.add("/bad/too-large", large_page(2_000_000), "text/html")
    pages["time-budget"] = server.add("/bad/time-budget", ARTICLES[0].read_bytes(), "text/html")
    settings = {
        **ADDON,
        "TAGRATIO_OVERVIEW_ACTION": "tag",
        "TAGRATIO_MAX_BYTES": 1_500_000,
        # The 100,000-deep page takes seconds on a loaded machine; the time-budget case sets
        # its own budget in the request's meta, so the crawl's budget only has to be generous.
        "TAGRATIO_TIME_BUDGET": 60.0,
    }
    args = {"pages": json.dumps(pages)}
    spider = "test_scrapy_integration:BadInputSpider"
    results = run_crawls(
        [
            CrawlSpec("bad-inline", spider, settings, args),
            CrawlSpec("bad-workers", spider, {**settings, "TAGRATIO_WORKERS": 2}, args),
        ]
    )
    for result in results.values():
        assert result.error is None and result.live_children == 0
        items = {item["case"]: item for item in result.items}
        assert set(items) == set(pages), "every item the spider yields arrives"
        assert len(result.items) == len(pages)
        expected_errors = {name: "not_html" for name in NOT_HTML}
        expected_errors |= {"too-large": "too_large", "time-budget": "time_budget"}
        for case, item in items.items():
            error = item["tagratio"].get("error")
            if case in expected_errors:
                assert item["main_text"] is None
                assert error["kind"] == expected_errors[case], (case, error)
                assert error["message"]
            else:
                assert error is None, (case, error)
                assert isinstance(item["main_text"], str)
        assert "Before the deep part" in items["deep-nesting-100k"]["main_text"]
        assert items["all-links"]["tagratio"]["is_overview"] is True
        stats = result.tagratio_stats()
        assert stats["tagratio/errors/not_html"] == 3
        assert stats["tagratio/skipped/too_large"] == 1
        assert stats["tagratio/skipped/time_budget"] == 1
        assert stats["tagratio/pages_extracted"] == len(pages) - 5
        assert stats["tagratio/items_with_error"] == 5
        assert result.stats["item_scraped_count"] == len(pages)


# ---------------------------------------------------------------------- HTTP statuses
class StatusSpider(scrapy.Spider):
    """Requests every page it is given and yields one item per response, whatever the
    status (``handle_httpstatus_all``), with the extraction's status in it."""

    name = "status"
    request_meta: ClassVar[dict[str, Any]] = {"handle_httpstatus_all": True}

    def __init__(self, pages: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pages: list[str] = json.loads(pages)

    async def start(self) -> AsyncIterator[Request]:
        for url in self.pages:
            yield Request(url, meta=dict(self.request_meta), dont_filter=True)

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url, "status": response.status}


def test_error_pages_are_not_extracted_unless_listed(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    server = local_site()
    article = ARTICLES[0].read_bytes()
    pages = [server.add("/ok.html", article)]
    pages += [server.add(f"/missing/{i}.html", article, status=404) for i in range(3)]
    pages += [server.add("/error.html", article, status=500)]
    spider = "test_scrapy_integration:StatusSpider"
    args = {"pages": json.dumps(pages)}
    results = run_crawls(
        [
            CrawlSpec("default", spider, ADDON, args),
            CrawlSpec("with-404", spider, {**ADDON, "TAGRATIO_EXTRACT_STATUSES": "404"}, args),
        ]
    )
    default, with_404 = results["default"], results["with-404"]
    for result in results.values():
        assert result.error is None
        assert sorted(item["status"] for item in result.items) == [200, 404, 404, 404, 500]
    # Default: only the 200 page is extracted; every item is delivered, the error pages'
    # untouched, and the skipped pages are counted by status.
    assert default.stats["tagratio/pages_extracted"] == 1
    assert default.stats["tagratio/skipped/http_404"] == 3
    assert default.stats["tagratio/skipped/http_500"] == 1
    for item in default.items:
        assert ("main_text" in item) == (item["status"] == 200)
    # Listed statuses are extracted like 2xx.
    assert with_404.stats["tagratio/pages_extracted"] == 4
    assert with_404.stats["tagratio/skipped/http_500"] == 1
    assert "tagratio/skipped/http_404" not in with_404.stats
    assert all(item["main_text"] for item in with_404.items if item["status"] == 404)


def test_responses_to_requests_without_callback_are_not_extracted(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """robots.txt (and the media pipelines' downloads) are requested with Scrapy's
    NO_CALLBACK: no callback sees them, no item can get their extraction. A server that
    answers /robots.txt with its HTML home page (single-page apps do) had it extracted,
    counted as a page of the crawl (an overview page) and recorded in the site memory."""
    server = local_site()
    links = "".join(f'<li><a href="/a{i}">{headline(p)}</a></li>' for i, p in enumerate(ARTICLES))
    server.add("/robots.txt", FRONT.format(links=links))
    page = server.add("/ok.html", ARTICLES[0].read_bytes())
    settings = {**ADDON, "ROBOTSTXT_OBEY": True}
    spider = "test_scrapy_integration:StatusSpider"
    spec = CrawlSpec("robots", spider, settings, {"pages": json.dumps([page])})
    result = run_crawls([spec])["robots"]
    assert result.stats["robotstxt/response_count"] == 1
    assert result.stats["tagratio/pages_extracted"] == 1
    assert "tagratio/overview_pages" not in result.stats
    assert [item["url"] for item in result.items if item["main_text"]] == [page]


class RulesSpider(CrawlSpider):
    """A CrawlSpider as its documentation writes one: a rule that only follows the
    listing pages (no callback) and a rule that parses the articles."""

    name = "rules"
    rules = (
        Rule(LinkExtractor(allow=r"/list\d\.html$"), follow=True),
        Rule(LinkExtractor(allow=r"/a\d\.html$"), callback="parse_article"),
    )

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        self.start_urls = [base_url + "/front.html"]
        super().__init__(**kwargs)

    def parse_article(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"url": response.url}


def test_pages_a_crawl_spider_only_follows_are_not_extracted(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The listing pages a rule without a callback fetches reach no callback: their links
    are followed and nothing reads their extraction, which was computed for each (in a
    broad crawl, section fronts and pagination are often most of the pages). They are
    counted as skipped; the start page (parsed by ``parse_start_url``) and the articles are
    extracted, and the articles' items get their text."""
    server = local_site()
    articles = [server.add(f"/a{i}.html", page.read_bytes()) for i, page in enumerate(ARTICLES[:4])]
    for number, half in ((1, articles[:2]), (2, articles[2:])):
        links = "".join(f'<li><a href="{path_of(url)}">Story {url}</a></li>' for url in half)
        server.add(f"/list{number}.html", FRONT.format(links=links))
    links = '<li><a href="/list1.html">Page 1</a></li><li><a href="/list2.html">Page 2</a></li>'
    server.add("/front.html", FRONT.format(links=links))
    spider = "test_scrapy_integration:RulesSpider"
    spec = CrawlSpec("rules", spider, ADDON, {"base_url": server.base_url})
    result = run_crawls([spec])["rules"]
    assert result.error is None
    assert result.stats["tagratio/skipped/follow_only"] == 2
    assert result.stats["tagratio/pages_extracted"] == 1 + len(articles)
    assert sorted(item["url"] for item in result.items) == sorted(articles)
    by_url = sorted(result.items, key=lambda item: item["url"])
    for item, page in zip(by_url, ARTICLES[:4], strict=True):
        assert paragraphs(page)[0] in item["main_text"]


class ReplacingPipeline:
    """A project pipeline that returns a new object for every item (a conversion). The
    ``spider`` argument, which Scrapy 2.13 passes and later versions do not, is optional,
    as in TagRatioPipeline."""

    def process_item(self, item: Any, spider: Any = None) -> dict[str, Any]:
        return dict(ItemAdapter(item).asdict())


class DroppingPipeline:
    """A project pipeline that drops every item (a deduplication that saw them all)."""

    def process_item(self, item: Any, spider: Any = None) -> Any:
        raise DropItem("seen before")


@pytest.mark.parametrize(
    ("pipeline", "unclaimed"), [("ReplacingPipeline", 1), ("DroppingPipeline", None)]
)
def test_marks_of_items_that_never_reach_the_pipeline_are_reported_or_forgotten(
    local_site: Callable[..., LocalSite],
    run_crawls: Callable[..., dict[str, CrawlResult]],
    pipeline: str,
    unclaimed: int | None,
) -> None:
    """The spider middleware marks an overview page's item and TagRatioPipeline (priority
    100) drops it. A pipeline before it that drops the item: Scrapy's ``item_dropped``
    frees the mark (it was held until the crawl ended). One that returns a new object:
    the new object is not marked and goes on, so the crawl counts the items our pipeline
    never took and says why in one WARNING."""
    server = local_site()
    links = "".join(
        f'<li><a href="/{p.relative_to(SITE).as_posix()}">{headline(p)}</a></li>' for p in ARTICLES
    )
    front = server.add("/front.html", FRONT.format(links=links))
    article = server.add("/a0.html", ARTICLES[0].read_bytes())
    settings = {**ADDON, "ITEM_PIPELINES": {f"test_scrapy_integration.{pipeline}": 50}}
    pages = json.dumps([front, article])
    spec = CrawlSpec("marks", "test_scrapy_integration:StatusSpider", settings, {"pages": pages})
    result = run_crawls([spec])["marks"]
    assert result.error is None
    assert result.stats["tagratio/overview_pages"] == 1
    assert result.stats.get("tagratio/overview_items_unclaimed") == unclaimed
    assert ("never reached TagRatioPipeline" in result.log) == (unclaimed is not None)
    if unclaimed:  # the replaced overview item went on: what the warning is about
        assert sorted(item["url"] for item in result.items) == sorted([front, article])


class PageRecord:
    """An object that is not an item itemadapter knows (a project's own record class)."""

    def __init__(self, url: str) -> None:
        self.url = url


class RecordSpider(StatusSpider):
    """Yields a :class:`PageRecord` per page, which the project's pipeline converts."""

    name = "record"

    def parse(self, response: Response) -> Iterator[PageRecord]:
        yield PageRecord(response.url)


class RecordPipeline:
    """The project's pipeline that turns its records into dicts (Scrapy hands pipelines
    whatever the spider yields; only the feed needs an item itemadapter knows)."""

    def process_item(self, item: Any, spider: Any = None) -> Any:
        return {"url": item.url, "record": True} if isinstance(item, PageRecord) else item


def test_objects_that_are_not_items_pass_the_pipeline_to_the_projects_own(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """TagRatioPipeline (priority 100) read every object with ``ItemAdapter``, which
    raises on one it does not know: the record never reached the project's pipeline
    (priority 500) and was lost with an ERROR. It passes untouched now, as the spider
    middleware already let it."""
    server = local_site()
    article = server.add("/a0.html", ARTICLES[0].read_bytes())
    settings = {**ADDON, "ITEM_PIPELINES": {"test_scrapy_integration.RecordPipeline": 500}}
    spec = CrawlSpec(
        "records",
        "test_scrapy_integration:RecordSpider",
        settings,
        {"pages": json.dumps([article])},
    )
    result = run_crawls([spec])["records"]
    assert result.error is None
    assert result.items == [{"url": article, "record": True}]
    assert "No adapter found" not in result.log


class RawSourceSpider(StatusSpider):
    """Yields, per page, items whose ``raw_html`` holds the page's body as ``bytes``, as a
    ``bytearray`` and as an ``int`` (no page)."""

    name = "rawsource"

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        body = response.body
        for kind, source in (("bytes", body), ("bytearray", bytearray(body)), ("int", 7)):
            yield {"url": f"{response.url}#{kind}", "raw_html": source}


def test_raw_html_is_read_from_bytes_and_bytearray_and_refused_otherwise(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The pipeline extracts an item's ``raw_html`` as :func:`extract` takes a page: a
    ``bytearray`` (a buffer a spider filled) as its bytes, the same text as ``bytes``; any
    other type gets the error record ``bad_source`` and goes on."""
    server = local_site()
    article = server.add("/a0.html", ARTICLES[0].read_bytes())
    spider = "test_scrapy_integration:RawSourceSpider"
    # The feed is JSON lines, which holds no bytes: the source field is left out of it.
    settings = {**ADDON, "FEED_EXPORT_FIELDS": ["url", "main_text", "tagratio"]}
    spec = CrawlSpec("rawsource", spider, settings, {"pages": json.dumps([article])})
    result = run_crawls([spec])["rawsource"]
    assert result.error is None
    items = {item["url"].rsplit("#", 1)[1]: item for item in result.items}
    assert sorted(items) == ["bytearray", "bytes", "int"]
    assert paragraphs(ARTICLES[0])[0] in items["bytes"]["main_text"]
    assert items["bytearray"]["main_text"] == items["bytes"]["main_text"]
    assert items["int"]["main_text"] is None  # the feed's field, not filled
    assert items["int"]["tagratio"]["error"]["kind"] == "bad_source"


class RefillingSpider(StatusSpider):
    """Fills one dict again for each row of the page and yields it each time (the same
    object: a common way to write a callback)."""

    name = "refilling"

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        item: dict[str, Any] = {"url": response.url}
        for row in range(3):
            item["row"] = row
            yield item


def test_an_overview_item_yielded_more_than_once_is_dropped_each_time(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The drop mark was one per object: the pipeline dropped the first pass of an object
    the callback yielded three times, and the other two went to the feed."""
    server = local_site()
    links = "".join(f'<li><a href="/a{i}">{headline(p)}</a></li>' for i, p in enumerate(ARTICLES))
    front = server.add("/front.html", FRONT.format(links=links))
    article = server.add("/article.html", ARTICLES[0].read_bytes())
    spider = "test_scrapy_integration:RefillingSpider"
    spec = CrawlSpec("refilling", spider, ADDON, {"pages": json.dumps([front, article])})
    result = run_crawls([spec])["refilling"]
    assert result.error is None
    assert [item["url"] for item in result.items] == [article] * 3
    assert result.stats["tagratio/overview_pages"] == 1
    assert result.stats["tagratio/items_dropped"] == 3
    assert result.stats["item_dropped_reasons_count/OverviewPageDropped"] == 3
    assert "tagratio/overview_items_unclaimed" not in result.stats


class RedirectedSpider(StatusSpider):
    """As :class:`StatusSpider`, letting Scrapy's downloader middlewares follow redirects
    and meta refreshes as they do by default."""

    name = "redirected"
    request_meta: ClassVar[dict[str, Any]] = {}


def test_redirected_and_compressed_pages_are_extracted_as_the_spider_sees_them(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The downloader middleware sits after Scrapy's redirect, meta-refresh and
    decompression middlewares (540 < 580, 590, 600): it extracts the final, decoded page
    the callback gets, not a 301, a refresh stub or gzip bytes (which would be an error
    record of kind ``not_html``)."""
    server = local_site()
    moved, refreshed, compressed = ARTICLES[:3]
    server.add("/new/article.html", moved.read_bytes())
    server.add("/refreshed.html", refreshed.read_bytes())
    pages = [
        server.add("/old.html", b"", status=301, headers={"Location": "/new/article.html"}),
        server.add(
            "/refresh.html",
            '<html><head><meta http-equiv="refresh" content="0; url=/refreshed.html">'
            "</head><body></body></html>",
        ),
        server.add(
            "/compressed.html",
            gzip.compress(compressed.read_bytes()),
            headers={"Content-Encoding": "gzip"},
        ),
    ]
    settings = {**ADDON, "TAGRATIO_SITE_MEMORY": False}
    spider = "test_scrapy_integration:RedirectedSpider"
    spec = CrawlSpec("redirects", spider, settings, {"pages": json.dumps(pages)})
    result = run_crawls([spec])["redirects"]
    assert result.error is None
    texts = {item["url"]: item["main_text"] for item in result.items}
    expected = {
        server.url("/new/article.html"): extract(moved.read_bytes()).text,
        server.url("/refreshed.html"): extract(refreshed.read_bytes()).text,
        server.url("/compressed.html"): extract(compressed.read_bytes()).text,
    }
    assert texts == expected
    assert all(expected.values())
    assert result.stats["tagratio/pages_extracted"] == 3
    assert not any(key.startswith("tagratio/errors/") for key in result.stats)


RUSSIAN = "<p>Съешь же ещё этих мягких французских булок, да выпей чаю.</p>" * 30
JAPANESE = "<p>東京で桜が咲きました。今年は例年より早く、公園は人で一杯です。</p>" * 30


class Recoding:
    """Downloader middlewares as projects write them, before the plugin's (543, the
    project template's priority): one fixes a site that labels its cp1251 pages UTF-8,
    one stands for a renderer that sends a browser's DOM on as UTF-8 (the DOM keeps the
    page's ``<meta charset>``)."""

    def process_response(self, request: Request, response: Response, spider: Any = None) -> Any:
        if response.url.endswith("/mislabelled.html"):
            return response.replace(encoding="cp1251")
        if response.url.endswith("/rendered.html"):
            dom = f'<html><head><meta charset="shift_jis"></head><body>{JAPANESE}</body></html>'
            return HtmlResponse(response.url, body=dom, encoding="utf-8", request=request)
        return response


def test_an_encoding_given_by_a_middleware_decodes_the_page_as_the_callback_reads_it(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """``response.text`` reads the body in the encoding a middleware gave the response;
    the extraction read it by the header or the meta charset, and the main text was
    mojibake (U+FFFD, or Japanese read as Shift-JIS) while the callback saw the page."""
    server = local_site()
    page = f"<html><body><article>{RUSSIAN}</article></body></html>"
    pages = [
        server.add("/mislabelled.html", page.encode("cp1251"), "text/html; charset=utf-8"),
        server.add("/rendered.html", "<html><body>loading</body></html>"),
        server.add("/plain.html", page.encode("cp1251"), "text/html; charset=windows-1251"),
    ]
    settings = {
        **ADDON,
        "TAGRATIO_SITE_MEMORY": False,
        "DOWNLOADER_MIDDLEWARES": {"test_scrapy_integration.Recoding": 543},
    }
    spider = "test_scrapy_integration:RedirectedSpider"
    args = {"pages": json.dumps(pages)}
    results = run_crawls(
        [
            CrawlSpec("inline", spider, settings, args),
            CrawlSpec("workers", spider, {**settings, "TAGRATIO_WORKERS": 1}, args),
        ]
    )
    russian = extract(RUSSIAN).text
    expected = {pages[0]: russian, pages[1]: extract(JAPANESE).text, pages[2]: russian}
    for result in results.values():
        assert result.error is None
        assert {item["url"]: item["main_text"] for item in result.items} == expected
        assert "\ufffd" not in russian and "булок" in russian


class ProjectExtractor(TagRatioDownloaderMiddleware):
    """A project's subclass of the downloader middleware, listed with the add-on on."""


class ProjectAnnotator(TagRatioSpiderMiddleware):
    """A project's subclass of the spider middleware, listed with the add-on on."""


def test_a_listed_subclass_of_a_component_stands_for_it(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The add-on added its own component beside the project's subclass of it: every
    page was extracted twice (``pages_extracted`` and the overview count doubled, twice
    the CPU), every item annotated twice."""
    server = local_site()
    pages = [server.add(f"/a{i}.html", page.read_bytes()) for i, page in enumerate(ARTICLES[:3])]
    settings = {
        **ADDON,
        "DOWNLOADER_MIDDLEWARES": {"test_scrapy_integration.ProjectExtractor": 540},
        "SPIDER_MIDDLEWARES": {"test_scrapy_integration.ProjectAnnotator": 950},
    }
    spider = "test_scrapy_integration:RedirectedSpider"
    spec = CrawlSpec("subclass", spider, settings, {"pages": json.dumps(pages)})
    result = run_crawls([spec])["subclass"]
    assert result.error is None
    assert sorted(item["url"] for item in result.items if item["main_text"]) == sorted(pages)
    assert result.stats["tagratio/pages_extracted"] == 3
    assert result.stats["tagratio/items_annotated"] == 3


class FailingPipeline:
    """A project pipeline that cannot start (a database that is down)."""

    @classmethod
    def from_crawler(cls, crawler: Any) -> FailingPipeline:
        raise RuntimeError("the database is down")


def test_a_crawl_that_fails_to_start_leaves_no_worker_behind(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The workers were started when the downloader middleware was built; a component
    built after it that fails (another pipeline, or our spider middleware refusing a
    drop action without our pipeline) ends the crawl before its spider opens, so no
    spider_closed stopped them: a process running crawl after crawl (a service) kept
    every failed crawl's workers. The process-wide crawl that follows still runs."""
    server = local_site()
    page = server.add("/a.html", ARTICLES[0].read_bytes())
    spider = "test_scrapy_integration:StatusSpider"
    args = {"pages": json.dumps([page])}
    workers = {**ADDON, "TAGRATIO_WORKERS": 2}
    failing = {"ITEM_PIPELINES": {"test_scrapy_integration.FailingPipeline": 200}}
    no_pipeline = {
        "TAGRATIO_WORKERS": 2,
        "DOWNLOADER_MIDDLEWARES": {f"{MIDDLEWARES}.TagRatioDownloaderMiddleware": 540},
        "SPIDER_MIDDLEWARES": {f"{MIDDLEWARES}.TagRatioSpiderMiddleware": 950},
    }
    results = run_crawls(
        [
            CrawlSpec("failing", spider, {**workers, **failing}, args),
            CrawlSpec("no-pipeline", spider, no_pipeline, args),
            CrawlSpec("fine", spider, workers, args),
        ]
    )
    assert "the database is down" in str(results["failing"].error)
    assert "needs scrapy_tagratio.pipelines.TagRatioPipeline" in str(results["no-pipeline"].error)
    assert results["fine"].error is None
    assert [item["main_text"] for item in results["fine"].items] == [
        extract(ARTICLES[0].read_bytes()).text
    ]
    assert results["fine"].live_children == 0


class WarmStartSpider(StatusSpider):
    """As :class:`StatusSpider`, after a first item saying whether the language detector's
    model (py3langid's, seconds to load) was loaded before any page was requested."""

    name = "warm-start"

    async def start(self) -> AsyncIterator[Any]:
        from scrapy_tagratio import language

        loaded = language._identifier.cache_info().currsize == 1
        yield {"url": "start", "detector_loaded": loaded}
        async for request in super().start():
            yield request


@pytest.mark.parametrize(("metadata", "loaded"), [(True, True), (False, False)])
def test_the_crawl_loads_what_its_pages_need_before_the_first_page(
    metadata: bool,
    loaded: bool,
    local_site: Callable[..., LocalSite],
    run_crawls: Callable[..., dict[str, CrawlResult]],
) -> None:
    """Without workers, the models load when the crawl starts, not on its first page (whose
    extraction time, in the stats, would hold the seconds of the language detector's
    model); and only what the crawl's settings use."""
    server = local_site()
    args = {"pages": json.dumps([server.add("/ok.html", ARTICLES[0].read_bytes())])}
    settings = {**ADDON, "TAGRATIO_METADATA": metadata}
    spec = CrawlSpec("warm", "test_scrapy_integration:WarmStartSpider", settings, args)
    result = run_crawls([spec])["warm"]
    assert result.error is None
    start, page = result.items
    assert start == {"url": "start", "detector_loaded": loaded}
    assert page["status"] == 200 and page["main_text"]
    assert result.stats["tagratio/pages_extracted"] == 1


# ---------------------------------------------------------------------- crawl scripts
#: A crawl script as Scrapy's "run Scrapy from a script" documentation writes it: no
#: ``if __name__ == "__main__":`` guard. Each time the module is executed it appends a
#: line to ``runs``, so a worker that imported it again would show.
UNGUARDED_SCRIPT = """
import pathlib, sys
import scrapy
from scrapy.crawler import CrawlerProcess

base_url, feed, runs = sys.argv[1:4]
with open(runs, "a") as out:
    out.write("run\\n")


class Follow(scrapy.Spider):
    name = "follow"
    start_urls = [base_url + "/index.html"]

    def parse(self, response):
        yield from response.follow_all(css="a", callback=self.parse_page)

    def parse_page(self, response):
        yield {"url": response.url}


process = CrawlerProcess({
    "ADDONS": {"scrapy_tagratio.Addon": 100},
    "TAGRATIO_WORKERS": 2,
    "CLOSESPIDER_ITEMCOUNT": 3,
    "CONCURRENT_REQUESTS": 2,
    # Downloads paced in wall time (about 10 pages a second), so the workers' start-up
    # and three extractions end before the last page is fetched on any machine: pages
    # scheduled but not yet downloaded when the spider closes are what "early" leaves out.
    "DOWNLOAD_DELAY": 0.1,
    "FEEDS": {feed: {"format": "jsonlines"}},
    "LOG_LEVEL": "WARNING",
})
process.crawl(Follow)
process.start()
"""


def test_a_crawl_script_without_main_guard_runs_workers_once_and_ends_early(
    local_site: Callable[..., LocalSite], tmp_path: Path
) -> None:
    """Worker processes do not execute the crawl script again (multiprocessing's spawn
    would: each worker would start its own crawl and never serve the pool, and the crawl
    would hang); a crawl that stops early on CLOSESPIDER_ITEMCOUNT still ends."""
    server = local_site()
    paths = [f"/copy{copy}/{page.name}" for copy in range(10) for page in ARTICLES]
    for path, page in zip(paths, ARTICLES * 10, strict=True):
        server.add(path, page.read_bytes(), "text/html")
    links = "".join(f'<a href="{path}">{path}</a>' for path in paths)
    server.add("/index.html", f"<html><body>{links}</body></html>".encode(), "text/html")
    script, feed, runs = tmp_path / "crawl.py", tmp_path / "items.jsonl", tmp_path / "runs"
    script.write_text(UNGUARDED_SCRIPT)
    proc = subprocess.run(
        [sys.executable, str(script), server.base_url, str(feed), str(runs)],
        capture_output=True,
        text=True,
        timeout=120,
        env=python_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert runs.read_text() == "run\n", "the script ran once: no worker imported it"
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert 3 <= len(items) < len(paths)  # ended early; items of pages in flight are kept
    assert all(item["main_text"] for item in items)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


# ---------------------------------------------------------------------- example project
def run_example(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "news", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=python_env(),
    )


def test_example_project_crawl(tmp_path: Path) -> None:
    feed = tmp_path / "articles.jsonl"
    proc = run_example(
        "-O", str(feed), "-s", "AUTOTHROTTLE_ENABLED=False", cwd=REPO / "example_project"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    by_url = {item["url"]: item for item in items}
    assert len(by_url) == len(items)
    # The READMEs' eight lines: the seven articles and the short about page, tagged
    # "uncertain" (the home page and the three section fronts are overview pages).
    verdicts = sorted(item["tagratio"]["overview_verdict"] for item in items)
    assert verdicts == ["content"] * len(ARTICLES) + ["uncertain"]
    # Every article, once, with its text.
    for page in ARTICLES:
        item = by_url.pop(page.as_uri())
        assert all(p in item["main_text"] for p in paragraphs(page))
        assert item["tagratio"]["is_overview"] is False
        # The project asks for Markdown; the metadata rides in the scores.
        headline = html.unescape(re.search(r"<h1>(.*?)</h1>", page.read_text()).group(1))  # type: ignore[union-attr]
        assert headline not in item["main_text"]  # the headline is the metadata's
        assert item["tagratio"]["metadata"]["headline"] == headline
        assert item["tagratio"]["metadata"]["language"] == "en"
    # No item from the home page or the section fronts (the links to every article were
    # on them) unless tagged "uncertain" (a front of two stories: kept, not content); the
    # short "about" page is neither an article nor a listing.
    for url, item in by_url.items():
        if url != (SITE / "about.html").as_uri():
            assert (
                url.endswith("/index.html") and item["tagratio"]["overview_verdict"] == "uncertain"
            )
    assert (SITE / "index.html").as_uri() not in by_url  # the home page: dropped


def test_example_project_on_a_live_site(site: LocalSite, tmp_path: Path) -> None:
    """-a start_url=... over HTTP: the spider stays on the host and keeps the articles and
    the about page."""
    feed = tmp_path / "live.jsonl"
    proc = run_example(
        "-a", f"start_url={site.url('/index.html')}", "-O", str(feed),
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "ROBOTSTXT_OBEY=False",
        cwd=REPO / "example_project",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    urls = {item["url"] for item in items}
    articles = {site.url("/" + p.relative_to(SITE).as_posix()) for p in ARTICLES}
    uncertain = {i["url"] for i in items if i["tagratio"]["overview_verdict"] == "uncertain"}
    assert articles <= urls <= articles | {site.url("/about.html")} | uncertain
    assert site.url("/index.html") not in urls
    # The short "about" page is no listing: its "most read" box, on every page of the
    # site, links to five headlines the site memory knows, but its item is kept.
    assert site.url("/about.html") in urls


def test_example_project_bad_setting_stops_the_crawl_with_one_line(tmp_path: Path) -> None:
    proc = run_example(
        "-O", str(tmp_path / "x.jsonl"), "-s", "TAGRATIO_WORKERS=many",
        cwd=REPO / "example_project",
    )  # fmt: skip
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line]
    assert "TAGRATIO_WORKERS must be an integer >= 0; got 'many'" in errors[0]
    assert not (tmp_path / "x.jsonl").exists()
    if SCRAPY_VERSION < (2, 14):
        # Scrapy 2.13's `crawl` leaves the failed crawl Deferred unhandled, and Twisted
        # prints it (with its traceback) to stderr itself, outside Python logging.
        return
    assert len(errors) == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr


def test_example_project_without_the_pipeline_stops_with_one_line(tmp_path: Path) -> None:
    """The middlewares listed by hand, the pipeline forgotten: dropping overview items
    needs it, and `scrapy crawl` says so in one ERROR line, as for a bad value (it printed
    some 30 lines of asyncio's "Task exception was never retrieved" traceback)."""
    middlewares = {
        "DOWNLOADER_MIDDLEWARES": json.dumps({f"{MIDDLEWARES}.TagRatioDownloaderMiddleware": 540}),
        "SPIDER_MIDDLEWARES": json.dumps({f"{MIDDLEWARES}.TagRatioSpiderMiddleware": 950}),
    }
    by_hand = [arg for name, value in middlewares.items() for arg in ("-s", f"{name}={value}")]
    proc = run_example(
        "-O", str(tmp_path / "x.jsonl"), "-s", "ADDONS={}", *by_hand,
        cwd=REPO / "example_project",
    )  # fmt: skip
    assert_stops_with_one_line(proc, "TAGRATIO_OVERVIEW_ACTION='drop' needs")


def assert_stops_with_one_line(proc: subprocess.CompletedProcess[str], *parts: str) -> None:
    """The crawl did not start, and its one ERROR line says the plugin's ``parts``."""
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line or "CRITICAL" in line]
    assert "Bad scrapy-tagratio setting" in errors[0], proc.stderr[-3000:]
    for part in parts:
        assert part in errors[0], proc.stderr[-3000:]
    if SCRAPY_VERSION < (2, 14):
        return  # Twisted prints the failed crawl Deferred itself (see above)
    assert len(errors) == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "never retrieved" not in proc.stderr


def test_example_project_with_a_component_path_that_does_not_load_stops_with_one_line(
    tmp_path: Path,
) -> None:
    """A component switched off under a path guessed from ``scrapy_tagratio.Addon``: the
    add-on loaded every listed path through Scrapy, and the NameError came out as some 30
    lines of asyncio's "Task exception was never retrieved" traceback."""
    off = json.dumps({"scrapy_tagratio.TagRatioSpiderMiddleware": None})
    proc = run_example(
        "-O", str(tmp_path / "x.jsonl"), "-s", f"SPIDER_MIDDLEWARES={off}",
        cwd=REPO / "example_project",
    )  # fmt: skip
    assert_stops_with_one_line(
        proc,
        "SPIDER_MIDDLEWARES lists 'scrapy_tagratio.TagRatioSpiderMiddleware'",
        f"{MIDDLEWARES}.TagRatioSpiderMiddleware",
    )


def test_example_project_switched_off_says_so_in_one_info_line(tmp_path: Path) -> None:
    feed = tmp_path / "off.jsonl"
    proc = run_example(
        "-O", str(feed), "-s", "TAGRATIO_ENABLED=False", "-s", "AUTOTHROTTLE_ENABLED=False",
        cwd=REPO / "example_project",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    ours = [line for line in proc.stderr.splitlines() if "TAGRATIO_ENABLED" in line]
    assert len(ours) == 1 and "INFO" in ours[0] and "switched off" in ours[0], ours
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    assert len(items) == len(ARTICLES) + 5  # every page, home page and section fronts too
    assert not any("main_text" in item for item in items)


# ---------------------------------------------------------------------- downloader middleware
def make_crawler(settings: dict[str, Any]) -> Any:
    """A crawler for calling components directly. Scrapy 2.13's ``get_crawler`` needs an
    installed reactor (later versions do not): the asyncio one is installed then."""
    try:
        return get_crawler(settings_dict=settings)
    except RuntimeError:
        install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
        return get_crawler(settings_dict=settings)


def downloaded(meta: dict[str, Any], body: bytes, response_class: type = HtmlResponse) -> Any:
    """Run the downloader middleware on one response (in this process, inline)."""
    crawler = make_crawler(ADDON)
    mw = TagRatioDownloaderMiddleware.from_crawler(crawler)
    request = Request("http://127.0.0.1/page", meta=meta)
    response = response_class(request.url, body=body, request=request)
    assert asyncio.run(mw.process_response(request, response)) is response
    assert crawler.stats is not None
    stats = crawler.stats.get_stats()
    return request.meta, {k: v for k, v in stats.items() if k.startswith("tagratio/")}


def test_downloader_middleware_meta_and_per_request_switches(
    extractions: dict[str, Any],
) -> None:
    page = ARTICLES[0].read_bytes()
    meta, stats = downloaded({}, page)
    assert meta[EXTRACTION_META].text == extractions["article"].text
    assert stats["tagratio/pages_extracted"] == 1
    # Switched off for one request: no extraction, counted.
    meta, stats = downloaded({"tagratio_settings": {"TAGRATIO_ENABLED": False}}, page)
    assert EXTRACTION_META not in meta and stats == {"tagratio/skipped/disabled": 1}
    # A bad override is this page's error, not the crawl's.
    meta, stats = downloaded({"tagratio_settings": {"TAGRATIO_ALGORITHM": "x"}}, page)
    assert meta[ERROR_META]["kind"] == "bad_settings"
    assert "TAGRATIO_ALGORITHM must be one of" in meta[ERROR_META]["message"]
    assert stats == {"tagratio/errors/bad_settings": 1}
    # Meta copied from a parent page (response.follow(..., meta=response.meta)) must not
    # lend the parent's extraction to a non-HTML child.
    meta, stats = downloaded({EXTRACTION_META: extractions["article"]}, b"{}", TextResponse)
    assert EXTRACTION_META not in meta and stats == {"tagratio/skipped/non_html": 1}


def test_an_ignored_overview_page_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    # Scrapy logs no IgnoreRequest: the page vanished without a word at any log level.
    crawler = make_crawler({**ADDON, "TAGRATIO_OVERVIEW_ACTION": "ignore"})
    mw = TagRatioDownloaderMiddleware.from_crawler(crawler)
    links = "".join(f'<li><a href="/a{i}">{headline(p)}</a></li>' for i, p in enumerate(ARTICLES))
    request = Request("http://127.0.0.1/front.html")
    response = HtmlResponse(request.url, body=FRONT.format(links=links).encode(), request=request)
    with caplog.at_level("DEBUG", logger="scrapy_tagratio"), pytest.raises(IgnoreRequest):
        asyncio.run(mw.process_response(request, response))
    [record] = [r for r in caplog.records if r.name == "scrapy_tagratio.middlewares"]
    assert record.levelname == "DEBUG"
    assert record.getMessage().startswith("Ignored <200 http://127.0.0.1/front.html>: overview")


def test_disabled_components_are_not_configured() -> None:
    crawler = make_crawler({**ADDON, "TAGRATIO_ENABLED": False})
    for component in (TagRatioDownloaderMiddleware, TagRatioSpiderMiddleware, TagRatioPipeline):
        with pytest.raises(NotConfigured):
            component.from_crawler(crawler)


# ---------------------------------------------------------------------- spider middleware
@pytest.fixture(scope="module")
def extractions() -> dict[str, Any]:
    article = ARTICLES[0]
    front = FRONT.format(
        links="".join(
            f'<li><a href="/a{i}">Harbour story number {i} of today</a></li>' for i in range(9)
        )
    )
    return {"article": extract(article.read_bytes()), "front": extract(front)}


def response_with(meta: dict[str, Any]) -> HtmlResponse:
    request = Request("http://127.0.0.1/page", meta=meta)
    return HtmlResponse(request.url, body=b"<html></html>", request=request)


#: Scrapy 2.13 requires the ``spider`` argument of ``process_spider_output``; later
#: versions deprecate it.
SPIDER_ARG = (
    (None,)
    if inspect.signature(BaseSpiderMiddleware.process_spider_output).parameters["spider"].default
    is inspect.Parameter.empty
    else ()
)


def spider_middleware(**settings: Any) -> TagRatioSpiderMiddleware:
    return TagRatioSpiderMiddleware.from_crawler(make_crawler({**ADDON, **settings}))


@pytest.mark.parametrize("output", ["sync", "async"])
def test_spider_middleware_keeps_order_and_identity(
    output: str, extractions: dict[str, Any]
) -> None:
    mw = spider_middleware()
    outputs = [{"n": 0}, Request("http://127.0.0.1/a"), PageItem(url="u", kind="k"), {"n": 3}]

    def run(response: Response) -> list[Any]:
        if output == "sync":
            return list(mw.process_spider_output(response, iter(outputs), *SPIDER_ARG))

        async def source() -> AsyncIterator[Any]:
            for o in outputs:
                yield o

        async def collect() -> list[Any]:
            output = mw.process_spider_output_async(response, source(), *SPIDER_ARG)
            return [o async for o in output]

        return asyncio.run(collect())

    article = run(response_with({EXTRACTION_META: extractions["article"]}))
    assert [id(o) for o in article] == [id(o) for o in outputs]
    assert article[0]["main_text"] == extractions["article"].text
    metadata = extractions["article"].metadata.to_dict()
    assert article[2]["tagratio"] == {**extractions["article"].figures(), "metadata": metadata}
    assert all(mw.state.take_drop(o) is None for o in article)
    # Overview page: every output goes on, its items marked for the pipeline to drop.
    front = run(response_with({EXTRACTION_META: extractions["front"]}))
    assert [id(o) for o in front] == [id(o) for o in outputs]
    reasons = [mw.state.take_drop(o) for o in front]
    assert reasons[1] is None
    assert all("overview page (overview score" in str(r) for i, r in enumerate(reasons) if i != 1)


def test_each_set_of_missing_fields_of_a_class_is_named_once(
    extractions: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Requests that rename the fields (or ask for the HTML) leave a class short of other
    fields: each set is named in its own WARNING (the first set alone was named, the
    others only counted)."""
    mw = spider_middleware()
    article = extractions["article"]
    overrides = [
        {"TAGRATIO_TEXT_FIELD": "body"},
        {"TAGRATIO_ATTACH_HTML": True},
        {"TAGRATIO_ATTACH_HTML": True},
        {"TAGRATIO_TEXT_FIELD": "body"},
    ]
    with caplog.at_level("WARNING", logger="scrapy_tagratio"):
        for override in overrides:
            meta = {EXTRACTION_META: article, "tagratio_settings": override}
            list(mw.process_spider_output(response_with(meta), [PageItem(url="u")], *SPIDER_ARG))
    warnings = [r.getMessage() for r in caplog.records if "PageItem" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "has no field 'body'" in warnings[0]
    assert "has no field 'main_html'" in warnings[1] and "TAGRATIO_HTML_FIELD" in warnings[1]


def test_spider_middleware_error_record_and_field_renames(extractions: dict[str, Any]) -> None:
    mw = spider_middleware(TAGRATIO_TEXT_FIELD="body", TAGRATIO_SCORES_FIELD="density")
    error = {"kind": "not_html", "message": "input is PNG image, not HTML"}
    [item] = mw.process_spider_output(
        response_with({ERROR_META: error}), [{"url": "u"}], *SPIDER_ARG
    )
    assert item["body"] is None
    assert item["density"]["error"] == error
    assert item["density"]["algorithm"] == DEFAULT_ALGORITHM
    renamed = response_with(
        {
            EXTRACTION_META: extractions["article"],
            "tagratio_settings": {"TAGRATIO_TEXT_FIELD": "text", "TAGRATIO_ATTACH_HTML": True},
        }
    )
    [item] = mw.process_spider_output(renamed, [{"url": "u"}], *SPIDER_ARG)
    assert item["text"] == extractions["article"].text
    assert item["main_html"] == extractions["article"].html
    # A response that was not extracted (not HTML): the item is untouched.
    plain = TextResponse("http://127.0.0.1/t", body=b"x", request=Request("http://127.0.0.1/t"))
    assert list(mw.process_spider_output(plain, [{"url": "u"}], *SPIDER_ARG)) == [{"url": "u"}]


@dataclasses.dataclass
class BareDataclass:
    """A project's own item: no field for the plugin."""

    url: str
    title: str | None


@dataclasses.dataclass
class TextOnlyDataclass:
    url: str
    title: str | None
    main_text: str | None = None


class ItemClassSpider(scrapy.Spider):
    """Follows every link of the site, yielding one item of the class it is given."""

    name = "item-class"

    def __init__(self, start_url: str, item_class: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]
        self.item_class = globals()[item_class]

    def parse(self, response: Response) -> Iterator[Any]:
        yield self.item_class(url=response.url, title=response.css("title::text").get())
        yield from response.follow_all(css="a")


def test_declared_item_class_without_the_fields_loses_no_item_and_gets_what_it_declares(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    # Starting at an article: the links to the rest of the site are on article pages.
    spider = "test_scrapy_integration:ItemClassSpider"
    args = {"start_url": site.url("/" + ARTICLES[0].relative_to(SITE).as_posix())}
    bare = {**args, "item_class": "BareDataclass"}
    results = run_crawls(
        [
            CrawlSpec("off", spider, {}, bare),
            CrawlSpec("bare", spider, ADDON, bare),
            CrawlSpec(
                "text-only",
                spider,
                {**ADDON, "TAGRATIO_SCORES_FIELD": ""},
                {**args, "item_class": "TextOnlyDataclass"},
            ),
            CrawlSpec(
                "text-only-default", spider, ADDON, {**args, "item_class": "TextOnlyDataclass"}
            ),
        ]
    )
    off, on, text_only = results["off"].stats, results["bare"].stats, results["text-only"].stats
    # Every request the callbacks yield is scheduled, as without the plugin.
    assert on["downloader/request_count"] == off["downloader/request_count"] > 10
    assert on["scheduler/enqueued"] == off["scheduler/enqueued"]
    # Every item arrives (unchanged) or is dropped as an overview page's item.
    dropped = on.get("item_dropped_reasons_count/OverviewPageDropped", 0)
    assert on["item_scraped_count"] + dropped == off["item_scraped_count"]
    assert on["tagratio/items_unannotated"] == off["item_scraped_count"]
    assert all(set(item) == {"url", "title"} for item in results["bare"].items)
    assert "log_count/ERROR" not in on
    warnings = [line for line in results["bare"].log.splitlines() if "BareDataclass" in line]
    assert len(warnings) == 1, warnings
    assert "Items of class test_scrapy_integration.BareDataclass" in warnings[0]
    assert "no field 'main_text', 'tagratio'" in warnings[0]
    assert "TAGRATIO_TEXT_FIELD / TAGRATIO_SCORES_FIELD" in warnings[0]
    assert "to '' to leave them out" in warnings[0]
    # With the scores field switched off, a class with the text field gets the text.
    articles = [i for i in results["text-only"].items if i["main_text"]]
    assert len(articles) >= len(ARTICLES)
    assert all(set(item) == {"url", "title", "main_text"} for item in results["text-only"].items)
    assert "tagratio/items_unannotated" not in text_only
    assert text_only["tagratio/items_annotated"] >= len(ARTICLES)
    # Left on, the class still gets the text it declares; the warning names what it lacks.
    partly = results["text-only-default"]
    article_urls = {site.url("/" + page.relative_to(SITE).as_posix()) for page in ARTICLES}
    assert article_urls <= {i["url"] for i in partly.items if i["main_text"]}
    partly_dropped = partly.stats.get("item_dropped_reasons_count/OverviewPageDropped", 0)
    assert partly.stats["tagratio/items_partly_annotated"] == len(partly.items) + partly_dropped
    assert "tagratio/items_unannotated" not in partly.stats
    warnings = [line for line in partly.log.splitlines() if "TextOnlyDataclass pass" in line]
    assert len(warnings) == 1, warnings
    assert "pass with 'main_text' only: the class has no field 'tagratio'" in warnings[0]
    assert "TAGRATIO_SCORES_FIELD" in warnings[0]


class StrictModel(pydantic.BaseModel):
    """Validates assignments: its text must be a str (a failed page's None is refused)."""

    model_config = pydantic.ConfigDict(validate_assignment=True)
    url: str
    main_text: str = ""
    tagratio: dict[str, Any] = {}


class TypedScores(pydantic.BaseModel):
    """Validates assignments: its scores must be numbers (the scores are not all)."""

    model_config = pydantic.ConfigDict(validate_assignment=True)
    url: str
    main_text: str | None = None
    tagratio: dict[str, float] | None = None
    raw_html: str | None = None


@attrs.define
class ValidatedAttrs:
    """attrs runs validators on assignment: its text must be a str."""

    url: str
    main_text: str = attrs.field(default="", validator=attrs.validators.instance_of(str))
    tagratio: dict[str, Any] | None = None


@dataclasses.dataclass(frozen=True)
class FrozenItem:
    url: str
    main_text: str | None = None
    tagratio: dict[str, Any] | None = None


class StrictItemSpider(scrapy.Spider):
    """Yields, per page, items of classes that refuse some of the plugin's values between
    two dicts, a raw-HTML item for the pipeline, and a request."""

    name = "strict-items"

    def __init__(self, urls: str, follow: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = json.loads(urls)
        self.follow = follow

    def parse(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url, "kind": "before"}
        yield StrictModel(url=response.url)
        yield TypedScores(url=response.url)
        yield ValidatedAttrs(url=response.url)
        yield FrozenItem(url=response.url)
        yield {"url": response.url, "kind": "after"}
        yield TypedScores(url=response.url + "#raw", raw_html=response.text)
        yield Request(self.follow, callback=self.parse_followed)

    def parse_followed(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url, "kind": "followed"}


def test_items_that_refuse_a_value_are_kept_with_the_rest_of_the_output(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """An item class that validates assignment (pydantic's validate_assignment, attrs
    validators) or is frozen refuses some values: the assignment raised into Scrapy, and
    the item, every later item of the callback and its requests were lost (a crawl
    'Spider error'); a raw-HTML item was lost in the pipeline. Now the item goes on with
    what it took, counted, and one WARNING per class names the refused field."""
    png = site.add("/strict/picture.html", b"\x89PNG\r\n\x1a\n" + bytes(300), "text/html")
    article = site.url("/" + ARTICLES[0].relative_to(SITE).as_posix())
    follow = site.url("/" + ARTICLES[1].relative_to(SITE).as_posix())
    args = {"urls": json.dumps([article, png]), "follow": follow}
    spider = "test_scrapy_integration:StrictItemSpider"
    result = run_crawls([CrawlSpec("strict", spider, ADDON, args)])["strict"]
    stats = result.stats
    assert result.error is None
    assert "spider_exceptions/count" not in stats and "log_count/ERROR" not in stats, result.log
    # Every item of both pages (7 each) and the followed page's arrives; the request went out.
    assert stats["item_scraped_count"] == 2 * 7 + 1
    by_url: dict[str, list[dict[str, Any]]] = {}
    for item in result.items:
        by_url.setdefault(item["url"], []).append(item)
    assert [i["kind"] for i in by_url[follow]] == ["followed"]
    text = by_url[article][-1]["main_text"]
    assert all(p in text for p in paragraphs(ARTICLES[0]))
    # The article: the strict model takes both, the typed scores its text only, the
    # validated attrs class both, the frozen one nothing.
    assert [i.get("main_text") for i in by_url[article]] == [text, text, text, text, None, text]
    assert [bool(i.get("tagratio")) for i in by_url[article]] == [1, 1, 0, 1, 0, 1]
    # The picture: its None text is refused by the str fields; the error record goes in.
    picture = by_url[png]
    assert [i.get("main_text") for i in picture] == [None, "", None, "", None, None]
    assert [(i.get("tagratio") or {}).get("error", {}).get("kind") for i in picture] == [
        "not_html", "not_html", None, "not_html", None, "not_html"
    ]  # fmt: skip
    # The pipeline's raw-HTML items (the pages' own HTML): the text taken, the scores not.
    [raw] = by_url[article + "#raw"]
    assert raw["main_text"] == text and raw["tagratio"] is None
    # Partly annotated: TypedScores and its raw item on both pages; on the picture also
    # StrictModel and ValidatedAttrs. Unannotated: the frozen ones.
    assert stats["tagratio/items_partly_annotated"] == 2 + 4
    assert stats["tagratio/items_unannotated"] == 2
    warnings = [line for line in result.log.splitlines() if " refuse" in line]
    classes = ["StrictModel", "TypedScores", "ValidatedAttrs", "FrozenItem"]
    assert sorted(c for c in classes for w in warnings if f".{c} " in w) == sorted(classes)
    assert len(warnings) == len(classes), warnings  # one per class and refused fields
    assert any("'tagratio'" in w and "TypedScores" in w and "Error" in w for w in warnings)


# ---------------------------------------------------------------------- request meta
class MetaProbe:
    """Downloader middleware (first in line) counting requests that reach the downloader
    with an extraction or error record in their meta."""

    def __init__(self, crawler: Any) -> None:
        self.stats = crawler.stats

    @classmethod
    def from_crawler(cls, crawler: Any) -> MetaProbe:
        return cls(crawler)

    def process_request(self, request: Request, spider: Any = None) -> None:
        self.stats.inc_value("probe/requests")
        if EXTRACTION_META in request.meta or ERROR_META in request.meta:
            self.stats.inc_value("probe/requests_with_extraction")


class FollowMetaSpider(scrapy.Spider):
    """Follows every link with ``meta=response.meta`` (a common idiom) and reports, per
    page, the title of the extraction its callback sees."""

    name = "follow-meta"

    def __init__(self, start_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]

    def parse(self, response: Response) -> Iterator[Any]:
        extraction = response.meta.get(EXTRACTION_META)
        yield {
            "url": response.url,
            "title": extraction.title if extraction is not None else None,
            "page_title": response.css("title::text").get(),
        }
        yield from response.follow_all(css="a", meta=response.meta)


def test_requests_the_callback_yields_do_not_carry_the_extraction(
    site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    probe = {"DOWNLOADER_MIDDLEWARES": {"test_scrapy_integration.MetaProbe": 1}}
    spec = CrawlSpec(
        "follow-meta",
        "test_scrapy_integration:FollowMetaSpider",
        {**ADDON, **probe, "TAGRATIO_OVERVIEW_ACTION": "tag", "DEPTH_LIMIT": 2},
        {"start_url": site.url("/index.html")},
    )
    result = run_crawls([spec])["follow-meta"]
    assert result.error is None
    stats = result.stats
    assert stats["probe/requests"] > 10  # the links were followed
    assert "probe/requests_with_extraction" not in stats
    # Each callback still sees its own page's extraction in response.meta.
    html_items = [item for item in result.items if item["page_title"] is not None]
    assert len(html_items) >= 10
    assert all(item["title"] is not None for item in html_items)
    assert all(item["page_title"].startswith(item["title"]) for item in html_items)


def test_a_re_yielded_response_request_is_stripped_on_a_copy(extractions: dict[str, Any]) -> None:
    mw = spider_middleware()
    response = response_with({EXTRACTION_META: extractions["article"], "depth": 1})
    [request] = mw.process_spider_output(response, [response.request], *SPIDER_ARG)
    assert EXTRACTION_META not in request.meta and request.meta["depth"] == 1
    assert response.meta[EXTRACTION_META] is extractions["article"]  # the callback keeps it


def test_dropping_needs_the_pipeline() -> None:
    only_middlewares = {
        "SPIDER_MIDDLEWARES": {TagRatioSpiderMiddleware: 950},
        "DOWNLOADER_MIDDLEWARES": {TagRatioDownloaderMiddleware: 540},
    }
    with pytest.raises(SettingsError, match=r"'drop' needs .*TagRatioPipeline in ITEM_PIPELINES"):
        TagRatioSpiderMiddleware.from_crawler(make_crawler(only_middlewares))
    tag = {**only_middlewares, "TAGRATIO_OVERVIEW_ACTION": "tag"}
    assert TagRatioSpiderMiddleware.from_crawler(make_crawler(tag))


def test_the_spider_middleware_without_the_downloader_middleware_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Listed by hand without the downloader middleware, nothing is extracted: every item
    went through without a word. One WARNING says so; with the add-on, none."""
    by_hand = {
        "SPIDER_MIDDLEWARES": {TagRatioSpiderMiddleware: 950},
        "ITEM_PIPELINES": {TagRatioPipeline: 100},
    }
    with caplog.at_level("WARNING", logger="scrapy_tagratio"):
        TagRatioSpiderMiddleware.from_crawler(make_crawler(by_hand))
    [warning] = [r.getMessage() for r in caplog.records]
    assert "TagRatioDownloaderMiddleware is not in DOWNLOADER_MIDDLEWARES" in warning
    assert "no response is extracted" in warning
    caplog.clear()
    with caplog.at_level("WARNING", logger="scrapy_tagratio"):
        TagRatioSpiderMiddleware.from_crawler(make_crawler(ADDON))
    assert not caplog.records


def test_the_downloader_middleware_without_the_spider_middleware_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The spider middleware switched off next to the add-on: pages were extracted and
    counted as overview pages, and every item went on without its text, undropped, without
    a word. One WARNING says so."""
    off = {**ADDON, "SPIDER_MIDDLEWARES": {f"{MIDDLEWARES}.TagRatioSpiderMiddleware": None}}
    with caplog.at_level("WARNING", logger="scrapy_tagratio"):
        TagRatioDownloaderMiddleware.from_crawler(make_crawler(off))
    [warning] = [r.getMessage() for r in caplog.records]
    assert "TagRatioSpiderMiddleware is not in SPIDER_MIDDLEWARES" in warning
    assert "not dropped" in warning and "response.meta['tagratio']" in warning
    caplog.clear()
    with caplog.at_level("WARNING", logger="scrapy_tagratio"):
        TagRatioDownloaderMiddleware.from_crawler(make_crawler(ADDON))
    assert not caplog.records
