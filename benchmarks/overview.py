"""Overview-page detection on ``overview-dev``: accuracy, precision, recall and the
article false-overview rate of each detector variant, and the combined model's confusion
table; ``--fit`` refits the combined model and prints the constants of
``scrapy_tagratio/overview.py``.

Every page is parsed once; the extraction of ``--algorithm`` (default: the project's
default) gives the net text length, TextSweeper's extraction gives the paper's own test.
Variants:

* ``net-text``: TextSweeper's test, overview when the net text length is below the
  minimum: at the detector's default minimum, and with the minimum tuned on the training
  folds (with the chosen algorithm's extraction and with TextSweeper's);
* ``link share``, ``teasers``, ``article body``, ``page signals`` (with the URL shape when
  the URL is used), ``combined`` (the shipped feature set, :data:`MODEL_FEATURES`) and
  ``all features``: a logistic model over those features of
  :class:`~scrapy_tagratio.overview.PageEvidence`, refitted on each training fold;
* ``shipped``: the detector exactly as shipped (fitted on all of these pages, so its
  figures are in-sample, not a measurement of generalisation).

Cross-validation: 5 folds split by ``site`` (a site's pages never sit on both sides),
stratified, repeated with 5 shuffles; figures are means over the repeats. "with URL" uses
the ``url`` column where present; "without URL" gives the detector no URL at all.
``article`` and ``other`` are both "not overview".

Usage: ``python -m benchmarks.overview [--algorithm NAME] [--repeats 5] [--fit]``.
Needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import gzip
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from scrapy_tagratio.algorithms import DEFAULT_ALGORITHM, get_algorithm
from scrapy_tagratio.document import Document
from scrapy_tagratio.overview import (
    FEATURES,
    MODEL_FEATURES,
    OverviewDetector,
    PageEvidence,
    page_evidence,
)

from . import _data

#: L2 penalty of the logistic models (small: 346 pages, up to 20 features).
C = 0.1
VARIANTS: dict[str, tuple[str, ...]] = {
    "link share": ("link_share",),
    "teasers": (
        "teasers", "summary_teasers", "largest_teaser_group", "heading_links", "article_links",
    ),
    "article body": ("prose_paragraphs", "prose_share", "prose_block", "title_repeats_heading"),
    "page signals": (
        "declares_article", "declares_item", "declares_listing", "og_website",
        "published_time", "paginated", "url_home", "url_listing", "url_article",
    ),
    "combined": MODEL_FEATURES,
    "all features": FEATURES,
}  # fmt: skip


@dataclass(frozen=True)
class LabelledPage:
    file: str
    label: str  # overview / article / other
    site: str
    evidence: PageEvidence  # with the URL (where known)
    textsweeper_net: int
    shipped: tuple[float, float]  # the shipped detector's score with / without URL


def load_pages(algorithm: str, limit: int | None = None) -> list[LabelledPage]:
    """Parse every labelled page once and gather its evidence."""
    root = _data.benchmarks_dir()
    if root is None:
        sys.exit(
            "benchmark data not found: set TAGRATIO_BENCHMARKS or put it at ../shared/benchmarks"
        )
    folder = root / "overview-dev"
    with open(folder / "labels.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))[:limit]
    extractor = get_algorithm(algorithm)()
    textsweeper = get_algorithm("textsweeper")()
    detector = OverviewDetector()
    pages = []
    for row in rows:
        with gzip.open(folder / row["file"]) as page:
            document = Document.from_input(page.read(), url=row["url"] or None)
        labelling = extractor.run(document)
        with_url = detector.detect(document, labelling).score
        document.url = None
        without_url = detector.detect(document, labelling).score
        document.url = row["url"] or None
        ts = textsweeper.run(document)
        pages.append(
            LabelledPage(
                file=row["file"],
                label=row["label"],
                site=row["site"] or row["file"],
                evidence=page_evidence(document, labelling),
                textsweeper_net=ts.content_chars - ts.link_chars,
                shipped=(with_url, without_url),
            )
        )
    return pages


def feature_matrix(pages: Sequence[LabelledPage], names: Sequence[str], *, url: bool) -> np.ndarray:
    """Rows of features; without URL, as if the detector had been given none."""
    rows = []
    for page in pages:
        evidence = page.evidence if url else dataclasses.replace(page.evidence, url_shape="")
        values = evidence.features(OverviewDetector().min_net_text_length)
        rows.append([values[name] for name in names])
    return np.asarray(rows, dtype=np.float64)


def logistic() -> Pipeline:
    """A standardised, L2-penalised logistic regression."""
    return make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=5000))


@dataclass
class Figures:
    accuracy: float
    precision: float
    recall: float
    article_false_overview: float
    other_false_overview: float


def figures(predicted: np.ndarray, labels: np.ndarray) -> Figures:
    truth = labels == "overview"
    hits = int((predicted & truth).sum())
    return Figures(
        accuracy=float((predicted == truth).mean()),
        precision=hits / max(int(predicted.sum()), 1),
        recall=hits / max(int(truth.sum()), 1),
        article_false_overview=float(predicted[labels == "article"].mean()),
        other_false_overview=float(predicted[labels == "other"].mean())
        if (labels == "other").any()
        else 0.0,
    )


def mean_figures(runs: Sequence[Figures]) -> Figures:
    return Figures(
        *(float(np.mean([getattr(r, f.name) for r in runs])) for f in dataclasses.fields(Figures))
    )


def folds(pages: Sequence[LabelledPage], repeats: int) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    labels = np.array([p.label == "overview" for p in pages])
    groups = np.array([p.site for p in pages])
    dummy = np.zeros((len(pages), 1))
    return [
        list(StratifiedGroupKFold(5, shuffle=True, random_state=seed).split(dummy, labels, groups))
        for seed in range(repeats)
    ]


def cross_validate_model(
    x: np.ndarray, labels: np.ndarray, splits: list[list[tuple[np.ndarray, np.ndarray]]]
) -> tuple[Figures, np.ndarray]:
    """Refit on each training fold, predict the held-out sites; returns mean figures and
    the first repeat's predictions (for the confusion table)."""
    truth = labels == "overview"
    runs, first = [], None
    for repeat in splits:
        predicted = np.zeros(len(labels), dtype=bool)
        for train, test in repeat:
            model = logistic().fit(x[train], truth[train])
            predicted[test] = model.predict_proba(x[test])[:, 1] >= 0.5
        runs.append(figures(predicted, labels))
        first = predicted if first is None else first
    assert first is not None
    return mean_figures(runs), first


