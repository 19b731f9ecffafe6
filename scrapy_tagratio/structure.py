"""Repeated sibling structures of a page: comment threads and teaser lists, language-free.

Density cannot tell a comment thread from an article: both are long prose with few links,
and on many blog and news pages the node of maximal DensitySum (CETD
Definition 3) lies inside the thread. What sets a thread apart is its *structure*: the
same item repeated as siblings, each holding a short author/time/permalink/reply part
(links, a ``time`` element, a button) and a longer body of unlinked prose. A teaser list
(related stories, recirculation, a listing's items) is the same kind of repetition whose
items each link to a *distinct page* through a headline (a long link text, or a link in a
heading). Neither test reads a word of the page, so it works in any language and with any
template vocabulary; what the class names say is left to the callers.

Everything is computed over the node table (:class:`~scrapy_tagratio.document.NodeTable`)
with array operations:

1. **Repeated items.** Siblings are grouped by (parent, tag): a group of at least
   :data:`MIN_REPEATS` is a repeated structure, each member an *item*. Paragraphs and
   headings are never items (an article is a run of them).
2. **Per text block**, its text and link text; a block of at most :data:`META_CHARS`
   characters that is mostly link text or holds a ``time`` element is a *meta* block
   (author, date, permalink, reply); the unlinked text of the other blocks is *body* text.
3. **Per item**, subtree sums (prefix sums over document order) give its meta blocks, body
   text, link text, major headings (``h1``-``h3``) and its first *headline* link: a link
   with at least :data:`HEADLINE_CHARS` characters of text, in a heading or holding one.
   Only the href of that link is read, for the distinct-page test.
4. An item *looks like a comment* when it holds a meta block, no major heading (article
   sections and the next stories of an endless page have them), at least
   :data:`COMMENT_BODY_CHARS` characters of body text and twice as much unlinked text as
   link text. It *looks like a teaser* when its headline link leads to another page (not
   a ``#`` anchor or a script) and holds at least :data:`HEADLINE_SHARE` of the item's
   text or sits in a heading.
5. **Per group**: a comment thread (a teaser list) has at least ``min_repeats`` items that
   look like comments (teasers), :data:`GROUP_SHARE` of its items at least; a teaser
   list's headlines lead to distinct pages (that share again). A group that qualifies as
   both is a teaser list: headlines linking away are what comments lack.

The result flags items and every node inside them (:class:`Structures`).
:meth:`Structures.without_layout` drops the groups that are the page's layout: a group one
of whose items holds more than :data:`LAYOUT_SHARE` of the page's text (columns, the main
region beside sidebars; a teaser list or thread is never most of its page). The default
algorithm reads those (on some templates the column holding article and comments is an
item of such a group, and the whole article looked like teasers); the overview detector
reads all (a story's own pane among its teasers is evidence it weighs). It describes; it
does not decide: a live blog is a repeated structure of timed posts, a forum page's thread
is its content, and callers weigh these flags with the position after the article's end.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .document import Document, NodeTable
from .reader import active_kernel

__all__ = [
    "COMMENT_BODY_CHARS",
    "GROUP_SHARE",
    "HEADLINE_CHARS",
    "LAYOUT_SHARE",
    "META_CHARS",
    "MIN_REPEATS",
    "Structures",
    "find_structures",
    "repeated_items",
]

#: Siblings of the same shape needed for a repeated structure.
MIN_REPEATS = 3
#: Characters of link text that make a link a headline (a title, not "Home" or "Reply").
HEADLINE_CHARS = 20
#: Characters of text at most in a meta block (author, date, permalink, reply line).
META_CHARS = 100
#: Unlinked characters a comment's body holds at least.
COMMENT_BODY_CHARS = 30
#: Share of a group's items that must look like comments (teasers) for the group to be a
#: thread (a teaser list), and share of distinct pages its teasers' headlines lead to.
GROUP_SHARE = 0.6
#: A teaser's headline link holds at least this share of the item's text (unless the link
#: sits in a heading): a summary may follow it, a comment's body dwarfs its author link.
HEADLINE_SHARE = 0.2
#: A group with an item holding more than this share of the page's text is the page's
#: layout (:meth:`Structures.without_layout`; design constant: "most of the page").
LAYOUT_SHARE = 0.5

#: Tags that never make an item: an article is a run of paragraphs and headings.
_NEVER_ITEMS = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "html", "body")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
#: An href that does not lead to another page.
_SAME_PAGE_PREFIXES = ("#", "javascript:")


@dataclass(frozen=True, eq=False)
class Structures:
    """Repeated sibling structures of one page, as boolean (and integer) arrays over its
    node table.

    ``group`` is each item's group number (-1 for nodes that are no item; items of one
    group are siblings of the same shape); ``comment_items``/``teaser_items`` flag the items
    of comment threads and teaser lists, and ``comment``/``teaser`` every node inside one
    (the items included). Per group number: ``sizes``, its items (as floats), and
    ``comment_groups``, whether it is a comment thread (what the overview detector's lists
    read, kept rather than counted again from the items).
    """

    group: np.ndarray  # int64
    comment_items: np.ndarray
    teaser_items: np.ndarray
    comment: np.ndarray
    teaser: np.ndarray
    sizes: np.ndarray  # float64, per group number
    comment_groups: np.ndarray  # bool, per group number

    def __post_init__(self) -> None:
        # One page's structures are shared by all who read them (find_structures keeps
        # them): nobody may write into them.
        for array in (
            self.group, self.comment_items, self.teaser_items, self.comment, self.teaser,
            self.sizes, self.comment_groups,
        ):  # fmt: skip
            array.setflags(write=False)

    @cached_property
    def repeated(self) -> np.ndarray:
        """Boolean per node: it is an item of some repeated structure (found once: the
        default algorithm reads it twice)."""
        repeated = self.group >= 0
        repeated.setflags(write=False)
        return repeated

    @cached_property
    def items(self) -> np.ndarray:
        """The items of every repeated structure (node indices, document order), found once
        per page: the default algorithm's layout test and the overview detector read them."""
        items = np.flatnonzero(self.group >= 0)
        items.setflags(write=False)
        return items

    def without_layout(self, nodes: NodeTable) -> Structures:
        """These structures less the groups that are the page's layout: a group one of
        whose items holds more than :data:`LAYOUT_SHARE` of the page's text (``nodes``,
        the page's node table) is no thread or teaser list. ``self`` when there is none."""
        items = self.items
        large = items[nodes.chars[items] > LAYOUT_SHARE * float(nodes.chars[0])]
        if not large.size:
            return self
        in_layout = np.zeros(int(self.group.max()) + 1, dtype=bool)  # per group number
        in_layout[self.group[large]] = True
        layout = in_layout[self.group] & (self.group >= 0)
        comment_items = self.comment_items & ~layout
        teaser_items = self.teaser_items & ~layout
        return Structures(
            group=self.group,
            comment_items=comment_items,
            teaser_items=teaser_items,
            comment=nodes.with_descendants(comment_items),
            teaser=nodes.with_descendants(teaser_items),
            sizes=self.sizes,
            comment_groups=self.comment_groups & ~in_layout,
        )


