"""One page, decoded, parsed, cleaned and walked once: the input of every algorithm.

:class:`Document` is built from ``str``, ``bytes`` (decoded as Scrapy does, with w3lib:
HTTP/meta charset, BOM, then detection) or an lxml element already parsed (what
``response.selector.root`` gives, so a Scrapy response is never parsed twice; the tree is
never modified).

Cleaning happens during the walk, before anything is counted (every paper does this):
``script``, ``style``, ``noscript``, ``template``, embedded objects, comments and processing
instructions are skipped, and so are elements hidden by ``hidden``, ``aria-hidden="true"``
or an inline ``display:none`` / ``visibility:hidden`` (CETD section 5.4 names hidden
disclaimers as its main precision loss). A ``noscript`` that holds block content is walked
into, not dropped: libxml2 can put a whole body inside an unclosed ``<noscript>``.

Two views are built lazily, once:

* :attr:`Document.nodes`, the node table of the DOM methods (CETD, TextSweeper, the
  default): numpy arrays over the kept elements of ``<body>`` in document order. A
  subtree is a contiguous range ``[i, end[i])``, so subtree sums are prefix-sum
  differences, not recursion.
* :attr:`Document.source`, the source view of CETR and CCB: the HTML source with script,
  style and comments removed, its code points, and the spans of its tags (array work over
  the code points, the same tokens a regex scan finds).

The walk is lxml's iterator (C) over the elements plus array work, without recursion, so
100,000 levels of nesting are no problem. On the 20 MB test page it holds about half the
memory the element-by-element walk it replaced held (same output on every development
page, both as parsed here and as ``lxml.html`` trees with comments); lxml's own cost per
element (proxy, attributes, text) is what remains of its time.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cached_property
from html import escape, unescape
from operator import attrgetter, methodcaller
from typing import Any

import numpy as np
from lxml import etree
from w3lib.encoding import html_to_unicode

from .errors import ExtractionError

__all__ = ["BLOCK_TAGS", "LINK_TAGS", "Document", "NodeTable", "SourceView"]

#: Elements whose subtree is never content (cleaning before any count).
SKIPPED_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
        "iframe", "object", "embed", "svg", "math", "canvas", "audio", "video", "source",
        "track", "map", "param", "frameset", "frame", "dialog",
    }
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
)
#: Elements counted as hyperlinks (CETD 4.3: buttons and drop-down lists act as links).
LINK_TAGS = frozenset({"a", "button", "select", "input"})
#: A noscript holding one of these is page content swallowed by the parser, not a fallback.
_BLOCK_CONTENT_XPATH = etree.XPath("boolean(.//p | .//article | .//main | .//h1 | .//h2)")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"%PDF", "PDF document"),
    (b"\x1f\x8b", "gzip data"),
    (b"GIF8", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"RIFF", "RIFF media"),
    (b"\x00\x00\x01\x00", "icon"),
    (b"wOFF", "web font"),
)
_CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32))

# Event kinds of the document-order stream that text and HTML output are rebuilt from.
EVENT_TEXT, EVENT_OPEN, EVENT_CLOSE = 0, 1, 2


@dataclass(frozen=True, eq=False)
class NodeTable:
    """Per-element arrays over the kept elements under ``<body>`` (index 0), document order.

    ``chars``/``link_chars``/``tags``/``link_tags`` are subtree totals: C, LC, T and LT in
    CETD's notation (Definition 1-2). ``tags`` counts descendant elements, not the node
    itself (CETD Example 2: a ``div`` holding only text has T = 0, used as 1).
    """

    tag: tuple[str, ...]
    hint: tuple[str, ...]  # lower-case class, id, role and itemprop, space-separated
    parent: np.ndarray  # int32, -1 for the root
    depth: np.ndarray  # int32
    end: np.ndarray  # int32: subtree of i is [i, end[i])
    own_chars: np.ndarray  # int64: characters of text directly inside the element
    own_link_chars: np.ndarray  # int64: of those, characters inside a link
    is_link: np.ndarray  # bool: element is a link-like tag (LINK_TAGS)
    is_block: np.ndarray  # bool
    chars: np.ndarray  # C
    link_chars: np.ndarray  # LC
    tags: np.ndarray  # T (descendant elements)
    link_tags: np.ndarray  # LT (descendant link elements, like T not counting the node)

    def __len__(self) -> int:
        return len(self.tag)

    def nearest_ancestor(self, flags: np.ndarray) -> np.ndarray:
        """Per node, its nearest strict ancestor that is flagged (-1 where none is), by
        pointer doubling: flagged nodes point to themselves, the others to their parent,
        and every round follows the pointers of the pointers (log(depth) numpy rounds)."""
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

    def subtree_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` over each element's subtree (itself included)."""
        return _subtree_sum(self.end, values)

    def with_ancestors(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` widened to every ancestor of a marked element."""
        out = mask.copy()
        frontier = np.flatnonzero(mask)
        parent = self.parent
        while frontier.size:
            up = parent[frontier]
            up = up[(up >= 0) & ~out[np.maximum(up, 0)]]
            up = np.unique(up)
            out[up] = True
            frontier = up
        return out

    def with_descendants(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` widened to every descendant of a marked element: the nodes with a
        marked node on their path to the root (themselves included)."""
        return _subtree_mask(self.end, mask)


def _subtree_sum(end: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each subtree ``[i, end[i])``: prefix-sum differences."""
    prefix = np.concatenate(([0], np.cumsum(values)))
    return prefix[end] - prefix[np.arange(len(end))]


def _subtree_mask(end: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """True inside the subtree of any flagged node (the flagged nodes included)."""
    marks = np.zeros(len(end) + 1, dtype=np.int64)
    idx = np.flatnonzero(flags)
    np.add.at(marks, idx, 1)
    np.add.at(marks, end[idx], -1)
    return np.cumsum(marks)[:-1] > 0


@dataclass(frozen=True, eq=False)
class _Walk:
    """What the one walk of a tree gives: the node table and the document-order event
    stream that text and HTML output are rebuilt from. Per event: its kind, its node (for
    text, the element owning it: a tail belongs to the parent) and, for text, the index of
    its piece in ``pieces`` (-1 for open/close). Pieces are raw text (white space is
    collapsed on output, :func:`_collapse_piece`); ``piece_chars`` are their collapsed
    lengths, the C of CETD."""

    table: NodeTable
    kinds: np.ndarray  # int8
    owners: np.ndarray  # int32
    piece: np.ndarray  # int32
    pieces: list[str]
    piece_chars: np.ndarray  # int64
    elements: list[Any]


@dataclass(frozen=True, eq=False)
class SourceView:
    """The cleaned HTML source (script, style, noscript and comments removed) and the
    ``[start, end)`` character spans of its tags, for the source-based methods (CETR, CCB).
    ``tag_names`` are lower-case names (``"a"`` for both ``<a ...>`` and ``</a>``);
    ``code_points`` are the Unicode code points of :attr:`text` (uint32), for vectorised
    character classes (white space, scripts) without a Python loop over characters."""

    text: str
    tag_starts: np.ndarray
    tag_ends: np.ndarray
    tag_names: tuple[str, ...]
    code_points: np.ndarray

    def tag_of(self) -> np.ndarray:
        """Per character of :attr:`text`, the index of the tag it lies in, -1 outside tags.

        Text and tags alternate (text before tag 0, tag 0, text before tag 1, ..., text
        after the last tag), so one ``np.repeat`` of the run labels by the run lengths
        labels every character. Not kept: eight bytes per character would stay alive as
        long as the document (a method call costs one pass)."""
        n_tags = self.tag_starts.size
        labels = np.full(2 * n_tags + 1, -1, dtype=np.int64)
        labels[1::2] = np.arange(n_tags)
        return np.repeat(labels, span_run_lengths(self.tag_starts, self.tag_ends, len(self.text)))

    def tags_named(self, names: Collection[str]) -> np.ndarray:
        """Boolean per tag: its name is one of ``names``."""
        return np.fromiter(map(names.__contains__, self.tag_names), bool, len(self.tag_names))

    def is_tag_char(self) -> np.ndarray:
        """Boolean per character of :attr:`text`: inside a tag (code) or not (content)."""
        return self.tag_of() >= 0

    def anchor_depth_mask(self) -> np.ndarray:
        """Boolean per character: inside an ``<a>`` element (its tags and text)."""
        is_anchor = self.tags_named(("a",))
        if not is_anchor.any():
            return np.zeros(len(self.text), dtype=bool)
        starts = self.tag_starts[is_anchor]
        closing = self.code_points[starts + 1] == 0x2F  # "</a"
        # Depth +1 at an opening tag's start, -1 at a closing tag's end. Openings are
        # marked first: a closing tag can end where the next opening starts ("</a><a>").
        marks = np.zeros(len(self.text) + 1, dtype=np.int32)
        marks[starts[~closing]] = 1
        marks[self.tag_ends[is_anchor][closing]] -= 1
        return np.cumsum(marks, dtype=np.int32)[:-1] > 0


def span_run_lengths(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    """Lengths of the runs that sorted, disjoint spans ``[starts[i], ends[i])`` cut
    ``range(size)`` into: the gap before span 0, span 0, the gap before span 1, ...,
    the gap after the last span (``2 * len(starts) + 1`` runs, gaps possibly empty).
    ``np.repeat`` of one label per run by these lengths labels every position."""
    bounds = np.empty(2 * starts.size + 2, dtype=np.int64)
    bounds[0], bounds[-1] = 0, size
    bounds[1:-1:2] = starts
    bounds[2:-1:2] = ends
    return np.diff(bounds)


def _code_at(codes: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``codes[positions]``, 0 for positions past the end."""
    return np.where(positions < codes.size, codes[np.minimum(positions, codes.size - 1)], 0)


def _tag_spans(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``[start, end)`` spans of the matches of :data:`_SOURCE_TAG` in the text whose
    code points are ``codes``, with array operations instead of a scan.

    A match starts at ``<`` or ``</`` followed by an ASCII letter and ends after the next
    ``>`` (at the end of the text if none follows). A scan resumes after each match, so a
    candidate start inside an earlier match, which shares that match's next ``>``, is no
    match: of each group of candidates with the same end only the first counts."""
    opens = np.flatnonzero(codes == 0x3C)
    name_at = opens + 1 + (_code_at(codes, opens + 1) == 0x2F)  # the name's first character
    folded = _code_at(codes, name_at) | 0x20  # ASCII upper case to lower; no other to a-z
    starts = opens[(folded >= 0x61) & (folded <= 0x7A)]
    closers = np.flatnonzero(codes == 0x3E)
    ends = np.append(closers + 1, codes.size)[np.searchsorted(closers, starts)]
    first = np.ones(starts.size, dtype=bool)
    first[1:] = ends[1:] != ends[:-1]
    return starts[first], ends[first]


#: Comments, raw-text elements, CDATA sections, processing instructions and the doctype,
#: each up to its closer or the end of the text. The bodies are the unrolled form of
#: ``.*?(?:CLOSER|\Z)``: runs of characters that cannot start the closer, and any one that
#: can but does not, so the scan moves in a character-class loop instead of trying the
#: closer at every character (four times faster; same matches).
_SOURCE_JUNK = re.compile(
    r"<!--[^-]*(?:-(?!->)[^-]*)*(?:-->|\Z)"
    r"|<(script|style|noscript|template)\b[^>]*>[^<]*(?:<(?!/\1\s*>)[^<]*)*(?:</\1\s*>|\Z)"
    r"|<!\[CDATA\[[^\]]*(?:\](?!\]>)[^\]]*)*(?:\]\]>|\Z)"
    r"|<\?[^?]*(?:\?(?!>)[^?]*)*(?:\?>|\Z)"
    r"|<!doctype[^>]*>",
    re.I | re.S,
)
_SOURCE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9:_-]*)[^>]*>?")


_PARENT = methodcaller("getparent")
_TAG = attrgetter("tag")
_TEXT = attrgetter("text")
_TAIL = attrgetter("tail")
_ITEMS = methodcaller("items")
_MAY_HIDE = frozenset({"hidden", "aria-hidden", "style"})
#: Code points that ``str.split()`` splits on (all below U+3001), as a lookup table.
_IS_SPACE = np.array([chr(c).isspace() for c in range(0x3002)])
_CHUNK_CHARS = 1 << 20


class _TagNames(dict[str, str]):
    """Tag as lxml gives it -> lower-case local name (namespace dropped); one shared
    string per distinct tag."""

    def __missing__(self, tag: str) -> str:
        if len(self) > 4096:  # bounded: a page can invent any number of tag names
            self.clear()
        name = self[tag] = tag.rsplit("}", 1)[-1].lower()
        return name


_TAG_NAMES = _TagNames()


def _tree_shape(parents: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parent, depth and subtree end of every element, from the parents in document
    order (``parents[0]``, the walk's root, is ignored: its parent is -1)."""
    n = len(parents)
    parents[0] = -1
    depth = [0] * n
    for i in range(1, n):
        depth[i] = depth[parents[i]] + 1
    size = [1] * n
    for i in range(n - 1, 0, -1):
        size[parents[i]] += size[i]
    return (
        np.asarray(parents, dtype=np.int64),
        np.asarray(depth, dtype=np.int64),
        np.arange(n, dtype=np.int64) + np.asarray(size, dtype=np.int64),
    )


def _read_attributes(elements: list[Any]) -> tuple[tuple[str, ...], list[int]]:
    """Per element, its hint: class, id, role and itemprop lower-cased and space-separated
    (``""`` when it has no attributes; equal hints share one string); and the positions
    of the hidden elements (``hidden``, ``aria-hidden="true"``, inline ``display:none`` or
    ``visibility:hidden``). One ``items()`` call per element: every lxml attribute access
    costs about as much."""
    hints: list[str] = []
    hidden: list[int] = []
    shared: dict[str, str] = {"": ""}
    for position, items in enumerate(map(_ITEMS, elements)):
        if not items:
            hints.append("")
            continue
        attrib = dict(items)
        get = attrib.get
        hint = f"{get('class', '')} {get('id', '')} {get('role', '')} {get('itemprop', '')}"
        hints.append(shared.setdefault(hint, hint.lower()))
        if not _MAY_HIDE.isdisjoint(attrib) and _is_hidden(attrib):
            hidden.append(position)
    return tuple(hints), hidden


def _collapsed_lengths(pieces: list[str]) -> np.ndarray:
    """Per (non-empty) piece, ``len(" ".join(piece.split()))``, for all pieces at once:
    its non-space characters plus one space between each two words. Pieces are taken
    about a million characters at a time, which bounds the temporary arrays."""
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces))
    ends = np.cumsum(lengths)
    out = np.empty(len(pieces), dtype=np.int64)
    first = 0
    while first < len(pieces):
        last = int(np.searchsorted(ends, ends[first] + _CHUNK_CHARS, side="right"))
        last = max(last, first + 1)
        points = np.frombuffer(
            "".join(pieces[first:last]).encode("utf-32-le", "surrogatepass"), dtype="<u4"
        )
        solid = ~_IS_SPACE[np.minimum(points, len(_IS_SPACE) - 1)]
        starts = np.concatenate(([0], np.cumsum(lengths[first:last - 1])))
        word_start = solid.copy()
        word_start[1:] &= ~solid[:-1]
        word_start[starts] = solid[starts]
        words = np.add.reduceat(word_start, starts, dtype=np.int64)
        out[first:last] = np.add.reduceat(solid, starts, dtype=np.int64) + np.maximum(
            words - 1, 0
        )
        first = last
    return out


def _collapse_piece(raw: str) -> str:
    """A text piece as output: inner white space collapsed to one space, a space kept at
    either end that had white space (it separates words of neighbouring inline
    elements); a blank piece is one space."""
    core = " ".join(raw.split())
    if not core:
        return " "
    return f"{' ' if raw[0].isspace() else ''}{core}{' ' if raw[-1].isspace() else ''}"


def _is_hidden(attrib: dict[str, str]) -> bool:
    if "hidden" in attrib or attrib.get("aria-hidden", "").strip().lower() == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def _sniff_binary(data: bytes) -> str | None:
    """Name of the binary format ``data`` looks like, or None for text."""
    head = data[:2048].lstrip()
    for signature, name in _BINARY_SIGNATURES:
        if head.startswith(signature):
            return name
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16/32 BOM: NUL bytes are text
        return None
    sample = data[:4096]
    if sample and sum(map(sample.count, _CONTROL_BYTES)) > 0.1 * len(sample):
        return "binary data"
    return None


def _detect_encoding(data: bytes) -> str | None:
    """Scrapy's fallback when neither HTTP, BOM nor meta names a charset
    (``TextResponse._auto_detect_fun``): UTF-8 if the bytes decode as UTF-8, else
    charset-normalizer's best guess (a dependency of Scrapy, used when present)."""
    try:
        data.decode("utf-8")
    except UnicodeError:
        pass
    else:
        return "utf-8"
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - Scrapy installs it
        return None
    match = from_bytes(data).best()
    return match.encoding if match else None


def decode_html(data: bytes, content_type: str | None = None) -> str:
    """Decode page bytes as Scrapy does: HTTP charset, BOM, meta charset, then detection."""
    kind = _sniff_binary(data)
    if kind is not None:
        raise ExtractionError(f"input is {kind}, not HTML", kind="not_html")
    _, text = html_to_unicode(content_type, data, auto_detect_fun=_detect_encoding)
    return text


_PARSER = etree.HTMLParser(
    encoding="utf-8", remove_comments=True, remove_pis=True, huge_tree=True, no_network=True,
    default_doctype=False,
)


def parse_html(text: str) -> Any:
    """Parse decoded HTML with lxml's HTML parser (the tree type Scrapy's selectors use)."""
    text = _XML_DECLARATION.sub("", text.replace("\x00", ""), count=1)
    if not text.strip():
        return etree.fromstring(b"<html><body></body></html>", parser=_PARSER)
    root = etree.fromstring(text.encode("utf-8", "replace"), parser=_PARSER)
    if root is None:
        return etree.fromstring(b"<html><body></body></html>", parser=_PARSER)
    return root


class Document:
    """A parsed, cleaned page and its lazily built views. Build with :meth:`from_input`."""

    def __init__(
        self,
        root: Any,
        *,
        source: str | None = None,
        url: str | None = None,
        deadline: float | None = None,
    ) -> None:
        self.root = root
        self.url = url
        self.deadline = deadline
        self._source_text = source

    @classmethod
    def from_input(
        cls,
        html: str | bytes | Any,
        *,
        url: str | None = None,
        content_type: str | None = None,
        max_bytes: int | None = None,
        deadline: float | None = None,
    ) -> Document:
        """Build a Document from ``str``, ``bytes`` or an lxml element/tree.

        Raises :class:`ExtractionError` for binary input or input above ``max_bytes``.
        """
        if isinstance(html, (bytes, bytearray, memoryview)):
            data = bytes(html)
            if max_bytes is not None and len(data) > max_bytes:
                raise ExtractionError(
                    f"page has {len(data)} bytes, above max_bytes={max_bytes}", kind="too_large"
                )
            text = decode_html(data, content_type)
            return cls(parse_html(text), source=text, url=url, deadline=deadline)
        if isinstance(html, str):
            if max_bytes is not None and len(html) > max_bytes:
                raise ExtractionError(
                    f"page has {len(html)} characters, above max_bytes={max_bytes}",
                    kind="too_large",
                )
            return cls(parse_html(html), source=html, url=url, deadline=deadline)
        root = html.getroot() if hasattr(html, "getroot") else html
        if not hasattr(root, "iter") or not hasattr(root, "attrib"):
            raise ExtractionError(
                f"cannot extract from {type(html).__name__}: give str, bytes or an lxml element"
            )
        return cls(root, url=url, deadline=deadline)

    def check_deadline(self, stage: str) -> None:
        """Raise :class:`ExtractionError` when the time budget of this page is spent."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise ExtractionError(f"time budget exceeded during {stage}", kind="time_budget")

    # ------------------------------------------------------------------ the walk
    @cached_property
    def body(self) -> Any:
        """The ``<body>`` element, or the root where there is none (fragments, framesets)."""
        if self.root.tag == "body":
            return self.root
        body = self.root.find("body")
        if body is None:
            body = self.root.find(".//body")
        return body if body is not None else self.root

    @cached_property
    def _walk(self) -> _Walk:
        # lxml iterates the tree in C, in document order; Python touches each element only
        # through C-level maps and two integer loops, the rest is array work (this is the
        # hot path of every DOM method).
        body = self.body
        elements: list[Any] = list(body.iter(etree.Element))
        n = len(elements)
        tags = list(map(_TAG_NAMES.__getitem__, map(_TAG, elements)))
        index = dict(zip(elements, range(n), strict=True))
        parent, depth, end = _tree_shape(list(map(index.get, map(_PARENT, elements))))
        self.check_deadline("the DOM walk")

        # Cleaning: the subtrees of skipped and hidden elements go, their tails stay.
        skip = np.fromiter(map(SKIPPED_TAGS.__contains__, tags), bool, n)
        for i in np.flatnonzero(skip).tolist():
            if tags[i] == "noscript" and _BLOCK_CONTENT_XPATH(elements[i]):
                skip[i] = False
        hints, hidden = _read_attributes(elements)
        skip[hidden] = True
        skip[0] = False
        keep = ~_subtree_mask(end, skip)
        kept_before = np.concatenate(([0], np.cumsum(keep)))

        # Text that is neither an element's text nor a kept element's tail: the tails of
        # skipped elements and of comments and processing instructions. Each belongs to
        # its parent and comes just before the element at ``at`` (index over all elements);
        # ``rank`` orders several at one place.
        roots = np.flatnonzero(skip)
        roots = roots[keep[parent[roots]]]
        root_tails = [elements[i].tail for i in roots.tolist()]
        roots = roots[np.fromiter(map(bool, root_tails), bool, roots.size)]
        loose_parent, loose_at, loose_rank = [parent[roots]], [end[roots]], [2 * end[roots] - 1]
        loose_texts: list[str] = [tail for tail in root_tails if tail]
        for other in body.iter(etree.Comment, etree.ProcessingInstruction, etree.Entity):
            owner = index[other.getparent()]
            if other.tail and keep[owner]:
                previous = next(other.itersiblings(etree.Element, preceding=True), None)
                at = end[index[previous]] if previous is not None else owner + 1
                loose_parent.append(np.array([owner]))
                loose_at.append(np.array([at]))
                loose_rank.append(np.array([2 * at]))
                loose_texts.append(other.tail)

        if not keep.all():
            kept = np.flatnonzero(keep).tolist()
            elements = [elements[i] for i in kept]
            tags = [tags[i] for i in kept]
            hints = tuple(hints[i] for i in kept)
            parent, depth, end = (
                np.where(parent[keep] >= 0, kept_before[parent[keep]], -1),
                depth[keep],
                kept_before[end[keep]],
            )
        m = len(elements)
        is_link = np.fromiter(map(LINK_TAGS.__contains__, tags), bool, m)
        link_from = is_link.copy()
        link_from[0] = False  # the walk starts outside any link
        in_link = _subtree_mask(end, link_from)

        texts = list(map(_TEXT, elements))
        tails = list(map(_TAIL, elements))
        tails[0] = None  # the body's tail is outside the body
        with_text = np.flatnonzero(np.fromiter(map(bool, texts), bool, m))
        with_tail = np.flatnonzero(np.fromiter(map(bool, tails), bool, m))
        loose_owner = kept_before[np.concatenate(loose_parent)]
        pieces = [texts[i] for i in with_text.tolist()]
        pieces += [tails[i] for i in with_tail.tolist()]
        pieces += loose_texts
        del texts, tails, index
        piece_owner = np.concatenate((with_text, parent[with_tail], loose_owner))
        piece_chars = _collapsed_lengths(pieces)

        # The event stream in document order, by sorting on (place, then nesting):
        # before element j come the closes (deepest first, each followed by its tail) of
        # the subtrees ending at j and the loose text in between, then j opens and its
        # text follows.
        positions = np.arange(m)
        count = len(pieces)
        n_text, n_tail = with_text.size, with_tail.size
        n_loose = len(loose_texts)
        place = np.concatenate(
            (positions, with_text, end, end[with_tail], kept_before[np.concatenate(loose_at)])
        ).astype(np.int32)
        opening = np.repeat(np.array([1, 0], np.int8), [m + n_text, m + n_tail + n_loose])
        nesting = -np.concatenate(
            (np.zeros(m + n_text, np.int32), depth, depth[with_tail], depth[loose_owner] + 1),
            dtype=np.int32,
        )
        within = np.repeat(np.array([0, 1, 0, 1, 2], np.int8), [m, n_text, m, n_tail, n_loose])
        rank = np.concatenate(
            (np.zeros(2 * m + n_text + n_tail, np.int64), *loose_rank)
        ).astype(np.int32)
        order = np.lexsort((rank, within, nesting, opening, place))
        del place, opening, nesting, within, rank
        kinds = np.repeat(
            np.array([EVENT_OPEN, EVENT_TEXT, EVENT_CLOSE, EVENT_TEXT], np.int8),
            [m, n_text, m, count - n_text],
        )[order]
        owners = np.concatenate((positions, with_text, positions, piece_owner[n_text:]))
        piece = np.concatenate(
            (np.full(m, -1), np.arange(n_text), np.full(m, -1), np.arange(n_text, count))
        )

        own = np.bincount(piece_owner, weights=piece_chars, minlength=m).astype(np.int64)
        own_link = np.bincount(
            piece_owner, weights=piece_chars * in_link[piece_owner], minlength=m
        ).astype(np.int64)
        prefix_link_tags = np.concatenate(([0], np.cumsum(is_link)))
        table = NodeTable(
            tag=tuple(tags),
            hint=hints,
            parent=parent.astype(np.int32),
            depth=depth.astype(np.int32),
            end=end.astype(np.int32),
            own_chars=own,
            own_link_chars=own_link,
            is_link=is_link,
            is_block=np.fromiter(map(BLOCK_TAGS.__contains__, tags), bool, m),
            chars=_subtree_sum(end, own),
            link_chars=_subtree_sum(end, own_link),
            tags=end - positions - 1,
            link_tags=prefix_link_tags[end] - prefix_link_tags[positions + 1],
        )
        return _Walk(
            table=table,
            kinds=kinds,
            owners=owners[order].astype(np.int32),
            piece=piece[order].astype(np.int32),
            pieces=pieces,
            piece_chars=piece_chars,
            elements=elements,
        )

    @property
    def nodes(self) -> NodeTable:
        """The node table (built on first use)."""
        return self._walk.table

    @property
    def elements(self) -> list[Any]:
        """The lxml elements of the node table, same order."""
        return self._walk.elements

    # ------------------------------------------------------------------ output
    def _selected_pieces(self, selected: np.ndarray) -> list[str]:
        walk = self._walk
        return [
            "\n" if i < 0 else _collapse_piece(walk.pieces[i])
            for i in walk.piece[selected].tolist()
        ]

    def text_of(self, content: np.ndarray) -> str:
        """Text of the elements marked in ``content`` (a boolean array over the node table),
        in document order; block elements start new lines; white space normalised.

        Only the text directly owned by a marked element is taken, so callers mark whole
        subtrees (see :meth:`NodeTable.with_descendants`) when they mean them.
        """
        walk = self._walk
        if not content.any():
            return ""
        selected = np.where(
            walk.kinds == EVENT_TEXT, content[walk.owners], walk.table.is_block[walk.owners]
        )
        # Event kinds need no check below: a selected open/close event is a line break.
        return normalise_text("".join(self._selected_pieces(selected)))

    def html_of(self, content: np.ndarray) -> str:
        """Cleaned HTML of the marked elements with their ancestors: tags without attributes
        (except ``href``, ``src`` and ``alt``), text of marked elements only."""
        walk = self._walk
        if not content.any():
            return ""
        table = walk.table
        keep = table.with_ancestors(content)
        selected = np.where(walk.kinds == EVENT_TEXT, content[walk.owners], keep[walk.owners])
        out: list[str] = []
        for kind, node, piece in zip(
            walk.kinds[selected].tolist(),
            walk.owners[selected].tolist(),
            walk.piece[selected].tolist(),
            strict=True,
        ):
            if kind == EVENT_TEXT:
                out.append(escape(_collapse_piece(walk.pieces[piece]), quote=False))
            elif kind == EVENT_OPEN:
                attrib = walk.elements[node].attrib
                attrs = "".join(
                    f' {name}="{escape(attrib[name])}"'
                    for name in ("href", "src", "alt")
                    if name in attrib
                )
                out.append(f"<{table.tag[node]}{attrs}>")
            elif table.tag[node] not in _VOID_TAGS:
                out.append(f"</{table.tag[node]}>")
        return "".join(out)

    @cached_property
    def full_text(self) -> str:
        """All visible text of the page (the full-text baseline)."""
        return self.text_of(np.ones(len(self.nodes), dtype=bool))

    @cached_property
    def last_texts(self) -> tuple[str, ...]:
        """Per element of the node table, the last non-blank text piece of its subtree in
        document order (white space collapsed and stripped; ``""`` for a subtree without
        text). How a block *ends* ("Read more", "...") without another walk of the tree."""
        walk = self._walk
        kinds = walk.kinds
        events = np.arange(len(kinds))
        nonblank = np.concatenate((walk.piece_chars, [0]))[walk.piece] > 0  # piece -1: none
        last_text_event = np.maximum.accumulate(np.where(nonblank, events, -1))
        open_event = np.flatnonzero(kinds == EVENT_OPEN)  # opened in node-index order
        close_event = np.empty(len(walk.table), dtype=np.int64)
        closing = np.flatnonzero(kinds == EVENT_CLOSE)
        close_event[walk.owners[closing]] = closing
        last = last_text_event[close_event]
        piece = np.where(last > open_event, walk.piece[last], -1)
        words = {i: " ".join(walk.pieces[i].split()) for i in set(piece.tolist()) - {-1}}
        words[-1] = ""
        return tuple(map(words.__getitem__, piece.tolist()))

    @cached_property
    def title(self) -> str | None:
        """``og:title``, else ``<title>``, else the first ``<h1>``; None if none has text."""
        for query in _TITLE_QUERIES:
            value = " ".join(str(query(self.root)).split())
            if value:
                return value
        return None

    @cached_property
    def source(self) -> SourceView:
        """The source view for CETR and CCB (built on first use)."""
        text = self._source_text
        if text is None:
            text = etree.tostring(self.root, method="html", encoding="unicode")
        # NUL bytes go, as in parse_html: the DOM never sees them either.
        text = _XML_DECLARATION.sub("", text.replace("\x00", ""), count=1)
        body_start = re.search(r"<body\b", text, re.I)
        if body_start is not None:
            text = text[body_start.start():]
        cleaned = _SOURCE_JUNK.sub("", text)
        codes = np.frombuffer(cleaned.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        starts, ends = _tag_spans(codes)
        return SourceView(
            text=cleaned,
            tag_starts=starts,
            tag_ends=ends,
            tag_names=tuple(map(str.lower, _SOURCE_TAG.findall(cleaned))),
            code_points=codes,
        )


_TITLE_QUERIES = tuple(
    etree.XPath(query)
    for query in (
        "string((//meta[@property='og:title'])[1]/@content)",
        "string((//title)[1])",
        "string((//h1)[1])",
    )
)
_VOID_TAGS = frozenset({"br", "hr", "img", "input", "wbr", "col", "area"})
_SPACES = re.compile(r"[^\S\n]+")
_NEWLINES = re.compile(r" ?\n[\s]*")


def normalise_text(text: str) -> str:
    """Collapse white space: runs of spaces to one space, line breaks to one newline."""
    text = _SPACES.sub(" ", text)
    return _NEWLINES.sub("\n", text).strip()


def strip_tags(fragments: Iterable[str]) -> str:
    """Text of HTML source fragments (for the source-based methods): block tags become
    line breaks, inline tags vanish (``foo<b>bar</b>`` reads ``foobar``), entities are
    decoded and white space normalised."""
    # split() puts each tag's name between the texts around it, so one comprehension over
    # the names replaces the tags (no Python callback per match, as sub() would need).
    parts = _SOURCE_TAG.split("\n".join(fragments))
    parts[1::2] = ["\n" if name.lower() in BLOCK_TAGS else "" for name in parts[1::2]]
    return normalise_text(unescape("".join(parts)))
