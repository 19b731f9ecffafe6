"""Site memory (scrapy_tagratio.site_memory): template blocks learnt across the pages of a
site are left out of the content; the memory is bounded, picklable and per site."""

from __future__ import annotations

import json
import pickle
import random
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import scrapy
from conftest import CrawlResult, CrawlSpec, LocalSite

from benchmarks import _data
from scrapy_tagratio import ExtractionError, SiteMemory, extract
from scrapy_tagratio.document import Document
from scrapy_tagratio.site_memory import MODEL_PATH, page_fingerprints

PAGE = """<html><head><title>{title} - Daily Example</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li>
<li><a href="/sport">Sport</a></li></ul></nav>
<main><article><h1>{title}</h1>{paragraphs}
<div class="box"><p>Sign up to our morning briefing: the stories that matter, in your inbox
before breakfast, every weekday, free of charge.</p></div>
</article></main>
<footer><p>Daily Example is published by Example Media Ltd, registered in England,
1 Example Street, London.</p></footer>
</body></html>"""
WORDS = [
    "river",
    "council",
    "budget",
    "school",
    "winter",
    "harbour",
    "bridge",
    "market",
    "station",
    "library",
    "farmers",
    "season",
    "coast",
    "museum",
]
BRIEFING = "Sign up to our morning briefing"


def paragraphs_of(number: int) -> list[str]:
    """Article ``number``'s own paragraphs: random words, the same on every call."""
    rng = random.Random(number)
    return [" ".join(rng.choice(WORDS) for _ in range(40)).capitalize() + "." for _ in range(5)]


def has_its_article(item: dict[str, Any]) -> bool:
    """Whether a crawled item of article ``/a/<number>.html`` holds that article's text."""
    number = int(re.search(r"/a/(\d+)", item["url"]).group(1))  # type: ignore[union-attr]
    return all(paragraph in item["main_text"] for paragraph in paragraphs_of(number))


def article(number: int, paragraphs: list[str] | None = None) -> str:
    if paragraphs is None:
        paragraphs = paragraphs_of(number)
    title = f"Story {number} about the {WORDS[number % len(WORDS)]}"
    return PAGE.format(title=title, paragraphs="".join(f"<p>{p}</p>" for p in paragraphs))


@pytest.mark.parametrize("algorithm", ["tagratio", "cectd", "cetd", "textsweeper"])
def test_a_box_repeated_on_the_site_is_left_out_from_the_second_page(algorithm: str) -> None:
    memory = SiteMemory(min_pages=1, long_block_chars=100_000)
    first = extract(article(0), url="https://www.example.org/a/0", site_memory=memory,
                    algorithm=algorithm)  # fmt: skip
    assert BRIEFING in first.text  # the algorithm alone keeps it: the test means something
    assert first.template_chars == 0 and not any(b.is_template for b in first.blocks)
    second = extract(article(1), url="https://example.org/a/1", site_memory=memory,
                     algorithm=algorithm)  # fmt: skip
    assert BRIEFING not in second.text
    assert paragraphs_of(1)[0] in second.text  # the article's own text stays
    assert second.template_chars >= len(BRIEFING)
    template = [b for b in second.blocks if b.is_template]
    assert template and not any(b.is_content for b in template)
    assert second.to_dict()["template_chars"] == second.template_chars


def test_without_memory_or_url_nothing_changes() -> None:
    alone = extract(article(1), url="https://example.org/a/1")
    memory = SiteMemory()
    extract(article(0), url="https://example.org/a/0", site_memory=memory)
    assert extract(article(1), site_memory=memory).text == alone.text  # no URL: no site
    other_site = extract(article(1), url="https://other.example.net/a/1", site_memory=memory)
    assert other_site.text == alone.text and other_site.template_chars == 0


def test_a_copy_of_a_page_seen_before_is_not_emptied() -> None:
    """The same article under another URL: its content was all seen before, so the page
    is a copy, not template."""
    memory = SiteMemory(min_pages=1, long_block_chars=150, max_seen_share=0.5)
    first = extract(article(3), url="https://example.org/a/3", site_memory=memory)
    again = extract(article(3), url="https://example.org/a/3?utm_source=x", site_memory=memory)
    assert again.text == first.text and again.template_chars == 0


