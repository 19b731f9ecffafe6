"""The Scrapy add-on: ``ADDONS = {"scrapy_tagratio.Addon": 100}`` turns the plugin on.

It adds the downloader middleware, the spider middleware and the item pipeline at the
priorities below, unless the project already lists them or a subclass of them (then its
priorities stand, and its subclass replaces ours).
``TAGRATIO_*`` settings keep their defaults (see :mod:`scrapy_tagratio.settings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.utils.misc import load_object

from .middlewares import TagRatioDownloaderMiddleware, TagRatioSpiderMiddleware
from .pipelines import TagRatioPipeline
from .settings import SettingsError
from .startup import report_bad_settings

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
        # As Settings.setdefault_in_component_priority_dict, which loads every listed path:
        # one that does not load (a path of ours mistyped to switch a component off, a
        # stale None entry that Scrapy itself never loads) raised NameError through
        # Scrapy's internals.
        # A project's subclass of a component stands for it: with both, every page was
        # extracted twice (and counted twice), every item annotated twice.
        for name, (component, priority) in PRIORITIES.items():
            components = settings.getdict(name)
            listed = _loaded(name, components)
            if not any(isinstance(cls, type) and issubclass(cls, component) for cls in listed):
                components[component] = priority
                settings.set(name, components, settings.getpriority(name) or 0)


def _loaded(name: str, components: dict[Any, Any]) -> list[Any]:
    """The classes listed in the component dict ``name``: a path of another package that
    does not load is left to Scrapy; one of this package's is a SettingsError that names
    the components' paths."""
    loaded = []
    for key in components:
        try:
            loaded.append(load_object(key))
        except (ImportError, NameError, ValueError) as exc:
            if not (isinstance(key, str) and key.split(".")[0] == __package__):
                continue
            paths = [f"{cls.__module__}.{cls.__qualname__}" for cls, _ in PRIORITIES.values()]
            error = SettingsError(
                f"{name} lists {key!r}, which does not load ({exc}); the components are "
                + ", ".join(paths)
            )
            report_bad_settings(error)
            raise error from None
    return loaded
