"""The site memory's cold start: hold the items of a site's first pages.

The first pages of a site are extracted with little or no memory of its template
(:class:`~scrapy_tagratio.SiteMemory` needs a block on ``min_pages`` other pages). With
``TAGRATIO_SITE_MEMORY_HOLD = N`` the downloader middleware still extracts and records such
a page at once (so the memory grows and the callback sees an extraction), and marks it in
``response.meta[HOLD_META]``; the spider middleware lets the callback's requests go out at
once and holds its items until the memory knows ``N`` other pages of the site, then reads
the page again with the memory (its own sighting left out) and annotates the items with
that extraction.

A held page is released early, never lost, when ``TAGRATIO_SITE_MEMORY_HOLD_SECONDS``
pass, when the crawl has nothing more to download (no request downloading, queued or still
to start, and every page in the scraper is held), when the held pages fill the scraper's
memory (below), or when the engine starts closing (``CLOSESPIDER_ITEMCOUNT``, an error, a
signal): Scrapy waits for the scraper to finish its pages before the spider closes, so the
held items are then written out as extracted so far.

Held responses count in Scrapy's scraper memory (``SCRAPER_SLOT_MAX_ACTIVE_SIZE``): a broad
crawl with many sites in their cold start downloads more slowly while they wait, and
Scrapy starts no download while that memory is over its bound, so held pages that fill it
alone (nothing downloading, nothing else in the scraper) go at once: no other page of the
site could arrive to release them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.task import deferLater

from .site_memory import SiteMemory

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "HOLD_META",
    "POLL_SECONDS",
    "Release",
    "wait_for_site",
]

#: ``response.meta`` key of a held page: ``(site, other pages to wait for)``.
HOLD_META = "tagratio_hold"
#: Seconds between two looks at the memory and the engine.
POLL_SECONDS = 0.1
Release = Literal["pages", "time", "idle", "full", "closing"]


def _nothing_left(crawler: Crawler, held: int) -> bool:
    """Whether no page can arrive any more: nothing downloading, queued or to start, and
    the scraper busy only with the ``held`` pages. Scrapy keeps these counts on the engine's
    private slot; a version without them counts as busy (the time limit still releases)."""
    engine = crawler.engine
    slot = getattr(engine, "_slot", None)
    scraper_slot = getattr(getattr(engine, "scraper", None), "slot", None)
    if engine is None or slot is None or scraper_slot is None:
        return False
    if engine.downloader.active or getattr(engine, "_start", None) is not None:
        return False
    return not slot.scheduler.has_pending_requests() and len(scraper_slot.active) <= held


def _scraper_full(crawler: Crawler, held: int) -> bool:
    """Whether the ``held`` pages alone keep every download from starting: nothing
    downloading, the scraper busy only with them, and its memory over
    ``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` (Scrapy's engine backs out then). A version without
    these attributes counts as not full (the time limit still releases)."""
    engine = crawler.engine
    scraper_slot = getattr(getattr(engine, "scraper", None), "slot", None)
    if engine is None or scraper_slot is None or not hasattr(scraper_slot, "needs_backout"):
        return False
    if engine.downloader.active:
        return False
    return len(scraper_slot.active) <= held and bool(scraper_slot.needs_backout())


def _closing(crawler: Crawler) -> bool:
    engine = crawler.engine
    slot = getattr(engine, "_slot", None)
    return engine is None or not engine.running or (slot is not None and bool(slot.closing))


async def wait_for_site(
    crawler: Crawler,
    memory: SiteMemory,
    site: str,
    pages: int,
    seconds: float,
    held: Callable[[], int],
) -> Release:
    """Wait until ``memory`` has recorded ``pages`` pages of ``site``, and say what ended
    the wait: ``"pages"``, ``"time"`` (``seconds`` passed), ``"idle"`` (nothing more to
    download), ``"full"`` (the held pages fill the scraper's memory: no download starts)
    or ``"closing"`` (the engine is closing). ``held()`` is the number of pages held in
    the crawl now."""
    from twisted.internet import reactor  # the crawl's, installed by then

    deadline = time.monotonic() + seconds
    while True:
        if memory.pages_seen(site) >= pages:
            return "pages"
        if _closing(crawler):
            return "closing"
        if _nothing_left(crawler, held()):
            return "idle"
        if _scraper_full(crawler, held()):
            return "full"
        if time.monotonic() >= deadline:
            return "time"
        await maybe_deferred_to_future(deferLater(reactor, POLL_SECONDS, lambda: None))
