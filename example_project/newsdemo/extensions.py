"""WaitForPeers: keeps an idle crawler open while other processes may still add requests
to a shared queue (scrapy-redis), and closes it once it has had nothing to do for
``PEERS_IDLE_TIMEOUT`` seconds.

Without it, a process whose shared queue is empty for a moment closes at once: the
second process of a crawl would stop while the first is still fetching the start page
that will fill the queue. Scrapy re-checks an idle spider every 5 seconds, so a waiting
process picks up new requests within 5 seconds and stops between ``PEERS_IDLE_TIMEOUT``
and ``PEERS_IDLE_TIMEOUT`` + 5 seconds after its last request.
"""

from __future__ import annotations

import math
import time
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured


class WaitForPeers:
    def __init__(self, crawler: Crawler, timeout: float) -> None:
        self.timeout = timeout
        self.idle_since: float | None = None
        crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(self.busy, signal=signals.request_reached_downloader)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WaitForPeers:
        value = crawler.settings.get("PEERS_IDLE_TIMEOUT", 10.0)
        try:
            timeout = float(value)
        except (TypeError, ValueError):
            timeout = math.nan
        if not math.isfinite(timeout) or timeout < 0:
            raise ValueError(f"PEERS_IDLE_TIMEOUT must be a number of seconds >= 0; got {value!r}")
        if timeout == 0:
            raise NotConfigured("PEERS_IDLE_TIMEOUT is 0")
        return cls(crawler, timeout)

    def busy(self, **kwargs: Any) -> None:
        self.idle_since = None

    def spider_idle(self, **kwargs: Any) -> None:
        now = time.monotonic()
        if self.idle_since is None:
            self.idle_since = now
        if now - self.idle_since < self.timeout:
            raise DontCloseSpider(f"waiting up to {self.timeout:g} s for requests from peers")
