"""One crawl over many processes through one real Redis (scrapy-redis), and what the
plugin must guarantee for it: values that pickle and export to JSON, requests that do not
grow, integer stats written at most once per page with maxima kept across processes.

A private ``redis-server`` (Debian's package; ``.ci/run`` installs it) runs on a free
port of 127.0.0.1 for this module; the tests skip, saying why, only where it cannot be
found or started. The site is the example project's bundled news site served over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scrapy
from conftest import REPO, CrawlResult, CrawlSpec, LocalSite, python_env
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.test import get_crawler

from benchmarks._redis import RedisUnavailable, redis_server
from scrapy_tagratio import ALGORITHMS, extract
from scrapy_tagratio.middlewares import (
    TagRatioDownloaderMiddleware,
    TagRatioSpiderMiddleware,
)
from scrapy_tagratio.stats import batched_stats

redis = pytest.importorskip("redis", reason="the redis client is not installed (.[redis])")
scrapy_redis_queue = pytest.importorskip(
    "scrapy_redis.queue", reason="scrapy-redis is not installed (pip install -e '.[redis]')"
)
scrapy_redis_stats = pytest.importorskip("scrapy_redis.stats")
from scrapy_redis import picklecompat  # noqa: E402  (after the skip)

pytestmark = pytest.mark.integration

EXAMPLE = REPO / "example_project"
SITE = EXAMPLE / "site"
ARTICLES = sorted(p for p in SITE.glob("*/*.html") if p.name != "index.html")
#: The home page, the three section fronts and the short "about" page.
OVERVIEWS = sorted({SITE / "index.html", SITE / "about.html", *SITE.glob("*/index.html")})
ADDON = {"ADDONS": {"scrapy_tagratio.Addon": 100}}


def verdicts(site: LocalSite) -> tuple[list[Path], list[Path]]:
    """(kept, dropped) pages of the example site, as the overview detector judges them at
    their URL: every article is kept, the home page dropped; a small section front or the
    short "about" page may be "uncertain", whose items are kept."""
    called = {page: extract(page.read_bytes(), url=url_of(site, page)) for page in OVERVIEWS}
    dropped = [page for page in OVERVIEWS if called[page].is_overview]
    assert SITE / "index.html" in dropped
    return sorted([*ARTICLES, *(p for p in OVERVIEWS if p not in dropped)]), dropped


REDIS_SCHEDULER = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "SCHEDULER_PERSIST": True,
}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    try:
        with redis_server() as url:
            yield url
    except RedisUnavailable as exc:
        pytest.skip(f"no redis-server for the scrapy-redis tests: {exc}")


@pytest.fixture
def db(redis_url: str) -> Iterator[Any]:
    """A client of the private server, emptied before and after the test."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(scope="module")
def site(local_site: Callable[..., LocalSite]) -> LocalSite:
    return local_site(SITE)


def url_of(site: LocalSite, page: Path) -> str:
    return site.url("/" + page.relative_to(SITE).as_posix())


def strict_json(value: Any) -> str:
    """JSON that refuses NaN and infinities (not JSON, though Python writes them)."""
    return json.dumps(value, allow_nan=False)


