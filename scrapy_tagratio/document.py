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
  style and comments removed, and the spans of its tags from one regex tokenisation.

The walk is iterative (an explicit stack), so 100,000 levels of nesting are no problem.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import cached_property
from html import escape, unescape
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
        prefix = np.concatenate(([0], np.cumsum(values)))
        return prefix[self.end] - prefix[np.arange(len(self))]

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
        marks = np.zeros(len(self) + 1, dtype=np.int64)
        idx = np.flatnonzero(mask)
        np.add.at(marks, idx, 1)
        np.add.at(marks, self.end[idx], -1)
        return np.cumsum(marks)[:-1] > 0


@dataclass(frozen=True, eq=False)
class SourceView:
    """The cleaned HTML source (script, style, noscript and comments removed) and the
    ``[start, end)`` character spans of its tags, for the source-based methods (CETR, CCB).
    ``tag_names`` are lower-case names (``"a"`` for both ``<a ...>`` and ``</a>``)."""

    text: str
    tag_starts: np.ndarray
    tag_ends: np.ndarray
    tag_names: tuple[str, ...]

    @cached_property
    def code_points(self) -> np.ndarray:
        """The Unicode code points of :attr:`text` (uint32), for vectorised character
        classes (white space, scripts) without a Python loop over characters."""
        return np.frombuffer(self.text.encode("utf-32-le", "surrogatepass"), dtype="<u4")

    def tags_named(self, names: Collection[str]) -> np.ndarray:
        """Boolean per tag: its name is one of ``names``."""
        return np.fromiter(map(names.__contains__, self.tag_names), bool, len(self.tag_names))

    def is_tag_char(self) -> np.ndarray:
        """Boolean per character of :attr:`text`: inside a tag (code) or not (content)."""
        marks = np.zeros(len(self.text) + 1, dtype=np.int32)
        np.add.at(marks, self.tag_starts, 1)
        np.add.at(marks, self.tag_ends, -1)
        return np.cumsum(marks)[:-1] > 0

    def anchor_depth_mask(self) -> np.ndarray:
        """Boolean per character: inside an ``<a>`` element (its tags and text)."""
        is_anchor = self.tags_named(("a",))
        if not is_anchor.any():
            return np.zeros(len(self.text), dtype=bool)
        idx = np.flatnonzero(is_anchor)
        closing = np.fromiter(
            (self.text.startswith("</", s) for s in self.tag_starts[idx].tolist()), bool, idx.size
        )
        marks = np.zeros(len(self.text) + 1, dtype=np.int32)
        np.add.at(marks, self.tag_starts[idx[~closing]], 1)
        np.add.at(marks, self.tag_ends[idx[closing]], -1)
        return np.cumsum(marks)[:-1] > 0


_SOURCE_JUNK = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style|noscript|template)\b[^>]*>.*?(?:</\1\s*>|\Z)"
    r"|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)|<!doctype[^>]*>",
    re.I | re.S,
)
_SOURCE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9:_-]*)[^>]*>?")


