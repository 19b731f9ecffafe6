"""Accuracy of extractors on a benchmark set, printed as one table (issue 4).

    python -m benchmarks.accuracy cectd cetd fulltext --peers
    python -m benchmarks.accuracy cetr cetr:clustering=threshold --limit 200 --jobs 2
    python -m benchmarks.accuracy cectd --dataset fundus --peers
    python -m benchmarks.accuracy --loso --jobs 2
    python -m benchmarks.accuracy --loso --seeds 0 1 2

``--loso`` prints the leave-one-set-out table of the default: for each development set
(trafilatura-eval, fundus, dragnet, readability, cleaneval) the block model is refitted
without that set's pages (``benchmarks.train_tagratio``; the probability cut chosen on inner
folds of the training pages) and the extractor with that model is scored on the set, beside
the peers on the same pages (the peers' scores are kept under ``TAGRATIO_CACHE``, default
``/tmp/scrapy-tagratio-cache``, keyed by the pages and the peers' versions). ``--seeds``
fits the held-out models with several learner seeds and reports the mean: a set's figure
moves by a few thousandths with the seed.

On ``trafilatura`` (trafilatura-eval, the default) the score is the set's snippet rule:
precision, recall, accuracy and F-score of counts summed over pages. On the full-gold-text
sets (``fundus``, ``cleaneval``, ``dragnet``) it is word 4-gram precision/recall/F1 as
article-extraction-benchmark computes them and the CETD paper's word-LCS precision, recall,
F1 and CleanEval score (definitions in :mod:`benchmarks.metrics`).

An exception or an empty result counts as empty text (the sets' rule); the ``errors`` column
counts exceptions, listed by type under the table. ``pages/s`` is pages divided by the time
spent in that extractor alone (per process, so comparable with and without ``--jobs``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path
from statistics import fmean
from typing import Any

from scrapy_tagratio import DEFAULT_ALGORITHM

from . import _data
from .extractors import PEERS, Extractor, make_extractor, parse_spec
from .metrics import (
    LcsScores,
    ShingleCounts,
    SnippetCounts,
    lcs_scores,
    score_snippets,
    shingle_counts,
    summarise_lcs,
    summarise_shingles,
)

#: Issue 14's floor on the leave-one-set-out table: the default's mean F over the sets at
#: least this far above trafilatura's (and at or above it on every set).
MEAN_MARGIN = 0.01

__all__ = ["PageOutcome", "Totals", "evaluate_page", "main"]


@dataclass(frozen=True)
class PageOutcome:
    """One extractor on one page: time, exception type name (or None) and its scores."""

    seconds: float
    error: str | None
    snippets: SnippetCounts | None = None
    shingles: ShingleCounts | None = None
    lcs: LcsScores | None = None


@dataclass
class Totals:
    """One extractor's outcomes accumulated over pages."""

    pages: int = 0
    seconds: float = 0.0
    errors: Counter[str] = field(default_factory=Counter)
    snippets: SnippetCounts = field(default_factory=SnippetCounts)
    shingles: list[ShingleCounts] = field(default_factory=list)
    lcs: list[LcsScores] = field(default_factory=list)

    def add(self, outcome: PageOutcome) -> None:
        self.pages += 1
        self.seconds += outcome.seconds
        if outcome.error:
            self.errors[outcome.error] += 1
        if outcome.snippets is not None:
            self.snippets += outcome.snippets
        if outcome.shingles is not None:
            self.shingles.append(outcome.shingles)
        if outcome.lcs is not None:
            self.lcs.append(outcome.lcs)


# Per-process state of the workers (set once by _initialise, not per page).
_DATASET = ""
_EXTRACTORS: dict[str, Extractor] = {}


def _initialise(dataset: str, specs: Sequence[str], time_budget: float | None) -> None:
    global _DATASET, _EXTRACTORS
    _DATASET = dataset
    _EXTRACTORS = {spec: make_extractor(spec, time_budget=time_budget) for spec in specs}


def evaluate_page(page_id: str) -> dict[str, PageOutcome]:
    """Run every extractor on one page of the current set and score it."""
    page = _data.load_page(_DATASET, page_id)
    outcomes: dict[str, PageOutcome] = {}
    for spec, extractor in _EXTRACTORS.items():
        error = None
        start = time.perf_counter()
        try:
            text = extractor(page.html, page.url) or ""
        except Exception as exc:  # the rule: any failure counts as empty text
            text, error = "", type(exc).__name__
        seconds = time.perf_counter() - start
        if "with" in page.gold:
            outcomes[spec] = PageOutcome(
                seconds,
                error,
                snippets=score_snippets(text, page.gold["with"], page.gold["without"]),
            )
        else:
            gold = page.gold["body"]
            outcomes[spec] = PageOutcome(
                seconds, error, shingles=shingle_counts(gold, text), lcs=lcs_scores(gold, text)
            )
    return outcomes


