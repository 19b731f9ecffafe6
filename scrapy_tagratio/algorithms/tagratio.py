"""The project's default: CECTD's signals combined per text block by a linear model.

CECTD-DS (:mod:`.cetd`) finds the content well (recall 0.97 on the development set) but
keeps too much (precision 0.70): Algorithm 2 marks the max-DensitySum node under *every*
node above the threshold, so sidebars, footers, comment threads, captions and teaser
boxes with dense text come along (DESIGN.md section 8). The papers leave the combination
of their signals open; this algorithm decides per *text block* (the nearest block-level
element of each piece of text) from:

* the CETD signals: composite text density (Definition 2) of the block, its margin over
  the DensitySum threshold (4.1-4.2), whether CECTD-DS marks it (Algorithm 2), the
  DensitySum of its parent relative to the page's maximum (Definition 3), its depth
  relative to the max-DensitySum node;
* the link share of its text (CETD's LC/C, TextSweeper's link text);
* its length, its kind (heading, paragraph, list item, table cell) and its position;
* page furniture around it: a ``nav``/``aside``/``footer``/``form``/``figure``... ancestor,
  or an ancestor whose class/id/role words name a boilerplate region (comments, share
  bars, related links, newsletters, captions; class words are the vocabulary of web
  templates, English whatever the page's language). Nothing on the path from the body
  to the max-DensitySum node counts: a hint on the article's own container
  (``class="post has-sidebar"``) says nothing about its parts.

A logistic model turns these 14 features into the probability that the block is main
content; blocks at or above ``threshold`` are kept. Its weights were fitted on the
labelled blocks of the trafilatura-eval development set by ``benchmarks/train_tagratio.py``
(which prints them, with its 5-fold cross-validated F-score: rerun it to refit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
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
from .cetd import CECTD, density_sum, extract_content

__all__ = ["FEATURES", "TagRatio", "block_features", "content_probability", "hint_flags"]

#: Elements that hold page furniture, not article text.
BOILERPLATE_TAGS = frozenset(
    {"nav", "aside", "footer", "form", "menu", "button", "select", "figure", "figcaption",
     "time", "address"}
)
#: Class/id/role words of boilerplate regions (the vocabulary of web templates, which is
#: English whatever the page's language): a hint names such a region when one of its
#: words starts with one of these (regular expressions, each starting with a letter).
BOILERPLATE_WORDS = (
    "comment", "share", "sharing", "social", "related", "recommend", "newsletter", "subscri",
    "sidebar", "widget", "footer", "breadcrumb", "nav", "menu", "promo", "sponsor", "advert",
    "banner", "cookie", "consent", "popup", "modal", "paywall", "tags", "taglist", "author",
    "bio", "byline", "pagination", "pager", "complementary", "contentinfo", "disqus",
    "outbrain", "taboola", "caption", "credit", "copyright", "meta", "date", "rating",
    "toolbar", "overlay", "login", "signup", "tweet", "twitter", "instagram", "embed",
    "legend", "upsell", "affiliate", "donat", "flyout", "likes", "rss", r"ads?\b",
)  # fmt: skip


def _by_first_letter(words: tuple[str, ...]) -> str:
    """The alternation of ``words`` grouped by their first letter: Python's ``re`` tries
    the branches of an alternation one by one, so grouped, a word that starts none of
    them fails after one test per letter instead of one per word (the hints of a page
    are the hot loop of :func:`hint_flags`)."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    return "|".join(f"{letter}(?:{'|'.join(rests)})" for letter, rests in groups.items())


BOILERPLATE_HINT = re.compile(rf"\b(?:{_by_first_letter(BOILERPLATE_WORDS)})")
#: Hints that mark the article body itself and overrule the above.
CONTENT_HINT = re.compile(r"\b(?:article {0,2}body|post content|entry content)\b")


@lru_cache(maxsize=1 << 16)
def _names_boilerplate(hint: str) -> bool:
    """The hint names a boilerplate region, and not the article body (which overrules).

    Class words are read as components: "menu-item" and "sd_sharing" name a menu and a
    share bar, "update" does not name a date. Cached across pages: a site's pages repeat
    their class names, so on a crawl most lookups are hits.
    """
    words = hint.replace("-", " ").replace("_", " ")
    return BOILERPLATE_HINT.search(words) is not None and CONTENT_HINT.search(words) is None


def hint_flags(nodes: NodeTable) -> np.ndarray:
    """Boolean per node: its class/id/role/itemprop names a boilerplate region (and not
    the article body). Each distinct hint of the page is read once."""
    flag_of = {hint: _names_boilerplate(hint) for hint in dict.fromkeys(nodes.hint)}
    return np.fromiter(map(flag_of.__getitem__, nodes.hint), bool, len(nodes))


