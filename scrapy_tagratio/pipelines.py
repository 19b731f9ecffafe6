"""The item pipeline: it drops the items of overview pages, and extracts from items that
carry raw HTML themselves (``TAGRATIO_SOURCE_FIELD``, default ``raw_html``): items built
from an API, a sitemap-driven fetch, an archive, or start items that never passed
through a response.

Drops go through Scrapy's own mechanism, :class:`OverviewPageDropped` (a
:class:`~scrapy.exceptions.DropItem`), so the ``item_dropped`` signal, the
``item_dropped_count`` and ``item_dropped_reasons_count/OverviewPageDropped`` stats,
log formatters and monitoring tools see them. The reason comes from
:func:`~scrapy_tagratio.middlewares.overview_drop_reason`: for response items the spider
middleware has marked them, for raw-HTML items the pipeline's own extraction decides.
Items without the source field that were not marked, and objects that are not items,
pass untouched.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from .middlewares import (
    attach,
    crawl_state,
    enabled_settings,
    overview_drop_reason,
    record_outcome,
    stats_of,
)
from .pool import Outcome
from .settings import TagRatioSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["OverviewPageDropped", "TagRatioPipeline"]

logger = logging.getLogger(__name__)


class OverviewPageDropped(DropItem):
    """The item of an overview page (TAGRATIO_OVERVIEW_ACTION "drop"), logged at DEBUG:
    counted in ``item_dropped_reasons_count/OverviewPageDropped``, and most pages of a
    news crawl are overview pages."""

    def __init__(self, message: str) -> None:
        super().__init__(message, log_level="DEBUG")


class TagRatioPipeline:
    """Drops marked items and extracts from ``item[TAGRATIO_SOURCE_FIELD]``; see the
    module docstring."""

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        self.settings = settings
        self.stats = stats_of(crawler)
        self.state = crawl_state(crawler, settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioPipeline:
        return cls(crawler, enabled_settings(crawler))

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        reason = self.state.take_drop(item) or await self._extract_source(item)
        if reason is not None:
            self.stats.inc_value("tagratio/items_dropped")
            raise OverviewPageDropped(reason)
        return item

    async def _extract_source(self, item: Any) -> str | None:
        """Extract and attach from the item's source field, if it has one and was not
        annotated yet; the drop reason of its page, if any. An object itemadapter does
        not know has no fields to read: it goes on untouched (Scrapy hands pipelines
        whatever the spider yields, and a project's later pipeline may convert it)."""
        if not ItemAdapter.is_item(item):
            return None
        settings = self.settings
        adapter = ItemAdapter(item)
        source = adapter.get(settings.source_field)
        if not source or (settings.scores_field and adapter.get(settings.scores_field)):
            return None
        url = adapter.get("url")
        url = url if isinstance(url, str) else None
        if isinstance(source, bytearray):  # a buffer the spider filled: its bytes
            source = bytes(source)
        if isinstance(source, (bytes, str)):
            outcome = await self.state.pool.run(
                source,
                url=url,
                content_type=None,
                options=settings.options,
                site_memory=self.state.site_memory if settings.site_memory else None,
            )
        else:
            outcome = Outcome(
                None,
                error_kind="bad_source",
                error=f"{settings.source_field} holds {type(source).__name__}, not str, bytes"
                " or bytearray",
            )
        record_outcome(self.stats, outcome, url)
        extraction = outcome.extraction
        if extraction is None:
            attach(self.state, self.stats, item, settings, None, outcome.error_record())
            return None
        attach(self.state, self.stats, item, settings, extraction)
        return overview_drop_reason(extraction, settings)