def _outcomes(
    dataset: str, ids: Sequence[str], specs: Sequence[str], time_budget: float | None, jobs: int
) -> Iterable[dict[str, PageOutcome]]:
    if jobs <= 1:
        _initialise(dataset, specs, time_budget)
        yield from map(evaluate_page, ids)
        return
    with Pool(jobs, initializer=_initialise, initargs=(dataset, specs, time_budget)) as pool:
        yield from pool.imap(evaluate_page, ids, chunksize=4)


def _rate(totals: Totals) -> str:
    return f"{totals.pages / totals.seconds:9.1f}" if totals.seconds else f"{'-':>9}"


def format_table(totals: dict[str, Totals], *, full_text: bool) -> str:
    """The result table (and the exception summary) as text."""
    width = max(12, *(len(spec) for spec in totals))
    if full_text:
        header = (
            f"{'extractor':<{width}} {'4g-P':>6} {'4g-R':>6} {'4g-F1':>6} "
            f"{'LCS-P':>6} {'LCS-R':>6} {'LCS-F1':>6} {'score':>6} {'pages/s':>9} {'errors':>6}"
        )
    else:
        header = (
            f"{'extractor':<{width}} {'precision':>9} {'recall':>7} {'accuracy':>8} "
            f"{'F-score':>7} {'pages/s':>9} {'errors':>6}"
        )
    lines = [header, "-" * len(header)]
    for spec, t in totals.items():
        errors = sum(t.errors.values())
        if full_text:
            p4, r4, f4 = summarise_shingles(t.shingles)
            pl, rl, fl, score = summarise_lcs(t.lcs)
            lines.append(
                f"{spec:<{width}} {p4:6.3f} {r4:6.3f} {f4:6.3f} "
                f"{pl:6.3f} {rl:6.3f} {fl:6.3f} {score:6.3f} {_rate(t)} {errors:6d}"
            )
        else:
            s = t.snippets
            lines.append(
                f"{spec:<{width}} {s.precision:9.3f} {s.recall:7.3f} {s.accuracy:8.3f} "
                f"{s.f_score:7.3f} {_rate(t)} {errors:6d}"
            )
    for spec, t in totals.items():
        if t.errors:
            kinds = ", ".join(f"{n} x {name}" for name, n in t.errors.most_common())
            lines.append(f"{spec}: {kinds} (scored as empty text)")
    return "\n".join(lines)


def _f1(totals: Totals, dataset: str) -> tuple[float, float, float]:
    """Precision, recall and F of the set's measure (snippets or word 4-grams)."""
    if dataset == "trafilatura":
        s = totals.snippets
        return s.precision, s.recall, s.f_score
    return summarise_shingles(totals.shingles)


def _totals(
    dataset: str, ids: Sequence[str], specs: Sequence[str], time_budget: float | None, jobs: int
) -> dict[str, Totals]:
    totals = {spec: Totals() for spec in specs}
    for outcomes in _outcomes(dataset, ids, specs, time_budget, jobs):
        for spec, outcome in outcomes.items():
            totals[spec].add(outcome)
    return totals


def peer_totals(
    dataset: str, ids: Sequence[str], peers: Sequence[str], jobs: int, cache: Path
) -> dict[str, Totals]:
    """The peers' totals on these pages, kept under ``cache`` (keyed by the pages, their
    gold, the peers and their versions): a peer's output does not change between runs, and
    on a shared machine the peers take most of the time of a leave-one-set-out run."""
    versions = {name: _version(name) for name in peers}
    gold = _data.load_gold(dataset)
    golds = json.dumps([gold[page_id] for page_id in ids], sort_keys=True)
    key = hashlib.sha1(repr((dataset, list(ids), versions, golds)).encode()).hexdigest()[:12]
    path = cache / f"peer-fields-{dataset}-{key}.pkl"
    if path.is_file():
        with open(path, "rb") as handle:
            fields: dict[str, dict[str, Any]] = pickle.load(handle)
        return {peer: Totals(**values) for peer, values in fields.items()}
    totals = _totals(dataset, ids, peers, None, jobs)
    # Each Totals' fields, not the Totals: pickled from ``python -m benchmarks.accuracy``
    # the class would be ``__main__.Totals``, which no other script could load.
    _data.write_atomically(path, pickle.dumps({peer: vars(t) for peer, t in totals.items()}))
    return totals


