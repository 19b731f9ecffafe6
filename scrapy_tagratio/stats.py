"""The plugin's ``tagratio/`` stats, batched where a stats call is a network round trip.

Scrapy's in-memory stats collector is updated at once: a call costs nothing. Under
scrapy-redis's ``RedisStatsCollector`` (one Redis hash shared by every process of a
crawl) each ``inc_value`` costs two or three round trips and each ``max_value`` three,
and a page touches several counters. There the counters of a crawler are gathered in
memory and written on ``response_received`` (when any were gathered since the last write)
and when the spider closes: one ``MULTI``/``EXEC`` with an ``HINCRBY`` per counter and a
server-side maximum per maximum, so at most one round trip per page (responses that
arrive together share one), however many processes share the hash.

A maximum is kept by a Lua script run inside Redis (read, compare and write in one step),
not by the collector's read-then-write ``max_value``, which loses the larger value when two
processes update the same maximum at once. Every value is an integer (Redis's ``HINCRBY``
accepts no other).
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

__all__ = ["StatsBatch", "batched_stats"]

logger = logging.getLogger(__name__)

#: Sets hash field ARGV[1] of KEYS[1] to ARGV[2] when it is missing or smaller (atomic:
#: Redis runs a script without interleaving other commands).
_MAX_SCRIPT = """
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]))
if current == nil or tonumber(ARGV[2]) > current then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
"""


class StatsBatch:
    """The plugin's view of a crawler's stats: ``inc_value`` and ``max_value`` as on a
    Scrapy stats collector, with integer values only."""

    def __init__(self, stats: StatsCollector) -> None:
        self.stats = stats
        #: Whether the counters are gathered and flushed (scrapy-redis's collector).
        self.batched = _is_redis_collector(stats)
        self._counts: dict[str, int] = {}
        self._maxima: dict[str, int] = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        if not self.batched:
            self.stats.inc_value(key, count)
            return
        self._counts[key] = self._counts.get(key, 0) + count

    def max_value(self, key: str, value: int) -> None:
        if not self.batched:
            self.stats.max_value(key, value)
            return
        if key not in self._maxima or value > self._maxima[key]:
            self._maxima[key] = value

    def flush(self, **_signal_kwargs: Any) -> None:
        """Write the gathered counters to Redis in one round trip (nothing to do for an
        in-memory collector). On a Redis error they are kept for the next flush."""
        if not self._counts and not self._maxima:
            return
        from redis.exceptions import RedisError  # installed with scrapy-redis

        counts, maxima = self._counts, self._maxima
        self._counts, self._maxima = {}, {}
        stats: Any = self.stats
        key = stats._get_key()  # scrapy-redis's name of the crawl's stats hash
        try:
            with stats.server.pipeline(transaction=True) as pipe:
                for field, count in counts.items():
                    pipe.hincrby(key, field, count)
                for field, value in maxima.items():
                    pipe.eval(_MAX_SCRIPT, 1, key, field, value)
                pipe.execute()
        except RedisError as exc:
            logger.warning("Could not write the tagratio/ stats to Redis (kept): %s", exc)
            for field, count in counts.items():
                self.inc_value(field, count)
            for field, value in maxima.items():
                self.max_value(field, value)


def _is_redis_collector(stats: StatsCollector) -> bool:
    try:
        from scrapy_redis.stats import RedisStatsCollector
    except ImportError:  # scrapy-redis not installed: no Redis collector to batch for
        return False
    return isinstance(stats, RedisStatsCollector)


_BATCHES: weakref.WeakKeyDictionary[Crawler, StatsBatch] = weakref.WeakKeyDictionary()


def batched_stats(crawler: Crawler) -> StatsBatch:
    """The crawler's one :class:`StatsBatch` (shared by the middlewares and the pipeline),
    flushed on every ``response_received`` and when the spider closes."""
    batch = _BATCHES.get(crawler)
    if batch is None:
        if crawler.stats is None:  # pragma: no cover - Scrapy builds stats before components
            raise RuntimeError("the crawler has no stats collector yet")
        batch = _BATCHES[crawler] = StatsBatch(crawler.stats)
        if batch.batched:
            for signal in (signals.response_received, signals.spider_closed):
                crawler.signals.connect(batch.flush, signal=signal, weak=False)
    return batch
