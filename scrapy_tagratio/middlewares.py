"""The Scrapy glue: a downloader middleware that extracts, a spider middleware that
attaches the result to items and acts on overview pages. Neither computes a density.

A response flows downloader middleware -> callback -> spider middleware:

* :class:`TagRatioDownloaderMiddleware` runs the extractor on every HTML response
  (non-HTML responses pass untouched and are counted), in the reactor thread or in the
  worker pool, and puts the :class:`~scrapy_tagratio.Extraction` in
  ``response.meta["tagratio"]`` for the callback, or an error record in
  ``response.meta["tagratio_error"]``. With ``TAGRATIO_OVERVIEW_ACTION = "ignore"``
  overview pages are dropped here with ``IgnoreRequest``.
* :class:`TagRatioSpiderMiddleware` sets the main text and the scores on every item the
  callback yields for that response (sync and async callbacks alike), and with ``"drop"``
  (the default) drops the items of an overview page while its requests go out, so a crawl
  keeps discovering articles through home pages and section fronts. It strips the
  extraction (and error record) from the requests the callback yields: meta copied with
  ``response.follow(..., meta=response.meta)`` would otherwise carry the parent page's
  :class:`~scrapy_tagratio.Extraction` into memory queues, JOBDIR or a scrapy-redis queue.

Stats are integers (scrapy-redis's ``RedisStatsCollector`` adds them up in Redis):

* ``tagratio/pages_extracted``, ``tagratio/overview_pages``, ``tagratio/pages_ignored``,
  ``tagratio/overview_uncertain`` (pages between the overview detector's two thresholds:
  items kept, ``overview_verdict`` "uncertain" in their scores);
* ``tagratio/items_annotated``, ``tagratio/items_with_error``, ``tagratio/items_dropped``;
* ``tagratio/skipped/<why>``: ``non_html``, ``disabled`` (per request), and the resource
  limits ``too_large`` and ``time_budget``;
* ``tagratio/errors/<kind>``: ``not_html`` (binary served as HTML), ``extraction``,
  ``bad_settings`` (a bad per-request override), ``bad_source`` (pipeline),
  ``worker_crashed``, or the exception class of a bug;
* ``tagratio/extraction_time_us`` (total) and ``tagratio/extraction_time_max_us``.

Under scrapy-redis's stats collector they are gathered and written at most once per
response (:mod:`scrapy_tagratio.stats`).

The loggers are under ``scrapy_tagratio``.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware

from .pool import SKIP_KINDS, ExtractionPool, Outcome
from .result import Extraction
from .settings import SettingsError, TagRatioSettings
from .stats import StatsBatch, batched_stats

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "ERROR_META",
    "EXTRACTION_META",
    "SETTINGS_META",
    "TagRatioDownloaderMiddleware",
    "TagRatioSpiderMiddleware",
    "annotate",
    "enabled_settings",
    "record_outcome",
    "shared_pool",
    "stats_of",
]

logger = logging.getLogger(__name__)

#: ``response.meta`` key of the page's :class:`~scrapy_tagratio.Extraction`.
EXTRACTION_META = "tagratio"
#: ``response.meta`` key of ``{"kind": ..., "message": ...}`` when the extraction failed.
ERROR_META = "tagratio_error"
#: ``request.meta`` key of per-request ``TAGRATIO_*`` overrides (a dict).
SETTINGS_META = "tagratio_settings"

_POOLS: weakref.WeakKeyDictionary[Crawler, ExtractionPool] = weakref.WeakKeyDictionary()


def shared_pool(crawler: Crawler, settings: TagRatioSettings) -> ExtractionPool:
    """The crawl's one extraction pool (shared by the middleware and the pipeline), started
    now and closed when the spider closes."""
    pool = _POOLS.get(crawler)
    if pool is None:
        pool = _POOLS[crawler] = ExtractionPool(settings.workers)
        pool.start()
        crawler.signals.connect(pool.close, signal=signals.spider_closed, weak=False)
    return pool


def record_outcome(stats: StatsBatch, outcome: Outcome, url: str | None) -> None:
    """Count one extraction in the ``tagratio/`` stats and log a failure."""
    extraction = outcome.extraction
    if extraction is not None:
        stats.inc_value("tagratio/pages_extracted")
        stats.inc_value("tagratio/extraction_time_us", outcome.elapsed_us)
        stats.max_value("tagratio/extraction_time_max_us", outcome.elapsed_us)
        if extraction.is_overview:
            stats.inc_value("tagratio/overview_pages")
        elif extraction.overview_verdict == "uncertain":
            stats.inc_value("tagratio/overview_uncertain")
        return
    kind = outcome.error_kind or "extraction"
    if kind in SKIP_KINDS:
        stats.inc_value(f"tagratio/skipped/{kind}")
        logger.info("Skipped extraction of %s: %s", url, outcome.error)
    elif outcome.details:
        stats.inc_value(f"tagratio/errors/{kind}")
        logger.error("Extraction of %s failed: %s\n%s", url, outcome.error, outcome.details)
    else:
        stats.inc_value(f"tagratio/errors/{kind}")
        logger.warning("Could not extract %s (%s): %s", url, kind, outcome.error)


def annotate(
    item: Any,
    settings: TagRatioSettings,
    extraction: Extraction | None,
    error: dict[str, str] | None = None,
) -> None:
    """Set the text and scores fields of ``item`` from ``extraction``, or record ``error``
    (text ``None``, the error inside the scores) so the item goes on.

    Raises:
        SettingsError: the item's declared class lacks a field to set.
    """
    adapter = ItemAdapter(item)
    _check_fields(type(item), settings.item_fields)
    if extraction is None:
        adapter[settings.text_field] = None
        adapter[settings.scores_field] = {
            "algorithm": settings.algorithm.name,
            "params": settings.algorithm.params(),
            "error": dict(error or {}),
        }
        if settings.attach_html:
            adapter[settings.html_field] = None
        if settings.metadata and settings.metadata_field:
            adapter[settings.metadata_field] = None
        return
    scores = extraction.figures()
    if settings.attach_blocks:
        scores["blocks"] = extraction.to_dict(html=False)["blocks"]
    metadata = extraction.metadata.to_dict() if extraction.metadata is not None else None
    if settings.metadata and settings.metadata_field:
        adapter[settings.metadata_field] = metadata
    elif settings.metadata:
        scores["metadata"] = metadata
    adapter[settings.text_field] = _formatted_text(extraction, settings.text_format)
    adapter[settings.scores_field] = scores
    if settings.attach_html:
        adapter[settings.html_field] = extraction.html


def _formatted_text(extraction: Extraction, text_format: str) -> str:
    """The main content in the TAGRATIO_TEXT_FORMAT; plain text where the algorithm marks
    no elements to build HTML or Markdown from (CETR, CCB)."""
    formatted = {"markdown": extraction.markdown, "html": extraction.html}.get(text_format)
    return formatted if formatted is not None else extraction.text


_CHECKED: set[tuple[type, tuple[str, ...]]] = set()


def _check_fields(item_class: type, fields: tuple[str, ...]) -> None:
    """A declared item class (scrapy.Item, dataclass, attrs, pydantic) must declare the
    fields this plugin sets; dicts take any key."""
    if (item_class, fields) in _CHECKED:
        return
    declared = ItemAdapter.get_field_names_from_class(item_class)
    missing = [f for f in fields if declared is not None and f not in declared]
    if missing:
        raise SettingsError(
            f"item class {item_class.__module__}.{item_class.__qualname__} has no field "
            f"{', '.join(map(repr, missing))}: declare {'them' if len(missing) > 1 else 'it'} "
            f"(e.g. {missing[0]} = scrapy.Field(), or a dataclass/attrs/pydantic field "
            f"defaulting to None), or point TAGRATIO_TEXT_FIELD / TAGRATIO_SCORES_FIELD / "
            f"TAGRATIO_HTML_FIELD / TAGRATIO_METADATA_FIELD at fields it has"
        )
    _CHECKED.add((item_class, fields))


def enabled_settings(crawler: Crawler) -> TagRatioSettings:
    """The crawl's validated settings; ``NotConfigured`` (the component stays off) when
    TAGRATIO_ENABLED is False. Every component's ``from_crawler`` starts here."""
    settings = TagRatioSettings.from_settings(crawler.settings)
    if not settings.enabled:
        raise NotConfigured("TAGRATIO_ENABLED is False")
    return settings


