"""The article's headline belongs in ``Extraction.title``, not at the head of its text.

Whether an algorithm's text starts with the headline depends on the page: the ``<h1>``
sits inside the article's container on one site and above it on the next, so it was kept
on about half the development pages. The development sets' gold settles it: the main text
of fundus-dev, goose-dev and readability-dev starts without it (0 of 119, 0 of 39, 4 of
59 pages), as trafilatura-eval's snippets and the peers' output do; only dragnet-dev's
gold mostly starts with it. :func:`without_leading_headline` makes every page alike: when
the first content block is the headline (``Extraction.title``, read before), it is left
out of the text, the HTML and the Markdown. The algorithm's blocks and figures (content
share, net text length, link density: the papers' quantities) stay as it computed them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .algorithms.base import Labelling, dom_labelling
from .document import Document

__all__ = ["without_leading_headline"]

_WORD = re.compile(r"\w+")
#: A heading whose words begin or end the title is the headline the title carries with the
#: site's name ("Headline | Site", "Site - Headline": the title without metadata).
_HEADINGS = frozenset({"h1", "h2", "h3"})


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _is_end_of(part: list[str], words: list[str]) -> bool:
    """Whether ``part`` (two words or more) begins or ends ``words``."""
    size = len(part)
    return 2 <= size < len(words) and part in (words[:size], words[-size:])


def without_leading_headline(
    document: Document, labelling: Labelling, headline: str | None
) -> Labelling:
    """``labelling`` without its first block (DOM methods) or line (the others) when that
    is the ``headline``, word for word (case, spacing and punctuation aside), or a heading
    that begins or ends it: what the text outputs are built from."""
    words = _words(headline or "")
    if not words:
        return labelling
    content = labelling.content_nodes
    if content is None:
        line, _, rest = labelling.text.partition("\n")
        if _words(line) != words:
            return labelling
        return replace(labelling, text=rest)
    if not content.any():
        return labelling
    block_of = document.nodes.block
    block = block_of[content.argmax()]
    opening = _words(document.block_text(block))
    if opening != words and not (
        document.nodes.tag[block] in _HEADINGS and _is_end_of(opening, words)
    ):
        return labelling
    # The content keeps or leaves each block whole (dom_labelling) and loses one.
    return dom_labelling(
        document,
        content & (block_of != block),
        labelling.block_scores.scores,
        labelling.threshold,
        kind=labelling.block_scores.kind,
        whole_blocks=True,
    )
