"""Where the default extraction's time goes, stage by stage, beside another checkout (issue 18).

    python -m benchmarks.stages --limit 200
    python -m benchmarks.stages --limit 200 --against ../main

Per page of the protocol's pool (its fixed order, the first ``--limit`` pages), a worker
process runs ``extract(page, url=...)`` with each stage's function wrapped by a timer:
reading the page, the node table, structures, the default's block features, its block
model, its text, the overview detector, the metadata, the language detector, the
headline, the cleaned HTML, and the rest of ``extract()``. A stage's time is its own
(the stages it calls are subtracted), by the CPU time of the worker's thread, and each
is printed as the sum over the pages divided by the sum of lxml's parse of the same
pages (the better of two parses just before the extraction, in the same worker).

With ``--against DIR`` a second worker runs the checkout in ``DIR`` (its
``scrapy_tagratio`` and ``benchmarks`` first on its path): the two take each page in
turn, in alternating order, so a shared machine's drift falls on both alike; only ratios
within one run compare. The first pages warm both up and are not counted.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STAGES = (
    "reading", "node table", "structures", "block features", "block model", "text",
    "overview", "metadata", "language", "headline", "cleaned html", "rest",
)  # fmt: skip
WARM_UP_PAGES = 5


def _worker() -> None:
    """Time the stages of each page whose pool index arrives on stdin; one JSON line each."""
    from lxml import etree

    import scrapy_tagratio.api as api
    from benchmarks.protocol import pool
    from scrapy_tagratio import document, metadata, overview
    from scrapy_tagratio.algorithms import tagratio

    clock = time.thread_time
    open_stages: list[list[Any]] = []  # [stage, start, time of the stages it called]
    spent: dict[str, float] = {}

    def timed(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            open_stages.append([stage, clock(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                _, start, inner = open_stages.pop()
                total = clock() - start
                spent[stage] = spent.get(stage, 0.0) + total - inner
                if open_stages:
                    open_stages[-1][2] += total

        return run

    for name, stage in (("page", "reading"), ("_walk", "node table")):
        cached = document.Document.__dict__[name]  # functools.cached_property
        cached.func = timed(stage, cached.func)
    for owner, name, stage in (
        (tagratio, "find_structures", "structures"),
        (tagratio, "block_features", "block features"),
        (tagratio, "content_probability", "block model"),
        (tagratio, "dom_labelling", "text"),
        (overview.OverviewDetector, "detect", "overview"),
        (api, "read_metadata", "metadata"),
        (metadata, "detect_language", "language"),
        (api, "without_leading_headline", "headline"),
        (document.Document, "html_of", "cleaned html"),
    ):
        setattr(owner, name, timed(stage, getattr(owner, name)))
    extract = timed("rest", api.extract)
    pages = pool()
    for line in sys.stdin:
        page = pages[int(line)]
        with gzip.open(page.path) as handle:
            html = handle.read()
        parses = []
        for _ in range(2):
            start = clock()
            etree.fromstring(html, etree.HTMLParser())
            parses.append(clock() - start)
        spent.clear()
        start = clock()
        extract(html, url=page.url)
        total = clock() - start
        print(json.dumps({"parse": min(parses), "extract": total, **spent}), flush=True)


def measure(limit: int, trees: dict[str, Path]) -> dict[str, list[dict[str, float]]]:
    """Per tree name, the stage times of pages ``0..limit-1`` (workers interleaved)."""
    # The script is run by path, not as a module of either tree, and without its folder
    # on the path: each worker imports its own tree's packages.
    command = [
        sys.executable,
        "-c",
        "import runpy, sys; runpy.run_path(sys.argv.pop(1), run_name='__main__')",
        str(Path(__file__).resolve()),
        "--worker",
    ]
    workers = {
        name: subprocess.Popen(
            command,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, root in trees.items()
    }
    timings: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    names = list(trees)
    try:
        for step, index in enumerate([*range(WARM_UP_PAGES), *range(limit)]):
            for name in names if step % 2 == 0 else names[::-1]:
                worker = workers[name]
                assert worker.stdin is not None and worker.stdout is not None
                worker.stdin.write(f"{index}\n")
                worker.stdin.flush()
                answer = worker.stdout.readline()
                if not answer:
                    raise RuntimeError(f"the worker of {name} ({trees[name]}) stopped")
                if step >= WARM_UP_PAGES:
                    timings[name].append(json.loads(answer))
    finally:
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.close()
            worker.wait()
    return timings


def _stage_time(stage: str, page: dict[str, float]) -> float:
    return page.get(stage, 0.0)


def format_stages(timings: dict[str, list[dict[str, float]]]) -> str:
    """The table: per stage and tree, the stage's time over lxml's parse time."""
    names = list(timings)
    lines = [f"{'stage, x lxml parse':22}" + "".join(f"{name:>12}" for name in names)]
    parse = {name: sum(page["parse"] for page in pages) for name, pages in timings.items()}
    rows: dict[str, Callable[[dict[str, float]], float]] = {
        **{stage: functools.partial(_stage_time, stage) for stage in STAGES},
        "after reading": lambda page: page["extract"] - page.get("reading", 0.0),
        "extract()": lambda page: page["extract"],
    }
    for label, value in rows.items():
        ratios = [sum(map(value, timings[name])) / parse[name] for name in names]
        lines.append(f"{label:22}" + "".join(f"{ratio:12.3f}" for ratio in ratios))
    means = [1000 * parse[name] / len(timings[name]) for name in names]
    lines.append(f"{'lxml parse, ms a page':22}" + "".join(f"{ms:12.3f}" for ms in means))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=200, help="first N pool pages (200)")
    parser.add_argument("--against", type=Path, help="another checkout, timed beside this one")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker()
        return 0
    trees = {"this": Path(__file__).resolve().parents[1]}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    print(f"{args.limit} pages of the protocol's pool")
    print(format_stages(measure(args.limit, trees)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
