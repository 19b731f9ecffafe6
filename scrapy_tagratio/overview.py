"""Overview-page detection: is this page a home page, section front, tag or archive
listing (it lists or teases other pages), or a page with one main text?

The baseline is TextSweeper's test (Lang et al. 2012, end of section 3): a page whose
extracted content has a *net text length* (text minus link text) below a minimum is an
overview page. It depends on the extraction: an extractor that keeps teaser summaries
passes a listing, one that misses half an article rejects it. The paper points at better
evidence without using it together; this module measures it on the page itself, from the
node table, the ``<head>`` and the URL, in one or two milliseconds and without a second
parse:

* **link share**: the share of the page's text inside links;
* **teasers**: repeated sibling blocks (same parent, same tag, at least 3) each holding
  one to three headline-long links, and of those the ones with a short text beside the
  link; the size of the largest such group; headings that hold a link; the number of
  distinct article-like link targets (a path with a slug, a long number or ``.html``);
* **article body**: text is cut into layout blocks (the nearest block-level element of
  each piece of text) and blocks into *runs* at every block that is mostly link text (a
  headline link, a menu, a "read more"): an article is one long run of long paragraphs,
  a listing many short runs, one per teaser. Measured: the long paragraphs in the
  longest run, that run's share of the page's non-link text, and the largest set of
  long paragraphs under one parent; also whether the ``<title>`` contains the first
  ``<h1>`` (an article's title repeats its headline; a listing's ``<h1>`` is the site's
  name or missing);
* **the page's own signals**: ``og:type``, JSON-LD ``@type`` and microdata
  ``itemtype`` (``NewsArticle``, ``BlogPosting``... against ``CollectionPage``,
  ``ItemList``, ``SearchResultsPage``, ``Blog``), a published-time meta, ``rel=next`` /
  ``rel=prev`` pagination;
* **URL shape**, when the URL is known: a home page (no path), a listing (``/tag/``,
  ``/category/``, ``/page/2``, ``?page=3``...), an article (a slug with several hyphens,
  a long number, a date path).

Lengths are counted in characters times a *text scale*: about 3 on Chinese, Japanese and
Korean pages, whose characters carry about three times what a Latin letter does, 1
elsewhere; no word list of any language is needed except the URL's listing words
(``tag``, ``category``, ``page``...), which are the vocabulary of web software, not of
the page's language.

The combined score is a logistic model over a subset of these features (those that
helped in site-grouped cross-validation). Its constants below were fitted on the 346
labelled pages of ``overview-dev`` by ``benchmarks/overview.py --fit`` (scikit-learn,
standardised features, L2 penalty C = 0.1); rerun it to refit. The script also measures
each kind of evidence alone and the combination with the sites split across folds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from .algorithms.base import (
    HEADING_TAGS,
    Labelling,
    check_choice,
    check_range,
)
from .document import Document, NodeTable

__all__ = [
    "FEATURES",
    "MODEL_FEATURES",
    "OverviewDetector",
    "OverviewVerdict",
    "PageEvidence",
    "page_evidence",
    "text_scale",
    "url_shape",
]

#: Characters of the dense scripts (Han, kana, Hangul) that set the text scale.
_DENSE_SCRIPT = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
#: A link this long (scaled characters) reads like a headline.
HEADLINE_LINK = 20
#: A layout block of this much non-link text (scaled characters) is a long paragraph.
LONG_PARAGRAPH = 100
#: Teaser blocks: at most this much text (scaled characters) and 1-3 headline links ...
TEASER_MAX_LENGTH = 1500
TEASER_MAX_LINKS = 3
#: ... with at least this much non-link text beside the link to count as "with summary".
TEASER_SUMMARY = 40
#: Siblings needed to call a repeated structure a teaser group.
TEASER_GROUP = 3

#: schema.org types that declare one article (JSON-LD ``@type``, microdata ``itemtype``).
ARTICLE_TYPES = frozenset(
    {
        "Article", "NewsArticle", "BlogPosting", "ReportageNewsArticle",
        "AnalysisNewsArticle", "OpinionNewsArticle", "BackgroundNewsArticle",
        "ReviewNewsArticle", "LiveBlogPosting", "TechArticle", "ScholarlyArticle",
        "SocialMediaPosting", "Report", "SatiricalArticle", "DiscussionForumPosting",
    }
)
#: schema.org types that declare one item that is not an article (a product, an event...).
ITEM_TYPES = frozenset(
    {
        "Product", "Recipe", "Event", "Movie", "QAPage", "JobPosting", "Course", "Book",
        "Review", "MusicRecording", "VideoObject",
    }
)
#: schema.org types that declare a listing.
LISTING_TYPES = frozenset({"CollectionPage", "ItemList", "SearchResultsPage", "Blog"})
_JSONLD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([^"]+)"')
#: ``<meta>`` names and properties that carry a publication time (articles have one).
_PUBLISHED_META = frozenset({"article:published_time", "datepublished", "pubdate", "date"})

#: Path segments and query keys of listings in the URL conventions of web software.
_LISTING_SEGMENTS = frozenset(
    {
        "tag", "tags", "category", "categories", "cat", "section", "sections", "topic",
        "topics", "archive", "archives", "author", "authors", "search", "page", "paged",
        "list", "forum", "forums", "board", "date", "events", "collection", "shop",
    }
)
_LISTING_KEYS = frozenset({"cat", "tag", "category", "s", "q", "query", "search"})
_PAGE_KEYS = frozenset({"page", "paged", "p", "pg", "start", "offset"})
_PAGINATED_PATH = re.compile(r"(?:^|/)page/\d+|/p\d+$|index\d+\.html?$|list_\d+_\d+", re.I)
_INDEX_FILE = re.compile(r"(?:index|default|home)\.\w+", re.I)
_LONG_NUMBER = re.compile(r"\d{5,}")
_DATE_PATH = re.compile(r"/(?:19|20)\d\d/\d{1,2}/")
_SLUG_SEPARATOR = re.compile(r"[-_]")


def text_scale(document: Document) -> float:
    """Characters per Latin-letter equivalent: 1 + 2 x the share of Han, kana and Hangul
    characters in the title and the five largest own texts of the page."""
    nodes = document.nodes
    count = min(5, len(nodes))
    parts = [document.title or ""]
    if count:
        parts.extend(
            map(document.own_text, np.argpartition(-nodes.own_chars, count - 1)[:count].tolist())
        )
    sample = "".join("".join(parts).split())
    if not sample:
        return 1.0
    return 1.0 + 2.0 * len(_DENSE_SCRIPT.findall(sample)) / len(sample)


def url_shape(url: str | None) -> str:
    """``"home"``, ``"listing"``, ``"article"`` or ``""`` (unknown or undecided)."""
    if not url:
        return ""
    parts = urlsplit(url.strip())
    segments = [s for s in parts.path.split("/") if s]
    query = parse_qsl(parts.query)
    if not query and (not segments or (len(segments) == 1 and _INDEX_FILE.fullmatch(segments[0]))):
        return "home"
    paginated = _PAGINATED_PATH.search(parts.path) is not None or any(
        key.lower() in _PAGE_KEYS and value.isdigit() and len(value) <= 3 for key, value in query
    )
    if (
        paginated
        or any(s.lower() in _LISTING_SEGMENTS for s in segments)
        or any(key.lower() in _LISTING_KEYS for key, _ in query)
    ):
        return "listing"
    slug = max((len(_SLUG_SEPARATOR.findall(s)) for s in segments), default=0)
    if (
        _LONG_NUMBER.search(parts.path + parts.query)
        or slug >= 3
        or (_DATE_PATH.search(parts.path) and len(segments) >= 4)
    ):
        return "article"
    return ""


@dataclass(frozen=True)
class PageEvidence:
    """What the page says about itself, before any weighting (lengths in scaled
    characters, see :func:`text_scale`)."""

    net_text_length: int  # of the extraction: content minus link characters
    text_scale: float
    link_share: float
    teasers: int
    summary_teasers: int
    largest_teaser_group: int
    heading_links: int
    article_links: int
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
    url_shape: str

    def features(self, min_net_text_length: int) -> dict[str, float]:
        """The model's inputs: counts on a log scale, flags as 0/1, the net text length
        as ``log((net + 1) / min_net_text_length)`` clipped to [-5, 5]."""
        log1p = math.log1p
        net = max(self.net_text_length, 0) + 1
        return {
            "net_text": min(5.0, max(-5.0, math.log(net / min_net_text_length))),
            "link_share": self.link_share,
            "teasers": log1p(self.teasers),
            "summary_teasers": log1p(self.summary_teasers),
            "largest_teaser_group": log1p(self.largest_teaser_group),
            "heading_links": log1p(self.heading_links),
            "article_links": log1p(self.article_links),
            "prose_paragraphs": log1p(self.prose_paragraphs),
            "prose_share": self.prose_share,
            "prose_block": log1p(self.prose_block),
            "title_repeats_heading": float(self.title_repeats_heading),
            "declares_article": float(self.declares_article),
            "declares_item": float(self.declares_item),
            "declares_listing": float(self.declares_listing),
            "og_website": float(self.og_website),
            "published_time": float(self.published_time),
            "paginated": float(self.paginated),
            "url_home": float(self.url_shape == "home"),
            "url_listing": float(self.url_shape == "listing"),
            "url_article": float(self.url_shape == "article"),
        }

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: Names of :meth:`PageEvidence.features`, in order.
FEATURES = (
    "net_text", "link_share", "teasers", "summary_teasers", "largest_teaser_group",
    "heading_links", "article_links", "prose_paragraphs", "prose_share", "prose_block",
    "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
    "og_website", "published_time", "paginated", "url_home", "url_listing", "url_article",
)  # fmt: skip


def _teaser_counts(
    document: Document, scale: float, is_anchor: np.ndarray
) -> tuple[int, int, int, int, int]:
    """Teaser blocks, those with a summary, the largest group, headings with a link and
    distinct article-like link targets."""
    nodes = document.nodes
    headline = is_anchor & (nodes.chars * scale >= HEADLINE_LINK)
    headlines_inside = nodes.subtree_sum(headline.astype(np.int64))
    item = (
        nodes.is_block
        & (headlines_inside >= 1)
        & (headlines_inside <= TEASER_MAX_LINKS)
        & (nodes.chars * scale <= TEASER_MAX_LENGTH)
    )
    items = np.flatnonzero(item)
    teasers = summaries = largest = 0
    if items.size:
        node_codes, codes = nodes.tag_codes
        key = nodes.parent[items].astype(np.int64) * len(codes) + node_codes[items]
        _, group, size = np.unique(key, return_inverse=True, return_counts=True)
        grouped = size[group] >= TEASER_GROUP
        summary = (nodes.chars[items] - nodes.link_chars[items]) * scale >= TEASER_SUMMARY
        teasers = int(grouped.sum())
        summaries = int((grouped & summary).sum())
        largest = int(size.max()) if teasers else 0
    is_heading = nodes.tag_mask(HEADING_TAGS)
    heading_links = int((is_heading & (nodes.subtree_sum(is_anchor.astype(np.int64)) > 0)).sum())
    targets = set(map(document.href, np.flatnonzero(headline).tolist()))
    article_links = sum(1 for href in targets if href and _looks_like_article_link(href))
    return teasers, summaries, largest, heading_links, article_links


_LINK_PATH = re.compile(r"^(?:[a-zA-Z][\w+.-]*:)?(?://[^/?#]*)?([^?#]*)")
_LONG_NUMBER_IN_LINK = re.compile(r"\d{4,}")


def _looks_like_article_link(href: str) -> bool:
    """A link target with a path of two or more segments whose last one is a slug (two
    or more hyphens/underscores), carries a long number, or ends in ``.html``."""
    match = _LINK_PATH.match(href)
    path = match.group(1) if match else ""
    segments = [s for s in path.split("/") if s]
    if len(segments) < 2:
        return False
    last = segments[-1]
    return (
        len(_SLUG_SEPARATOR.findall(last)) >= 2
        or _LONG_NUMBER_IN_LINK.search(path) is not None
        or last.endswith((".html", ".htm", ".shtml"))
    )


def _prose(nodes: NodeTable, scale: float) -> tuple[int, float, float]:
    """Long paragraphs in the longest run, its share of the page's text, and the
    largest set of long paragraphs under one parent (scaled characters)."""
    n = len(nodes)
    owner = nodes.block
    text = np.bincount(owner, weights=nodes.own_chars - nodes.own_link_chars, minlength=n) * scale
    links = np.bincount(owner, weights=nodes.own_link_chars, minlength=n) * scale
    has_text = (text + links) > 0
    block_text, block_links = text[has_text], links[has_text]
    breaks = block_links > block_text
    run = np.cumsum(breaks)
    run_text = np.bincount(run, weights=np.where(breaks, 0.0, block_text))
    run_long = np.bincount(run, weights=~breaks & (block_text >= LONG_PARAGRAPH))
    total = float(block_text.sum() + block_links.sum())
    if not run_text.size or total <= 0:
        return 0, 0.0, 0.0
    best = int(np.argmax(run_text))
    long_text = np.where(text >= LONG_PARAGRAPH, text, 0.0)
    has_parent = nodes.parent >= 0
    under_parent = np.bincount(nodes.parent[has_parent], weights=long_text[has_parent], minlength=n)
    block = float((under_parent + long_text).max())
    return int(run_long[best]), float(run_text[best]) / total, block


def _page_signals(document: Document) -> tuple[bool, bool, bool, bool, bool, bool]:
    """declares article / item / listing, og:type website, published time, rel=next/prev.

    From the attributes of ``meta``, ``script``, ``link`` and ``a`` elements and the
    microdata types, as the page was read (:class:`~scrapy_tagratio.reader.PageEvents`)."""
    page = document.page
    attributes = page.attributes
    types = {t.strip().rstrip("/").rsplit("/", 1)[-1] for t in attributes.itemtypes}
    for script in attributes.json_ld:
        types.update(_JSONLD_TYPE.findall(page.own_text(script)[:20000]))
    og_type = ""
    published = False
    for meta_property, name, itemprop, content in attributes.metas:
        key = (meta_property or name or itemprop or "").lower()
        if key == "og:type" and not og_type:
            og_type = (content or "").strip().lower()
        published = published or key in _PUBLISHED_META
    paginated = any(not {"next", "prev"}.isdisjoint(rel.lower().split()) for rel in attributes.rels)
    return (
        bool(types & ARTICLE_TYPES) or og_type == "article",
        bool(types & ITEM_TYPES) or og_type.split(".")[0] in ("product", "video", "book"),
        bool(types & LISTING_TYPES),
        og_type == "website",
        published,
        paginated,
    )


def _title_repeats_heading(document: Document, scale: float) -> bool:
    """The ``<title>`` contains the first ``<h1>``, and that heading is headline-long."""
    try:
        first = document.nodes.tag.index("h1")
    except ValueError:
        return False
    heading = document.raw_text(first).lower()
    if len(heading) * scale < HEADLINE_LINK:
        return False
    return heading in document.html_title.lower()


def page_evidence(document: Document, labelling: Labelling) -> PageEvidence:
    """All the evidence of the module docstring for one page (vectorised over the node
    table; one XPath over the tree for the page's own signals)."""
    nodes = document.nodes
    scale = text_scale(document)
    total = int(nodes.chars[0]) if len(nodes) else 0
    is_anchor = nodes.tag_mask(frozenset({"a"}))
    teasers, summaries, largest, heading_links, article_links = _teaser_counts(
        document, scale, is_anchor
    )
    paragraphs, share, block = _prose(nodes, scale) if total else (0, 0.0, 0.0)
    article, item, listing, website, published, paginated = _page_signals(document)
    return PageEvidence(
        net_text_length=labelling.content_chars - labelling.link_chars,
        text_scale=scale,
        link_share=int(nodes.link_chars[0]) / total if total else 0.0,
        teasers=teasers,
        summary_teasers=summaries,
        largest_teaser_group=largest,
        heading_links=heading_links,
        article_links=article_links,
        prose_paragraphs=paragraphs,
        prose_share=share,
        prose_block=block,
        title_repeats_heading=_title_repeats_heading(document, scale),
        declares_article=article,
        declares_item=item,
        declares_listing=listing,
        og_website=website,
        published_time=published,
        paginated=paginated,
        url_shape=url_shape(document.url),
    )


# The combined model, printed by ``python -m benchmarks.overview --fit``: scikit-learn's
# LogisticRegression (C=0.1) on the standardised features of the 346 pages of overview-dev
# (overview against article/other), net text from the default algorithm's extraction.
# score = sigmoid(INTERCEPT + sum(WEIGHTS * (x - MEANS) / SCALES)). The same feature set,
# refitted on 4/5 of the sites and tested on the other 1/5 (5 shuffles), scored accuracy
# 0.958 with the URL (0.942 without), article pages called overview 1.6% (1.5%).
MODEL_FEATURES = (
    "net_text", "summary_teasers", "heading_links", "prose_paragraphs", "prose_share",
    "prose_block", "title_repeats_heading", "declares_article", "declares_listing",
    "published_time", "url_home", "url_listing", "url_article",
)  # fmt: skip
MEANS = np.array(
    [1.25722, 1.11643, 1.50117, 1.60271, 0.317692, 6.65388, 0.395954, 0.50578, 0.0722543,
     0.283237, 0.205202, 0.127168, 0.445087]
)
SCALES = np.array(
    [1.59088, 1.27326, 1.40633, 1.04616, 0.270253, 2.11192, 0.489055, 0.499967, 0.258909,
     0.450571, 0.403849, 0.333161, 0.496975]
)
WEIGHTS = np.array(
    [-0.240403, 0.498654, 0.360427, -0.421649, -0.579092, -0.448268, -0.345026, -0.556817,
     0.311155, -0.316382, 0.629342, 0.377137, -0.746887]
)
INTERCEPT = -0.611155

#: Features that are flags (0/1): absent is their neutral value.
FLAGS = frozenset(
    {
        "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
        "og_website", "published_time", "paginated", "url_home", "url_listing", "url_article",
    }
)
# Reasons explain a score from a reference page, average in every measured quantity and
# without any flag: the same score, but a verdict names what a page has, not what it lacks.
_REFERENCE = np.where([name in FLAGS for name in MODEL_FEATURES], 0.0, MEANS)
_REFERENCE_LOGIT = INTERCEPT + float((WEIGHTS * (_REFERENCE - MEANS) / SCALES).sum())
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
    "article_links": "{article_links} distinct article-like links",
    "prose_paragraphs": "{prose_paragraphs} long paragraphs in one run",
    "prose_share": "longest prose run holds {prose_share:.0%} of the text",
    "prose_block": "largest block of long paragraphs {prose_block:.0f} chars",
    "title_repeats_heading": "the title repeats the h1",
    "declares_article": "declares an article (og:type, schema.org)",
    "declares_item": "declares a single item (og:type, schema.org)",
    "declares_listing": "declares a listing (schema.org)",
    "og_website": "og:type website",
    "published_time": "has a published-time meta",
    "paginated": "has rel=next/prev pagination",
    "url_home": "the URL is a home page",
    "url_listing": "the URL is a listing's",
    "url_article": "the URL is an article's",
}


