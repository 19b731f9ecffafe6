"""Loading of the benchmark sets in ``../shared/benchmarks`` (never copied into the repo).

The directory is found from the ``TAGRATIO_BENCHMARKS`` environment variable, else beside the
repository (``<repo>/../shared/benchmarks``). Each set has ``pages/<id>.html.gz`` (the page's
original bytes, gzipped) and one gold file: ``gold.json`` (trafilatura-eval: ``with``/``without``
snippets; fundus, cleaneval, dragnet: full ``body`` text).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "DATASETS",
    "Page",
    "benchmarks_dir",
    "dataset_dir",
    "load_gold",
    "load_page",
    "page_ids",
    "pages",
    "write_atomically",
]

#: Command-line names of the sets and their directories.
DATASETS: dict[str, str] = {
    "trafilatura": "trafilatura-eval",
    "fundus": "fundus-dev",
    "cleaneval": "cleaneval-dev",
    "dragnet": "dragnet-dev",
    "readability": "readability-dev",
    "goose": "goose-dev",
}


@dataclass(frozen=True)
class Page:
    """One benchmark page: its id, original bytes, URL (may be None) and gold record."""

    id: str
    html: bytes
    url: str | None
    gold: dict[str, Any]


def benchmarks_dir() -> Path | None:
    """The shared benchmarks directory, or None when it is not on this machine."""
    configured = os.environ.get("TAGRATIO_BENCHMARKS")
    candidates = [Path(configured)] if configured else []
    candidates.append(Path(__file__).resolve().parents[1] / ".." / "shared" / "benchmarks")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    return None


def dataset_dir(dataset: str) -> Path:
    """Directory of a set given by its command-line name or directory name.

    Raises FileNotFoundError with the places looked at when the data is absent.
    """
    root = benchmarks_dir()
    if root is None:
        raise FileNotFoundError(
            "benchmark data not found: set TAGRATIO_BENCHMARKS or put it at ../shared/benchmarks"
        )
    path = root / DATASETS.get(dataset, dataset)
    if not (path / "gold.json").is_file():
        raise FileNotFoundError(f"no benchmark set at {path} (expected gold.json and pages/)")
    return path


def _utf16_repaired(text: str) -> str:
    """``text`` as it was before its UTF-16LE bytes were decoded as UTF-8.

    Four bodies of dragnet-dev's gold (pages 27, 39, 42, 158) were stored that way: a
    byte-order mark read as two U+FFFD, then every UTF-16 unit as two characters, its low
    byte and its high byte (``"F\\x00o\\x00"``), a byte of 0x80 or more read as U+FFFD.
    Read back pair by pair, a unit whose bytes were lost stays U+FFFD. Text without NUL
    characters is returned unchanged.
    """
    if "\x00" not in text:
        return text
    text = text.removeprefix("\ufffd\ufffd")
    return "".join(
        chr(ord(high) << 8 | ord(low)) if low < "\x80" and high < "\x80" else "\ufffd"
        for low, high in zip(text[::2], text[1::2], strict=False)
    )


@cache
def load_gold(dataset: str) -> dict[str, dict[str, Any]]:
    """The set's gold file: ``{page id: record}`` (bodies stored as UTF-16 read back,
    :func:`_utf16_repaired`)."""
    with open(dataset_dir(dataset) / "gold.json", encoding="utf-8") as handle:
        gold: dict[str, dict[str, Any]] = json.load(handle)
    for record in gold.values():
        if isinstance(record.get("body"), str):
            record["body"] = _utf16_repaired(record["body"])
    return gold


def page_ids(dataset: str, limit: int | None = None) -> list[str]:
    """Ids of the set's pages in sorted order (the order every script uses), at most ``limit``."""
    ids = sorted(load_gold(dataset))
    return ids if limit is None else ids[:limit]


def load_page(dataset: str, page_id: str) -> Page:
    """One page: decompressed bytes and gold record."""
    record = load_gold(dataset)[page_id]
    with gzip.open(dataset_dir(dataset) / "pages" / f"{page_id}.html.gz") as handle:
        html = handle.read()
    return Page(id=page_id, html=html, url=record.get("url") or None, gold=record)


def pages(dataset: str, limit: int | None = None) -> Iterator[Page]:
    """The set's pages in sorted-id order, at most ``limit``."""
    for page_id in page_ids(dataset, limit):
        yield load_page(dataset, page_id)


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file of the same folder renamed over
    it: a cache file is then absent or whole, never half written, when two benchmark
    processes write it at once (the training script's stages run side by side on one
    cache) or a run is stopped midway."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    part = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(part, path)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
