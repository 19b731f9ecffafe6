"""A page's host, as the site memory keys its sites and the metadata names them.

A URL that urllib cannot parse (an unbalanced ``[`` in the host) has no host: the callers
go on without one rather than fail the page.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["host_of"]

_WWW = re.compile(r"^www\d*\.")


def host_of(url: str | None) -> str | None:
    """The host of ``url`` (lower-cased) without ``www.`` (or ``www2.``); None for a URL
    without a host or one that does not parse."""
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return _WWW.sub("", host) if host else None
