"""Site memory (:mod:`scrapy_tagratio.site_memory`) on pages of the same sites.

    python -m benchmarks.site_memory            # figures
    python -m benchmarks.site_memory --fit      # also write scrapy_tagratio/models/site_memory.json

Each set's pages are extracted site by site in sorted-id order, each page with the memory
of the site's pages before it (as a crawl sees them), and scored by the set's rule (word
4-gram F1; trafilatura-eval: its snippet F-score), with and without the memory. dragnet-dev
has several pages per site (54 sites with 3 or more); the other sets have mostly one page
per site and show that the memory does not harm pages it cannot help.

Two golds: dragnet-dev's gold keeps sentences that recur in the article of every page of a
site (a comment policy, an opinion notice), which the memory is meant to remove ("a
sentence that recurs inside the article container of every article is still
boilerplate"). The *template-free* gold leaves out the lines found in the gold of
:data:`DISCLAIMER_PAGES` or more pages of the site; it judges the memory and its constants
are chosen on it. The gold *as given* is printed beside it. (Sites of fewer pages, and so
the single-page sets, have the same gold in both.)

The memory's constants (``min_pages``, ``long_block_chars``, ``max_seen_share``) are
chosen inside the training folds: 5 folds of whole sites over all sets
(:mod:`benchmarks.protocol`); each fold's sites are scored with the constants that gave the
best mean of the sets' figures on the other folds. Printed:

* per set, the figure alone and with memory (held out as above) against both golds, and
  for dragnet-dev on the sites with 3 or more pages;
* dragnet-dev by position within the site (the cold start: a site's first page has no
  memory), with the cold-start hold of ``N`` pages (TAGRATIO_SITE_MEMORY_HOLD), and with
  every other page of the site known in advance, the bound of any hold;
* the time of ``extract`` with and without memory, interleaved on the same pages;
* the memory's size after a synthetic crawl of 100,000 pages from 1,000 sites.

``--fit`` writes the constants chosen on all pages, with the figures, to the model file.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import statistics
import time
import tracemalloc
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np

from scrapy_tagratio import extract
from scrapy_tagratio.algorithms import DEFAULT_ALGORITHM, get_algorithm
from scrapy_tagratio.document import Document
from scrapy_tagratio.site_memory import (
    MODEL_PATH,
    SiteMemory,
    discount_template,
    page_fingerprints,
)

from . import _data, protocol
from .metrics import (
    ShingleCounts,
    SnippetCounts,
    score_snippets,
    shingle_counts,
    summarise_shingles,
    tokens,
)

#: The constants tried: blocks seen on at least this many other pages are template ...
MIN_PAGES = (1, 2, 3)
#: ... one page more for blocks of at least this many characters ...
LONG_BLOCK_CHARS = (200, 400, 100_000)
#: ... and none on a page more than this share of whose long blocks were seen before. The
#: guard is always on: the development sets hold no article crawled under two URLs, which a
#: real crawl meets (tracking parameters, print and AMP versions), and without it such a
#: copy would lose its text.
MAX_SEEN_SHARES = (0.5, 0.7, 0.9)
GRID = tuple(itertools.product(MIN_PAGES, LONG_BLOCK_CHARS, MAX_SEEN_SHARES))
Constants = tuple[int, int, float]
#: The sets, each page scored by its set's rule; dragnet-dev has several pages per site.
SETS = ("dragnet", "fundus", "readability", "cleaneval", "trafilatura")
Score = ShingleCounts | SnippetCounts


def _memory(constants: Constants) -> SiteMemory:
    min_pages, long_block_chars, max_seen_share = constants
    return SiteMemory(
        min_pages=min_pages,
        long_block_chars=long_block_chars,
        max_seen_share=max_seen_share,
    )


@dataclass(frozen=True)
class PageResult:
    dataset: str
    site: str  # "<dataset>/<host>": sites never span sets
    position: int  # within the site, from 0
    site_pages: int
    alone: Score
    with_memory: dict[Constants, Score]  # each memory knowing the site's earlier pages


def _score(page: _data.Page, dataset: str, text: str, body: str | None) -> Score:
    """``text`` scored by the set's rule; ``body``: the gold text it is scored against
    (trafilatura-eval's snippets are its own gold)."""
    if dataset == "trafilatura":
        return score_snippets(text, page.gold["with"], page.gold["without"])
    return shingle_counts(body or "", text)


def set_f1(dataset: str, scores: Sequence[Score]) -> float:
    """The set's own figure: snippet F-score (trafilatura-eval), else word 4-gram F1."""
    if dataset == "trafilatura":
        snippets = cast(Sequence[SnippetCounts], scores)  # a set's scores are of one kind
        return sum(snippets[1:], snippets[0]).f_score
    return summarise_shingles(cast(Sequence[ShingleCounts], scores))[2]


def sites(dataset: str) -> dict[str, list[str]]:
    """Page ids by site (``"<dataset>/<host>"``), sorted."""
    gold = _data.load_gold(dataset)
    by_site: dict[str, list[str]] = defaultdict(list)
    for page_id in sorted(gold):
        host = gold[page_id].get("site") or protocol.site_of(gold[page_id].get("url"))
        by_site[f"{dataset}/{host or page_id}"].append(page_id)
    return by_site


#: A line of gold text found in the gold of this many pages of a site or more is a standard
#: disclaimer (a comment policy, an opinion notice): template by the site memory's
#: definition (issue 20: "a sentence that recurs inside the article container of every
#: article is still boilerplate"), content by dragnet-dev's gold.
DISCLAIMER_PAGES = 3
#: The golds a memory is scored against: the sets' gold without the lines recurring in the
#: gold of :data:`DISCLAIMER_PAGES` or more pages of the site (what the memory is built to
#: remove; the constants are chosen on it), and the gold as given.
GOLDS = ("template-free", "as given")
Gold = str


def without_disclaimers(golds: Sequence[str]) -> list[str]:
    """The gold texts of one site's pages without their lines that recur (as words, case
    aside) in the gold of :data:`DISCLAIMER_PAGES` or more of them."""
    keyed = [[(line, tuple(tokens(line.lower()))) for line in gold.splitlines()] for gold in golds]
    pages = Counter(key for lines in keyed for key in {key for _, key in lines})
    return [
        "\n".join(line for line, key in lines if pages[key] < DISCLAIMER_PAGES) for lines in keyed
    ]


def site_golds(pages: Sequence[_data.Page]) -> dict[Gold, list[str | None]]:
    """Per gold of :data:`GOLDS`, the gold text of each page of one site (None for
    trafilatura-eval, whose gold is snippets)."""
    bodies: list[str] = [page.gold["body"] for page in pages if page.gold.get("body") is not None]
    if len(bodies) < len(pages):
        return {gold: [None] * len(pages) for gold in GOLDS}
    return {"template-free": list(without_disclaimers(bodies)), "as given": list(bodies)}


def run_set(dataset: str, algorithm: str, model: str | None = None) -> dict[Gold, list[PageResult]]:
    """The set's pages site by site, in sorted-id order, alone and with each memory
    (``model``: the default algorithm's model file for this set, ``{set}`` replaced),
    scored against each gold of :data:`GOLDS`."""
    params = {"model": model.format(set=dataset)} if model else {}
    runner = get_algorithm(algorithm).with_params(**params)
    results: dict[Gold, list[PageResult]] = {gold: [] for gold in GOLDS}
    for site, page_ids in sites(dataset).items():
        memories = {constants: _memory(constants) for constants in GRID}
        pages = [_data.load_page(dataset, page_id) for page_id in page_ids]
        golds = site_golds(pages)
        for position, (page_id, page) in enumerate(zip(page_ids, pages, strict=True)):
            url = page.url or f"https://{site}/{page_id}"
            document = Document.from_input(page.html, url=page.url)
            labelling = runner.run(document)
            blocks, prints = page_fingerprints(document)
            texts = {}
            for constants, memory in memories.items():
                # As extract() does (fundus-dev has one article captured twice).
                template, record = memory.template_for_page(
                    site, url, document, blocks, prints, content=labelling.content_nodes
                )
                texts[constants] = discount_template(document, labelling, template)[0].text
                if record:
                    memory.record(site, prints, url)
            for gold, bodies in golds.items():
                results[gold].append(
                    PageResult(
                        dataset,
                        site,
                        position,
                        len(page_ids),
                        _score(page, dataset, labelling.text, bodies[position]),
                        {
                            constants: _score(page, dataset, text, bodies[position])
                            for constants, text in texts.items()
                        },
                    )
                )
    return results


#: A column of :func:`known_pages`: the text alone (``"alone"``) or with a cold-start hold
#: (None: every other page of the site known).
Column = str | int | None


def known_pages(
    constants: Constants, algorithm: str, model: str | None, holds: Sequence[int | None]
) -> dict[Gold, dict[Column, list[Score]]]:
    """dragnet-dev with each page extracted knowing the pages of its site that the
    cold-start hold lets it know, per hold ``N`` (in the order of :func:`run_set`): a page
    at position ``p < N`` waits until ``N`` other pages of its site were recorded (the
    site's first ``N + 1`` pages but itself, fewer on a smaller site: the crawl ends or the
    time limit passes); a later page knows the pages before it. ``None``: every other page
    of the site known, the bound of any hold. Scored against each gold of :data:`GOLDS`,
    with the text alone beside them (``"alone"``)."""
    params = {"model": model.format(set="dragnet")} if model else {}
    runner = get_algorithm(algorithm).with_params(**params)
    columns: list[Column] = ["alone", *holds]
    scores: dict[Gold, dict[Column, list[Score]]] = {
        gold: {column: [] for column in columns} for gold in GOLDS
    }
    for site, page_ids in sites("dragnet").items():
        pages = [_data.load_page("dragnet", page_id) for page_id in page_ids]
        golds = site_golds(pages)
        documents = [Document.from_input(page.html) for page in pages]
        prints = [page_fingerprints(document) for document in documents]
        labellings = [runner.run(document) for document in documents]
        for index, page in enumerate(pages):
            texts: dict[Column, str] = {"alone": labellings[index].text}
            for hold in holds:
                if hold is None:
                    known = [k for k in range(len(pages)) if k != index]
                elif index < hold:
                    known = [k for k in range(min(hold + 1, len(pages))) if k != index]
                else:
                    known = list(range(index))
                memory = _memory(constants)
                for other in known:
                    memory.record(site, prints[other][1])
                blocks, own = prints[index]
                template = memory.template_blocks(
                    site, documents[index], blocks, own, content=labellings[index].content_nodes
                )
                discounted, _ = discount_template(documents[index], labellings[index], template)
                texts[hold] = discounted.text
            for gold, bodies in golds.items():
                for column, text in texts.items():
                    scores[gold][column].append(_score(page, "dragnet", text, bodies[index]))
    return scores


#: The cold-start holds compared (TAGRATIO_SITE_MEMORY_HOLD); None: the whole site known.
HOLDS = (0, 2, 3, 4, 6, None)


def set_figures(results: Sequence[PageResult], constants: Constants | None) -> dict[str, float]:
    """Each set's figure with these constants (None: without memory)."""
    figures = {}
    for dataset in SETS:
        rows = [r for r in results if r.dataset == dataset]
        if rows:
            figures[dataset] = set_f1(
                dataset, [r.alone if constants is None else r.with_memory[constants] for r in rows]
            )
    return figures


def objective(results: Sequence[PageResult], constants: Constants) -> float:
    """Mean over the sets of each set's figure with these constants."""
    return statistics.fmean(set_figures(results, constants).values())


#: Per set, figures within this much count as tied: a set that loses less than this to the
#: memory is not lowered, and of the constants within this much of the best ones on every
#: set, the most cautious (removing least) is chosen.
TIE = 0.0005


def choose(results: Sequence[PageResult]) -> Constants:
    """Of the constants that lower no set's figure by more than :data:`TIE` below its figure
    without memory (or, where every one lowers some set more, those whose largest loss is
    smallest), those with the best mean of the sets' figures, or, of those within
    :data:`TIE` of the best on *every* set, the most cautious: more pages needed, a lower
    bar for long blocks, a lower share of seen text before a page counts as a copy. (A tie
    on the mean would let a set that moves hide behind the ones that do not.)"""
    alone = set_figures(results, None)
    figures = {constants: set_figures(results, constants) for constants in GRID}
    loss = {
        constants: max(0.0, max(alone[d] - by_set[d] for d in by_set))
        for constants, by_set in figures.items()
    }
    least = max(min(loss.values()), TIE)
    harmless = [constants for constants in GRID if loss[constants] <= least]
    best = max(harmless, key=lambda constants: statistics.fmean(figures[constants].values()))
    tied = [
        constants
        for constants in harmless
        if all(figures[constants][d] >= figures[best][d] - TIE for d in figures[best])
    ]
    return max(tied, key=lambda constants: (constants[0], -constants[1], -constants[2]))


def nested(
    results: dict[Gold, list[PageResult]],
) -> tuple[dict[Gold, list[Score]], list[Constants]]:
    """Per gold, each page's score with the constants chosen (on the template-free gold)
    on the other folds' sites."""
    judged = results["template-free"]
    held_out: dict[Gold, list[Score | None]] = {gold: [None] * len(judged) for gold in results}
    chosen = []
    for train, test in protocol.site_folds(judged, 5):
        constants = choose([judged[i] for i in train])
        chosen.append(constants)
        for gold, rows in results.items():
            for i in test:
                held_out[gold][i] = rows[i].with_memory[constants]
    return {
        gold: [score for score in scores if score is not None] for gold, scores in held_out.items()
    }, chosen


def timing(algorithm: str, limit: int, repeats: int = 3) -> str:
    """CPU ms/page of extract() alone and with a memory: per page the fastest of
    ``repeats`` runs of each, the runs with the memory each on a fresh copy of what it knew
    of the page's site (:meth:`SiteMemory.snapshot`), so that every run does the same work;
    then the page is recorded. CPU time and the fastest run: other processes on the machine
    slow both, unevenly, and a run is only ever slowed."""
    gold = _data.load_gold("dragnet")
    ids = sorted(gold, key=lambda i: (gold[i]["site"], i))[:limit]
    pages = [_data.load_page("dragnet", i).html for i in ids]
    memory = SiteMemory()
    alone, remembered = [], []
    extract(pages[0], algorithm=algorithm)  # models and readers load once, untimed
    for page_id, html in zip(ids, pages, strict=True):
        url = f"https://{gold[page_id]['site']}/{page_id}"
        runs: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(repeats):
            for with_memory in (False, True):
                known = memory.snapshot(url) if with_memory else None
                start = time.process_time()
                extract(html, algorithm=algorithm, url=url, with_html=False, site_memory=known)
                runs[with_memory].append(time.process_time() - start)
        alone.append(min(runs[False]))
        remembered.append(min(runs[True]))
        extract(html, algorithm=algorithm, url=url, with_html=False, site_memory=memory)
    a, m = statistics.fmean(alone) * 1e3, statistics.fmean(remembered) * 1e3
    return (
        f"  extract: {a:.2f} ms/page alone, {m:.2f} with memory: x{m / a:.3f} "
        f"({len(ids)} pages, the fastest of {repeats} runs each)"
    )


def memory_size(pages: int = 100_000, sites: int = 1_000, blocks: int = 300) -> str:
    """Size of a memory after a synthetic crawl: each site has a template of 200 blocks,
    each page 100 blocks of its own, its URL and its headline."""
    rng = np.random.default_rng(0)
    templates = rng.integers(0, 2**63, size=(sites, 200), dtype=np.uint64)
    memory = SiteMemory()
    tracemalloc.start()
    start = time.perf_counter()
    for page in range(pages):
        site = page % sites
        own = rng.integers(0, 2**63, size=blocks - 200, dtype=np.uint64)
        name = f"site{site}.example"
        memory.record(name, np.concatenate((templates[site], own)), f"https://{name}/{page}")
        memory.record_headline(name, f"Headline number {page} of the synthetic crawl")
    seconds = time.perf_counter() - start
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (
        f"  synthetic crawl, {pages:,} pages of {sites:,} sites ({blocks} blocks a page): "
        f"{memory.entries:,} entries, arrays {memory.nbytes / 2**20:.1f} MB, traced "
        f"{current / 2**20:.1f} MB (peak {peak / 2**20:.1f} MB), "
        f"{seconds / pages * 1e6:.0f} us a page to record"
    )


def _print_by_position(
    pages: Sequence[PageResult],
    known: dict[Gold, dict[Column, list[Score]]],
    columns: Sequence[Column],
    names: Sequence[str],
) -> None:
    """dragnet-dev's figures per column of ``known`` (its pages' scores in ``pages``'
    order), by the page's position within its site."""
    print(
        "dragnet-dev with the constants chosen on all pages, by position within the site "
        "(hold 0: as crawled, no hold; whole site: every other page of the site known), "
        "against the template-free gold:"
    )
    print(f"    {'':18s}" + " ".join(f"{name:>10s}" for name in names))
    groups: list[tuple[str, list[int]]] = [
        (f"page {position + 1}", [k for k, r in enumerate(pages) if r.position == position])
        for position in range(6)
    ]
    groups += [
        ("sites of 3+ pages", [k for k, r in enumerate(pages) if r.site_pages >= 3]),
        ("all", list(range(len(pages)))),
    ]
    for label, rows in groups:
        cells = " ".join(
            f"{set_f1('dragnet', [known['template-free'][column][k] for k in rows]):10.4f}"
            for column in columns
        )
        print(f"    {label:18s}{cells}   ({len(rows)} pages)")
    multi = groups[-2][1]
    cells = " ".join(
        f"{set_f1('dragnet', [known['as given'][column][k] for k in multi]):10.4f}"
        for column in columns
    )
    print(f"    {'the same, as given':18s}{cells}   ({len(multi)} pages of sites of 3+ pages)")


def report(
    results: dict[Gold, list[PageResult]],
    algorithm: str,
    model: str | None,
    fit: bool,
    time_limit: int,
) -> None:
    held_out, chosen = nested(results)
    judged = results["template-free"]
    final = choose(judged)
    print(
        f"{len(judged)} pages of {len({r.site for r in judged})} sites, algorithm "
        f"{algorithm!r}; constants (min_pages, long_block_chars, max_seen_share) chosen "
        f"per fold (5 folds of whole sites) on the template-free gold: "
        f"{', '.join(map(str, chosen))}; on all pages: {final}"
    )
    ranked = sorted(GRID, key=lambda constants: -objective(judged, constants))
    print(
        "best constants on all pages (mean of the sets' figures): "
        + ", ".join(f"{constants} {objective(judged, constants):.4f}" for constants in ranked[:4])
    )
    figures: dict[str, dict[str, float]] = {}
    print(
        "held-out figures (word 4-gram F1 against the template-free gold, then against the "
        "gold as given; trafilatura-eval: snippet F-score):"
    )
    for dataset in SETS:
        for name, keep in (
            ("", lambda r: True),
            (", sites of 3+ pages", lambda r: r.site_pages >= 3),
        ):
            rows = [i for i, r in enumerate(judged) if r.dataset == dataset and keep(r)]
            if not rows or (name and dataset != "dragnet"):
                continue
            multi = sum(judged[i].site_pages > 1 for i in rows)
            cells = []
            for gold in GOLDS:
                alone = set_f1(dataset, [results[gold][i].alone for i in rows])
                remembered = set_f1(dataset, [held_out[gold][i] for i in rows])
                figures[f"{dataset}{name} ({gold})"] = {
                    "pages": len(rows),
                    "alone": round(alone, 4),
                    "with_memory": round(remembered, 4),
                }
                cells.append(f"{alone:.4f} -> {remembered:.4f} ({remembered - alone:+.4f})")
            print(
                f"  {dataset + name:22s} {len(rows):4d} pages ({multi:3d} on sites of 2+): "
                + "   as given: ".join(cells)
            )
    dragnet = [i for i, r in enumerate(judged) if r.dataset == "dragnet"]
    known = known_pages(final, algorithm, model, HOLDS)
    columns: list[Column] = ["alone", *HOLDS]
    names = [
        str(column)
        if column == "alone"
        else f"hold {column}"
        if column is not None
        else "whole site"
        for column in columns
    ]
    _print_by_position([judged[i] for i in dragnet], known, columns, names)
    print("cost:")
    print(timing(algorithm, time_limit))
    print(memory_size())
    if fit:
        write_model(final, figures, judged)


def write_model(
    constants: Constants, figures: dict[str, dict[str, float]], results: Sequence[PageResult]
) -> None:
    ids = hashlib.sha1("\n".join(f"{r.site}" for r in results).encode()).hexdigest()
    model = {
        "version": 1,
        "written_by": "python -m benchmarks.site_memory --fit",
        "constants": dict(
            zip(("min_pages", "long_block_chars", "max_seen_share"), constants, strict=True)
        ),
        "training": {
            "sets": list(SETS),
            "pages": len(results),
            "sites_sha1": ids,
            "grid": {
                "min_pages": MIN_PAGES,
                "long_block_chars": LONG_BLOCK_CHARS,
                "max_seen_share": MAX_SEEN_SHARES,
            },
            "objective": "mean over the sets of each set's figure against the template-free "
            f"gold (lines in the gold of {DISCLAIMER_PAGES}+ pages of a site left out), no set "
            f"more than {TIE} below its figure without memory; ties within {TIE} on every "
            "set to the most cautious",
        },
        "validation": {
            "protocol": "5 folds of whole sites, constants chosen per fold",
            "figures": figures,
        },
    }
    Path(MODEL_PATH).write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {MODEL_PATH}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algorithm", default=DEFAULT_ALGORITHM)
    parser.add_argument("--fit", action="store_true", help="write the model file")
    parser.add_argument("--time-pages", type=int, default=200, help="pages for the timing")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument(
        "--model",
        help="the default algorithm's model file per set, '{set}' standing for the set: "
        "the leave-one-set-out models of benchmarks.train_tagratio, so that no set is "
        "extracted by a model fitted on it",
    )
    args = parser.parse_args(argv)
    results: dict[Gold, list[PageResult]] = {gold: [] for gold in GOLDS}
    for dataset in args.sets:
        for gold, rows in run_set(dataset, args.algorithm, args.model).items():
            results[gold] += rows
    report(results, args.algorithm, args.model, args.fit, args.time_pages)


if __name__ == "__main__":
    main()
