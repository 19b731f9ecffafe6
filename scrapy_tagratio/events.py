"""The page as its events, in document order: what every reader gives (:mod:`.reader`).

:class:`_Recorder` takes the calls of lxml's parser-target interface (``start`` with the
attributes, ``data``, ``end``) and :meth:`_Recorder.close` turns them into
:class:`PageEvents`: flat arrays in document order and the few attributes the analysis
reads. The parser target calls it per event; the compiled kernel fills the same fields
from an lxml tree in one C loop; both end in the same :meth:`_Recorder.close`, which is
what makes their node tables identical.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

__all__ = [
    "EVENT_CLOSE",
    "EVENT_OPEN",
    "EVENT_TEXT",
    "KEPT_ATTRIBUTES",
    "SIGNAL_ATTRIBUTES",
    "SIGNAL_ELEMENTS",
    "PageAttributes",
    "PageEvents",
]

# Event kinds of the document-order stream.
EVENT_TEXT, EVENT_OPEN, EVENT_CLOSE = 0, 1, 2

_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
#: Attributes that may hide an element (checked by :func:`_is_hidden`).
_MAY_HIDE = frozenset({"hidden", "aria-hidden", "style"})
#: Attributes cleaned HTML keeps.
KEPT_ATTRIBUTES = ("href", "src", "alt")
_MAY_KEEP = frozenset(KEPT_ATTRIBUTES)
#: Elements whose text is code (JSON-LD excepted): dropped as it is read.
_CODE_TAGS = frozenset({"script", "style"})
#: The attributes and elements :meth:`_Recorder.read_signals` reads: an element with none
#: of these attributes and another tag has nothing for it (the kernel skips it).
SIGNAL_ATTRIBUTES = (
    "hidden",
    "aria-hidden",
    "style",
    "itemtype",
    "onclick",
    "rel",
    "datetime",
    "itemprop",
)
SIGNAL_ELEMENTS = ("meta", "script", "html")
_SIGNAL_KEYS = frozenset(SIGNAL_ATTRIBUTES)
_SIGNAL_ELEMENT_NAMES = frozenset(SIGNAL_ELEMENTS)
#: Elements whose attributes carry page-level signals: ``meta``, JSON-LD ``script``, and
#: the ``rel`` of links (whether the page is one of a series, its canonical URL, authors).
_SIGNAL_TAGS = frozenset({"meta", "script", "link", "a"})

#: Attributes are read (and the time budget checked) every this many elements with some.
_BATCH = 1 << 12


class _SharedStrings(dict[str, str]):
    """``function`` of a string, cached: one shared result per distinct input (tag names
    and class lists repeat within a page and across a site's pages). Bounded, as a page
    can invent any number of distinct names."""

    def __init__(self, function: Callable[[str], str], size: int) -> None:
        super().__init__()
        self.function = function
        self.size = size

    def __missing__(self, key: str) -> str:
        if len(self) >= self.size:
            self.clear()
        value = self[key] = self.function(key)
        return value


#: Tag as lxml gives it -> lower-case local name (namespace dropped).
_TAG_NAMES = _SharedStrings(lambda tag: tag.rsplit("}", 1)[-1].lower(), 1 << 12)
#: class, id, role and itemprop as read -> lower case.
_HINTS = _SharedStrings(str.lower, 1 << 14)


def _is_hidden(attrib: Any) -> bool:
    """The attributes hide the element: ``hidden`` (but ``hidden="until-found"``, whose
    content the browser's find-in-page reaches and reveals: collapsed sections and
    accordion panels, Wikipedia's mobile sections among them), ``aria-hidden="true"``,
    an inline ``display: none`` or ``visibility: hidden``."""
    hidden = attrib.get("hidden")
    if hidden is not None and hidden.strip().lower() != "until-found":
        return True
    if attrib.get("aria-hidden", "").strip().lower() == "true":
        return True
    style = attrib.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


@dataclass
class PageAttributes:
    """What the attributes of a page say beyond the per-element hints."""

    #: Elements with ``hidden`` (not ``"until-found"``), ``aria-hidden="true"`` or an
    #: inline ``display:none`` / ``visibility:hidden`` (:func:`_is_hidden`).
    hidden: list[int] = field(default_factory=list)
    #: Elements with an ``onclick`` handler.
    onclick: list[int] = field(default_factory=list)
    #: Every ``itemtype`` value (microdata types).
    itemtypes: list[str] = field(default_factory=list)
    #: ``href``, ``src``, ``alt`` (None where absent) of the elements having one of them.
    kept: dict[int, tuple[str | None, ...]] = field(default_factory=dict)
    #: Per ``<meta>``: its ``property``, ``name``, ``itemprop`` and ``content`` (None where
    #: absent).
    metas: list[tuple[str | None, str | None, str | None, str | None]] = field(default_factory=list)
    #: ``rel`` values of ``<link>`` and ``<a>`` elements, and those elements (aligned).
    rels: list[str] = field(default_factory=list)
    rel_owners: list[int] = field(default_factory=list)
    #: ``<script>`` elements whose ``type`` names JSON-LD.
    json_ld: list[int] = field(default_factory=list)
    #: Declared languages: the ``lang`` of ``<html>`` and the ``content`` of
    #: ``<meta http-equiv="content-language">``, in document order.
    languages: list[str] = field(default_factory=list)
    #: Per element with a ``datetime`` attribute (``<time>``, ``<ins>``, ``<del>``): the
    #: element and the value.
    datetimes: list[tuple[int, str]] = field(default_factory=list)
    #: Per element other than ``<meta>`` with an ``itemprop``: the element, the property
    #: and its ``content`` or ``datetime`` attribute (None where it has neither).
    itemprops: list[tuple[int, str, str | None]] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class PageEvents:
    """The whole page (head included) as read, in document order.

    Per element (index = order of its start tag): ``tags``, ``parent`` (-1 for the
    root), ``depth``, ``end`` (its subtree is ``[i, end[i])``) and ``hints`` (class, id,
    role and itemprop lower-cased and space-separated, ``""`` without attributes).
    ``events`` is the document-order stream: ``kinds`` (:data:`EVENT_OPEN`,
    :data:`EVENT_TEXT`, :data:`EVENT_CLOSE`), ``nodes`` (the element, or for text the
    element it is directly in: an element's text and the tails of its children) and
    ``pieces`` (for text, the index of its run of text in ``texts``, else -1).
    ``attributes``: what else the analysis reads in the attributes.
    """

    tags: list[str]
    parent: np.ndarray
    depth: np.ndarray
    end: np.ndarray
    hints: np.ndarray  # object: str per element
    kinds: np.ndarray
    nodes: np.ndarray
    pieces: np.ndarray
    texts: list[str]
    attributes: PageAttributes

    def __len__(self) -> int:
        return len(self.tags)

    @cached_property
    def _rels_lowered(self) -> str:
        """Every ``rel`` value of the page, joined and lowercased (:meth:`with_rel`)."""
        return " ".join(self.attributes.rels).lower()

    def with_rel(self, word: str) -> list[int]:
        """The ``<link>`` and ``<a>`` elements whose ``rel`` names ``word`` (lowercase), in
        document order. Most pages' rels (nofollow, noopener...) are many and name none of
        the few words asked for: one substring test over them all answers that."""
        if word not in self._rels_lowered:
            return []
        attributes = self.attributes
        return [
            owner
            for rel, owner in zip(attributes.rels, attributes.rel_owners, strict=True)
            if word in rel.lower().split()
        ]

    @cached_property
    def canonical_link(self) -> str | None:
        """The ``href`` of the page's first ``<link rel="canonical">`` that has one, as
        written (read by the metadata and by the overview detector)."""
        kept = self.attributes.kept
        for owner in self.with_rel("canonical"):
            href = (kept.get(owner) or (None,))[0]
            if href and self.tags[owner] == "link":
                return href
        return None

    @cached_property
    def title_text(self) -> str:
        """The text of the page's first ``<title>`` (:meth:`text_under`; ``""`` if none):
        read by the document (:attr:`~.document.Document.html_title`) and by the metadata."""
        tags = self.tags
        return self.text_under(tags.index("title")) if "title" in tags else ""

    @cached_property
    def json_ld_sources(self) -> list[str]:
        """The text of each JSON-LD script (``attributes.json_ld``), raw, in document order
        (read by the metadata and by the overview detector)."""
        return [self.own_text(script) for script in self.attributes.json_ld]

    @cached_property
    def _spans(self) -> tuple[np.ndarray, np.ndarray]:
        """Per element, the events of its opening and of its closing: the events of its
        subtree lie between them, so a text query reads that range, not every event."""
        opening = np.flatnonzero(self.kinds == EVENT_OPEN).astype(np.int32)
        closes = np.flatnonzero(self.kinds == EVENT_CLOSE)
        closing = np.empty(len(self.tags), dtype=np.int32)  # held: half of int64's memory
        closing[self.nodes[closes]] = closes
        return opening, closing

    def _runs(self, element: int) -> tuple[np.ndarray, np.ndarray]:
        """The runs of text in ``element``'s subtree (indices into ``texts``) and the
        element each is directly in, in document order."""
        opening, closing = self._spans
        start, stop = int(opening[element]), int(closing[element])
        pieces = self.pieces[start:stop]
        text = pieces >= 0
        return pieces[text], self.nodes[start:stop][text]

    def own_text(self, element: int) -> str:
        """The text directly in ``element`` (its text and its children's tails), raw."""
        runs, owners = self._runs(element)
        return "".join(self.texts[i] for i in runs[owners == element].tolist())

    def text_under(self, element: int) -> str:
        """All text inside ``element``, its descendants' too (hidden text included, script
        and style code not kept), white space collapsed."""
        opening, closing = self._spans
        return self._collapsed(self.pieces[int(opening[element]) : int(closing[element])])

    def texts_under(self, elements: np.ndarray) -> Iterator[str]:
        """:meth:`text_under` of each of ``elements`` in turn, read as the caller asks
        (it may stop early); their spans looked up at once, not one element at a time."""
        opening, closing = self._spans
        pieces = self.pieces
        for start, stop in zip(opening[elements].tolist(), closing[elements].tolist(), strict=True):
            yield self._collapsed(pieces[start:stop])

    def _collapsed(self, pieces: np.ndarray) -> str:
        """The runs of text among ``pieces`` (a span of events' pieces) joined, white
        space collapsed."""
        texts = self.texts
        return " ".join("".join([texts[i] for i in pieces[pieces >= 0].tolist()]).split())


class _Recorder:
    """The parser target: libxml2 (through lxml) calls it for every start tag, end tag and
    run of text, in document order. The hot path of every page, so a call only appends:
    the tree's shape is derived afterwards from the order of the events (:func:`_shape`),
    and attributes are read in batches (:meth:`_read_attributes`)."""

    __slots__ = (
        "attribs",
        "attributed",
        "check_deadline",
        "events",
        "found",
        "hinted",
        "hints",
        "in_code",
        "more",
        "shape",
        "shared",
        "tags",
        "texts",
    )

    def __init__(self, check_deadline: Callable[[], None]) -> None:
        self.check_deadline = check_deadline
        self.tags: list[str] = []
        self.events = array("b")  # EVENT_OPEN, EVENT_CLOSE, EVENT_TEXT
        self.texts: list[str] = []
        self.more: list[str] = []  # the last run's pieces after its first (:meth:`data`)
        #: Each distinct run of text and kept link ``(href, src, alt)`` read, as its own
        #: key: equal ones share one object (``setdefault``). Both are held for the page's
        #: life, and a large page repeats many (a forum's "Reply", an archive's recurring
        #: paragraphs and tag links: on the 20 MB test page about three in five runs, 20
        #: MB of strings, and half the links), as the tags share one string per name. A run
        #: and a link are never equal.
        self.shared: dict[Any, Any] = {}
        self.attributed: list[int] = []  # elements with attributes not read yet
        self.attribs: list[Any] = []
        self.hinted = array("i")  # elements with attributes (int32), and their hints
        self.hints: list[str] = []
        self.found = PageAttributes()
        self.in_code = False
        #: The shape of the tree when a reader knows it (the kernel), as the bytes of five
        #: int32 arrays: parent, depth, end, nodes, pieces (see :func:`_shape`).
        self.shape: tuple[bytearray, ...] | None = None

    def start(self, tag: str, attrib: Any) -> None:
        tags = self.tags
        name = _TAG_NAMES[tag]  # one shared string per name: lxml makes a new one
        tags.append(name)
        self.events.append(EVENT_OPEN)
        if name in _CODE_TAGS:  # holds text only (libxml2 makes no element inside)
            self.in_code = not (attrib and "ld+json" in (attrib.get("type") or ""))
        elif self.in_code:  # an element in lexbor's svg or math style: text again, as
            self.in_code = False  # the kernel's walk reads it
        if attrib:
            self.attributed.append(len(tags) - 1)
            self.attribs.append(attrib)
            if len(self.attribs) >= _BATCH:
                self._read_attributes()

    def end(self, tag: str) -> None:
        self.events.append(EVENT_CLOSE)
        self.in_code = False

    def data(self, text: str) -> None:
        if self.in_code:  # script or style source: never read, not kept
            return
        events = self.events
        if events and events[-1] == EVENT_TEXT:  # the run goes on (after a comment, ...)
            # Joined when the run ends (:meth:`_join_run`): ``+=`` on the list's item
            # copied the run at every piece, quadratic in a run of thousands of pieces
            # (stray "<" characters, text between comments).
            self.more.append(text)
        else:
            if self.more:
                self._join_run()
            events.append(EVENT_TEXT)
            self.texts.append(self.shared.setdefault(text, text))

    def _join_run(self) -> None:
        """The last run of text with its pieces after the first (:attr:`more`)."""
        run = "".join((self.texts[-1], *self.more))
        self.texts[-1] = self.shared.setdefault(run, run)
        self.more.clear()

    def _read_attributes(self) -> None:
        """Hints, links and the signals (:meth:`read_signals`) of the elements seen since
        the last batch (a batch bounds the attribute dictionaries held); only the elements
        the kernel would hand over go to :meth:`read_signals` (the others have nothing it
        reads)."""
        self.check_deadline()
        hints, kept, tags, shared = self.hints, self.found.kept, self.tags, self.shared
        self.hinted.extend(self.attributed)
        signal_indices, signal_attribs = [], []
        for index, attrib in zip(self.attributed, self.attribs, strict=True):
            get = attrib.get
            hint = f"{get('class', '')} {get('id', '')} {get('role', '')} {get('itemprop', '')}"
            hints.append(_HINTS[hint])
            if not _MAY_KEEP.isdisjoint(attrib):
                link = (get("href"), get("src"), get("alt"))
                kept[index] = shared.setdefault(link, link)
            if not _SIGNAL_KEYS.isdisjoint(attrib) or tags[index] in _SIGNAL_ELEMENT_NAMES:
                signal_indices.append(index)
                signal_attribs.append(attrib)
        self.read_signals(signal_indices, signal_attribs)
        self.attributed.clear()
        self.attribs.clear()

    def read_signals(self, indices: list[int], attribs: list[Any]) -> None:
        """Hidden elements and the page-level attributes of the elements ``indices``
        (document order) whose attributes are ``attribs``. The kernel calls it only for
        elements with one of :data:`SIGNAL_ATTRIBUTES` (a ``style`` only when it holds
        "none" or "hidden") or a tag of :data:`SIGNAL_ELEMENTS`: the others have nothing
        it reads."""
        found, tags = self.found, self.tags
        for index, attrib in zip(indices, attribs, strict=True):
            get = attrib.get
            if not _MAY_HIDE.isdisjoint(attrib) and _is_hidden(attrib):
                found.hidden.append(index)
            if "itemtype" in attrib:
                found.itemtypes.append(attrib["itemtype"])
            if "onclick" in attrib:
                found.onclick.append(index)
            name = tags[index]
            if name in _SIGNAL_TAGS:
                if name == "meta":
                    found.metas.append(
                        (get("property"), get("name"), get("itemprop"), get("content"))
                    )
                    if (get("http-equiv") or "").lower() == "content-language":
                        found.languages.append(get("content") or "")
                    continue
                if name == "script":
                    if "ld+json" in (get("type") or ""):
                        found.json_ld.append(index)
                elif "rel" in attrib:
                    found.rels.append(attrib["rel"])
                    found.rel_owners.append(index)
            elif name == "html" and "lang" in attrib:
                found.languages.append(attrib["lang"])
            if "datetime" in attrib:
                found.datetimes.append((index, attrib["datetime"]))
            if "itemprop" in attrib:
                found.itemprops.append(
                    (index, attrib["itemprop"], get("content") or get("datetime"))
                )

    def close(self) -> PageEvents:
        self._read_attributes()
        if self.more:
            self._join_run()
        self.shared.clear()  # the texts and links hold them; not needed after reading
        tags = self.tags
        events = np.frombuffer(self.events, dtype=np.int8) if self.events else np.zeros(0, np.int8)
        texts = self.texts
        if self.shape is not None:  # given only for a page without text outside elements
            parent, depth, end, nodes, pieces = (
                np.frombuffer(part, dtype=np.int32) for part in self.shape
            )
        else:
            parent, depth, end, nodes, pieces = _shape(events)
            outside = np.flatnonzero((nodes < 0) & (events == EVENT_TEXT))
            if outside.size:  # white space between roots (after "</html>"): see _drop_texts
                events, texts, nodes, pieces = _drop_texts(events, texts, nodes, pieces, outside)
        hints = np.full(len(tags), "", dtype=object)
        hints[np.frombuffer(self.hinted, dtype=np.int32)] = self.hints
        return PageEvents(
            tags=tags,
            parent=parent,
            depth=depth,
            end=end,
            hints=hints,
            kinds=events,
            nodes=nodes,
            pieces=pieces,
            texts=texts,
            attributes=self.found,
        )


def _drop_texts(
    events: np.ndarray,
    texts: list[str],
    nodes: np.ndarray,
    pieces: np.ndarray,
    outside: np.ndarray,
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """The events, texts and the events' nodes and pieces (:func:`_shape`) without the
    runs of text in no element (``outside``: their events): only white space between two
    roots can be there (libxml2 wraps other text in an implied element), and libxml2's
    tree drops it, so every reader drops it. The elements' parents, depths and ends do not
    change (text events move no level), nor do the other events' nodes: the pieces are
    numbered again, and the shape is not derived a second time (on a large page, its
    arrays were most of the reading's peak of memory)."""
    drop = set(pieces[outside].tolist())
    pieces = np.delete(pieces, outside)
    is_text = pieces >= 0
    pieces[is_text] = np.arange(np.count_nonzero(is_text), dtype=pieces.dtype)
    return (
        np.delete(events, outside),
        [t for i, t in enumerate(texts) if i not in drop],
        np.delete(nodes, outside),
        pieces,
    )


def _shape(events: np.ndarray) -> tuple[np.ndarray, ...]:
    """The tree's shape from the order of its events: per element its parent, depth and
    subtree end; per event its node (the element opened or closed, or the element a run
    of text is directly in; -1 for text outside every element) and its run of text (-1
    for open/close).

    Nesting level = opens minus closes so far; an element's parent, the element a close
    ends and a text's element are each "the last element opened before this event at
    level L", found for all events at once by a search in the opens sorted by (level,
    position)."""
    is_open, is_close = events == EVENT_OPEN, events == EVENT_CLOSE
    opens_so_far = np.cumsum(is_open, dtype=np.int32)  # after each event
    level = opens_so_far - np.cumsum(is_close, dtype=np.int32)
    opened = np.flatnonzero(is_open)
    depth = level[opened] - 1
    span = len(events) + 1
    keys = depth.astype(np.int64) * span + opened  # sorted: opens by level, then position
    order = np.argsort(keys, kind="stable").astype(np.int32)
    keys = keys[order]

    def last_opened(at_level: np.ndarray, before: np.ndarray) -> np.ndarray:
        if not order.size:  # text, but no element at all
            return np.full(before.size, -1, dtype=np.int32)
        found = np.searchsorted(keys, at_level.astype(np.int64) * span + before) - 1
        return np.where(at_level >= 0, order[np.maximum(found, 0)], -1).astype(np.int32)

    parent = last_opened(depth - 1, opened)
    closes = np.flatnonzero(is_close)
    closed = last_opened(level[closes], closes)
    end = np.empty(len(opened), dtype=np.int32)
    end[closed] = opens_so_far[closes]
    nodes = opens_so_far - 1  # the element an open event opens
    del opens_so_far
    nodes[closes] = closed
    texts = np.flatnonzero(events == EVENT_TEXT)
    nodes[texts] = last_opened(level[texts] - 1, texts)
    pieces = np.full(len(events), -1, dtype=np.int32)
    pieces[texts] = np.arange(len(texts))
    return parent, depth, end, nodes, pieces
