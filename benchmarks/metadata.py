"""Article metadata against gold, with trafilatura's ``extract_metadata`` in the same run
(issue 17).

    python -m benchmarks.metadata                      # fundus and readability
    python -m benchmarks.metadata --dataset fundus --limit 20 --show-misses

Per set and extractor, each over the pages whose gold has the value (``(n)``): title match
(case and punctuation folded), same-day publication date (a date-time with an offset is
compared in the gold's offset), author-set F1 (names folded), language accuracy (primary
subtag; fundus-dev gives no language) and the share of pages with a language (trafilatura's
``extract_metadata`` gives none: shown as ``-``). fundus and readability are the sets the
metadata rules were developed on; goose-dev (7 titles) was not looked at before its run.
Checks: dates after the crawl time and names starting with "By". Speed: the default
extraction with and without metadata on the same pages, interleaved, as a ratio.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from scrapy_tagratio import extract
from scrapy_tagratio.dates import parse_date

from . import _data

__all__ = ["Found", "Score", "fold", "main", "same_day"]

_FOLD = re.compile(r"[\W_]+")


def fold(text: str | None) -> str:
    """Case and punctuation folded, white space collapsed."""
    return _FOLD.sub(" ", (text or "").casefold()).strip()


@dataclass(frozen=True)
class Found:
    """What an extractor found on one page."""

    title: str | None
    authors: tuple[str, ...]
    published: str | None
    language: str | None


def same_day(gold: str, found: str | None) -> bool:
    """The found date falls on the gold's day (both aware: compared in the gold's offset;
    else by their calendar dates as written)."""
    expected, value = parse_date(gold), parse_date(found)
    if expected is None or value is None:
        return False
    if (
        isinstance(expected, datetime)
        and isinstance(value, datetime)
        and expected.tzinfo is not None
        and value.tzinfo is not None
    ):
        value = value.astimezone(expected.tzinfo)
    day = lambda v: v.date() if isinstance(v, datetime) else v  # noqa: E731
    return bool(day(expected) == day(value))


def _f1(gold: Iterable[str], found: Iterable[str]) -> float:
    expected, got = {fold(n) for n in gold} - {""}, {fold(n) for n in found} - {""}
    hits = len(expected & got)
    if not hits:
        return 0.0
    precision, recall = hits / len(got), hits / len(expected)
    return 2 * precision * recall / (precision + recall)


@dataclass
class Score:
    """One extractor's figures on one set."""

    titles: list[bool] = field(default_factory=list)
    dates: list[bool] = field(default_factory=list)
    authors: list[float] = field(default_factory=list)
    languages: list[bool] = field(default_factory=list)
    with_language: list[bool] = field(default_factory=list)
    future_dates: int = 0
    by_names: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, page: _data.Page, found: Found, now: datetime, show: bool) -> None:
        gold = page.gold
        if gold.get("title"):
            self.titles.append(fold(gold["title"]) == fold(found.title))
            if not self.titles[-1] and show:
                self.misses.append(f"{page.id} title: {found.title!r} != {gold['title']!r}")
        if gold.get("published"):
            self.dates.append(same_day(gold["published"], found.published))
            if not self.dates[-1] and show:
                self.misses.append(f"{page.id} date: {found.published!r} != {gold['published']!r}")
        if gold.get("authors"):
            self.authors.append(_f1(gold["authors"], found.authors))
            if self.authors[-1] < 1 and show:
                self.misses.append(f"{page.id} authors: {list(found.authors)} != {gold['authors']}")
        if gold.get("language"):
            primary = (found.language or "").split("-")[0].lower()
            self.languages.append(primary == gold["language"].split("-")[0].lower())
        self.with_language.append(bool(found.language))
        value = parse_date(found.published)
        if (isinstance(value, datetime) and value.tzinfo is not None and value > now) or (
            value is not None and not isinstance(value, datetime) and value > now.date()
        ):
            self.future_dates += 1
        self.by_names += sum(bool(re.match(r"(?i)by\b", n)) for n in found.authors)

    def row(self) -> str:
        def mean(values: list[Any]) -> str:
            return f"{sum(values) / len(values):.3f}" if values else "  -  "

        gives_language = any(self.with_language)  # trafilatura's metadata has none
        return (
            f"{mean(self.titles):>6} ({len(self.titles):>3}) "
            f"{mean(self.dates):>6} ({len(self.dates):>3}) "
            f"{mean(self.authors):>6} ({len(self.authors):>3}) "
            f"{mean(self.languages if gives_language else []):>6} "
            f"{mean(self.with_language if gives_language else []):>6} "
            f"{self.future_dates:>6} {self.by_names:>4}"
        )


def ours(page: _data.Page, now: datetime) -> Found:
    metadata = extract(page.html, url=page.url, now=now).metadata
    assert metadata is not None
    return Found(metadata.headline, metadata.authors, metadata.published, metadata.language)


def trafilatura_metadata(page: _data.Page, now: datetime) -> Found:
    from trafilatura import extract_metadata

    document = extract_metadata(page.html, default_url=page.url)
    if document is None:
        return Found(None, (), None, None)
    authors = tuple(a.strip() for a in (document.author or "").split(";") if a.strip())
    return Found(document.title, authors, document.date, getattr(document, "language", None))


EXTRACTORS: dict[str, Callable[[_data.Page, datetime], Found]] = {
    "scrapy-tagratio": ours,
    "trafilatura": trafilatura_metadata,
}


def _speed(pages: list[_data.Page], rounds: int) -> tuple[float, float]:
    """Seconds of the default extraction without and with metadata, interleaved."""
    spent = [0.0, 0.0]
    for _ in range(rounds):
        for page in pages:
            for index, metadata in ((0, False), (1, True)):
                start = time.perf_counter()
                extract(page.html, url=page.url, metadata=metadata, with_html=False)
                spent[index] += time.perf_counter() - start
    return spent[0], spent[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset",
        action="append",
        choices=("fundus", "readability", "goose"),
        help="a set (repeatable; default: fundus and readability; goose: held out)",
    )
    parser.add_argument("--limit", type=int, default=None, help="first N pages of each set")
    parser.add_argument("--show-misses", action="store_true", help="list our misses")
    parser.add_argument("--speed-rounds", type=int, default=2, help="0: no speed figure")
    args = parser.parse_args(argv)
    now = datetime.now(timezone.utc)
    print(f"crawl time (now): {now.isoformat(timespec='seconds')}")
    header = (
        f"{'set':<12} {'extractor':<16} {'title':>6} {'(n)':>5} {'date':>6} {'(n)':>5} "
        f"{'authF1':>6} {'(n)':>5} {'lang':>6} {'w/lang':>6} {'future':>6} {'By':>4}"
    )
    all_pages: list[_data.Page] = []
    for dataset in args.dataset or ["fundus", "readability"]:
        pages = list(_data.pages(dataset, args.limit))
        all_pages.extend(pages)
        scores = {name: Score() for name in EXTRACTORS}
        for page in pages:
            for name, run in EXTRACTORS.items():
                scores[name].add(
                    page, run(page, now), now, args.show_misses and name != "trafilatura"
                )
        print(header)
        for name, score in scores.items():
            print(f"{dataset:<12} {name:<16} {score.row()}")
        for miss in scores["scrapy-tagratio"].misses:
            print("   ", miss)
    if args.speed_rounds:
        without, with_ = _speed(all_pages, args.speed_rounds)
        print(
            f"speed: default extraction {without:.2f} s without metadata, {with_:.2f} s with "
            f"({with_ / without:.3f}x) on {len(all_pages)} pages x {args.speed_rounds}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
