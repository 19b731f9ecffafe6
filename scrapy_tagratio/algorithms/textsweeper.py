"""TextSweeper: content extraction by a net-text tag ratio (Lang, Wohlgenannt and
Weichselbraun, CONF-IRM 2012).

Read beside ``textsweeper-confirm2012.txt`` (section 3, one paragraph per step):

1. Known non-content containers are removed: ``form`` and the form controls (comments,
   scripts and styles are already gone in :class:`~scrapy_tagratio.document.Document`).
   A container holding most of the page's text is kept: ASP.NET pages wrap the whole body
   in one ``<form>``, and removing it would empty them.
2. Eq. 1, per element's own text::

       text_length = actual_text_length * text_weight * parent_text_weight

   ``text_weight`` comes from the element's tag (headings and bold weigh more) and from
   its length (a long passage weighs more: "a bias towards long text passages");
   ``parent_text_weight`` is the tag weight of the parent (a link inside a heading is
   heading text). The paper gives no values; the defaults here are this project's choice
   (see the fields) and were checked on the development pages, not fitted to them.
3. Link text: anchors (and the other link-like tags of
   :data:`~scrapy_tagratio.document.LINK_TAGS`), elements with an ``onclick`` handler, and
   teasers, blocks ending in "Read more" or "...", whose element *and parent* count as
   link text. Readings: the parent rule belongs to the teaser indicator only (applied to
   every anchor it would turn each paragraph with an inline link into link text); a
   teaser is a short non-heading block (``max_teaser_length``) whose parent holds a link
   (the summary of an article links to it; a headline or an article paragraph ending in
   an ellipsis is no teaser), and the parent is marked only when it is short too.
   An ``onclick`` or a form that wraps most of the page is layout, not a link.
4. Eq. 2, per element, over its subtree::

       ratio = (text_length - link_text_length) / (tag_count + node_level)

   ``tag_count`` counts the elements of the subtree, the node included, except inline
   text tags (``b``, ``span``, ``a``, ``br``...); ``node_level`` is the depth with
   ``<body>`` at level 1. Reading: counting the node itself, as the tag-ratio methods
   count the tags of a line, keeps a lone paragraph (no descendant tags) from beating
   the article that holds it, and scored higher on the development pages.
5. Nodes whose ratio is within ``tolerance`` of the best one (0.9 in the paper's example)
   are relevant; the result is their common path (deepest common ancestor) with its
   subtree.
6. Cleanup: inside the result, every non-inline element whose weighted text length is
   below ``min_text_length`` or whose text is mostly links is removed; the common path
   itself stays (it *is* the result, even when links dominate it).

Readings shared with the other DOM methods (see :mod:`.cetd`): characters are counted in
text pieces with their white space collapsed and stripped, and the text of one layout
block (the nearest block-level element) is kept or left whole by the majority of its
characters (:func:`~scrapy_tagratio.algorithms.base.dom_labelling`), so that output never
cuts a word at an inline tag.

The overview-page test of the paper (net text length of the result below a minimum) lives
in :mod:`scrapy_tagratio.overview`, which applies it to any algorithm's result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..document import Document, NodeTable
from .base import (
    HEADING_TAGS,
    Algorithm,
    Labelling,
    check_range,
    dom_labelling,
)

__all__ = [
    "BOLD_TAGS",
    "INLINE_TEXT_TAGS",
    "NON_CONTENT_TAGS",
    "PAGE_WRAPPER_SHARE",
    "TEASER_ENDINGS",
    "TextSweeper",
    "common_ancestor",
    "ends_like_teaser",
    "tag_ratio",
]

#: Containers that never hold content (step 1); form controls are kept out with the form.
NON_CONTENT_TAGS = frozenset({"form", "button", "select", "option", "textarea", "input"})
#: Inline text tags: not counted in Eq. 2's ``tag_count``.
INLINE_TEXT_TAGS = frozenset(
    {
        "a",
        "abbr",
        "acronym",
        "b",
        "bdi",
        "bdo",
        "big",
        "br",
        "cite",
        "code",
        "data",
        "del",
        "dfn",
        "em",
        "font",
        "i",
        "ins",
        "kbd",
        "mark",
        "nobr",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strike",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
    }
)
#: Bold text, weighed ``bold_weight`` in Eq. 1.
BOLD_TAGS = frozenset({"b", "strong"})
#: How a teaser ends (step 3): the paper's "Read more" and "...", and "read more" in the
#: languages of the development pages. Compared lower-case, after trailing arrows.
TEASER_ENDINGS: tuple[str, ...] = (
    "...",
    "…",
    "read more",
    "continue reading",
    "more",
    "weiterlesen",
    "mehr",
    "lire la suite",
    "lire plus",
    "leer más",
    "seguir leyendo",
    "leia mais",
    "leggi tutto",
    "lees meer",
    "läs mer",
    "les mer",
    "læs mere",
    "czytaj więcej",
    "więcej",
    "подробнее",
    "читать далее",
    "далее",
    "devamı",
    "devamını oku",
    "続きを読む",
    "阅读全文",
    "查看全文",
    "详细",
    "더보기",
)

_TRAILING_DECORATION = " \t\n»›>→)]}|"
#: A non-content container holding more than this share of the page's text is layout
#: (a page-wide ASP.NET form), not a container to remove.
PAGE_WRAPPER_SHARE = 0.5


def ends_like_teaser(text: str) -> bool:
    """Whether ``text`` ends like a teaser: an ellipsis or a "read more" phrase of
    :data:`TEASER_ENDINGS`, maybe followed by arrows or brackets ("Read more »").

    A phrase in a cased script (Latin, Greek, Cyrillic) must start a word ("more" ends
    "read more", not "Baltimore"); caseless scripts (CJK) have no word boundary to check.
    """
    tail = text[-48:].rstrip(_TRAILING_DECORATION).lower()
    if not tail.endswith(TEASER_ENDINGS):
        return False
    for ending in TEASER_ENDINGS:
        if tail.endswith(ending):
            before = len(tail) - len(ending) - 1
            cased = ending[0].lower() != ending[0].upper()
            if not cased or before < 0 or not tail[before].isalnum():
                return True
    return False


def common_ancestor(nodes: NodeTable, members: np.ndarray) -> int:
    """The deepest element whose subtree holds every index in ``members`` (non-empty):
    the ancestor of the first member whose subtree reaches past the last one."""
    first, last = int(members.min()), int(members.max())
    node = first
    while node > 0 and int(nodes.end[node]) <= last:
        node = int(nodes.parent[node])
    return node


def tag_ratio(
    nodes: NodeTable,
    own_weighted: np.ndarray,
    own_weighted_links: np.ndarray,
    counted: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. 2 for every element: ``(text_length - link_text_length) / (tag_count +
    node_level)``; also returns the subtree text and link text lengths (Eq. 1 summed)."""
    text_length = nodes.subtree_sum(own_weighted)
    link_length = nodes.subtree_sum(own_weighted_links)
    tag_count = nodes.subtree_sum(counted.astype(np.int64))
    node_level = nodes.depth + 1
    return (text_length - link_length) / (tag_count + node_level), text_length, link_length


