"""CETD: content extraction via text density (Sun, Song and Liao, SIGIR 2011).

Read beside ``cetd-text-density-sigir2011.txt``:

* Text density (Definition 1): ``TD_i = C_i / T_i`` with C the characters and T the
  descendant tags of node i (T = 0 counts as 1).
* Composite text density (Definition 2)::

      CTD_i = C_i/T_i * log_B( C_i/LC_i * T_i/LT_i ),
      B = ln( C_i/nLC_i * LC_i + LC_b/C_b * C_i + e )

  with LC/LT the link characters/tags, nLC = C - LC, ``b`` the body; every zero
  denominator is read as 1.
* A page without hyperlinks (3.2): ``LC_b = 0`` makes ``ln B = 0`` at every node, so
  every node's CTD is infinite and "we would classify such a page as not containing
  noise": the whole page is content (``linkless_page_is_content``, the paper's rule).
* DensitySum (Definition 3): the sum of the children's densities.
* Threshold (4.1-4.2, 5.5): "the threshold in actual use" is the smallest density on the
  path from the node of maximal DensitySum up to the body (at most the body's own, 4.1),
  times the coefficient ``lam`` (Figure 5; 1 in the paper). ``lam = 0`` keeps every node
  ("the recall is always 100%"); a threshold above the body's density views "the whole
  page as noise" (5.5), which any ``lam > 1`` does on pages whose body is the weakest node
  of that path (most pages).
* ExtractContent (Algorithm 2): from the body down, every node whose density reaches the
  threshold marks the max-DensitySum node of its subtree as content and is recursed
  into; the content is "extracted by keeping its ancestors and subtrees" (4.2).
* CECTD-S (4.3): composite density "weighted averaging with sibling nodes" instead of
  DensitySum; a node whose smoothed density reaches the body's density times ``lam``
  keeps its own text.

Buttons, selects and inputs count as links (4.3), see :data:`~scrapy_tagratio.document.LINK_TAGS`.

Readings where the paper leaves room:

* **Characters.** C counts the characters of each text piece with its white space
  collapsed and stripped (:class:`~scrapy_tagratio.document.NodeTable`): the space between
  a word and a link is not counted. The paper counts "all characters" of a tree built by
  Tidy, whose white-space handling it does not give; CETR counts such a space
  (:mod:`.cetr`), as its table does.
* **Ancestors keep their own text.** Keeping a marked node's ancestors keeps the text
  directly inside them (a container's text between its children), the reading under
  which ``lam = 0`` includes "all nodes in DOM" (5.5): Algorithm 2 then marks every leaf.
* **Whole layout blocks.** The text of one layout block (the nearest block-level element)
  is kept or left whole, by the majority of its characters
  (:func:`~scrapy_tagratio.algorithms.base.dom_labelling`), so that output never cuts a
  word at an inline tag (``<b>Fre</b>edom``).
* **Smoothing weights.** "Weighted averaging with sibling nodes" (4.3) gives no weights:
  1/4, 1/2, 1/4 over the previous sibling, the node and the next, renormalised at the
  ends of a sibling list.
* **Link-free CTD as a number.** Where a finite CTD is wanted for a page without links
  (the default algorithm's features, or ``linkless_page_is_content=False``), ``ln B = 0``
  is read as 1: the plain logarithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..document import Document, NodeTable
from ..reader import active_kernel
from .base import (
    Algorithm,
    Labelling,
    check_bool,
    check_choice,
    check_range,
    dom_labelling,
)

__all__ = [
    "CECTD",
    "CETD",
    "CECTDSmoothing",
    "composite_text_density",
    "density_sum",
    "extract_content",
    "sibling_smoothing",
    "text_density",
]


def text_density(chars: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """Definition 1: C / T, T = 0 read as 1."""
    return chars / np.maximum(tags, 1)


def composite_text_density(
    chars: np.ndarray,
    tags: np.ndarray,
    link_chars: np.ndarray,
    link_tags: np.ndarray,
    body_chars: float,
    body_link_chars: float,
) -> np.ndarray:
    """Definition 2 over arrays of node statistics; zero denominators read as 1.

    On a page without link characters (``body_link_chars == 0``) Definition 2 is infinite
    wherever C > 0 (``ln B = 0``); :meth:`CETD.run` then keeps the whole page (3.2). This
    function returns the finite stand-in, ``ln B = 0`` read as 1 (the plain logarithm),
    for callers that need numbers (the default algorithm's features)."""
    # B = ln(x + e) with x = C/(C-LC)*LC + LCb/Cb*C >= 0, so B = 1 + ln(1 + x/e) and
    # ln(B) = log1p(log1p(x/e)): exactly 0 where x is 0 (ln(e) computed in floating point
    # may round below 1, and its logarithm to a tiny negative divisor).
    scaled, argument, density = _density_terms(
        chars, tags, link_chars, link_tags, body_link_chars / (body_chars or 1.0)
    )
    log_base = np.log1p(np.log1p(scaled))
    log_argument = np.log(argument)  # 0 where the argument is 0 (ln(1) is exactly 0)
    # log_B(x) = ln(x) / ln(B); B >= 1, and ln(B) = 0 (no links at all) is read as 1.
    return density * log_argument / np.where(log_base == 0, 1.0, log_base)


def _density_terms(
    chars: np.ndarray,
    tags: np.ndarray,
    link_chars: np.ndarray,
    link_tags: np.ndarray,
    link_ratio: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The terms of :func:`composite_text_density` that need no logarithm, per node: the
    base's argument over e, ``(C / (C - LC) * LC + link_ratio * C) / e``; the logarithm's
    argument, ``C / LC * (T / LT)``, 1 where it is not above 0; and the text density (zero
    denominators read as 1). With the compiled kernel and int32 statistics (the node
    table's), one C pass doing the same operations in the same order (the same doubles),
    where numpy takes some twenty passes over the page's nodes."""
    kernel = active_kernel()
    if kernel is not None and all(
        values.dtype == np.int32 for values in (chars, tags, link_chars, link_tags)
    ):
        found = kernel.density_terms(
            *(np.ascontiguousarray(values) for values in (chars, link_chars, tags, link_tags)),
            link_ratio,
        )
        scaled, argument, density = (np.frombuffer(part, dtype=np.float64) for part in found)
        return scaled, argument, density
    c = chars.astype(np.float64)
    lc = link_chars.astype(np.float64)
    non_link = c - lc
    one_if_zero = lambda x: np.where(x == 0, 1.0, x)  # noqa: E731
    spread = c / one_if_zero(non_link) * lc + link_ratio * c
    argument = c / one_if_zero(lc) * (np.maximum(tags, 1) / one_if_zero(link_tags.astype(float)))
    return spread / np.e, np.where(argument > 0, argument, 1.0), text_density(c, tags)


def density_sum(nodes: NodeTable, density: np.ndarray) -> np.ndarray:
    """Definition 3: per node, the sum of its children's densities."""
    has_parent = nodes.parent >= 0
    return np.bincount(nodes.parent[has_parent], weights=density[has_parent], minlength=len(nodes))


def _subtree_argmax(nodes: NodeTable, values: np.ndarray) -> np.ndarray:
    """Per node, the index of the largest ``values`` in its subtree (itself included).

    Ties go as in a bottom-up pass that lets a child's best replace its parent's only
    when strictly larger, visiting the children last to first: to the node that comes
    last in post-order (a node before its descendants, a later sibling's subtree before
    an earlier one's). Nodes are ranked by ``(value, post-order)`` and the best rank is
    carried up one depth level at a time, deepest first (a few dozen array operations on
    real pages; time and memory linear in the number of nodes); with the compiled kernel,
    one C pass up the tree comparing ``(value, post-order)`` pairs, the same nodes."""
    n = len(nodes)
    post_order = nodes.end - nodes.depth - 1  # descendants, then earlier subtrees first
    kernel = active_kernel()
    if kernel is not None:
        found = kernel.subtree_argmax(
            np.ascontiguousarray(nodes.parent, dtype=np.int32),
            np.ascontiguousarray(values, dtype=np.float64),
            np.ascontiguousarray(post_order, dtype=np.int64),
        )
        return np.frombuffer(found, dtype=np.int64)
    order = np.lexsort((post_order, values))
    best = np.empty(n, dtype=np.intp)
    best[order] = np.arange(n)
    by_depth = np.argsort(nodes.depth, kind="stable")
    starts = np.searchsorted(nodes.depth[by_depth], np.arange(int(nodes.depth.max(initial=0)) + 2))
    for depth in range(len(starts) - 2, 0, -1):
        level = by_depth[starts[depth] : starts[depth + 1]]
        np.maximum.at(best, nodes.parent[level], best[level])
    return order[best]


def extract_content(
    nodes: NodeTable, density: np.ndarray, sums: np.ndarray, lam: float
) -> tuple[np.ndarray, float]:
    """Sections 4.1-4.2, 5.5 and Algorithm 2 over the nodes' ``density`` and its
    DensitySum (``sums``: :func:`density_sum`, which the caller has and may read again).
    Returns the marked nodes (subtree roots whose whole subtree is content) and the
    threshold used: ``lam`` times the smallest density on the path from the
    max-DensitySum node up to the body."""
    best = _subtree_argmax(nodes, sums)
    # 4.2: the threshold in actual use is the weakest density on the path from the
    # max-DensitySum node up to the body (the body's own, 4.1, at most); 5.5 scales it.
    threshold = lam * float(density[nodes.ancestors_or_self(int(best[0]))].min())
    # ExtractContent visits the nodes whose whole path from body passes the threshold.
    visited = ~nodes.with_descendants(density < threshold)
    marked = np.zeros(len(nodes), dtype=bool)
    marked[best[visited]] = True
    return marked, threshold


def sibling_smoothing(nodes: NodeTable, values: np.ndarray) -> np.ndarray:
    """Weighted average with the previous and next sibling (weights 1/4, 1/2, 1/4,
    renormalised where a sibling is missing): CECTD-S's data smoothing (4.3)."""
    order = np.lexsort((np.arange(len(nodes)), nodes.parent))
    parent_sorted = nodes.parent[order]
    vals = values[order].astype(np.float64)
    same_prev = np.concatenate(([False], parent_sorted[1:] == parent_sorted[:-1]))
    same_next = np.concatenate((same_prev[1:], [False]))
    prev_vals = np.where(same_prev, np.roll(vals, 1), 0.0)
    next_vals = np.where(same_next, np.roll(vals, -1), 0.0)
    smoothed_sorted = (2 * vals + prev_vals + next_vals) / (2 + same_prev + same_next)
    smoothed = np.empty_like(smoothed_sorted)
    smoothed[order] = smoothed_sorted
    return smoothed


@dataclass(frozen=True)
class CETD(Algorithm):
    """CETD-DS: text density with DensitySum (the paper's variants are fields)."""

    name: ClassVar[str] = "cetd"
    summary: ClassVar[str] = (
        "CETD-DS, DOM text density C/T with DensitySum (Sun et al. 2011); keeps structure"
    )

    #: ``"td"`` text density (Definition 1) or ``"ctd"`` composite text density (Def. 2).
    density: str = "td"
    #: ``"densitysum"`` (Algorithm 2) or ``"smoothing"`` (sibling averaging, CECTD-S).
    method: str = "densitysum"
    #: Threshold coefficient lambda (section 5.5, Figure 5; 1 in the paper): scales the
    #: threshold in actual use. 0 keeps every node; above 1 most pages come out empty,
    #: as the threshold passes the body's density (5.5).
    lam: float = 1.0
    #: A page without link characters is all content (3.2: every CTD is infinite, "not
    #: containing noise"). False filters it like any other page, with the plain
    #: logarithm for ``log_B`` (``ln B = 0`` read as 1). Composite density only.
    linkless_page_is_content: bool = True

    def validate(self) -> None:
        check_choice("density", self.density, ("td", "ctd"))
        check_choice("method", self.method, ("densitysum", "smoothing"))
        check_range("lam", self.lam, 0.0, 100.0)
        check_bool("linkless_page_is_content", self.linkless_page_is_content)

    def densities(self, nodes: NodeTable) -> np.ndarray:
        """TD or CTD of every node."""
        if self.density == "td":
            return text_density(nodes.chars, nodes.tags)
        return composite_text_density(
            nodes.chars,
            nodes.tags,
            nodes.link_chars,
            nodes.link_tags,
            float(nodes.chars[0]),
            float(nodes.link_chars[0]),
        )

    @staticmethod
    def _linkless(nodes: NodeTable) -> bool:
        """The page has text but no link characters: ``ln B = 0`` at every node (3.2)."""
        return len(nodes) > 0 and nodes.link_chars[0] == 0 < nodes.chars[0]

    def run(self, document: Document) -> Labelling:
        nodes = document.nodes
        density = self.densities(nodes)
        if self.density == "ctd" and self.linkless_page_is_content and self._linkless(nodes):
            return dom_labelling(document, np.ones(len(nodes), dtype=bool), density, None)
        if self.method == "densitysum":
            sums = density_sum(nodes, density)
            marked, threshold = extract_content(nodes, density, sums, self.lam)
            # "keeping its ancestors and subtrees" (4.2), the ancestors with their text:
            # the nodes whose subtree holds a marked node, and the marked subtrees.
            content = nodes.with_descendants(marked) | (nodes.subtree_sum(marked) > 0)
        else:
            smoothed = sibling_smoothing(nodes, density)
            threshold = float(smoothed[0]) * self.lam
            content = smoothed >= threshold  # the body too: its density is the threshold
            density = smoothed
        return dom_labelling(document, content, density, threshold)


@dataclass(frozen=True)
class CECTD(CETD):
    """CECTD-DS: composite text density with DensitySum, the paper's best variant."""

    name: ClassVar[str] = "cectd"
    summary: ClassVar[str] = (
        "CECTD-DS, composite text density (links penalised) with DensitySum: the CETD paper's best"
    )
    density: str = "ctd"


@dataclass(frozen=True)
class CECTDSmoothing(CETD):
    """CECTD-S: composite text density with sibling smoothing instead of DensitySum."""

    name: ClassVar[str] = "cectd-s"
    summary: ClassVar[str] = "CECTD-S, composite text density smoothed with sibling nodes"
    density: str = "ctd"
    method: str = "smoothing"
