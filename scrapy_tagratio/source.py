"""The source view of CETR and CCB: the HTML source of the body, cleaned by the rule of
:mod:`.cleaning` applied to its start tags (an element running to its matching closing tag;
a start tag never closed drops only itself: where the parser would end it is not in the
source), its code points, and the spans of its tags (array work over the code points, the
same tokens a regex scan finds).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from html import unescape

import numpy as np

from .cleaning import BLOCK_TAGS, VOID_TAGS, TagClasses, _block_content, _dropped, hidden_by_class
from .events import _is_hidden

__all__ = [
    "SOFT_HYPHEN",
    "SourceView",
    "normalise_text",
    "reader_text",
    "source_view",
    "span_run_lengths",
    "strip_tags",
]


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
#: closer at every character (faster; same matches).
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
#: ``visibility:hidden``, a class :func:`~.cleaning.hidden_by_class` reads as hiding) holds
#: one of these: start tags without are not parsed.
_HIDING_WORDS = (
    "hidden", "none", "hide", "invisible", "sr-only", "screen-reader", "assistive", "offscreen",
)  # fmt: skip


#: Elements the source view never drops, whatever their attributes (as the node table).
_NEVER_DROPPED = frozenset({"html", "body"})


def source_view(text: str) -> SourceView:
    """The source view of a page's text as the parser gets it (:func:`~.reader.parser_input`):
    from ``<body`` on, comments, scripts and styles removed, then the elements the cleaning
    rule drops."""
    body_start = re.search(r"<body\b", text, re.I)
    if body_start is not None:
        text = text[body_start.start() :]
    source = _source_view(_SOURCE_JUNK.sub("", text))
    drop_starts, drop_ends = _dropped_spans(source)
    if not drop_starts.size:
        return source
    text = source.text
    kept = zip([0, *drop_ends.tolist()], [*drop_starts.tolist(), len(text)], strict=True)
    return _source_view("".join(text[start:end] for start, end in kept))


def _source_view(text: str) -> SourceView:
    """The tags of ``text`` (a source without comments, scripts and styles)."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    if ((codes - 0xD800) < 0x800).any():
        # Lone surrogates (a str page decoded with "surrogateescape"): "?", as the
        # readers encode them for the parser; as they are, no text could be written out.
        text = text.encode("utf-8", "replace").decode("utf-8")
        codes = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
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
        (source.tag_names[i] in VOID_TAGS for i in opens.tolist()), bool, opens.size
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


def _hidden_in_source(attributes: dict[str, str]) -> bool:
    """The start tag's ``attributes`` hide its element, as the node table reads them
    (:mod:`.cleaning`: the hint is the class, id, role and itemprop, lower case)."""
    get = attributes.get
    hint = f"{get('class', '')} {get('id', '')} {get('role', '')} {get('itemprop', '')}"
    return _is_hidden(attributes) or hidden_by_class(hint.lower())


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
    tags = TagClasses([source.tag_names[i] for i in opens.tolist()])
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
        if _hidden_in_source(_source_attributes(text[start:end]))
    ]

    def holds_block_content(noscripts: np.ndarray) -> np.ndarray:
        stops = _element_ends(source, opens[noscripts], closing, name_ids)
        block_starts = open_starts[_block_content(tags)]
        after_start = np.searchsorted(block_starts, open_starts[noscripts])
        return np.searchsorted(block_starts, stops) > after_start

    skip = _dropped(tags, hidden, holds_block_content)
    skip &= ~tags.mask(_NEVER_DROPPED)
    dropped = opens[skip]
    if not dropped.size:
        return empty, empty
    starts = source.tag_starts[dropped].astype(np.int64)
    ends = _element_ends(source, dropped, closing, name_ids)
    # Union of the spans: a new group starts where a span begins after every earlier end.
    first = np.concatenate(([True], starts[1:] >= np.maximum.accumulate(ends)[:-1]))
    return starts[first], np.maximum.reduceat(ends, np.flatnonzero(first))


_SPACES = re.compile(r"[^\S\n]+")


_NEWLINES = re.compile(r" ?\n[\s]*")


#: U+00AD, a hyphenation point (``&shy;``): shown only where a line breaks there, so it
#: is no part of the text's words (German and Finnish pages put one in every long word).
SOFT_HYPHEN = "\xad"


def reader_text(text: str) -> str:
    """``text`` as a reader sees it and as text is compared: without :data:`SOFT_HYPHEN`,
    and in Unicode normalization form C (the W3C Character Model's form for matching
    strings on the web), so that a letter written as a base and a combining mark reads
    as the same letter precomposed (pages in Indic scripts, Korean and some German
    pages come decomposed; trafilatura's output is NFC too)."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", text.replace(SOFT_HYPHEN, ""))


def normalise_text(text: str) -> str:
    """Collapse white space: runs of spaces to one space, line breaks to one newline;
    the text as a reader sees it (:func:`reader_text`)."""
    text = _SPACES.sub(" ", reader_text(text))
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
