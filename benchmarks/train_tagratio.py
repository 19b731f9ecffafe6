"""Fit the default algorithm's block model on trafilatura-eval and print its weights.

Each text block of each page (see ``scrapy_tagratio.algorithms.tagratio.block_features``)
is labelled by the gold snippets: 1 if its text contains a ``with`` snippet, 0 if it
contains a ``without`` snippet, unlabelled otherwise (most blocks). A standardised
logistic regression (scikit-learn) is fitted on the labelled blocks. The script prints

* the 5-fold cross-validated snippet F-score of the whole extractor (folds by page, the
  model refitted on four fifths and applied to the fifth), for a few thresholds;
* the constants to paste into ``tagratio.py`` (means, scales, weights, intercept).

Usage: ``python -m benchmarks.train_tagratio [--limit N] [--folds 5]``. Needs
../shared/benchmarks (or TAGRATIO_BENCHMARKS). Takes about a minute.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from scrapy_tagratio.algorithms.tagratio import FEATURES, block_features
from scrapy_tagratio.document import Document

from . import _data

_SPACE = re.compile(r"\s+")


def _ws(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


@dataclass
class PageBlocks:
    page_id: str
    features: np.ndarray
    labels: np.ndarray  # 1 content, 0 boilerplate, -1 unknown
    texts: list[str]
    with_snippets: list[str]
    without_snippets: list[str]


def page_blocks(page: _data.Page) -> PageBlocks:
    document = Document.from_input(page.html, url=page.url)
    blocks, features, owner, _ = block_features(document)
    texts = [_ws(document.text_of(owner == b)) for b in blocks.tolist()]
    with_snippets = [_ws(s) for s in page.gold["with"]]
    without_snippets = [_ws(s) for s in page.gold["without"]]
    labels = np.full(len(texts), -1)
    for i, text in enumerate(texts):
        if any(s in text for s in without_snippets):
            labels[i] = 0
        if any(s in text for s in with_snippets):
            labels[i] = 1
    return PageBlocks(page.id, features, labels, texts, with_snippets, without_snippets)


def fit(pages: list[PageBlocks]) -> tuple[StandardScaler, LogisticRegression]:
    x = np.vstack([p.features[p.labels >= 0] for p in pages])
    y = np.concatenate([p.labels[p.labels >= 0] for p in pages])
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(scaler.transform(x), y)
    return scaler, model


def snippet_f1(pages: list[PageBlocks], kept: list[np.ndarray]) -> tuple[float, float, float]:
    """F-score, precision, recall by the corpus rule, on the kept blocks' joined text."""
    tp = fp = fn = 0
    for page, keep in zip(pages, kept, strict=True):
        text = _ws(" ".join(t for t, k in zip(page.texts, keep, strict=True) if k))
        found = sum(s in text for s in page.with_snippets)
        tp += found
        fn += len(page.with_snippets) - found
        fp += sum(s in text for s in page.without_snippets)
    return 2 * tp / (2 * tp + fp + fn), tp / max(1, tp + fp), tp / max(1, tp + fn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    pages = [page_blocks(p) for p in _data.pages("trafilatura", limit=args.limit)]
    labelled = sum(int((p.labels >= 0).sum()) for p in pages)
    print(f"{len(pages)} pages, {sum(len(p.labels) for p in pages)} blocks, {labelled} labelled")

    probabilities: list[np.ndarray] = [np.zeros(0)] * len(pages)
    for fold in range(args.folds):
        train = [p for i, p in enumerate(pages) if i % args.folds != fold]
        scaler, model = fit(train)
        for i, page in enumerate(pages):
            if i % args.folds == fold and len(page.features):
                probabilities[i] = model.predict_proba(scaler.transform(page.features))[:, 1]
    for threshold in (0.4, 0.45, 0.5, 0.55, 0.6):
        f1, precision, recall = snippet_f1(pages, [p >= threshold for p in probabilities])
        print(
            f"cross-validated threshold {threshold:.2f}: F1 {f1:.4f} "
            f"(P {precision:.4f}, R {recall:.4f})"
        )

    scaler, model = fit(pages)
    np.set_printoptions(precision=6, suppress=True, linewidth=88)
    print("\n# features:", ", ".join(FEATURES))
    print("FEATURE_MEANS = np.array(", repr(scaler.mean_.round(6).tolist()), ")")
    print("FEATURE_SCALES = np.array(", repr(scaler.scale_.round(6).tolist()), ")")
    print("WEIGHTS = np.array(", repr(model.coef_[0].round(6).tolist()), ")")
    print("INTERCEPT =", round(float(model.intercept_[0]), 6))


if __name__ == "__main__":
    main()
