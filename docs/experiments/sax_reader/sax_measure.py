"""speed12 (issue 18): the SAX prototype (``saxpass``) against lxml's parse and the kernel.

Build ``saxpass`` beside this file (``python setup.py build_ext --inplace``), then from the
repository's root, with ``TAGRATIO_BENCHMARKS`` set:

    PYTHONPATH=.:<this folder> python <this folder>/sax_measure.py time [pages] [repeats]
    PYTHONPATH=.:<this folder> python <this folder>/sax_measure.py check [pages]

``time``: per page of the protocol's pool (its first ``pages``, 200 by default, after five
warm-up pages), each way of reading below ``repeats`` times in alternating order, the best
of each by the thread's CPU time; printed as medians of per-page ratios (and ratios of
sums) to ``ref``, the README's reference (``etree.fromstring(page_bytes, HTMLParser())``,
its free included). ``check``: the SAX pass's elements (depth, tag, own text bytes) against
the kernel's libxml2 tree of the same bytes, on every page of the pool by default.
"""

import gc
import gzip
import statistics
import sys
import time
from collections.abc import Callable

import lxml.html
import saxpass
from lxml import etree

from benchmarks.protocol import pool
from scrapy_tagratio import document, reader
from scrapy_tagratio.decoding import _decode_utf8

PARSER = reader._KERNEL_OPTIONS
WARM_UP = 5


def prepared(raw: bytes) -> bytes:
    """The bytes the kernel hands libxml2 for the page ``raw`` (decoded, prepared)."""
    text, same = _decode_utf8(raw, None)
    utf8 = raw if same else None
    return b"".join(reader.parser_parts(text, utf8))


def walk_and_close(root) -> None:
    """The kernel's walk of a parsed tree into a recorder, and the recorder's close()."""
    recorder = reader._Recorder(lambda: None)
    reader._KERNEL.walk(
        root,
        recorder,
        reader._TAG_NAMES,
        reader._HINTS,
        reader.SIGNAL_ATTRIBUTES,
        reader.SIGNAL_ELEMENTS,
        reader._BATCH,
    )
    recorder.close()


def ways(raw: bytes, url: str | None, data: bytes) -> dict[str, Callable[[], object]]:
    """Each way of reading the page, as a call to time (``data``: :func:`prepared`)."""
    return {
        "ref": lambda: etree.fromstring(raw, etree.HTMLParser()),
        "lxml.html": lambda: lxml.html.document_fromstring(raw),
        "kernel parse": lambda: etree.fromstring(data, etree.HTMLParser(**PARSER)),
        "sax": lambda: saxpass.run(data),
        "sax full": lambda: saxpass.run(data, True),
        "sax full+decode": lambda: saxpass.run(prepared(raw), True),
        "parse+walk+close": lambda: walk_and_close(
            etree.fromstring(data, etree.HTMLParser(**PARSER))
        ),
        "decode+read_page": lambda: reader.read_page(*_text_and_utf8(raw)),
        "kernel reading": lambda: document.Document(raw, url=url).page,
    }


def _text_and_utf8(raw: bytes) -> tuple[str, Callable[[], None], None, bytes | None]:
    text, same = _decode_utf8(raw, None)
    return text, lambda: None, None, raw if same else None


def time_them(limit: int, repeats: int) -> None:
    clock = time.thread_time_ns
    pages = pool()
    times: dict[str, list[int]] = {}
    gc.collect()
    for step, index in enumerate([*range(WARM_UP), *range(limit)]):
        with gzip.open(pages[index].path) as handle:
            raw = handle.read()
        data = prepared(raw)
        calls = ways(raw, pages[index].url, data)
        root = etree.fromstring(data, etree.HTMLParser(**PARSER))  # for the walk alone
        best = dict.fromkeys([*calls, "walk+close"], 1 << 62)
        for repeat in range(repeats):
            names = list(best)
            for name in names if (step + repeat) % 2 == 0 else names[::-1]:
                start = clock()
                if name == "walk+close":
                    walk_and_close(root)
                else:
                    calls[name]()  # what it returns (a tree) is freed inside the clock
                best[name] = min(best[name], clock() - start)
        if step >= WARM_UP:
            for name, spent in best.items():
                times.setdefault(name, []).append(spent)
    ref = times["ref"]
    print(f"{limit} pool pages, best of {repeats} per page and way, thread CPU time")
    print(f"{'way':18}{'median x ref':>14}{'sum x ref':>11}{'ms/page':>9}")
    for name, spent in times.items():
        median = statistics.median(a / b for a, b in zip(spent, ref, strict=True))
        ms = sum(spent) / limit / 1e6
        print(f"{name:18}{median:14.3f}{sum(spent) / sum(ref):11.3f}{ms:9.3f}")


def tree_table(top) -> tuple[list[str], list[int], list[int]]:
    """Per element of ``top``'s subtree in document order: tag, depth, own text bytes."""
    tags: list[str] = []
    depths: list[int] = []
    texts: list[int] = []

    def visit(element, depth: int) -> None:
        i = len(tags)
        tags.append(element.tag)
        depths.append(depth)
        texts.append(0)
        own = len((element.text or "").encode("utf-8"))
        for child in element:
            if isinstance(child.tag, str):
                visit(child, depth + 1)
            own += len((child.tail or "").encode("utf-8"))
        texts[i] = own

    visit(top, 0)
    return tags, depths, texts


def check(limit: int) -> None:
    same = after_root = 0
    pages = pool()[:limit]
    for index, page in enumerate(pages):
        with gzip.open(page.path) as handle:
            data = prepared(handle.read())
        saxpass.run(data)
        codes, depths, texts = saxpass.table()
        root = etree.fromstring(data, etree.HTMLParser(**PARSER))
        tags: list[str] = []
        tree_depths: list[int] = []
        tree_texts: list[int] = []
        tops = [root, *(s for s in root.itersiblings() if isinstance(s.tag, str))]
        after_root += len(tops) > 1  # content after </html>: a second root, walked too
        for top in tops:
            t, d, x = tree_table(top)
            tags += t
            tree_depths += d
            tree_texts += x
        names: dict[int, str] = {}  # code -> tag: a function (implied tags have their own
        # name pointers, libxml2's constants, so one tag can have two codes)
        if (
            len(codes) == len(tags)
            and all(names.setdefault(c, t) == t for c, t in zip(codes, tags, strict=True))
            and depths == tree_depths
            and texts == tree_texts
        ):
            same += 1
        else:
            print(
                f"page {index}: SAX {len(codes)} elements, {sum(texts)} text bytes; "
                f"tree {len(tags)}, {sum(tree_texts)}"
            )
    print(
        f"{same} of {len(pages)} pages the same (tags, depths, own text bytes); "
        f"{after_root} with elements after the root's end"
    )


if __name__ == "__main__":
    assert saxpass.bind(etree.__file__.encode()), "libxml2's functions not found in lxml"
    assert reader._KERNEL is not None, reader.kernel_status()
    command, *numbers = sys.argv[1:]
    if command == "time":
        time_them(*map(int, numbers or [200, 3]))
    else:
        check(*map(int, numbers or [1 << 30]))
