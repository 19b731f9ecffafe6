"""The Scrapy add-on: ``ADDONS = {"scrapy_tagratio.Addon": 100}`` turns the plugin on.

It adds the downloader middleware, the spider middleware and the item pipeline at the
priorities below, unless the project already lists them (then its priorities stand).
``TAGRATIO_*`` settings keep their defaults (see :mod:`scrapy_tagratio.settings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .middlewares import TagRatioDownloaderMiddleware, TagRatioSpiderMiddleware
from .pipelines import TagRatioPipeline

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = ["PRIORITIES", "Addon"]

#: Component priorities. The downloader middleware's ``process_response`` runs after
#: decompression (HttpCompression, 590), redirects (600) and retries (550), so it extracts
#: only final, decoded responses. The spider middleware sits next to the spider, so other
#: spider middlewares see annotated items; the pipeline runs before the project's own, so
#: these never see the overview items it drops.
PRIORITIES = {
    "DOWNLOADER_MIDDLEWARES": (TagRatioDownloaderMiddleware, 540),
    "SPIDER_MIDDLEWARES": (TagRatioSpiderMiddleware, 950),
    "ITEM_PIPELINES": (TagRatioPipeline, 100),
}


class Addon:
    """Enables the downloader middleware, the spider middleware and the pipeline."""

    def update_settings(self, settings: Settings) -> None:
        for name, (component, priority) in PRIORITIES.items():
            settings.setdefault_in_component_priority_dict(name, component, priority)
