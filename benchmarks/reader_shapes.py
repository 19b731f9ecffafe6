"""Where lexbor's tree differs from libxml2's, on every page of the pool (issue 18).

    python -m benchmarks.reader_shapes [--limit N] [--raw]

Per page, the node table (the body's kept elements, :class:`~scrapy_tagratio.document.Document`)
read by libxml2's parser target and by the lexbor reader, compared: the visible text
(white space collapsed), the number of elements, and per tag the elements one has more of
(``tbody``, ``p``, ``a``, ...). ``--raw`` turns off the lexbor reader's normalisation
(the text after ``</html>`` cut off, implied ``tbody`` left out) to count what it changes.
Also counted: the pages whose source has text or tags after ``</html>``, and the pages
that go to the linear reader for their nesting depth.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence

from scrapy_tagratio import lexbor_reader
from scrapy_tagratio.decoding import decode_html
from scrapy_tagratio.document import Document

from .protocol import pool

__all__ = ["main"]


def _table(text: str, reader: str) -> tuple[str, Counter[str], int]:
    """Visible text (white space collapsed), tag counts and size of the node table."""
    from scrapy_tagratio import reader as readers

    default, readers.DEFAULT_READER = readers.DEFAULT_READER, reader
    try:
        document = Document(text)
        nodes = document.nodes
        return " ".join(document.full_text.split()), Counter(nodes.tag), len(nodes)
    finally:
        readers.DEFAULT_READER = default


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.reader_shapes", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--limit", type=int, help="every k-th page of the pool, about N")
    parser.add_argument("--raw", action="store_true", help="without the normalisation")
    args = parser.parse_args(argv)
    scan = lexbor_reader.scan_markup
    if args.raw:  # a tbody in every page's source, no </html> in any

        def raw_scan(data: bytes) -> tuple[bool, bool, int]:
            return scan(data)[0], True, -1

        lexbor_reader.scan_markup = raw_scan
    pages = pool()
    if args.limit:
        pages = pages[:: max(1, len(pages) // args.limit)]
    same_text = same_size = after_html = deep = 0
    more: dict[str, Counter[str]] = {"lexbor": Counter(), "libxml2": Counter()}
    for index, page in enumerate(pages):
        text = decode_html(page.html())
        target = _table(text, "target")
        lexbor = _table(text, "lexbor")
        same_text += target[0] == lexbor[0]
        same_size += target[2] == lexbor[2]
        data = text.encode("utf-8", "replace")
        too_deep, _, html_end = scan(data)
        after_html += html_end >= 0 and bool(data[html_end:].strip())
        deep += too_deep
        for tag in set(target[1]) | set(lexbor[1]):
            if lexbor[1][tag] > target[1][tag]:
                more["lexbor"][tag] += 1
            elif lexbor[1][tag] < target[1][tag]:
                more["libxml2"][tag] += 1
        if (index + 1) % 200 == 0:
            print(f"  {index + 1}/{len(pages)} pages", file=sys.stderr)
    n = len(pages)
    print(f"{n} pages of the pool{' (raw lexbor trees)' if args.raw else ''}")
    print(f"visible text identical: {same_text}/{n}")
    print(f"node table the same size: {same_size}/{n}")
    print(f"text or tags after </html>: {after_html}/{n}; read linearly (too deep): {deep}/{n}")
    for side, counts in more.items():
        common = ", ".join(f"{tag} {count}" for tag, count in counts.most_common(12))
        print(f"pages where {side} has more of a tag: {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
