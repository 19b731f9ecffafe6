"""The Scrapy glue: a downloader middleware that extracts, a spider middleware that
attaches the result to items. Neither computes a density; the pipeline
(:mod:`.pipelines`) drops the items of overview pages.

A response flows downloader middleware -> callback -> spider middleware -> pipeline:

* :class:`TagRatioDownloaderMiddleware` runs the extractor on every HTML response with a
  2xx status (or one of ``TAGRATIO_EXTRACT_STATUSES``; non-HTML responses and other
  statuses pass untouched and are counted; responses to requests without a callback,
  Scrapy's ``NO_CALLBACK`` of robots.txt and the media pipelines, pass uncounted), in
  the reactor thread or in the worker pool,
  and puts the :class:`~scrapy_tagratio.Extraction` in ``response.meta["tagratio"]`` for
  the callback, or an error record in ``response.meta["tagratio_error"]``. The pages
  a ``CrawlSpider`` rule without a callback fetches (:func:`follows_only`) pass too,
  counted in ``tagratio/skipped/follow_only``: no callback sees them. With
  ``TAGRATIO_OVERVIEW_ACTION = "ignore"`` overview pages are dropped here with
  ``IgnoreRequest``.
* :class:`TagRatioSpiderMiddleware` sets the main text and the scores on every item the
  callback yields for that response (sync and async callbacks alike) and marks the items
  of a page whose items :func:`overview_drop_reason` drops; the pipeline drops them with
  :class:`~scrapy_tagratio.pipelines.OverviewPageDropped` (a ``DropItem``, so Scrapy's
  ``item_dropped`` signal and ``item_dropped_reasons_count/OverviewPageDropped`` stat see
  them) while the page's requests go out, so a crawl keeps discovering articles through
  home pages and section fronts. It strips the extraction (and error record) from the
  requests the callback yields: meta copied with ``response.follow(..., meta=response.meta)``
  would otherwise carry the parent page's :class:`~scrapy_tagratio.Extraction` into memory
  queues, JOBDIR or a scrapy-redis queue. An item whose declared class lacks the fields is
  passed on unchanged, counted, and named in one WARNING; nothing here raises into the
  callback's output.

Stats are integers (scrapy-redis's ``RedisStatsCollector`` adds them up in Redis):

* ``tagratio/pages_extracted``, ``tagratio/overview_pages``, ``tagratio/pages_ignored``,
  ``tagratio/overview_uncertain`` (pages between the overview detector's two thresholds:
  items kept, ``overview_verdict`` "uncertain" in their scores);
* ``tagratio/items_annotated``, ``tagratio/items_with_error``, ``tagratio/items_dropped``,
  ``tagratio/items_partly_annotated`` (declared item class with some of the fields: those
  are set), ``tagratio/items_unannotated`` (declared item class with none of them);
* ``tagratio/skipped/<why>``: ``non_html``, ``disabled`` (per request), ``http_<status>``
  (a status not extracted), ``head`` (a HEAD request: no body), ``follow_only`` (below),
  and the resource limits ``too_large`` and ``time_budget``;
* ``tagratio/errors/<kind>``: ``not_html`` (binary served as HTML), ``extraction``,
  ``bad_settings`` (a bad per-request override), ``bad_source`` (pipeline),
  ``worker_crashed``, ``worker_timeout``, or the exception class of a bug;
* ``tagratio/extraction_time_us`` (total) and ``tagratio/extraction_time_max_us``;
* ``tagratio/site_memory/pages_discounted`` and ``tagratio/site_memory/template_chars``:
  pages from whose content the site memory took template blocks, and their characters;
  ``tagratio/site_memory/pages_held`` (TAGRATIO_SITE_MEMORY_HOLD: :mod:`.hold`) and
  ``tagratio/site_memory/released/<why>`` (``pages``, ``time``, ``idle``, ``full``,
  ``closing``).

Under scrapy-redis's stats collector they are gathered and written at most once per
response (:mod:`scrapy_tagratio.stats`).

The loggers are under ``scrapy_tagratio``.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from scrapy.http.request import NO_CALLBACK
from scrapy.spidermiddlewares.base import BaseSpiderMiddleware
from scrapy.spiders import CrawlSpider
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from w3lib.encoding import http_content_type_encoding, resolve_encoding

from .hold import HOLD_META, wait_for_site
from .pool import SKIP_KINDS, ExtractionPool, Outcome
from .result import Extraction
from .settings import SettingsError, TagRatioSettings
from .site_memory import SiteMemory
from .startup import report_bad_settings, report_disabled
from .stats import StatsBatch, batched_stats

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "ERROR_META",
    "EXTRACTION_META",
    "SETTINGS_META",
    "Annotation",
    "CrawlState",
    "TagRatioDownloaderMiddleware",
    "TagRatioSpiderMiddleware",
    "annotate",
    "attach",
    "crawl_state",
    "enabled_settings",
    "follows_only",
    "missing_fields",
    "overview_drop_reason",
    "record_outcome",
    "stats_of",
]

logger = logging.getLogger(__name__)

#: ``response.meta`` key of the page's :class:`~scrapy_tagratio.Extraction`.
EXTRACTION_META = "tagratio"
#: ``response.meta`` key of ``{"kind": ..., "message": ...}`` when the extraction failed.
ERROR_META = "tagratio_error"
#: ``request.meta`` key of per-request ``TAGRATIO_*`` overrides (a dict).
SETTINGS_META = "tagratio_settings"


class CrawlState:
    """What the components of one crawl share: the extraction pool, the site memory, the
    items the spider middleware marked for the pipeline to drop, and the item classes
    already warned about.

    Marked items are held by ``id`` with the item itself (so the id cannot be reused
    while the mark lives) until the pipeline takes them, or until Scrapy reports that the
    item left the pipelines before ours (``item_dropped``, ``item_error``: a pipeline of
    lower priority dropped it or failed on it). An object the callback yields more than
    once (one dict filled again and yielded per row) is marked once per yield, so each
    pass through the pipeline is dropped. What is left when the spider closes never
    reached our pipeline: filtered out by a later spider middleware, or replaced by a new
    object in a pipeline before ours, which then went on undropped; the crawl counts those
    items and says so (:meth:`report_unclaimed`).
    """

    def __init__(self, pool: ExtractionPool, site_memory: SiteMemory | None) -> None:
        self.pool = pool
        #: The crawl's memory of its sites' templates (None: TAGRATIO_SITE_MEMORY off).
        self.site_memory = site_memory
        #: The item classes warned about, with the fields each warning named.
        self.warned: set[tuple[type, tuple[str, ...]]] = set()
        #: Pages whose items wait for the site memory (:mod:`.hold`).
        self.held = 0
        #: ``id(item)``: the item, the drop reason, and the yields not yet taken.
        self._drops: dict[int, tuple[Any, str, int]] = {}

    def mark_drop(self, item: Any, reason: str) -> None:
        marked = self._drops.get(id(item))
        count = marked[2] + 1 if marked is not None and marked[0] is item else 1
        self._drops[id(item)] = (item, reason, count)

    def take_drop(self, item: Any) -> str | None:
        """The reason the spider middleware marked ``item`` to be dropped, if it did (one
        mark of an object yielded more than once)."""
        marked = self._drops.pop(id(item), None)
        if marked is None or marked[0] is not item:
            return None
        if marked[2] > 1:
            self._drops[id(item)] = (item, marked[1], marked[2] - 1)
        return marked[1]

    def forget_drop(self, item: Any, **_: Any) -> None:
        """``item_dropped`` and ``item_error`` handler: the item left the pipelines, and a
        mark it still has would be held until the crawl ends."""
        self.take_drop(item)

    def report_unclaimed(self, stats: Any) -> None:
        """At the spider's close: count (``tagratio/overview_items_unclaimed``) and name
        the marked items our pipeline never took, and let them go."""
        if not self._drops:
            return
        unclaimed = sum(count for _, _, count in self._drops.values())
        stats.set_value("tagratio/overview_items_unclaimed", unclaimed)
        logger.warning(
            "%d item(s) of overview pages never reached TagRatioPipeline: a spider "
            "middleware after TagRatioSpiderMiddleware filtered them out, or an item "
            "pipeline before TagRatioPipeline returned a new object for them, which was not "
            "dropped. Give TagRatioPipeline a lower ITEM_PIPELINES priority than such a "
            "pipeline.",
            unclaimed,
        )
        self._drops.clear()


_STATES: weakref.WeakKeyDictionary[Crawler, CrawlState] = weakref.WeakKeyDictionary()


def crawl_state(crawler: Crawler, settings: TagRatioSettings) -> CrawlState:
    """The crawl's one :class:`CrawlState`; its pool is started when the spider opens
    (without workers: now) and closed (without blocking the reactor) when it closes.

    Worker processes started with the components outlived a crawl whose start failed
    after they were built (another component's ``from_crawler`` raising, a bad
    setting of ours found by a later component): no spider opened, so none closed, and
    a process that runs crawls one after another kept every failed crawl's workers."""
    state = _STATES.get(crawler)
    if state is None:
        pool = ExtractionPool(
            settings.workers,
            timeout=settings.worker_timeout,
            max_tasks_per_child=settings.worker_max_tasks,
        )
        state = _STATES[crawler] = CrawlState(pool, _new_memory(crawler, settings))
        if settings.workers:
            options = settings.options
            crawler.signals.connect(
                lambda **_: pool.start(options), signal=signals.spider_opened, weak=False
            )
        else:
            pool.start(settings.options)  # loads the models in this process: nothing to stop
        crawler.signals.connect(pool.aclose, signal=signals.spider_closed, weak=False)
        for signal in (signals.item_dropped, signals.item_error):
            crawler.signals.connect(state.forget_drop, signal=signal, weak=False)
        stats = crawler.stats
        crawler.signals.connect(
            lambda **_: state.report_unclaimed(stats), signal=signals.spider_closed, weak=False
        )
    return state


