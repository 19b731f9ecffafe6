"""The library's one exception type."""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["ErrorKind", "ExtractionError"]

#: Why a page could not be analysed (the ``tagratio/errors/<kind>`` and
#: ``tagratio/skipped/<kind>`` stats of the Scrapy layer).
ErrorKind = Literal["not_html", "too_large", "time_budget", "bad_parameter", "extraction"]


class ExtractionError(ValueError):
    """Raised when a page cannot be analysed at all.

    ``kind`` says why: ``not_html`` (bytes that are not HTML, such as an image served as
    ``text/html``), ``too_large`` (above ``max_bytes``), ``time_budget`` (the analysis
    ran past its budget), ``bad_parameter`` (an unknown algorithm, an unknown or invalid
    parameter or setting) or ``extraction`` (anything else). A page that parses but has
    no text is *not* an error: it gives an empty :class:`~scrapy_tagratio.Extraction`.
    """

    def __init__(self, message: str, *, kind: ErrorKind = "extraction") -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind

    def __reduce__(self) -> tuple[Any, ...]:
        # keep ``kind`` when the error is pickled (worker processes, scrapy-redis)
        return (_rebuild, (type(self), str(self), self.kind))


def _rebuild(cls: type[ExtractionError], message: str, kind: ErrorKind) -> ExtractionError:
    return cls(message, kind=kind)
