"""Which elements count as what, and the one cleaning rule every algorithm reads a page by.

Cleaning happens before anything is counted (every paper does this), by one rule for every
algorithm (:func:`_dropped`): ``script``, ``style``, ``noscript``,
``template``, embedded objects (``svg``, ``iframe``, ``object``, ...), comments and
processing instructions are skipped, and so are elements hidden by ``hidden`` (not
``hidden="until-found"``, which find-in-page reveals), ``aria-hidden="true"``, an inline
``display:none`` / ``visibility:hidden`` or a CSS framework's hiding class
(:data:`HIDING_CLASSES`; CETD section 5.4 names hidden disclaimers as its main precision
loss). A ``noscript`` that holds block
content is kept: libxml2 can put a whole body inside an unclosed ``<noscript>``. The node
table applies the rule to the parsed elements (:mod:`.document`), the source view to the
start tags of the source (:mod:`.source`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from .reader import active_kernel

if TYPE_CHECKING:
    from .nodetable import NodeTable

__all__ = [
    "BLOCK_TAGS", "CELL_TAGS", "HIDING", "HIDING_CLASSES", "LINK_TAGS", "SKIPPED_TAGS",
    "VOID_TAGS", "HintTest", "TagClasses", "by_ascii_letter", "data_tables", "hidden_by_class",
    "name_codes",
]  # fmt: skip

#: Elements whose subtree is never content (cleaning before any count).
SKIPPED_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
        "iframe", "object", "embed", "svg", "math", "canvas", "audio", "video", "source",
        "track", "map", "param", "frameset", "frame", "dialog", "textarea",
    }
)  # fmt: skip


#: Class names by which the common CSS frameworks hide an element (Bootstrap, Tailwind,
#: Foundation, WordPress, Drupal): ``display: none``, or moved off screen for screen
#: readers (``sr-only``). Subscription prompts, modal dialogs and alternative layouts wait
#: in them; on the full-gold development sets 0.2% of their text is article text.
HIDING_CLASSES = frozenset(
    {
        "hidden", "d-none", "is-hidden", "u-hidden", "hide", "invisible", "visually-hidden",
        "visuallyhidden", "sr-only", "screen-reader-text", "element-invisible",
        "visually-hidden-focusable", "assistive-text", "offscreen",
    }
)  # fmt: skip
#: A component's own name for text kept for screen readers: a screen-reader class after the
#: component's prefix (``wt-cli-sr-only``, ``u-visually-hidden``, ``o-visuallyhidden``,
#: ``sharing-screen-reader-text``, ``h-offscreen``), no variant (``focus:``) and no
#: ``not-sr-only``, which shows the element. Share buttons' "opens in a new window" and
#: the labels of icons wait in them; none of their text is article text on the full-gold
#: development sets.
_SCREEN_READER_ONLY = re.compile(
    r"^[^:]*(?<!not)[-_](?:sr-only|visually-hidden|visuallyhidden|screen-reader-text|offscreen)$"
)
#: A class that shows the element again from some screen width on, a display utility under
#: breakpoints only (Tailwind's ``hidden md:block``, Bootstrap's ``d-none d-md-block``,
#: Bootstrap 3's ``visible-md-block``, Foundation's ``show-for-medium``): hidden on phones
#: only. Another utility at a breakpoint (``md:px-6``) shows nothing, and another variant
#: (``aria-expanded:block``, ``focus:not-sr-only``) shows the element only when used.
_SHOWN_AT_WIDTH = re.compile(
    r"^(?:(?:sm|md|lg|xl|2xl):)+!?(?:block|inline|inline-block|flex|inline-flex|grid"
    r"|inline-grid|table|table-[a-z-]+|contents|flow-root|list-item|not-sr-only)$"
    r"|^d-(?:sm|md|lg|xl|xxl)-(?:block|inline|inline-block|flex|inline-flex|grid|inline-grid"
    r"|table|table-cell|table-row)$"
    r"|^(?:show|visible)-"
)


@lru_cache(maxsize=1 << 16)
def hidden_by_class(hint: str) -> bool:
    """A hint (an element's class, id, role and itemprop, lower case: the node table's
    :attr:`~.nodetable.NodeTable.hint`) holds one of :data:`HIDING_CLASSES` as a whole
    word or a component's screen-reader class (:data:`_SCREEN_READER_ONLY`), and no class
    that shows the element at some screen width. Cached across pages (a site's pages
    repeat their class names)."""
    words = hint.split()
    hides = not HIDING_CLASSES.isdisjoint(words) or any(
        _SCREEN_READER_ONLY.match(word) for word in words
    )
    return hides and not any(_SHOWN_AT_WIDTH.match(word) for word in words)


def by_ascii_letter(words: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``words`` (ASCII) by their first character: per character code below 128, the
    words that start with it (what the kernel's ``starts_words`` reads)."""
    return tuple(tuple(w for w in words if ord(w[0]) == code) for code in range(128))