def repeated_items(nodes: NodeTable, min_repeats: int = MIN_REPEATS) -> np.ndarray:
    """Per node, the number of its group of repeated siblings (-1 where it is in none).

    Siblings share a group when they have the same tag; a group needs ``min_repeats``
    members, and the groups are numbered in order of their parent, then of their tag's
    code (:attr:`NodeTable.tag_codes`); in one C pass with the compiled kernel.
    Paragraphs and headings are never items. The children are not compared: a comment
    with replies holds a list its siblings lack, and the per-item tests of
    :func:`find_structures` judge what the items hold.
    """
    n = len(nodes)
    if n < min_repeats + 1:
        return np.full(n, -1, dtype=np.int64)
    codes, names = nodes.tag_codes
    candidate = (nodes.parent >= 0) & ~nodes.tag_mask(_NEVER_ITEMS)
    kernel = active_kernel()
    if kernel is not None:  # one pass over the nodes in C, the same groups and numbers
        found = kernel.sibling_groups(
            np.ascontiguousarray(nodes.parent, dtype=np.int32), codes,
            candidate.view(np.uint8), len(names), min_repeats,
        )  # fmt: skip
        return np.frombuffer(found, dtype=np.int64)
    group = np.full(n, -1, dtype=np.int64)
    index = np.flatnonzero(candidate)
    key = nodes.parent[index].astype(np.int64) * len(names) + codes[index]
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    repeated = counts[inverse] >= min_repeats
    # Group numbers in order of the groups' keys (parents in document order).
    _, numbers = np.unique(inverse[repeated], return_inverse=True)
    group[index[repeated]] = numbers.reshape(-1)
    return group


