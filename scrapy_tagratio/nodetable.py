"""The node table: per-element arrays over the kept elements of ``<body>`` in document order,
the input of the DOM methods (CETD, TextSweeper, the default). A subtree is a contiguous
range ``[i, end[i])``, so subtree sums are prefix-sum differences, not recursion (100,000
levels of nesting are no problem). :class:`~.document.Document` builds it from the page's
events (:mod:`.reader`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .reader import active_kernel

__all__ = ["NodeTable"]


@dataclass(frozen=True, eq=False)
class NodeTable:
    """Per-element arrays over the kept elements under ``<body>`` (index 0), document order.

    ``chars``/``link_chars``/``tags``/``link_tags`` are subtree totals: C, LC, T and LT in
    CETD's notation (Definition 1-2). ``tags`` counts descendant elements, not the node
    itself (CETD Example 2: a ``div`` holding only text has T = 0, used as 1).
    """

    tag: tuple[str, ...]
    #: Per node, a small integer naming its tag, and the map from tag name to code: one
    #: pass over the names serves every tag mask of the page (the default algorithm, the
    #: overview detector and TextSweeper each ask for several). The page's numbering, made
    #: once when the page is cleaned: a name of the map may be on no node here.
    tag_codes: tuple[np.ndarray, dict[str, int]]
    #: Per node, a small integer naming its hint (:attr:`hint`), and the hints by code: a
    #: test of the page's class words reads each distinct hint once and spreads the
    #: answer by one lookup (a page repeats its class names on many nodes). The page's
    #: numbering, made once for the page's hidden classes: a hint of the list may be on
    #: no node here.
    hint_codes: tuple[np.ndarray, list[str]]
    parent: np.ndarray  # int32, -1 for the root
    depth: np.ndarray  # int32
    end: np.ndarray  # int32: subtree of i is [i, end[i])
    own_chars: np.ndarray  # int32: characters of text directly inside the element
    own_link_chars: np.ndarray  # int32: of those, characters inside a link
    is_link: np.ndarray  # bool: element is a link-like tag (LINK_TAGS)
    is_block: np.ndarray  # bool
    chars: np.ndarray  # C (int32, as the four below)
    link_chars: np.ndarray  # LC
    tags: np.ndarray  # T (descendant elements)
    link_tags: np.ndarray  # LT (descendant link elements, like T not counting the node)

    def __len__(self) -> int:
        return len(self.tag)

    def nearest_ancestor(self, flags: np.ndarray) -> np.ndarray:
        """Per node, its nearest strict ancestor that is flagged (-1 where none is), by
        pointer doubling: flagged nodes point to themselves, the others to their parent,
        and every round follows the pointers of the pointers (log(depth) numpy rounds);
        with the compiled kernel, one C pass in document order (parents come first)."""
        kernel = active_kernel()
        if kernel is not None:
            found = kernel.nearest_flagged(
                np.ascontiguousarray(self.parent, dtype=np.int32),
                np.ascontiguousarray(flags, dtype=bool).view(np.uint8),
            )
            return np.frombuffer(found, dtype=np.int64)
        jump = np.where(flags, np.arange(len(self)), self.parent).astype(np.int64)
        while True:
            valid = jump >= 0
            step = jump.copy()
            step[valid] = jump[jump[valid]]
            if np.array_equal(step, jump):
                break
            jump = step
        return np.where(self.parent >= 0, jump[np.maximum(self.parent, 0)], -1)

    @cached_property
    def block(self) -> np.ndarray:
        """Per node, its nearest block-level ancestor-or-self (the root counts as a
        block): the layout block whose line its text is rendered in. Built once per page
        and shared by the algorithms and the overview detector."""
        is_block = self.is_block.copy()
        if len(self):
            is_block[0] = True
        return np.where(is_block, np.arange(len(self)), self.nearest_ancestor(is_block))

    @cached_property
    def block_chars(self) -> np.ndarray:
        """Per node, the characters of text its layout block owns when the node is a
        block (:attr:`block`), 0 for the other nodes: what every per-block figure of the
        algorithms, the structure detector and the site memory starts from."""
        return np.bincount(self.block, weights=self.own_chars, minlength=len(self))

    @cached_property
    def block_link_chars(self) -> np.ndarray:
        """Per node, as :attr:`block_chars`, the characters of its block inside links."""
        return np.bincount(self.block, weights=self.own_link_chars, minlength=len(self))

    @cached_property
    def text_blocks(self) -> np.ndarray:
        """The blocks that own text (:attr:`block_chars` above 0), node indices in document
        order: the units the default algorithm scores and the overview detector measures,
        found once per page."""
        blocks = np.flatnonzero(self.block_chars > 0)
        blocks.setflags(write=False)
        return blocks

    @cached_property
    def hint(self) -> tuple[str, ...]:
        """Per node, its lower-case class, id, role and itemprop, space-separated (``""``
        without them), spelled out from :attr:`hint_codes` on first use: the algorithms
        test hints through the codes, and few pages read a node's hint itself."""
        codes, hints = self.hint_codes
        return tuple(np.array(hints, dtype=object)[codes].tolist())

    def tag_mask(self, names: Collection[str]) -> np.ndarray:
        """Boolean per node: its tag is one of ``names``."""
        return self._wanted_codes(names)[self.tag_codes[0]]

    def _wanted_codes(self, names: Collection[str]) -> np.ndarray:
        """Boolean per tag code (:attr:`tag_codes`): the code of one of ``names``."""
        codes = self.tag_codes[1]
        wanted = np.zeros(len(codes), dtype=bool)
        wanted[[codes[name] for name in names if name in codes]] = True
        return wanted

    @cached_property
    def block_tag_codes(self) -> np.ndarray:
        """Per text block (:attr:`text_blocks`), its tag's code (:attr:`tag_codes`): the
        default algorithm's tag tests of its blocks (the feature columns, the headings)
        read these, not a mask over every node."""
        return self.tag_codes[0][self.text_blocks]

    def block_tag_mask(self, names: Collection[str]) -> np.ndarray:
        """Boolean per text block (:attr:`text_blocks`): its tag is one of ``names``
        (``tag_mask(names)[text_blocks]``, without the pass over every node)."""
        return self._wanted_codes(names)[self.block_tag_codes]

    def ancestors_or_self(self, node: int) -> np.ndarray:
        """Boolean per node: it is ``node`` or one of its ancestors (the path up to the
        root), in one comparison: the subtrees ``[i, end[i])`` that contain ``node``."""
        return (np.arange(len(self)) <= node) & (self.end > node)

    def subtree_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each element's subtree (itself included)."""
        return _subtree_sum(self.end, values)

    def with_ancestors(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` widened to every ancestor of a marked element: the nodes whose subtree
        ``[i, end[i])`` holds a marked node, by one prefix count (no walk up the tree)."""
        return _subtree_flagged(self.end, mask)

    def with_descendants(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` widened to every descendant of a marked element: the nodes with a
        marked node on their path to the root (themselves included)."""
        return _subtree_mask(self.end, mask)


def _subtree_sum(end: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each subtree ``[i, end[i])``: prefix-sum differences; for
    int32 or boolean values, in one C loop with the compiled kernel (the same int64 sums)."""
    kernel = active_kernel()
    if kernel is not None and end.dtype == np.int32 and values.dtype in (np.int32, np.bool_):
        found = kernel.subtree_sums(
            np.ascontiguousarray(end), np.ascontiguousarray(values, dtype=np.int32)
        )
        return np.frombuffer(found, dtype=np.int64)
    prefix = np.concatenate(([0], np.cumsum(values)))
    return prefix[end] - prefix[:-1]


def _subtree_flagged(end: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """True where the subtree ``[i, end[i])`` holds a flagged node: its count of flags
    (:func:`_subtree_sum`) is above 0; in one C loop with the compiled kernel, which
    counts the flags as they are (no int32 copy) and writes the answer in the same pass."""
    kernel = active_kernel()
    if kernel is not None and end.dtype == np.int32 and flags.dtype == bool:
        found = kernel.subtree_flagged(
            np.ascontiguousarray(end), np.ascontiguousarray(flags).view(np.uint8)
        )
        return np.frombuffer(found, dtype=bool)
    return _subtree_sum(end, flags) > 0


def _subtree_mask(end: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """True inside the subtree of any flagged node (the flagged nodes included). Subtrees
    are nested or disjoint, so node ``j`` lies in a flagged subtree exactly when the
    furthest end of the flagged subtrees starting at or before it passes ``j``: one
    running maximum in document order (one C loop with the compiled kernel)."""
    kernel = active_kernel()
    if kernel is not None and end.dtype == np.int32 and flags.dtype == bool:
        found = kernel.subtree_mask(
            np.ascontiguousarray(end), np.ascontiguousarray(flags).view(np.uint8)
        )
        return np.frombuffer(found, dtype=bool)
    reach = np.maximum.accumulate(np.where(flags, end, 0))
    return reach > np.arange(len(end))