def _version(peer: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    package = {"readability": "readability-lxml"}.get(peer, peer)
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def leave_one_set_out(
    limit: int | None,
    jobs: int,
    time_budget: float | None,
    peers: Sequence[str],
    seeds: Sequence[int] = (0,),
) -> str:
    """The default fitted without each development set, scored on that set, beside
    ``peers`` on the same pages: one row per set, then the mean of the F column. With
    several learner ``seeds`` (each a model fitted and its cut chosen again: another
    tenth of the blocks held out for early stopping) the default's cell is the mean of
    the seeds' precision, recall and F, and a last column gives each seed's F."""
    from .train_tagratio import LABEL_SETS, write_loso_models

    cache = Path(os.environ.get("TAGRATIO_CACHE", "/tmp/scrapy-tagratio-cache"))
    models = [write_loso_models(cache, seed=seed) for seed in seeds]
    names = [DEFAULT_ALGORITHM, *peers]
    header = f"{'held-out set':<14} {'pages':>5} " + " ".join(
        f"{name[:11] + ' P/R/F':>23}" for name in names
    )
    if len(seeds) > 1:
        header += f"  {DEFAULT_ALGORITHM} F, seeds {', '.join(map(str, seeds))}"
    lines = [header, "-" * len(header)]
    scores: dict[str, list[float]] = {name: [] for name in names}
    for dataset in LABEL_SETS:
        ids = _data.page_ids(dataset, limit)
        ours = [f"{DEFAULT_ALGORITHM}:model={by_set[dataset]}" for by_set in models]
        per_seed = _totals(dataset, ids, ours, time_budget, jobs)
        seed_figures = [_f1(per_seed[spec], dataset) for spec in ours]
        figures = {
            DEFAULT_ALGORITHM: tuple(map(fmean, zip(*seed_figures, strict=True))),
            **{
                name: _f1(totals, dataset)
                for name, totals in peer_totals(dataset, ids, peers, jobs, cache).items()
            },
        }
        cells = []
        for name in names:
            p, r, f = figures[name]
            scores[name].append(f)
            cells.append(f"{p:.3f}/{r:.3f}/{f:.4f}".rjust(23))
        line = f"{dataset:<14} {len(ids):>5} " + " ".join(cells)
        if len(seeds) > 1:
            line += "  " + " ".join(f"{f:.4f}" for _, _, f in seed_figures)
        lines.append(line)
    means = " ".join(f"{fmean(v):>23.4f}" for v in scores.values())
    lines.append(f"{'mean F':<14} {'':>5} {means}")
    if "trafilatura" in scores:
        lines += _floors(LABEL_SETS, scores[DEFAULT_ALGORITHM], scores["trafilatura"])
    return "\n".join(lines)


def _floors(sets: Sequence[str], ours: Sequence[float], trafilatura: Sequence[float]) -> list[str]:
    """Issue 14's floors on the leave-one-set-out F figures: the default at or above
    trafilatura on every set, and at least :data:`MEAN_MARGIN` above it on their mean."""
    margins = [mine - theirs for mine, theirs in zip(ours, trafilatura, strict=True)]
    mean_margin = fmean(ours) - fmean(trafilatura)
    verdict = lambda met: "met" if met else "NOT met"  # noqa: E731
    return [
        f"{DEFAULT_ALGORITHM} - trafilatura, F: "
        + ", ".join(f"{name} {margin:+.5f}" for name, margin in zip(sets, margins, strict=True))
        + f"; every set >= 0: {verdict(min(margins) >= 0)}",
        f"{DEFAULT_ALGORITHM} - trafilatura, mean F: {mean_margin:+.5f}; "
        f">= {MEAN_MARGIN}: {verdict(mean_margin >= MEAN_MARGIN)}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.accuracy", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "extractors",
        nargs="*",
        help=f"algorithm names or specs like cetr:clustering=threshold, 'fulltext', peers "
        f"(default: {DEFAULT_ALGORITHM})",
    )
    parser.add_argument("--peers", action="store_true", help=f"add {', '.join(PEERS)}")
    parser.add_argument(
        "--loso",
        action="store_true",
        help="leave one set out: the default fitted without each development set, scored "
        "on it, beside the peers (ignores --dataset and the extractor list)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0],
        help="with --loso: learner seeds of the held-out models (default 0); with several, "
        "the default's figures are their mean and each seed's F is listed",
    )
    parser.add_argument("--dataset", choices=sorted(_data.DATASETS), default="trafilatura")
    parser.add_argument("--limit", type=int, help="only the first N pages (sorted ids)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=60.0,
        help="seconds per page for our algorithms; past it the page counts as empty (60)",
    )
    args = parser.parse_args(argv)

    if args.loso:
        print(leave_one_set_out(args.limit, args.jobs, args.time_budget, PEERS, args.seeds))
        return 0
    specs = list(
        dict.fromkeys([*(args.extractors or [DEFAULT_ALGORITHM]), *(PEERS if args.peers else ())])
    )
    try:
        for spec in specs:
            parse_spec(spec)
        ids = _data.page_ids(args.dataset, args.limit)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))

    totals = {spec: Totals() for spec in specs}
    started = time.perf_counter()
    for done, outcomes in enumerate(
        _outcomes(args.dataset, ids, specs, args.time_budget, args.jobs), 1
    ):
        for spec, outcome in outcomes.items():
            totals[spec].add(outcome)
        if done % 100 == 0:
            print(
                f"  {done}/{len(ids)} pages, {time.perf_counter() - started:.0f} s", file=sys.stderr
            )

    full_text = args.dataset != "trafilatura"
    print(
        f"{_data.DATASETS[args.dataset]}: {len(ids)} pages, jobs={args.jobs}, "
        f"{time.perf_counter() - started:.0f} s wall"
    )
    print(format_table(totals, full_text=full_text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
