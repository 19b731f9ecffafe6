"""The library's one exception type."""

from __future__ import annotations

__all__ = ["ExtractionError"]


class ExtractionError(ValueError):
    """Raised when a page cannot be analysed at all.

    Examples: bytes that are not HTML (an image served as ``text/html``), a page larger
    than the configured byte limit, an analysis that exceeded its time budget, or an
    invalid algorithm name or parameter. A page that parses but has no text is *not* an
    error: it gives an empty :class:`~scrapy_tagratio.Extraction`.
    """