def test_on_a_site_of_short_paragraphs_a_long_notice_in_every_article_is_template() -> None:
    """The site's only long block is a notice inside every article: the page is no copy
    (its content is new), so the notice goes once seen on enough pages."""
    notice = (
        "The views and opinions expressed in this article are those of the author and do "
        "not necessarily reflect the official policy or position of Daily Example or of "
        "its owners, partners and advertisers."
    )
    memory = SiteMemory(min_pages=1, long_block_chars=150, max_seen_share=0.5)
    texts = []
    for number in range(3):
        short = [" ".join(paragraphs_of(number)[n].split()[:12]) + "." for n in range(5)]
        page = article(number, [*short, notice])
        texts.append(extract(page, url=f"https://example.org/a/{number}", site_memory=memory).text)
    assert len(notice) >= 150 and all(notice in text for text in texts[:2])
    assert notice not in texts[2] and BRIEFING not in texts[2]
    assert " ".join(paragraphs_of(2)[0].split()[:12]) in texts[2]


def test_with_the_fitted_defaults_an_article_crawled_under_other_urls_keeps_its_text() -> None:
    """Tracking parameters, print and AMP versions: the same article under three URLs."""
    memory = SiteMemory()
    paragraphs = [f"Paragraph {n} of the report on the harbour bridge. " * 6 for n in range(6)]
    extract(article(0), url="https://example.org/a/0", site_memory=memory)
    texts = [
        extract(
            article(7, paragraphs), url=f"https://example.org/a/7?utm={n}", site_memory=memory
        ).text
        for n in range(3)
    ]
    assert all(paragraph.strip() in text for paragraph in paragraphs for text in texts)


def test_a_page_captured_again_comes_out_as_the_first_time_and_is_not_counted_twice() -> None:
    """Its URL was recorded: its blocks are counted already, so it is read with its own
    sighting left out (the box seen on the other page is still template, the article's
    paragraphs, seen on this page only, are not) and it is not recorded again."""
    memory = SiteMemory(min_pages=1)
    extract(article(0), url="https://example.org/a/0", site_memory=memory)
    first = extract(article(1), url="https://example.org/a/1", site_memory=memory)
    again = extract(article(1), url="https://example.org/a/1#comments", site_memory=memory)
    assert BRIEFING not in first.text and first.template_chars > 0
    assert again.text == first.text and again.template_chars == first.template_chars
    assert memory.pages_seen("example.org") == 2


def test_an_article_captured_again_with_new_content_around_it_keeps_its_text() -> None:
    """The same URL fetched again after the page changed (fundus-dev holds an article
    captured 18 months apart): its paragraphs were recorded under that URL, not on another
    page, so they are no template, although most of its content is not a copy."""
    memory = SiteMemory(min_pages=1, long_block_chars=100_000)
    extract(article(0), url="https://example.org/a/0", site_memory=memory)
    extract(article(1), url="https://example.org/a/1", site_memory=memory)
    update = "<p>Update: " + " ".join(paragraphs_of(9)[:2]) + "</p>"
    changed = article(1).replace("</h1>", "</h1>" + update)
    again = extract(changed, url="https://example.org/a/1", site_memory=memory)
    assert all(paragraph in again.text for paragraph in paragraphs_of(1))
    assert BRIEFING not in again.text


def test_a_paragraph_quoted_on_one_other_page_is_kept() -> None:
    quoted = (
        "The harbour council agreed on Tuesday to rebuild the old station bridge before "
        "winter, after farmers and the museum asked for a safer crossing to the market."
    )
    memory = SiteMemory(min_pages=1, long_block_chars=150, max_seen_share=0.5)
    extract(article(4, [quoted, *["Other text " * 12] * 3]), url="https://ex.org/4",
            site_memory=memory)  # fmt: skip
    page = extract(article(5, ["Own text " * 25, quoted, "More own text " * 25]),
                   url="https://ex.org/5", site_memory=memory)  # fmt: skip
    assert quoted in page.text
    assert BRIEFING not in page.text  # short template blocks still go after one page


def test_counts_and_bounds() -> None:
    memory = SiteMemory(max_entries=8, max_sites=2)
    memory.record("a", np.array([1, 2, 3, 3], dtype=np.uint64))  # 3 twice: one page
    memory.record("a", np.array([2, 3, 4], dtype=np.uint64))
    assert memory.counts("a", np.array([1, 2, 3, 4, 5], dtype=np.uint64)).tolist() == [
        1, 2, 2, 1, 0,
    ]  # fmt: skip
    assert memory.pages_seen("a") == 2
    memory.record("a", np.zeros(0, dtype=np.uint64))  # a page without text: counted
    assert memory.pages_seen("a") == 3
    memory.record("a", np.arange(100, 120, dtype=np.uint64))
    # Over the bound: blocks seen on several pages stay, one-page blocks go oldest first.
    assert memory.entries <= 8
    assert memory.counts("a", np.array([2, 3], dtype=np.uint64)).tolist() == [2, 2]
    memory.record("b", np.array([7], dtype=np.uint64))
    memory.counts("a", np.array([2], dtype=np.uint64))  # "a" used last: "b" is older
    memory.record("c", np.array([9], dtype=np.uint64))
    assert len(memory) == 2 and memory.pages_seen("b") == 0 and memory.pages_seen("a") == 4


