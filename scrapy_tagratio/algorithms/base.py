"""What every algorithm shares: the :class:`Algorithm` base, its :class:`Labelling` result,
and parameter validation that names the bad value."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..document import Document
from ..errors import ExtractionError
from ..result import BlockKind, BlockScores

__all__ = [
    "HEADING_TAGS",
    "Algorithm",
    "Labelling",
    "bad_parameter",
    "check_bool",
    "check_choice",
    "check_range",
    "dom_labelling",
]


@dataclass(frozen=True, eq=False)
class Labelling:
    """An algorithm's answer for one page.

    ``content_chars``/``link_chars`` count the kept text and the part of it inside links;
    ``total_chars`` the page's visible text. They give the page-level figures of
    :class:`~scrapy_tagratio.Extraction` (content share, link density, net text length).
    ``content_nodes`` (DOM methods) is what the cleaned HTML is built from, on request.
    """

    text: str
    block_scores: BlockScores
    threshold: float | None
    content_chars: int
    link_chars: int
    total_chars: int
    content_nodes: np.ndarray | None = None  # DOM methods: node mask, whole layout blocks


@dataclass(frozen=True)
class Algorithm:
    """Base of all algorithms: a frozen set of parameters (the papers' defaults) and
    :meth:`run`, a pure function of a :class:`~scrapy_tagratio.document.Document`.

    Subclasses are dataclasses whose fields are the parameters; they validate in
    :meth:`validate` and raise :class:`ExtractionError` naming the parameter.
    """

    name: ClassVar[str]
    #: One line for ``python -m scrapy_tagratio algorithms`` and the README.
    summary: ClassVar[str]

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check parameter values; raise :class:`ExtractionError` on a bad one."""

    def params(self) -> dict[str, Any]:
        """The parameters as a plain dict (JSON-ready: numbers, strings, booleans and
        None, so no deep copy is needed, as ``dataclasses.asdict`` would make)."""
        return {name: getattr(self, name) for name in _parameter_names(type(self))}

    @classmethod
    def with_params(cls, **params: Any) -> Algorithm:
        """Instantiate, turning unknown parameter names into a clear error."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(params) - fields)
        if unknown:
            raise bad_parameter(
                f"unknown parameter(s) {', '.join(unknown)} for algorithm {cls.name!r}; "
                f"it takes: {', '.join(sorted(fields)) or 'no parameters'}"
            )
        try:
            return cls(**params)
        except TypeError as exc:  # pragma: no cover - dataclass signature errors
            raise bad_parameter(f"bad parameters for {cls.name!r}: {exc}") from exc

    def run(self, document: Document) -> Labelling:  # pragma: no cover - abstract
        raise NotImplementedError


#: Per algorithm class, the names of its parameters (:func:`_parameter_names`).
_PARAMETER_NAMES: dict[type[Algorithm], tuple[str, ...]] = {}


def _parameter_names(algorithm: type[Algorithm]) -> tuple[str, ...]:
    """The names of an algorithm's parameters (its dataclass fields), in order."""
    names = _PARAMETER_NAMES.get(algorithm)
    if names is None:
        names = _PARAMETER_NAMES[algorithm] = tuple(f.name for f in dataclasses.fields(algorithm))
    return names


def bad_parameter(message: str) -> ExtractionError:
    """The error for an invalid parameter value or name (kind ``bad_parameter``)."""
    return ExtractionError(message, kind="bad_parameter")


def check_range(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    *,
    integer: bool = False,
    low_inclusive: bool = True,
) -> None:
    """Raise :class:`ExtractionError` unless ``low <= value <= high`` (numbers only)."""
    kind = "an integer" if integer else "a number"
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type or (not integer and not np.isfinite(value)):
        raise bad_parameter(f"parameter {name!r} must be {kind}, got {value!r}")
    if low is not None and (value < low or (not low_inclusive and value == low)):
        bound = ">=" if low_inclusive else ">"
        raise bad_parameter(f"parameter {name!r} must be {bound} {low}, got {value!r}")
    if high is not None and value > high:
        raise bad_parameter(f"parameter {name!r} must be <= {high}, got {value!r}")


def check_bool(name: str, value: Any) -> None:
    """Raise :class:`ExtractionError` unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise bad_parameter(f"parameter {name!r} must be True or False, got {value!r}")


def check_choice(name: str, value: Any, choices: Collection[str]) -> None:
    """Raise :class:`ExtractionError` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise bad_parameter(
            f"parameter {name!r} must be one of {', '.join(map(repr, choices))}, got {value!r}"
        )


#: Heading elements.
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def dom_labelling(
    document: Document,
    content: np.ndarray,
    scores: np.ndarray,
    threshold: float | None,
    *,
    kind: BlockKind = "node",
    whole_blocks: bool = False,
    text: str | None = None,
) -> Labelling:
    """Labelling of a DOM method from its content mask over the node table.

    ``content`` marks elements whose *own* text is content; text, the character figures
    (and, on request, cleaned HTML) all follow from it. The text of one layout block is kept or left
    whole, by the majority of its characters, so that the output never cuts a word at an
    inline tag (``<b>Fre</b>edom`` is one word). ``whole_blocks``: ``content`` is so
    already (a labelling's ``content_nodes`` less some of its blocks), the rule is not
    applied again. ``text``: the text of ``content`` when the caller has it already
    (:func:`~scrapy_tagratio.headline.without_leading_headline`), else it is built.
    """
    nodes = document.nodes
    if len(nodes) and not whole_blocks:
        owner = nodes.block
        kept = np.bincount(owner, weights=nodes.own_chars * content, minlength=len(nodes))
        content = ((kept > 0) & (2 * kept >= nodes.block_chars))[owner]
        del kept  # not held while the text is built (a large page's peak of memory)
    content_chars = int(nodes.own_chars[content].sum())
    return Labelling(
        text=document.text_of(content) if text is None else text,
        block_scores=BlockScores(
            kind=kind,
            scores=np.asarray(scores, dtype=np.float64),
            labels=content,
            text_lengths=nodes.chars,
            tags=nodes.tag,
        ),
        threshold=threshold,
        content_chars=content_chars,
        link_chars=int(nodes.own_link_chars[content].sum()),
        total_chars=int(nodes.chars[0]) if len(nodes) else 0,
        content_nodes=content,
    )
