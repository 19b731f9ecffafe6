"""A page's host and registrable domain, as the site memory keys its sites and the metadata
names them.

A URL that urllib cannot parse (an unbalanced ``[`` in the host) has no host: the callers
go on without one rather than fail the page.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any
from urllib.parse import urlsplit

__all__ = ["domain_and_suffix", "host_of"]

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


def domain_and_suffix(host: str) -> tuple[str, str]:
    """The label of ``host``'s registrable domain and its public suffix (``news.example.co.uk``:
    ``("example", "co.uk")``), either ``""`` where the public suffix list has none."""
    parts = _domain_extractor()(host)
    return parts.domain, parts.suffix


@cache
def _domain_extractor() -> Any:
    import tldextract  # a dependency of Scrapy; its bundled suffix list, no download

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)
