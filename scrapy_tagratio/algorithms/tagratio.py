"""The project's default: CECTD-DS, then pruned of what density alone cannot tell.

CECTD-DS (:mod:`.cetd`) finds the content well (recall 0.97 on the development set) but
keeps too much (precision 0.70): Algorithm 2 marks the max-DensitySum node under *every*
node above the threshold, so sidebars, footers, comment threads, captions and teaser
boxes with dense text come along (DESIGN.md section 8). This algorithm keeps the paper's
selection and removes, inside it:

1. link lists: subtrees whose text is more than ``max_link_share`` links (the composite
   density already penalises them, but DensitySum's recursion still marks dense ones);
2. page furniture by element: ``nav``, ``aside``, ``footer``, ``form``, ``figure``...;
3. page furniture by name (``use_hints``): elements whose class/id/role words name a
   boilerplate region (comments, share bars, related links, newsletter boxes, captions),
   unless they also name the article body. Class words are the vocabulary of web
   templates, English whatever the page's language;
4. the tail (``trim_tail``): short blocks after the last long block of the content
   ("Read more", "Related articles" headings, credits), the precision loss of
   DensitySum that the CETD paper's discussion (5.5) attributes to comments and notices.

Nothing on the path from the body to the max-DensitySum node is ever pruned: a hint on
the article's own container (``class="post has-sidebar"``) says nothing about its parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..document import Document, NodeTable
from .base import Algorithm, Labelling, check_bool, check_range, dom_labelling
from .cetd import CECTD, _count_on_path, density_sum, extract_content

__all__ = ["TagRatio", "block_of", "hint_flags", "trim_tail"]

#: Elements that hold page furniture, not article text.
BOILERPLATE_TAGS = frozenset(
    {"nav", "aside", "footer", "form", "menu", "button", "select", "figure", "figcaption",
     "time", "address"}
)
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
#: Class/id/role words of boilerplate regions (the vocabulary of web templates, which is
#: English whatever the page's language).
BOILERPLATE_HINT = re.compile(
    r"\b(?:comment|share|sharing|social|related|recommend|newsletter|subscri|sidebar|"
    r"widget|footer|breadcrumb|nav|menu|promo|sponsor|advert|banner|cookie|consent|popup|"
    r"modal|paywall|tags|taglist|author|bio|byline|pagination|pager|complementary|"
    r"contentinfo|disqus|outbrain|taboola|caption|credit|copyright|meta|date|rating|"
    r"toolbar|overlay|login|signup|tweet|twitter|instagram|embed|legend|upsell|affiliate|"
    r"donat|flyout|likes|rss|(?:ad|ads)\b)"
)
#: Hints that mark the article body itself and overrule the above.
CONTENT_HINT = re.compile(
    r"\b(?:articlebody|article body|article  body|post content|entry content)\b"
)


def hint_flags(nodes: NodeTable, pattern: re.Pattern[str]) -> np.ndarray:
    """Boolean per node: its class/id/role/itemprop hint matches ``pattern``.

    One regex pass over all hints joined by newlines, mapped back to nodes by offset.
    """
    flags = np.zeros(len(nodes), dtype=bool)
    # Class words are read as components: "menu-item" and "sd_sharing" name a menu and
    # a share bar, "update" does not name a date.
    joined = "\n".join(nodes.hint).replace("-", " ").replace("_", " ")
    if not joined.strip():
        return flags
    lengths = np.fromiter((len(h) + 1 for h in nodes.hint), np.int64, len(nodes))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    hits = [m.start() for m in pattern.finditer(joined)]
    if hits:
        flags[np.searchsorted(starts, hits, side="right") - 1] = True
    return flags


def block_of(nodes: NodeTable) -> np.ndarray:
    """Per node, its nearest block-level ancestor-or-self (the root counts as a block)."""
    parent = nodes.parent.tolist()
    is_block = nodes.is_block.tolist()
    owner = list(range(len(parent)))
    for node in range(1, len(parent)):
        if not is_block[node]:
            owner[node] = owner[parent[node]]
    return np.asarray(owner, dtype=np.int64)


def trim_tail(
    nodes: NodeTable, content: np.ndarray, long_block: int, short_block: int
) -> np.ndarray:
    """``content`` without the short blocks (< ``short_block`` characters) that follow its
    last long block (>= ``long_block`` characters), blocks read in document order.

    A short block in the same container as a long one (the last paragraph of the
    article body) is part of the text and stays, unless it is a heading with no kept
    text after it: the title of a box that was pruned ("Read more", "Related").
    """
    owner = block_of(nodes)
    lengths = np.bincount(
        owner, weights=np.where(content, nodes.own_chars, 0), minlength=len(nodes)
    )
    long_blocks = np.flatnonzero(lengths >= long_block)
    if long_blocks.size == 0:
        return content
    position = np.arange(len(nodes))
    text_containers = np.zeros(len(nodes) + 1, dtype=bool)
    text_containers[nodes.parent[long_blocks]] = True
    short_tail = (position > long_blocks[-1]) & (lengths > 0) & (lengths < short_block)
    drop = short_tail & ~text_containers[nodes.parent]
    is_heading = np.fromiter((t in HEADING_TAGS for t in nodes.tag), bool, len(nodes))
    kept_text = np.flatnonzero((lengths > 0) & ~drop & ~is_heading)
    drop |= short_tail & is_heading & (position > kept_text[-1])
    return content & ~drop[owner]


@dataclass(frozen=True)
class TagRatio(Algorithm):
    """CECTD-DS content, pruned of link lists, page furniture and a short tail."""

    name: ClassVar[str] = "tagratio"
    summary: ClassVar[str] = (
        "default: CECTD-DS content pruned of link lists, page furniture (by tag and "
        "class names) and short trailing blocks"
    )

    #: Threshold coefficient on the body's composite density (CETD's lambda).
    lam: float = 1.0
    #: Subtrees whose text is more than this share links are pruned.
    max_link_share: float = 0.5
    #: Prune elements whose class/id/role names a boilerplate region.
    use_hints: bool = True
    #: Drop blocks shorter than ``short_block`` after the last block of ``long_block``.
    trim_tail: bool = True
    long_block: int = 300
    short_block: int = 100

    def validate(self) -> None:
        check_range("lam", self.lam, 0.0, 100.0)
        check_range("max_link_share", self.max_link_share, 0.0, 1.0)
        check_bool("use_hints", self.use_hints)
        check_bool("trim_tail", self.trim_tail)
        check_range("long_block", self.long_block, 0, None, integer=True)
        check_range("short_block", self.short_block, 0, None, integer=True)

    def run(self, document: Document) -> Labelling:
        nodes = document.nodes
        n = len(nodes)
        density = CECTD().densities(nodes) if n else np.zeros(0)
        if n == 0 or nodes.chars[0] == 0:
            return dom_labelling(document, np.zeros(n, dtype=bool), density, None)
        marked, threshold = extract_content(nodes, density, self.lam)
        main = np.zeros(n, dtype=bool)
        main[int(np.argmax(density_sum(nodes, density)))] = True

        link_share = nodes.link_chars / np.maximum(nodes.chars, 1)
        prune = np.fromiter((t in BOILERPLATE_TAGS for t in nodes.tag), bool, n)
        prune |= (link_share > self.max_link_share) & (nodes.chars > 0)
        if self.use_hints:
            prune |= hint_flags(nodes, BOILERPLATE_HINT) & ~hint_flags(nodes, CONTENT_HINT)
        prune &= ~nodes.with_ancestors(main)
        content = nodes.with_descendants(marked) & (_count_on_path(nodes, prune) == 0)
        if self.trim_tail:
            content = trim_tail(nodes, content, self.long_block, self.short_block)
        return dom_labelling(document, content, density, threshold)
