"""Item pipeline for items that carry raw HTML themselves (``TAGRATIO_SOURCE_FIELD``,
default ``raw_html``): items built from an API, a sitemap-driven fetch, an archive, or
start items that never passed through a response.

It extracts (in the reactor thread or the worker pool), attaches the main text and scores
as the spider middleware does, and raises :class:`~scrapy.exceptions.DropItem` for an
overview page when the overview action is ``"drop"`` or ``"ignore"``. Items already
annotated by the spider middleware, and items without the source field, pass untouched.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem

from .middlewares import annotate, enabled_settings, record_outcome, shared_pool, stats_of
from .pool import Outcome
from .settings import TagRatioSettings

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["TagRatioPipeline"]

logger = logging.getLogger(__name__)


class TagRatioPipeline:
    """Extracts from ``item[TAGRATIO_SOURCE_FIELD]``; see the module docstring."""

    def __init__(self, crawler: Crawler, settings: TagRatioSettings) -> None:
        self.settings = settings
        self.stats = stats_of(crawler)
        self.pool = shared_pool(crawler, settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TagRatioPipeline:
        return cls(crawler, enabled_settings(crawler))

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        settings = self.settings
        adapter = ItemAdapter(item)
        source = adapter.get(settings.source_field)
        if not source or adapter.get(settings.scores_field) is not None:
            return item
        url = adapter.get("url")
        url = url if isinstance(url, str) else None
        if isinstance(source, (bytes, str)):
            outcome = await self.pool.run(
                source, url=url, content_type=None, options=settings.options
            )
        else:
            outcome = Outcome(
                None,
                error_kind="bad_source",
                error=f"{settings.source_field} holds {type(source).__name__}, not str or bytes",
            )
        record_outcome(self.stats, outcome, url)
        extraction = outcome.extraction
        if (
            extraction is not None
            and extraction.is_overview
            and settings.overview_action in ("drop", "ignore")
        ):
            self.stats.inc_value("tagratio/items_dropped")
            raise DropItem(f"overview page (TAGRATIO_OVERVIEW_ACTION={settings.overview_action!r})")
        annotate(item, settings, extraction, None if extraction else outcome.error_record())
        self.stats.inc_value(
            "tagratio/items_annotated" if extraction else "tagratio/items_with_error"
        )
        return item
