"""Markdown of the main content, from the same content tree as its text and cleaned HTML.

:func:`markdown_of` walks the events of the elements the algorithm kept (the walk of
:class:`~.document.Document`, as ``text_of`` and ``html_of`` do) and writes headings
(``#``), paragraphs (blank lines between them), bulleted and numbered lists (nested by
indentation), tables (GitHub pipe tables, the first row as header), block quotes, code
blocks, and emphasis (``*``, ``**``, `````). Images and links are left out: the text of a
link stays. The walk is one pass over the kept events; it runs only when Markdown is
asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .cleaning import CELL_TAGS, data_tables
from .document import BLOCK_TAGS, Document
from .reader import EVENT_OPEN, EVENT_TEXT
from .source import reader_text

__all__ = ["markdown_of"]

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_EMPHASIS = {"em": "*", "i": "*", "strong": "**", "b": "**", "code": "`", "kbd": "`"}


@dataclass
class _Writer:
    """The Markdown being written: finished blocks, and the line or table being built."""

    blocks: list[tuple[str, bool]] = field(default_factory=list)  # (markdown, list item)
    inline: list[str] = field(default_factory=list)
    lists: list[list[int]] = field(default_factory=list)  # per open list: [numbered, count]
    marker: str | None = None  # the list marker the next line starts with
    heading: int = 0
    quotes: int = 0
    pre: int = 0
    emphasis: list[tuple[str, int]] = field(default_factory=list)  # (marker, inline start)
    tables: int = 0
    rows: list[list[str]] = field(default_factory=list)

    def _take_inline(self) -> str:
        """The inline text so far, emptied; the opening markers of emphasis still open are
        dropped (emphasis does not run across blocks or table cells)."""
        for _, start in reversed(self.emphasis):
            del self.inline[start]
        self.emphasis.clear()
        raw = "".join(self.inline)
        self.inline.clear()
        return raw

    def flush(self) -> None:
        """The inline text so far as one block (a heading, a list item, a paragraph)."""
        raw = self._take_inline()
        if self.pre:
            text = raw.strip("\n")
            if text.strip():
                self.blocks.append((self._quoted(f"```\n{text}\n```"), False))
            return
        text = " ".join(raw.split())
        if not text:
            return
        item = bool(self.lists)
        indent = "   " * (len(self.lists) - 1) if item else ""
        if self.heading:
            text = f"{'#' * self.heading} {text}"
        if item and self.marker is not None:
            text, self.marker = f"{indent}{self.marker}{text}", None
        elif item:
            text = f"{indent}   {text}"
        self.blocks.append((self._quoted(text), item and not self.heading))

    def _quoted(self, text: str) -> str:
        prefix = "> " * self.quotes
        return "\n".join(prefix + line for line in text.split("\n")) if prefix else text

    def open(self, tag: str) -> None:
        if self.tables:
            self._open_in_table(tag)
        elif tag in _EMPHASIS:
            if not self.pre:
                self.emphasis.append((_EMPHASIS[tag], len(self.inline)))
                self.inline.append(_EMPHASIS[tag])
        elif tag in BLOCK_TAGS:
            self.flush()
            if tag in _HEADINGS:
                self.heading = _HEADINGS[tag]
            elif tag in ("ul", "ol"):
                self.lists.append([tag == "ol", 0])
            elif tag == "li" and self.lists:
                current = self.lists[-1]
                current[1] += 1
                self.marker = f"{current[1]}. " if current[0] else "- "
            elif tag == "blockquote":
                self.quotes += 1
            elif tag == "pre":
                self.pre += 1
            elif tag == "table":
                self.tables, self.rows = 1, []

    def close(self, tag: str) -> None:
        if self.tables:
            self._close_in_table(tag)
        elif tag in _EMPHASIS:
            if not self.pre and self.emphasis:
                self._close_emphasis()
        elif tag in BLOCK_TAGS:
            self.flush()
            if tag in _HEADINGS:
                self.heading = 0
            elif tag in ("ul", "ol") and self.lists:
                self.lists.pop()
            elif tag == "blockquote":
                self.quotes = max(0, self.quotes - 1)
            elif tag == "pre":
                self.pre = max(0, self.pre - 1)

    def _close_emphasis(self) -> None:
        marker, start = self.emphasis.pop()
        inline = self.inline
        # The first and last pieces of the emphasised text holding more than white space,
        # found from its two ends; the markers go in pieces of their own. Nothing is joined
        # but white space, so that closing each of many nested emphases costs no more than
        # its ends (joining the text, or adding to its last piece, was quadratic).
        first = next((i for i in range(start + 1, len(inline)) if inline[i].strip()), None)
        if first is None:  # nothing emphasised: no markers
            del inline[start]
            return
        last = next(i for i in range(len(inline) - 1, first - 1, -1) if inline[i].strip())
        # "*word *" is not emphasis in Markdown: spaces go outside the markers.
        stripped = inline[last].rstrip()
        inline[last + 1 :] = ["".join((marker, inline[last][len(stripped) :], *inline[last + 1 :]))]
        inline[last] = stripped
        head = "".join(inline[start + 1 : first])
        text = inline[first]
        inline[first] = text.lstrip()
        inline[start] = head + text[: len(text) - len(inline[first])] + marker
        del inline[start + 1 : first]

    # Tables: cells are inline text; nested tables and blocks in cells are flattened.
    def _open_in_table(self, tag: str) -> None:
        if tag == "table":
            self.tables += 1
        elif self.tables == 1 and tag == "tr":
            self.rows.append([])
            self._take_inline()
        elif self.tables == 1 and tag in CELL_TAGS:
            self._take_inline()
        elif tag in BLOCK_TAGS:
            self.inline.append(" ")

    def _close_in_table(self, tag: str) -> None:
        if tag == "table":
            self.tables -= 1
            if not self.tables:
                self._write_table()
        elif self.tables == 1 and tag in CELL_TAGS:
            if not self.rows:
                self.rows.append([])
            cell = " ".join(self._take_inline().split()).replace("|", "\\|")
            self.rows[-1].append(cell)
        elif tag in BLOCK_TAGS:
            self.inline.append(" ")

    def _write_table(self) -> None:
        rows = [row for row in self.rows if any(row)]
        self.rows = []
        self._take_inline()
        if not rows:
            return
        width = max(map(len, rows))
        rows = [row + [""] * (width - len(row)) for row in rows]
        lines = [f"| {' | '.join(row)} |" for row in rows]
        lines.insert(1, "|" + " --- |" * width)
        self.blocks.append((self._quoted("\n".join(lines)), False))

    def markdown(self) -> str:
        self.flush()
        parts: list[str] = []
        previous_item = False
        for text, item in self.blocks:
            if parts:
                parts.append("\n" if item and previous_item else "\n\n")
            parts.append(text)
            previous_item = item
        return reader_text("".join(parts))


def markdown_of(document: Document, content: np.ndarray) -> str:
    """Markdown of the elements marked in ``content`` (a boolean array over the node table,
    as for :meth:`~.document.Document.text_of`), their ancestors giving the structure."""
    if not content.any():
        return ""
    nodes = document.nodes
    tags = nodes.tag
    # Empty cells of kept rows hold no content but keep the columns in line.
    cells = nodes.tag_mask(CELL_TAGS) & (nodes.chars == 0)
    content = content | (cells & nodes.with_ancestors(content)[np.maximum(nodes.parent, 0)])
    layout = _layout_tables(document)
    writer = _Writer()
    for kind, node, text in document.content_events(content):
        if kind == EVENT_TEXT:
            writer.inline.append(text)
        else:
            tag = "div" if layout[node] else tags[node]
            (writer.open if kind == EVENT_OPEN else writer.close)(tag)
    return writer.markdown()


def _layout_tables(document: Document) -> np.ndarray:
    """Per node: a table that lays the page out rather than holding data
    (:func:`~.cleaning.data_tables`), outside any data table. Its rows and cells are read
    as blocks."""
    nodes = document.nodes
    data = data_tables(nodes)
    return nodes.tag_mask(("table",)) & ~data & (nodes.nearest_ancestor(data) < 0)
