"""The registry of algorithms: name -> algorithm class."""

from __future__ import annotations

from .base import Algorithm, bad_parameter
from .ccb import ACCB, CCB, TCCB
from .cetd import CECTD, CETD, CECTDSmoothing
from .cetr import CETR
from .tagratio import TagRatio
from .textsweeper import TextSweeper

__all__ = ["ALGORITHMS", "DEFAULT_ALGORITHM", "Algorithm", "get_algorithm"]

ALGORITHMS: dict[str, type[Algorithm]] = {
    cls.name: cls
    for cls in (CETR, CCB, ACCB, TCCB, CETD, CECTD, CECTDSmoothing, TextSweeper, TagRatio)
}
#: The project's default (see README "Algorithms").
DEFAULT_ALGORITHM = "tagratio"


def get_algorithm(name: str) -> type[Algorithm]:
    """The algorithm class registered under ``name``; a clear error for an unknown name."""
    try:
        return ALGORITHMS[name]
    except (KeyError, TypeError):
        raise bad_parameter(
            f"unknown algorithm {name!r}; choose one of: {', '.join(sorted(ALGORITHMS))}"
        ) from None
