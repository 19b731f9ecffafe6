"""Speed and memory of extractors beside lxml's parse and trafilatura, same run (issue 6).

    python -m benchmarks.speed cectd cetd --limit 200
    python -m benchmarks.speed tagratio cetr:clustering=threshold --no-memory

Per page of a benchmark set (default trafilatura-eval, sorted ids), every method runs once,
interleaved: the order of the methods is shuffled from page to page (a fixed seed), so drift
of a shared machine (other processes, CPU frequency) falls on all methods alike, and no
method always runs after the same one (what a call costs depends on the heap its predecessor
leaves: a page-sized string is cheap in memory the previous method just freed). Methods:

* ``lxml-parse``: ``etree.fromstring(page_bytes, etree.HTMLParser())``, the floor of any DOM
  method;
* ``trafilatura``: ``trafilatura.extract(page_bytes)``, a fast, accurate peer;
* ``read:NAME``: decoding and reading the page (``Document.page``) by each reader that can run
  here (the kernels only when built, lexbor only with selectolax);
* each extractor spec on the page bytes, with the default reader and (``@NAME``) each
  other reader, and (``@tree``) on the tree parsel builds from
  the decoded page, the way Scrapy hands ``response.selector.root`` over (tree untimed).

Methods are timed by the CPU time of the thread that runs them (``--clock cpu``, the
default: on a shared machine the wall clock adds the time spent waiting for a core) or by
the wall clock (``--clock wall``). Printed per method: mean and median milliseconds per
page, pages per second, the ratio of its mean to lxml's mean, the median of its per-page
ratios to lxml, and the ratio to trafilatura.

Memory (``--no-memory`` to skip): each extractor (and ``@NAME``, with each other reader)
runs in a fresh subprocess on the largest page of the set and on a generated 20 MB page;
the peak resident memory above the level just before the call (Linux: the high-water mark
is reset through ``/proc/self/clear_refs``, so it covers libxml2's memory too, which
tracemalloc cannot see) is printed in MB and as a multiple of the page size.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from scrapy_tagratio import DEFAULT_ALGORITHM, extract, reader
from scrapy_tagratio.document import Document
from scrapy_tagratio.lexbor_reader import lexbor_status

from . import _data
from .extractors import PEERS, make_extractor, parse_spec

__all__ = ["main"]

LXML = "lxml-parse"
TRAFILATURA = "trafilatura"
TREE_SUFFIX = "@tree"
#: Reading alone (decoding and ``Document.page``), per reader.
READ = "read:"
#: The clocks a run can time methods by: the CPU time of this thread (the work done for
#: the page, which processes sharing the machine do not lengthen by making it wait for a
#: core) or the wall clock.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}
#: A method: (page bytes, parsed tree, url) -> anything; its time is what is measured.
Method = Callable[[bytes, Any, "str | None"], object]


@dataclass
class Timings:
    """Seconds per page of one method, in page order, and its exceptions."""

    seconds: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)


def _lxml_parse(html: bytes, tree: Any, url: str | None) -> object:
    return etree.fromstring(html, etree.HTMLParser())


def _trafilatura(html: bytes, tree: Any, url: str | None) -> object:
    import trafilatura

    return trafilatura.extract(html)


def _on_bytes(spec: str) -> Method:
    run = make_extractor(spec)
    return lambda html, tree, url: run(html, url)


def _on_tree(spec: str) -> Method:
    name, params = parse_spec(spec)
    return lambda html, tree, url: extract(tree, algorithm=name, url=url, **params)


def _scrapy_tree(html: bytes) -> Any:
    """The tree a Scrapy HtmlResponse gives: parsel's lxml root of the decoded text."""
    from parsel import Selector
    from w3lib.encoding import html_to_unicode

    return Selector(text=html_to_unicode(None, html)[1]).root


def _with_reader(name: str, method: Method) -> Method:
    """``method`` with the pages read by reader ``name`` (see scrapy_tagratio.reader)."""

    def run(html: bytes, tree: Any, url: str | None) -> object:
        default, reader.DEFAULT_READER = reader.DEFAULT_READER, name
        try:
            return method(html, tree, url)
        finally:
            reader.DEFAULT_READER = default

    return run