#: Names of the features of :func:`block_features`, in column order.
FEATURES = (
    "log_length",
    "link_share",
    "log_density",
    "density_over_threshold",
    "marked_by_cectd",
    "under_furniture_tag",
    "under_furniture_hint",
    "depth_below_main",
    "position",
    "is_heading",
    "is_list_item",
    "is_paragraph",
    "is_table_cell",
    "parent_densitysum",
)
# Standardisation and logistic weights, printed by benchmarks/train_tagratio.py
# (990 pages, 6279 labelled blocks; cross-validated F1 0.932 at threshold 0.5).
FEATURE_MEANS = np.array(
    [4.415222, 0.234921, 4.593019, 1.633226, 0.644529, 0.20258, 0.376175, 0.223029,
     0.520396, 0.162606, 0.113235, 0.466635, 0.020704, 0.382496]
)
FEATURE_SCALES = np.array(
    [1.400497, 0.398097, 2.432623, 2.429319, 0.478656, 0.401922, 0.484425, 0.512421,
     0.256656, 0.369005, 0.316879, 0.498886, 0.142391, 0.446384]
)
WEIGHTS = np.array(
    [1.058149, -0.697769, 0.121977, 0.346589, 0.427354, -0.700658, -1.021447, 0.226692,
     -0.536745, 0.14588, 0.708418, 0.314556, 0.549228, 0.735763]
)
INTERCEPT = -1.063093


def block_features(document: Document) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Features of the page's text blocks.

    Returns ``(blocks, features, owner, threshold)``: the node indices of the blocks (the
    block-level elements that own text, in document order), a ``len(blocks) x 14`` array
    whose columns are :data:`FEATURES`, each node's block (:attr:`NodeTable.block`) and the
    CECTD threshold.
    """
    nodes = document.nodes
    n = len(nodes)
    density = CECTD().densities(nodes)
    marked, threshold = extract_content(nodes, density, 1.0)
    by_cectd = nodes.with_descendants(marked)
    sums = density_sum(nodes, density)
    main = int(np.argmax(sums))
    main_path = nodes.ancestors_or_self(main)
    furniture_tag = nodes.tag_mask(BOILERPLATE_TAGS)
    furniture_hint = hint_flags(nodes)
    under_tag = nodes.with_descendants(furniture_tag & ~main_path)
    under_hint = nodes.with_descendants(furniture_hint & ~main_path)

    owner = nodes.block
    length = np.bincount(owner, weights=nodes.own_chars, minlength=n)
    link_length = np.bincount(owner, weights=nodes.own_link_chars, minlength=n)
    blocks = np.flatnonzero(length > 0)
    parents = np.maximum(nodes.parent[blocks], 0)
    log_density = np.log1p(np.maximum(density[blocks], 0.0))
    features = np.column_stack(
        (
            np.log1p(length[blocks]),
            link_length[blocks] / np.maximum(length[blocks], 1),
            log_density,
            log_density - np.log1p(max(threshold, 0.0)),
            by_cectd[blocks],
            under_tag[blocks],
            under_hint[blocks],
            np.clip((nodes.depth[blocks] - nodes.depth[main]) / 5.0, -3.0, 3.0),
            blocks / max(n, 1),
            nodes.tag_mask(HEADING_TAGS)[blocks],
            nodes.tag_mask(("li",))[blocks],
            nodes.tag_mask(("p",))[blocks],
            nodes.tag_mask(("td", "th"))[blocks],
            sums[parents] / max(float(sums.max()), 1e-9),
        )
    ).astype(np.float64, copy=False)
    return blocks, features, owner, threshold


def content_probability(features: np.ndarray) -> np.ndarray:
    """The logistic model: probability that each block is main content (blocks taken
    65,536 at a time: a standardised copy of the whole matrix would double it)."""
    z = np.empty(len(features))
    for start in range(0, len(features), 1 << 16):
        rows = slice(start, start + (1 << 16))
        z[rows] = ((features[rows] - FEATURE_MEANS) / FEATURE_SCALES) @ WEIGHTS
    return 1.0 / (1.0 + np.exp(-(z + INTERCEPT)))


@dataclass(frozen=True)
class TagRatio(Algorithm):
    """CECTD's signals and page furniture combined per text block by a logistic model."""

    name: ClassVar[str] = "tagratio"
    summary: ClassVar[str] = (
        "default: per text block, CECTD densities, DensitySum, link share and page "
        "furniture combined by a logistic model fitted on the development set"
    )

    #: Keep blocks whose content probability reaches this value.
    threshold: float = 0.5

    def validate(self) -> None:
        check_range("threshold", self.threshold, 0.0, 1.0)

    def run(self, document: Document) -> Labelling:
        nodes = document.nodes
        n = len(nodes)
        if n == 0 or nodes.chars[0] == 0:
            return dom_labelling(document, np.zeros(n, dtype=bool), np.zeros(n), None)
        blocks, features, owner, _ = block_features(document)
        probability = np.zeros(n)
        probability[blocks] = content_probability(features)
        del features  # not held while the text is built (large pages)
        kept = probability >= self.threshold
        # Scores per node: the probability of the block it belongs to.
        return dom_labelling(document, kept[owner], probability[owner], self.threshold)
