"""A news spider that yields an item for every page it reaches and follows links.

scrapy-tagratio does the rest: each item gets the page's main text and scores, and items
of overview pages (home page, section fronts) are dropped, so the feed holds articles.

    scrapy crawl news -O articles.jsonl                              # the bundled site
    scrapy crawl news -a start_url=https://example.org/ -O live.jsonl  # a live site
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import scrapy
from scrapy.http import Response

from newsdemo.items import ArticleItem

#: The bundled demonstration site (original stories, see README.md).
SITE = Path(__file__).resolve().parents[2] / "site"


class NewsSpider(scrapy.Spider):
    name = "news"

    def __init__(self, start_url: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.start_url = start_url or (SITE / "index.html").as_uri()
        parsed = urlparse(self.start_url)
        if parsed.scheme == "file":
            # Stay inside the folder of the start page (the bundled site).
            self.url_prefix = self.start_url.rsplit("/", 1)[0] + "/"
        else:
            self.url_prefix = f"{parsed.scheme}://{parsed.netloc}/"
            self.allowed_domains = [parsed.hostname or parsed.netloc]

    async def start(self) -> AsyncIterator[scrapy.Request]:
        yield scrapy.Request(self.start_url, callback=self.parse)

    def parse(self, response: Response) -> Iterator[Any]:
        # One item per page: on an article it gets main_text and tagratio scores; on an
        # overview page scrapy-tagratio drops it while the links below still go out.
        yield ArticleItem(
            url=response.url,
            title=response.css("h1::text").get() or response.css("title::text").get(),
        )
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href).split("#", 1)[0]
            if url.startswith(self.url_prefix):
                yield response.follow(url, callback=self.parse)