@dataclass(frozen=True)
class OverviewVerdict:
    """The detector's answer: the label, a score in [0, 1] (>= the detector's threshold
    means overview) and the evidence behind it, strongest first."""

    is_overview: bool
    score: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class OverviewDetector:
    """Decides whether a page is an overview page.

    ``evidence="combined"`` (default) scores the page with the logistic model over
    :data:`MODEL_FEATURES`; ``evidence="net-text"`` is TextSweeper's test alone: overview
    when the extraction's net text length is below ``min_net_text_length`` (its score,
    ``1 / (1 + ((net + 1) / min_net_text_length)^2)``, crosses 0.5 there).
    """

    #: Net text length (content minus link characters of the extraction) that TextSweeper's
    #: test requires of an article; in the combined model, the pivot of that evidence.
    min_net_text_length: int = 500
    #: Scores at or above this are overview pages.
    threshold: float = 0.5
    #: ``"combined"`` or ``"net-text"``.
    evidence: str = "combined"

    def __post_init__(self) -> None:
        check_range("min_net_text_length", self.min_net_text_length, 1, integer=True)
        check_range("threshold", self.threshold, 0.0, 1.0)
        check_choice("evidence", self.evidence, ("combined", "net-text"))

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
            return OverviewVerdict(
                score >= self.threshold,
                score,
                (f"net text length {net} (minimum {self.min_net_text_length})",),
            )
        evidence = page_evidence(document, labelling)
        values = evidence.features(self.min_net_text_length)
        x = np.array([values[name] for name in MODEL_FEATURES])
        contributions = WEIGHTS * (x - _REFERENCE) / SCALES
        score = 1.0 / (1.0 + math.exp(-(_REFERENCE_LOGIT + float(contributions.sum()))))
        details = evidence.to_dict()
        reasons = tuple(
            f"{_REASONS[MODEL_FEATURES[i]].format(**details)} "
            f"({'overview' if contributions[i] > 0 else 'article'} {contributions[i]:+.2f})"
            for i in np.argsort(-np.abs(contributions))[:REASONS].tolist()
            if contributions[i] != 0
        )
        return OverviewVerdict(score >= self.threshold, score, reasons)
