"""One page, decoded, read, cleaned and walked once: the input of every algorithm.

:class:`Document` is built from ``str``, ``bytes`` (decoded as Scrapy does, with w3lib:
HTTP/meta charset, BOM, then detection: :mod:`.decoding`) or an lxml element already
parsed (what ``response.selector.root`` gives; it is serialised, read like any page and
never modified).

The layout, one concern per module:

* :mod:`.decoding`: bytes to text, binary input refused;
* :mod:`.reader`: text to the page's events (:mod:`.events`), by libxml2's parser through
  a parser target (pure Python) or a compiled walk of its tree (``_kernel.pyx``): two
  interchangeable readers with identical output;
* :mod:`.cleaning`: the element classes and the one cleaning rule;
* :mod:`.nodetable`: the node table of the DOM methods (CETD, TextSweeper, the default);
* :mod:`.source`: the source view of CETR and CCB, and ``strip_tags``;
* here: :class:`Document`, which builds the node table from the events (cleaned, the body
  only) and rebuilds text and HTML output of marked nodes from the same event stream.

Two views are built lazily, once: :attr:`Document.nodes` and :attr:`Document.source`.
:attr:`Document.root` parses a tree on request for callers who want one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from html import escape
from typing import Any, NamedTuple

import numpy as np
from lxml import etree

from .cleaning import (
    BLOCK_TAGS,
    HIDING,
    LINK_TAGS,
    VOID_TAGS,
    TagClasses,
    _block_content,
    _dropped,
    name_codes,
)
from .decoding import _decode, _decode_utf8, _refuse_binary, _utf8_reading, decode_html
from .errors import ExtractionError
from .events import EVENT_CLOSE, EVENT_OPEN, EVENT_TEXT, KEPT_ATTRIBUTES, PageEvents
from .nodetable import NodeTable, _subtree_mask, _subtree_sum
from .reader import active_kernel, parse_html, parser_input, read_page, read_utf8
from .source import (
    SourceView,
    normalise_text,
    reader_text,
    source_view,
    span_run_lengths,
    strip_tags,
)

# The names algorithms and users import from here, wherever they are defined now.
__all__ = [
    "BLOCK_TAGS",
    "LINK_TAGS",
    "PAYWALLED_CHARS",
    "Document",
    "NodeTable",
    "SourceView",
    "decode_html",
    "normalise_text",
    "parse_html",
    "span_run_lengths",
    "strip_tags",
]


#: Texts longer than this are collapsed this many characters at a time
#: (:func:`collapse_white_space`): ``str.split`` of a whole block of a million words holds
#: a string per word (ten times the text's memory; so does ``re.sub``, which keeps every
#: piece between its matches).
SPLIT_MAX_CHARS = 10_000


def collapse_white_space(text: str) -> str:
    """``" ".join(text.split())``: white space collapsed to one space and stripped, a long
    text split :data:`SPLIT_MAX_CHARS` characters at a time (a word cut by a chunk's end
    is joined again: a space goes between two chunks' words only where white space was)."""
    if len(text) <= SPLIT_MAX_CHARS:
        return " ".join(text.split())
    parts: list[str] = []
    for at in range(0, len(text), SPLIT_MAX_CHARS):
        chunk = text[at : at + SPLIT_MAX_CHARS]
        collapsed = " ".join(chunk.split())
        if not collapsed:
            continue
        if parts and (chunk[0].isspace() or text[at - 1].isspace()):
            parts.append(" ")
        parts.append(collapsed)
    return "".join(parts)


@dataclass(frozen=True, eq=False)
class _Walk:
    """The node table and the document-order event stream of the body (cleaned) that
    text and HTML output are rebuilt from. Per event: its kind, its node (for
    text, the element owning it: a tail belongs to the parent) and, for text, the index of
    its piece in ``texts`` (-1 for open/close). Pieces are raw text (white space is
    collapsed on output); ``piece_chars`` are their collapsed lengths, the C of CETD (0
    for the marker of :attr:`pieces`)."""

    table: NodeTable
    kinds: np.ndarray  # int8
    owners: np.ndarray  # int32
    piece: np.ndarray  # int32
    texts: list[str]  # the page's runs of text (PageEvents.texts)
    piece_chars: np.ndarray  # int64
    #: Per node, its element's index in the page's events (:class:`PageEvents`).
    element: np.ndarray

    @cached_property
    def pieces(self) -> np.ndarray:
        """:attr:`texts` followed by one line-break marker that index -1 selects, as an
        object array for gathering many pieces at once (built on first use: the compiled
        kernel's text and HTML read :attr:`texts` and never ask for it)."""
        return np.array([*self.texts, _BREAK], dtype=object)


#: The pure path collapses white space with ``str.split``, whose word list holds about
#: ten times the text it splits: a long text goes in parts of about this many characters
#: or events (a page's peak of memory on the pure readers).
_CHUNK_CHARS = 1 << 18
_CHUNK_EVENTS = 1 << 14


def _collapse_pieces(pieces: list[str]) -> list[str]:
    """Each piece with its white space collapsed (a run at either end kept as one space),
    by C string methods over all pieces at once: joined between markers (not white
    space, in no lxml text), collapsed, split at the markers."""
    return " ".join(_BREAK.join(("", *pieces, "")).split()).split(_BREAK)[1:-1]


def _last_character(text: str, closing: str) -> str:
    """The last character of ``text`` once trailing white space and the characters of
    ``closing`` are stripped, in any order; ``""`` if none is left."""
    while True:
        stripped = text.rstrip().rstrip(closing)
        if stripped == text:
            return text[-1:]
        text = stripped


def _piece_lengths(texts: list[str], pieces: np.ndarray) -> np.ndarray:
    """Per index in ``pieces``, ``len(" ".join(texts[i].split()))``: one C loop over the
    characters with the compiled kernel (:func:`~.reader.active_kernel`), else
    :func:`_collapsed_lengths`; the same figures (white space is ``str.isspace``'s)."""
    kernel = active_kernel()
    if kernel is not None:
        return np.frombuffer(kernel.piece_lengths(texts, pieces), dtype=np.int64)
    return _collapsed_lengths([texts[i] for i in pieces.tolist()])


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
            _refuse_binary(data, content_type)
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
                f"cannot extract from {type(html).__name__}: give str, bytes or an lxml "
                f"element{_input_hint(html)}",
                kind="bad_parameter",
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
        """The page as lxml's parser reads it (:mod:`.reader`): no tree is built. Bytes
        that are the UTF-8 of their text go to the parser as they are (not encoded again),
        and the SAX reader reads most such pages without their text being decoded at all
        (:func:`~.reader.read_utf8`)."""
        markup, utf8 = self._input, None

        def check_deadline() -> None:
            self.check_deadline("reading the page")

        if isinstance(markup, str):
            text = markup
        else:
            if _utf8_reading(markup, self._content_type):
                page = read_utf8(markup, check_deadline)
                if page is not None:
                    return page
            text, same = _decode_utf8(markup, self._content_type)
            utf8 = markup if same else None
        return read_page(text, check_deadline, utf8=utf8)

    # ------------------------------------------------------------------ the walk
    @cached_property
    def _walk(self) -> _Walk:
        # The node table is the body's subtree of the page's elements, cleaned; its event
        # stream is the page's, filtered. All array work.
        page = self.page
        tags = page.tags
        body = _body(page)
        end = page.end
        # The page's distinct hints, numbered once: read by the hiding classes here and by
        # the algorithms' hint tests (the node table's hint_codes).
        hint_codes, numbering = name_codes(page.hints.tolist())  # a list reads faster
        hint_names = list(numbering)
        # Cleaning: the subtrees of dropped elements go, their tails stay. A hidden
        # element holding most of the page is not dropped (see _hidden_to_skip).
        classes = TagClasses(tags)
        skip = _dropped(
            classes,
            _hidden_to_skip(page, body, hint_codes, hint_names),
            lambda noscripts: _subtree_sum(end, _block_content(classes))[noscripts] > 0,
        )
        skip[body] = False
        kept = _kept_elements(page, body, skip, classes.mask(LINK_TAGS))
        # The table's tags by their codes, gathered from the page's few distinct names.
        tag_codes = classes.codes[kept.element]
        events = _body_events(page, kept)
        table = NodeTable(
            tag=tuple(np.array(classes.names, dtype=object)[tag_codes].tolist()),
            tag_codes=(tag_codes, classes.numbering),
            hint_codes=(hint_codes[kept.element], hint_names),
            parent=kept.parent,
            depth=kept.depth,
            end=kept.end,
            own_chars=events.own,
            own_link_chars=events.own_link,
            is_link=kept.is_link,
            is_block=classes.mask(BLOCK_TAGS)[kept.element],
            chars=_subtree_sum(kept.end, events.own).astype(np.int32),
            link_chars=_subtree_sum(kept.end, events.own_link).astype(np.int32),
            tags=kept.tags,
            link_tags=kept.link_tags,
        )
        return _Walk(
            table=table,
            kinds=events.kinds,
            owners=events.owners,
            piece=events.piece,
            texts=page.texts,
            piece_chars=events.piece_chars,
            element=kept.element,
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

    def raw_texts(self, nodes: np.ndarray) -> Iterator[str]:
        """:meth:`raw_text` of each node of ``nodes`` (node indices) in turn, read as the
        caller asks (it may stop early)."""
        return self.page.texts_under(self._walk.element[nodes])

    def hrefs(self, nodes: np.ndarray) -> list[str]:
        """The ``href`` of each node of ``nodes`` (node indices), ``""`` where it has none."""
        kept, elements = self.page.attributes.kept, self._walk.element[nodes].tolist()
        return [kept.get(element, (None,))[0] or "" for element in elements]

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
        subtrees (see :meth:`NodeTable.with_descendants`) when they mean them. The text is
        as a reader sees it (:func:`~.source.reader_text`: no soft hyphens, NFC).
        """
        walk = self._walk
        if not content.any():
            return ""
        selected = self._events_of(content, walk.table.is_block)
        # A selected open/close event is a line break: piece -1, the marker. A long text
        # goes in parts of about _CHUNK_EVENTS events, cut at line breaks, so that the
        # word and line lists of str.split stay small; the compiled kernel builds the
        # same text in one C loop (two passes over the characters, no word list).
        piece = walk.piece[selected]
        kernel = active_kernel()
        if kernel is not None:
            text: str = kernel.text_lines(self.page.texts, piece)
            return reader_text(text)
        # The first line break of each part of _CHUNK_EVENTS events after the first (not
        # the positions of every line break: several MB on a large page).
        is_break = piece < 0
        cuts = []
        for start in range(_CHUNK_EVENTS, len(piece), _CHUNK_EVENTS):
            first = start + int(np.argmax(is_break[start : start + _CHUNK_EVENTS]))
            if is_break[first]:  # argmax gives the part's start where it holds none
                cuts.append(first)
        del is_break
        parts = []
        for pieces in np.split(piece, cuts):
            text = " ".join("".join(walk.pieces[pieces].tolist()).split())
            parts.append("\n".join(filter(None, map(str.strip, text.split(_BREAK)))))
        return reader_text("\n".join(filter(None, parts)))

    def _runs_by_block(self) -> tuple[np.ndarray, np.ndarray]:
        """The page's text pieces ordered by the layout block owning them
        (:attr:`NodeTable.block` of their element; within a block, in document order):
        per node, where its block's pieces start (int64, one more at the end: node ``k``'s
        are ``[bounds[k], bounds[k + 1])``), and each piece's index in the page's runs of
        text (int32). With the compiled kernel, by a counting sort in C
        (:func:`~scrapy_tagratio._kernel.runs_by_block`), else by numpy's stable sort.
        Not kept: on a large page the two arrays are MB that the block texts need only
        while they are built."""
        walk = self._walk
        table = walk.table
        kernel = active_kernel()
        if kernel is not None:
            block = table.block.astype(np.int64, copy=False)
            found = kernel.runs_by_block(walk.kinds, walk.owners, walk.piece, block)
            return np.frombuffer(found[0], dtype=np.int64), np.frombuffer(found[1], dtype=np.int32)
        text_events = np.flatnonzero(walk.kinds == EVENT_TEXT)
        block_of = table.block[walk.owners[text_events]]
        order = np.argsort(block_of, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(block_of, minlength=len(table)))))
        return bounds, walk.piece[text_events][order]

    def _runs(self, pieces: np.ndarray) -> list[str]:
        """The page's runs of text of the indices ``pieces``, gathered from the list (the
        object array of :attr:`_Walk.pieces` is not built for this: it would stay, MB on a
        large page)."""
        return list(map(self._walk.texts.__getitem__, pieces.tolist()))

    @cached_property
    def pieces_by_block(self) -> tuple[np.ndarray, list[str]]:
        """The page's text pieces ordered by the layout block owning them
        (:meth:`_runs_by_block`), and that block of each piece: what the site memory's
        fingerprints read."""
        bounds, pieces = self._runs_by_block()
        return np.repeat(np.arange(len(bounds) - 1), np.diff(bounds)), self._runs(pieces)

    def block_texts(self, blocks: np.ndarray) -> list[str]:
        """Per node of ``blocks``, the text its layout block owns (the pieces whose
        element's nearest block, :attr:`NodeTable.block`, it is), white space collapsed
        (:meth:`block_text_chunks`)."""
        return [
            text for chunk in self.block_text_chunks(blocks, max(len(blocks), 1)) for text in chunk
        ]

    def block_text_chunks(self, blocks: np.ndarray, size: int) -> Iterator[list[str]]:
        """:meth:`block_texts` of ``blocks``, ``size`` blocks at a time (a large page's texts
        need not be held at once), the pieces ordered by block once: with the compiled
        kernel, each text built in C from its runs of text
        (:func:`~scrapy_tagratio._kernel.span_texts`; no list of the pieces' strings), else
        joined and split by ``str``'s methods; the same texts."""
        runs, pieces, starts, ends = self.block_runs(blocks)
        kernel = active_kernel()
        texts = self._runs(pieces) if kernel is None else []
        for at in range(0, len(blocks), size):
            chunk = slice(at, at + size)
            if kernel is not None:
                yield kernel.span_texts(runs, pieces, starts[chunk], ends[chunk])
                continue
            yield [
                collapse_white_space("".join(texts[start:end]))
                for start, end in zip(starts[chunk].tolist(), ends[chunk].tolist(), strict=True)
            ]

    def block_runs(
        self, blocks: np.ndarray
    ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
        """What the text of each layout block of ``blocks`` (node indices) is built from:
        the page's runs of text, their indices ordered by block (int32,
        :meth:`_runs_by_block`), and per block where its runs start and stop among those
        (int64): block ``blocks[k]``'s text is ``"".join(runs[p] for p in
        pieces[starts[k]:stops[k]])``, white space collapsed (:meth:`block_texts`)."""
        bounds, pieces = self._runs_by_block()
        blocks = np.asarray(blocks, dtype=np.int64)
        return self._walk.texts, pieces, bounds[blocks], bounds[blocks + 1]

    def block_text(self, block: int) -> str:
        """The text layout block ``block`` owns, as :meth:`block_texts` gives it."""
        return self.few_block_texts(np.array([block]))[0]

    def block_ends_in(self, blocks: np.ndarray, ends: str, closing: str) -> np.ndarray:
        """Boolean per node of ``blocks``: the text its layout block owns
        (:meth:`block_texts`) ends with one of the characters of ``ends`` once trailing
        white space and the characters of ``closing`` are stripped, in any order (French
        sets a space before a closing guillemet: "feu. \u00bb" ends with "."). Read from each
        block's last non-blank piece alone, so no block's text is built (a piece of
        closing characters alone reads as none); with the compiled kernel, from the
        block's runs (:meth:`block_runs`) in one C loop back from their end
        (``ends_in``), else by ``str.rstrip`` of each block's last non-blank piece
        (:func:`_last_character`)."""
        kernel = active_kernel()
        if kernel is not None:
            found = kernel.ends_in(*self.block_runs(blocks), ends, closing)
            return np.frombuffer(found, dtype=bool)
        walk = self._walk
        events = np.flatnonzero(walk.kinds == EVENT_TEXT)
        events = events[walk.piece_chars[walk.piece[events]] > 0]  # not blank
        block_of = walk.table.block[walk.owners[events]]
        last = np.full(len(walk.table), -1, dtype=np.int64)
        np.maximum.at(last, block_of, events)
        chosen = last[blocks]
        # The runs of text of the chosen events, -1 where a block has none.
        pieces = np.where(chosen >= 0, walk.piece[chosen], -1).tolist()
        texts = walk.texts
        last_characters = (
            _last_character(texts[piece], closing) if piece >= 0 else "" for piece in pieces
        )
        return np.fromiter(
            (character != "" and character in ends for character in last_characters),
            dtype=bool,
            count=len(pieces),
        )

    def few_block_texts(self, blocks: np.ndarray) -> list[str]:
        """:meth:`block_texts` of a few ``blocks`` (node indices): their pieces are picked by
        one mask over the events, not sorted by block (:attr:`pieces_by_block`, which the
        extraction does not otherwise need); with the compiled kernel, from the events of
        the blocks' subtrees only, in one C loop (``block_pieces``)."""
        walk = self._walk
        table = walk.table
        kernel = active_kernel()
        if kernel is not None:
            found = kernel.block_pieces(
                walk.kinds,
                walk.owners,
                walk.piece,
                walk.texts,
                table.block.astype(np.int64, copy=False),
                table.end,
                np.asarray(blocks, dtype=np.int64),
            )
            return [collapse_white_space("".join(pieces)) for pieces in found]
        wanted = np.zeros(len(table), dtype=bool)
        wanted[blocks] = True
        # The nodes of the blocks asked for, then their text events: only those few are
        # gathered (not the block of every text event).
        chosen = np.flatnonzero(wanted[table.block][walk.owners] & (walk.kinds == EVENT_TEXT))
        pieces = [walk.texts[piece] for piece in walk.piece[chosen].tolist()]
        owner_block = table.block[walk.owners[chosen]]
        texts: dict[int, list[str]] = {}
        for block, text in zip(owner_block.tolist(), pieces, strict=True):
            texts.setdefault(block, []).append(text)
        return [
            collapse_white_space("".join(texts.get(b, ()))) for b in np.asarray(blocks).tolist()
        ]

    def _content_mask(self, content: np.ndarray) -> np.ndarray:
        """Per event of the walk, whether it is one of the marked elements' text or the
        opening or closing of a marked element or one of their ancestors (the structure
        the text sits in)."""
        return self._events_of(content, self._walk.table.with_ancestors(content))

    def _events_of(self, texts_of: np.ndarray, others_of: np.ndarray) -> np.ndarray:
        """Per event of the walk, whether it is selected: a text event when its owner is
        marked in ``texts_of``, an opening or closing when its owner is marked in
        ``others_of`` (boolean arrays over the node table); with the compiled kernel in
        one C pass (``event_mask``), else by numpy's gathers."""
        walk = self._walk
        kernel = active_kernel()
        if kernel is not None:
            texts_of, others_of = (np.asarray(m, dtype=bool) for m in (texts_of, others_of))
            found = kernel.event_mask(walk.kinds, walk.owners, _bytes(texts_of), _bytes(others_of))
            return np.frombuffer(found, dtype=bool)
        return np.where(walk.kinds == EVENT_TEXT, texts_of[walk.owners], others_of[walk.owners])

    def content_events(self, content: np.ndarray) -> Iterator[tuple[int, int, str]]:
        """The events of :meth:`html_of` in document order, as (kind, node, raw text):
        :data:`~.reader.EVENT_OPEN`, :data:`~.reader.EVENT_CLOSE` (text ``""``) or
        :data:`~.reader.EVENT_TEXT`, and the node of the table they belong to."""
        walk = self._walk
        events = np.flatnonzero(self._content_mask(content))
        texts = walk.pieces[walk.piece[events]].tolist()
        kinds, owners = walk.kinds[events].tolist(), walk.owners[events].tolist()
        for kind, owner, text in zip(kinds, owners, texts, strict=True):
            yield kind, owner, text if kind == EVENT_TEXT else ""

    def html_of(self, content: np.ndarray) -> str:
        """Cleaned HTML of the marked elements with their ancestors: tags without attributes
        (except ``href``, ``src`` and ``alt``), text of marked elements only."""
        if not content.any():
            return ""
        selected = self._content_mask(content)
        # In parts of a bounded number of the walk's events: the markup lists and the
        # indices of the selected events stay small (all the indices at once: 8 MB on the
        # 20 MB page of the memory benchmark).
        return "".join(
            self._markup(start + np.flatnonzero(selected[start : start + _CHUNK_EVENTS]))
            for start in range(0, len(selected), _CHUNK_EVENTS)
        )

    def _markup(self, events: np.ndarray) -> str:
        """The HTML of a run of events (see :meth:`html_of`); with the compiled kernel, in
        one C loop (``event_markup``: the runs collapsed and escaped, the tags written,
        everything joined)."""
        walk = self._walk
        kinds, nodes, pieces = walk.kinds[events], walk.owners[events], walk.piece[events]
        tags, attributes = walk.table.tag, self.page.attributes.kept
        kernel = active_kernel()
        if kernel is not None:
            found = kernel.event_markup(
                kinds, nodes, pieces, self.page.texts, walk.element, tags, attributes,
                _attribute_markup, VOID_TAGS,
            )  # fmt: skip
            return str(found)
        markup = np.empty(len(events), dtype=object)
        is_text = kinds == EVENT_TEXT
        texts = _collapse_pieces(walk.pieces[pieces[is_text]].tolist())
        if texts:  # escaped in one pass; the markers survive escaping
            markup[is_text] = escape(_BREAK.join(texts), quote=False).split(_BREAK)
        opening, closing = kinds == EVENT_OPEN, kinds == EVENT_CLOSE
        markup[opening] = [
            f"<{tags[node]}{_attribute_markup(attributes.get(element))}>"
            for node, element in zip(
                nodes[opening].tolist(), walk.element[nodes[opening]].tolist(), strict=True
            )
        ]
        markup[closing] = [
            "" if tags[node] in VOID_TAGS else f"</{tags[node]}>"
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
        words = {i: " ".join(walk.texts[i].split()) for i in set(piece.tolist()) - {-1}}
        words[-1] = ""
        return tuple(map(words.__getitem__, piece.tolist()))

    @cached_property
    def html_title(self) -> str:
        """The text of the page's first ``<title>`` (white space collapsed; ``""`` if none)."""
        return self.page.title_text

    @cached_property
    def title(self) -> str | None:
        """``og:title``, else ``<title>``, else the first ``<h1>``, as a reader sees it
        (:func:`~.source.reader_text`); None if none has text."""
        metas = self.page.attributes.metas
        og_title = next((meta[3] for meta in metas if meta[0] == "og:title"), None)
        value = " ".join((og_title or "").split())
        return reader_text(value or self.html_title or self._first_text("h1")) or None

    def _first_text(self, tag: str) -> str:
        page = self.page
        return page.text_under(page.tags.index(tag)) if tag in page.tags else ""

    @cached_property
    def source(self) -> SourceView:
        """The source view for CETR and CCB (built on first use)."""
        return source_view(parser_input(self.text))  # as the parser gets it


def _hidden_by_class(codes: np.ndarray, hints: list[str]) -> list[int]:
    """The elements hidden by a CSS framework's class (:func:`~.cleaning.hidden_by_class`),
    each distinct hint of the page (``hints``, ``codes`` per element) tested once
    (:data:`~.cleaning.HIDING`)."""
    return np.flatnonzero(HIDING.named(hints, np.arange(len(hints)))[codes]).tolist()


#: A hidden element whose class or id holds "paywall" and that holds this many characters
#: of text is the article's paywalled part, not a prompt (:func:`_hidden_to_skip`).
PAYWALLED_CHARS = 500


def _hidden_to_skip(
    page: PageEvents, body: int, hint_codes: np.ndarray, hints: list[str]
) -> list[int]:
    """The hidden elements to clean away (by attribute, style or class: :mod:`.cleaning`;
    ``hints`` the page's distinct hints, ``hint_codes`` per element):
    all but those holding most of the body's text, and those named "paywall" holding
    :data:`PAYWALLED_CHARS` of text. Scripts reveal such an element: React streaming puts
    the rendered page in ``<div hidden id="S:0">`` and swaps it in (hiding it would leave a
    loading notice); news sites serve the article's paywalled part in ``<div
    class="paywall" hidden>`` and show it to subscribers (hiding it would leave the
    teaser)."""
    hidden = sorted({*page.attributes.hidden, *_hidden_by_class(hint_codes, hints)})
    if not hidden:
        return hidden
    # An element's text is that of the runs of text between its opening and closing
    # events: with the kernel, differences of the running length of the runs in event
    # order (one C pass); else, as the runs are numbered in document order and every one
    # lies in an element, differences of prefix sums of their lengths, for the few
    # elements asked about.
    opening, closing = page._spans
    asked = np.array([*hidden, body])
    kernel = active_kernel()
    if kernel is not None:
        starts, stops = opening[asked].astype(np.int64), closing[asked].astype(np.int64)
        found = kernel.span_text_lengths(page.texts, page.pieces, starts, stops)
        text = np.frombuffer(found, dtype=np.int64).tolist()
    else:
        lengths = np.fromiter(map(len, page.texts), np.int64, len(page.texts))
        prefix = np.concatenate(([0], np.cumsum(lengths)))
        text_events = np.flatnonzero(page.kinds == EVENT_TEXT)
        runs = np.searchsorted(text_events, np.stack((opening[asked], closing[asked])))
        text = (prefix[runs[1]] - prefix[runs[0]]).tolist()
    return [
        i
        for i, chars in zip(hidden, text, strict=False)
        if 2 * chars <= text[-1] and not (chars >= PAYWALLED_CHARS and "paywall" in page.hints[i])
    ]


def _body(page: PageEvents) -> int:
    """The ``<body>`` element: the root's child (as ``find("body")``), else the first one,
    else the root (fragments, framesets)."""
    tags = page.tags
    bodies: list[int] = []
    for _ in range(tags.count("body")):  # C scans of the list, not a Python loop
        bodies.append(tags.index("body", bodies[-1] + 1 if bodies else 0))
    children = [i for i in bodies if page.parent[i] == 0]
    return (children or bodies or [0])[0]


class _Kept(NamedTuple):
    """The elements a page's node table keeps (:func:`_kept_elements`): ``keep`` and
    ``before`` per element of the page (``before``: how many are kept before it, one more
    at the end), the rest per kept element, which is a node of the table: its element
    (:attr:`_Walk.element`), the table's ``parent``, ``depth``, ``end``, ``tags``,
    ``link_tags`` and ``is_link`` (:class:`~.nodetable.NodeTable`), and ``in_link``,
    whether it lies in a link other than the root."""

    keep: np.ndarray  # bool
    before: np.ndarray  # int64
    element: np.ndarray  # int32, as the five below
    parent: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    tags: np.ndarray
    link_tags: np.ndarray
    is_link: np.ndarray  # bool, as in_link
    in_link: np.ndarray


#: The types of :class:`_Kept`'s arrays, in order.
_KEPT_TYPES = (bool, np.int64, *[np.int32] * 6, bool, bool)


def _kept_elements(page: PageEvents, body: int, skip: np.ndarray, link: np.ndarray) -> _Kept:
    """The elements of ``body``'s subtree outside the subtrees of the elements ``skip``
    marks, and their tree as the node table's (``link``: per element, a link-like tag);
    in one C pass with the compiled kernel, else with numpy: the same arrays."""
    kernel = active_kernel()
    if kernel is not None:
        found = kernel.kept_elements(
            page.parent, page.end, page.depth, _bytes(skip), _bytes(link), body
        )
        return _Kept(*_arrays(found, _KEPT_TYPES))
    end = page.end
    positions = np.arange(len(page))
    in_body = (positions >= body) & (positions < end[body])
    keep = in_body & ~_subtree_mask(end, skip & in_body)
    before = np.concatenate(([0], np.cumsum(keep)))
    kept = np.flatnonzero(keep)
    parent = page.parent[kept]
    parent = np.where(parent >= body, before[np.maximum(parent, 0)], -1)
    table_end = before[end[kept]]
    is_link = link[kept]
    link_from = is_link.copy()
    link_from[0] = False  # the walk starts outside any link
    prefix_link_tags = np.concatenate(([0], np.cumsum(is_link)))
    table_positions = np.arange(len(kept))
    return _Kept(
        keep=keep,
        before=before,
        element=kept.astype(np.int32),
        parent=parent.astype(np.int32),
        depth=(page.depth[kept] - page.depth[body]).astype(np.int32),
        end=table_end.astype(np.int32),
        tags=(table_end - table_positions - 1).astype(np.int32),
        link_tags=(prefix_link_tags[table_end] - prefix_link_tags[table_positions + 1]).astype(
            np.int32
        ),
        is_link=is_link,
        in_link=_subtree_mask(table_end, link_from),
    )


class _BodyEvents(NamedTuple):
    """The events of the kept elements and of the text directly in them
    (:func:`_body_events`): per event its kind, its owner (a node of the table) and its
    piece of text (:class:`_Walk`); per run of the page's text, its collapsed length
    where such an event holds it, else 0 (one more, 0, for the marker); per node, the
    characters of its own text and of those in a link (the table's ``own_chars`` and
    ``own_link_chars``)."""

    kinds: np.ndarray  # int8
    owners: np.ndarray  # int32
    piece: np.ndarray  # int32
    piece_chars: np.ndarray  # int64
    own: np.ndarray  # int32
    own_link: np.ndarray  # int32


def _body_events(page: PageEvents, kept: _Kept) -> _BodyEvents:
    """The page's events that the node table ``kept`` keeps (:class:`_BodyEvents`); in one
    C pass with the compiled kernel, which counts the runs' collapsed lengths as it goes
    (:func:`_piece_lengths`), else with numpy: the same arrays."""
    kernel = active_kernel()
    if kernel is not None:
        found = kernel.body_events(
            page.nodes, page.kinds, page.pieces, page.texts, kept.before, _bytes(kept.in_link)
        )
        return _BodyEvents(*_arrays(found, _EVENT_TYPES))
    m = len(kept.element)
    selected = np.append(kept.keep, False)[page.nodes]  # node -1: text outside every element
    kinds = page.kinds[selected]
    owners = kept.before[page.nodes[selected]]
    piece = page.pieces[selected]
    is_text = kinds == EVENT_TEXT
    text_piece, text_owner = piece[is_text], owners[is_text]
    piece_chars = np.zeros(len(page.texts) + 1, dtype=np.int64)  # the last: the marker
    piece_chars[text_piece] = _piece_lengths(page.texts, text_piece)
    chars = piece_chars[text_piece]
    own = np.bincount(text_owner, weights=chars, minlength=m).astype(np.int32)
    own_link = np.bincount(
        text_owner, weights=chars * kept.in_link[text_owner], minlength=m
    ).astype(np.int32)
    return _BodyEvents(
        kinds, owners.astype(np.int32), piece.astype(np.int32), piece_chars, own, own_link
    )


#: The types of :class:`_BodyEvents`' arrays, in order.
_EVENT_TYPES = (np.int8, np.int32, np.int32, np.int64, np.int32, np.int32)


def _bytes(flags: np.ndarray) -> np.ndarray:
    """A boolean array as the kernel reads it (contiguous bytes)."""
    return np.ascontiguousarray(flags).view(np.uint8)


def _arrays(found: tuple[bytearray, ...], types: tuple[type, ...]) -> list[np.ndarray]:
    """The kernel's arrays (``found``, as bytes) as numpy arrays of ``types``."""
    return [np.frombuffer(column, dtype=t) for column, t in zip(found, types, strict=True)]


def _attribute_markup(values: tuple[str | None, ...] | None) -> str:
    """The attributes that cleaned HTML keeps (``href``, ``src``, ``alt``), as markup."""
    if values is None:
        return ""
    return "".join(
        f' {name}="{escape(value)}"'
        for name, value in zip(KEPT_ATTRIBUTES, values, strict=True)
        if value is not None
    )


#: The line break of the walk's text: a character no lxml text holds.
_BREAK = "\0"


def _input_hint(html: Any) -> str:
    """What to give instead of ``html``, for the objects a Scrapy user has at hand."""
    if hasattr(html, "body") and hasattr(html, "url") and hasattr(html, "headers"):
        return (
            " (of a Scrapy response: extract(response.body, url=response.url, "
            'content_type=response.headers.get("Content-Type")))'
        )
    if hasattr(html, "root") and hasattr(html, "xpath"):
        return " (of a Selector: its .root)"
    if isinstance(html, os.PathLike):
        return " (of a file: its bytes, path.read_bytes())"
    return ""