# ---------------------------------------------------------------------- two processes
def test_two_processes_share_one_crawl(
    site: LocalSite, redis_url: str, db: Any, tmp_path: Path
) -> None:
    """The README's commands: two `scrapy crawl news` processes with the Redis profile
    over the bundled site; each page is fetched and extracted by exactly one of them."""
    # One request at a time per process, a second between requests: the crawl lasts long
    # enough (~12 s for one process) that the second process gets its share.
    settings = {
        "REDIS_URL": redis_url,
        "DOWNLOAD_DELAY": 1,
        "CONCURRENT_REQUESTS": 1,
        "PEERS_IDLE_TIMEOUT": 1,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
    }
    options = ["-a", f"start_url={site.url('/index.html')}"]
    options += [arg for name, value in settings.items() for arg in ("-s", f"{name}={value}")]
    env = {**python_env(), "SCRAPY_SETTINGS_MODULE": "newsdemo.settings_redis"}
    feeds = [tmp_path / f"part-{i}.jsonl" for i in (1, 2)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "news", "-O", str(feed), *options],
            cwd=EXAMPLE,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for feed in feeds
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-3000:]
        assert "ERROR" not in stderr, stderr[-3000:]
    parts = [[json.loads(line) for line in feed.read_text().splitlines()] for feed in feeds]

    # Together: every kept page exactly once, with its text; no item of an overview page.
    kept, dropped = verdicts(site)
    urls = sorted(item["url"] for part in parts for item in part)
    assert urls == sorted(url_of(site, page) for page in kept)
    # Each the same as one process alone finds (no per-process state changes a result).
    article_at = {url_of(site, page): page for page in kept}
    for item in (item for part in parts for item in part):
        assert item["tagratio"]["is_overview"] is False
        page = article_at[item["url"]].read_bytes()
        # The example project asks for Markdown (TAGRATIO_TEXT_FORMAT).
        assert item["main_text"] == extract(page, url=item["url"], with_markdown=True).markdown
    # Both processes did work.
    assert all(parts), [len(part) for part in parts]

    # The stats both processes wrote into the one Redis hash add up.
    stats = db.hgetall("news:stats")
    pages = len(ARTICLES) + len(OVERVIEWS)
    assert int(stats["response_received_count"]) == pages
    assert int(stats["scheduler/dequeued/redis"]) == pages
    assert int(stats["tagratio/pages_extracted"]) == pages
    assert int(stats["tagratio/overview_pages"]) == len(dropped)
    assert int(stats["tagratio/items_dropped"]) == len(dropped)
    # Every item is annotated; the pipeline then drops the overview pages' ones.
    assert int(stats["tagratio/items_annotated"]) == pages
    assert int(stats["item_scraped_count"]) == len(kept)
    total = int(stats["tagratio/extraction_time_us"])
    assert total / pages <= int(stats["tagratio/extraction_time_max_us"]) <= total
    assert not any(k.startswith("tagratio/errors/") for k in stats)
    # Each page once in the shared duplicate filter; the shared queue drained.
    assert db.scard("news:dupefilter") == pages
    assert db.zcard("news:requests") == 0


# ---------------------------------------------------------------------- spiders, stats
class FollowSpider(scrapy.Spider):
    """From the home page, one item per page and every link of the site followed with a
    copy of the page's meta (a common way of passing data down to child requests)."""

    name = "follow"

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base_url = base_url

    async def start(self) -> Any:
        yield Request(self.base_url + "/index.html")

    def parse(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url}
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href).split("#", 1)[0]
            if url.startswith(self.base_url) and url.endswith(".html"):
                yield response.follow(url, meta=response.meta)


