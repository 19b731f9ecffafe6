"""The evidence the overview detector (:mod:`.overview`) weighs: what a page shows of
being a listing (it lists or teases other pages) or a page with one main text, measured on
the page itself, from the node table, the ``<head>`` and the URL, without a second parse,
and in any language (:func:`page_evidence`, as :class:`PageEvidence`).

TextSweeper's test (Lang et al. 2012, end of section 3) reads one thing, the *net text
length* (text minus link text) of the extracted content, and calls every short article an
overview page. Measured here:

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
  the largest set of long paragraphs under one parent and the share of the text after it
  (an article's body is followed by its comments and rails; a home page's one paragraph
  of prose, an "about" or a lead story, comes last or near it), long paragraphs in the main
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
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import numpy as np

from .algorithms.base import HEADING_TAGS, Labelling
from .document import Document, NodeTable
from .structure import Structures, find_structures

__all__ = [
    "FEATURES",
    "FLAGS",
    "SIGNALS",
    "PageEvidence",
    "TeaserEvidence",
    "declared_url",
    "page_evidence",
    "teaser_evidence",
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
#: A grid of products has at least this many items with a picture and a price (a product
#: page's rail of related products shows fewer) ...
PRICED_ITEMS = 6
#: ... and they are at least this share of their group of repeated siblings.
PRICED_SHARE = 0.6
#: An item holding more characters than this (unscaled) is no product card: its text is
#: not read.
PRICED_ITEM_MAX_CHARS = 2000
#: Unicode's currency signs (general category Sc: $, €, £, ¥, ₹, ₽...).
_CURRENCY_SIGNS = re.escape(
    "".join(chr(c) for c in range(0x20, 0x10000) if unicodedata.category(chr(c)) == "Sc")
)
#: A price, in any language: an amount beside a currency sign (``$12``, ``12 €``), or an
#: amount with two decimals and nothing numeric after them (``1 199,00``, ``24.99``;
#: a currency written in letters, ``zł`` or ``CHF``, needs no word list then), where a
#: date (``12.05.2020``) or a longer number does not match.
_PRICE = re.compile(
    rf"[{_CURRENCY_SIGNS}]\s?\d|\d\s?[{_CURRENCY_SIGNS}]"
    r"|(?<![\d.,])\d{1,3}(?:[ \u00a0.,']\d{3})*[.,]\d\d(?!\d|[.,]\d)"
)

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
#: Query keys that say how a page is shown or how the visitor came to it, not which page
#: it is: the language or script variant, and the tracking of campaigns and clicks (and
#: any ``utm_`` key). They are left out of the address before its shape is read, so
#: ``/?variant=zh-hk`` is a home page and ``?utm_campaign=20240101`` no article's number.
_PRESENTATION_KEYS = frozenset(
    {"lang", "language", "hl", "locale", "variant", "fbclid", "gclid", "mc_cid", "mc_eid"}
)
_PAGINATED_PATH = re.compile(r"(?:^|/)page/\d+|/p\d+$|index\d+\.html?$|list_\d+_\d+", re.I)
_INDEX_FILE = re.compile(r"(?:index|default|home)\.\w+", re.I)
#: A script's or page's file extension: a listing word names a listing as a script's file
#: too (vBulletin's ``forum.php``, ``archive.html``).
_SCRIPT_FILE = re.compile(r"\.(?:php\d?|html?|aspx?|jsp|cgi|pl)$", re.I)
_LONG_NUMBER = re.compile(r"\d{5,}")
_DATE_PATH = re.compile(r"/(?:19|20)\d\d/\d{1,2}/")


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
    of the path (also as a script's name, ``forum.php``) and query: web software files
    articles under its listing paths (``/forum/discussion/<slug>-338679``,
    ``/archive/2020/08/<slug>``, ``?cat=1&id=13066``). The query keys of language and
    tracking (:data:`_PRESENTATION_KEYS`) are not read: ``/?variant=zh-hk`` is a home page.
    """
    if not url:
        return ""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. an unbalanced "[" in the host: no shape, no crash
        return ""
    segments = [s for s in parts.path.split("/") if s]
    kept = (
        "&".join(part for part in parts.query.split("&") if not _presentation(part))
        if parts.query
        else ""
    )
    query = parse_qsl(kept) if kept else []
    if not query and (not segments or (len(segments) == 1 and _INDEX_FILE.fullmatch(segments[0]))):
        return "home"
    if _PAGINATED_PATH.search(parts.path) is not None or any(
        key.lower() in _PAGE_KEYS and value.isdigit() and len(value) <= 3 for key, value in query
    ):
        return "listing"
    slug = max((s.count("-") + s.count("_") for s in segments), default=0)  # slug words - 1
    if (
        _LONG_NUMBER.search(parts.path + kept)
        or slug >= 3
        or (_DATE_PATH.search(parts.path) and len(segments) >= 4)
    ):
        return "article"
    if any(_SCRIPT_FILE.sub("", s).lower() in _LISTING_SEGMENTS for s in segments) or any(
        key.lower() in _LISTING_KEYS for key, _ in query
    ):
        return "listing"
    return ""