@dataclass(frozen=True)
class TextSweeper(Algorithm):
    """TextSweeper: net text (text minus link text) per non-inline tag and level, best
    node within a tolerance, common path, cleanup."""

    name: ClassVar[str] = "textsweeper"
    summary: ClassVar[str] = (
        "TextSweeper, net text per tag and level with teaser-aware link text "
        "(Lang et al. 2012); keeps structure"
    )

    #: Relevant nodes have a ratio of at least ``tolerance`` x the best (paper: 0.9).
    tolerance: float = 0.9
    #: Text weight of headings (Eq. 1; "headings ... are considered more important").
    heading_weight: float = 2.0
    #: Text weight of bold text (``b``, ``strong``).
    bold_weight: float = 1.5
    #: Own text of at least this many characters is a long passage ...
    long_text_length: int = 80
    #: ... and weighs this much more (Eq. 1's bias towards long passages).
    long_text_weight: float = 1.5
    #: Cleanup: non-inline elements of the result below this weighted text length go.
    min_text_length: float = 20.0
    #: Cleanup: elements whose text is more than this share of link text go.
    max_link_density: float = 0.5
    #: A block ending in "Read more"/"..." is a teaser only up to this many characters
    #: (a long article paragraph ending in an ellipsis is not one); its parent only up to
    #: twice that.
    max_teaser_length: int = 400

    def validate(self) -> None:
        check_range("tolerance", self.tolerance, 0.0, 1.0, low_inclusive=False)
        check_range("heading_weight", self.heading_weight, 0.0, 100.0, low_inclusive=False)
        check_range("bold_weight", self.bold_weight, 0.0, 100.0, low_inclusive=False)
        check_range("long_text_length", self.long_text_length, 1, integer=True)
        check_range("long_text_weight", self.long_text_weight, 0.0, 100.0, low_inclusive=False)
        check_range("min_text_length", self.min_text_length, 0.0)
        check_range("max_link_density", self.max_link_density, 0.0, 1.0)
        check_range("max_teaser_length", self.max_teaser_length, 0, integer=True)

    # ------------------------------------------------------------------ steps
    def removed(self, nodes: NodeTable) -> np.ndarray:
        """Step 1: elements inside a non-content container (not a page-wide one)."""
        roots = nodes.tag_mask(NON_CONTENT_TAGS)
        roots &= nodes.chars <= PAGE_WRAPPER_SHARE * nodes.chars[0]
        return nodes.with_descendants(roots)

    def text_weights(self, nodes: NodeTable) -> np.ndarray:
        """Eq. 1's ``text_weight * parent_text_weight`` for each element's own text."""
        tag_weight = np.where(
            nodes.tag_mask(HEADING_TAGS),
            self.heading_weight,
            np.where(nodes.tag_mask(BOLD_TAGS), self.bold_weight, 1.0),
        )
        parent_weight = np.where(nodes.parent >= 0, tag_weight[np.maximum(nodes.parent, 0)], 1.0)
        length_weight = np.where(nodes.own_chars >= self.long_text_length, self.long_text_weight, 1)
        return tag_weight * length_weight * parent_weight

    def teasers(self, document: Document, counted: np.ndarray) -> np.ndarray:
        """Step 3's teasers: the innermost non-inline element whose text ends in "Read
        more" or "..." (short, not a heading, its parent holding a link), marked with its
        parent when that is short too."""
        nodes = document.nodes
        endings = document.last_texts
        candidates = np.flatnonzero(
            counted & (nodes.chars > 0) & (nodes.chars <= self.max_teaser_length)
        ).tolist()
        verdicts = {text: ends_like_teaser(text) for text in {endings[n] for n in candidates}}
        found = np.asarray([n for n in candidates if verdicts[endings[n]]], dtype=np.int64)
        # An element whose ending is that of a non-inline element inside it is not the
        # one the phrase belongs to: only the innermost counts.
        outer = nodes.nearest_ancestor(counted)[found]
        pairs = zip(outer.tolist(), found.tolist(), strict=True)
        same_end = np.fromiter(
            (a >= 0 and endings[a] == endings[f] for a, f in pairs), bool, found.size
        )
        found = np.setdiff1d(found, outer[same_end])
        parents = nodes.parent[found]
        keep = (parents >= 0) & (nodes.link_tags[np.maximum(parents, 0)] > 0)
        found = found[keep & ~nodes.tag_mask(HEADING_TAGS)[found]]
        marked = np.zeros(len(nodes), dtype=bool)
        marked[found] = True
        parents = nodes.parent[found]
        marked[parents[nodes.chars[parents] <= 2 * self.max_teaser_length]] = True
        return marked

    @staticmethod
    def onclick(document: Document) -> np.ndarray:
        """Elements with an ``onclick`` handler (step 3), page-wide wrappers excepted."""
        nodes = document.nodes
        return document.onclick & (nodes.chars <= PAGE_WRAPPER_SHARE * nodes.chars[0])

    def run(self, document: Document) -> Labelling:
        nodes = document.nodes
        removed = self.removed(nodes)
        counted = ~nodes.tag_mask(INLINE_TEXT_TAGS) & ~removed
        links = nodes.with_descendants(
            nodes.is_link | self.onclick(document) | self.teasers(document, counted)
        )
        weight = self.text_weights(nodes) * ~removed
        own_weighted = nodes.own_chars * weight
        own_weighted_links = np.where(links, nodes.own_chars, nodes.own_link_chars) * weight
        ratio, text_length, link_length = tag_ratio(
            nodes, own_weighted, own_weighted_links, counted
        )
        document.check_deadline("TextSweeper's ratios")
        best = float(ratio.max())
        if best <= 0:
            return dom_labelling(document, np.zeros(len(nodes), dtype=bool), ratio, best)
        threshold = self.tolerance * best
        root = common_ancestor(nodes, np.flatnonzero(ratio >= threshold))
        in_result = np.zeros(len(nodes), dtype=bool)
        in_result[root : nodes.end[root]] = True
        with np.errstate(divide="ignore", invalid="ignore"):
            link_share = np.where(text_length > 0, link_length / text_length, 0.0)
        swept = (text_length < self.min_text_length) | (link_share > self.max_link_density)
        swept &= in_result & counted
        swept[root] = False  # the common path itself is the result, not a block inside it
        content = in_result & ~removed & ~nodes.with_descendants(swept)
        return dom_labelling(document, content, ratio, threshold)