#: The tags :func:`_item_tests` tells apart, as the kernel's bits of a node's kind
#: (``ITEM_*`` in ``_kernel.pyx``): 1 a ``time`` element, 2 a heading, 4 a major heading
#: (``h1``-``h3``, which are headings too), 8 an ``<a>``.
_ITEM_KINDS = {
    "time": 1,
    **{tag: 2 for tag in _HEADINGS},
    **{tag: 6 for tag in _HEADINGS[:3]},
    "a": 8,
}


def _item_tests(nodes: NodeTable, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item (``items``, node indices), whether it looks like a comment, and its first
    headline link where that is large enough for a teaser, -1 elsewhere (steps 2 to 4 of
    the module's description); in one C pass each way with the compiled kernel (the same
    sums and comparisons)."""
    kernel = active_kernel()
    if kernel is not None:
        codes, names = nodes.tag_codes
        table = np.zeros(len(names), dtype=np.uint8)
        for name, kind in _ITEM_KINDS.items():
            if name in names:
                table[names[name]] = kind
        looks, headline = kernel.item_tests(
            nodes.end, nodes.chars, nodes.link_chars, nodes.is_link.view(np.uint8),
            nodes.block, nodes.block_chars, nodes.block_link_chars, table[codes], items,
            META_CHARS, COMMENT_BODY_CHARS, HEADLINE_CHARS, HEADLINE_SHARE,
        )  # fmt: skip
        return np.frombuffer(looks, dtype=bool), np.frombuffer(headline, dtype=np.int64)
    n = len(nodes)
    # Per text block: its text and link text; a short block that is mostly link text or
    # holds a time element is a *meta* block (author, date, permalink, reply), the rest of
    # the blocks' unlinked text is *body* text.
    owner = nodes.block
    length = nodes.block_chars
    link_length = nodes.block_link_chars
    is_time = nodes.tag_mask(("time",))
    holds_time = np.zeros(n, dtype=bool)
    holds_time[owner[is_time]] = True
    meta = (length > 0) & (length <= META_CHARS) & ((2 * link_length >= length) | holds_time)
    meta_blocks = nodes.subtree_sum(meta)
    body_chars = nodes.subtree_sum(np.where(meta, 0.0, length - link_length))
    heading = nodes.tag_mask(_HEADINGS)
    major_heading = nodes.subtree_sum(nodes.tag_mask(_HEADINGS[:3])) > 0
    in_heading = nodes.with_descendants(heading)
    has_heading_inside = nodes.subtree_sum(heading) > 0
    headline = (
        nodes.is_link
        & (nodes.tag_mask(("a",)))
        & ((nodes.chars >= HEADLINE_CHARS) | in_heading | has_heading_inside)
        & (nodes.chars > 0)
    )

    # Per item: its first headline link (the first one at or after it in document order).
    headlines = np.append(np.flatnonzero(headline), n)  # n: past the end, no link
    first_link = headlines[np.searchsorted(headlines, items)]
    found = first_link < nodes.end[items]
    first_link = np.where(found, first_link, -1)

    chars = nodes.chars[items].astype(np.float64)
    link_chars = nodes.link_chars[items].astype(np.float64)
    unlinked = chars - link_chars
    looks_comment = (
        (meta_blocks[items] >= 1)
        & ~major_heading[items]
        & (body_chars[items] >= COMMENT_BODY_CHARS)
        & (unlinked >= 2 * link_chars)
    )
    link_text = nodes.chars[np.maximum(first_link, 0)].astype(np.float64)
    large_headline = found & (
        (link_text >= HEADLINE_SHARE * chars) | in_heading[np.maximum(first_link, 0)]
    )
    return looks_comment, np.where(large_headline, first_link, -1)


#: The structures of each live page at :data:`MIN_REPEATS`: the default algorithm and the
#: overview detector both read them, and a page is measured once.
_FOUND: weakref.WeakKeyDictionary[Document, Structures] = weakref.WeakKeyDictionary()


def find_structures(document: Document, *, min_repeats: int = MIN_REPEATS) -> Structures:
    """The comment threads and teaser lists of a page (see the module's description).

    Besides the node table, reads the ``href`` of each item's first headline link (never
    an attribute per node). At the default ``min_repeats`` the result is kept for as long
    as the page lives, so every caller of one page shares one measurement.
    """
    if min_repeats != MIN_REPEATS:
        return _find_structures(document, min_repeats)
    found = _FOUND.get(document)
    if found is None:
        found = _FOUND[document] = _find_structures(document, min_repeats)
    return found


def _find_structures(document: Document, min_repeats: int) -> Structures:
    nodes = document.nodes
    n = len(nodes)
    group = repeated_items(nodes, min_repeats)
    items = np.flatnonzero(group >= 0)
    none = np.zeros(n, dtype=bool)
    if not items.size:
        no_groups = np.zeros(0)
        return Structures(
            group, none, none.copy(), none.copy(), none.copy(), no_groups, no_groups.astype(bool)
        )

    looks_comment, headline_of = _item_tests(nodes, items)
    # An item looks like a teaser when its headline is large enough (or in a heading) and
    # leads to another page: the page, as a number per distinct href (-1: none, or the
    # same page), is read only for the items whose headline is large enough.
    target_ids: dict[str, int] = {}
    targets = np.full(items.size, -1, dtype=np.int64)
    asked = np.flatnonzero(headline_of >= 0)
    hrefs = (href.strip() for href in document.hrefs(headline_of[asked]))
    targets[asked] = [
        target_ids.setdefault(target, len(target_ids))
        if target and not target.lower().startswith(_SAME_PAGE_PREFIXES)
        else -1
        for target in hrefs
    ]
    looks_teaser = targets >= 0

    # Per group: the shares of items that look like comments / teasers, and how many
    # distinct pages the teasers' headlines lead to.
    number = group[items]
    n_groups = int(number.max()) + 1
    size = np.bincount(number, minlength=n_groups).astype(np.float64)
    comments = np.bincount(number, weights=looks_comment, minlength=n_groups)
    teasers = np.bincount(number, weights=looks_teaser, minlength=n_groups)
    comment_share, teaser_share = comments / size, teasers / size
    pairs = number[looks_teaser] * max(len(target_ids), 1) + targets[looks_teaser]
    pairs = np.fromiter(set(pairs.tolist()), np.int64)  # distinct (few: np.unique costs more)
    distinct = np.bincount(pairs // max(len(target_ids), 1), minlength=n_groups) / size
    teaser_group = (teasers >= min_repeats) & (teaser_share >= GROUP_SHARE)
    teaser_group &= distinct >= GROUP_SHARE
    comment_group = (comments >= min_repeats) & (comment_share >= GROUP_SHARE) & ~teaser_group

    comment_items = np.zeros(n, dtype=bool)
    teaser_items = np.zeros(n, dtype=bool)
    comment_items[items] = comment_group[number]
    teaser_items[items] = teaser_group[number]
    return Structures(
        group=group,
        comment_items=comment_items,
        teaser_items=teaser_items,
        comment=nodes.with_descendants(comment_items),
        teaser=nodes.with_descendants(teaser_items),
        sizes=size,
        comment_groups=comment_group,
    )
