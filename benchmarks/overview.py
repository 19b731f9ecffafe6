"""Overview-page detection under the shared protocol (``benchmarks/protocol.py``): how many
content pages each detector calls overview on sets it was not fitted on, and how well it
finds the overview pages of ``overview-dev``; ``--fit`` writes the shipped model file.

Every distinct page of the pool (1961 pages: every page of trafilatura-eval, fundus-dev,
dragnet-dev, readability-dev and goose-dev is a content page; overview-dev adds its labelled
overview, article and other pages) is parsed once; the default algorithm's extraction gives
the net text length, TextSweeper's extraction gives the paper's own test, and the page's
:class:`~scrapy_tagratio.page_evidence.PageEvidence` is kept in memory with and without the URL
(without it, the shape of the address the page declares stands in, as in the detector).

The combined model is a standardised logistic regression over
:data:`~scrapy_tagratio.page_evidence.FEATURES` (or ``--features``), fitted on every training page
three times (:data:`MODES`): with its URL, without it (the declared address stands in), and
with no URL evidence at all. One model serves every case, and a page without URL evidence
(a crawl's neutral path such as ``/a/3``, a page given without a URL that declares none) is
judged by a model and thresholds that saw every training page so, not only the training
pages whose own address has no shape: most content pages have an article-shaped address,
and a threshold read off them with it would be too low for an article seen without it.
Inside each training set,
site-grouped inner folds (:func:`~benchmarks.protocol.inner_folds`, drawn
:data:`INNER_REPEATS` times) choose the L2 penalty (the strongest whose log-loss is
within one standard error of the best) and the two thresholds from out-of-fold
probabilities, every draw's together: the drop threshold is the
lowest score at which at most :data:`DROP_RATE` of the training pages that
are not overview pages would be dropped, in each of the three modes; the uncertain threshold
the lowest at which at most :data:`UNCERTAIN_RATE` would be dropped or tagged; the
structure threshold (what the page's structure alone must score, see
:meth:`~scrapy_tagratio.overview.OverviewModel.decide`) is the share of overview pages among
the training pages. Nothing reported is scored by a model or threshold its own pages helped
choose.

Printed, in one run:

* per content set, under leave-one-set-out (the set scored by a model fitted without it):
  the share called overview and called uncertain in each of :data:`MODES`, for the combined
  model, the shipped detector (``scrapy_tagratio/models/overview.json``, fitted on pages that
  may include the set) and TextSweeper's net-text test;
* overview-dev under site-grouped folds of the whole pool (stratified by overview, no site
  on both sides): accuracy, precision, recall, articles called overview, uncertain, in each
  mode, with the thresholds chosen in each training fold; the same for the baselines;
* with ``--show N``: the N content pages with the highest held-out scores and the N overview
  pages with the lowest, with the detector's reasons;
* with ``--why``: each overview page missed under the site-grouped folds, with and without
  URL, and which test kept it (score under the drop threshold, structure alone under the
  gate, no teasers or lists), counted per cause;
* with ``--seeds S ...``: overview-dev's figures for the combined model on the site-grouped
  folds drawn with each seed (outer and inner folds alike), and their mean;
* the detector's added time per page beside the extraction's, measured in the same loop.

Usage: ``python -m benchmarks.overview [--limit N] [--show N] [--why] [--seeds S ...]
[--fit]``. ``--fit`` fits the model on the whole pool (penalty and thresholds chosen by
site-grouped folds of it), runs the evaluation above and writes both into the model file.
Needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from scrapy_tagratio.algorithms import DEFAULT_ALGORITHM, get_algorithm
from scrapy_tagratio.document import Document
from scrapy_tagratio.errors import ExtractionError
from scrapy_tagratio.overview import (
    MODEL_FILE,
    VERDICTS,
    OverviewDetector,
    OverviewModel,
    shipped_model,
)
from scrapy_tagratio.page_evidence import (
    FEATURES,
    PageEvidence,
    declared_url,
    page_evidence,
    url_shape,
)

from . import protocol

__all__ = ["main"]

#: The most of the training folds' non-overview pages the drop threshold may drop: half
#: the issue's 1% target per content set, a margin for sets unlike the training pages.
DROP_RATE = 0.005
#: The most of them the uncertain threshold may drop or tag.
UNCERTAIN_RATE = 0.03
#: L2 penalties the inner folds choose from.
PENALTIES = (0.03, 0.1, 0.3, 1.0)
#: Site-grouped folds (outer, overview-dev) and inner folds (choices).
OUTER_FOLDS = 5
INNER_FOLDS = 4
#: How many times the inner folds are drawn, each with another split (:func:`choose`).
INNER_REPEATS = 3
#: The shipped model's features: the page's structure (teasers and lists of linked items,
#: their share of the page and of the main content, long paragraphs outside them, the
#: text of headline links against the prose), its declarations (pagination among them) and
#: URL shape. Of the candidates (:data:`~scrapy_tagratio.page_evidence.FEATURES`), the net
#: text length and the comment and raw count features are left out: under this protocol
#: they added no recall. Pagination (``rel=next/prev``) was left out too until the
#: sixteenth session, when, with three draws of the inner folds and that session's block
#: model, it added recall with and without the URL over three outer seeds and lost no more
#: content pages (development notes).
MODEL_FEATURES = (
    "link_share", "summary_teasers", "heading_links", "teaser_share", "main_teaser_share",
    "main_prose", "free_prose", "list_items", "list_share", "list_over_prose", "priced_share",
    "prose_paragraphs", "prose_share", "prose_block", "prose_after",
    "title_repeats_heading", "declares_article", "declares_item", "declares_listing",
    "og_website", "published_time", "paginated", "adjacent_articles", "url_home", "url_listing",
    "url_article", "headlines_over_prose", "declared_without_headline",
)  # fmt: skip
#: TextSweeper's minimum net text length where it is not tuned (the detector's default).
NET_TEXT_MINIMUM = OverviewDetector().min_net_text_length


@dataclass(frozen=True)
class Record:
    """What the evaluation keeps of one page of the pool."""

    page: protocol.ProtocolPage
    evidence: PageEvidence  # with the URL where the pool has one
    declared_without_url: str  # the declared address's shape, read without the URL
    textsweeper_net: int
    # The shipped file's (score, code) with and without URL (None: the file does not match
    # the code, e.g. before the first --fit after a change of its layout or features).
    shipped: tuple[tuple[float, int], tuple[float, int]] | None
    extract_seconds: float
    detect_seconds: float


def collect(pages: Sequence[protocol.ProtocolPage]) -> list[Record]:
    """Parse every page once; its evidence, TextSweeper's net text, the shipped scores and
    the times of the extraction and of the detector (same loop, same page; the evidence
    alone where the shipped file does not match the code)."""
    algorithm = get_algorithm(DEFAULT_ALGORITHM)()
    textsweeper = get_algorithm("textsweeper")()
    try:
        detector: OverviewDetector | None = OverviewDetector(model=shipped_model())
    except ExtractionError as exc:
        print(f"the shipped model file is left out: {exc}", file=sys.stderr)
        detector = None
    records = []
    for page in pages:
        document = Document.from_input(page.html(), url=page.url)
        started = time.process_time()
        labelling = algorithm.run(document)
        extracted = time.process_time()
        scores = None
        if detector is None:
            evidence = page_evidence(document, labelling)
            detected = time.process_time()
        else:
            with_url = detector.detect(document, labelling)
            detected = time.process_time()
            evidence = page_evidence(document, labelling)
            document.url = None
            without_url = detector.detect(document, labelling)
            scores = tuple((v.score, VERDICTS.index(v.verdict)) for v in (with_url, without_url))
        document.url = None
        declared = url_shape(declared_url(document))
        ts = textsweeper.run(document)
        records.append(
            Record(
                page=page,
                evidence=evidence,
                declared_without_url=declared,
                textsweeper_net=ts.content_chars - ts.link_chars,
                shipped=scores,  # type: ignore[arg-type]
                extract_seconds=extracted - started,
                detect_seconds=detected - extracted,
            )
        )
    return records


#: How each page is shown to the model (:func:`matrix`): with its URL, without it, and with no
#: URL evidence at all.
MODES = ("with URL", "without URL", "no URL evidence")
#: Their keys in the model file's validation figures.
MODE_KEYS = ("with_url", "without_url", "no_url_evidence")


def matrix(records: Sequence[Record], names: Sequence[str], mode: str) -> np.ndarray:
    """Feature rows of one of :data:`MODES`; with URL, as in a crawl (a page of the pool
    without one is given a URL of no shape, so the address it declares is not read); without
    URL, as if the detector had been given none (the declared address's shape stands in); no
    URL evidence, as a crawl sees a page under an address of no shape (neither shape read)."""
    minimum = OverviewDetector().min_net_text_length
    rows = []
    for record in records:
        evidence = dataclasses.replace(
            record.evidence,
            url_shape=record.evidence.url_shape if mode == "with URL" else "",
            declared_shape=record.declared_without_url if mode == "without URL" else "",
        )
        values = evidence.features(minimum)
        rows.append([values[name] for name in names])
    return np.asarray(rows, dtype=np.float64)


@dataclass(frozen=True)
class Data:
    """The pool's feature matrices in each of :data:`MODES`, labels and pages."""

    records: Sequence[Record]
    names: tuple[str, ...]
    with_url: np.ndarray
    without_url: np.ndarray
    no_url: np.ndarray  # no URL evidence at all
    truth: np.ndarray  # overview page

    @classmethod
    def of(cls, records: Sequence[Record], names: Sequence[str]) -> Data:
        return cls(
            records,
            tuple(names),
            matrix(records, names, MODES[0]),
            matrix(records, names, MODES[1]),
            matrix(records, names, MODES[2]),
            np.array([r.page.is_overview for r in records]),
        )

    @property
    def pages(self) -> list[protocol.ProtocolPage]:
        return [r.page for r in self.records]

    @property
    def modes(self) -> tuple[np.ndarray, ...]:
        """The feature matrices, in the order of :data:`MODES`."""
        return self.with_url, self.without_url, self.no_url

    def stacked(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows once in each of :data:`MODES`, and their labels."""
        x = np.vstack([features[rows] for features in self.modes])
        return x, np.tile(self.truth[rows], len(MODES))


def fit_logistic(x: np.ndarray, y: np.ndarray, penalty: float) -> tuple[np.ndarray, ...]:
    """(means, scales, weights, intercept) of a standardised L2 logistic regression."""
    scaler = StandardScaler().fit(x)
    scales = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    model = LogisticRegression(C=penalty, max_iter=5000).fit((x - scaler.mean_) / scales, y)
    return scaler.mean_, scales, model.coef_[0], model.intercept_


def model_of(
    data: Data, rows: np.ndarray, penalty: float, thresholds: tuple[float, float] = (0.5, 0.5)
) -> OverviewModel:
    """The logistic model of ``rows`` with the thresholds given; the structure threshold is
    the share of overview pages among ``rows`` (see :meth:`OverviewModel.judge`)."""
    means, scales, weights, intercept = fit_logistic(*data.stacked(rows), penalty)
    return OverviewModel(
        data.names,
        means,
        scales,
        weights,
        float(intercept[0]),
        *thresholds,
        structure_threshold=float(data.truth[rows].mean()),
    )


def lowest_threshold(scores: np.ndarray, rate: float) -> float:
    """The lowest threshold at which at most ``rate`` of ``scores`` are at or above it.

    No floor such as 0.5: the cost of a lost article, not the probability's midpoint, sets
    the threshold (the pool's prior is about 8% overview pages, a crawl's may differ)."""
    allowed = int(np.floor(rate * scores.size))
    ranked = np.sort(scores)[::-1]
    if allowed >= ranked.size:
        return 0.0
    return float(np.nextafter(ranked[allowed], 1.0))


@dataclass(frozen=True)
class Choice:
    penalty: float
    threshold: float
    uncertain_threshold: float


def choose(data: Data, train: np.ndarray, seed: int = 0) -> Choice:
    """Penalty and thresholds chosen by inner site-grouped folds of ``train`` alone,
    repeated :data:`INNER_REPEATS` times with other splits: the drop threshold is an
    extreme quantile of the out-of-fold scores (a handful of pages decide it), and one
    split's luck moved it enough to change a held-out set's losses.

    The penalty is the strongest (smallest ``C``) of :data:`PENALTIES` whose out-of-fold
    log-loss is within one standard error of the lowest (the one-standard-error rule): a
    feature that fires on few pages (products with prices) made the lowest log-loss pick
    a weak penalty whose sharper scores moved the drop threshold and lost listings
    elsewhere (development notes, twenty-third session, helper ov34)."""
    splits = [
        protocol.inner_folds(
            data.pages, train, INNER_FOLDS, labels=data.truth.astype(int), seed=seed + repeat
        )
        for repeat in range(INNER_REPEATS)
    ]
    losses, helds = [], []
    for penalty in PENALTIES:
        scores = np.zeros((INNER_REPEATS, len(MODES), len(data.records)))
        for repeat, folds in enumerate(splits):
            for inner_train, inner_test in folds:
                model = model_of(data, inner_train, penalty)
                for mode, x in enumerate(data.modes):
                    scores[repeat, mode, inner_test] = model.probability(x[inner_test])
        held = scores[:, :, train]
        truth = np.broadcast_to(data.truth[train], held.shape)
        clipped = np.clip(held, 1e-9, 1 - 1e-9)
        # Per training page, its log-loss over the repeats and modes.
        losses.append(-np.mean(np.where(truth, np.log(clipped), np.log(1 - clipped)), axis=(0, 1)))
        helds.append(held)
    # The one-standard-error rule: the strongest penalty whose log-loss is within one
    # standard error (over the training pages) of the best one's.
    best = int(np.argmin([loss.mean() for loss in losses]))
    bound = losses[best].mean() + losses[best].std(ddof=1) / np.sqrt(losses[best].size)
    chosen = min(
        (k for k, loss in enumerate(losses) if loss.mean() <= bound), key=lambda k: PENALTIES[k]
    )
    penalty, held = PENALTIES[chosen], helds[chosen]
    # Per URL mode, the out-of-fold scores of every repeat's non-overview pages together.
    negatives = held[:, :, ~data.truth[train]].transpose(1, 0, 2).reshape(len(MODES), -1)
    drop = max(lowest_threshold(row, DROP_RATE) for row in negatives)
    uncertain = max(lowest_threshold(row, UNCERTAIN_RATE) for row in negatives)
    return Choice(penalty, drop, min(uncertain, drop))


def fitted(data: Data, train: np.ndarray, seed: int = 0) -> OverviewModel:
    """The model of ``train`` with its penalty and thresholds chosen inside ``train``."""
    choice = choose(data, train, seed)
    return model_of(data, train, choice.penalty, (choice.threshold, choice.uncertain_threshold))


# ---------------------------------------------------------------------- detectors
#: A detector under evaluation: (data, training rows, test rows) -> per URL mode (of
#: :data:`MODES`) and test row, (score, verdict code: 2 overview, 1 uncertain, 0 content).
Scorer = Callable[[Data, np.ndarray, np.ndarray], np.ndarray]


def combined(data: Data, train: np.ndarray, test: np.ndarray, seed: int = 0) -> np.ndarray:
    """The protocol's model of ``train`` (its inner folds drawn from ``seed``) on ``test``."""
    model = fitted(data, train, seed)
    out = np.empty((len(MODES), test.size, 2))
    for mode, x in enumerate(data.modes):
        out[mode, :, 0], out[mode, :, 1] = model.judge(x[test])
    return out


def shipped(data: Data, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    """The shipped detector's verdicts as it gave them with and without the URL; with no
    URL evidence (no detector call reads a page so), its model's on its own features
    (``--features`` may name others)."""
    out = np.empty((len(MODES), test.size, 2))
    for mode in (0, 1):
        out[mode, :, :] = [data.records[i].shipped[mode] for i in test]
    model = shipped_model()
    rows = matrix([data.records[i] for i in test.tolist()], model.features, MODES[2])
    out[2, :, 0], out[2, :, 1] = model.judge(rows)
    return out


def net_text(tuned: bool) -> Scorer:
    """TextSweeper's test on its own extraction: overview when the net text is below the
    minimum (500, or the one of best accuracy on the training pages)."""

    def score(data: Data, train: np.ndarray, test: np.ndarray) -> np.ndarray:
        net = np.array([r.textsweeper_net for r in data.records], dtype=np.float64)
        minimum = float(NET_TEXT_MINIMUM)
        if tuned:
            candidates = np.unique(np.concatenate(([1.0], net[train] + 1)))
            accuracy = [((net[train] < m) == data.truth[train]).mean() for m in candidates]
            minimum = float(candidates[int(np.argmax(accuracy))])
        out = np.empty((len(MODES), test.size, 2))
        out[:, :, 0] = (net[test] < minimum).astype(np.float64)
        out[:, :, 1] = 2 * out[:, :, 0]
        return out

    return score


DETECTORS: dict[str, Scorer] = {
    "combined (protocol)": combined,
    "shipped model file": shipped,
    "net-text < 500 (TextSweeper)": net_text(False),
    "net-text, tuned (TextSweeper)": net_text(True),
}


# ---------------------------------------------------------------------- evaluation
@dataclass
class Held:
    """Held-out verdicts of one detector: per URL mode and page, (score, verdict code)."""

    values: np.ndarray  # (modes, pages, 2), NaN where the page was not held out

    @classmethod
    def empty(cls, pages: int) -> Held:
        return cls(np.full((len(MODES), pages, 2), np.nan))

    def verdicts(self, mode: int) -> tuple[np.ndarray, np.ndarray]:
        """(called overview, called uncertain) per page."""
        code = self.values[mode, :, 1]
        return code == 2, code == 1


def leave_one_set_out(data: Data, scorer: Scorer) -> dict[str, Held]:
    """Each content set scored by a model fitted on the pool without it."""
    result = {}
    for name, train, test in protocol.leave_one_set_out(data.pages):
        held = Held.empty(len(data.records))
        held.values[:, test] = scorer(data, train, test)
        result[name] = held
    return result


def site_grouped(data: Data, scorer: Scorer, seed: int = 0) -> Held:
    """Every page of the pool scored by a model fitted on the other sites' pages."""
    held = Held.empty(len(data.records))
    for train, test in protocol.site_folds(
        data.pages, OUTER_FOLDS, labels=data.truth.astype(int), seed=seed
    ):
        held.values[:, test] = scorer(data, train, test)
    return held


@dataclass(frozen=True)
class OverviewFigures:
    accuracy: float
    precision: float
    recall: float
    article_called_overview: float
    uncertain: float

    @classmethod
    def of(cls, data: Data, held: Held, mode: int) -> OverviewFigures:
        member = np.array([protocol.OVERVIEW_SET in p.sets for p in data.pages])
        overview, uncertain = held.verdicts(mode)
        called, truth = overview[member], data.truth[member]
        labels = np.array([p.overview_label for p in data.pages])[member]
        hits = int((called & truth).sum())
        return cls(
            accuracy=float((called == truth).mean()),
            precision=hits / max(int(called.sum()), 1),
            recall=hits / max(int(truth.sum()), 1),
            article_called_overview=float(called[labels == "article"].mean()),
            uncertain=float(uncertain[member].mean()),
        )


def content_table(data: Data, results: dict[str, dict[str, Held]]) -> list[str]:
    """Per content set and detector, the shares called overview and uncertain."""
    lines = [
        f"  {'set':12s} {'pages':>5s}  {'detector':30s}"
        + "".join(f"  {'overview':>9s} {'uncertain':>9s}" for _ in MODES),
        f"  {'':12s} {'':5s}  {'':30s}" + "".join(f"  {f'({mode})':>19s}" for mode in MODES),
    ]
    for name in protocol.CONTENT_SETS:
        member = np.array([name in p.sets for p in data.pages])
        for detector, per_set in results.items():
            cells = ""
            for mode in range(len(MODES)):
                overview, uncertain = per_set[name].verdicts(mode)
                cells += f"  {overview[member].mean():9.1%} {uncertain[member].mean():9.1%}"
            first = detector == next(iter(results))
            lines.append(
                f"  {name if first else '':12s} {int(member.sum()) if first else '':>5}  "
                f"{detector:30s}{cells}"
            )
    return lines


def overview_table(data: Data, results: dict[str, Held]) -> list[str]:
    lines = [
        f"  {'detector':30s} {'URL':15s} {'accuracy':>8s} {'precision':>9s} {'recall':>6s} "
        f"{'article->overview':>17s} {'uncertain':>9s}"
    ]
    for detector, held in results.items():
        for mode, url in enumerate(MODES):
            f = OverviewFigures.of(data, held, mode)
            lines.append(
                f"  {detector:30s} {url:15s} {f.accuracy:8.3f} {f.precision:9.3f} {f.recall:6.3f} "
                f"{f.article_called_overview:17.1%} {f.uncertain:9.1%}"
            )
    return lines


def draws_table(data: Data, seeds: Sequence[int]) -> list[str]:
    """overview-dev's figures for the combined model over other draws of the site-grouped
    folds, each ``seed`` drawing the outer folds and the inner ones, and their mean: a
    handful of pages moves a draw's figures, so one draw says little about the next."""
    lines = [
        f"  {'seed':>5s}" + "".join(f"  {url + ': acc/prec/recall':>34s}" for url in MODES),
    ]
    figures = []
    for seed in seeds:
        held = site_grouped(data, functools.partial(combined, seed=seed), seed)
        figures.append([OverviewFigures.of(data, held, mode) for mode in range(len(MODES))])
        lines.append(
            f"  {seed:5d}"
            + "".join(
                f"  {f'{f.accuracy:.3f} / {f.precision:.3f} / {f.recall:.3f}':>34s}"
                for f in figures[-1]
            )
        )
    means = [
        [
            float(np.mean([getattr(draw[mode], name) for draw in figures]))
            for name in ("accuracy", "precision", "recall")
        ]
        for mode in range(len(MODES))
    ]
    lines.append(
        f"  {'mean':>5s}"
        + "".join(f"  {' / '.join(f'{v:.3f}' for v in mode):>34s}" for mode in means)
    )
    return lines


def show(data: Data, held: Held, count: int) -> list[str]:
    """The content pages scored highest and the overview pages scored lowest (held out,
    with URL), with the reasons of the model that scored them."""
    score = held.values[0, :, 0]
    negatives = np.flatnonzero(~data.truth)
    positives = np.flatnonzero(data.truth)
    lines = []
    for title, rows in (
        ("content pages scored highest", negatives[np.argsort(-score[negatives])][:count]),
        ("overview pages scored lowest", positives[np.argsort(score[positives])][:count]),
    ):
        lines.append(f"{title} (held out, with URL):")
        model = model_of(data, np.arange(len(data.records)), 0.1)
        for i in rows.tolist():
            record = data.records[i]
            _, parts = model.contributions(data.with_url[i])
            top = np.argsort(-np.abs(parts))[:5]
            why = ", ".join(f"{data.names[j]} {parts[j]:+.2f}" for j in top.tolist())
            lines.append(f"  {score[i]:.3f} {record.page.key} {record.page.url or ''}")
            lines.append(f"        {why}")
    return lines


#: Why an overview page was not dropped (:func:`why_missed`), each test in turn.
CAUSES = ("score under the drop threshold", "structure alone under the gate", "no teasers or lists")


def why_missed(data: Data, seed: int = 0) -> list[str]:
    """Per overview page held out in the site-grouped folds (the folds of
    :func:`site_grouped`, models fitted as there) and not called overview, with and without
    URL: which of the tests of :meth:`~scrapy_tagratio.overview.OverviewModel.decide` it
    failed (:data:`CAUSES`), counted per combination of causes, then one line per page with
    its score, its structure's score and the largest contributions."""
    failed: dict[int, list[tuple[int, str]]] = {0: [], 1: []}
    for train, test in protocol.site_folds(
        data.pages, OUTER_FOLDS, labels=data.truth.astype(int), seed=seed
    ):
        model = fitted(data, train, seed)
        gate = min(model.structure_threshold, model.threshold)
        for mode, x in enumerate((data.with_url, data.without_url)):
            rows = x[test]
            base, parts = model.contributions(rows)
            score, code = model.decide(rows, base, parts)
            structure = model.structure_probability(base, parts)
            listed = model.has_structure(rows)
            for k in np.flatnonzero(data.truth[test] & (code != 2)).tolist():
                tests = (score[k] < model.threshold, structure[k] < gate, not listed[k])
                causes = " + ".join(c for c, fails in zip(CAUSES, tests, strict=True) if fails)
                top = np.argsort(-np.abs(parts[k]))[:3].tolist()
                failed[mode].append(
                    (
                        int(test[k]),
                        f"{causes or 'uncertain band'}: score {score[k]:.2f} "
                        f"(drop {model.threshold:.2f}), structure {structure[k]:.3f} "
                        f"(gate {gate:.3f}); "
                        + ", ".join(f"{data.names[j]} {parts[k][j]:+.2f}" for j in top),
                    )
                )
    lines = []
    for mode, url in ((0, "with URL"), (1, "without URL")):
        counts: dict[str, int] = {}
        for _, line in failed[mode]:
            cause = line.split(":")[0]
            counts[cause] = counts.get(cause, 0) + 1
        lines.append(f"overview pages missed {url}: {len(failed[mode])}")
        lines += [f"  {n:3d}  {cause}" for cause, n in sorted(counts.items(), key=lambda c: -c[1])]
        for i, line in sorted(failed[mode], key=lambda f: f[1]):
            lines.append(f"    {data.pages[i].key}  {line}")
    return lines


def fingerprint(data: Data) -> dict[str, Any]:
    """What the model was fitted on: the pool's pages and labels, hashed."""
    digest = hashlib.sha1()
    for page in data.pages:
        digest.update(f"{page.key}\t{page.overview_label}\t{page.url or ''}\n".encode())
    return {
        "pages": len(data.records),
        "overview_pages": int(data.truth.sum()),
        "pool_sha1": digest.hexdigest(),
        "algorithm": DEFAULT_ALGORITHM,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--limit", type=int, default=None, help="about N pages, every k-th of the pool"
    )
    parser.add_argument("--show", type=int, default=0, help="print the N worst pages each way")
    parser.add_argument(
        "--why", action="store_true", help="print why each missed overview page was missed"
    )
    parser.add_argument(
        "--features",
        default=",".join(MODEL_FEATURES),
        help=f"comma-separated, of: {', '.join(FEATURES)}",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[],
        help="also the combined model's overview-dev figures on the site-grouped folds drawn "
        "with each of these seeds (outer and inner folds), and their mean",
    )
    parser.add_argument("--fit", action="store_true", help=f"write {MODEL_FILE.name}")
    args = parser.parse_args(argv)
    try:
        pages = protocol.pool()
        pages = pages[:: max(1, len(pages) // args.limit)] if args.limit else pages
    except FileNotFoundError as exc:
        sys.exit(str(exc))
    records = collect(pages)
    data = Data.of(records, [n for n in args.features.split(",") if n])
    print(
        f"pool: {len(records)} pages, {int(data.truth.sum())} overview; "
        f"features: {', '.join(data.names)}"
    )
    detectors = {
        name: scorer
        for name, scorer in DETECTORS.items()
        if scorer is not shipped or records[0].shipped is not None
    }
    held_out = {name: leave_one_set_out(data, scorer) for name, scorer in detectors.items()}
    print("content sets, leave-one-set-out (share of the set's pages):")
    print("\n".join(content_table(data, held_out)))
    grouped = {name: site_grouped(data, scorer) for name, scorer in detectors.items()}
    print(f"overview-dev, site-grouped {OUTER_FOLDS} folds of the pool:")
    print("\n".join(overview_table(data, grouped)))
    if args.seeds:
        print("overview-dev, combined (protocol), the site-grouped folds drawn by seed:")
        print("\n".join(draws_table(data, args.seeds)))
    extraction = np.mean([r.extract_seconds for r in records]) * 1000
    detection = np.mean([r.detect_seconds for r in records]) * 1000
    print(
        f"time per page: default extraction {extraction:.2f} ms, detector {detection:.2f} ms "
        f"({detection / extraction:.0%} of it)"
    )
    if args.show:
        print("\n".join(show(data, grouped["combined (protocol)"], args.show)))
    if args.why:
        print("\n".join(why_missed(data)))
    if args.fit:
        everything = np.arange(len(records))
        model = fitted(data, everything)
        figures = {
            "content_sets_leave_one_set_out": {
                name: {
                    url: dict(
                        zip(
                            ("overview", "uncertain"),
                            (
                                float(called[[name in p.sets for p in data.pages]].mean())
                                for called in held_out["combined (protocol)"][name].verdicts(mode)
                            ),
                            strict=True,
                        )
                    )
                    for mode, url in enumerate(MODE_KEYS)
                }
                for name in protocol.CONTENT_SETS
            },
            "overview_dev_site_grouped": {
                url: dataclasses.asdict(
                    OverviewFigures.of(data, grouped["combined (protocol)"], mode)
                )
                for mode, url in enumerate(MODE_KEYS)
            },
        }
        model = dataclasses.replace(
            model,
            metadata={
                "written_by": "python -m benchmarks.overview --fit",
                "training": fingerprint(data),
                "penalty": choose(data, everything).penalty,
                "validation": figures,
            },
        )
        MODEL_FILE.parent.mkdir(exist_ok=True)
        MODEL_FILE.write_text(json.dumps(model.to_dict(), indent=1) + "\n", encoding="utf-8")
        print(
            f"wrote {MODEL_FILE}: drop at {model.threshold:.3f}, "
            f"uncertain from {model.uncertain_threshold:.3f}"
        )


if __name__ == "__main__":
    main()
