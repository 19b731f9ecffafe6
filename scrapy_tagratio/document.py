"""One page, decoded, read, cleaned and walked once: the input of every algorithm.

:class:`Document` is built from ``str``, ``bytes`` (decoded as Scrapy does, with w3lib:
HTTP/meta charset, BOM, then detection) or an lxml element already parsed (what
``response.selector.root`` gives; it is serialised, read like any page and never
modified).

The page is read by lxml's HTML parser as events (:mod:`.reader`): no tree is built, so
a page costs a fraction of the memory a tree takes (the 20 MB test page: about 13x its
size in all, where libxml2's tree alone took 9x), and no Python object per element has to
be visited. :attr:`Document.root` parses a tree on request for callers who want one.

Cleaning happens before anything is counted (every paper does this), by one rule for
every algorithm (:func:`_dropped`): ``script``, ``style``, ``noscript``, ``template``,
embedded objects (``svg``, ``iframe``, ``object``, ...), comments and processing
instructions are skipped, and so are elements hidden by ``hidden``,
``aria-hidden="true"`` or an inline ``display:none`` / ``visibility:hidden`` (CETD section
5.4 names hidden disclaimers as its main precision loss). A ``noscript`` that holds block
content is kept: libxml2 can put a whole body inside an unclosed ``<noscript>``. The node
table applies the rule to the parsed elements; the source view to the start tags of the
source, an element running to its matching closing tag (a start tag never closed drops
only itself: where the parser would end it is not in the source).

Two views are built lazily, once:

* :attr:`Document.nodes`, the node table of the DOM methods (CETD, TextSweeper, the
  default): numpy arrays over the kept elements of ``<body>`` in document order. A
  subtree is a contiguous range ``[i, end[i])``, so subtree sums are prefix-sum
  differences, not recursion (100,000 levels of nesting are no problem).
* :attr:`Document.source`, the source view of CETR and CCB: the HTML source of the body,
  cleaned by the same rule, its code points, and the spans of its tags (array work over
  the code points, the same tokens a regex scan finds).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from html import escape, unescape
from typing import Any

import numpy as np
from lxml import etree
from w3lib.encoding import html_to_unicode

from .errors import ExtractionError
from .reader import (
    EVENT_CLOSE,
    EVENT_OPEN,
    EVENT_TEXT,
    KEPT_ATTRIBUTES,
    PageEvents,
    _is_hidden,
    parse_html,
    parser_input,
    read_page,
)

__all__ = ["BLOCK_TAGS", "LINK_TAGS", "Document", "NodeTable", "SourceView"]

#: Elements whose subtree is never content (cleaning before any count).
SKIPPED_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "head", "title", "meta", "link", "base",
        "iframe", "object", "embed", "svg", "math", "canvas", "audio", "video", "source",
        "track", "map", "param", "frameset", "frame", "dialog", "textarea",
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
_BLOCK_CONTENT_TAGS = frozenset({"p", "article", "main", "h1", "h2"})
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
#: Single-byte charsets (as w3lib names them) that are mistaken declarations of UTF-8.
_LEGACY_CHARSET = re.compile(r"(?:cp125\d|iso8859-\d+|latin-?1|windows-125\d|ascii)$", re.I)



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
    def tag_codes(self) -> tuple[np.ndarray, dict[str, int]]:
        """Per node, a small integer naming its tag, and the map from tag name to code:
        one pass over the names serves every tag mask of the page (the default algorithm,
        the overview detector and TextSweeper each ask for several)."""
        codes = {tag: code for code, tag in enumerate(dict.fromkeys(self.tag))}
        return np.fromiter(map(codes.__getitem__, self.tag), np.intp, len(self)), codes

    def tag_mask(self, names: Collection[str]) -> np.ndarray:
        """Boolean per node: its tag is one of ``names``."""
        node_codes, codes = self.tag_codes
        wanted = np.zeros(len(codes), dtype=bool)
        wanted[[codes[name] for name in names if name in codes]] = True
        return wanted[node_codes]

    def ancestors_or_self(self, node: int) -> np.ndarray:
        """Boolean per node: it is ``node`` or one of its ancestors (the path up to the
        root), in one comparison: the subtrees ``[i, end[i])`` that contain ``node``."""
        return (np.arange(len(self)) <= node) & (self.end > node)

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
    """The node table and the document-order event stream of the body (cleaned) that
    text and HTML output are rebuilt from. Per event: its kind, its node (for
    text, the element owning it: a tail belongs to the parent) and, for text, the index of
    its piece in ``pieces`` (-1 for open/close). Pieces are raw text (white space is
    collapsed on output), followed by one line-break marker that index -1 selects;
    ``piece_chars`` are their collapsed lengths, the C of CETD (0 for the marker)."""

    table: NodeTable
    kinds: np.ndarray  # int8
    owners: np.ndarray  # int32
    piece: np.ndarray  # int32
    pieces: np.ndarray  # object: str, the last one _BREAK
    piece_chars: np.ndarray  # int64
    #: Per node, its element's index in the page's events (:class:`PageEvents`).
    element: np.ndarray


@dataclass(frozen=True, eq=False)
class SourceView:
    """The cleaned HTML source (:func:`_dropped`'s elements and comments removed) and the
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


#: Comments, scripts and styles (code: a "<" in them starts no tag), CDATA sections,
#: processing instructions and the doctype,
#: each up to its closer or the end of the text. The bodies are the unrolled form of
#: ``.*?(?:CLOSER|\Z)``: runs of characters that cannot start the closer, and any one that
#: can but does not, so the scan moves in a character-class loop instead of trying the
#: closer at every character (four times faster; same matches).
_SOURCE_JUNK = re.compile(
    r"<!--[^-]*(?:-(?!->)[^-]*)*(?:-->|\Z)"
    r"|<(script|style)\b[^>]*>[^<]*(?:<(?!/\1\s*>)[^<]*)*(?:</\1\s*>|\Z)"
    r"|<!\[CDATA\[[^\]]*(?:\](?!\]>)[^\]]*)*(?:\]\]>|\Z)"
    r"|<\?[^?]*(?:\?(?!>)[^?]*)*(?:\?>|\Z)"
    r"|<!doctype[^>]*>",
    re.I | re.S,
)
_SOURCE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9:_-]*)[^>]*>?")
#: An attribute in a start tag of the source: name, then a double-, single- or unquoted value.
_ATTRIBUTE = re.compile(r"""([^\s"'=<>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?""")
#: Every hiding attribute (``hidden``, ``aria-hidden="true"``, ``display:none``,
#: ``visibility:hidden``) holds one of these: start tags without are not parsed.
_HIDING_WORDS = ("hidden", "none")
#: Elements the source view never drops, whatever their attributes (as the node table).
_NEVER_DROPPED = frozenset({"html", "body"})