def _read(name: str) -> Method:
    """Decoding and reading alone, by reader ``name``, as
    :attr:`~scrapy_tagratio.document.Document.page` reads a page (bytes that are the text's
    UTF-8 go to the parser as they are; with the SAX reader, most are never decoded)."""
    return _with_reader(name, lambda html, tree, url: Document(html).page)


def available_readers() -> list[str]:
    """The readers that can run here, the default first (see scrapy_tagratio.reader)."""
    usable = {"kernel": reader.kernel_status()[0], "lexbor": lexbor_status()[0]}
    names = [name for name in reader.READERS if usable.get(name, True)]
    return sorted(names, key=lambda name: name != reader.DEFAULT_READER)


def _methods(specs: Sequence[str], with_tree: bool) -> dict[str, Method]:
    methods: dict[str, Method] = {LXML: _lxml_parse, TRAFILATURA: _trafilatura}
    for name in available_readers():
        methods[f"{READ}{name}"] = _read(name)
    for spec in specs:
        methods[spec] = _on_bytes(spec)
        if parse_spec(spec)[0] not in PEERS:
            for name in available_readers():
                if name != reader.DEFAULT_READER:
                    methods[f"{spec}@{name}"] = _with_reader(name, methods[spec])
    if with_tree:
        for spec in specs:
            if parse_spec(spec)[0] not in (*PEERS, "fulltext"):
                methods[spec + TREE_SUFFIX] = _on_tree(spec)
    return methods


def measure(
    pages: Sequence[_data.Page], methods: dict[str, Method], clock: Callable[[], float]
) -> dict[str, Timings]:
    """Run every method on every page, in an order shuffled per page (seed 0, so runs
    compare); seconds per method by ``clock`` (see :data:`CLOCKS`)."""
    names = list(methods)
    timings = {name: Timings() for name in names}
    shuffle = random.Random(0).sample
    for index, page in enumerate(pages):
        tree = _scrapy_tree(page.html)
        for name in shuffle(names, len(names)):
            start = clock()
            try:
                methods[name](page.html, tree, page.url)
            except Exception as exc:  # timed all the same; counted and listed
                kind = type(exc).__name__
                timings[name].errors[kind] = timings[name].errors.get(kind, 0) + 1
            timings[name].seconds.append(clock() - start)
        if (index + 1) % 50 == 0:
            print(f"  {index + 1}/{len(pages)} pages", file=sys.stderr)
    return timings


