"""Extraction in the reactor thread and in worker processes: resource limits, error kinds,
results equal to the in-thread ones and in order, a crashed worker, no blocking, shutdown."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
from badinput import article_page, cases, large_page
from crawl_runner import child_pids

from scrapy_tagratio import ALGORITHMS, DEFAULT_ALGORITHM, extract
from scrapy_tagratio.algorithms.base import Algorithm, Labelling
from scrapy_tagratio.document import Document
from scrapy_tagratio.overview import OverviewDetector
from scrapy_tagratio.pool import ExtractionOptions, ExtractionPool, Outcome, run_extraction

ARTICLE = article_page().encode()
PNG = cases()["png"].data


def options(**kw: object) -> ExtractionOptions:
    base: dict[str, object] = {
        "algorithm": ALGORITHMS[DEFAULT_ALGORITHM](),
        "detector": OverviewDetector(),
    }
    return ExtractionOptions(**{**base, **kw})  # type: ignore[arg-type]


@dataclass(frozen=True)
class FailingAlgorithm(Algorithm):
    """An algorithm with a bug (stands for any unexpected exception)."""

    name: ClassVar[str] = "failing"
    summary: ClassVar[str] = "raises"

    def run(self, document: Document) -> Labelling:
        raise RuntimeError("bug in an algorithm")


@dataclass(frozen=True)
class ExitingAlgorithm(Algorithm):
    """Kills the process that runs it, as a segfault in a C library would."""

    name: ClassVar[str] = "exiting"
    summary: ClassVar[str] = "exits"

    def run(self, document: Document) -> Labelling:
        os._exit(3)


def test_success_is_timed_and_drops_blocks_unless_asked() -> None:
    outcome = run_extraction(ARTICLE, url="http://x/a", content_type=None, options=options())
    assert outcome.error_kind is None and outcome.extraction is not None
    assert outcome.extraction.text == extract(ARTICLE).text
    assert outcome.extraction.url == "http://x/a"
    assert isinstance(outcome.elapsed_us, int) and outcome.elapsed_us > 0
    assert outcome.extraction.block_scores is None
    kept = run_extraction(ARTICLE, url=None, content_type=None, options=options(keep_blocks=True))
    assert kept.extraction is not None and len(kept.extraction.blocks) > 0


@pytest.mark.parametrize(
    ("body", "opts", "kind"),
    [
        (ARTICLE, {"max_bytes": 1000}, "too_large"),
        (ARTICLE, {"time_budget": 1e-6}, "time_budget"),
        (PNG, {}, "not_html"),
        (cases()["pdf"].data, {}, "not_html"),
        (ARTICLE, {"algorithm": FailingAlgorithm()}, "RuntimeError"),
    ],
)
def test_failures_become_outcomes_with_a_kind(
    body: bytes, opts: dict[str, object], kind: str
) -> None:
    outcome = run_extraction(body, url=None, content_type="text/html", options=options(**opts))
    assert outcome.extraction is None
    assert outcome.error_kind == kind
    assert outcome.error
    assert outcome.error_record() == {"kind": kind, "message": outcome.error}
    if kind == "RuntimeError":
        assert outcome.details is not None and "bug in an algorithm" in outcome.details


def test_too_large_is_refused_before_any_work() -> None:
    outcome = run_extraction(
        large_page(3_000_000), url=None, content_type=None, options=options(max_bytes=1_000_000)
    )
    assert outcome.error_kind == "too_large" and outcome.elapsed_us == 0
    assert "above TAGRATIO_MAX_BYTES=1000000" in str(outcome.error)


@pytest.fixture(scope="module")
def pool() -> Iterator[ExtractionPool]:
    pool = ExtractionPool(2)
    pool.start()
    yield pool
    pool.close()


def test_workers_give_the_in_thread_results_in_order(pool: ExtractionPool) -> None:
    pages = [article_page(title=f"Story {i}").encode() for i in range(6)] + [PNG]

    async def main() -> list[Outcome]:
        return await asyncio.gather(
            *(pool.run(p, url=f"http://x/{i}", content_type=None, options=options())
              for i, p in enumerate(pages))
        )  # fmt: skip

    outcomes = asyncio.run(main())
    inline = [
        run_extraction(p, url=f"http://x/{i}", content_type=None, options=options())
        for i, p in enumerate(pages)
    ]
    assert [o.extraction for o in outcomes] == [o.extraction for o in inline]
    assert [o.extraction.title for o in outcomes[:6] if o.extraction] == [
        f"Story {i}" for i in range(6)
    ]
    assert outcomes[-1].error_kind == "not_html"  # errors come back as outcomes


def test_awaiting_a_worker_does_not_block_the_event_loop(pool: ExtractionPool) -> None:
    async def main() -> tuple[int, Outcome]:
        ticks = 0
        running = True

        async def ticker() -> None:
            nonlocal ticks
            while running:
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        # Large enough to take well over 50 ms in a warm worker (a 1.5 MB page took 33-57
        # ms once the extraction got faster; 3 MB takes about 70 ms)
        outcome = await pool.run(
            large_page(3_000_000), url=None, content_type=None, options=options()
        )
        running = False
        await task
        return ticks, outcome

    ticks, outcome = asyncio.run(main())
    assert outcome.extraction is not None
    assert outcome.elapsed_us > 50_000
    assert ticks >= 10  # the loop ran while the worker extracted


@dataclass(frozen=True)
class HangingAlgorithm(Algorithm):
    """Blocks in C code (``time.sleep``) where the soft time budget cannot stop it."""

    name: ClassVar[str] = "hanging"
    summary: ClassVar[str] = "hangs"

    def run(self, document: Document) -> Labelling:
        time.sleep(600)
        raise AssertionError("unreachable")


def run_all(pool: ExtractionPool, opts: list[ExtractionOptions]) -> list[Outcome]:
    async def main() -> list[Outcome]:
        return await asyncio.gather(
            *(pool.run(ARTICLE, url=f"http://x/{i}", content_type=None, options=o)
              for i, o in enumerate(opts))
        )  # fmt: skip

    return asyncio.run(main())


def test_a_crashed_worker_fails_only_its_own_page() -> None:
    # Seven pages in flight on two workers, the fourth kills its worker: only it fails.
    pool = ExtractionPool(2)
    opts = [options() for _ in range(7)]
    opts[3] = options(algorithm=ExitingAlgorithm())
    try:
        outcomes = run_all(pool, opts)
        after = run_all(pool, [options()])[0]
    finally:
        pool.close()
    assert [o.error_kind for o in outcomes] == [None] * 3 + ["worker_crashed"] + [None] * 3
    assert "exit code 3" in str(outcomes[3].error)
    expected = extract(ARTICLE).text
    assert all(o.extraction.text == expected for o in outcomes if o.extraction)
    assert after.extraction is not None and after.extraction.text == expected


def test_a_page_past_the_hard_timeout_is_killed_and_the_pool_goes_on() -> None:
    pool = ExtractionPool(2, timeout=3.0)
    opts = [options(), options(algorithm=HangingAlgorithm(), time_budget=0.1), options()]
    try:
        run_all(pool, [options(), options()])  # both workers started
        start = time.monotonic()
        outcomes = run_all(pool, opts)
        after = run_all(pool, [options()])[0]
    finally:
        pool.close()
    assert time.monotonic() - start < 30
    assert [o.error_kind for o in outcomes] == [None, "worker_timeout", None]
    assert "TAGRATIO_WORKER_TIMEOUT=3 s" in str(outcomes[1].error)
    assert after.extraction is not None


def test_a_worker_timeout_of_weeks_or_years_extracts_as_any_other() -> None:
    # The dispatcher's wait is capped: poll() takes at most 2**31 - 1 ms (24.8 days), and a
    # longer deadline failed every page of the crawl with pool_failed (OverflowError).
    for timeout in (30 * 86400.0, 1e300):
        pool = ExtractionPool(1, timeout=timeout)
        try:
            outcomes = run_all(pool, [options(), options()])
        finally:
            pool.close()
        assert [o.error_kind for o in outcomes] == [None, None], outcomes[0].error


def test_workers_are_replaced_after_max_tasks_per_child() -> None:
    before = child_pids()
    pool = ExtractionPool(1, max_tasks_per_child=2)
    pids = set()
    try:
        for _ in range(5):
            assert run_all(pool, [options()])[0].extraction is not None
            pids |= child_pids() - before
    finally:
        pool.close()
    assert len(pids) >= 3  # 5 pages, 2 per process
    assert not child_pids() - before


def test_aclose_does_not_block_the_event_loop() -> None:
    before = child_pids()
    pool = ExtractionPool(2, timeout=60)

    async def main() -> tuple[int, Outcome]:
        ticks = 0
        hung = asyncio.ensure_future(
            pool.run(ARTICLE, url=None, content_type=None,
                     options=options(algorithm=HangingAlgorithm(), time_budget=None))
        )  # fmt: skip
        await pool.run(ARTICLE, url=None, content_type=None, options=options())
        closing = asyncio.ensure_future(pool.aclose())
        while not closing.done():
            ticks += 1
            await asyncio.sleep(0.001)
        return ticks, await hung

    ticks, hung = asyncio.run(main())
    assert ticks >= 1  # the loop ran while the workers stopped
    assert hung.error_kind == "pool_closed"  # a page in flight at close fails, not hangs
    assert not child_pids() - before


def test_close_stops_the_worker_processes() -> None:
    before = child_pids()
    pool = ExtractionPool(2)
    pool.start()
    outcome = asyncio.run(pool.run(ARTICLE, url=None, content_type=None, options=options()))
    assert outcome.extraction is not None
    workers = child_pids() - before
    assert len(workers) == 2
    pool.close()
    assert not workers & child_pids()


def test_no_workers_runs_inline() -> None:
    before = child_pids()
    pool = ExtractionPool(0)
    pool.start()
    outcome = asyncio.run(pool.run(ARTICLE, url=None, content_type=None, options=options()))
    assert outcome.extraction is not None
    assert child_pids() == before