def _presentation(parameter: str) -> bool:
    """The query parameter (``key=value``) is one of :data:`_PRESENTATION_KEYS` or a
    ``utm_`` key."""
    key = parameter.partition("=")[0].lower()
    return key in _PRESENTATION_KEYS or key.startswith("utm_")


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
    #: Products: repeated items with a picture and a price (:func:`_priced`).
    priced_items: int
    priced_share: float


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
    prose_after: float  # share of the page's text after the largest block's parent
    title_repeats_heading: bool
    declares_article: bool
    declares_item: bool
    declares_listing: bool
    og_website: bool
    published_time: bool
    #: ``rel=next``/``prev`` to a listing's or home page's address (a listing's pages).
    paginated: bool
    #: ``rel=next``/``prev`` to articles' addresses only (a post linking its neighbours).
    adjacent_articles: bool
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
            "priced_share": self.priced_share,
            "prose_block_share": self.prose_block_share,
            "prose_paragraphs": log1p(self.prose_paragraphs),
            "prose_share": self.prose_share,
            "prose_block": log1p(self.prose_block / LONG_PARAGRAPH),
            "prose_after": self.prose_after,
            "title_repeats_heading": float(self.title_repeats_heading),
            "declares_article": float(self.declares_article),
            "declares_item": float(self.declares_item),
            "declares_listing": float(self.declares_listing),
            "og_website": float(self.og_website),
            "published_time": float(self.published_time),
            "paginated": float(self.paginated),
            "adjacent_articles": float(self.adjacent_articles),
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
    "list_share", "list_over_prose", "priced_share", "prose_block_share",
    "prose_paragraphs", "prose_share", "prose_block", "prose_after",
    "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
    "og_website", "published_time", "paginated", "adjacent_articles", "url_home", "url_listing",
    "url_article", "headline_share", "headlines_over_prose", "declared_without_headline",
)  # fmt: skip


