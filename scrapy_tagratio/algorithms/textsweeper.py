"""TextSweeper (to be written)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..document import Document
from .base import Algorithm, Labelling


@dataclass(frozen=True)
class TextSweeper(Algorithm):
    name: ClassVar[str] = "textsweeper"
    summary: ClassVar[str] = "TextSweeper (not yet implemented)"

    def run(self, document: Document) -> Labelling:
        raise NotImplementedError