_NO_WORDS = by_ascii_letter(())


@dataclass(frozen=True)
class HintTest:
    """A test of hints (an element's class, id, role and itemprop words): ``names``, the
    test of one hint, and words every hint it names holds at a word's start
    (``prefixes``) or whole (``whole``), a word being a run of ``re``'s word characters
    other than ``_``, by first character (:func:`by_ascii_letter`). With the compiled
    kernel these words are looked for in one C pass over a page's hints
    (``starts_words``) and only the hints that hold one are read further: a Python call
    per hint costs more than the C test, and most hints hold none. When the words are
    ``names``'s own test (``exact``), a hint holding them is named when it passes
    ``rest`` (None: always) and ``names`` is not called; otherwise ``names`` decides.
    Every hint ``rest`` refuses holds one of ``doubts`` as a whole word (None: not
    known): with the kernel, a hint holding none is named without calling ``rest``."""

    names: Callable[[str], bool]
    prefixes: tuple[tuple[str, ...], ...]
    whole: tuple[tuple[str, ...], ...] = _NO_WORDS
    exact: bool = False
    rest: Callable[[str], bool] | None = None
    doubts: tuple[tuple[str, ...], ...] | None = None

    def named(self, hints: list[str], read: np.ndarray) -> np.ndarray:
        """Boolean per hint of ``hints``: it is one of those ``read`` (indices into
        ``hints``) and ``names`` names it."""
        test: Callable[[str], bool] | None = self.names
        named = np.zeros(len(hints), dtype=bool)
        kernel = active_kernel()
        if kernel is not None:
            read = read.astype(np.int64, copy=False)
            if self.exact and self.doubts is not None:
                # The words and the doubts in one call: 1 named, 2 for the rest to decide.
                found = kernel.words_and_doubts(hints, read, self.prefixes, self.whole, self.doubts)
                holds = np.frombuffer(found, dtype=np.uint8)
                named[read[holds == 1]] = True
                read, test = read[holds == 2], self.rest
            else:
                found = kernel.starts_words(hints, read, self.prefixes, self.whole)
                read = read[np.frombuffer(found, dtype=bool)]
                if self.exact:
                    test = self.rest
        if test is None:
            named[read] = True
        else:
            named[read] = [test(hints[i]) for i in read.tolist()]
        return named


#: :func:`hidden_by_class` as a :class:`HintTest`: every class it reads as hiding starts a
#: word with one of these ("element-invisible" with its second word), or holds the word "d"
#: or "sr" followed by another ("d-none", "sr-only", "wt-cli-sr-only").
HIDING = HintTest(
    hidden_by_class,
    by_ascii_letter(("hid", "invisible", "visually", "screen", "assistive", "offscreen")),
    by_ascii_letter(("d", "sr")),
)


#: Elements laid out as blocks: text of neighbouring blocks is separated by a newline.
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd",
        "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
        "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr",
        "html", "li", "main", "menu", "nav", "ol", "p", "pre", "section", "summary",
        "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "br", "legend",
        "option", "select", "textarea",
    }
)  # fmt: skip


#: Elements counted as hyperlinks (CETD 4.3: buttons and drop-down lists act as links).
LINK_TAGS = frozenset({"a", "button", "select", "input"})


#: A noscript holding one of these is page content swallowed by the parser, not a fallback.
_BLOCK_CONTENT_TAGS = frozenset({"p", "article", "main", "h1", "h2"})


