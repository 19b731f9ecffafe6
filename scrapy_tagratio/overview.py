"""Overview-page detection (placeholder baseline: TextSweeper's net text length test)."""

from __future__ import annotations

from dataclasses import dataclass

from .algorithms.base import Labelling
from .document import Document

__all__ = ["OverviewDetector", "OverviewVerdict"]


@dataclass(frozen=True)
class OverviewVerdict:
    is_overview: bool
    score: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class OverviewDetector:
    min_net_text_length: int = 500
    threshold: float = 0.5

    def detect(self, document: Document, labelling: Labelling) -> OverviewVerdict:
        net = labelling.content_chars - labelling.link_chars
        is_overview = net < self.min_net_text_length
        return OverviewVerdict(
            is_overview, 1.0 if is_overview else 0.0, (f"net text length {net}",)
        )