def _new_memory(crawler: Crawler, settings: TagRatioSettings) -> SiteMemory | None:
    """The crawl's site memory: None (TAGRATIO_SITE_MEMORY off), in this process, or in
    scrapy-redis's Redis (TAGRATIO_SITE_MEMORY_BACKEND = "redis")."""
    if not settings.site_memory:
        return None
    if settings.site_memory_backend == "local":
        return settings.new_site_memory()
    try:
        from .redis_memory import RedisSiteMemory

        return RedisSiteMemory.from_crawler(
            crawler, settings.site_memory_redis_key, **settings.site_memory_options
        )
    except ImportError as exc:
        error = SettingsError(
            "TAGRATIO_SITE_MEMORY_BACKEND='redis' needs scrapy-redis and the redis client "
            f"(pip install 'scrapy-tagratio[redis]'): {exc}"
        )
        report_bad_settings(error)  # one line, as for a bad value
        raise error from None


def overview_drop_reason(extraction: Extraction, settings: TagRatioSettings) -> str | None:
    """Why the items of this page are dropped, or None when they are kept: THE place that
    turns the extraction's overview verdict and TAGRATIO_OVERVIEW_ACTION into a drop (the
    pipeline drops, "ignore" also skips the page in the downloader middleware)."""
    if settings.overview_action not in ("drop", "ignore") or not extraction.is_overview:
        return None
    return (
        f"overview page (overview score {extraction.overview_score:.2f}, "
        f"TAGRATIO_OVERVIEW_ACTION={settings.overview_action!r})"
    )


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
        if extraction.template_chars:
            stats.inc_value("tagratio/site_memory/pages_discounted")
            stats.inc_value("tagratio/site_memory/template_chars", extraction.template_chars)
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