def stats_of(crawler: Crawler) -> StatsBatch:
    """The crawler's ``tagratio/`` stats, batched under a Redis collector (see
    :mod:`scrapy_tagratio.stats`)."""
    return batched_stats(crawler)


def _settings_for(base: TagRatioSettings, meta: dict[str, Any]) -> TagRatioSettings:
    """The crawl's settings with the request's overrides; the crawl's own on a bad override
    (the downloader middleware has already recorded that error)."""
    try:
        return base.with_overrides(meta.get(SETTINGS_META))
    except SettingsError:
        return base


class TagRatioDownloaderMiddleware:
    """Extracts every HTML response; see the module docstring."""

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = stats_of(crawler)
        self.pool = shared_pool(crawler, settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioDownloaderMiddleware:
        return cls(crawler, enabled_settings(crawler))

    async def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        meta = request.meta
        # Meta copied from a parent request (response.follow(..., meta=response.meta))
        # must not lend the parent's extraction to this page.
        meta.pop(EXTRACTION_META, None)
        meta.pop(ERROR_META, None)
        stats = self.stats
        if not isinstance(response, HtmlResponse):
            stats.inc_value("tagratio/skipped/non_html")
            return response
        try:
            settings = self.settings.with_overrides(meta.get(SETTINGS_META))
        except SettingsError as exc:
            stats.inc_value("tagratio/errors/bad_settings")
            logger.error("Bad %s in the meta of %s: %s", SETTINGS_META, request, exc)
            meta[ERROR_META] = {"kind": "bad_settings", "message": str(exc)}
            return response
        if not settings.enabled:
            stats.inc_value("tagratio/skipped/disabled")
            return response
        content_type = response.headers.get(b"Content-Type")
        outcome = await self.pool.run(
            response.body,
            url=response.url,
            content_type=content_type.decode("latin-1") if content_type else None,
            options=settings.options,
        )
        record_outcome(stats, outcome, response.url)
        extraction = outcome.extraction
        if extraction is None:
            meta[ERROR_META] = outcome.error_record()
            return response
        meta[EXTRACTION_META] = extraction
        if extraction.is_overview and settings.overview_action == "ignore":
            stats.inc_value("tagratio/pages_ignored")
            raise IgnoreRequest(f"overview page (TAGRATIO_OVERVIEW_ACTION='ignore'): {response}")
        return response


class TagRatioSpiderMiddleware(BaseSpiderMiddleware):
    """Attaches the extraction to items and drops overview pages' items; see the module
    docstring. The order of the callback's output is left as it is; requests only lose
    the extraction in their meta.

    Items that carry their own HTML in ``TAGRATIO_SOURCE_FIELD`` are left to the pipeline.
    """

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        super().__init__(crawler)
        self.settings = settings
        self.stats = stats_of(crawler)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioSpiderMiddleware:
        return cls(crawler, enabled_settings(crawler))

    def get_processed_request(self, request: Request, response: Response | None) -> Request:
        """The request without the parent page's extraction in its meta; the callback's
        ``response.meta`` keeps it (a re-yielded ``response.request``, whose meta *is*
        ``response.meta``, is replaced by a copy first)."""
        meta = request.meta
        if EXTRACTION_META not in meta and ERROR_META not in meta:
            return request
        if response is not None and meta is response.meta:
            request = request.replace()
            meta = request.meta
        meta.pop(EXTRACTION_META, None)
        meta.pop(ERROR_META, None)
        return request

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        if response is None or not ItemAdapter.is_item(item):
            return item
        meta = response.meta
        extraction: Extraction | None = meta.get(EXTRACTION_META)
        error: dict[str, str] | None = meta.get(ERROR_META)
        if extraction is None and error is None:
            return item  # not HTML, or extraction disabled for this request
        settings = _settings_for(self.settings, meta)
        if ItemAdapter(item).get(settings.source_field):
            return item
        stats = self.stats
        if extraction is not None and extraction.is_overview and settings.overview_action == "drop":
            stats.inc_value("tagratio/items_dropped")
            logger.debug("Dropped an item of overview page %s", response.url)
            return None
        annotate(item, settings, extraction, error)
        stats.inc_value(
            "tagratio/items_annotated" if error is None else "tagratio/items_with_error"
        )
        return item
