"""Command line: ``python -m scrapy_tagratio extract FILE|URL|- [-f text|markdown|html|json]``
and ``... algorithms``.

Algorithm parameters are given as ``--param name=value`` (repeatable); values are read
as JSON where they parse (``3``, ``0.5``, ``true``) and as strings otherwise. Input that
is gzip-compressed (a ``.gz`` file, a gzip-encoded response) is decompressed first.
Every failure ends in one ``error:`` line on stderr and a non-zero exit status (1: the
page or plot failed, 2: bad input or usage); a closed output pipe (``... | head``) ends
quietly with status 141, as a process killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import http.client
import importlib.util
import io
import json
import os
import re
import sys
import urllib.request
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .algorithms import ALGORITHMS, DEFAULT_ALGORITHM, get_algorithm
from .api import extract
from .errors import ExtractionError

__all__ = [
    "MAX_DECOMPRESSED",
    "build_parser",
    "main",
]


def _parse_param(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name.strip(), value


#: How many bytes a gzip input may expand to (a guard against decompression bombs).
MAX_DECOMPRESSED = 100_000_000


def _read_input(source: str) -> tuple[bytes, str | None, str | None]:
    """Bytes, URL and Content-Type of a file path, an http(s) URL or ``-`` (stdin),
    gzip data decompressed (by its magic bytes, whatever the name or header says)."""
    url = content_type = None
    if source == "-":
        data = sys.stdin.buffer.read()
    elif source.lower().startswith(("http://", "https://")):
        request = urllib.request.Request(source, headers={"User-Agent": "scrapy-tagratio"})
        with urllib.request.urlopen(request, timeout=30) as response:
            # the address it was read from, after redirects (as a crawl's response.url)
            data, url = response.read(), response.geturl()
            content_type = response.headers.get("Content-Type")
        mime = (content_type or "").split(";")[0].strip().lower()
        if mime and not _is_html_type(mime):
            # A crawl extracts only what Scrapy reads as HTML (HtmlResponse): say so here too.
            raise OSError(
                f"{url} is served as {mime}, not HTML (a crawl skips it too); save it to a "
                "file to extract it anyway"
            )
    elif re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", source):
        raise OSError("only http:// and https:// URLs are read (or a file path, or -)")
    else:
        data = Path(source).read_bytes()
    return _gunzip(data), url, content_type


def _is_html_type(mime: str) -> bool:
    """Whether Scrapy reads a response of this media type (lower case, no parameters) as
    HTML (``HtmlResponse``)."""
    from scrapy.http import HtmlResponse
    from scrapy.responsetypes import responsetypes

    return issubclass(responsetypes.from_mimetype(mime), HtmlResponse)


def _gunzip(data: bytes) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            out = stream.read(MAX_DECOMPRESSED + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise OSError(f"bad gzip data: {exc}") from None
    if len(out) > MAX_DECOMPRESSED:
        raise OSError(f"gzip data expands beyond {MAX_DECOMPRESSED} bytes")
    return out


def _cmd_extract(args: argparse.Namespace) -> int:
    if args.blocks and args.format != "json":
        print(
            "error: --blocks adds the block scores to the json output: use -f json", file=sys.stderr
        )
        return 2
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print(
            "error: --plot needs matplotlib: pip install 'scrapy-tagratio[plot]'", file=sys.stderr
        )
        return 2
    try:
        data, url, content_type = _read_input(args.source)
    except (OSError, ValueError, http.client.HTTPException) as exc:
        # ValueError: a malformed URL ("http://[::1") or a path with a NUL byte;
        # HTTPException: a response cut short (IncompleteRead), not an OSError.
        print(f"error: cannot read {args.source}: {exc}", file=sys.stderr)
        return 2
    try:
        # The parameters configure the algorithm itself, so that a name extract() takes
        # as its own argument (url, time_budget, ...) is an unknown parameter, not that
        # argument given twice.
        algorithm = get_algorithm(args.algorithm or DEFAULT_ALGORITHM)
        result = extract(
            data,
            algorithm=algorithm.with_params(**dict(args.param)),
            url=args.url or url,
            content_type=content_type,
            with_markdown=args.format == "markdown",
            metadata=not args.no_metadata,
        )
    except ExtractionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.format == "json":
        print(json.dumps(result.to_dict(blocks=args.blocks), ensure_ascii=False, indent=2))
    elif args.format == "html":
        print(result.html if result.html is not None else "", end="\n")
    elif args.format == "markdown":
        print(result.markdown or "")
    else:
        print(result.text)
    if args.plot:
        from .plot import plot_scores

        try:
            plot_scores(result, args.plot)
        except (ExtractionError, OSError) as exc:
            print(f"error: cannot draw the plot to {args.plot}: {exc}", file=sys.stderr)
            return 1
    return 0


def _cmd_algorithms(_: argparse.Namespace) -> int:
    for name, cls in ALGORITHMS.items():
        default = " (default)" if name == DEFAULT_ALGORITHM else ""
        print(f"{name}{default}: {cls.summary}")
        for field in dataclasses.fields(cls):
            print(f"    {field.name} = {field.default!r}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scrapy_tagratio",
        description="Main-content extraction by text density and tag ratios.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("extract", help="extract the main content of one page")
    run.add_argument("source", help="a file path, an http(s) URL, or - for standard input")
    run.add_argument(
        "--algorithm",
        "-a",
        default=None,
        choices=sorted(ALGORITHMS),
        help=f"algorithm (default: {DEFAULT_ALGORITHM})",
    )
    run.add_argument(
        "--param",
        "-p",
        action="append",
        default=[],
        type=_parse_param,
        metavar="NAME=VALUE",
        help="an algorithm parameter, e.g. -p clustering=threshold (repeatable)",
    )
    run.add_argument(
        "--format",
        "-f",
        choices=("text", "markdown", "html", "json"),
        default="text",
        help="text: one paragraph per line; markdown: headings, lists, tables, emphasis; "
        "html: cleaned HTML; json: everything, metadata included",
    )
    run.add_argument(
        "--no-metadata",
        action="store_true",
        help="do not read the page's metadata (headline, authors, dates, language)",
    )
    run.add_argument("--blocks", action="store_true", help="include per-block scores in json")
    run.add_argument("--url", help="the page's URL (for overview detection)")
    run.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw the score histogram with content labels and threshold (needs matplotlib)",
    )
    run.set_defaults(handler=_cmd_extract)

    listing = commands.add_parser("algorithms", help="list algorithms and their parameters")
    listing.set_defaults(handler=_cmd_algorithms)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = args.handler
    try:
        status = int(handler(args))
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): no traceback, and no second error at exit
        # when Python flushes stdout again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return status


if __name__ == "__main__":
    sys.exit(main())