class Annotation(NamedTuple):
    """What :func:`annotate` could not set on an item."""

    #: The fields its declared class lacks.
    missing: tuple[str, ...]
    #: The fields whose value the item refused (a class that validates assignment, such
    #: as pydantic's ``validate_assignment`` or attrs validators, or a frozen one), with
    #: the error; the item keeps what it had there.
    refused: dict[str, str]


def annotate(
    item: Any,
    settings: TagRatioSettings,
    extraction: Extraction | None,
    error: dict[str, str] | None = None,
) -> Annotation:
    """Set the text and scores fields of ``item`` from ``extraction``, or record ``error``
    (text ``None``, the error inside the scores) so the item goes on.

    A declared item class gets the fields it declares and takes; the fields it lacks or
    refuses are returned (never raised: the item and the rest of the callback's output go
    on).
    """
    missing = missing_fields(type(item), settings.item_fields)
    if len(missing) == len(settings.item_fields):
        return Annotation(missing, {})
    adapter = ItemAdapter(item)
    if extraction is None:
        values: dict[str, Any] = {
            settings.text_field: None,
            settings.scores_field: {
                "algorithm": settings.algorithm.name,
                "params": settings.algorithm.params(),
                "error": dict(error or {}),
            },
            settings.html_field: None,
            settings.metadata_field or "": None,
        }
    else:
        scores = extraction.figures()
        if settings.attach_blocks:
            scores["blocks"] = extraction.to_dict(html=False)["blocks"]
        metadata = extraction.metadata.to_dict() if extraction.metadata is not None else None
        if settings.metadata and not settings.metadata_field:
            scores["metadata"] = metadata
        values = {
            settings.text_field: _formatted_text(extraction, settings.text_format),
            settings.scores_field: scores,
            settings.html_field: extraction.html,
            settings.metadata_field or "": metadata,
        }
    refused: dict[str, str] = {}
    for field in settings.item_fields:
        if field not in missing:
            try:
                adapter[field] = values[field]
            except Exception as exc:  # the item's own validation, or a frozen class
                first_line = str(exc).strip().partition("\n")[0]
                refused[field] = f"{type(exc).__name__}: {first_line}"
    return Annotation(missing, refused)