def _is_hidden(el: Any) -> bool:
    attrib = el.attrib
    if not attrib:
        return False
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
        body = self.root.find(".//body") if self.root.tag != "body" else self.root
        return body if body is not None else self.root

    @cached_property
    def _walk(self) -> tuple[NodeTable, np.ndarray, np.ndarray, list[str], list[Any]]:
        # One pass over the tree with an explicit stack; per element only list appends
        # (the hot loop of every DOM method: no function calls beyond lxml's own).
        tags: list[str] = []
        parents: list[int] = []
        depths: list[int] = []
        ends: list[int] = []
        elements: list[Any] = []
        hints: list[str] = []
        ev_kind: list[int] = []
        ev_node: list[int] = []
        ev_text: list[str] = []
        ev_chars: list[int] = []  # characters of a text event (0 for open/close)
        ev_in_link: list[bool] = []

        def add_text(owner: int, raw: str, in_link: bool) -> None:
            core = " ".join(raw.split())
            if core:
                lead = " " if raw[0].isspace() else ""
                piece = lead + core + " " if raw[-1].isspace() else lead + core
                chars = len(core)
            elif raw:
                piece, chars = " ", 0
            else:
                return
            ev_kind.append(EVENT_TEXT)
            ev_node.append(owner)
            ev_text.append(piece)
            ev_chars.append(chars)
            ev_in_link.append(in_link)

        def open_element(el: Any, tag: str, parent: int, depth: int, in_link: bool) -> int:
            idx = len(tags)
            tags.append(tag)
            parents.append(parent)
            depths.append(depth)
            ends.append(0)
            elements.append(el)
            attrib = el.attrib
            hints.append(
                f"{attrib.get('class', '')} {attrib.get('id', '')} {attrib.get('role', '')} "
                f"{attrib.get('itemprop', '')}".lower()
                if attrib
                else ""
            )
            ev_kind.append(EVENT_OPEN)
            ev_node.append(idx)
            ev_text.append("")
            ev_chars.append(0)
            ev_in_link.append(False)
            text = el.text
            if text:
                add_text(idx, text, in_link)
            return idx

        body = self.body
        root_tag = body.tag.lower() if isinstance(body.tag, str) else "body"
        # Stack entries: (node index, child iterator, inside a link).
        stack: list[tuple[int, Any, bool]] = [
            (open_element(body, root_tag, -1, 0, False), iter(body), False)
        ]
        steps = 0
        while stack:
            idx, children, in_link = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                ends[idx] = len(tags)
                ev_kind.append(EVENT_CLOSE)
                ev_node.append(idx)
                ev_text.append("")
                ev_chars.append(0)
                ev_in_link.append(False)
                if stack:
                    tail = elements[idx].tail
                    if tail:
                        add_text(stack[-1][0], tail, stack[-1][2])
                continue
            tag = child.tag
            if not isinstance(tag, str):  # comment, processing instruction, entity
                if child.tail:
                    add_text(idx, child.tail, in_link)
                continue
            tag = tag.lower()
            if "}" in tag:
                tag = tag.rsplit("}", 1)[1]
            if (
                (tag in SKIPPED_TAGS and not (tag == "noscript" and _BLOCK_CONTENT_XPATH(child)))
                or _is_hidden(child)
            ):
                if child.tail:
                    add_text(idx, child.tail, in_link)
                continue
            child_in_link = in_link or tag in LINK_TAGS
            stack.append(
                (open_element(child, tag, idx, len(stack), child_in_link), iter(child),
                 child_in_link)
            )
            steps += 1
            if steps % 20000 == 0:
                self.check_deadline("the DOM walk")

        n = len(tags)
        end = np.asarray(ends, dtype=np.int32)
        is_link = np.fromiter(map(LINK_TAGS.__contains__, tags), bool, n)
        is_block = np.fromiter(map(BLOCK_TAGS.__contains__, tags), bool, n)
        owners = np.asarray(ev_node, dtype=np.int64)
        chars = np.asarray(ev_chars, dtype=np.int64)
        own = np.bincount(owners, weights=chars, minlength=n).astype(np.int64)
        own_link = np.bincount(
            owners, weights=chars * np.asarray(ev_in_link, dtype=bool), minlength=n
        ).astype(np.int64)
        prefix_link_tags = np.concatenate(([0], np.cumsum(is_link)))
        positions = np.arange(n)
        table = NodeTable(
            tag=tuple(tags),
            hint=tuple(hints),
            parent=np.asarray(parents, dtype=np.int32),
            depth=np.asarray(depths, dtype=np.int32),
            end=end,
            own_chars=own,
            own_link_chars=own_link,
            is_link=is_link,
            is_block=is_block,
            chars=np.zeros(0),  # replaced below
            link_chars=np.zeros(0),
            tags=(end - positions - 1).astype(np.int64),
            link_tags=(prefix_link_tags[end] - prefix_link_tags[positions + 1]).astype(np.int64),
        )
        object.__setattr__(table, "chars", table.subtree_sum(own))
        object.__setattr__(table, "link_chars", table.subtree_sum(own_link))
        return (
            table,
            np.asarray(ev_kind, dtype=np.int8),
            np.asarray(ev_node, dtype=np.int32),
            ev_text,
            elements,
        )

    @property
    def nodes(self) -> NodeTable:
        """The node table (built on first use)."""
        return self._walk[0]

    @property
    def elements(self) -> list[Any]:
        """The lxml elements of the node table, same order."""
        return self._walk[4]

    # ------------------------------------------------------------------ output
    def text_of(self, content: np.ndarray) -> str:
        """Text of the elements marked in ``content`` (a boolean array over the node table),
        in document order; block elements start new lines; white space normalised.

        Only the text directly owned by a marked element is taken, so callers mark whole
        subtrees (see :meth:`NodeTable.with_descendants`) when they mean them.
        """
        table, kinds, owners, texts, _ = self._walk
        if not content.any():
            return ""
        selected = np.where(kinds == EVENT_TEXT, content[owners], table.is_block[owners])
        parts = [texts[i] if kinds[i] == EVENT_TEXT else "\n" for i in np.flatnonzero(selected)]
        return normalise_text("".join(parts))

    def html_of(self, content: np.ndarray) -> str:
        """Cleaned HTML of the marked elements with their ancestors: tags without attributes
        (except ``href``, ``src`` and ``alt``), text of marked elements only."""
        table, kinds, owners, texts, elements = self._walk
        if not content.any():
            return ""
        keep = table.with_ancestors(content)
        out: list[str] = []
        for i in np.flatnonzero(np.where(kinds == EVENT_TEXT, content[owners], keep[owners])):
            kind, node = kinds[i], owners[i]
            if kind == EVENT_TEXT:
                out.append(escape(texts[i], quote=False))
            elif kind == EVENT_OPEN:
                tag = table.tag[node]
                attrib = elements[node].attrib
                attrs = "".join(
                    f' {name}="{escape(attrib[name])}"'
                    for name in ("href", "src", "alt")
                    if name in attrib
                )
                out.append(f"<{tag}{attrs}>")
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
        table, kinds, owners, texts, _ = self._walk
        n = len(table)
        events = np.arange(len(kinds))
        nonblank = (kinds == EVENT_TEXT) & np.fromiter(
            (t != " " for t in texts), bool, len(texts)
        )
        last_text_event = np.maximum.accumulate(np.where(nonblank, events, -1))
        open_event = np.flatnonzero(kinds == EVENT_OPEN)  # opened in node-index order
        close_event = np.empty(n, dtype=np.int64)
        closing = np.flatnonzero(kinds == EVENT_CLOSE)
        close_event[owners[closing]] = closing
        last = last_text_event[close_event]
        inside = last > open_event
        return tuple(
            texts[j].strip() if ok else ""
            for j, ok in zip(last.tolist(), inside.tolist(), strict=True)
        )

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
        starts: list[int] = []
        ends: list[int] = []
        names: list[str] = []
        for match in _SOURCE_TAG.finditer(cleaned):
            starts.append(match.start())
            ends.append(match.end())
            names.append(match.group(1).lower())
        return SourceView(
            text=cleaned,
            tag_starts=np.asarray(starts, dtype=np.int64),
            tag_ends=np.asarray(ends, dtype=np.int64),
            tag_names=tuple(names),
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


def _tag_separator(match: re.Match[str]) -> str:
    return "\n" if match.group(1).lower() in BLOCK_TAGS else ""


def strip_tags(fragments: Iterable[str]) -> str:
    """Text of HTML source fragments (for the source-based methods): block tags become
    line breaks, inline tags vanish (``foo<b>bar</b>`` reads ``foobar``), entities are
    decoded and white space normalised."""
    return normalise_text(unescape(_SOURCE_TAG.sub(_tag_separator, "\n".join(fragments))))