_CHUNK_CHARS = 1 << 20
_CHUNK_EVENTS = 1 << 16


def _collapse_pieces(pieces: list[str]) -> list[str]:
    """Each piece with its white space collapsed (a run at either end kept as one space),
    by C string methods over all pieces at once: joined between markers (not white
    space, in no lxml text), collapsed, split at the markers."""
    return " ".join(_BREAK.join(("", *pieces, "")).split()).split(_BREAK)[1:-1]


def _collapsed_lengths(pieces: list[str]) -> np.ndarray:
    """Per piece, ``len(" ".join(piece.split()))``: :func:`_collapse_pieces`, stripped,
    about a million characters at a time, which bounds the word lists of ``str.split``."""
    out = np.zeros(len(pieces), dtype=np.int64)
    ends = np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)))
    first = 0
    while first < len(pieces):
        last = max(int(np.searchsorted(ends, ends[first] + _CHUNK_CHARS, side="right")), first + 1)
        collapsed = _collapse_pieces(pieces[first:last])
        out[first:last] = np.fromiter(map(len, map(str.strip, collapsed)), np.int64, last - first)
        first = last
    return out


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
    """Decode page bytes as Scrapy does: HTTP charset, BOM, meta charset, then detection.
    Raises :class:`ExtractionError` for binary data."""
    _refuse_binary(data)
    return _decode(data, content_type)


def _refuse_binary(data: bytes) -> None:
    kind = _sniff_binary(data)
    if kind is not None:
        raise ExtractionError(f"input is {kind}, not HTML", kind="not_html")