class _CountingServer:
    """A Redis client that counts the round trips carrying a ``tagratio/`` stat: a call
    with such an argument, or the execution of a pipeline holding one."""

    def __init__(self, server: Any) -> None:
        self.real = server
        self.round_trips = 0

    def pipeline(self, *args: Any, **kwargs: Any) -> _CountingPipeline:
        return _CountingPipeline(self, self.real.pipeline(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.real, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.round_trips += any("tagratio/" in str(arg) for arg in args)
            return method(*args, **kwargs)

        return call


class _CountingPipeline:
    def __init__(self, counter: _CountingServer, pipe: Any) -> None:
        self.counter, self.pipe, self.carries_tagratio = counter, pipe, False

    def __enter__(self) -> _CountingPipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pipe.reset()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.pipe, name)

        def queue(*args: Any, **kwargs: Any) -> Any:
            self.carries_tagratio |= any("tagratio/" in str(arg) for arg in args)
            return method(*args, **kwargs)

        return queue

    def execute(self) -> Any:
        self.counter.round_trips += self.carries_tagratio
        return self.pipe.execute()


class CountingRedisStats(scrapy_redis_stats.RedisStatsCollector):  # type: ignore[misc]
    """scrapy-redis's stats collector, recording in ``test/tagratio_round_trips`` how many
    Redis round trips the ``tagratio/`` stats cost."""

    def __init__(self, crawler: Any, spider: Any = None) -> None:
        super().__init__(crawler, spider)
        self.server = _CountingServer(self.server)

    def close_spider(self, spider: Any = None, reason: str = "") -> None:
        counter = self.server
        counter.real.hset(self._get_key(spider), "test/tagratio_round_trips", counter.round_trips)
        super().close_spider(spider, reason)


def test_redis_stats_cost_at_most_one_round_trip_per_page(
    site: LocalSite, redis_url: str, db: Any, run_crawls: Callable[..., dict[str, CrawlResult]]
) -> None:
    settings = {
        **ADDON,
        **REDIS_SCHEDULER,
        "REDIS_URL": redis_url,
        "STATS_CLASS": "test_redis.CountingRedisStats",
        # verdicts() judges each page alone; with the site memory a section front crawled
        # after its articles can become an overview page by their headlines (crawl order).
        "TAGRATIO_SITE_MEMORY": False,
    }
    spec = CrawlSpec("counted", "test_redis:FollowSpider", settings, {"base_url": site.base_url})
    result = run_crawls([spec])["counted"]
    assert result.error is None
    stats = {k: int(v) for k, v in result.stats.items() if k.startswith(("tagratio/", "test/"))}
    stats["response_received_count"] = int(result.stats["response_received_count"])
    pages = len(ARTICLES) + len(OVERVIEWS)
    assert stats["response_received_count"] == pages
    assert stats["tagratio/pages_extracted"] == pages
    _, dropped = verdicts(site)
    assert stats["tagratio/items_annotated"] == pages  # overview items too, then dropped
    assert stats["tagratio/items_dropped"] == len(dropped)
    # Per page: one write of the counters at most (before batching: about ten).
    assert 1 <= stats["test/tagratio_round_trips"] <= pages, stats


def test_counters_and_maxima_of_two_processes_add_up_in_redis(redis_url: str, db: Any) -> None:
    """Two crawlers writing into one stats hash, as two processes do: nothing is written
    before a flush, counters add up, and a smaller maximum never replaces a larger one."""
    settings = {"STATS_CLASS": "scrapy_redis.stats.RedisStatsCollector", "REDIS_URL": redis_url}
    crawlers = [get_crawler(settings_dict=settings) for _ in range(2)]
    first, second = (batched_stats(crawler) for crawler in crawlers)
    assert first.batched and second.batched
    key = crawlers[0].stats._get_key()  # type: ignore[union-attr]
    first.inc_value("tagratio/pages_extracted")
    first.max_value("tagratio/extraction_time_max_us", 900)
    first.max_value("tagratio/extraction_time_max_us", 400)
    second.inc_value("tagratio/pages_extracted", 2)
    second.max_value("tagratio/extraction_time_max_us", 300)
    assert db.hgetall(key) == {}
    first.flush()
    second.flush()
    assert db.hgetall(key) == {
        "tagratio/pages_extracted": "3",
        "tagratio/extraction_time_max_us": "900",
    }
    second.max_value("tagratio/extraction_time_max_us", 1200)
    second.flush()
    assert db.hget(key, "tagratio/extraction_time_max_us") == "1200"
    # Scrapy's in-memory collector is written at once, as before.
    memory = batched_stats(get_crawler())
    memory.inc_value("tagratio/pages_extracted")
    assert not memory.batched
    assert memory.stats.get_value("tagratio/pages_extracted") == 1


def test_counters_survive_a_failed_write(
    redis_url: str, db: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis unreachable at a write: the error is logged, the counters are kept and go out
    with the next write once Redis answers again."""
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead_url = f"redis://127.0.0.1:{sock.getsockname()[1]}/0"
    settings = {"STATS_CLASS": "scrapy_redis.stats.RedisStatsCollector", "REDIS_URL": dead_url}
    crawler = get_crawler(settings_dict=settings)
    batch = batched_stats(crawler)
    batch.inc_value("tagratio/pages_extracted", 2)
    batch.max_value("tagratio/extraction_time_max_us", 70)
    batch.flush()
    assert "Could not write the tagratio/ stats to Redis" in caplog.text
    crawler.stats.server = redis.Redis.from_url(redis_url)  # type: ignore[union-attr]
    batch.inc_value("tagratio/pages_extracted")
    batch.flush()
    key = crawler.stats._get_key()  # type: ignore[union-attr]
    assert db.hgetall(key) == {
        "tagratio/pages_extracted": "3",
        "tagratio/extraction_time_max_us": "70",
    }


# ---------------------------------------------------------------------- what travels
PAGES = {
    **{page.name: page.read_bytes() for page in (*ARTICLES, *OVERVIEWS)},
    "binary.html": bytes(range(256)) * 64,
    "empty.html": b"",
}


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_meta_and_items_pickle_and_export_to_json(algorithm: str) -> None:
    """Everything the plugin puts in meta and items, with every option that adds to them,
    survives pickling (scrapy-redis's queue, worker processes) and strict JSON export."""
    crawler = get_crawler(
        settings_dict={
            **ADDON,
            "TAGRATIO_ALGORITHM": algorithm,
            "TAGRATIO_OVERVIEW_ACTION": "tag",
            "TAGRATIO_ATTACH_HTML": True,
            "TAGRATIO_ATTACH_BLOCKS": True,
            "TAGRATIO_TEXT_FORMAT": "markdown",
        }
    )
    downloader = TagRatioDownloaderMiddleware.from_crawler(crawler)
    spider_mw = TagRatioSpiderMiddleware.from_crawler(crawler)
    spider = FollowSpider(base_url="http://127.0.0.1")
    for name, body in PAGES.items():
        request = Request(f"http://127.0.0.1/{name}")
        response = HtmlResponse(request.url, body=body, request=request)
        asyncio.run(downloader.process_response(request, response))
        added = {k: v for k, v in request.meta.items() if k.startswith("tagratio")}
        assert added, name
        assert pickle.loads(pickle.dumps(added, protocol=-1)) == added
        # The request as scrapy-redis queues it (request_to_dict, then pickle).
        queue = scrapy_redis_queue.Base(None, spider, "q")
        assert queue._decode_request(queue._encode_request(request)).meta == request.meta
        item = spider_mw.get_processed_item({"url": request.url}, response)
        assert json.loads(strict_json(item))["main_text"] == item["main_text"], name
        assert pickle.loads(pickle.dumps(item, protocol=-1)) == item


#: Where the serializer below records what it queued (set per crawl by the test).
SIZES_FILE = "TAGRATIO_TEST_QUEUED_SIZES"


def dumps(request: dict[str, Any]) -> bytes:
    """scrapy-redis's default serialisation (``SCHEDULER_SERIALIZER = "test_redis"``),
    recording the URL and size of every request it queues."""
    data: bytes = picklecompat.dumps(request)
    with open(os.environ[SIZES_FILE], "a") as out:
        out.write(json.dumps([request["url"], len(data)]) + "\n")
    return data


loads = picklecompat.loads


def test_queued_requests_do_not_grow_with_the_plugin(
    site: LocalSite,
    redis_url: str,
    db: Any,
    run_crawls: Callable[..., dict[str, CrawlResult]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same crawl through the Redis queue with the plugin off and on: every queued
    request has the same serialised size, though each carries a copy of its parent's meta
    (nothing of an extraction travels in it)."""
    sizes: dict[str, dict[str, int]] = {}
    for label, plugin in (("off", {}), ("on", ADDON)):
        db.flushdb()
        record = tmp_path / f"sizes-{label}.jsonl"
        monkeypatch.setenv(SIZES_FILE, str(record))
        settings = {
            **plugin,
            **REDIS_SCHEDULER,
            "REDIS_URL": redis_url,
            "SCHEDULER_SERIALIZER": "test_redis",
            "CONCURRENT_REQUESTS": 1,
        }
        args = {"base_url": site.base_url}
        result = run_crawls([CrawlSpec(label, "test_redis:FollowSpider", settings, args)])
        assert result[label].error is None
        sizes[label] = dict(json.loads(line) for line in record.read_text().splitlines())
    assert len(sizes["off"]) == len(ARTICLES) + len(OVERVIEWS)
    assert sizes["on"] == sizes["off"]


@pytest.mark.parametrize("value", ["soon", -1, "nan"])
def test_wait_for_peers_names_a_bad_timeout(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from newsdemo.extensions import WaitForPeers

    crawler = get_crawler(settings_dict={"PEERS_IDLE_TIMEOUT": value})
    message = f"PEERS_IDLE_TIMEOUT must be a number of seconds >= 0; got {value!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        WaitForPeers.from_crawler(crawler)


# ---------------------------------------------------------------------- the site memory
def test_the_site_memory_in_redis_counts_as_the_local_one(redis_url: str, db: Any) -> None:
    """Two clients (as two processes) recording into one Redis see the counts a single
    local memory sees; Redis holds integer counters only; snapshots for workers carry the
    counts; the bounds hold (entries per site, URLs per site, sites)."""
    from scrapy_tagratio import SiteMemory
    from scrapy_tagratio.redis_memory import RedisSiteMemory

    rng = np.random.default_rng(0)
    template = rng.integers(0, 2**63, size=30, dtype=np.uint64)
    pages = [
        np.concatenate((template, rng.integers(0, 2**63, 20, dtype=np.uint64))) for _ in range(6)
    ]
    local = SiteMemory()
    shared = [RedisSiteMemory(redis.Redis.from_url(redis_url), "t:mem") for _ in range(2)]
    for number, prints in enumerate(pages):
        url = f"https://example.com/{number}"
        local.record("example.com", prints, url)
        shared[number % 2].record("example.com", prints, url)
    probe = np.concatenate(
        (template[:5], pages[0][-3:], rng.integers(0, 2**63, 4, dtype=np.uint64))
    )
    for memory in shared:
        assert memory.pages_seen("example.com") == 6
        assert (
            memory.counts("example.com", probe).tolist()
            == local.counts("example.com", probe).tolist()
        )
        assert memory.is_revisit("example.com", "https://example.com/3")
        assert not memory.is_revisit("example.com", "https://example.com/7")
        assert memory.pages_seen("other.org") == 0
        snapshot = memory.snapshot("https://example.com/9")
        assert type(snapshot) is SiteMemory
        assert (
            snapshot.counts("example.com", probe).tolist()
            == local.counts("example.com", probe).tolist()
        )
        assert snapshot.is_revisit("example.com", "https://example.com/0")
    assert set(db.keys()) == {"t:mem:site:example.com", "t:mem:urls:example.com", "t:mem:sites"}
    values = redis.Redis.from_url(redis_url).hgetall("t:mem:site:example.com").values()
    assert all(value.isdigit() for value in values)
    with pytest.raises(TypeError):
        pickle.dumps(shared[0])

    small = RedisSiteMemory(
        redis.Redis.from_url(redis_url), "t:small", max_entries=100, max_sites=2
    )
    for number, prints in enumerate(pages):
        small.record("example.com", prints, f"https://example.com/{number}")
    # 30 + 6 x 20 blocks seen: trimmed to 75 twice, the own blocks seen once going first.
    assert db.hlen("t:small:site:example.com") - 1 == 75
    assert (small.counts("example.com", template) == 6).all()
    for site in ("a.org", "b.org", "c.org"):
        small.record(site, pages[0])
    assert len(small) == 2 and small.pages_seen("example.com") == 0


def test_two_processes_learn_a_sites_template_from_each_other_through_redis(
    redis_url: str,
    db: Any,
    local_site: Callable[..., LocalSite],
    run_crawls: Callable[..., dict[str, CrawlResult]],
) -> None:
    """A first crawler process reads four articles of a site; a second process, started
    afterwards on the site's fifth article only, leaves out the newsletter box seen on the
    first process's pages with TAGRATIO_SITE_MEMORY_BACKEND = "redis", and keeps it with
    the local memory (its first page of the site). A third run under the same key prefix
    fetches the first four again: pages captured again, read with their own sighting left
    out (the box goes from all four, the first included) and not counted twice."""
    from test_site_memory import BRIEFING, article, has_its_article

    site = local_site()
    for number in range(5):
        site.add(f"/a/{number}.html", article(number))
    spider = "test_site_memory:PathsSpider"
    base = {"ADDONS": {"scrapy_tagratio.Addon": 100}, "REDIS_URL": redis_url}
    redis_memory = {**base, "TAGRATIO_SITE_MEMORY_BACKEND": "redis"}
    first = {"base_url": site.base_url, "paths": ",".join(f"/a/{n}.html" for n in range(4))}
    second = {"base_url": site.base_url, "paths": "/a/4.html"}
    results = run_crawls([CrawlSpec("first", spider, redis_memory, first)])
    results |= run_crawls(
        [
            CrawlSpec("second", spider, redis_memory, second),
            CrawlSpec("second_local", spider, base, second),
        ]
    )
    for name, result in results.items():
        assert result.error is None, name
        assert all(map(has_its_article, result.items)), name
    assert len(results["first"].items) == 4
    (learnt,) = results["second"].items
    (alone,) = results["second_local"].items
    assert BRIEFING not in learnt["main_text"]
    assert learnt["tagratio"]["template_chars"] > 0
    assert BRIEFING in alone["main_text"]
    assert int(db.hget("paths:tagratio_memory:site:127.0.0.1", "#pages")) == 5
    again = run_crawls([CrawlSpec("again", spider, redis_memory, first)])["again"]
    assert again.error is None and len(again.items) == 4
    assert all(map(has_its_article, again.items))
    assert not any(BRIEFING in item["main_text"] for item in again.items)
    assert BRIEFING in min(results["first"].items, key=lambda item: item["url"])["main_text"]
    assert int(db.hget("paths:tagratio_memory:site:127.0.0.1", "#pages")) == 5
