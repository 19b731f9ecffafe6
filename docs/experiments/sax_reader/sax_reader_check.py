"""speed12: the SAX driver of _Events (in the package's kernel since speed13:
``reader._read_sax``) against the kernel's tree walk (``reader._read_tree``, main's kernel
reader before speed13): the same PageEvents on every pool page? and the time of each, every
way ``repeats`` times per page in alternating order, the best by the thread's CPU time,
as medians of per-page ratios (and ratios of sums) to lxml's parse of the page's bytes.
From the repository's root, ``TAGRATIO_BENCHMARKS`` set, ``D=docs/experiments/sax_reader``:

    PYTHONPATH=. python $D/sax_reader_check.py check [pages]
    PYTHONPATH=. python $D/sax_reader_check.py time [pages] [repeats]

("kernel" below is the tree walk, "sax" the SAX reader.)
"""

import dataclasses
import gc
import gzip
import statistics
import sys
import time

import numpy as np
from lxml import etree

from benchmarks.protocol import pool
from scrapy_tagratio import document, reader
from scrapy_tagratio.decoding import _decode_utf8

assert reader.sax_status()[0], reader.sax_status()


def read_sax(text, check_deadline, utf8=None):
    """As reader._read_kernel reads a page (whole or pushed in parts)."""
    return reader._read_sax(reader._SAX, reader.parser_parts(text, utf8), check_deadline)


def differences(a, b):
    out = []
    for f in ("tags", "parent", "depth", "end", "hints", "kinds", "nodes", "pieces", "texts"):
        x, y = getattr(a, f), getattr(b, f)
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        if not same:
            out.append(f)
    for f in dataclasses.fields(a.attributes):
        if getattr(a.attributes, f.name) != getattr(b.attributes, f.name):
            out.append("attributes." + f.name)
    return out


def text_of(raw):
    text, same = _decode_utf8(raw, None)
    return text, raw if same else None


def _decode_and_read_sax(raw):
    text, utf8 = text_of(raw)
    return read_sax(text, lambda: None, utf8)


def _tree_document_page(raw):
    """Document(raw).page, the reading stage, with the tree walk for every page."""
    sax, reader._SAX = reader._SAX, None
    try:
        return document.Document(raw).page
    finally:
        reader._SAX = sax


def check(limit):
    same = 0
    pages = pool()[:limit]
    for index, page in enumerate(pages):
        with gzip.open(page.path) as handle:
            text, utf8 = text_of(handle.read())
        a = reader._read_tree(text, lambda: None, utf8)
        b = read_sax(text, lambda: None, utf8)
        diff = differences(a, b)
        if diff:
            print(f"page {index}: {diff} (kernel {len(a)} elements, SAX {len(b)})")
        else:
            same += 1
    print(f"{same} of {len(pages)} pages: the same PageEvents")


def time_them(limit, repeats):
    clock = time.thread_time_ns
    pages = pool()
    ways = {
        "ref": lambda raw, text, utf8: etree.fromstring(raw, etree.HTMLParser()),
        "kernel reading": lambda raw, text, utf8: _tree_document_page(raw),
        "kernel read": lambda raw, text, utf8: reader._read_tree(text, lambda: None, utf8),
        "sax read": lambda raw, text, utf8: read_sax(text, lambda: None, utf8),
        "decode+sax read": lambda raw, text, utf8: _decode_and_read_sax(raw),
        "sax reading": lambda raw, text, utf8: document.Document(raw).page,
    }
    times = {name: [] for name in ways}
    gc.collect()
    for step, index in enumerate([*range(5), *range(limit)]):
        with gzip.open(pages[index].path) as handle:
            raw = handle.read()
        text, utf8 = text_of(raw)
        best = dict.fromkeys(ways, 1 << 62)
        for repeat in range(repeats):
            names = list(ways)
            for name in names if (step + repeat) % 2 == 0 else names[::-1]:
                start = clock()
                ways[name](raw, text, utf8)
                best[name] = min(best[name], clock() - start)
        if step >= 5:
            for name in ways:
                times[name].append(best[name])
    ref = times["ref"]
    print(f"{limit} pool pages, best of {repeats}, thread CPU time; median x ref (sum x ref) ms")
    for name, spent in times.items():
        median = statistics.median(a / b for a, b in zip(spent, ref, strict=True))
        print(
            f"{name:18}{median:8.3f} ({sum(spent) / sum(ref):.3f}) {sum(spent) / limit / 1e6:7.3f}"
        )


if __name__ == "__main__":
    command, *numbers = sys.argv[1:]
    if command == "time":
        time_them(*map(int, numbers or [200, 3]))
    else:
        check(*map(int, numbers or [1 << 30]))
