"""The one entry point: :func:`extract`."""

from __future__ import annotations

import math
import time
from datetime import datetime
from typing import Any

from .algorithms import DEFAULT_ALGORITHM, get_algorithm
from .algorithms.base import Algorithm, bad_parameter
from .document import Document
from .formats import markdown_of
from .headline import without_leading_headline
from .metadata import read_metadata
from .overview import OverviewDetector
from .result import Extraction
from .site_memory import (
    SiteMemory,
    discount_template,
    headline_evidence,
    page_fingerprints,
)

__all__ = ["extract"]

_DEFAULT_DETECTOR = OverviewDetector()


#: Per algorithm class, its instance with the default parameters (:func:`_with_defaults`).
_DEFAULT_RUNNERS: dict[type[Algorithm], Algorithm] = {}


def _with_defaults(algorithm: type[Algorithm]) -> Algorithm:
    """``algorithm`` with its default parameters, built (and validated) once: instances
    are frozen, so every call without parameters shares it."""
    runner = _DEFAULT_RUNNERS.get(algorithm)
    if runner is None:
        runner = _DEFAULT_RUNNERS[algorithm] = algorithm.with_params()
    return runner


def extract(
    html: str | bytes | Any,
    *,
    algorithm: str | Algorithm | None = None,
    url: str | None = None,
    content_type: str | None = None,
    max_bytes: int | None = None,
    time_budget: float | None = None,
    overview: OverviewDetector | None = None,
    with_html: bool = True,
    with_markdown: bool = False,
    metadata: bool = True,
    now: datetime | None = None,
    site_memory: SiteMemory | None = None,
    held: bool = False,
    **params: Any,
) -> Extraction:
    """Find the main content of one page.

    Args:
        html: the page as ``str``, as ``bytes`` (decoded like Scrapy: HTTP charset given
            by ``content_type``, BOM, meta charset, detection), or an lxml element or tree
            (``response.selector.root``), which is serialised, read like the others and
            not modified.
        algorithm: a name from :data:`ALGORITHMS` (None: the project's default,
            ``DEFAULT_ALGORITHM``) or a configured algorithm instance.
        url: the page's URL (used by the overview detector and reported back).
        content_type: the HTTP ``Content-Type`` header, for its charset (``str``, or the
            ``bytes`` of Scrapy's ``response.headers``).
        max_bytes: refuse pages larger than this (:class:`ExtractionError`).
        time_budget: seconds; an analysis running past it stops with
            :class:`ExtractionError` instead of hanging on.
        overview: the overview-page detector to apply (default settings if None).
        with_html: build the cleaned HTML of the content (DOM algorithms); False saves
            its cost when only the text is wanted.
        with_markdown: build the Markdown of the content (headings, lists, tables,
            emphasis; DOM algorithms, else the plain text).
        metadata: read the page's metadata (:class:`~scrapy_tagratio.metadata.Metadata`:
            headline, authors, dates, language, ...); False leaves ``metadata`` None and
            ``title`` the page's ``og:title``, ``<title>`` or first ``<h1>``.
        now: the crawl time: no publication date after it is taken (default: now).
        site_memory: the crawl's memory of the sites' templates: blocks of this page seen
            on other pages of its site (``url``'s) are left out of the content, a page
            linking to many headlines of the site's articles is an overview page, and the
            page's blocks (and an article's headline) are recorded for the pages to come.
            None: the page alone.
        held: the page was recorded in ``site_memory`` when it first arrived and is read
            again now that more pages of its site are known (the crawl's cold-start hold):
            its own sighting is left out and it is not recorded a second time.
        **params: the algorithm's parameters (see ``python -m scrapy_tagratio algorithms``).

    Raises:
        ExtractionError: input that cannot be analysed (binary data, too large, out of
            time) or an unknown algorithm or bad parameter, or an argument of the wrong
            type or value (kind ``bad_parameter``).
    """
    content_type = _check_arguments(
        url, content_type, max_bytes, time_budget, now, overview, site_memory
    )
    if isinstance(algorithm, Algorithm):
        if params:
            raise bad_parameter("give parameters either in the algorithm instance or as keywords")
        runner = algorithm
    else:
        # Only None means the default: "" is a name, and no algorithm has it.
        chosen = get_algorithm(DEFAULT_ALGORITHM if algorithm is None else algorithm)
        runner = chosen.with_params(**params) if params else _with_defaults(chosen)
    deadline = time.monotonic() + time_budget if time_budget is not None else None
    document = Document.from_input(
        html, url=url, content_type=content_type, max_bytes=max_bytes, deadline=deadline
    )
    labelling = runner.run(document)
    document.check_deadline("the extraction")
    # The detector judges the page as the algorithm saw it, whether or not earlier pages
    # of the site were seen; the site memory adds only the evidence of known headlines.
    detector = overview or _DEFAULT_DETECTOR
    verdict = detector.detect(document, labelling)
    template_chars = 0
    site = site_memory.site_of(url) if site_memory is not None else None
    if site_memory is not None and site is not None and url is not None:
        # A page held at the cold start or fetched again is read with its recorded
        # sighting left out, and not recorded twice (SiteMemory.template_for_page).
        blocks, fingerprints = page_fingerprints(document)
        template, record_page = site_memory.template_for_page(
            site, url, document, blocks, fingerprints, content=labelling.content_nodes, held=held
        )
        if detector.site_evidence:
            verdict = headline_evidence(site_memory, site, document, verdict, template)
        labelling, template_chars = discount_template(document, labelling, template)
        if record_page:
            site_memory.record(site, fingerprints, url)
    document.check_deadline("the overview detection")
    content = labelling.content_nodes
    found = (
        read_metadata(
            document.page,
            url=url,
            text=labelling.text,
            content=document.elements_of(content) if content is not None else None,
            now=now,
        )
        if metadata
        else None
    )
    document.check_deadline("the metadata")
    title = found.headline if found is not None else document.title
    # The text outputs leave out the headline, which ``title`` holds (headline.py).
    output = without_leading_headline(document, labelling, title)
    shown = output.content_nodes
    if site_memory is not None and site is not None and not held and verdict.verdict == "content":
        site_memory.record_headline(site, title)
    total = labelling.total_chars
    return Extraction(
        text=output.text,
        html=document.html_of(shown) if with_html and shown is not None else None,
        markdown=(markdown_of(document, shown) if shown is not None else output.text)
        if with_markdown
        else None,
        title=title,
        metadata=found,
        algorithm=runner.name,
        params=runner.params(),
        threshold=labelling.threshold,
        content_share=labelling.content_chars / total if total else 0.0,
        net_text_length=labelling.content_chars - labelling.link_chars,
        link_density=labelling.link_chars / labelling.content_chars
        if labelling.content_chars
        else 0.0,
        is_overview=verdict.is_overview,
        overview_score=verdict.score,
        overview_verdict=verdict.verdict,
        overview_reasons=verdict.reasons,
        url=url,
        template_chars=template_chars,
        block_scores=labelling.block_scores,
    )


