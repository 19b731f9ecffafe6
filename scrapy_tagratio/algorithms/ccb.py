"""CCB (to be written)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..document import Document
from .base import Algorithm, Labelling


@dataclass(frozen=True)
class CCB(Algorithm):
    name: ClassVar[str] = "ccb"
    summary: ClassVar[str] = "CCB (not yet implemented)"

    def run(self, document: Document) -> Labelling:
        raise NotImplementedError


@dataclass(frozen=True)
class ACCB(CCB):
    name: ClassVar[str] = "accb"


@dataclass(frozen=True)
class TCCB(CCB):
    name: ClassVar[str] = "tccb"