@dataclass(frozen=True, eq=False)
class _PageArrays:
    """What several measurements of one page read, computed once (lengths scaled):
    the layout blocks holding text, their unlinked and link text, which of them are long
    paragraphs, and the indices of the page's links, headings, ``<h1>`` and ``<img>``
    elements."""

    scale: float
    blocks: np.ndarray  # indices of the blocks holding text, document order
    text: np.ndarray  # per block of ``blocks``: its unlinked text
    links: np.ndarray  # per block of ``blocks``: its link text
    long_text: np.ndarray  # per block of ``blocks``: it is a long paragraph
    link_nodes: np.ndarray  # indices of the ``<a>`` elements, document order
    headings: np.ndarray  # indices of the ``<h1>``-``<h6>`` elements, document order
    h1: np.ndarray  # indices of the ``<h1>`` elements, document order
    pictures: np.ndarray  # indices of the ``<img>`` elements, document order
    end: np.ndarray  # the node table's subtree ends

    def holds_link(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of ``nodes``: its subtree ``[i, end[i])`` holds an ``<a>`` (fewer links
        lie before its end than before it: two binary searches over the links, no count per
        node of the page)."""
        links = self.link_nodes
        return np.searchsorted(links, self.end[nodes]) > np.searchsorted(links, nodes)

    def holds_picture(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of ``nodes``: its subtree holds an ``<img>`` (as :meth:`holds_link`)."""
        pictures = self.pictures
        return np.searchsorted(pictures, self.end[nodes]) > np.searchsorted(pictures, nodes)

    @classmethod
    def of(cls, nodes: NodeTable, scale: float) -> _PageArrays:
        blocks = nodes.text_blocks
        link_chars = nodes.block_link_chars[blocks]
        text = (nodes.block_chars[blocks] - link_chars) * scale
        # One look-up per node names the tags read here: 1 a link, 2 a heading, 3 an h1,
        # 4 a picture.
        codes, names = nodes.tag_codes
        kinds = np.zeros(len(names), dtype=np.int8)
        for name, kind in _TAG_KINDS.items():
            if name in names:
                kinds[names[name]] = kind
        kind = kinds[codes]
        return cls(
            scale=scale,
            blocks=blocks,
            text=text,
            links=link_chars * scale,
            long_text=text >= LONG_PARAGRAPH,
            link_nodes=(kind == 1).nonzero()[0],
            headings=((kind == 2) | (kind == 3)).nonzero()[0],
            h1=(kind == 3).nonzero()[0],
            pictures=(kind == 4).nonzero()[0],
            end=nodes.end,
        )


#: The tags :class:`_PageArrays` finds: ``<a>`` (1), the headings (2), ``<h1>`` (3),
#: ``<img>`` (4).
_TAG_KINDS = {"a": 1, **{tag: 2 for tag in HEADING_TAGS - {"h1"}}, "h1": 3, "img": 4}


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
    lists' are their items' subtrees. The main content is read per layout block, by the
    block's own flag in ``labelling.content_nodes``: a DOM method's mask keeps or leaves
    whole blocks (:func:`~scrapy_tagratio.algorithms.base.dom_labelling`), so a long
    paragraph is in it or not, and its characters are the labelling's ``content_chars``.
    """
    nodes = document.nodes
    scale = page.scale
    found = find_structures(document)
    items = found.items
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
        content_chars = total
    else:  # the labelling's own count of the mask's characters
        content_chars = float(labelling.content_chars)
    list_items, listed = _lists(nodes, found, page, items, own_headline)
    # Per block with text: whether it lies outside every teaser, list and comment.
    blocks = page.blocks
    comment_items = int(np.count_nonzero(found.comment_items[items]))
    has_comments = comment_items > 0  # most pages have none: their figures are 0
    inside = (teaser | listed)[blocks]
    outside = ~(inside | found.comment[blocks]) if has_comments else ~inside
    long_text = page.long_text & outside
    priced = _priced(document, found, page, items)
    return TeaserEvidence(
        teasers=int(teaser_items.size),
        summary_teasers=int(np.count_nonzero(unlinked >= TEASER_SUMMARY)),
        largest_teaser_group=int(np.maximum.reduce(np.bincount(groups))) if groups.size else 0,
        heading_links=int(np.count_nonzero(page.holds_link(headings))),
        teaser_share=float(np.dot(own_chars, teaser)) / total if total else 0.0,
        comment_items=comment_items,
        comment_share=float(np.dot(own_chars, found.comment)) / total
        if total and has_comments
        else 0.0,
        main_teaser_share=float(np.dot(own_chars, content & teaser)) / content_chars
        if content_chars
        else 0.0,
        main_prose=int(np.count_nonzero(long_text & content[blocks])),
        free_prose=float(np.add.reduce(page.text[long_text])),
        list_items=list_items,
        list_share=float(np.dot(own_chars, listed)) / total if total else 0.0,
        priced_items=int(priced.size),
        priced_share=float(np.dot(own_chars, nodes.with_descendants(_mask(nodes, priced)))) / total
        if priced.size
        else 0.0,
    )


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
) -> tuple[int, np.ndarray]:
    """The size of the largest list and its nodes (a boolean per node): groups of at least
    :data:`LIST_ITEMS` repeated siblings (``items``, every item of ``found``) that nearly
    all hold a link, no comment thread, whose items hold :data:`LIST_ITEM_CHARS` to
    :data:`LIST_ITEM_MAX_CHARS` on average. Products, forum topics and search results are
    such items without a headline-long link (what teasers need); a menu's items are
    shorter, a page's sections longer. The items on the path to the page's own headline
    (``own_headline``) are no list items."""
    size = found.sizes
    if not size.size or np.maximum.reduce(size) < LIST_ITEMS:
        return 0, np.zeros(len(nodes), dtype=bool)
    number = found.group[items]
    linked = page.holds_link(items)
    with_link = np.bincount(number, weights=linked, minlength=size.size)
    chars = np.bincount(number, weights=nodes.chars[items], minlength=size.size) * page.scale
    is_list = (size >= LIST_ITEMS) & (with_link >= 0.8 * size) & ~found.comment_groups
    is_list &= (chars >= LIST_ITEM_CHARS * size) & (chars <= LIST_ITEM_MAX_CHARS * size)
    if not np.count_nonzero(is_list):
        return 0, np.zeros(len(nodes), dtype=bool)
    inside = items[is_list[number]]
    inside = _off_path(nodes, inside, own_headline)
    return int(np.maximum.reduce(size[is_list])), nodes.with_descendants(_mask(nodes, inside))


def _priced(
    document: Document, found: Structures, page: _PageArrays, items: np.ndarray
) -> np.ndarray:
    """The products among the repeated items (``items``, every item of ``found``): items
    of at most :data:`PRICED_ITEM_MAX_CHARS` that hold a picture and a price
    (:data:`_PRICE`), in groups of siblings (no comment thread) of which at least
    :data:`PRICED_ITEMS`, and :data:`PRICED_SHARE` of the group, are such items. A shop's
    category page is a grid of them; an article has none, or prices without pictures,
    and a product page shows its own price and a small rail.

    Text is read only for the pictured items of groups that could qualify (most pages
    have none), and a group's reading stops once too few are left for it to qualify."""
    size = found.sizes
    # The items of a group are siblings: each product holds a picture of its own.
    if page.pictures.size < PRICED_ITEMS or not size.size or np.maximum.reduce(size) < PRICED_ITEMS:
        return items[:0]
    nodes = document.nodes
    number = found.group[items]
    groups = (size >= PRICED_ITEMS) & ~found.comment_groups
    candidate = groups[number] & (nodes.chars[items] <= PRICED_ITEM_MAX_CHARS)
    candidate &= page.holds_picture(items)
    enough = np.maximum(PRICED_SHARE * size, PRICED_ITEMS)
    spare = np.bincount(number, weights=candidate, minlength=size.size) - enough
    possible = (groups & (spare >= 0)).nonzero()[0]
    if not possible.size:
        return items[:0]
    priced = np.zeros(items.size, dtype=bool)
    search = _PRICE.search
    for group in possible.tolist():
        misses, allowed = 0, spare[group]
        members = (candidate & (number == group)).nonzero()[0]
        for k, text in zip(members.tolist(), document.raw_texts(items[members]), strict=True):
            if search(text) is not None:
                priced[k] = True
                continue
            misses += 1
            if misses > allowed:  # the group cannot qualify: its other items are not read
                break
    kept = np.bincount(number, weights=priced, minlength=size.size) >= enough
    return items[priced & kept[number]]


def _prose(nodes: NodeTable, page: _PageArrays) -> tuple[int, float, float, float]:
    """Long paragraphs in the longest run, its share of the page's text, the largest set
    of long paragraphs under one parent (scaled characters), and the share of the page's
    text (unlinked and link) after that parent's subtree."""
    block_text, block_links = page.text, page.links
    breaks = block_links > block_text
    run = breaks.astype(np.intp).cumsum()  # faster than cumsum's cast of the booleans
    run_text = np.bincount(run, weights=np.where(breaks, 0.0, block_text))
    run_long = np.bincount(run, weights=~breaks & page.long_text)
    total = float(np.add.reduce(block_text) + np.add.reduce(block_links))
    if not run_text.size or total <= 0:
        return 0, 0.0, 0.0, 0.0
    best = int(run_text.argmax())
    # A long paragraph's text counts for its parent and for itself (a block may hold
    # long paragraphs and text of its own).
    long_blocks = page.blocks[page.long_text]
    if not long_blocks.size:
        return int(run_long[best]), float(run_text[best]) / total, 0.0, 0.0
    long_text = page.text[page.long_text]
    parents = nodes.parent[long_blocks]
    has_parent = parents >= 0
    under = np.bincount(
        np.concatenate((parents[has_parent], long_blocks)),
        weights=np.concatenate((long_text[has_parent], long_text)),
    )
    holder = int(under.argmax())
    # The blocks are in document order: those from the holder's subtree end on follow it.
    first_after = int(np.searchsorted(page.blocks, page.end[holder]))
    after = float(
        np.add.reduce(block_text[first_after:]) + np.add.reduce(block_links[first_after:])
    )
    return int(run_long[best]), float(run_text[best]) / total, float(under[holder]), after / total


def _page_signals(document: Document) -> tuple[bool, bool, bool, bool, bool, bool, bool]:
    """declares article / item / listing, og:type website, published time, rel=next/prev to
    a listing's pages, rel=next/prev to articles only (:func:`_rel_neighbours`).

    From the attributes of ``meta``, ``script``, ``link`` and ``a`` elements and the
    microdata types, as the page was read (:class:`~scrapy_tagratio.reader.PageEvents`).
    An article or item type repeated in the microdata, where ``og:type`` and JSON-LD
    declare no such thing, declares a list of them (a category page's products, a
    front's stories), not one."""
    page = document.page
    attributes = page.attributes
    declared: set[str] = set()
    for script in page.json_ld_sources:
        declared.update(_JSONLD_TYPE.findall(script[:20000]))
    og_type = ""
    published = False
    for meta_property, name, itemprop, content in attributes.metas:
        key = (meta_property or name or itemprop or "").lower()
        if key == "og:type" and not og_type:
            og_type = (content or "").strip().lower()
        published = published or key in _PUBLISHED_META
    paginated, adjacent = _rel_neighbours(document)
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
    return article, item, listing, og_type == "website", published, paginated, adjacent


#: What a ``rel=next``/``prev`` address is resolved against: only its path and query are
#: read for their shape, so the verdict does not depend on whether a URL was given.
_REL_BASE = "http://page.invalid/"


def _rel_neighbours(document: Document) -> tuple[bool, bool]:
    """Whether the page's ``rel=next``/``prev`` addresses (``<link>`` or ``<a>``) include a
    listing's or a home page's (:func:`url_shape`: ``/page/2``, ``?page=3``, ``/``): the
    pages of a listing; and whether they are all articles' (a slug, a long number, a date
    path): a post linking its neighbours, as blog software does on every post. The two
    read alike as "rel=next" and weigh opposite ways: the first is mostly on overview
    pages, the second on content pages only (counts: development notes, twenty-third
    session)."""
    page = document.page
    owners = page.with_rel("next") + page.with_rel("prev")
    if not owners:
        return False, False
    kept = page.attributes.kept
    # A page often names one address twice (``<link rel=next>`` and ``<a rel=next>``):
    # each distinct address is shaped once (the two answers read no count of them).
    hrefs = dict.fromkeys(((kept.get(owner) or (None,))[0] or "").strip() for owner in owners)
    shapes = []
    for href in hrefs:
        if not href or href.startswith("#"):
            continue
        try:
            shapes.append(url_shape(urljoin(_REL_BASE, href)))
        except ValueError:  # e.g. an unbalanced "[" in the host
            continue
    listing = any(shape in ("listing", "home") for shape in shapes)
    return listing, bool(shapes) and all(shape == "article" for shape in shapes)


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
    paragraphs, share, block, after = _prose(nodes, page) if total else (0, 0.0, 0.0, 0.0)
    article, item, listing, website, published, paginated, adjacent = _page_signals(document)
    return PageEvidence(
        net_text_length=labelling.content_chars - labelling.link_chars,
        text_scale=scale,
        link_share=int(nodes.link_chars[0]) / total if total else 0.0,
        **dict(zip(_TEASER_FIELDS, _TEASER_VALUES(teasers), strict=True)),
        prose_paragraphs=paragraphs,
        prose_share=share,
        prose_block=block,
        prose_after=after,
        title_repeats_heading=own_headline >= 0,
        declares_article=article,
        declares_item=item,
        declares_listing=listing,
        og_website=website,
        published_time=published,
        paginated=paginated,
        adjacent_articles=adjacent,
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
        "og_website", "published_time", "paginated", "adjacent_articles", "url_home",
        "url_listing", "url_article", "declared_without_headline",
    }
)  # fmt: skip
#: The page's declarations and its URL: evidence, never decisive alone (see
#: :meth:`~.overview.OverviewModel.judge`).
SIGNALS = frozenset(
    {
        "declares_article", "declares_item", "declares_listing", "og_website",
        "published_time", "paginated", "adjacent_articles", "url_home", "url_listing",
        "url_article", "declared_without_headline",
    }
)  # fmt: skip
