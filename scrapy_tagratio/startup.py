"""How the plugin reports its start-up to the user: one ERROR line for a bad setting, one
INFO line when it is switched off.

A component that raises in ``from_crawler`` fails the crawl's bootstrap: ``scrapy crawl``
exits with status 1 (``bootstrap_failed``) and the script's ``crawl()`` Deferred or task
fails with the :class:`~scrapy_tagratio.settings.SettingsError`. Scrapy also lets asyncio
("Task exception was never retrieved") or Twisted ("Unhandled error in Deferred") print
that exception with its traceback through the Scrapy internals, dozens of lines that bury
the message; the traceback says nothing the message does not, so a logging filter on
those two loggers drops their records of it, and the plugin's own line remains.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from .settings import SettingsError

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["report_bad_settings", "report_disabled"]

logger = logging.getLogger(__name__)

_DISABLED: weakref.WeakSet[Crawler] = weakref.WeakSet()


def report_bad_settings(error: SettingsError) -> None:
    """Log ``error`` as one line and keep the loggers that would print it again with a
    traceback from doing so."""
    logger.error("Bad scrapy-tagratio setting, the crawl does not start: %s", error)
    for name in ("asyncio", "twisted"):
        target = logging.getLogger(name)
        if not any(isinstance(f, _DropReported) for f in target.filters):
            target.addFilter(_DropReported())


def report_disabled(crawler: Crawler) -> None:
    """One INFO line per crawl when TAGRATIO_ENABLED is False (each component asks)."""
    if crawler not in _DISABLED:
        _DISABLED.add(crawler)
        logger.info("scrapy-tagratio is switched off (TAGRATIO_ENABLED=False)")


class _DropReported(logging.Filter):
    """Drops asyncio's and Twisted's reports of a SettingsError (already logged)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, SettingsError):
            return False
        return f"{SettingsError.__module__}.{SettingsError.__qualname__}" not in str(record.msg)
