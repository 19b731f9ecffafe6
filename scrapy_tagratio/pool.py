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

import asyncio
import collections
import contextlib
import dataclasses
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing import Pipe, get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from .algorithms.base import Algorithm
from .api import extract
from .errors import ExtractionError
from .overview import OverviewDetector
from .result import Extraction
from .site_memory import SiteMemory

__all__ = [
    "SKIP_KINDS",
    "ExtractionOptions",
    "ExtractionPool",
    "Outcome",
    "run_extraction",
    "warm_up",
]

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
    :class:`ExtractionError`), ``worker_crashed``, ``worker_timeout``, ``pool_closed``,
    ``pool_failed`` (the pool itself broke), or the exception class name of a bug
    (``details`` then holds its traceback).
    """

    extraction: Extraction | None
    elapsed_us: int = 0
    error_kind: str | None = None
    error: str | None = None
    details: str | None = None
    #: The page as the site memory recorded it (``SiteMemory.last_recorded``): what a
    #: worker sends back for the crawl's memory.
    site_record: tuple[str, Any, str | None] | None = None

    def error_record(self) -> dict[str, str]:
        """The JSON-ready error an item carries when the extraction failed."""
        return {"kind": self.error_kind or "extraction", "message": self.error or ""}


def run_extraction(
    body: bytes | str,
    *,
    url: str | None,
    content_type: str | None,
    options: ExtractionOptions,
    site_memory: SiteMemory | None = None,
    held: bool = False,
) -> Outcome:
    """Extract one page under the resource limits of ``options`` (with the crawl's
    ``site_memory``, or a worker's snapshot of it; ``held``: see :func:`extract`); never
    raises."""
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
            site_memory=site_memory,
            held=held,
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
    site_record = site_memory.last_recorded if site_memory is not None and not held else None
    return Outcome(extraction, elapsed_us, site_record=site_record)


def _microseconds(seconds: float) -> int:
    return round(seconds * 1e6)


#: A page that reads like an article, long enough for the language detector.
_WARM_UP_PAGE = (
    "<html><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1><p>"
    + "A paragraph that loads what the first page of a crawl would load. " * 4
    + "</p></article></body></html>"
)


def warm_up(options: ExtractionOptions | None = None) -> None:
    """Load what the first page would load lazily (the models, the metadata readers and
    the language detector, whose model takes seconds to load) by extracting a small page
    (with ``options``, else the defaults), so that the first page's time
    (``tagratio/extraction_time_max_us``, a worker's timeout) is a page's."""
    if options is None:
        with contextlib.suppress(Exception):
            extract(_WARM_UP_PAGE, url="https://warm-up.invalid/")
    else:
        run_extraction(
            _WARM_UP_PAGE, url="https://warm-up.invalid/", content_type=None, options=options
        )


class ExtractionPool:
    """Runs :func:`run_extraction` inline (``workers == 0``) or in ``workers`` processes.

    Each worker holds one page at a time, handed out by a dispatcher thread, so the pool
    knows which page each process holds: a worker that dies (a segfault in a C library,
    ``os._exit``) fails only its own page (kind ``worker_crashed``), one that runs past
    ``timeout`` seconds (a loop in C code that the soft ``time_budget`` cannot stop) is
    killed and its page fails with kind ``worker_timeout``; either is replaced by a new
    process and the other pages go on. A worker is replaced after ``max_tasks_per_child``
    pages, so memory it grew is returned in a long crawl. Workers are new interpreters,
    never forks (a forked Twisted process would inherit its threads and sockets); on POSIX
    they do not import the crawl script's main module (see :func:`_start_worker`).
    """

    def __init__(
        self,
        workers: int,
        *,
        timeout: float | None = None,
        max_tasks_per_child: int | None = None,
    ) -> None:
        self.workers = workers
        self.timeout = timeout
        self.max_tasks_per_child = max_tasks_per_child
        self._dispatcher: _Dispatcher | None = None

    def start(self, options: ExtractionOptions | None = None) -> None:
        """Start the worker processes now (they load the core while the crawl starts);
        without workers, load here what a first page with ``options`` would
        (:func:`warm_up`)."""
        if not self.workers:
            warm_up(options)
        elif self._dispatcher is None:
            self._dispatcher = _Dispatcher(self.workers, self.timeout, self.max_tasks_per_child)
            self._dispatcher.start()

    async def run(
        self,
        body: bytes | str,
        *,
        url: str | None,
        content_type: str | None,
        options: ExtractionOptions,
        site_memory: SiteMemory | None = None,
        held: bool = False,
    ) -> Outcome:
        """The :class:`Outcome` of one page; awaits a worker without blocking the reactor.

        With ``site_memory`` a worker gets a snapshot of the page's site and sends back
        the page as it recorded it, which goes into ``site_memory`` here (not for a
        ``held`` page, recorded when it first arrived)."""
        if not self.workers:
            return run_extraction(
                body,
                url=url,
                content_type=content_type,
                options=options,
                site_memory=site_memory,
                held=held,
            )
        self.start()
        assert self._dispatcher is not None
        snapshot = site_memory.snapshot(url) if site_memory is not None else None
        outcome: Outcome = await _wait(
            self._dispatcher.submit((body, url, content_type, options, snapshot, held))
        )
        if site_memory is not None and outcome.site_record is not None:
            site_memory.record(*outcome.site_record)
            extraction = outcome.extraction
            if extraction is not None and extraction.overview_verdict == "content":
                # As extract() records an article's headline in the crawl's memory.
                site_memory.record_headline(outcome.site_record[0], extraction.title)
        return outcome

    def close(self) -> None:
        """Stop the worker processes and wait for them (scripts and tests)."""
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            dispatcher.stop().result()

    async def aclose(self, **_signal_kwargs: Any) -> None:
        """Stop the worker processes without blocking the reactor (the ``spider_closed``
        handler: Scrapy awaits it, so no worker outlives the crawl)."""
        dispatcher, self._dispatcher = self._dispatcher, None
        if dispatcher is not None:
            await _wait(dispatcher.stop())


# ---------------------------------------------------------------------- worker processes
_Task = tuple[bytes | str, str | None, str | None, ExtractionOptions, SiteMemory | None, bool]


def _worker_main(conn: Connection) -> None:
    """A worker process: announce itself once the core is imported, then extract the
    pages it is sent until it gets ``None`` or its pipe closes (the crawl process ended
    or let it go: it exits quietly)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the crawl's to handle
    # So that TAGRATIO_WORKER_TIMEOUT measures pages, not the worker's start.
    warm_up()
    with contextlib.suppress(EOFError, OSError):
        conn.send(os.getpid())
        while (task := conn.recv()) is not None:
            body, url, content_type, options, site_memory, held = task
            conn.send(
                run_extraction(
                    body,
                    url=url,
                    content_type=content_type,
                    options=options,
                    site_memory=site_memory,
                    held=held,
                )
            )


@dataclass
class _Job:
    task: _Task
    future: Future[Outcome]
    started: float = 0.0


def _worker_entry(fd: int) -> None:
    """The entry point of a worker started by :func:`_start_worker` on POSIX."""
    _worker_main(Connection(fd))


class _Subprocess:
    """A worker interpreter started with :mod:`subprocess`, seen through the part of the
    :class:`multiprocessing.Process` interface the dispatcher uses."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._popen.kill()


def _start_worker() -> tuple[Connection, _Subprocess | BaseProcess]:
    """Start a worker process; return the crawl's end of its pipe and the process.

    On POSIX the worker is a fresh interpreter that imports this module only, and gets its
    end of a socket pair as a file descriptor. :mod:`multiprocessing`'s ``spawn`` would
    import the crawl script's ``__main__`` module again in every worker, so a script
    without the ``if __name__ == "__main__":`` guard (Scrapy's "run from a script" example
    has none) would start its whole crawl again in each worker, which never becomes ready.
    Windows has no descriptor passing: there ``spawn`` is used and the guard is needed.
    The worker finds the package where this process did (``sys.path`` as PYTHONPATH).
    """
    if os.name == "nt":
        parent, child = Pipe()
        process = _SPAWN.Process(target=_worker_main, args=(child,), daemon=True)
        process.start()
        child.close()
        return parent, process
    parent_socket, child_socket = socket.socketpair()
    with parent_socket, child_socket:
        fd = child_socket.fileno()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        code = f"from {__name__} import _worker_entry; _worker_entry({fd})"
        popen = subprocess.Popen(
            [sys.executable, "-c", code], pass_fds=(fd,), env=env, stdin=subprocess.DEVNULL
        )
        return Connection(parent_socket.detach()), _Subprocess(popen)


class _Worker:
    """One worker process, its end of the pipe and the page it holds."""

    def __init__(self) -> None:
        self.conn, self.process = _start_worker()
        self.started = time.monotonic()
        self.ready = False
        self.job: _Job | None = None
        self.done = 0

    def fail_job(self, kind: str, message: str) -> None:
        """Fail the page this worker holds, if any, and forget it, so that nothing
        (closing the pool) sets its result a second time."""
        job, self.job = self.job, None
        if job is not None:
            job.future.set_result(_failed(kind, message))

    def retire(self, *, kill: bool) -> None:
        """Ask the process to exit (or kill it); the dispatcher joins it at the end."""
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError):
                self.conn.send(None)
        self.conn.close()


class _Dispatcher(threading.Thread):
    """The thread that hands pages to idle workers and watches for results, deaths and
    timeouts in one ``multiprocessing.connection.wait`` call."""

    def __init__(self, size: int, timeout: float | None, max_tasks: int | None) -> None:
        super().__init__(name="tagratio-pool", daemon=True)
        self.size = size
        self.timeout = timeout
        self.max_tasks = max_tasks
        self._inbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._wake_r, self._wake_w = Pipe(duplex=False)
        self._stopped: Future[None] = Future()
        self._closing = False

    def submit(self, task: _Task) -> Future[Outcome]:
        future: Future[Outcome] = Future()
        if self._closing:
            future.set_result(_failed("pool_closed", "the extraction pool is closed"))
        else:
            self._inbox.put(_Job(task, future))
            self._wake_w.send(None)
        return future

    def stop(self) -> Future[None]:
        """Ask the thread to stop the workers and end; the future is done when it has."""
        if not self._closing:
            self._closing = True
            self._inbox.put(None)
            self._wake_w.send(None)
        return self._stopped

    def run(self) -> None:
        workers: list[_Worker] = []
        pending: collections.deque[_Job] = collections.deque()
        try:
            self._loop(workers, pending)
        except Exception as exc:  # the OS refused a process, or a bug: no page may wait
            self._closing = True
            why = f"the extraction pool failed: {type(exc).__name__}: {exc}"
            self._shutdown(workers, pending, kind="pool_failed", why=why)
            raise
        finally:
            self._stopped.set_result(None)

    def _loop(self, workers: list[_Worker], pending: collections.deque[_Job]) -> None:
        """Serve pages until :meth:`stop`. ``workers`` and ``pending`` belong to
        :meth:`run`, which fails their pages if this raises."""
        workers.extend(_Worker() for _ in range(self.size))
        retired: list[_Worker] = []
        stillborn = 0  # workers in a row that died or hung before they were ready
        while True:
            while not self._inbox.empty():
                job = self._inbox.get()
                if job is None:
                    self._shutdown(workers + retired, pending)
                    return
                pending.append(job)
            for worker in workers:
                if pending and worker.ready and worker.job is None:
                    self._assign(worker, pending.popleft(), pending)
            ready = set(wait([self._wake_r, *(w.conn for w in workers)], self._wait_for(workers)))
            if self._wake_r in ready:
                while self._wake_r.poll():
                    self._wake_r.recv()
            for index, worker in enumerate(workers):
                if self._check(worker, ready):
                    retired.append(worker)
                    stillborn = stillborn + 1 if not worker.ready else 0
                    if stillborn >= _MAX_STILLBORN:
                        self._fail_all(pending, f"{stillborn} worker processes did not start")
                    workers[index] = _Worker()
            retired = [w for w in retired if w.process.is_alive()]

    def _wait_for(self, workers: list[_Worker]) -> float | None:
        """Seconds until the next deadline: a page's TAGRATIO_WORKER_TIMEOUT, or a new
        worker's :data:`_START_TIMEOUT`, at most :data:`_MAX_WAIT` (``None``: no deadline,
        wait for news)."""
        deadlines = [w.started + _START_TIMEOUT for w in workers if not w.ready]
        if self.timeout is not None:
            deadlines += [w.job.started + self.timeout for w in workers if w.job is not None]
        if not deadlines:
            return None
        return min(_MAX_WAIT, max(0.0, min(deadlines) - time.monotonic()))

    def _assign(self, worker: _Worker, job: _Job, pending: collections.deque[_Job]) -> None:
        try:
            worker.conn.send(job.task)
        except OSError:  # the worker died while idle: the page waits for its successor
            pending.appendleft(job)
            return
        except Exception as exc:  # a task that cannot be pickled
            job.future.set_result(_failed(type(exc).__name__, f"cannot send the page: {exc}"))
            return
        job.started = time.monotonic()
        worker.job = job

    def _check(self, worker: _Worker, ready: set[Any]) -> bool:
        """Take the worker's news; True when it must be replaced."""
        job = worker.job
        if worker.conn in ready:
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):
                message = None
            if isinstance(message, Outcome) and job is not None:
                worker.job = None
                worker.done += 1
                job.future.set_result(message)
                if self.max_tasks is not None and worker.done >= self.max_tasks:
                    worker.retire(kill=False)
                    return True
                return False
            if isinstance(message, int):
                worker.ready = True
                return False
            # The pipe closed: the process died.
            worker.process.join(1)
            worker.fail_job(
                "worker_crashed",
                f"worker process died (exit code {worker.process.exitcode}) "
                "while extracting this page",
            )
            worker.retire(kill=True)
            return True
        if not worker.ready and time.monotonic() - worker.started >= _START_TIMEOUT:
            worker.retire(kill=True)
            return True
        if (
            job is not None
            and self.timeout is not None
            and time.monotonic() - job.started >= self.timeout
        ):
            worker.fail_job(
                "worker_timeout",
                f"no result after TAGRATIO_WORKER_TIMEOUT={self.timeout:g} s: "
                "the worker was killed",
            )
            worker.retire(kill=True)
            return True
        return False

    def _shutdown(
        self,
        workers: list[_Worker],
        pending: collections.deque[_Job],
        *,
        kind: str = "pool_closed",
        why: str = "the extraction pool was closed",
    ) -> None:
        """Fail the waiting and running pages with ``kind``, stop the workers, and fail
        the pages submitted meanwhile."""
        for job in [*pending, *(w.job for w in workers if w.job is not None)]:
            job.future.set_result(_failed(kind, why))
        for worker in workers:
            worker.retire(kill=worker.job is not None)
        for worker in workers:
            worker.process.join(2)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
        while not self._inbox.empty():  # pages submitted while closing
            late = self._inbox.get()
            if late is not None:
                late.future.set_result(_failed(kind, why))

    def _fail_all(self, pending: collections.deque[_Job], why: str) -> None:
        """Workers cannot start (a broken environment): fail the waiting pages instead of
        letting them wait for a worker that never comes."""
        while pending:
            pending.popleft().future.set_result(_failed("worker_crashed", why))


