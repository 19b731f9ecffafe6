"""Where extractions run: in the reactor thread (``TAGRATIO_WORKERS = 0``) or in a pool of
worker processes (``TAGRATIO_WORKERS = N``), awaited without blocking the reactor.

:func:`run_extraction` is the one function both paths call: it applies the resource limits
(``max_bytes`` before any work, ``time_budget`` inside :func:`~scrapy_tagratio.extract`),
times the work, and turns every failure into an :class:`Outcome` with an error kind, so a
bad page never raises into the crawl. Workers get the response body bytes, URL and
``Content-Type`` (all picklable) and send back the :class:`Outcome`.

Why bytes and not ``response.selector.root``: the page is read as parser events, without
a tree (:mod:`.reader`), so a tree would only be serialised again; in the downloader
middleware the selector is not built yet anyway (building it costs a parse). Bytes give the
same result in both paths and keep the binary check and encoding detection of ``extract``.

This module does not import Scrapy at import time: worker processes only need the core.
"""

from __future__ import annotations

import dataclasses
import os
import time
import traceback
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from .algorithms.base import Algorithm
from .api import extract
from .errors import ExtractionError
from .overview import OverviewDetector
from .result import Extraction

__all__ = ["SKIP_KINDS", "ExtractionOptions", "ExtractionPool", "Outcome", "run_extraction"]

#: Error kinds that are resource limits (the page is skipped), not failures.
SKIP_KINDS = frozenset({"too_large", "time_budget"})


@dataclass(frozen=True)
class ExtractionOptions:
    """Everything an extraction needs besides the page (picklable, sent to workers)."""

    algorithm: Algorithm
    detector: OverviewDetector
    max_bytes: int | None = None
    time_budget: float | None = None
    #: Keep per-block scores in the Extraction (arrays over every block: dropped unless
    #: asked for, so they are not pickled back from workers or kept in request meta).
    keep_blocks: bool = False
    #: Build the cleaned HTML (only when TAGRATIO_ATTACH_HTML or the text format asks
    #: for it).
    keep_html: bool = False
    #: Build the Markdown (TAGRATIO_TEXT_FORMAT = "markdown").
    keep_markdown: bool = False
    #: Read the page's metadata (TAGRATIO_METADATA).
    metadata: bool = True


@dataclass(frozen=True)
class Outcome:
    """The result of one extraction: an Extraction, or an error kind and message.

    Kinds: ``too_large`` and ``time_budget`` (resource limits, :data:`SKIP_KINDS`),
    ``not_html`` (binary data served as HTML), ``extraction`` (any other
    :class:`ExtractionError`), ``worker_crashed``, or the exception class name of a bug
    (``details`` then holds its traceback).
    """

    extraction: Extraction | None
    elapsed_us: int = 0
    error_kind: str | None = None
    error: str | None = None
    details: str | None = None

    def error_record(self) -> dict[str, str]:
        """The JSON-ready error an item carries when the extraction failed."""
        return {"kind": self.error_kind or "extraction", "message": self.error or ""}


def run_extraction(
    body: bytes | str, *, url: str | None, content_type: str | None, options: ExtractionOptions
) -> Outcome:
    """Extract one page under the resource limits of ``options``; never raises."""
    size = len(body)
    if options.max_bytes is not None and size > options.max_bytes:
        return Outcome(
            None,
            error_kind="too_large",
            error=f"page has {size} bytes, above TAGRATIO_MAX_BYTES={options.max_bytes}",
        )
    start = time.perf_counter()
    try:
        extraction = extract(
            body,
            algorithm=options.algorithm,
            url=url,
            content_type=content_type,
            time_budget=options.time_budget,
            overview=options.detector,
            with_html=options.keep_html,
            with_markdown=options.keep_markdown,
            metadata=options.metadata,
        )
    except ExtractionError as exc:
        elapsed = time.perf_counter() - start
        kind = exc.kind
        return Outcome(None, _microseconds(elapsed), kind, str(exc))
    except Exception as exc:  # a bug in an algorithm: the crawl and the item go on
        return Outcome(
            None,
            _microseconds(time.perf_counter() - start),
            type(exc).__name__,
            f"{type(exc).__name__}: {exc}",
            traceback.format_exc(),
        )
    elapsed_us = _microseconds(time.perf_counter() - start)
    if not options.keep_blocks:
        extraction = dataclasses.replace(extraction, block_scores=None)
    return Outcome(extraction, elapsed_us)


def _microseconds(seconds: float) -> int:
    return round(seconds * 1e6)


def _worker_ready() -> int:
    """Warm-up job: importing this module in the worker loads the core (numpy, lxml)."""
    return os.getpid()


class ExtractionPool:
    """Runs :func:`run_extraction` inline (``workers == 0``) or in ``workers`` processes.

    Processes are started with ``spawn`` (a forked Twisted process would inherit its
    threads and sockets); a crashed worker fails only the pages it held (kind
    ``worker_crashed``) and the pool is rebuilt on the next page. Scripts that start a
    crawl with workers need the usual ``if __name__ == "__main__":`` guard.
    """

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start the worker processes now (they load the core while the crawl starts)."""
        if self.workers:
            executor = self._ensure_executor()
            for _ in range(self.workers):
                executor.submit(_worker_ready)

    async def run(
        self,
        body: bytes | str,
        *,
        url: str | None,
        content_type: str | None,
        options: ExtractionOptions,
    ) -> Outcome:
        """The :class:`Outcome` of one page; awaits a worker without blocking the reactor."""
        if not self.workers:
            return run_extraction(body, url=url, content_type=content_type, options=options)
        executor = self._ensure_executor()
        try:
            future = executor.submit(
                run_extraction, body, url=url, content_type=content_type, options=options
            )
            outcome: Outcome = await _wait(future)
        except BrokenProcessPool as exc:
            if self._executor is executor:
                self._executor = None
                executor.shutdown(wait=False, cancel_futures=True)
            return Outcome(None, error_kind="worker_crashed", error=f"worker process died: {exc}")
        return outcome

    def close(self) -> None:
        """Stop the worker processes (called when the spider closes)."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def _ensure_executor(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.workers, mp_context=get_context("spawn"))
        return self._executor


async def _wait(future: Future[Any]) -> Any:
    """Await a ``concurrent.futures`` future from Scrapy code, on the asyncio event loop
    when there is one, else through a Twisted Deferred fired in the reactor thread."""
    if _asyncio_in_use():
        import asyncio

        return await asyncio.wrap_future(future)
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred

    deferred: Deferred[Any] = Deferred()

    def fire(done: Future[Any]) -> None:
        try:
            deferred.callback(done.result())
        except BaseException as exc:  # the worker's exception, re-raised at the await
            deferred.errback(exc)

    future.add_done_callback(lambda done: reactor.callFromThread(fire, done))
    return await deferred


def _asyncio_in_use() -> bool:
    try:
        from scrapy.utils.asyncio import is_asyncio_available
    except ImportError:  # Scrapy 2.13: the asyncio reactor is the only asyncio setup
        from scrapy.utils.reactor import is_asyncio_reactor_installed as is_asyncio_available
    return is_asyncio_available()
