"""The site memory in Redis: every crawler process of a scrapy-redis crawl learns from the
pages all of them extracted (``TAGRATIO_SITE_MEMORY_BACKEND = "redis"``).

Counters only, no pickled blobs, under the key prefix ``P`` (TAGRATIO_SITE_MEMORY_REDIS_KEY,
``%(spider)s`` replaced by the spider's name):

* ``P:site:<site>``: a hash, the 8-byte block fingerprint of :func:`page_fingerprints`
  -> the number of pages of the site it was seen on, and ``#pages`` -> pages recorded;
* ``P:urls:<site>``: a set of the recorded URLs' 8-byte fingerprints (a page captured again
  is known, :meth:`SiteMemory.is_revisit`), at most ``max_entries`` (random ones go);
* ``P:heads:<site>``: a set of the 8-byte headline fingerprints of the site's articles
  (:func:`headline_fingerprint`), at most ``max_entries`` (random ones go);
* ``P:sites``: a sorted set of the sites by last use (least recently used goes first).

One page costs three round trips: whether its URL was recorded (``SISMEMBER``), the counts
of its fingerprints (``HMGET``) and their increments (one pipeline of ``HINCRBY``).
The keys outlive the crawl (like scrapy-redis's with ``SCHEDULER_PERSIST``): a new run
under the same prefix starts with what the last one learnt, and reads the pages that run
recorded as pages captured again (their own sighting left out, not counted twice); a
fresh prefix per run starts from nothing.

The bounds are those of the local memory: above
``max_entries`` fingerprints a site keeps its blocks seen on several pages first (then the
newest are not told apart from the oldest: Redis counts, it does not date), above
``max_sites`` sites the least recently used is deleted; every key expires
:data:`EXPIRE_SECONDS` after its site was last written. Worker processes get a snapshot of
the page's site, as with the local memory. A failing Redis stops the memory, never the
extraction: the page is read alone and the error is logged once.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .site_memory import SiteMemory, _Site, _url_fingerprint, headline_fingerprint

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["EXPIRE_SECONDS", "RedisSiteMemory"]

logger = logging.getLogger(__name__)

#: Keys of a site not written for this long expire (one week).
EXPIRE_SECONDS = 7 * 24 * 3600
_PAGES = b"#pages"


class RedisSiteMemory(SiteMemory):
    """A :class:`SiteMemory` whose counts live in Redis (``server``: a ``redis.Redis``
    client; ``key``: the prefix of its keys). The other arguments are
    :class:`SiteMemory`'s."""

    def __init__(self, server: Any, key: str, **options: Any) -> None:
        super().__init__(**options)
        self.server = server
        self.key = key
        self._failed = False

    @classmethod
    def from_crawler(cls, crawler: Crawler, key: str, **options: Any) -> RedisSiteMemory:
        """The memory in the Redis of the crawler's REDIS_URL (REDIS_HOST, ...: as
        scrapy-redis connects); ``%(spider)s`` in ``key`` is the spider's name."""
        from scrapy_redis.connection import get_redis_from_settings

        name = crawler.spider.name if crawler.spider is not None else "spider"
        return cls(get_redis_from_settings(crawler.settings), key % {"spider": name}, **options)

    def __repr__(self) -> str:
        return f"RedisSiteMemory(key={self.key!r}, min_pages={self.min_pages})"

    def __reduce__(self) -> Any:
        raise TypeError("a RedisSiteMemory holds a connection: send snapshot(url) instead")

    def _site_key(self, site: str) -> str:
        return f"{self.key}:site:{site}"

    def _call(self, default: Any, what: str, function: Any, *args: Any) -> Any:
        """``function(*args)``, or ``default`` (logged once) when Redis fails."""
        try:
            return function(*args)
        except Exception as exc:  # redis.RedisError and connection errors alike
            if not self._failed:
                self._failed = True
                logger.error("The site memory in Redis (%s) failed to %s: %s", self.key, what, exc)
            return default

    def __len__(self) -> int:
        return int(self._call(0, "count sites", self.server.zcard, f"{self.key}:sites"))

    @property
    def entries(self) -> int:
        sites = self._call([], "list sites", self.server.zrange, f"{self.key}:sites", 0, -1)
        return sum(
            int(self._call(1, "count entries", self.server.hlen, self._site_key(s.decode()))) - 1
            for s in sites
        )

    @property
    def nbytes(self) -> int:
        """Not held in this process."""
        return 0

    def pages_seen(self, site: str) -> int:
        value = self._call(None, "read", self.server.hget, self._site_key(site), _PAGES)
        return int(value) if value is not None else 0

    def counts(self, site: str, fingerprints: np.ndarray) -> np.ndarray:
        if not len(fingerprints):
            return np.zeros(0, dtype=np.int64)
        fields = [f.tobytes() for f in np.asarray(fingerprints, dtype="<u8")]
        values = self._call(
            [None] * len(fields), "read", self.server.hmget, self._site_key(site), fields
        )
        return np.array([int(v) if v is not None else 0 for v in values], dtype=np.int64)

    def is_revisit(self, site: str, url: str) -> bool:
        member = np.array([_url_fingerprint(url)], dtype="<u8").tobytes()
        key = f"{self.key}:urls:{site}"
        return bool(self._call(False, "read", self.server.sismember, key, member))

    def snapshot(self, url: str | None) -> SiteMemory:
        """A local memory with what Redis holds of ``url``'s site (for a worker)."""
        snapshot = super().snapshot(None)
        site = self.site_of(url)
        if site is None:
            return snapshot
        counts = self._call({}, "read", self.server.hgetall, self._site_key(site))
        urls = self._call(set(), "read", self.server.smembers, f"{self.key}:urls:{site}")
        entry = _Site()
        entry.pages_seen = int(counts.pop(_PAGES, 0))
        if counts:
            prints = np.frombuffer(b"".join(counts), dtype="<u8").astype(np.uint64)
            order = np.argsort(prints)
            entry.fingerprints = prints[order]
            entry.pages = np.array([int(v) for v in counts.values()], dtype=np.uint32)[order]
            entry.last_seen = np.zeros(len(order), dtype=np.uint32)
        entry.urls = np.frombuffer(b"".join(urls), dtype="<u8").astype(np.uint64)
        heads = self._call(set(), "read", self.server.smembers, f"{self.key}:heads:{site}")
        entry.headlines = np.frombuffer(b"".join(heads), dtype="<u8").astype(np.uint64)
        snapshot._sites[site] = entry
        return snapshot

    def headlines(self, site: str) -> int:
        return int(self._call(0, "read", self.server.scard, f"{self.key}:heads:{site}"))

    def known_headlines(self, site: str, fingerprints: np.ndarray) -> np.ndarray:
        if not len(fingerprints):
            return np.zeros(0, dtype=bool)
        pipe = self.server.pipeline(transaction=False)
        for fingerprint in np.asarray(fingerprints, dtype="<u8"):
            pipe.sismember(f"{self.key}:heads:{site}", fingerprint.tobytes())
        found = self._call([False] * len(fingerprints), "read", pipe.execute)
        return np.array([bool(f) for f in found], dtype=bool)

    def record_headline(self, site: str, headline: str | None) -> None:
        fingerprint = headline_fingerprint(headline)
        if fingerprint is None:
            return
        key = f"{self.key}:heads:{site}"
        pipe = self.server.pipeline(transaction=False)
        pipe.sadd(key, np.array([fingerprint], dtype="<u8").tobytes())
        pipe.expire(key, EXPIRE_SECONDS)
        pipe.scard(key)
        results = self._call(None, "record a headline", pipe.execute)
        if results is not None and int(results[-1]) > self.max_entries:
            excess = int(results[-1]) - self.max_entries
            self._call(None, "trim headlines", self.server.spop, key, excess)

    def record(self, site: str, fingerprints: np.ndarray, url: str | None = None) -> None:
        key = self._site_key(site)
        unique = np.unique(np.asarray(fingerprints, dtype=np.uint64)).astype("<u8")
        self.last_recorded = (site, np.asarray(fingerprints, dtype=np.uint64), url)
        pipe = self.server.pipeline(transaction=False)
        for field in unique:
            pipe.hincrby(key, field.tobytes(), 1)
        pipe.hincrby(key, _PAGES, 1)
        pipe.expire(key, EXPIRE_SECONDS)
        urls_key = f"{self.key}:urls:{site}"
        if url is not None:
            pipe.sadd(urls_key, np.array([_url_fingerprint(url)], dtype="<u8").tobytes())
            pipe.expire(urls_key, EXPIRE_SECONDS)
        pipe.zadd(f"{self.key}:sites", {site: time.time()})
        pipe.hlen(key)
        pipe.zcard(f"{self.key}:sites")
        pipe.scard(urls_key)
        results = self._call(None, "record a page", pipe.execute)
        if results is None:
            return
        entries, sites, urls = int(results[-3]) - 1, int(results[-2]), int(results[-1])
        if entries > self.max_entries:
            self._call(None, "trim a site", self._trim, key)
        if urls > self.max_entries:
            self._call(None, "trim a site", self.server.spop, urls_key, urls - self.max_entries)
        if sites > self.max_sites:
            self._call(None, "drop a site", self._drop_oldest, sites - self.max_sites)

    def _trim(self, key: str) -> None:
        """Down to three quarters of the bound, blocks seen on one page first."""
        counts = self.server.hgetall(key)
        counts.pop(_PAGES, None)
        ranked = sorted(counts, key=lambda field: int(counts[field]))
        excess = len(ranked) - 3 * self.max_entries // 4
        if excess > 0:
            self.server.hdel(key, *ranked[:excess])

    def _drop_oldest(self, count: int) -> None:
        for site, _ in self.server.zpopmin(f"{self.key}:sites", count):
            name = site.decode()
            self.server.delete(
                self._site_key(name), f"{self.key}:urls:{name}", f"{self.key}:heads:{name}"
            )