#: Elements without content or closing tag (HTML's void elements).
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "frame", "hr", "img", "input", "keygen", "link",
     "meta", "param", "source", "track", "wbr"}
)  # fmt: skip


def name_codes(tags: Sequence[str]) -> tuple[np.ndarray, dict[str, int]]:
    """Per tag name, a small integer (the distinct names numbered in order of first use),
    and the map from name to code; in one C loop with the compiled kernel
    (:func:`~.reader.active_kernel`)."""
    kernel = active_kernel()
    if kernel is not None:
        found, codes = kernel.first_codes(tags)
        return np.frombuffer(found, dtype=np.intp), codes
    codes = {tag: code for code, tag in enumerate(dict.fromkeys(tags))}
    return np.fromiter(map(codes.__getitem__, tags), np.intp, len(tags)), codes


class TagClasses:
    """The tag names of a run of elements as small integers (in order of first use), so
    that each set of names (:data:`SKIPPED_TAGS`, :data:`BLOCK_TAGS`, ...) is tested once
    per distinct name and spread by one lookup, not once per element."""

    def __init__(self, tags: Sequence[str]) -> None:
        self.codes, self.numbering = name_codes(tags)
        self.names = list(self.numbering)

    def mask(self, names: Collection[str]) -> np.ndarray:
        """Boolean per element: its tag is one of ``names``."""
        table = np.fromiter(map(names.__contains__, self.names), bool, len(self.names))
        return table[self.codes]


def _dropped(
    tags: TagClasses,
    hidden: Sequence[int] | np.ndarray,
    holds_block_content: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The cleaning rule of every algorithm (the module's description), per element: dropped
    with its content when its tag is in :data:`SKIPPED_TAGS` or it is ``hidden``
    (indices), except a ``noscript`` for which ``holds_block_content(indices)`` is True
    (libxml2 can swallow the page into an unclosed ``<noscript>``). Ruby annotations
    (``rt``, the reading set above a word) are dropped too where the page has no ``rp``:
    without ``rp`` a plain-text rendering glues each reading to its word (NHK's
    子こども for 子ども); with it the page spells the fallback it wants, the reading in
    parentheses after the word (子ども（こども）), and it is kept. The node table applies
    it to the parsed elements, the source view to the start tags of the source."""
    skip = tags.mask(SKIPPED_TAGS)
    if "rt" in tags.names and "rp" not in tags.names:
        skip |= tags.mask(("rt",))
    noscripts = np.flatnonzero(tags.mask(("noscript",)))
    if noscripts.size:
        skip[noscripts] = ~holds_block_content(noscripts)
    skip[np.asarray(hidden, dtype=np.intp)] = True
    return skip


def _block_content(tags: TagClasses) -> np.ndarray:
    """Boolean per element: one of the tags whose presence marks a noscript as content."""
    return tags.mask(_BLOCK_CONTENT_TAGS)


#: Table cells.
CELL_TAGS = frozenset({"td", "th"})
#: A table holding one of these lays the page out rather than holding data.
_LAYOUT_SIGNS = (
    "table", "ul", "ol", "blockquote", "pre", "article", "section",
    "h1", "h2", "h3", "h4", "h5", "h6",
)  # fmt: skip


def data_tables(nodes: NodeTable) -> np.ndarray:
    """Boolean per node of the node table: a table that holds data, rows of cells, rather
    than laying the page out. It has at least two rows, more cells than rows, and no
    headings, lists, code, quotations, sections or other tables inside (a page laid out
    in a table holds those in its cells)."""
    tables = nodes.tag_mask(("table",))
    if not tables.any():
        return tables
    table = np.flatnonzero(tables)

    def inside(names: Collection[str]) -> np.ndarray:
        """Per table, how many of its descendants are ``names`` elements (counted in int32:
        three node-length int64 prefix sums were a large page's peak of memory)."""
        prefix = np.concatenate(([0], np.cumsum(nodes.tag_mask(names), dtype=np.int32)))
        return prefix[nodes.end[table]] - prefix[table + 1]

    rows = inside(("tr",))
    tables[table] = (inside(_LAYOUT_SIGNS) == 0) & (rows >= 2) & (inside(CELL_TAGS) > rows)
    return tables
