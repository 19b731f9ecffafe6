"""Overview-page detection: is this page a home page, section front, tag or archive
listing (it lists or teases other pages), or a page with one main text?

The baseline is TextSweeper's test (Lang et al. 2012, end of section 3): a page whose
extracted content has a *net text length* (text minus link text) below a minimum is an
overview page. It depends on the extraction and calls every short article an overview
page. This module measures evidence on the page itself, from the node table, the
``<head>`` and the URL, without a second parse, and in any language:

* **teasers** (:func:`teaser_evidence`, on :mod:`~scrapy_tagratio.structure`): repeated
  sibling items whose headline links lead to distinct pages, short (a story with its
  comments is no teaser); comment threads (author, time, reply link and a prose body) are
  told apart and are no teasers. Measured: teasers with a summary, headings holding a
  teaser link, the teasers' share of the page's text and of the extraction's main
  content (a listing's main content is teasers; an article's is its body, whatever rail
  sits beside it);
* **lists** (:func:`_lists`): many repeated items that each hold a link, longer than a
  menu's and shorter than a page section: products, forum topics, search results, whose
  names are no headlines. Measured: the largest list, the lists' share of the page's text,
  and the share of teasers or lists against them and the long paragraphs outside them
  (the default extraction leaves teaser lists out of an article's text, so on a listing it
  keeps a fragment: evidence read off the page itself does not depend on it);
* **prose**: text cut into layout blocks and blocks into runs at every block that is
  mostly link text: long paragraphs in the longest run, its share of the page's text,
  the largest set of long paragraphs under one parent, long paragraphs in the main
  content and outside every teaser, list and comment; whether the ``<title>`` repeats the
  first ``<h1>``. A listing has many items, not few characters: a short article has
  little prose but no teasers either;
* **the page's declarations**: ``og:type``, JSON-LD ``@type`` and microdata
  ``itemtype`` (``NewsArticle``... against ``CollectionPage``, ``ItemList``...), a
  published-time meta, ``rel=next``/``prev``;
* **URL shape**, when known: a home page, a listing (``/tag/``, ``/page/2``...), an
  article (a slug, a long number, a date path); where no URL is given, the shape of the
  address the page declares for itself (``<link rel="canonical">``, ``og:url``).

Lengths are counted in characters times a *text scale*: about 3 on Chinese, Japanese and
Korean pages, 1 elsewhere; no word list of any language is needed except the URL's
listing words, which are the vocabulary of web software.

The combined score is a logistic model (:class:`OverviewModel`) read from the model file
``models/overview.json``, which ``python -m benchmarks.overview --fit`` writes: fitted on
every page of the development pool (``benchmarks/protocol.py``), its probability
calibrated there, its two thresholds chosen on held-out folds so that few content pages
are dropped. A page at or above the drop threshold is ``"overview"`` (its items are
dropped), between the two ``"uncertain"`` (kept and tagged), else ``"content"``. The
declarations and the URL weigh as learned but are never decisive alone: a page is only
dropped if its structure alone argues for a listing (scores at least the share of
overview pages among the training pages), and never without teasers or lists
(:meth:`OverviewModel.judge`).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache, cached_property
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import parse_qsl, urljoin, urlsplit

import numpy as np

from .algorithms.base import (
    HEADING_TAGS,
    Labelling,
    bad_parameter,
    check_choice,
    check_range,
)
from .document import Document, NodeTable
from .errors import ExtractionError
from .structure import Structures, find_structures

__all__ = [
    "FEATURES",
    "MODEL_FILE",
    "MODEL_FORMAT",
    "SIGNALS",
    "OverviewDetector",
    "OverviewModel",
    "OverviewVerdict",
    "PageEvidence",
    "Verdict",
    "declared_url",
    "page_evidence",
    "shipped_model",
    "text_scale",
    "url_shape",
]

#: Code points of the dense scripts (Han, kana, Hangul) that set the text scale: the
#: starts and ends of their ranges, and whether the range from each bound on is dense.
_DENSE_BOUNDS = np.array([0x3040, 0x3100, 0x3400, 0xA000, 0xAC00, 0xD7B0, 0xF900, 0xFB00])
_DENSE_RANGES = np.array([False, True, False, True, False, True, False, True, False])
#: Any character of the dense scripts (the ranges above).
_DENSE_CHAR = re.compile(
    "[" + "".join(f"{chr(a)}-{chr(b - 1)}" for a, b in _DENSE_BOUNDS.reshape(-1, 2).tolist()) + "]"
)
#: Characters of the extraction's text the text scale samples.
_SCALE_SAMPLE = 1500
#: A link this long (scaled characters) reads like a headline.
HEADLINE_LINK = 20
#: A layout block of this much non-link text (scaled characters) is a long paragraph.
LONG_PARAGRAPH = 100
#: A teaser holds at most this much text (scaled characters).
TEASER_MAX_LENGTH = 1500
#: A teaser with at least this much non-link text (scaled characters) has a summary.
TEASER_SUMMARY = 40
#: A list item (any repeated item holding a link, headline or not) holds at least this
#: much text on average (scaled characters): a product, a forum topic, a search result;
#: a menu's items are shorter.
LIST_ITEM_CHARS = 20
#: ... and at most this much (a product, a topic, a result: no story and its comments,
#: no page section wrapping lists).
LIST_ITEM_MAX_CHARS = 400
#: A list has at least this many items (a listing has many items, not few characters).
LIST_ITEMS = 5

#: schema.org types that declare one article (JSON-LD ``@type``, microdata ``itemtype``).
ARTICLE_TYPES = frozenset(
    {
        "Article", "NewsArticle", "BlogPosting", "ReportageNewsArticle",
        "AnalysisNewsArticle", "OpinionNewsArticle", "BackgroundNewsArticle",
        "ReviewNewsArticle", "LiveBlogPosting", "TechArticle", "ScholarlyArticle",
        "SocialMediaPosting", "Report", "SatiricalArticle", "DiscussionForumPosting",
    }
)  # fmt: skip
#: schema.org types that declare one item that is not an article (a product, an event...).
ITEM_TYPES = frozenset(
    {
        "Product", "Recipe", "Event", "Movie", "QAPage", "JobPosting", "Course", "Book",
        "Review", "MusicRecording", "VideoObject",
    }
)  # fmt: skip
#: schema.org types that declare a listing.
LISTING_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage", "Blog"})
_JSONLD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([^"]+)"')
#: ``<meta>`` names and properties that carry a publication time (articles have one).
_PUBLISHED_META = frozenset({"article:published_time", "datepublished", "pubdate", "date"})

#: Path segments and query keys of listings in the URL conventions of web software.
_LISTING_SEGMENTS = frozenset(
    {
        "tag", "tags", "category", "categories", "cat", "section", "sections", "topic",
        "topics", "archive", "archives", "author", "authors", "search", "paged",
        "list", "forum", "forums", "board", "date", "events", "collection", "shop",
    }
)  # fmt: skip
#: No search keys (``s``, ``q``, ``query``, ``search``): other software names other things
#: so (a passage lookup's ``?search=John+3``, a forum's session id ``?s=<hash>``), and a
#: search results page shows its many results, which its structure says. On the pool's
#: given and declared addresses, such a key marked one content page and two overview pages,
#: one of them a session id, the other also a ``/search/`` path.
_LISTING_KEYS = frozenset({"cat", "tag", "category"})
_PAGE_KEYS = frozenset({"page", "paged", "p", "pg", "start", "offset"})
_PAGINATED_PATH = re.compile(r"(?:^|/)page/\d+|/p\d+$|index\d+\.html?$|list_\d+_\d+", re.I)
_INDEX_FILE = re.compile(r"(?:index|default|home)\.\w+", re.I)
_LONG_NUMBER = re.compile(r"\d{5,}")
_DATE_PATH = re.compile(r"/(?:19|20)\d\d/\d{1,2}/")
_SLUG_SEPARATOR = re.compile(r"[-_]")


def text_scale(document: Document, text: str) -> float:
    """Characters per Latin-letter equivalent: 1 + 2 x the share of Han, kana and Hangul
    characters among the non-blank characters of the page's title and the first
    :data:`_SCALE_SAMPLE` characters of ``text`` (the extraction's text, already read: the
    page's main language; a sample, not a census)."""
    sample = (document.title or "") + text[:_SCALE_SAMPLE]
    if sample.isascii() or _DENSE_CHAR.search(sample) is None:  # most pages: no dense script
        return 1.0
    code = np.frombuffer(sample.encode("utf-32-le"), dtype=np.uint32)
    visible = int(np.count_nonzero(code > 32))
    if not visible:
        return 1.0
    dense = int(np.count_nonzero(_DENSE_RANGES[np.searchsorted(_DENSE_BOUNDS, code, "right")]))
    return 1.0 + 2.0 * dense / visible


def url_shape(url: str | None) -> str:
    """``"home"``, ``"listing"``, ``"article"`` or ``""`` (unknown or undecided).

    Pagination (``/page/2``, ``?page=3``) makes a listing; otherwise an article's marks
    (a long number, a slug of four words or more, a date path) win over the listing words
    of the path and query: web software files articles under its listing paths
    (``/forum/discussion/<slug>-338679``, ``/archive/2020/08/<slug>``, ``?cat=1&id=13066``).
    """
    if not url:
        return ""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. an unbalanced "[" in the host: no shape, no crash
        return ""
    segments = [s for s in parts.path.split("/") if s]
    query = parse_qsl(parts.query) if parts.query else []
    if not query and (not segments or (len(segments) == 1 and _INDEX_FILE.fullmatch(segments[0]))):
        return "home"
    if _PAGINATED_PATH.search(parts.path) is not None or any(
        key.lower() in _PAGE_KEYS and value.isdigit() and len(value) <= 3 for key, value in query
    ):
        return "listing"
    slug = max((len(_SLUG_SEPARATOR.findall(s)) for s in segments), default=0)
    if (
        _LONG_NUMBER.search(parts.path + parts.query)
        or slug >= 3
        or (_DATE_PATH.search(parts.path) and len(segments) >= 4)
    ):
        return "article"
    if any(s.lower() in _LISTING_SEGMENTS for s in segments) or any(
        key.lower() in _LISTING_KEYS for key, _ in query
    ):
        return "listing"
    return ""


def declared_url(document: Document) -> str | None:
    """The address the page declares for itself: its ``<link rel="canonical">``, else its
    ``og:url`` (as read by the reader; no second parse).

    Resolved against the page's URL when there is one; without one, only an absolute
    address counts. Anything that does not resolve to an http(s) address with a host
    (``javascript:``, ``mailto:``, a placeholder, a relative path with no base) is ignored:
    ``None``."""
    found = document.page.canonical_link or next(
        (
            content
            for meta_property, name, _, content in document.page.attributes.metas
            if content and (meta_property or name or "").strip().lower() == "og:url"
        ),
        None,
    )
    if not found:
        return None
    found = found.strip()
    try:
        address = urljoin(document.url, found) if document.url else found
        parts = urlsplit(address)
    except ValueError:  # e.g. an unbalanced "[" in the host
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return address


@dataclass(frozen=True)
class TeaserEvidence:
    """The repeated structures of a page and what the extraction kept of them (see
    :func:`teaser_evidence`)."""

    teasers: int
    summary_teasers: int
    largest_teaser_group: int
    heading_links: int
    teaser_share: float
    comment_items: int
    comment_share: float
    main_teaser_share: float
    main_prose: int
    free_prose: float
    list_items: int
    list_share: float


@dataclass(frozen=True)
class PageEvidence(TeaserEvidence):
    """What the page says about itself, before any weighting (lengths in scaled
    characters, see :func:`text_scale`): its teasers and the rest."""

    net_text_length: int  # of the extraction: content minus link characters
    text_scale: float
    link_share: float
    prose_paragraphs: int
    prose_share: float
    prose_block: float
    title_repeats_heading: bool
    declares_article: bool
    declares_item: bool
    declares_listing: bool
    og_website: bool
    published_time: bool
    paginated: bool
    url_shape: str  # of the URL given with the page
    #: Of the address the page declares (:func:`declared_url`), read only where no URL is
    #: given: under the protocol, a declared address beside a given URL lost articles.
    declared_shape: str
    total_length: float  # all text of the page, scaled characters
    main_link_share: float  # link characters of the extraction's content, as a share
    headline_share: float  # text of headline-long links, as a share of the page's text

    @property
    def list_over_prose(self) -> float:
        """The text of the page's teasers or lists (whichever holds more) against that
        and the long paragraphs outside them: near 1 on a listing, low on an article
        whatever rail sits beside its body."""
        listed = max(self.teaser_share, self.list_share) * self.total_length
        return listed / (listed + self.free_prose) if listed else 0.0

    @property
    def headlines_over_prose(self) -> float:
        """The text of the page's headline links against that and the long paragraphs
        outside teasers and lists: a listing is mostly headlines, an article mostly prose
        (read off the links themselves, whatever repeated structure holds them)."""
        listed = self.headline_share * self.total_length
        return listed / (listed + self.free_prose) if listed else 0.0

    @property
    def url_source(self) -> str:
        """Where the URL shape features come from, for the reasons."""
        return "URL" if self.url_shape or not self.declared_shape else "declared URL"

    @property
    def prose_block_share(self) -> float:
        """The largest block of long paragraphs as a share of the page's text."""
        return min(1.0, self.prose_block / self.total_length) if self.total_length else 0.0

    def features(self, min_net_text_length: int) -> dict[str, float]:
        """The model's inputs: counts on a log scale, flags as 0/1, the net text length
        as ``log((net + 1) / min_net_text_length)`` clipped to [-5, 5]."""
        log1p = math.log1p
        net = max(self.net_text_length, 0) + 1
        shape = self.url_shape or self.declared_shape
        return {
            "net_text": min(5.0, max(-5.0, math.log(net / min_net_text_length))),
            "link_share": self.link_share,
            "teasers": log1p(self.teasers),
            "summary_teasers": log1p(self.summary_teasers),
            "largest_teaser_group": log1p(self.largest_teaser_group),
            "heading_links": log1p(self.heading_links),
            "teaser_share": self.teaser_share,
            "comment_items": log1p(self.comment_items),
            "comment_share": self.comment_share,
            "main_teaser_share": self.main_teaser_share,
            "main_link_share": self.main_link_share,
            "main_prose": log1p(self.main_prose),
            "free_prose": log1p(self.free_prose / LONG_PARAGRAPH),
            "list_items": log1p(self.list_items),
            "list_share": self.list_share,
            "list_over_prose": self.list_over_prose,
            "prose_block_share": self.prose_block_share,
            "prose_paragraphs": log1p(self.prose_paragraphs),
            "prose_share": self.prose_share,
            "prose_block": log1p(self.prose_block / LONG_PARAGRAPH),
            "title_repeats_heading": float(self.title_repeats_heading),
            "declares_article": float(self.declares_article),
            "declares_item": float(self.declares_item),
            "declares_listing": float(self.declares_listing),
            "og_website": float(self.og_website),
            "published_time": float(self.published_time),
            "paginated": float(self.paginated),
            "url_home": float(shape == "home"),
            "url_listing": float(shape == "listing"),
            "url_article": float(shape == "article"),
            "headline_share": self.headline_share,
            "headlines_over_prose": self.headlines_over_prose,
            "declared_without_headline": float(
                self.declares_article and not self.title_repeats_heading
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        data = dict(zip(_EVIDENCE_FIELDS, _EVIDENCE_VALUES(self), strict=True))
        data["prose_block_share"] = self.prose_block_share
        data["list_over_prose"] = self.list_over_prose
        data["headlines_over_prose"] = self.headlines_over_prose
        return data


#: Field names of the evidence and their getters (``dataclasses.fields`` and ``asdict``
#: cost more per page than the measurements they copy).
_TEASER_FIELDS = tuple(f.name for f in fields(TeaserEvidence))
_EVIDENCE_FIELDS = tuple(f.name for f in fields(PageEvidence))
_TEASER_VALUES = attrgetter(*_TEASER_FIELDS)
_EVIDENCE_VALUES = attrgetter(*_EVIDENCE_FIELDS)


#: Names of :meth:`PageEvidence.features`, in order.
FEATURES = (
    "net_text", "link_share", "teasers", "summary_teasers", "largest_teaser_group",
    "heading_links", "teaser_share", "comment_items", "comment_share",
    "main_teaser_share", "main_link_share", "main_prose", "free_prose", "list_items",
    "list_share", "list_over_prose", "prose_block_share",
    "prose_paragraphs", "prose_share", "prose_block",
    "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
    "og_website", "published_time", "paginated", "url_home", "url_listing", "url_article",
    "headline_share", "headlines_over_prose", "declared_without_headline",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class _PageArrays:
    """What several measurements of one page read, computed once (lengths scaled):
    the layout blocks holding text, their unlinked and link text, which of them are long
    paragraphs, and the indices of the page's links, headings and ``<h1>`` elements."""

    scale: float
    blocks: np.ndarray  # indices of the blocks holding text, document order
    text: np.ndarray  # per block of ``blocks``: its unlinked text
    links: np.ndarray  # per block of ``blocks``: its link text
    long_text: np.ndarray  # per block of ``blocks``: it is a long paragraph
    link_nodes: np.ndarray  # indices of the ``<a>`` elements, document order
    links_before: np.ndarray  # per node and one past the end: ``<a>`` elements before it
    headings: np.ndarray  # indices of the ``<h1>``-``<h6>`` elements, document order
    h1: np.ndarray  # indices of the ``<h1>`` elements, document order
    end: np.ndarray  # the node table's subtree ends

    def holds_link(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of ``nodes``: its subtree ``[i, end[i])`` holds an ``<a>``."""
        before = self.links_before
        return before[self.end[nodes]] > before[nodes]

    @classmethod
    def of(cls, nodes: NodeTable, scale: float) -> _PageArrays:
        blocks = (nodes.block_chars > 0).nonzero()[0]
        link_chars = nodes.block_link_chars[blocks]
        text = (nodes.block_chars[blocks] - link_chars) * scale
        # One look-up per node names the tags read here: 1 a link, 2 a heading, 3 an h1.
        codes, names = nodes.tag_codes
        kinds = np.zeros(len(names), dtype=np.int8)
        for name, kind in _TAG_KINDS.items():
            if name in names:
                kinds[names[name]] = kind
        kind = kinds[codes]
        h1 = (kind == 3).nonzero()[0]
        is_link = kind == 1
        links_before = np.zeros(len(kind) + 1, dtype=np.int64)
        np.cumsum(is_link, out=links_before[1:])
        return cls(
            scale=scale,
            blocks=blocks,
            text=text,
            links=link_chars * scale,
            long_text=text >= LONG_PARAGRAPH,
            link_nodes=is_link.nonzero()[0],
            links_before=links_before,
            headings=(kind >= 2).nonzero()[0],
            h1=h1,
            end=nodes.end,
        )


#: The tags :class:`_PageArrays` finds: ``<a>`` (1), the headings (2), ``<h1>`` (3).
_TAG_KINDS = {"a": 1, **{tag: 2 for tag in HEADING_TAGS - {"h1"}}, "h1": 3}


def teaser_evidence(
    document: Document, labelling: Labelling, page: _PageArrays, own_headline: int = -1
) -> TeaserEvidence:
    """Teaser lists and comment threads (:func:`~scrapy_tagratio.structure.find_structures`:
    repeated siblings whose headlines lead to distinct pages, against repeated siblings
    with an author/time/reply part and a prose body) and where they sit.

    A listing has many teasers and they hold much of its text; an article's teasers are a
    rail beside its body, and its comments are no teasers at all. The extraction's main
    content says which is the page's main block: a listing's main content is teasers, an
    article's is long paragraphs outside any teaser (``main_teaser_share``, ``main_prose``).
    The item that holds the page's own headline (``own_headline``, the node of the first
    ``<h1>`` when the ``<title>`` repeats it) is the page's story, no teaser and no list
    item. Per-item tests run on the items' indices and per-block tests on the blocks'
    (``page``); the teasers' and comments' nodes are those find_structures marked, the
    lists' are read off their items' subtree ranges (:class:`_Ranges`).
    """
    nodes = document.nodes
    scale = page.scale
    found = find_structures(document)
    items = (found.group >= 0).nonzero()[0]
    # A teaser is short: an item holding a whole story and its comments is no teaser.
    candidates = items[found.teaser_items[items]]
    teaser_items = _off_path(
        nodes, candidates[nodes.chars[candidates] * scale <= TEASER_MAX_LENGTH], own_headline
    )
    # Most pages keep every teaser item: their nodes are those find_structures marked.
    teaser = (
        found.teaser
        if teaser_items.size == candidates.size
        else nodes.with_descendants(_mask(nodes, teaser_items))
    )
    own_chars = nodes.own_chars
    total = float(nodes.chars[0]) if len(nodes) else 0.0
    groups = found.group[teaser_items]
    unlinked = (nodes.chars[teaser_items] - nodes.link_chars[teaser_items]) * scale
    headings = page.headings[teaser[page.headings]]
    content = labelling.content_nodes
    if content is None:  # an algorithm without a node mask: the whole page
        content = np.ones(len(nodes), dtype=bool)
    content_chars = float(np.dot(own_chars, content))
    list_items, listed = _lists(nodes, found, page, items, own_headline)
    # Per block with text: the content's unlinked text in it, and whether it lies outside
    # every teaser, list and comment.
    blocks = page.blocks
    main_text = np.bincount(
        nodes.block, weights=(own_chars - nodes.own_link_chars) * content, minlength=len(nodes)
    )[blocks]
    commented = found.comment_items[items]
    has_comments = np.count_nonzero(commented) > 0  # most pages have none: their figures are 0
    inside = teaser[blocks] | listed.covers(blocks)
    outside = ~(inside | found.comment[blocks]) if has_comments else ~inside
    long_text = page.long_text & outside
    return TeaserEvidence(
        teasers=int(teaser_items.size),
        summary_teasers=int(np.count_nonzero(unlinked >= TEASER_SUMMARY)),
        largest_teaser_group=int(np.maximum.reduce(np.bincount(groups))) if groups.size else 0,
        heading_links=int(np.count_nonzero(page.holds_link(headings))),
        teaser_share=float(np.dot(own_chars, teaser)) / total if total else 0.0,
        comment_items=int(np.count_nonzero(commented)),
        comment_share=float(np.dot(own_chars, found.comment)) / total
        if total and has_comments
        else 0.0,
        main_teaser_share=float(np.dot(own_chars, content & teaser)) / content_chars
        if content_chars
        else 0.0,
        main_prose=int(np.count_nonzero((main_text * scale >= LONG_PARAGRAPH) & outside)),
        free_prose=float(np.add.reduce(page.text[long_text])),
        list_items=list_items,
        list_share=listed.chars(nodes) / total if total else 0.0,
    )


@dataclass(frozen=True, eq=False)
class _Ranges:
    """The nodes inside some of a page's items (the list items of :func:`_lists`): the
    outermost items' subtree ranges ``[starts[k], ends[k])``, disjoint and in document
    order (subtrees are nested or disjoint, so an item inside another adds nothing)."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, nodes: NodeTable, items: np.ndarray) -> _Ranges:
        """The ranges of ``items`` (node indices in document order)."""
        if items.size > 1:
            reach = np.maximum.accumulate(nodes.end[items])
            items = items[np.concatenate(([True], items[1:] >= reach[:-1]))]
        return cls(items, nodes.end[items])

    def covers(self, points: np.ndarray) -> np.ndarray:
        """Per node of ``points``: it lies inside one of the ranges."""
        if not self.starts.size:
            return np.zeros(points.shape, dtype=bool)
        k = np.searchsorted(self.starts, points, "right") - 1
        return (k >= 0) & (self.ends[np.maximum(k, 0)] > points)

    def chars(self, nodes: NodeTable) -> float:
        """The text inside the ranges (their subtree totals)."""
        return float(np.add.reduce(nodes.chars[self.starts]))


def _mask(nodes: NodeTable, items: np.ndarray) -> np.ndarray:
    """A boolean per node, True at ``items``."""
    mask = np.zeros(len(nodes), dtype=bool)
    mask[items] = True
    return mask


def _off_path(nodes: NodeTable, items: np.ndarray, node: int) -> np.ndarray:
    """``items`` less ``node`` and its ancestors (all of them when ``node`` is -1, no
    node)."""
    if node < 0:
        return items
    return items[(items > node) | (nodes.end[items] <= node)]


def _lists(
    nodes: NodeTable,
    found: Structures,
    page: _PageArrays,
    items: np.ndarray,
    own_headline: int = -1,
) -> tuple[int, _Ranges]:
    """The size of the largest list and the ranges of its nodes: groups of at least
    :data:`LIST_ITEMS` repeated siblings (``items``, every item of ``found``) that nearly
    all hold a link, no comment thread, whose items hold :data:`LIST_ITEM_CHARS` to
    :data:`LIST_ITEM_MAX_CHARS` on average. Products, forum topics and search results are
    such items without a headline-long link (what teasers need); a menu's items are
    shorter, a page's sections longer. The items on the path to the page's own headline
    (``own_headline``) are no list items."""
    number = found.group[items]
    size = np.bincount(number).astype(np.float64)
    if not size.size or np.maximum.reduce(size) < LIST_ITEMS:
        return 0, _Ranges.of(nodes, items[:0])
    linked = page.holds_link(items)
    with_link = np.bincount(number, weights=linked, minlength=size.size)
    chars = np.bincount(number, weights=nodes.chars[items], minlength=size.size) * page.scale
    is_list = (size >= LIST_ITEMS) & (with_link >= 0.8 * size)
    commented = found.comment_items[items]
    if np.count_nonzero(commented):
        is_list &= np.bincount(number, weights=commented, minlength=size.size) == 0
    is_list &= (chars >= LIST_ITEM_CHARS * size) & (chars <= LIST_ITEM_MAX_CHARS * size)
    if not np.count_nonzero(is_list):
        return 0, _Ranges.of(nodes, items[:0])
    inside = items[is_list[number]]
    inside = _off_path(nodes, inside, own_headline)
    return int(np.maximum.reduce(size[is_list])), _Ranges.of(nodes, inside)


def _prose(nodes: NodeTable, page: _PageArrays) -> tuple[int, float, float]:
    """Long paragraphs in the longest run, its share of the page's text, and the
    largest set of long paragraphs under one parent (scaled characters)."""
    block_text, block_links = page.text, page.links
    breaks = block_links > block_text
    run = np.cumsum(breaks)
    run_text = np.bincount(run, weights=np.where(breaks, 0.0, block_text))
    run_long = np.bincount(run, weights=~breaks & page.long_text)
    total = float(np.add.reduce(block_text) + np.add.reduce(block_links))
    if not run_text.size or total <= 0:
        return 0, 0.0, 0.0
    best = int(run_text.argmax())
    # A long paragraph's text counts for its parent and for itself (a block may hold
    # long paragraphs and text of its own).
    long_blocks = page.blocks[page.long_text]
    long_text = page.text[page.long_text]
    parents = nodes.parent[long_blocks]
    has_parent = parents >= 0
    under = np.bincount(
        np.concatenate((parents[has_parent], long_blocks)),
        weights=np.concatenate((long_text[has_parent], long_text)),
    )
    block = float(np.maximum.reduce(under, initial=0.0))
    return int(run_long[best]), float(run_text[best]) / total, block


def _page_signals(document: Document) -> tuple[bool, bool, bool, bool, bool, bool]:
    """declares article / item / listing, og:type website, published time, rel=next/prev.

    From the attributes of ``meta``, ``script``, ``link`` and ``a`` elements and the
    microdata types, as the page was read (:class:`~scrapy_tagratio.reader.PageEvents`).
    An article or item type repeated in the microdata, where ``og:type`` and JSON-LD
    declare no such thing, declares a list of them (a category page's products, a
    front's stories), not one."""
    page = document.page
    attributes = page.attributes
    declared: set[str] = set()
    for script in attributes.json_ld:
        declared.update(_JSONLD_TYPE.findall(page.own_text(script)[:20000]))
    og_type = ""
    published = False
    for meta_property, name, itemprop, content in attributes.metas:
        key = (meta_property or name or itemprop or "").lower()
        if key == "og:type" and not og_type:
            og_type = (content or "").strip().lower()
        published = published or key in _PUBLISHED_META
    paginated = bool(page.with_rel("next") or page.with_rel("prev"))
    article = bool(declared & ARTICLE_TYPES) or og_type == "article"
    item = bool(declared & ITEM_TYPES) or og_type.split(".")[0] in ("product", "video", "book")
    listing = bool(declared & LISTING_TYPES)
    if attributes.itemtypes:
        # Each distinct itemtype is named once (a listing repeats one type many times).
        microdata: Counter[str] = Counter()
        for itemtype, count in Counter(attributes.itemtypes).items():
            microdata[itemtype.strip().rstrip("/").rsplit("/", 1)[-1]] += count
        repeated = {name for name, count in microdata.items() if count >= 2}
        articles = not article and bool(repeated & ARTICLE_TYPES)
        items = not item and bool(repeated & ITEM_TYPES)
        article = article or (bool(microdata.keys() & ARTICLE_TYPES) and not articles)
        item = item or (bool(microdata.keys() & ITEM_TYPES) and not items)
        listing = listing or bool(microdata.keys() & LISTING_TYPES) or articles or items
    return article, item, listing, og_type == "website", published, paginated


def _headline_share(nodes: NodeTable, page: _PageArrays) -> float:
    """The text of the page's headline-long links (at least :data:`HEADLINE_LINK` scaled
    characters, so about 7 Chinese characters) as a share of the page's text: a listing
    links its items through their headlines, an article links a few in a rail."""
    total = float(nodes.chars[0]) if len(nodes) else 0.0
    chars = nodes.chars[page.link_nodes]
    return (
        float(np.add.reduce(chars[chars * page.scale >= HEADLINE_LINK])) / total if total else 0.0
    )


def _own_headline(document: Document, page: _PageArrays) -> int:
    """The node of the page's own headline: the first ``<h1>`` that is headline-long and
    that the ``<title>`` contains (-1 where there is none; a site's logo is often an
    ``<h1>`` too)."""
    if not page.h1.size:
        return -1
    title = document.html_title.lower()
    # Only a headline-long h1 no longer than the title can count (reading a text scans
    # the page's events).
    chars = document.nodes.chars[page.h1]
    scale = page.scale
    for node in page.h1[(chars <= len(title)) & (chars * scale >= HEADLINE_LINK)].tolist():
        heading = document.raw_text(node).lower()
        if len(heading) * scale >= HEADLINE_LINK and heading in title:
            return node
    return -1


def page_evidence(document: Document, labelling: Labelling) -> PageEvidence:
    """All the evidence of the module docstring for one page (vectorised over the node
    table; one XPath over the tree for the page's own signals)."""
    nodes = document.nodes
    scale = text_scale(document, labelling.text)
    total = int(nodes.chars[0]) if len(nodes) else 0
    page = _PageArrays.of(nodes, scale)
    own_headline = _own_headline(document, page)
    teasers = teaser_evidence(document, labelling, page, own_headline)
    paragraphs, share, block = _prose(nodes, page) if total else (0, 0.0, 0.0)
    article, item, listing, website, published, paginated = _page_signals(document)
    return PageEvidence(
        net_text_length=labelling.content_chars - labelling.link_chars,
        text_scale=scale,
        link_share=int(nodes.link_chars[0]) / total if total else 0.0,
        **dict(zip(_TEASER_FIELDS, _TEASER_VALUES(teasers), strict=True)),
        prose_paragraphs=paragraphs,
        prose_share=share,
        prose_block=block,
        title_repeats_heading=own_headline >= 0,
        declares_article=article,
        declares_item=item,
        declares_listing=listing,
        og_website=website,
        published_time=published,
        paginated=paginated,
        url_shape=url_shape(document.url),
        declared_shape="" if document.url else url_shape(declared_url(document)),
        total_length=total * scale,
        main_link_share=labelling.link_chars / labelling.content_chars
        if labelling.content_chars
        else 0.0,
        headline_share=_headline_share(nodes, page),
    )


#: Features that are flags (0/1): absent is their neutral value.
FLAGS = frozenset(
    {
        "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
        "og_website", "published_time", "paginated", "url_home", "url_listing", "url_article",
        "declared_without_headline",
    }
)  # fmt: skip
#: The page's declarations and its URL: evidence, never decisive alone (see
#: :meth:`OverviewModel.judge`).
SIGNALS = frozenset(
    {
        "declares_article", "declares_item", "declares_listing", "og_website",
        "published_time", "paginated", "url_home", "url_listing", "url_article",
        "declared_without_headline",
    }
)  # fmt: skip
#: The shipped model, written by ``python -m benchmarks.overview --fit``.
MODEL_FILE = Path(__file__).parent / "models" / "overview.json"
#: Version of the model file's layout (a file of another version is refused).
MODEL_FORMAT = 1


@dataclass(frozen=True, eq=False)
class OverviewModel:
    """A logistic model over named :class:`PageEvidence` features and its two thresholds.

    ``score = sigmoid(intercept + sum(weights * (x - means) / scales))``, a probability
    calibrated on the training pages; ``threshold`` (drop) and ``uncertain_threshold``
    were chosen on the validation protocol (``benchmarks/overview.py``);
    ``structure_threshold`` is what the page's structure alone must score for the page to
    be dropped (see :meth:`judge`). ``metadata`` carries the training fingerprint and the
    validation figures, for people.
    """

    features: tuple[str, ...]
    means: np.ndarray
    scales: np.ndarray
    weights: np.ndarray
    intercept: float
    threshold: float
    uncertain_threshold: float
    structure_threshold: float
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.features) - set(FEATURES))
        if unknown:
            raise ExtractionError(f"the overview model uses unknown features {unknown}")
        if not (len(self.features) == len(self.means) == len(self.scales) == len(self.weights)):
            raise ExtractionError("the overview model's arrays do not match its feature names")
        if not 0.0 <= self.uncertain_threshold <= self.threshold <= 1.0:
            raise ExtractionError(
                f"the overview model's thresholds must satisfy 0 <= uncertain "
                f"({self.uncertain_threshold}) <= drop ({self.threshold}) <= 1"
            )
        if not 0.0 <= self.structure_threshold <= 1.0:
            raise ExtractionError(
                f"the overview model's structure threshold ({self.structure_threshold}) "
                "must lie in [0, 1]"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OverviewModel:
        if data.get("format") != MODEL_FORMAT:
            raise ExtractionError(
                f"overview model format {data.get('format')!r}; this version reads {MODEL_FORMAT}"
            )
        return cls(
            features=tuple(data["features"]),
            means=np.asarray(data["means"], dtype=np.float64),
            scales=np.asarray(data["scales"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            uncertain_threshold=float(data["uncertain_threshold"]),
            # Files written before the structure threshold existed gated on the uncertain one.
            structure_threshold=float(data.get("structure_threshold", data["uncertain_threshold"])),
            metadata=dict(data.get("metadata", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "features": list(self.features),
            "means": self.means.tolist(),
            "scales": self.scales.tolist(),
            "weights": self.weights.tolist(),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "uncertain_threshold": self.uncertain_threshold,
            "structure_threshold": self.structure_threshold,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> OverviewModel:
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))

    @cached_property
    def _slopes(self) -> np.ndarray:
        """Each feature's move of the logit per unit."""
        return self.weights / self.scales

    @cached_property
    def _base(self) -> float:
        """The logit of the reference page (:attr:`_reference`)."""
        return self.intercept + float(((self._reference - self.means) * self._slopes).sum())

    @cached_property
    def _reference(self) -> np.ndarray:
        # Reasons explain a score from a reference page, average in every measured quantity
        # and without any flag: a verdict names what a page has, not what it lacks.
        return np.where([name in FLAGS for name in self.features], 0.0, self.means)

    @cached_property
    def _pick(self) -> Callable[[Mapping[str, float]], tuple[float, ...]]:
        """The model's features, in its order, from :meth:`PageEvidence.features`."""
        pick = itemgetter(*self.features)
        return pick if len(self.features) > 1 else lambda values: (pick(values),)

    def vector(self, evidence: PageEvidence, min_net_text_length: int) -> np.ndarray:
        return np.array(self._pick(evidence.features(min_net_text_length)))

    def contributions(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The logit of the reference page and each feature's move away from it (their
        sum is the logit of ``x``; ``x`` may be one row or a matrix of rows)."""
        return self._base, (x - self._reference) * self._slopes

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The calibrated probability that each row of ``x`` is an overview page."""
        logit = self.intercept + ((x - self.means) / self.scales) @ self.weights
        return 1.0 / (1.0 + np.exp(-logit))

    @cached_property
    def _listed(self) -> np.ndarray:
        """Positions of the features that say the page holds teasers or lists."""
        return np.array(
            [i for i, name in enumerate(self.features) if name in ("teaser_share", "list_share")],
            dtype=np.intp,
        )

    @cached_property
    def _structural(self) -> np.ndarray:
        """1.0 for the features of the page's structure, 0.0 for its declarations and URL
        (:data:`SIGNALS`)."""
        return np.array([name not in SIGNALS for name in self.features], dtype=np.float64)

    def judge(
        self, x: np.ndarray, drop: float | None = None, uncertain: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``x``: the probability and the verdict code (2 overview, 1 uncertain,
        0 content) at the thresholds given (the model's by default)."""
        return self.decide(x, *self.contributions(x), drop, uncertain)

    def decide(
        self,
        x: np.ndarray,
        base: float,
        contributions: np.ndarray,
        drop: float | None = None,
        uncertain: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`judge` from the rows' :meth:`contributions` (``base``, ``contributions``);
        ``x`` may be one row (then the score and code are 0-d arrays) or a matrix.

        The page's declarations and URL (:data:`SIGNALS`) are evidence, never decisive
        alone: a page is called overview only if its structure alone (those features at
        their neutral value, absent: their contributions left out) scores at least
        ``structure_threshold`` (or the drop threshold, if that is lower), the share of
        overview pages among the training pages. The structure must itself make a
        listing more likely than a page taken at random; the declarations and the URL can
        only tip such a page over the drop threshold. And a listing has many items, not
        few characters: a page without any teaser or list structure (``teaser_share`` and
        ``list_share`` 0) is never called overview, however little prose it has. A page
        over the drop threshold that fails either test is uncertain.
        """
        drop = self.threshold if drop is None else drop
        uncertain = min(self.uncertain_threshold, drop) if uncertain is None else uncertain
        score = 1.0 / (1.0 + np.exp(-(base + contributions.sum(axis=-1))))
        code = np.asarray(score >= uncertain, dtype=np.int8)
        listing = score >= drop
        if not listing.any():  # most pages: no structure test to run
            return score, code
        listing &= self.structure_probability(base, contributions) >= min(
            self.structure_threshold, drop
        )
        if self._listed.size:
            listing &= self.has_structure(x)
        code[listing] = 2
        return score, code

    def structure_probability(self, base: float, contributions: np.ndarray) -> np.ndarray:
        """The probability from the page's structure alone, its declarations and URL
        (:data:`SIGNALS`) at their neutral value, from the rows' :meth:`contributions`."""
        return 1.0 / (1.0 + np.exp(-(base + contributions @ self._structural)))

    def has_structure(self, x: np.ndarray) -> np.ndarray:
        """Per row of ``x``: the page holds teasers or lists (``teaser_share`` or
        ``list_share`` above 0; True for all when the model reads neither)."""
        if not self._listed.size:
            return np.ones(x.shape[:-1], dtype=bool)
        return np.logical_or.reduce(x[..., self._listed] > 0, axis=-1)


@cache
def shipped_model() -> OverviewModel:
    """The model file that ships with the package (read once)."""
    return OverviewModel.load()


#: How many reasons a verdict gives (the largest contributions to its score).
REASONS = 4
#: How each feature reads in a verdict's reasons.
_REASONS: Mapping[str, str] = {
    "net_text": "net text length {net_text_length}",
    "link_share": "link share {link_share:.2f}",
    "teasers": "{teasers} teaser blocks",
    "summary_teasers": "{summary_teasers} teasers with a summary",
    "largest_teaser_group": "largest teaser group {largest_teaser_group}",
    "heading_links": "{heading_links} headings with a link",
    "prose_paragraphs": "{prose_paragraphs} long paragraphs in one run",
    "prose_share": "longest prose run holds {prose_share:.0%} of the text",
    "prose_block": "largest block of long paragraphs {prose_block:.0f} chars",
    "teaser_share": "teasers hold {teaser_share:.0%} of the text",
    "comment_items": "{comment_items} comments",
    "comment_share": "comments hold {comment_share:.0%} of the text",
    "main_teaser_share": "teasers hold {main_teaser_share:.0%} of the main content",
    "main_link_share": "links hold {main_link_share:.0%} of the main content",
    "main_prose": "{main_prose} long paragraphs in the main content",
    "free_prose": "{free_prose:.0f} chars of long paragraphs outside teasers, lists, comments",
    "list_items": "a list of {list_items} linked items",
    "list_share": "lists of linked items hold {list_share:.0%} of the text",
    "list_over_prose": "teasers or lists hold {list_over_prose:.0%} of the text beside the prose",
    "prose_block_share": "largest block of long paragraphs: {prose_block_share:.0%} of the text",
    "title_repeats_heading": "the title repeats the h1",
    "declares_article": "declares an article (og:type, schema.org)",
    "declares_item": "declares a single item (og:type, schema.org)",
    "declares_listing": "declares a listing (schema.org)",
    "og_website": "og:type website",
    "published_time": "has a published-time meta",
    "paginated": "has rel=next/prev pagination",
    "url_home": "the {url_source} is a home page",
    "url_listing": "the {url_source} is a listing's",
    "url_article": "the {url_source} is an article's",
    "headline_share": "headline links hold {headline_share:.0%} of the text",
    "declared_without_headline": "declares an article but its title repeats no h1",
    "headlines_over_prose": "headline links hold {headlines_over_prose:.0%} of the text "
    "beside the prose",
}


#: The three verdicts: drop the page's items, keep them tagged, keep them.
Verdict = Literal["overview", "uncertain", "content"]
#: The verdicts by code (0 content, 1 uncertain, 2 overview).
VERDICTS: tuple[Verdict, Verdict, Verdict] = ("content", "uncertain", "overview")


@dataclass(frozen=True)
class OverviewVerdict:
    """The detector's answer: the verdict, a calibrated probability that the page is an
    overview page, and what moved it towards the verdict, strongest first.

    ``verdict`` is ``"overview"`` at or above the detector's threshold (a spider's items
    are dropped), ``"uncertain"`` at or above its uncertain threshold (items kept and
    tagged), else ``"content"``.
    """

    is_overview: bool
    score: float
    reasons: tuple[str, ...]
    verdict: Verdict = "content"


@dataclass(frozen=True)
class OverviewDetector:
    """Decides whether a page is an overview page.

    ``evidence="combined"`` (default) scores the page with :class:`OverviewModel` (the
    shipped model file unless ``model`` is given); ``evidence="net-text"`` is
    TextSweeper's test alone: overview when the extraction's net text length is below
    ``min_net_text_length`` (its score, ``1 / (1 + ((net + 1) / min_net_text_length)^2)``,
    crosses 0.5 there). ``threshold`` and ``uncertain_threshold`` default to the model's
    (0.5 for both with ``"net-text"``).
    """

    #: Net text length (content minus link characters of the extraction) that TextSweeper's
    #: test requires of an article; in the combined model, the pivot of that evidence.
    min_net_text_length: int = 500
    #: Scores at or above this are overview pages (None: the model's).
    threshold: float | None = None
    #: Scores at or above this and below ``threshold`` are uncertain (None: the model's,
    #: lowered to ``threshold`` when that is given lower).
    uncertain_threshold: float | None = None
    #: ``"combined"`` or ``"net-text"``.
    evidence: str = "combined"
    #: The combined model (None: the shipped model file).
    model: OverviewModel | None = None
    #: Whether the site memory's evidence (links to headlines of pages already crawled
    #: from the site, :mod:`.site_memory`) may turn a verdict into "overview".
    site_evidence: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_range("min_net_text_length", self.min_net_text_length, 1, integer=True)
        for name in ("threshold", "uncertain_threshold"):
            if getattr(self, name) is not None:
                check_range(name, getattr(self, name), 0.0, 1.0)
        check_choice("evidence", self.evidence, ("combined", "net-text"))
        drop, uncertain = self.thresholds
        if self.uncertain_threshold is not None and uncertain > drop:
            raise bad_parameter(
                f"parameter 'uncertain_threshold' ({uncertain}) must not exceed "
                f"'threshold' ({drop})"
            )

    @property
    def thresholds(self) -> tuple[float, float]:
        """(drop threshold, uncertain threshold) in effect."""
        if self.evidence == "net-text":
            default_drop, default_uncertain = 0.5, 0.5
        else:
            model = self.model or shipped_model()
            default_drop, default_uncertain = model.threshold, model.uncertain_threshold
        drop = default_drop if self.threshold is None else self.threshold
        if self.uncertain_threshold is not None:
            return drop, self.uncertain_threshold
        return drop, min(default_uncertain, drop)

    def _verdict(self, score: float, reasons: tuple[str, ...]) -> OverviewVerdict:
        drop, uncertain = self.thresholds
        code = 2 if score >= drop else 1 if score >= uncertain else 0
        return OverviewVerdict(code == 2, score, reasons, VERDICTS[code])

    def detect(self, document: Document, labelling: Labelling) -> OverviewVerdict:
        """The verdict for one page, given the labelling of whichever algorithm ran.

        A page without any visible text (empty body, frameset, a script-only application
        shell) is no evidence of a listing: it is not called an overview page, so the
        items a spider yields for it are kept.
        """
        if labelling.total_chars == 0:
            return OverviewVerdict(False, 0.0, ("the page has no visible text",))
        if self.evidence == "net-text":
            net = labelling.content_chars - labelling.link_chars
            score = 1.0 / (1.0 + ((max(net, 0) + 1) / self.min_net_text_length) ** 2)
            return self._verdict(
                score, (f"net text length {net} (minimum {self.min_net_text_length})",)
            )
        model = self.model or shipped_model()
        evidence = page_evidence(document, labelling)
        x = model.vector(evidence, self.min_net_text_length)
        base, contributions = model.contributions(x)
        probability, code = model.decide(x, base, contributions, *self.thresholds)  # one row
        verdict = VERDICTS[int(code)]
        reasons = explain(model, evidence, contributions, verdict)
        return OverviewVerdict(verdict == "overview", float(probability), reasons, verdict)


def explain(
    model: OverviewModel, evidence: PageEvidence, contributions: np.ndarray, verdict: Verdict
) -> tuple[str, ...]:
    """What moved the score towards ``verdict`` (towards overview for "overview" and
    "uncertain", towards article for "content"): at most :data:`REASONS` features, the
    largest contribution first."""
    towards = -1.0 if verdict == "content" else 1.0
    order = np.argsort(-towards * contributions, kind="stable")[:REASONS].tolist()
    parts = contributions.tolist()
    details = _Fields(evidence)
    return tuple(
        f"{_REASONS[model.features[i]].format_map(details)} "
        f"({'overview' if parts[i] > 0 else 'article'} {parts[i]:+.2f})"
        for i in order
        if towards * parts[i] > 0
    )


@dataclass(frozen=True)
class _Fields:
    """The evidence's fields and properties by name, read only for the reasons given
    (``str.format_map``; :meth:`PageEvidence.to_dict` copies them all)."""

    evidence: PageEvidence

    def __getitem__(self, name: str) -> Any:
        return getattr(self.evidence, name)