def _formatted_text(extraction: Extraction, text_format: str) -> str:
    """The main content in the TAGRATIO_TEXT_FORMAT; plain text where the algorithm marks
    no elements to build HTML or Markdown from (CETR, CCB)."""
    formatted = {"markdown": extraction.markdown, "html": extraction.html}.get(text_format)
    return formatted if formatted is not None else extraction.text


_MISSING: dict[tuple[type, tuple[str, ...]], tuple[str, ...]] = {}


def missing_fields(item_class: type, fields: tuple[str, ...]) -> tuple[str, ...]:
    """The ``fields`` a declared item class (scrapy.Item, dataclass, attrs, pydantic) does
    not declare (dicts take any key); computed once per class and fields."""
    key = (item_class, fields)
    if key not in _MISSING:
        declared = ItemAdapter.get_field_names_from_class(item_class)
        _MISSING[key] = () if declared is None else tuple(f for f in fields if f not in declared)
    return _MISSING[key]


def attach(
    state: CrawlState,
    stats: StatsBatch,
    item: Any,
    settings: TagRatioSettings,
    extraction: Extraction | None,
    error: dict[str, str] | None = None,
) -> None:
    """:func:`annotate` and count the item. An item whose class lacks or refuses some of
    the fields gets the others (``tagratio/items_partly_annotated``); one that lacks or
    refuses them all goes on unchanged (``tagratio/items_unannotated``); either way one
    WARNING per class (and set of such fields: per-request settings may name others, a
    failed page's None may be refused where its text is not) names them and the settings
    that name them."""
    missing, refused = annotate(item, settings, extraction, error)
    lacking = (*missing, *refused)
    if not lacking:
        stats.inc_value(
            "tagratio/items_annotated" if extraction is not None else "tagratio/items_with_error"
        )
        return
    partly = len(lacking) < len(settings.item_fields)
    counted = "tagratio/items_partly_annotated" if partly else "tagratio/items_unannotated"
    stats.inc_value(counted)
    item_class = type(item)
    setting_of = {
        settings.text_field: "TAGRATIO_TEXT_FIELD",
        settings.scores_field: "TAGRATIO_SCORES_FIELD",
        settings.html_field: "TAGRATIO_HTML_FIELD",
        settings.metadata_field or "": "TAGRATIO_METADATA_FIELD",
    }
    given = [field for field in settings.item_fields if field not in lacking]
    passing = f"with {', '.join(map(repr, given))} only" if given else "without any of them"
    if refused and (item_class, ("refused", *refused)) not in state.warned:
        state.warned.add((item_class, ("refused", *refused)))
        logger.warning(
            "Items of class %s.%s pass %s: they refuse the value of %s (%s). Let %s take "
            "None, text and a dict (e.g. main_text: str | None = None, tagratio: "
            "dict[str, Any] | None = None), or set %s to other fields, or to '' to leave "
            "them out. Counted in %s.",
            item_class.__module__,
            item_class.__qualname__,
            passing,
            ", ".join(map(repr, refused)),
            "; ".join(f"{field}: {why}" for field, why in refused.items()),
            "them" if len(refused) > 1 else "it",
            " / ".join(setting_of[field] for field in refused),
            counted,
        )
    if not missing or (item_class, missing) in state.warned:
        return
    state.warned.add((item_class, missing))
    partly = len(missing) < len(settings.item_fields)
    given = [field for field in settings.item_fields if field not in missing]
    logger.warning(
        "Items of class %s.%s pass %s: the class has no field %s. Declare %s (e.g. %s = "
        "scrapy.Field(), or a dataclass/attrs/pydantic field defaulting to None), or set %s "
        "to fields it has, or to '' to leave them out (the callback still finds the "
        "extraction in response.meta[%r]). Counted in %s.",
        item_class.__module__,
        item_class.__qualname__,
        f"with {', '.join(map(repr, given))} only"
        if partly
        else "without the main text and scores",
        ", ".join(map(repr, missing)),
        "them" if len(missing) > 1 else "it",
        missing[0],
        " / ".join(setting_of[field] for field in missing),
        EXTRACTION_META,
        counted,
    )