def block_prints(html: str) -> dict[str, int]:
    """The page's fingerprints by the text of their block (white space collapsed)."""
    document = Document.from_input(html)
    blocks, prints = page_fingerprints(document)
    return dict(zip(document.block_texts(blocks), prints.tolist(), strict=True))


def test_a_blocks_fingerprint_reads_its_words_not_its_digits_spacing_or_neighbours() -> None:
    page = (
        "<body><p>Posted on 12 May 2024 by the desk</p><p>{other}</p><a href=/x>{link}</a></body>"
    )
    prints = block_prints(page.format(other="A story of its own.", link="Read the desk's notes"))
    again = block_prints(
        page.replace("12 May 2024", "31 May\n   2025").format(
            other="Another story, a NUL\x00 and a &#0; in it.", link="Read the desk's notes"
        )
    )
    # Digits read as 0 and white space ignored: the dated line is the same block ...
    assert prints["Posted on 12 May 2024 by the desk"] == again["Posted on 31 May 2025 by the desk"]
    # ... the NUL the reader drops and the &#0; it reads as U+FFFD shift no other block ...
    assert prints["Read the desk's notes"] == again["Read the desk's notes"]
    # ... and other words are another block.
    assert prints["A story of its own."] != again["Another story, a NUL and a \ufffd in it."]
    # A headline in a teaser's link is not the same block as that headline in the text.
    as_text = block_prints("<body><p>Read the desk's notes</p></body>")
    assert as_text["Read the desk's notes"] != prints["Read the desk's notes"]


def test_pickles_with_its_counts() -> None:
    memory = SiteMemory()
    for number in range(3):
        extract(article(number), url=f"https://example.org/{number}", site_memory=memory)
    copy = pickle.loads(pickle.dumps(memory))
    prints = page_fingerprints(Document.from_input(article(9)))[1]
    assert (
        copy.counts("example.org", prints).tolist() == memory.counts("example.org", prints).tolist()
    )
    assert max(copy.counts("example.org", prints)) == 3  # the template, on all three


def test_a_snapshot_holds_its_site_as_it_was_and_nothing_else() -> None:
    """What a worker gets with a page: the page's site only, counted as when it was
    taken, whatever the crawl records after (the counts change in place)."""
    memory = SiteMemory()
    for number in range(2):
        extract(article(number), url=f"https://example.org/{number}", site_memory=memory)
    extract(article(0), url="https://other.example/0", site_memory=memory)
    snapshot = memory.snapshot("https://example.org/5")
    prints = page_fingerprints(Document.from_input(article(9)))[1]
    before = snapshot.counts("example.org", prints).tolist()
    assert max(before) == 2
    extract(article(2), url="https://example.org/2", site_memory=memory)
    assert max(memory.counts("example.org", prints)) == 3
    assert snapshot.counts("example.org", prints).tolist() == before
    assert snapshot.pages_seen("example.org") == 2
    assert snapshot.pages_seen("other.example") == 0
    snapshot.record("example.org", prints, "https://example.org/9")
    assert max(memory.counts("example.org", prints)) == 3  # and the other way round


def test_sites_by_host_or_registrable_domain() -> None:
    assert SiteMemory().site_of("https://www.news.example.co.uk/x") == "news.example.co.uk"
    by_domain = SiteMemory(scope="domain")
    assert by_domain.site_of("https://www.news.example.co.uk/x") == "example.co.uk"
    assert by_domain.site_of("http://localhost:8000/a") == "localhost"
    assert SiteMemory().site_of("not a url") is None


@pytest.mark.parametrize(
    "params",
    [
        {"min_pages": 0},
        {"max_seen_share": 1.5},
        {"long_block_chars": 0},
        {"scope": "site"},
        {"max_entries": 0},
    ],
)
def test_bad_parameters_are_named(params: dict[str, object]) -> None:
    with pytest.raises(ExtractionError, match=next(iter(params))) as error:
        SiteMemory(**params)  # type: ignore[arg-type]
    assert error.value.kind == "bad_parameter"