#: Workers in a row that may die before they are ready before waiting pages are failed.
_MAX_STILLBORN = 3

#: Longest single wait of the dispatcher: a later deadline (a TAGRATIO_WORKER_TIMEOUT of
#: weeks) is waited for in turns, as poll() takes at most 2**31 - 1 ms.
_MAX_WAIT = 3600.0

#: Seconds a new worker has to import the core and announce itself before it is killed
#: and counted as not started (a loaded machine takes a few seconds).
_START_TIMEOUT = 60.0


def _failed(kind: str, message: str) -> Outcome:
    return Outcome(None, error_kind=kind, error=message)


_SPAWN = get_context("spawn")


async def _wait(future: Future[Any]) -> Any:
    """Await a ``concurrent.futures`` future from Scrapy code: on the running asyncio
    event loop when there is one (the asyncio reactor, or none at all), else through a
    Twisted Deferred fired in the reactor thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return await asyncio.wrap_future(future)
    from twisted.internet import reactor
    from twisted.internet.defer import Deferred

    deferred: Deferred[Any] = Deferred()

    def fire(done: Future[Any]) -> None:
        try:
            deferred.callback(done.result())
        except BaseException as exc:  # the future's exception, re-raised at the await
            deferred.errback(exc)

    future.add_done_callback(lambda done: reactor.callFromThread(fire, done))
    return await deferred