def format_speed(timings: dict[str, Timings]) -> str:
    """The speed table."""
    lxml = timings[LXML].seconds
    reference = statistics.fmean(lxml)
    trafilatura = statistics.fmean(timings[TRAFILATURA].seconds)
    width = max(14, *(len(name) for name in timings))
    header = (
        f"{'method':<{width}} {'mean ms':>8} {'median ms':>9} {'pages/s':>8} "
        f"{'x lxml':>7} {'median x lxml':>13} {'x trafilatura':>13} {'errors':>6}"
    )
    lines = [header, "-" * len(header)]
    for name, t in timings.items():
        mean = statistics.fmean(t.seconds)
        ratios = statistics.median(s / max(r, 1e-9) for s, r in zip(t.seconds, lxml, strict=True))
        lines.append(
            f"{name:<{width}} {mean * 1000:8.2f} {statistics.median(t.seconds) * 1000:9.2f} "
            f"{1 / mean:8.1f} {mean / reference:7.2f} {ratios:13.2f} {mean / trafilatura:13.2f} "
            f"{sum(t.errors.values()):6d}"
        )
    for name, t in timings.items():
        if t.errors:
            kinds = ", ".join(f"{n} x {kind}" for kind, n in t.errors.items())
            lines.append(f"{name}: {kinds}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- memory
def _rss_kb(field_name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field_name + ":"):
            return int(line.split()[1])
    raise OSError(f"{field_name} not in /proc/self/status")


def memory_probe(method: str, path: str) -> dict[str, float]:
    """In this (fresh) process: peak resident memory of one call of ``method`` on the page
    in ``path``, above the level just before the call."""
    import resource

    html = Path(path).read_bytes()
    spec, _, reader_name = method.partition("@")
    run = {LXML: _lxml_parse, TRAFILATURA: _trafilatura}.get(method) or _on_bytes(spec)
    if reader_name:
        run = _with_reader(reader_name, run)
    run(b"<html><body><p>warm up: imports and caches</p></body></html>", None, None)
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset the high-water mark (Linux)
        before, exact = _rss_kb("VmRSS"), True
    except OSError:
        before, exact = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, False
    start = time.perf_counter()
    run(html, None, None)
    seconds = time.perf_counter() - start
    peak = _rss_kb("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"bytes": len(html), "extra_kb": max(0, peak - before), "seconds": seconds}


def _probe_in_subprocess(method: str, path: Path) -> dict[str, float] | str:
    command = [sys.executable, "-m", "benchmarks.speed", "--memory-probe", method, str(path)]
    root = Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=600, cwd=root, check=False
        )
    except subprocess.TimeoutExpired:
        return "timed out after 600 s"
    if done.returncode:
        return done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
    result: dict[str, float] = json.loads(done.stdout)
    return result


def _largest_page(dataset: str) -> _data.Page:
    return max(
        (_data.load_page(dataset, i) for i in _data.page_ids(dataset)), key=lambda p: len(p.html)
    )


def format_memory(methods: Sequence[str], dataset: str, synthetic_mb: int) -> str:
    """Peak memory of each method on the set's largest page and on a synthetic page."""
    from tests.badinput import large_page

    largest = _largest_page(dataset)
    lines = [
        f"{'method':<16} {'page':<28} {'MB':>6} {'peak extra MB':>13} {'x page':>7} {'s':>6}",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        pages = {
            f"largest {dataset} ({largest.id[:12]})": largest.html,
            f"synthetic {synthetic_mb} MB": large_page(synthetic_mb * 1_000_000),
        }
        for label, html in pages.items():
            path = Path(tmp) / "page.html"
            path.write_bytes(html)
            for method in methods:
                result = _probe_in_subprocess(method, path)
                if isinstance(result, str):
                    lines.append(f"{method:<16} {label:<28} {len(html) / 1e6:6.1f} {result}")
                    continue
                extra_mb = result["extra_kb"] * 1024 / 1e6
                lines.append(
                    f"{method:<16} {label:<28} {len(html) / 1e6:6.1f} {extra_mb:13.1f} "
                    f"{extra_mb * 1e6 / len(html):7.1f} {result['seconds']:6.2f}"
                )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "extractors", nargs="*", help=f"algorithm names or specs (default: {DEFAULT_ALGORITHM})"
    )
    parser.add_argument("--dataset", choices=sorted(_data.DATASETS), default="trafilatura")
    parser.add_argument("--limit", type=int, default=200, help="first N pages (default 200)")
    parser.add_argument("--no-tree", action="store_true", help="skip the parsed-tree runs")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory probes")
    parser.add_argument("--synthetic-mb", type=int, default=20, help="synthetic page size")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="what to time by (default cpu)"
    )
    parser.add_argument("--memory-probe", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_probe:
        print(json.dumps(memory_probe(*args.memory_probe)))
        return 0
    specs = list(dict.fromkeys(args.extractors or [DEFAULT_ALGORITHM]))
    try:
        for spec in specs:
            parse_spec(spec)
        pages = list(_data.pages(args.dataset, args.limit))
    except (ValueError, FileNotFoundError) as exc:
        parser.error(str(exc))

    methods = _methods(specs, with_tree=not args.no_tree)
    clock = CLOCKS[args.clock]
    measure(pages[:1], methods, clock)  # warm-up: imports, caches
    started = time.perf_counter()
    timings = measure(pages, methods, clock)
    print(
        f"{_data.DATASETS[args.dataset]}: {len(pages)} pages, "
        f"{time.perf_counter() - started:.0f} s wall, methods interleaved per page, "
        f"timed by the {args.clock} clock, load average {os.getloadavg()[0]:.1f}"
    )
    print(format_speed(timings))
    if not args.no_memory:
        print()
        variants = [
            f"{spec}@{name}"
            for spec in specs
            if parse_spec(spec)[0] not in PEERS
            for name in available_readers()
            if name != reader.DEFAULT_READER
        ]
        print(
            format_memory([LXML, TRAFILATURA, *specs, *variants], args.dataset, args.synthetic_mb)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