def enabled_settings(crawler: Crawler) -> TagRatioSettings:
    """The crawl's validated settings; ``NotConfigured`` (the component stays off, one INFO
    line says so) when TAGRATIO_ENABLED is False; a bad setting is logged as one ERROR
    line and stops the crawl (:mod:`.startup`). Every component's ``from_crawler`` starts
    here."""
    try:
        settings = TagRatioSettings.from_settings(crawler.settings)
    except SettingsError as error:
        report_bad_settings(error)
        raise
    if not settings.enabled:
        report_disabled(crawler)
        raise NotConfigured
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


def _content_type(response: Response) -> str | None:
    """The response's ``Content-Type`` header as text (its charset decodes the body), as
    the worker processes are sent it; with the charset of the response's own encoding
    where one was given that the header does not declare.

    A middleware before ours that fixes a site's wrong charset
    (``response.replace(encoding="cp1251")``), or a renderer that sends a browser's DOM
    on as ``HtmlResponse(url, body=html, encoding="utf-8")`` (the DOM keeps the page's
    ``<meta charset>``), decides how ``response.text`` reads the body; the header or the
    meta charset alone read it otherwise, and the main text came out as mojibake."""
    header = response.headers.get(b"Content-Type")
    content_type = header.decode("latin-1") if header else None
    # The encoding given to TextResponse (or to its replace()); None when Scrapy reads
    # it from the header, the BOM or the page, as the extraction then does.
    given = getattr(response, "_encoding", None)
    encoding = resolve_encoding(given) if isinstance(given, str) else None
    if encoding is None or encoding == http_content_type_encoding(content_type):
        return content_type
    mime = (content_type or "").partition(";")[0].strip() or "text/html"
    return f"{mime}; charset={encoding}"


def _pipeline_enabled(crawler: Crawler) -> bool:
    from .pipelines import TagRatioPipeline  # the pipeline module imports this one

    return _enabled(crawler, "ITEM_PIPELINES", TagRatioPipeline)


def _enabled(crawler: Crawler, setting: str, component: type) -> bool:
    """Whether ``component`` (or a subclass) is in the component dict ``setting``."""
    listed = build_component_list(crawler.settings.getwithbase(setting))
    return any(
        isinstance(cls, type) and issubclass(cls, component) for cls in map(load_object, listed)
    )


def follows_only(request: Request, spider: Any) -> bool:
    """The request is a :class:`~scrapy.spiders.CrawlSpider` rule's whose ``callback`` is
    None: Scrapy follows the page's links and calls no callback with it, so no item can
    get its extraction (a broad crawl's section fronts and pagination, often most of its
    pages). Read from CrawlSpider's own ``_callback`` and ``_rules`` (what its
    ``_build_request`` sets); where a Scrapy version has them otherwise, False: the page
    is extracted as any other."""
    if not isinstance(spider, CrawlSpider):
        return False
    if request.callback is None or request.callback != getattr(spider, "_callback", None):
        return False
    rules = getattr(spider, "_rules", None)
    index = request.meta.get("rule")
    if not isinstance(rules, Sequence) or not isinstance(index, int) or not 0 <= index < len(rules):
        return False
    return getattr(rules[index], "callback", True) is None