def _decode(data: bytes, content_type: str | None) -> str:
    """As Scrapy decodes, except that bytes declared in a legacy single-byte charset
    that are valid UTF-8 (and not ASCII) are read as UTF-8: re-encoded saves and
    misconfigured servers declare latin-1 over UTF-8, and trusting them gives mojibake
    ("Ã©" for "é"); real latin-1 text is almost never valid UTF-8."""
    encoding, text = html_to_unicode(content_type, data, auto_detect_fun=_detect_encoding)
    if _LEGACY_CHARSET.match(encoding) and not data.isascii():
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return text


class Document:
    """A page, read and cleaned, and its lazily built views. Build with :meth:`from_input`."""

    def __init__(
        self,
        markup: str | bytes,
        *,
        content_type: str | None = None,
        root: Any = None,
        url: str | None = None,
        deadline: float | None = None,
    ) -> None:
        """``markup``: the page as text, or as bytes (with the HTTP ``content_type``) to be
        decoded when read; see :meth:`from_input`, which also checks the input."""
        self.url = url
        self.deadline = deadline
        self._input = markup
        self._content_type = content_type
        self._root = root

    @property
    def text(self) -> str:
        """The page as text. Bytes are decoded on each use (as Scrapy decodes them), so a
        large page's text is not kept beside what is read from it: the DOM methods read it
        once, CETR and CCB once more."""
        markup = self._input
        return markup if isinstance(markup, str) else _decode(markup, self._content_type)

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
            _refuse_binary(data)
            return cls(data, content_type=content_type, url=url, deadline=deadline)
        if isinstance(html, str):
            if max_bytes is not None and len(html) > max_bytes:
                raise ExtractionError(
                    f"page has {len(html)} characters, above max_bytes={max_bytes}",
                    kind="too_large",
                )
            return cls(html, url=url, deadline=deadline)
        root = html.getroot() if hasattr(html, "getroot") else html
        if not hasattr(root, "iter") or not hasattr(root, "attrib"):
            raise ExtractionError(
                f"cannot extract from {type(html).__name__}: give str, bytes or an lxml element"
            )
        # Serialised and read like any page: libxml2 writes the tree in one pass, which
        # costs less than visiting its elements from Python.
        text = etree.tostring(root, method="html", encoding="unicode")
        return cls(text, root=root, url=url, deadline=deadline)

    def check_deadline(self, stage: str) -> None:
        """Raise :class:`ExtractionError` when the time budget of this page is spent."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise ExtractionError(f"time budget exceeded during {stage}", kind="time_budget")

    @cached_property
    def root(self) -> Any:
        """An lxml tree of the page: the one given, else parsed on first use (the analysis
        does not need it; it is there for callers who want to look further)."""
        return self._root if self._root is not None else parse_html(self.text)

    @cached_property
    def page(self) -> PageEvents:
        """The page as lxml's parser reads it (:mod:`.reader`): no tree is built."""
        return read_page(self.text, lambda: self.check_deadline("reading the page"))

    # ------------------------------------------------------------------ the walk
    @cached_property
    def _walk(self) -> _Walk:
        # The node table is the body's subtree of the page's elements, cleaned; its event
        # stream is the page's, filtered. All array work.
        page = self.page
        n = len(page)
        tags = page.tags
        body = _body(page)
        end = page.end
        # Cleaning: the subtrees of dropped elements go, their tails stay. A hidden
        # element holding most of the page is not dropped (see _hidden_to_skip).
        skip = _dropped(
            tags,
            _hidden_to_skip(page, body),
            lambda noscripts: _subtree_sum(end, _block_content(tags))[noscripts] > 0,
        )
        skip[body] = False
        positions = np.arange(n)
        in_body = (positions >= body) & (positions < end[body])
        keep = in_body & ~_subtree_mask(end, skip & in_body)
        kept_before = np.concatenate(([0], np.cumsum(keep)))
        kept = np.flatnonzero(keep)
        table_tags = np.array(tags, dtype=object)[kept].tolist()
        m = len(table_tags)
        parent = page.parent[kept]
        parent = np.where(parent >= body, kept_before[np.maximum(parent, 0)], -1)
        end = kept_before[end[kept]]
        is_link = np.fromiter(map(LINK_TAGS.__contains__, table_tags), bool, m)
        link_from = is_link.copy()
        link_from[0] = False  # the walk starts outside any link
        in_link = _subtree_mask(end, link_from)

        # The events of the kept elements and of the text directly in them.
        selected = np.append(keep, False)[page.nodes]  # node -1: text outside every element
        kinds = page.kinds[selected]
        owners = kept_before[page.nodes[selected]]
        piece = page.pieces[selected]
        is_text = kinds == EVENT_TEXT
        text_piece, text_owner = piece[is_text], owners[is_text]
        piece_chars = np.zeros(len(page.texts) + 1, dtype=np.int64)  # the last: the marker
        piece_chars[text_piece] = _collapsed_lengths([page.texts[i] for i in text_piece.tolist()])
        chars = piece_chars[text_piece]
        own = np.bincount(text_owner, weights=chars, minlength=m).astype(np.int32)
        own_link = np.bincount(
            text_owner, weights=chars * in_link[text_owner], minlength=m
        ).astype(np.int32)
        prefix_link_tags = np.concatenate(([0], np.cumsum(is_link)))
        table_positions = np.arange(m)
        table = NodeTable(
            tag=tuple(table_tags),
            hint=tuple(page.hints[kept].tolist()),
            parent=parent.astype(np.int32),
            depth=(page.depth[kept] - page.depth[body]).astype(np.int32),
            end=end.astype(np.int32),
            own_chars=own,
            own_link_chars=own_link,
            is_link=is_link,
            is_block=np.fromiter(map(BLOCK_TAGS.__contains__, table_tags), bool, m),
            chars=_subtree_sum(end, own).astype(np.int32),
            link_chars=_subtree_sum(end, own_link).astype(np.int32),
            tags=(end - table_positions - 1).astype(np.int32),
            link_tags=(prefix_link_tags[end] - prefix_link_tags[table_positions + 1]).astype(
                np.int32
            ),
        )
        return _Walk(
            table=table,
            kinds=kinds,
            owners=owners.astype(np.int32),
            piece=piece.astype(np.int32),
            pieces=np.array([*page.texts, _BREAK], dtype=object),
            piece_chars=piece_chars,
            element=kept.astype(np.int32),
        )

    @property
    def nodes(self) -> NodeTable:
        """The node table (built on first use)."""
        return self._walk.table

    def own_text(self, node: int) -> str:
        """The text directly in node ``node`` (its text and its children's tails), raw."""
        return self.page.own_text(int(self._walk.element[node]))

    def raw_text(self, node: int) -> str:
        """All text inside node ``node`` as the page has it, hidden parts included (what
        ``itertext`` reads, script and style code aside), white space collapsed."""
        return self.page.text_under(int(self._walk.element[node]))

    def href(self, node: int) -> str | None:
        """The ``href`` of node ``node``, None where it has none."""
        return self.page.attributes.kept.get(int(self._walk.element[node]), (None,))[0]

    def elements_of(self, content: np.ndarray) -> np.ndarray:
        """The page elements (indices into :attr:`page`) of the nodes marked in
        ``content``, in document order."""
        return self._walk.element[content]

    @cached_property
    def onclick(self) -> np.ndarray:
        """Boolean per node: it has an ``onclick`` handler."""
        return np.isin(self._walk.element, self.page.attributes.onclick)

    # ------------------------------------------------------------------ output
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
        # A selected open/close event is a line break: piece -1, the marker. A long text
        # goes in parts of about _CHUNK_EVENTS events, cut at line breaks, so that the
        # word and line lists of str.split stay small.
        piece = walk.piece[selected]
        breaks = np.flatnonzero(piece < 0)
        cuts = breaks[np.flatnonzero(np.diff(breaks // _CHUNK_EVENTS)) + 1]
        parts = []
        for pieces in np.split(piece, cuts):
            text = " ".join("".join(walk.pieces[pieces].tolist()).split())
            parts.append("\n".join(filter(None, map(str.strip, text.split(_BREAK)))))
        return "\n".join(filter(None, parts))

    def block_texts(self, blocks: np.ndarray) -> list[str]:
        """Per node of ``blocks``, the text its layout block owns (the pieces whose
        element's nearest block, :attr:`NodeTable.block`, it is), white space collapsed:
        every block of a page in one pass (the training script labels them one by one)."""
        walk = self._walk
        text_events = np.flatnonzero(walk.kinds == EVENT_TEXT)
        block_of = walk.table.block[walk.owners[text_events]]
        order = np.argsort(block_of, kind="stable")
        pieces, block_of = walk.piece[text_events][order], block_of[order]
        starts = np.searchsorted(block_of, blocks).tolist()
        ends = np.searchsorted(block_of, blocks, side="right").tolist()
        texts = walk.pieces[pieces].tolist()  # one conversion, not one per block
        return [
            " ".join("".join(texts[start:end]).split())
            for start, end in zip(starts, ends, strict=True)
        ]

    def _content_events(self, content: np.ndarray) -> np.ndarray:
        """The walk's events of the marked elements' text and of the opening and closing
        of the marked elements and their ancestors (the structure the text sits in)."""
        walk = self._walk
        keep = walk.table.with_ancestors(content)
        return np.flatnonzero(
            np.where(walk.kinds == EVENT_TEXT, content[walk.owners], keep[walk.owners])
        )

    def content_events(self, content: np.ndarray) -> Iterator[tuple[int, int, str]]:
        """The events of :meth:`html_of` in document order, as (kind, node, raw text):
        :data:`~.reader.EVENT_OPEN`, :data:`~.reader.EVENT_CLOSE` (text ``""``) or
        :data:`~.reader.EVENT_TEXT`, and the node of the table they belong to."""
        walk = self._walk
        events = self._content_events(content)
        texts = walk.pieces[walk.piece[events]].tolist()
        kinds, owners = walk.kinds[events].tolist(), walk.owners[events].tolist()
        for kind, owner, text in zip(kinds, owners, texts, strict=True):
            yield kind, owner, text if kind == EVENT_TEXT else ""

    def html_of(self, content: np.ndarray) -> str:
        """Cleaned HTML of the marked elements with their ancestors: tags without attributes
        (except ``href``, ``src`` and ``alt``), text of marked elements only."""
        if not content.any():
            return ""
        selected = self._content_events(content)
        # In parts of a bounded number of events: the markup lists stay small.
        return "".join(
            self._markup(selected[start : start + _CHUNK_EVENTS])
            for start in range(0, len(selected), _CHUNK_EVENTS)
        )

    def _markup(self, events: np.ndarray) -> str:
        """The HTML of a run of events (see :meth:`html_of`)."""
        walk = self._walk
        kinds, nodes = walk.kinds[events], walk.owners[events]
        markup = np.empty(len(events), dtype=object)
        is_text = kinds == EVENT_TEXT
        texts = _collapse_pieces(walk.pieces[walk.piece[events[is_text]]].tolist())
        if texts:  # escaped in one pass; the markers survive escaping
            markup[is_text] = escape(_BREAK.join(texts), quote=False).split(_BREAK)
        tags, attributes = walk.table.tag, self.page.attributes.kept
        opening, closing = kinds == EVENT_OPEN, kinds == EVENT_CLOSE
        markup[opening] = [
            f"<{tags[node]}{_attribute_markup(attributes.get(element))}>"
            for node, element in zip(
                nodes[opening].tolist(), walk.element[nodes[opening]].tolist(), strict=True
            )
        ]
        markup[closing] = [
            "" if tags[node] in _VOID_TAGS else f"</{tags[node]}>"
            for node in nodes[closing].tolist()
        ]
        return "".join(markup.tolist())

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
        nonblank = walk.piece_chars[walk.piece] > 0
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
    def html_title(self) -> str:
        """The text of the page's first ``<title>`` (white space collapsed; ``""`` if none)."""
        return self._first_text("title")

    @cached_property
    def title(self) -> str | None:
        """``og:title``, else ``<title>``, else the first ``<h1>``; None if none has text."""
        metas = self.page.attributes.metas
        og_title = next((meta[3] for meta in metas if meta[0] == "og:title"), None)
        value = " ".join((og_title or "").split())
        return value or self.html_title or self._first_text("h1") or None

    def _first_text(self, tag: str) -> str:
        page = self.page
        return page.text_under(page.tags.index(tag)) if tag in page.tags else ""

    @cached_property
    def source(self) -> SourceView:
        """The source view for CETR and CCB (built on first use)."""
        text = parser_input(self.text)  # as the parser gets it
        body_start = re.search(r"<body\b", text, re.I)
        if body_start is not None:
            text = text[body_start.start():]
        source = _source_view(_SOURCE_JUNK.sub("", text))
        drop_starts, drop_ends = _dropped_spans(source)
        if not drop_starts.size:
            return source
        text = source.text
        kept = zip([0, *drop_ends.tolist()], [*drop_starts.tolist(), len(text)], strict=True)
        return _source_view("".join(text[start:end] for start, end in kept))


def _dropped(
    tags: Sequence[str],
    hidden: Sequence[int] | np.ndarray,
    holds_block_content: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The cleaning rule of every algorithm (DESIGN.md section 2), per element: dropped
    with its content when its tag is in :data:`SKIPPED_TAGS` or it is ``hidden``
    (indices), except a ``noscript`` for which ``holds_block_content(indices)`` is True
    (libxml2 can swallow the page into an unclosed ``<noscript>``). The node table applies
    it to the parsed elements, the source view to the start tags of the source."""
    n = len(tags)
    skip = np.fromiter(map(SKIPPED_TAGS.__contains__, tags), bool, n)
    noscripts = np.flatnonzero(skip & np.fromiter(map("noscript".__eq__, tags), bool, n))
    if noscripts.size:
        skip[noscripts] = ~holds_block_content(noscripts)
    skip[np.asarray(hidden, dtype=np.intp)] = True
    return skip


def _block_content(tags: Sequence[str]) -> np.ndarray:
    """Boolean per element: one of the tags whose presence marks a noscript as content."""
    return np.fromiter(map(_BLOCK_CONTENT_TAGS.__contains__, tags), bool, len(tags))


def _source_view(text: str) -> SourceView:
    """The tags of ``text`` (a source without comments, scripts and styles)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    starts, ends = _tag_spans(codes)
    return SourceView(
        text=text,
        tag_starts=starts,
        tag_ends=ends,
        tag_names=tuple(map(str.lower, _SOURCE_TAG.findall(text))),
        code_points=codes,
    )


def _source_attributes(tag: str) -> dict[str, str]:
    """The attributes of one start tag of the source as lxml reads them: names in lower
    case, values unescaped, the first of repeated names kept."""
    attributes: dict[str, str] = {}
    name = _SOURCE_TAG.match(tag)
    for match in _ATTRIBUTE.finditer(tag, name.end(1) if name else 0):
        value = next((v for v in match.group(2, 3, 4) if v is not None), "")
        attributes.setdefault(match.group(1).lower(), unescape(value))
    return attributes


def _element_ends(
    source: SourceView, opens: np.ndarray, closing: np.ndarray, name_ids: np.ndarray
) -> np.ndarray:
    """Per start tag in ``opens`` (tag indices), where its element ends in the source: after
    the matching closing tag of its name (``name_ids``: one integer per tag name; nested
    tags of that name counted), or after the tag itself for a void or self-closed (``/>``)
    tag and a tag never closed (its content is kept: where the parser would end it is not
    in the source, and a broken page loses no text to a guess)."""
    ends = source.tag_ends[opens].astype(np.int64)
    self_closed = source.code_points[np.maximum(source.tag_ends - 2, 0)] == 0x2F
    open_void = np.fromiter(
        (source.tag_names[i] in _VOID_TAGS for i in opens.tolist()), bool, opens.size
    )
    for name in np.unique(name_ids[opens[~open_void]]).tolist():
        same = np.flatnonzero(name_ids == name)
        closes = np.flatnonzero(closing[same])
        if not closes.size:
            continue
        depth = np.cumsum(np.where(closing[same], -1, np.where(self_closed[same], 0, 1)))
        # The match of an open is the first later close back at the depth before it:
        # closes sorted by (depth, position), searched for (depth before, position).
        low, size = min(0, int(depth.min())), len(same) + 1
        keys = (depth[closes] - low) * size + closes
        order = np.argsort(keys)
        keys = keys[order]
        mine = np.flatnonzero((name_ids[opens] == name) & ~self_closed[opens] & ~open_void)
        at = np.searchsorted(same, opens[mine])
        wanted = depth[at] - 1 - low
        found = np.searchsorted(keys, wanted * size + at)
        ok = (found < keys.size) & (keys[np.minimum(found, keys.size - 1)] // size == wanted)
        ends[mine[ok]] = source.tag_ends[same[closes[order[found[ok]]]]]
    return ends


def _hiding_words(source: SourceView) -> np.ndarray:
    """Positions in the source where one of :data:`_HIDING_WORDS` starts, in any ASCII
    case (attributes are read only in the start tags holding one)."""
    folded = source.code_points | 0x20  # ASCII letters to lower case, nothing else to one
    found = []
    for word in _HIDING_WORDS:
        at = np.flatnonzero(folded[: max(folded.size - len(word) + 1, 0)] == ord(word[0]))
        for offset, letter in enumerate(word[1:], 1):
            at = at[folded[at + offset] == ord(letter)]
        found.append(at)
    return np.sort(np.concatenate(found))


def _dropped_spans(source: SourceView) -> tuple[np.ndarray, np.ndarray]:
    """Sorted, disjoint ``[start, end)`` spans of the elements :func:`_dropped` removes from
    the source (outermost, overlaps merged): the source view's half of the cleaning rule."""
    empty = np.zeros(0, dtype=np.int64)
    if not source.tag_starts.size:
        return empty, empty
    ids = {name: i for i, name in enumerate(set(source.tag_names))}
    name_ids = np.fromiter(map(ids.__getitem__, source.tag_names), np.intp, len(source.tag_names))
    closing = source.code_points[source.tag_starts + 1] == 0x2F
    opens = np.flatnonzero(~closing)
    tags = [source.tag_names[i] for i in opens.tolist()]
    open_starts, open_ends = source.tag_starts[opens], source.tag_ends[opens]
    words = _hiding_words(source)
    holder = np.searchsorted(open_starts, words, side="right") - 1
    holder = np.unique(holder[(holder >= 0) & (words < open_ends[np.maximum(holder, 0)])])
    text = source.text
    hidden = [
        k
        for k, start, end in zip(
            holder.tolist(), open_starts[holder].tolist(), open_ends[holder].tolist(), strict=True
        )
        if _is_hidden(_source_attributes(text[start:end]))
    ]

    def holds_block_content(noscripts: np.ndarray) -> np.ndarray:
        stops = _element_ends(source, opens[noscripts], closing, name_ids)
        block_starts = open_starts[_block_content(tags)]
        after_start = np.searchsorted(block_starts, open_starts[noscripts])
        return np.searchsorted(block_starts, stops) > after_start

    skip = _dropped(tags, hidden, holds_block_content)
    skip &= ~np.fromiter(map(_NEVER_DROPPED.__contains__, tags), bool, len(tags))
    dropped = opens[skip]
    if not dropped.size:
        return empty, empty
    starts = source.tag_starts[dropped].astype(np.int64)
    ends = _element_ends(source, dropped, closing, name_ids)
    # Union of the spans: a new group starts where a span begins after every earlier end.
    first = np.concatenate(([True], starts[1:] >= np.maximum.accumulate(ends)[:-1]))
    return starts[first], np.maximum.reduceat(ends, np.flatnonzero(first))


def _hidden_to_skip(page: PageEvents, body: int) -> list[int]:
    """The hidden elements to clean away: all but those holding most of the body's text.
    Scripts reveal such an element (React streaming puts the rendered page in
    ``<div hidden id="S:0">`` and swaps it in): hiding it would leave a loading notice."""
    hidden = page.attributes.hidden
    if not hidden:
        return hidden
    is_text = page.kinds == EVENT_TEXT
    lengths = np.fromiter(map(len, page.texts), np.int64, len(page.texts))
    owners = page.nodes[is_text]
    own = np.bincount(
        owners[owners >= 0], weights=lengths[page.pieces[is_text]][owners >= 0], minlength=len(page)
    )
    text = _subtree_sum(page.end, own)
    return [i for i in hidden if 2 * text[i] <= text[body]]


def _body(page: PageEvents) -> int:
    """The ``<body>`` element: the root's child (as ``find("body")``), else the first one,
    else the root (fragments, framesets)."""
    bodies = [i for i, tag in enumerate(page.tags) if tag == "body"]
    children = [i for i in bodies if page.parent[i] == 0]
    return (children or bodies or [0])[0]


def _attribute_markup(values: tuple[str | None, ...] | None) -> str:
    """The attributes that cleaned HTML keeps (``href``, ``src``, ``alt``), as markup."""
    if values is None:
        return ""
    return "".join(
        f' {name}="{escape(value)}"'
        for name, value in zip(KEPT_ATTRIBUTES, values, strict=True)
        if value is not None
    )


#: Elements without content or closing tag (HTML's void elements).
_VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "frame", "hr", "img", "input", "keygen", "link",
     "meta", "param", "source", "track", "wbr"}
)  # fmt: skip
_SPACES = re.compile(r"[^\S\n]+")
#: The line break of the walk's text: a character no lxml text holds.
_BREAK = "\0"
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