def cross_validate_minimum(
    net: np.ndarray, labels: np.ndarray, splits: list[list[tuple[np.ndarray, np.ndarray]]]
) -> tuple[Figures, float]:
    """TextSweeper's test with the minimum chosen on each training fold (best accuracy);
    returns mean figures and the median chosen minimum."""
    truth = labels == "overview"
    candidates = np.unique(np.concatenate(([1], net + 1)))
    runs, chosen = [], []
    for repeat in splits:
        predicted = np.zeros(len(labels), dtype=bool)
        for train, test in repeat:
            accuracy = [((net[train] < m) == truth[train]).mean() for m in candidates]
            minimum = float(candidates[int(np.argmax(accuracy))])
            chosen.append(minimum)
            predicted[test] = net[test] < minimum
        runs.append(figures(predicted, labels))
    return mean_figures(runs), float(np.median(chosen))


def confusion(predicted: np.ndarray, labels: np.ndarray) -> str:
    lines = [f"    {'label':10s} {'overview':>9s} {'not':>6s}"]
    for label in ("overview", "article", "other"):
        rows = labels == label
        lines.append(
            f"    {label:10s} {int(predicted[rows].sum()):9d} {int((~predicted[rows]).sum()):6d}"
        )
    return "\n".join(lines)


def line(name: str, f: Figures) -> str:
    return (
        f"  {name:38s} acc {f.accuracy:.3f}  P {f.precision:.3f}  R {f.recall:.3f}  "
        f"article->overview {f.article_false_overview:.3f}  "
        f"other->overview {f.other_false_overview:.3f}"
    )


def _array(name: str, values: Sequence[float]) -> str:
    """``NAME = np.array([...])`` wrapped within ruff's line length."""
    numbers = ", ".join(f"{v:.6g}" for v in values)
    body = textwrap.fill(numbers, 96, initial_indent="    [", subsequent_indent="     ")
    return f"{name} = np.array(\n{body}]\n)"


def print_constants(pages: Sequence[LabelledPage]) -> None:
    """Fit the combined model on every page (with URL) and print overview.py's constants."""
    x = feature_matrix(pages, MODEL_FEATURES, url=True)
    truth = np.array([p.label == "overview" for p in pages])
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=C, max_iter=5000).fit(scaler.transform(x), truth)
    print(_array("MEANS", scaler.mean_))
    print(_array("SCALES", scaler.scale_))
    print(_array("WEIGHTS", model.coef_[0]))
    print(f"INTERCEPT = {model.intercept_[0]:.6g}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--algorithm", default=DEFAULT_ALGORITHM, help="extraction for the net text length"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="shuffles of the site-grouped 5 folds"
    )
    parser.add_argument("--limit", type=int, default=None, help="first N pages only (smoke runs)")
    parser.add_argument("--fit", action="store_true", help="print the combined model's constants")
    args = parser.parse_args(argv)

    pages = load_pages(args.algorithm, args.limit)
    if args.fit:
        print_constants(pages)
        return
    labels = np.array([p.label for p in pages])
    splits = folds(pages, args.repeats)
    counts = {label: int((labels == label).sum()) for label in ("overview", "article", "other")}
    print(
        f"overview-dev: {len(pages)} pages {counts}, {len({p.site for p in pages})} sites; "
        f"net text from {args.algorithm!r}; site-grouped 5-fold CV x {args.repeats}"
    )
    default_minimum = OverviewDetector().min_net_text_length
    for source, net in (
        (args.algorithm, np.array([p.evidence.net_text_length for p in pages])),
        ("textsweeper", np.array([p.textsweeper_net for p in pages])),
    ):
        print(
            line(f"net-text < {default_minimum} ({source})", figures(net < default_minimum, labels))
        )
        tuned, minimum = cross_validate_minimum(net, labels, splits)
        print(line(f"net-text, tuned (~{minimum:.0f}) ({source})", tuned))
    combined_predictions = {}
    for url in (True, False):
        print("with URL:" if url else "without URL:")
        for name, names in VARIANTS.items():
            if not url and not any(n.startswith("url_") for n in names) and name != "combined":
                continue  # identical to the run with URL
            result, predicted = cross_validate_model(
                feature_matrix(pages, names, url=url), labels, splits
            )
            print(line(f"{name} ({len(names)} features, CV)", result))
            if name == "combined":
                combined_predictions[url] = predicted
        shipped = (
            np.array([p.shipped[0 if url else 1] for p in pages]) >= OverviewDetector().threshold
        )
        print(line("shipped detector (in-sample)", figures(shipped, labels)))
    for url, predicted in combined_predictions.items():
        print(f"confusion, combined, CV (first repeat), {'with' if url else 'without'} URL:")
        print(confusion(predicted, labels))


if __name__ == "__main__":
    main()
