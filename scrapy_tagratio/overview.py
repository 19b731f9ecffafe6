"""Overview-page detection: is this page a home page, section front, tag or archive
listing (it lists or teases other pages), or a page with one main text?

The baseline is TextSweeper's test (Lang et al. 2012, end of section 3): a page whose
extracted content has a *net text length* (text minus link text) below a minimum is an
overview page. It depends on the extraction and calls every short article an overview
page. The detector weighs instead the evidence :mod:`.page_evidence` measures on the page
itself (teasers, lists, prose, the page's declarations and its URL), in any language.

The combined score is a logistic model (:class:`OverviewModel`) read from the model file
``models/overview.json``, which ``python -m benchmarks.overview --fit`` writes: fitted on
every page of the development pool (``benchmarks/protocol.py``), its probability
calibrated there, its two thresholds chosen on held-out folds so that few content pages
are dropped. A page at or above the drop threshold is ``"overview"`` (its items are
dropped), between the two ``"uncertain"`` (kept and tagged), else ``"content"``. The
declarations and the URL weigh as learned but are never decisive alone: a page is only
dropped if its structure alone argues for a listing (scores at least the share of
overview pages among the training pages), and never without teasers or lists
(:meth:`OverviewModel.judge`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from operator import itemgetter
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from .algorithms.base import (
    Labelling,
    bad_parameter,
    check_choice,
    check_range,
)
from .document import Document
from .errors import ExtractionError
from .page_evidence import FEATURES, FLAGS, SIGNALS, PageEvidence, page_evidence

__all__ = [
    "MODEL_FILE",
    "MODEL_FORMAT",
    "OverviewDetector",
    "OverviewModel",
    "OverviewVerdict",
    "Verdict",
    "shipped_model",
]


#: The shipped model, written by ``python -m benchmarks.overview --fit``.
MODEL_FILE = Path(__file__).parent / "models" / "overview.json"
#: Version of the model file's layout (a file of another version is refused).
MODEL_FORMAT = 1


@dataclass(frozen=True, eq=False)
class OverviewModel:
    """A logistic model over named :class:`~.page_evidence.PageEvidence` features and its
    two thresholds.

    ``score = sigmoid(intercept + sum(weights * (x - means) / scales))``, a probability
    calibrated on the training pages; ``threshold`` (drop) and ``uncertain_threshold``
    were chosen on the validation protocol (``benchmarks/overview.py``);
    ``structure_threshold`` is what the page's structure alone must score for the page to
    be dropped (see :meth:`judge`). ``metadata`` carries the training fingerprint and the
    validation figures, for people.
    """

    features: tuple[str, ...]
    means: np.ndarray
    scales: np.ndarray
    weights: np.ndarray
    intercept: float
    threshold: float
    uncertain_threshold: float
    structure_threshold: float
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.features) - set(FEATURES))
        if unknown:
            raise ExtractionError(f"the overview model uses unknown features {unknown}")
        if not (len(self.features) == len(self.means) == len(self.scales) == len(self.weights)):
            raise ExtractionError("the overview model's arrays do not match its feature names")
        if not 0.0 <= self.uncertain_threshold <= self.threshold <= 1.0:
            raise ExtractionError(
                f"the overview model's thresholds must satisfy 0 <= uncertain "
                f"({self.uncertain_threshold}) <= drop ({self.threshold}) <= 1"
            )
        if not 0.0 <= self.structure_threshold <= 1.0:
            raise ExtractionError(
                f"the overview model's structure threshold ({self.structure_threshold}) "
                "must lie in [0, 1]"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OverviewModel:
        if data.get("format") != MODEL_FORMAT:
            raise ExtractionError(
                f"overview model format {data.get('format')!r}; this version reads {MODEL_FORMAT}"
            )
        return cls(
            features=tuple(data["features"]),
            means=np.asarray(data["means"], dtype=np.float64),
            scales=np.asarray(data["scales"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            intercept=float(data["intercept"]),
            threshold=float(data["threshold"]),
            uncertain_threshold=float(data["uncertain_threshold"]),
            # Files written before the structure threshold existed gated on the uncertain one.
            structure_threshold=float(data.get("structure_threshold", data["uncertain_threshold"])),
            metadata=dict(data.get("metadata", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "features": list(self.features),
            "means": self.means.tolist(),
            "scales": self.scales.tolist(),
            "weights": self.weights.tolist(),
            "intercept": self.intercept,
            "threshold": self.threshold,
            "uncertain_threshold": self.uncertain_threshold,
            "structure_threshold": self.structure_threshold,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> OverviewModel:
        with open(path, encoding="utf-8") as handle:
            return cls.from_dict(json.load(handle))

    @cached_property
    def _slopes(self) -> np.ndarray:
        """Each feature's move of the logit per unit."""
        return self.weights / self.scales

    @cached_property
    def _base(self) -> float:
        """The logit of the reference page (:attr:`_reference`)."""
        return self.intercept + float(((self._reference - self.means) * self._slopes).sum())

    @cached_property
    def _reference(self) -> np.ndarray:
        # Reasons explain a score from a reference page, average in every measured quantity
        # and without any flag: a verdict names what a page has, not what it lacks.
        return np.where([name in FLAGS for name in self.features], 0.0, self.means)

    @cached_property
    def _pick(self) -> Callable[[Mapping[str, float]], tuple[float, ...]]:
        """The model's features, in its order, from :meth:`PageEvidence.features`."""
        pick = itemgetter(*self.features)
        return pick if len(self.features) > 1 else lambda values: (pick(values),)

    def vector(self, evidence: PageEvidence, min_net_text_length: int) -> np.ndarray:
        return np.array(self._pick(evidence.features(min_net_text_length)))

    def contributions(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The logit of the reference page and each feature's move away from it (their
        sum is the logit of ``x``; ``x`` may be one row or a matrix of rows)."""
        return self._base, (x - self._reference) * self._slopes

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The calibrated probability that each row of ``x`` is an overview page."""
        logit = self.intercept + ((x - self.means) / self.scales) @ self.weights
        return 1.0 / (1.0 + np.exp(-logit))

    @cached_property
    def _listed(self) -> np.ndarray:
        """Positions of the features that say the page holds teasers or lists."""
        return np.array(
            [i for i, name in enumerate(self.features) if name in ("teaser_share", "list_share")],
            dtype=np.intp,
        )

    @cached_property
    def _structural(self) -> np.ndarray:
        """1.0 for the features of the page's structure, 0.0 for its declarations and URL
        (:data:`~.page_evidence.SIGNALS`)."""
        return np.array([name not in SIGNALS for name in self.features], dtype=np.float64)

    def judge(
        self, x: np.ndarray, drop: float | None = None, uncertain: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``x``: the probability and the verdict code (2 overview, 1 uncertain,
        0 content) at the thresholds given (the model's by default)."""
        return self.decide(x, *self.contributions(x), drop, uncertain)

    def decide(
        self,
        x: np.ndarray,
        base: float,
        contributions: np.ndarray,
        drop: float | None = None,
        uncertain: float | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`judge` from the rows' :meth:`contributions` (``base``, ``contributions``);
        ``x`` may be one row (then the score and code are 0-d arrays) or a matrix.

        The page's declarations and URL (:data:`~.page_evidence.SIGNALS`) are evidence,
        never decisive alone: a page is called overview only if its structure alone (those
        features at their neutral value, absent: their contributions left out) scores at
        least ``structure_threshold`` (or the drop threshold, if that is lower), the share of
        overview pages among the training pages. The structure must itself make a
        listing more likely than a page taken at random; the declarations and the URL can
        only tip such a page over the drop threshold. And a listing has many items, not
        few characters: a page without any teaser or list structure (``teaser_share`` and
        ``list_share`` 0) is never called overview, however little prose it has. A page
        over the drop threshold that fails either test is uncertain.
        """
        drop = self.threshold if drop is None else drop
        uncertain = min(self.uncertain_threshold, drop) if uncertain is None else uncertain
        score = 1.0 / (1.0 + np.exp(-(base + contributions.sum(axis=-1))))
        code = np.asarray(score >= uncertain, dtype=np.int8)
        listing = score >= drop
        if not listing.any():  # most pages: no structure test to run
            return score, code
        listing &= self.structure_probability(base, contributions) >= min(
            self.structure_threshold, drop
        )
        if self._listed.size:
            listing &= self.has_structure(x)
        code[listing] = 2
        return score, code

    def structure_probability(self, base: float, contributions: np.ndarray) -> np.ndarray:
        """The probability from the page's structure alone, its declarations and URL
        (:data:`~.page_evidence.SIGNALS`) at their neutral value, from the rows'
        :meth:`contributions`."""
        return 1.0 / (1.0 + np.exp(-(base + contributions @ self._structural)))

    def has_structure(self, x: np.ndarray) -> np.ndarray:
        """Per row of ``x``: the page holds teasers or lists (``teaser_share`` or
        ``list_share`` above 0; True for all when the model reads neither)."""
        if not self._listed.size:
            return np.ones(x.shape[:-1], dtype=bool)
        return np.logical_or.reduce(x[..., self._listed] > 0, axis=-1)


@cache
def shipped_model() -> OverviewModel:
    """The model file that ships with the package (read once)."""
    return OverviewModel.load()


#: How many reasons a verdict gives (the largest contributions to its score).
REASONS = 4
#: How each feature reads in a verdict's reasons.
_REASONS: Mapping[str, str] = {
    "net_text": "net text length {net_text_length}",
    "link_share": "link share {link_share:.2f}",
    "teasers": "{teasers} teaser blocks",
    "summary_teasers": "{summary_teasers} teasers with a summary",
    "largest_teaser_group": "largest teaser group {largest_teaser_group}",
    "heading_links": "{heading_links} headings with a link",
    "prose_paragraphs": "{prose_paragraphs} long paragraphs in one run",
    "prose_share": "longest prose run holds {prose_share:.0%} of the text",
    "prose_block": "largest block of long paragraphs {prose_block:.0f} chars",
    "prose_after": "{prose_after:.0%} of the text after the largest block of long paragraphs",
    "teaser_share": "teasers hold {teaser_share:.0%} of the text",
    "comment_items": "{comment_items} comments",
    "comment_share": "comments hold {comment_share:.0%} of the text",
    "main_teaser_share": "teasers hold {main_teaser_share:.0%} of the main content",
    "main_link_share": "links hold {main_link_share:.0%} of the main content",
    "main_prose": "{main_prose} long paragraphs in the main content",
    "free_prose": "{free_prose:.0f} chars of long paragraphs outside teasers, lists, comments",
    "list_items": "a list of {list_items} linked items",
    "list_share": "lists of linked items hold {list_share:.0%} of the text",
    "list_over_prose": "teasers or lists hold {list_over_prose:.0%} of the text beside the prose",
    "priced_share": "{priced_items} items with a picture and a price hold {priced_share:.0%} "
    "of the text",
    "prose_block_share": "largest block of long paragraphs: {prose_block_share:.0%} of the text",
    "title_repeats_heading": "the title repeats the h1",
    "declares_article": "declares an article (og:type, schema.org)",
    "declares_item": "declares a single item (og:type, schema.org)",
    "declares_listing": "declares a listing (schema.org)",
    "og_website": "og:type website",
    "published_time": "has a published-time meta",
    "paginated": "has rel=next/prev to a listing's pages",
    "adjacent_articles": "links its neighbouring articles (rel=next/prev)",
    "url_home": "the {url_source} is a home page",
    "url_listing": "the {url_source} is a listing's",
    "url_article": "the {url_source} is an article's",
    "headline_share": "headline links hold {headline_share:.0%} of the text",
    "declared_without_headline": "declares an article but its title repeats no h1",
    "headlines_over_prose": "headline links hold {headlines_over_prose:.0%} of the text "
    "beside the prose",
}


#: The three verdicts: drop the page's items, keep them tagged, keep them.
Verdict = Literal["overview", "uncertain", "content"]
#: The verdicts by code (0 content, 1 uncertain, 2 overview).
VERDICTS: tuple[Verdict, Verdict, Verdict] = ("content", "uncertain", "overview")


@dataclass(frozen=True)
class OverviewVerdict:
    """The detector's answer: the verdict, a calibrated probability that the page is an
    overview page, and what moved it towards the verdict, strongest first.

    ``verdict`` is ``"overview"`` at or above the detector's threshold (a spider's items
    are dropped), ``"uncertain"`` at or above its uncertain threshold (items kept and
    tagged), else ``"content"``.
    """

    is_overview: bool
    score: float
    reasons: tuple[str, ...]
    verdict: Verdict = "content"


@dataclass(frozen=True)
class OverviewDetector:
    """Decides whether a page is an overview page.

    ``evidence="combined"`` (default) scores the page with :class:`OverviewModel` (the
    shipped model file unless ``model`` is given); ``evidence="net-text"`` is
    TextSweeper's test alone: overview when the extraction's net text length is below
    ``min_net_text_length`` (its score, ``1 / (1 + ((net + 1) / min_net_text_length)^2)``,
    crosses 0.5 there). ``threshold`` and ``uncertain_threshold`` default to the model's
    (0.5 for both with ``"net-text"``).
    """

    #: Net text length (content minus link characters of the extraction) that TextSweeper's
    #: test requires of an article; in the combined model, the pivot of that evidence.
    min_net_text_length: int = 500
    #: Scores at or above this are overview pages (None: the model's).
    threshold: float | None = None
    #: Scores at or above this and below ``threshold`` are uncertain (None: the model's,
    #: lowered to ``threshold`` when that is given lower).
    uncertain_threshold: float | None = None
    #: ``"combined"`` or ``"net-text"``.
    evidence: str = "combined"
    #: The combined model (None: the shipped model file).
    model: OverviewModel | None = None
    #: Whether the site memory's evidence (links to headlines of pages already crawled
    #: from the site, :mod:`.site_memory`) may turn a verdict into "overview".
    site_evidence: ClassVar[bool] = True

    def __post_init__(self) -> None:
        check_range("min_net_text_length", self.min_net_text_length, 1, integer=True)
        for name in ("threshold", "uncertain_threshold"):
            if getattr(self, name) is not None:
                check_range(name, getattr(self, name), 0.0, 1.0)
        check_choice("evidence", self.evidence, ("combined", "net-text"))
        drop, uncertain = self.thresholds
        if self.uncertain_threshold is not None and uncertain > drop:
            raise bad_parameter(
                f"parameter 'uncertain_threshold' ({uncertain}) must not exceed "
                f"'threshold' ({drop})"
            )

    @property
    def thresholds(self) -> tuple[float, float]:
        """(drop threshold, uncertain threshold) in effect."""
        if self.evidence == "net-text":
            default_drop, default_uncertain = 0.5, 0.5
        else:
            model = self.model or shipped_model()
            default_drop, default_uncertain = model.threshold, model.uncertain_threshold
        drop = default_drop if self.threshold is None else self.threshold
        if self.uncertain_threshold is not None:
            return drop, self.uncertain_threshold
        return drop, min(default_uncertain, drop)

    def _verdict(self, score: float, reasons: tuple[str, ...]) -> OverviewVerdict:
        drop, uncertain = self.thresholds
        code = 2 if score >= drop else 1 if score >= uncertain else 0
        return OverviewVerdict(code == 2, score, reasons, VERDICTS[code])

    def detect(self, document: Document, labelling: Labelling) -> OverviewVerdict:
        """The verdict for one page, given the labelling of whichever algorithm ran.

        A page without any visible text (empty body, frameset, a script-only application
        shell) is no evidence of a listing: it is not called an overview page, so the
        items a spider yields for it are kept.
        """
        if labelling.total_chars == 0:
            return OverviewVerdict(False, 0.0, ("the page has no visible text",))
        if self.evidence == "net-text":
            net = labelling.content_chars - labelling.link_chars
            score = 1.0 / (1.0 + ((max(net, 0) + 1) / self.min_net_text_length) ** 2)
            return self._verdict(
                score, (f"net text length {net} (minimum {self.min_net_text_length})",)
            )
        model = self.model or shipped_model()
        evidence = page_evidence(document, labelling)
        x = model.vector(evidence, self.min_net_text_length)
        base, contributions = model.contributions(x)
        probability, code = model.decide(x, base, contributions, *self.thresholds)  # one row
        verdict = VERDICTS[int(code)]
        reasons = explain(model, evidence, contributions, verdict)
        return OverviewVerdict(verdict == "overview", float(probability), reasons, verdict)


def explain(
    model: OverviewModel, evidence: PageEvidence, contributions: np.ndarray, verdict: Verdict
) -> tuple[str, ...]:
    """What moved the score towards ``verdict`` (towards overview for "overview" and
    "uncertain", towards article for "content"): at most :data:`REASONS` features, the
    largest contribution first."""
    towards = -1.0 if verdict == "content" else 1.0
    order = np.argsort(-towards * contributions, kind="stable")[:REASONS].tolist()
    parts = contributions.tolist()
    details = _Fields(evidence)
    return tuple(
        f"{_REASONS[model.features[i]].format_map(details)} "
        f"({'overview' if parts[i] > 0 else 'article'} {parts[i]:+.2f})"
        for i in order
        if towards * parts[i] > 0
    )


@dataclass(frozen=True)
class _Fields:
    """The evidence's fields and properties by name, read only for the reasons given
    (``str.format_map``; :meth:`PageEvidence.to_dict` copies them all)."""

    evidence: PageEvidence

    def __getitem__(self, name: str) -> Any:
        return getattr(self.evidence, name)