def test_the_model_file_names_the_constants_the_memory_takes() -> None:
    model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    assert model["written_by"] == "python -m benchmarks.site_memory --fit"
    memory = SiteMemory(**model["constants"])
    assert memory.min_pages == model["constants"]["min_pages"]
    assert SiteMemory().long_block_chars == model["constants"]["long_block_chars"]


@pytest.mark.benchmark_data
@pytest.mark.skipif(
    _data.benchmarks_dir() is None,
    reason="needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS): not on this machine",
)
def test_on_real_pages_of_the_same_sites_the_memory_raises_f1() -> None:
    """dragnet-dev's ten largest sites, their first five pages in order: with the memory
    CECTD-DS's text scores a higher word 4-gram F1, by higher precision. (CECTD-DS, fitted
    on nothing: the default's model was fitted on these very pages.)"""
    from benchmarks.metrics import shingle_counts, summarise_shingles
    from benchmarks.site_memory import sites

    largest = sorted(sites("dragnet").items(), key=lambda item: -len(item[1]))[:10]
    memory = SiteMemory()
    alone, remembered = [], []
    for site, page_ids in largest:
        for page_id in page_ids[:5]:
            page = _data.load_page("dragnet", page_id)
            url = f"https://{site.split('/', 1)[1]}/{page_id}"
            alone.append(
                shingle_counts(
                    page.gold["body"], extract(page.html, url=url, algorithm="cectd").text
                )
            )
            text = extract(page.html, url=url, algorithm="cectd", site_memory=memory).text
            remembered.append(shingle_counts(page.gold["body"], text))
    precision_alone, _, f1_alone = summarise_shingles(alone)
    precision, _, f1 = summarise_shingles(remembered)
    assert precision > precision_alone
    assert f1 > f1_alone


# ---------------------------------------------------------------------- in a real crawl
class IndexSpider(scrapy.Spider):
    """Starts at the site's ``/index.html`` (``parse_index``); subclasses say how they
    follow its links to the articles."""

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_url = base_url

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(self.base_url + "/index.html", callback=self.parse_index)


