"""The article's headline belongs in ``Extraction.title``, not at the head of its text.

Whether an algorithm's text starts with the headline depends on the page: the ``<h1>``
sits inside the article's container on one site and above it on the next, so it was kept
on some development pages and not on others. The development sets' gold settles it: the
main text of fundus-dev, goose-dev and readability-dev starts without it on (nearly)
every page, as trafilatura-eval's snippets and the peers' output do; only dragnet-dev's
gold mostly starts with it. :func:`without_leading_headline` makes every page alike: when
the first content block is the headline (``Extraction.title``, read before), it is left
out of the text, the HTML and the Markdown. The algorithm's blocks and figures (content
share, net text length, link density: the papers' quantities) stay as it computed them.
"""

from __future__ import annotations

from dataclasses import replace

from .algorithms.base import Labelling, dom_labelling
from .document import Document
from .titles import HEADLINE_TAGS, names_title, title_words

__all__ = ["without_leading_headline"]


def without_leading_headline(
    document: Document, labelling: Labelling, headline: str | None
) -> Labelling:
    """``labelling`` without its first block (DOM methods) or line (the others) when that
    is the ``headline``, word for word (case, spacing and punctuation aside), or a heading
    that begins or ends it: what the text outputs are built from."""
    words = title_words(headline)
    if not words:
        return labelling
    content = labelling.content_nodes
    if content is None:
        line, _, rest = labelling.text.partition("\n")
        if title_words(line) != words:
            return labelling
        return replace(labelling, text=rest)
    if not content.any():
        return labelling
    block_of = document.nodes.block
    block = block_of[content.argmax()]
    opening = title_words(document.block_text(block))
    if opening != words and not (
        document.nodes.tag[block] in HEADLINE_TAGS and names_title(opening, words)
    ):
        return labelling
    # The content keeps or leaves each block whole (dom_labelling) and loses one. The
    # text of a DOM method's content breaks a line where a block element starts or ends
    # (Document.text_of), so a headline block that holds no other block element is one
    # line, the first (no content comes before it): the text is the labelling's without
    # that line, not built again.
    nodes = document.nodes
    one_line = not nodes.is_block[block + 1 : nodes.end[block]].any()
    return dom_labelling(
        document,
        content & (block_of != block),
        labelling.block_scores.scores,
        labelling.threshold,
        kind=labelling.block_scores.kind,
        whole_blocks=True,
        text=labelling.text.partition("\n")[2] if one_line else None,
    )
