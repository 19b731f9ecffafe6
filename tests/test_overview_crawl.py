"""A real crawl decides on real development pages served from 127.0.0.1 under short
neutral paths (``/p/1``...: the URL says nothing): articles with a large comment thread
and with a related-articles rail keep their items, a forum thread keeps its items, and a
section front's item is dropped. Needs ../shared/benchmarks (skips with the reason)."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import scrapy
from conftest import CrawlResult, CrawlSpec, LocalSite
from scrapy.http import Request, Response

pytestmark = [pytest.mark.integration, pytest.mark.benchmark_data]

ADDON = {"ADDONS": {"scrapy_tagratio.Addon": 100}}
#: Development pages: (set directory, page file), what each one is, and whether the crawl
#: must keep its item. Each was checked by reading the page.
PAGES: dict[str, tuple[str, str, bool]] = {
    # sbnation.com article followed by 38 top-level comments (author, time, reply, anchor).
    "comment-thread": ("dragnet-dev", "pages/T51.html.gz", True),
    # dailymail.co.uk football article whose page carries ~170 teasers of other stories.
    "related-rail": (
        "overview-dev",
        "pages/htmldate_mc__1599860291_dailymail.co.uk.html.gz",
        True,
    ),
    # A forum thread (content): posts with author, time and reply links.
    "forum-thread": ("trafilatura-eval", "pages/katzen-forum.net-Pepe.html.gz", True),
    # A news section front: headline links with summaries, no article body.
    "section-front": ("overview-dev", "pages/gerapy__list_techcrunch_com.html.gz", False),
}


class PagesSpider(scrapy.Spider):
    """Requests each page and yields one item per response."""

    name = "pages"

    def __init__(self, pages: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.pages: dict[str, str] = json.loads(pages)

    async def start(self) -> AsyncIterator[Request]:
        for name, url in self.pages.items():
            yield Request(url, meta={"page": name})

    def parse(self, response: Response) -> Iterator[dict[str, Any]]:
        yield {"page": response.meta["page"], "url": response.url}


def benchmark_root() -> Path:
    from benchmarks import _data

    root = _data.benchmarks_dir()
    if root is None:
        pytest.skip("benchmark data not found: set TAGRATIO_BENCHMARKS or ../shared/benchmarks")
    return root


def test_articles_with_comments_and_rails_kept_section_front_dropped(
    local_site: Callable[..., LocalSite], run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    root = benchmark_root()
    pages = PAGES
    server = local_site()
    urls = {}
    for number, (name, (folder, file, _)) in enumerate(pages.items()):
        body = gzip.decompress((root / folder / file).read_bytes())
        urls[name] = server.add(f"/p/{number}", body, "text/html")
    result = run_crawls(
        [
            CrawlSpec(
                "overview", "test_overview_crawl:PagesSpider", ADDON, {"pages": json.dumps(urls)}
            )
        ]
    )["overview"]
    assert result.error is None
    items = {item["page"]: item for item in result.items}
    kept = {name for name, (_, _, keep) in pages.items() if keep}
    assert set(items) == kept
    for name in kept:
        scores = items[name]["tagratio"]
        assert scores["is_overview"] is False, (name, scores["overview_reasons"])
        assert scores["overview_verdict"] in ("content", "uncertain")
    stats = result.tagratio_stats()
    assert stats["tagratio/pages_extracted"] == len(pages)
    assert stats["tagratio/overview_pages"] == 1
    assert stats["tagratio/items_dropped"] == 1
    uncertain = sum(items[name]["tagratio"]["overview_verdict"] == "uncertain" for name in kept)
    assert stats.get("tagratio/overview_uncertain", 0) == uncertain
