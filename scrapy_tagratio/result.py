"""What an extraction returns: :class:`Extraction` and its per-block scores, :class:`Block`.

Both are frozen, picklable (they cross process boundaries in the worker pool and go into
``response.meta`` under scrapy-redis) and convert to JSON-ready dicts with ``to_dict()``.
Per-block scores are kept as numpy arrays and only turned into :class:`Block` objects on
request, because a page has thousands of nodes and most callers never look at them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .metadata import Metadata

__all__ = ["Block", "BlockKind", "BlockScores", "Extraction"]

BlockKind = Literal["line", "token", "char-run", "node"]


@dataclass(frozen=True)
class Block:
    """One scored unit of the page: a source line (CETR), a run of characters or tokens
    (CCB), or a DOM element (CETD, TextSweeper and the default algorithm)."""

    kind: BlockKind
    index: int
    score: float
    is_content: bool
    text_length: int
    tag: str | None = None
    #: The block recurs on other pages of the site (:mod:`.site_memory`): template.
    is_template: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (a score JSON cannot hold, such as CETD's infinite density on a
        page without links, is None)."""
        return {
            "kind": self.kind,
            "index": self.index,
            "score": _json_number(self.score),
            "is_content": self.is_content,
            "text_length": self.text_length,
            "tag": self.tag,
            "is_template": self.is_template,
        }


@dataclass(frozen=True, eq=False)
class BlockScores:
    """Per-block arrays, aligned: score, content label, text length and (for DOM
    methods) the tag name of each block and, with a site memory, whether it is template."""

    kind: BlockKind
    scores: np.ndarray
    labels: np.ndarray
    text_lengths: np.ndarray
    tags: tuple[str, ...] | None = None
    template: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    def blocks(self) -> tuple[Block, ...]:
        tags = self.tags or (None,) * len(self)
        template = self.template.tolist() if self.template is not None else [False] * len(self)
        rows = zip(
            self.scores.tolist(),
            self.labels.tolist(),
            self.text_lengths.tolist(),
            tags,
            template,
            strict=True,
        )
        return tuple(
            Block(self.kind, i, float(s), bool(c), int(n), t, bool(m))
            for i, (s, c, n, t, m) in enumerate(rows)
        )


def _json_number(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


@dataclass(frozen=True)
class Extraction:
    """The main content of one page and the figures that decided it.

    Attributes:
        text: the main text, blocks separated by newlines, white space normalised.
        html: cleaned HTML of the content (DOM algorithms), else ``None``.
        markdown: Markdown of the content (headings, lists, tables, emphasis), when asked
            for, else ``None``.
        title: the article's headline (``metadata.headline``); without metadata the
            page's ``og:title``, ``<title>`` or first ``h1``.
        metadata: what the page says about itself (:class:`Metadata`: authors, dates,
            language, ...), unless switched off.
        algorithm: registry name of the algorithm that ran.
        params: the exact parameters it ran with (defaults included).
        threshold: the score threshold the algorithm used, where it has one.
        content_share: share of the page's characters that were kept (0..1).
        net_text_length: characters of kept text that are not link text (TextSweeper's
            overview figure).
        link_density: share of the kept characters that are link text.
        is_overview: whether the page is an overview page (home page, section front,
            listing) rather than an article: its items are dropped.
        overview_score: the overview detector's calibrated probability that the page is
            an overview page, in [0, 1].
        overview_verdict: ``"overview"`` (``is_overview``), ``"uncertain"`` (between the
            detector's two thresholds: items kept and tagged) or ``"content"``.
        overview_reasons: the evidence behind ``overview_score``, most important first.
        url: the page's URL, if known.
        template_chars: characters of content left out because they recur on other pages
            of the site (with a site memory, see :mod:`.site_memory`).
    """

    text: str
    algorithm: str
    params: Mapping[str, Any]
    html: str | None = None
    markdown: str | None = None
    title: str | None = None
    metadata: Metadata | None = None
    threshold: float | None = None
    content_share: float = 0.0
    net_text_length: int = 0
    link_density: float = 0.0
    is_overview: bool = False
    overview_score: float = 0.0
    overview_verdict: str = "content"
    overview_reasons: tuple[str, ...] = ()
    url: str | None = None
    template_chars: int = 0
    block_scores: BlockScores | None = field(default=None, repr=False, compare=False)

    @property
    def blocks(self) -> tuple[Block, ...]:
        """Per-block scores and labels (line, token/character run or DOM node)."""
        return self.block_scores.blocks() if self.block_scores is not None else ()

    def figures(self) -> dict[str, Any]:
        """Page-level figures, JSON-ready: what an item's scores field carries."""
        return {
            "algorithm": self.algorithm,
            "params": dict(self.params),
            "threshold": _json_number(self.threshold),
            "content_share": round(float(self.content_share), 6),
            "net_text_length": int(self.net_text_length),
            "link_density": round(float(self.link_density), 6),
            "is_overview": bool(self.is_overview),
            "overview_score": round(float(self.overview_score), 6),
            "overview_verdict": self.overview_verdict,
            "overview_reasons": list(self.overview_reasons),
            "template_chars": int(self.template_chars),
        }

    def to_dict(self, *, blocks: bool = True, html: bool = True) -> dict[str, Any]:
        """A JSON-serialisable dict of everything (``blocks``/``html`` can be left out)."""
        data = {"url": self.url, "title": self.title, "text": self.text, **self.figures()}
        data["metadata"] = self.metadata.to_dict() if self.metadata is not None else None
        if self.markdown is not None:
            data["markdown"] = self.markdown
        if html:
            data["html"] = self.html
        if blocks:
            data["blocks"] = [block.to_dict() for block in self.blocks]
        return data