class TagRatioDownloaderMiddleware:
    """Extracts every HTML response; see the module docstring."""

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        self.crawler = crawler
        self.settings = settings
        self.stats = stats_of(crawler)
        self.state = crawl_state(crawler, settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioDownloaderMiddleware:
        settings = enabled_settings(crawler)
        if not _enabled(crawler, "SPIDER_MIDDLEWARES", TagRatioSpiderMiddleware):
            logger.warning(
                "scrapy_tagratio.middlewares.TagRatioSpiderMiddleware is not in "
                "SPIDER_MIDDLEWARES: pages are extracted, but items get no main text or "
                "scores from their page and the items of overview pages are not dropped "
                "(callbacks find the extraction in response.meta['tagratio']; ADDONS = "
                "{'scrapy_tagratio.Addon': 100} enables all three components)"
            )
        return cls(crawler, settings)

    async def process_response(
        self, request: Request, response: Response, spider: Any = None
    ) -> Response:
        meta = request.meta
        # Meta copied from a parent request (response.follow(..., meta=response.meta))
        # must not lend the parent's extraction to this page.
        for key in (EXTRACTION_META, ERROR_META, HOLD_META):
            meta.pop(key, None)
        if request.callback is NO_CALLBACK:
            # robots.txt, the media pipelines' downloads: no callback, no item sees them.
            return response
        stats = self.stats
        if follows_only(request, self.crawler.spider):
            stats.inc_value("tagratio/skipped/follow_only")
            return response
        if request.method == "HEAD":
            # No body: read as an empty page, it was recorded in the site memory, and the
            # GET of the same URL that follows read as a page captured again.
            stats.inc_value("tagratio/skipped/head")
            return response
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
        if not settings.extracts_status(response.status):
            stats.inc_value(f"tagratio/skipped/http_{response.status}")
            return response
        memory = self.state.site_memory if settings.site_memory else None
        hold = self._hold(memory, response.url, settings)
        outcome = await self.state.pool.run(
            response.body,
            url=response.url,
            content_type=_content_type(response),
            options=settings.options,
            site_memory=memory,
        )
        record_outcome(stats, outcome, response.url)
        extraction = outcome.extraction
        if extraction is None:
            meta[ERROR_META] = outcome.error_record()
            return response
        meta[EXTRACTION_META] = extraction
        if hold is not None:
            meta[HOLD_META] = hold
        if settings.overview_action == "ignore" and (
            reason := overview_drop_reason(extraction, settings)
        ):
            stats.inc_value("tagratio/pages_ignored")
            # Scrapy logs no IgnoreRequest: without this line the page vanished without a
            # word (``scrapy shell`` on a home page gave ``response`` None).
            logger.debug("Ignored %s: %s", response, reason)
            raise IgnoreRequest(f"overview page (TAGRATIO_OVERVIEW_ACTION='ignore'): {response}")
        return response

    @staticmethod
    def _hold(
        memory: SiteMemory | None, url: str, settings: TagRatioSettings
    ) -> tuple[str, int] | None:
        """``(site, pages)`` when this page is one of its site's first (it knows fewer than
        TAGRATIO_SITE_MEMORY_HOLD other pages, and is not a page recorded before): its
        items wait until the memory holds ``pages`` pages of the site."""
        if memory is None or not settings.site_memory_hold:
            return None
        site = memory.site_of(url)
        if site is None or memory.is_revisit(site, url):
            return None
        known = memory.pages_seen(site)
        return (site, settings.site_memory_hold + 1) if known < settings.site_memory_hold else None


class TagRatioSpiderMiddleware(BaseSpiderMiddleware):
    """Attaches the extraction to items and marks overview pages' items for the pipeline
    to drop; see the module docstring. The order of the callback's output is left as it
    is; requests only lose the extraction in their meta.

    Items that carry their own HTML in ``TAGRATIO_SOURCE_FIELD`` are left to the pipeline.
    """

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        super().__init__(crawler)
        self.settings = settings
        self.stats = stats_of(crawler)
        self.state = crawl_state(crawler, settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioSpiderMiddleware:
        settings = enabled_settings(crawler)
        if settings.overview_action in ("drop", "ignore") and not _pipeline_enabled(crawler):
            error = SettingsError(
                f"TAGRATIO_OVERVIEW_ACTION={settings.overview_action!r} needs "
                "scrapy_tagratio.pipelines.TagRatioPipeline in ITEM_PIPELINES to drop the "
                "items of overview pages (ADDONS = {'scrapy_tagratio.Addon': 100} adds it), "
                "or TAGRATIO_OVERVIEW_ACTION='tag'"
            )
            report_bad_settings(error)  # one line, as for a bad value
            raise error
        if not _enabled(crawler, "DOWNLOADER_MIDDLEWARES", TagRatioDownloaderMiddleware):
            logger.warning(
                "scrapy_tagratio.middlewares.TagRatioDownloaderMiddleware is not in "
                "DOWNLOADER_MIDDLEWARES: no response is extracted, and items get the main "
                "text only from their own %s in the pipeline (ADDONS = "
                "{'scrapy_tagratio.Addon': 100} enables all three components)",
                settings.source_field,
            )
        return cls(crawler, settings)

    def get_processed_request(self, request: Request, response: Response | None) -> Request:
        """The request without the parent page's extraction in its meta; the callback's
        ``response.meta`` keeps it (a re-yielded ``response.request``, whose meta *is*
        ``response.meta``, is replaced by a copy first)."""
        meta = request.meta
        if EXTRACTION_META not in meta and ERROR_META not in meta and HOLD_META not in meta:
            return request
        if response is not None and meta is response.meta:
            request = request.replace()
            meta = request.meta
        for key in (EXTRACTION_META, ERROR_META, HOLD_META):
            meta.pop(key, None)
        return request

    async def process_spider_output_async(
        self, response: Response | None, result: AsyncIterator[Any], spider: Any = None
    ) -> AsyncIterator[Any]:
        """As the base class does; for a page held at the site memory's cold start
        (:mod:`.hold`) the requests go out at once and the items wait for the memory.
        (Scrapy 2.13 runs a sync callback's output through the sync path: no hold there.)"""
        hold = response.meta.get(HOLD_META) if response is not None else None
        held = hold is not None and self.state.site_memory is not None
        items: list[Any] = []
        try:
            async for o in result:
                if held and ItemAdapter.is_item(o):
                    items.append(o)
                elif (o := self._get_processed(o, response)) is not None:
                    yield o
        except Exception:
            # The callback failed after yielding items: they go on (as without the
            # hold), then its error.
            async for item in self._released(response, hold, items):
                yield item
            raise
        async for item in self._released(response, hold, items):
            yield item

    async def _released(
        self, response: Response | None, hold: tuple[str, int] | None, items: list[Any]
    ) -> AsyncIterator[Any]:
        """The held ``items``, once the memory knows enough pages of the site."""
        if not items:
            return
        assert response is not None and hold is not None
        await self._release(response, *hold)
        for item in items:
            yield self.get_processed_item(item, response)

    async def _release(self, response: Response, site: str, pages: int) -> None:
        """Wait for the memory to know ``pages`` pages of ``site``, then read the page
        again with it: its extraction in meta is replaced (kept on an error)."""
        state, settings = self.state, _settings_for(self.settings, response.meta)
        assert state.site_memory is not None
        self.stats.inc_value("tagratio/site_memory/pages_held")
        state.held += 1
        try:
            why = await wait_for_site(
                self.crawler,
                state.site_memory,
                site,
                pages,
                settings.site_memory_hold_seconds,
                lambda: state.held,
            )
        finally:
            state.held -= 1
        self.stats.inc_value(f"tagratio/site_memory/released/{why}")
        outcome = await state.pool.run(
            response.body,
            url=response.url,
            content_type=_content_type(response),
            options=settings.options,
            site_memory=state.site_memory,
            held=True,
        )
        if outcome.extraction is not None:
            response.meta[EXTRACTION_META] = outcome.extraction

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
        attach(self.state, self.stats, item, settings, extraction, error)
        if extraction is not None and (reason := overview_drop_reason(extraction, settings)):
            self.state.mark_drop(item, reason)
        return item