def _check_arguments(
    url: Any,
    content_type: Any,
    max_bytes: Any,
    time_budget: Any,
    now: Any,
    overview: Any,
    site_memory: Any,
) -> str | None:
    """Check :func:`extract`'s keyword arguments (an ``ExtractionError`` of kind
    ``bad_parameter`` naming the first bad one); the content type as text."""
    if isinstance(content_type, bytes):  # Scrapy's response.headers hold bytes
        content_type = content_type.decode("latin-1")
    for name, value, kind, what in (
        ("url", url, str, "a str"),
        ("content_type", content_type, str, "a str or bytes"),
        ("now", now, datetime, "a datetime"),
        ("overview", overview, OverviewDetector, "an OverviewDetector"),
        ("site_memory", site_memory, SiteMemory, "a SiteMemory"),
    ):
        if value is not None and not isinstance(value, kind):
            raise bad_parameter(f"{name} must be {what} or None; got {value!r}")
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0
    ):
        raise bad_parameter(f"max_bytes must be an integer >= 0 or None; got {max_bytes!r}")
    if time_budget is not None and (
        isinstance(time_budget, bool)
        or not isinstance(time_budget, (int, float))
        or not math.isfinite(time_budget)
        or time_budget < 0
    ):
        raise bad_parameter(
            f"time_budget must be a number of seconds >= 0 or None; got {time_budget!r}"
        )
    return content_type