class TemplateSiteSpider(IndexSpider):
    """Follows the index's links to the articles strictly one at a time (the next article
    is requested from the previous one's callback, after its extraction), so that the site
    memory sees the pages in the index's order whether pages are read inline or in worker
    processes; an item per article."""

    name = "template-site"

    def parse_index(self, response: scrapy.http.Response) -> Iterator[Any]:
        yield from self.follow_next(response, response.css("a.story::attr(href)").getall())

    def parse(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        yield {"url": response.url}
        yield from self.follow_next(response, unread)

    def follow_next(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        if unread:
            yield response.follow(unread[0], cb_kwargs={"unread": unread[1:]})


class HeadFirstSpider(TemplateSiteSpider):
    """As :class:`TemplateSiteSpider`, but asks for each article with HEAD first (to check
    its type, as link checkers and careful crawls do), then with GET."""

    name = "head-first"

    def follow_next(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        if unread:
            yield response.follow(
                unread[0], method="HEAD", callback=self.checked, cb_kwargs={"unread": unread}
            )

    def checked(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        assert not response.body
        yield response.follow(unread[0], cb_kwargs={"unread": unread[1:]})


class FeedFirstSpider(TemplateSiteSpider):
    """As :class:`TemplateSiteSpider`, but before fetching each article it yields the
    article's entry from a feed: a ``raw_html`` item holding a short description under the
    article's URL, which the pipeline extracts (and the site memory records) first."""

    name = "feed-first"

    def follow_next(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        if unread:
            url = response.urljoin(unread[0])
            description = f"<p>{FEED_DESCRIPTION} {url}</p>"
            yield {"url": url, "from_feed": True, "raw_html": description}
            yield response.follow(unread[0], cb_kwargs={"unread": unread[1:]})


FEED_DESCRIPTION = "Read the full story of the day on the Daily Example website:"
ARTICLES = 5


def items_with_the_box(results: dict[str, CrawlResult]) -> dict[str, int]:
    """Per crawl, its items still holding the newsletter box, after checking that each
    crawl ended without error and delivered every article with its own text."""
    for name, result in results.items():
        assert result.error is None, name
        assert len(result.items) == ARTICLES, name
        assert all(map(has_its_article, result.items)), name
    return {
        name: sum(BRIEFING in item["main_text"] for item in result.items)
        for name, result in results.items()
    }


@pytest.mark.integration
def test_responses_to_head_requests_are_not_extracted(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """A HEAD response has no body: it was extracted (an empty page, counted in
    pages_extracted) and recorded in the site memory, so the GET of the same URL that
    followed read as a page captured again and kept the site's template (the newsletter
    box) in every article."""
    settings = {"ADDONS": {"scrapy_tagratio.Addon": 100}, "CONCURRENT_REQUESTS": 1}
    args = {"base_url": template_site.base_url}
    results = run_crawls(
        [
            CrawlSpec("get", "test_site_memory:TemplateSiteSpider", settings, args),
            CrawlSpec("head-first", "test_site_memory:HeadFirstSpider", settings, args),
        ]
    )
    with_box = items_with_the_box(results)
    assert with_box["head-first"] == with_box["get"] < ARTICLES
    get, head_first = results["get"].stats, results["head-first"].stats
    assert head_first["tagratio/skipped/head"] == ARTICLES
    for name in ("tagratio/pages_extracted", "tagratio/site_memory/pages_discounted"):
        assert head_first[name] == get[name], name
    texts = {item["url"]: item["main_text"] for item in results["get"].items}
    assert {item["url"]: item["main_text"] for item in results["head-first"].items} == texts


@pytest.mark.integration
def test_a_feed_item_under_an_articles_url_does_not_leave_it_its_template(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """A feed entry's ``raw_html`` item under an article's URL is extracted and recorded
    before the article arrives. The article then read as a page captured again: it was
    neither discounted nor recorded, so every article kept the newsletter box. A page whose
    URL was recorded is now read with that sighting left out (as a page held at the cold
    start is) and recorded if its content is new. The sighting left out was the
    description's, not the article's, so the box, seen on every earlier article, needs one
    article more than without the feed: ``min_pages + 1`` articles keep it."""
    first = SiteMemory().min_pages  # the fitted default
    assert first + 1 < ARTICLES
    settings = {"ADDONS": {"scrapy_tagratio.Addon": 100}, "CONCURRENT_REQUESTS": 1}
    args = {"base_url": template_site.base_url}
    results = run_crawls(
        [
            CrawlSpec("get", "test_site_memory:TemplateSiteSpider", settings, args),
            CrawlSpec("feed-first", "test_site_memory:FeedFirstSpider", settings, args),
        ]
    )
    feed = [item for item in results["feed-first"].items if item.get("from_feed")]
    assert len(feed) == ARTICLES and all(FEED_DESCRIPTION in item["main_text"] for item in feed)
    pages = {
        name: replace(result, items=[item for item in result.items if not item.get("from_feed")])
        for name, result in results.items()
    }
    assert items_with_the_box(pages) == {"get": first, "feed-first": first + 1}


class PathsSpider(scrapy.Spider):
    """Fetches the given paths (comma-separated) of a site strictly one after another; an
    item per page."""

    name = "paths"

    def __init__(self, base_url: str, paths: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls = [base_url + path for path in paths.split(",")]

    async def start(self) -> AsyncIterator[Any]:
        yield scrapy.Request(self.urls[0], cb_kwargs={"unread": self.urls[1:]})

    def parse(self, response: scrapy.http.Response, unread: list[str]) -> Iterator[Any]:
        yield {"url": response.url}
        if unread:
            yield scrapy.Request(unread[0], cb_kwargs={"unread": unread[1:]})


@pytest.fixture(scope="module")
def template_site(local_site: Callable[..., LocalSite]) -> LocalSite:
    site = local_site()
    links = "".join(
        f'<li><a class="story" href="/a/{n}.html">Story {n}</a></li>' for n in range(ARTICLES)
    )
    site.add("/index.html", f"<html><body><ul>{links}</ul></body></html>")
    for number in range(ARTICLES):
        site.add(f"/a/{number}.html", article(number))
    return site


@pytest.mark.integration
def test_a_crawl_learns_the_sites_template(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """With the add-on's defaults the site's first ``min_pages`` articles keep the
    newsletter box (it was not seen often enough yet) and every later one loses it; off,
    all keep it. With two worker processes the items are the same as in the reactor
    thread (the spider reads the pages one after the other)."""
    first = SiteMemory().min_pages  # the fitted default
    assert first < ARTICLES
    spider = "test_site_memory:TemplateSiteSpider"
    settings = {"ADDONS": {"scrapy_tagratio.Addon": 100}, "CONCURRENT_REQUESTS": 1}
    args = {"base_url": template_site.base_url}
    results = run_crawls(
        [
            CrawlSpec("memory", spider, settings, args),
            CrawlSpec("workers", spider, {**settings, "TAGRATIO_WORKERS": 2}, args),
            CrawlSpec("off", spider, {**settings, "TAGRATIO_SITE_MEMORY": False}, args),
        ]
    )
    with_box = items_with_the_box(results)
    assert with_box == {"memory": first, "workers": first, "off": ARTICLES}
    memory = results["memory"]
    assert memory.stats["tagratio/site_memory/pages_discounted"] >= ARTICLES - first
    assert "tagratio/site_memory/pages_discounted" not in results["off"].stats
    discounted = [item for item in memory.items if item["tagratio"]["template_chars"] > 0]
    assert len(discounted) == ARTICLES - first
    texts = {item["url"]: item["main_text"] for item in memory.items}
    assert {item["url"]: item["main_text"] for item in results["workers"].items} == texts


# ---------------------------------------------------------------------- the cold-start hold
class AllAtOnceSpider(IndexSpider):
    """Requests every article of the index at once (async callbacks: Scrapy runs their
    items through the spider middlewares' async path, where the hold works)."""

    name = "all-at-once"

    async def parse_index(self, response: scrapy.http.Response) -> AsyncIterator[Any]:
        for href in response.css("a.story::attr(href)").getall():
            yield response.follow(href)

    async def parse(self, response: scrapy.http.Response) -> AsyncIterator[Any]:
        yield {"url": response.url}


HOLD = {"TAGRATIO_SITE_MEMORY_HOLD": 4, "TAGRATIO_SITE_MEMORY_HOLD_SECONDS": 60}


def hold_crawls(spider: str, site: LocalSite, *, workers: bool = False) -> list[CrawlSpec]:
    """Crawls of the template site by ``spider``: without the hold ("no_hold"), with it
    ("hold") and, with ``workers``, with it in two worker processes ("hold_workers")."""
    settings = {"ADDONS": {"scrapy_tagratio.Addon": 100}, "CONCURRENT_REQUESTS": 2}
    args = {"base_url": site.base_url}
    crawls = [
        CrawlSpec("no_hold", spider, settings, args),
        CrawlSpec("hold", spider, {**settings, **HOLD}, args),
    ]
    if workers:
        crawls.append(
            CrawlSpec("hold_workers", spider, {**settings, **HOLD, "TAGRATIO_WORKERS": 2}, args)
        )
    return crawls


@pytest.mark.integration
def test_holding_a_sites_first_pages_removes_the_template_from_them_too(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """The index and the first three articles know fewer than 4 other pages of the site:
    without the hold the first articles keep the newsletter box; with it their items wait
    until the memory knows 4 other pages and every article loses the box, inline and with
    worker processes, with the article text kept."""
    assert SiteMemory().min_pages <= 3  # the box is on 3 other pages once 4 are known
    results = run_crawls(
        hold_crawls("test_site_memory:AllAtOnceSpider", template_site, workers=True)
    )
    with_box = items_with_the_box(results)
    assert with_box["no_hold"] > 0
    assert with_box["hold"] == with_box["hold_workers"] == 0
    for name in ("hold", "hold_workers"):
        stats = results[name].stats
        assert stats["tagratio/site_memory/pages_held"] >= 1, name
        assert stats.get("tagratio/site_memory/released/pages", 0) >= 1, name
    assert "tagratio/site_memory/pages_held" not in results["no_hold"].stats


@pytest.mark.integration
def test_held_items_are_never_lost_when_the_crawl_ends_early_or_the_site_is_small(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """A crawl closed after 3 pages (CLOSESPIDER_PAGECOUNT) still writes the items of the
    held articles, and a hold longer than the site (10 pages of a 6-page site) ends when
    nothing is left to download, not after the 60 s time limit: every article gives its
    item, with its text."""
    spider = "test_site_memory:AllAtOnceSpider"
    settings = {
        "ADDONS": {"scrapy_tagratio.Addon": 100},
        "CONCURRENT_REQUESTS": 1,
        "TAGRATIO_SITE_MEMORY_HOLD_SECONDS": 60,
    }
    args = {"base_url": template_site.base_url}
    results = run_crawls(
        [
            CrawlSpec(
                "closed",
                spider,
                {**settings, "TAGRATIO_SITE_MEMORY_HOLD": 4, "CLOSESPIDER_PAGECOUNT": 3},
                args,
            ),
            CrawlSpec("small_site", spider, {**settings, "TAGRATIO_SITE_MEMORY_HOLD": 10}, args),
        ],
        timeout=50,
    )
    closed = results["closed"]
    assert closed.error is None
    assert closed.stats["finish_reason"] == "closespider_pagecount"
    articles = closed.stats["response_received_count"] - 1  # the index has no item
    assert articles >= 2
    assert len(closed.items) == articles
    assert all(map(has_its_article, closed.items))
    assert closed.stats["tagratio/site_memory/released/closing"] >= 1
    small = results["small_site"]
    assert small.error is None
    assert len(small.items) == ARTICLES
    assert small.stats["tagratio/site_memory/released/idle"] >= 1
    assert "tagratio/site_memory/released/time" not in small.stats
    elapsed = small.stats["elapsed_time_seconds"]
    assert elapsed < 30


@pytest.mark.integration
def test_held_pages_that_fill_the_scrapers_memory_go_at_once(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """Held responses count in Scrapy's scraper memory, and Scrapy starts no download
    while it is over SCRAPER_SLOT_MAX_ACTIVE_SIZE: once the held pages alone filled it, no
    other page of the site could arrive to release them, and the crawl stood still for
    TAGRATIO_SITE_MEMORY_HOLD_SECONDS (a hold of 40 pages of some 200 kB waited there in a
    trial's crawl). They now go as soon as they block the crawl, and every article gives
    its item with its text."""
    settings = {
        "ADDONS": {"scrapy_tagratio.Addon": 100},
        "CONCURRENT_REQUESTS": 1,
        "SCRAPER_SLOT_MAX_ACTIVE_SIZE": 1_000,  # one page of the site fills it
        "TAGRATIO_SITE_MEMORY_HOLD": 4,
        "TAGRATIO_SITE_MEMORY_HOLD_SECONDS": 8,
    }
    args = {"base_url": template_site.base_url}
    results = run_crawls(
        [CrawlSpec("full", "test_site_memory:AllAtOnceSpider", settings, args)], timeout=90
    )
    full = results["full"]
    assert full.error is None
    assert len(full.items) == ARTICLES
    assert all(map(has_its_article, full.items))
    assert full.stats["tagratio/site_memory/released/full"] >= 1
    assert "tagratio/site_memory/released/time" not in full.stats
    assert full.stats["elapsed_time_seconds"] < 8  # each page waited 8 s


class FailingSpider(AllAtOnceSpider):
    """Its article callback fails after yielding the page's item."""

    name = "failing"

    async def parse(self, response: scrapy.http.Response) -> AsyncIterator[Any]:
        yield {"url": response.url}
        raise ValueError(f"the callback failed after the item of {response.url}")


@pytest.mark.integration
def test_held_items_are_kept_when_the_callback_fails_after_them(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """A callback that fails after yielding items keeps them, as without the hold: the
    held page's items went down with the callback's error (lost), now they wait for the
    memory, go on, and the error follows."""
    results = run_crawls(hold_crawls("test_site_memory:FailingSpider", template_site), timeout=50)
    for name, result in results.items():
        assert result.error is None
        assert result.stats["spider_exceptions/ValueError"] == ARTICLES, name
        assert len(result.items) == ARTICLES, name
        assert all(map(has_its_article, result.items)), name
    assert results["hold"].stats["tagratio/site_memory/pages_held"] >= 1


# ---------------------------------------------------------------------- known headlines
def front(numbers: range, teaser_words: int = 0) -> str:
    """A "latest news" page of the template site: each story's headline as a link, with a
    teaser of ``teaser_words`` words."""
    items = "".join(
        f'<li><h2><a href="/a/{n}.html">Story {n} about the {WORDS[n % len(WORDS)]}</a></h2>'
        f"<p>{' '.join(WORDS[(n + k) % len(WORDS)] for k in range(teaser_words))}.</p></li>"
        for n in numbers
    )
    return PAGE.format(title="Latest news", paragraphs=f"<ul>{items}</ul>")


def with_rail(number: int, linked: range) -> str:
    """An article with a "related stories" rail linking to other stories' headlines."""
    rail = "".join(
        f'<li><a href="/a/{n}.html">Story {n} about the {WORDS[n % len(WORDS)]}</a></li>'
        for n in linked
    )
    return article(number).replace("</main>", f"</main><aside><ul>{rail}</ul></aside>")


def test_a_page_listing_headlines_of_articles_already_crawled_is_an_overview_page() -> None:
    """Alone the latest-news page is only "uncertain"; after its five articles were read,
    the memory knows their headlines and calls it an overview page, saying why. An article
    whose related rail links to four known headlines stays an article; with the overview
    detection off ("off" detector) nothing is called overview."""
    from scrapy_tagratio.settings import TagRatioSettings

    memory = SiteMemory()
    for number in range(5):
        extract(article(number), url=f"https://example.org/a/{number}.html", site_memory=memory)
    latest = front(range(5))
    alone = extract(latest, url="https://example.org/latest")
    assert alone.overview_verdict == "uncertain"
    known = extract(
        latest, url="https://example.org/latest", site_memory=pickle.loads(pickle.dumps(memory))
    )
    assert known.is_overview and known.overview_verdict == "overview"
    assert known.overview_reasons[0].startswith("links to 5 headlines of pages already crawled")
    rail = extract(with_rail(6, range(4)), url="https://example.org/a/6.html", site_memory=memory)
    assert rail.overview_verdict == "content"
    off = TagRatioSettings.from_settings({"TAGRATIO_OVERVIEW_ACTION": "off"}).detector
    unjudged = extract(latest, url="https://example.org/latest2", overview=off, site_memory=memory)
    assert not unjudged.is_overview


def with_most_read(html: str, linked: range) -> str:
    """``html`` with a "most read" box, the same on every page of the site, linking to the
    headlines of the stories ``linked``."""
    box = "".join(
        f'<li><a href="/a/{n}.html">Story {n} about the {WORDS[n % len(WORDS)]}</a></li>'
        for n in linked
    )
    return html.replace("<footer>", f"<aside><h2>Most read</h2><ul>{box}</ul></aside><footer>")


def test_a_short_page_with_the_sites_most_read_box_is_not_an_overview_page() -> None:
    """The "most read" box on every page of the site links to five known headlines; on a
    short "about" page it holds over a quarter of the text. Being template (seen on the
    articles), its links are no evidence of a listing: the page is not dropped. A front
    whose own teasers link to the same stories still is dropped."""
    memory = SiteMemory()
    for number in range(5):
        page = with_most_read(article(number), range(5))
        extract(page, url=f"https://example.org/a/{number}.html", site_memory=memory)
    about = with_most_read(
        PAGE.format(
            title="About us", paragraphs="<p>Write to the newsroom at 1 Example Street.</p>"
        ),
        range(5),
    )
    alone = extract(about, url="https://example.org/about")
    assert not alone.is_overview  # the detector alone keeps it: the test means something
    kept = extract(
        about, url="https://example.org/about", site_memory=pickle.loads(pickle.dumps(memory))
    )
    assert not kept.is_overview, kept.overview_reasons
    listing = extract(with_most_read(front(range(5)), range(5)), url="https://example.org/latest",
                      site_memory=memory)  # fmt: skip
    assert listing.overview_verdict == "overview"


@pytest.mark.integration
def test_a_crawl_drops_a_front_listing_the_articles_it_read(
    template_site: LocalSite, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    """Crawled after its five articles, the latest-news page's item is dropped as an
    overview page (inline and with worker processes); with the site memory off it is kept
    as "uncertain". The article with a related rail is kept either way."""
    template_site.add("/latest.html", front(range(ARTICLES)))
    template_site.add("/a/rail.html", with_rail(7, range(4)))
    spider = "test_site_memory:PathsSpider"
    paths = [f"/a/{n}.html" for n in range(ARTICLES)] + ["/a/rail.html", "/latest.html"]
    args = {"base_url": template_site.base_url, "paths": ",".join(paths)}
    settings = {"ADDONS": {"scrapy_tagratio.Addon": 100}}
    results = run_crawls(
        [
            CrawlSpec("memory", spider, settings, args),
            CrawlSpec("workers", spider, {**settings, "TAGRATIO_WORKERS": 2}, args),
            CrawlSpec("off", spider, {**settings, "TAGRATIO_SITE_MEMORY": False}, args),
        ]
    )
    latest = template_site.url("/latest.html")
    rail = template_site.url("/a/rail.html")
    for name in ("memory", "workers"):
        result = results[name]
        assert result.error is None, name
        urls = {item["url"] for item in result.items}
        assert latest not in urls and rail in urls, name
        assert len(urls) == ARTICLES + 1, name
        assert result.stats["tagratio/items_dropped"] == 1, name
    off = {item["url"]: item for item in results["off"].items}
    assert len(off) == ARTICLES + 2
    assert off[latest]["tagratio"]["overview_verdict"] == "uncertain"


def test_a_url_holding_a_lone_surrogate_is_remembered() -> None:
    """Found by fuzzing: a URL ``str`` with a lone surrogate (decoded with
    ``surrogateescape``) raised UnicodeEncodeError from the memory's URL fingerprint
    instead of giving a result."""
    memory = SiteMemory()
    url = "https://example.org/a/\udcc3"
    first = extract(article(0), url=url, site_memory=memory)
    assert paragraphs_of(0)[0] in first.text
    assert memory.is_revisit("example.org", url)
