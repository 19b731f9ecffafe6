"""Crawl throughput with the plugin off, on in the reactor thread, on with N workers, and
on with scrapy-redis (one process, then two processes sharing one Redis).

A real Scrapy crawl of the first ``--pages`` pages of the trafilatura-eval development set,
served from 127.0.0.1 by a threaded HTTP server in this process; each configuration runs
in its own subprocess (a reactor starts once per process). The spider yields one item per
page (URL and title), as a plain crawl would. Overview items are kept
(``TAGRATIO_OVERVIEW_ACTION = "tag"``) so every configuration yields the same items.

Items per second are counted from the first response to the last item scraped (crawl
start-up, including worker start, is reported apart as the wall time). All configurations
crawl the same pages with the same Scrapy settings (the defaults: 16 concurrent requests,
8 per domain) and count items the same way. On a shared machine use ``--repeat 3``:
configurations run interleaved and the best run of each is kept.

The scrapy-redis lines crawl the same pages through a private ``redis-server`` (the
settings of ``example_project/newsdemo/settings_redis.py``: shared scheduler queue,
duplicate filter and stats); with two processes both start at the same moment, both seed
the same pages (the shared duplicate filter keeps one copy of each) and items per second
count the items of both from the first response of either to the last item of either
(``time.monotonic``, one clock for every process of the machine). Without redis-server or
scrapy-redis these lines are left out, saying why.

``extract ms/page`` is the wall time of one extraction (it grows when processes share
cores). CPU milliseconds per item, over the same window, show where the cores go: the crawl
process (all its threads), its worker processes (read from ``/proc``; Linux only) and this
process's HTTP server (which a real crawl would not run on the crawler's cores). With 2
cores, plugin-on throughput is bounded by 2 / (sum of the three) and by 1 / (crawl process
alone), the crawl process being one reactor thread.

    python -m benchmarks.crawl --pages 200 --workers 2 --repeat 3

Needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS). A script that prints figures, not a
test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from subprocess import PIPE
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def load_pages(count: int) -> list[bytes]:
    from benchmarks import _data  # absolute: this file also runs as a script (--crawl)

    try:
        return [page.html for page in _data.pages("trafilatura", limit=count)]
    except FileNotFoundError as exc:
        sys.exit(str(exc))


def serve(pages: list[bytes]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                body = pages[int(self.path.rsplit("/", 1)[1].split(".")[0])]
            except (ValueError, IndexError):
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------------- one crawl
def crawl(base_url: str, count: int, settings: dict[str, Any]) -> dict[str, Any]:
    """Run one crawl in this process; return its figures. Once the spider is open this
    process prints "ready" and waits for a line on stdin (the parent's go)."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    marks: dict[str, Any] = {"first_response": None, "last_item": None, "items": 0, "waited": 0}
    cpu: dict[str, tuple[float, float]] = {}

    class PagesSpider(scrapy.Spider):
        name = "pages"

        async def start(self) -> AsyncIterator[scrapy.Request]:
            for i in range(count):
                yield scrapy.Request(f"{base_url}/p/{i}.html")

        def parse(self, response: Any) -> Iterator[dict[str, Any]]:
            yield {"url": response.url, "title": response.css("title::text").get()}

    def on_response(**kwargs: Any) -> None:
        if marks["first_response"] is None:
            marks["first_response"] = time.monotonic()
            cpu["first_response"] = (time.process_time(), children_cpu())

    def on_item(**kwargs: Any) -> None:
        marks["items"] += 1
        marks["last_item"] = time.monotonic()

    def on_opened(**kwargs: Any) -> None:  # blocks the reactor: nothing runs before go
        waited = time.monotonic()
        print("ready", flush=True)
        sys.stdin.readline()
        marks["waited"] = time.monotonic() - waited

    def on_idle(**kwargs: Any) -> None:  # right after the last item, before the pool closes
        cpu["idle"] = (time.process_time(), children_cpu())

    process = CrawlerProcess(
        {
            "LOG_LEVEL": "WARNING",
            "TELNETCONSOLE_ENABLED": False,
            "REMOTE_CONTROL_ENABLED": False,
            "ROBOTSTXT_OBEY": False,
            "TAGRATIO_OVERVIEW_ACTION": "tag",
            **settings,
        }
    )
    crawler = process.create_crawler(PagesSpider)
    crawler.signals.connect(on_opened, signal=signals.spider_opened)
    crawler.signals.connect(on_response, signal=signals.response_received)
    crawler.signals.connect(on_item, signal=signals.item_scraped)
    crawler.signals.connect(on_idle, signal=signals.spider_idle)
    started = time.monotonic()
    process.crawl(crawler)
    process.start()
    wall = time.monotonic() - started - marks["waited"]
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    # A process of a shared crawl may get no page at all.
    (own_0, workers_0) = cpu.get("first_response", cpu["idle"])
    (own_1, workers_1) = cpu["idle"]
    return {
        "items": marks["items"],
        "first_response": marks["first_response"],
        "last_item": marks["last_item"],
        "wall_s": wall,
        "crawler_cpu_s": own_1 - own_0,
        "workers_cpu_s": workers_1 - workers_0,
        # Integers (scrapy-redis's collector returns the strings Redis holds).
        "tagratio": {k: int(v) for k, v in stats.items() if k.startswith("tagratio/")},
    }


def children_cpu() -> float:
    """CPU seconds used so far by this process's live child processes (Linux ``/proc``;
    0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for children in Path("/proc/self/task").glob("*/children"):
        for pid in children.read_text().split():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # exited meanwhile
                continue
            total += (int(fields[11]) + int(fields[12])) / tick  # utime + stime
    return total


# ---------------------------------------------------------------------- the run
#: scrapy-redis as example_project/newsdemo/settings_redis.py sets it up (LogStats off:
#: it fails at close with scrapy-redis 0.9.1's collector, rmax/scrapy-redis#303).
SCRAPY_REDIS = {
    "SCHEDULER": "scrapy_redis.scheduler.Scheduler",
    "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
    "STATS_CLASS": "scrapy_redis.stats.RedisStatsCollector",
    "SCHEDULER_PERSIST": True,
    "EXTENSIONS": {"scrapy.extensions.logstats.LogStats": None},
}


def run_crawls(
    base_url: str, count: int, settings: dict[str, Any], processes: int, env: dict[str, str]
) -> dict[str, Any]:
    """``processes`` crawl subprocesses started at one moment; their combined figures."""
    command = [sys.executable, __file__, "--crawl", base_url, str(count), json.dumps(settings)]
    # Logs go to files: a pipe nobody reads while the crawls run could fill and block them.
    with ExitStack() as files:
        logs = [files.enter_context(tempfile.TemporaryFile("w+")) for _ in range(processes)]
        procs = [
            subprocess.Popen(command, stdin=PIPE, stdout=PIPE, stderr=log, text=True, env=env)
            for log in logs
        ]
        for proc in procs:  # wait until every process has its spider open
            assert proc.stdout is not None
            proc.stdout.readline()
        for proc in procs:  # then go, all at once
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc, log in zip(procs, logs, strict=True):
            out, _ = proc.communicate()
            if proc.returncode != 0:
                log.seek(0)
                sys.exit(f"crawl failed\n{log.read()[-3000:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    items = sum(r["items"] for r in results)
    busy = [r for r in results if r["items"]]
    window = max(r["last_item"] for r in busy) - min(r["first_response"] for r in busy)
    # With shared stats every process reports the running totals when it closes: the
    # largest value of each is the crawl's.
    keys = {k for r in results for k in r["tagratio"]}
    return {
        "items": items,
        "items_per_process": [r["items"] for r in results],
        "items_per_s": items / window if window > 0 else 0.0,
        "wall_s": max(r["wall_s"] for r in results),
        "crawler_cpu_ms": sum(r["crawler_cpu_s"] for r in results) * 1000 / items,
        "workers_cpu_ms": sum(r["workers_cpu_s"] for r in results) * 1000 / items,
        "tagratio": {k: max(r["tagratio"].get(k, 0) for r in results) for k in keys},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--algorithm", default=None, help="TAGRATIO_ALGORITHM (default: default)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration; best kept")
    parser.add_argument("--crawl", nargs=3, metavar=("BASE_URL", "COUNT", "SETTINGS"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.crawl:
        base_url, count, settings = args.crawl
        print(json.dumps(crawl(base_url, int(count), json.loads(settings))))
        return

    pages = load_pages(args.pages)
    server = serve(pages)
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    on: dict[str, Any] = {"ADDONS": {"scrapy_tagratio.Addon": 100}}
    if args.algorithm:
        on["TAGRATIO_ALGORITHM"] = args.algorithm
    configurations: list[tuple[str, dict[str, Any], int]] = [
        ("plugin off", {}, 1),
        ("plugin on, 0 workers", on, 1),
        (f"plugin on, {args.workers} workers", {**on, "TAGRATIO_WORKERS": args.workers}, 1),
    ]
    with ExitStack() as stack:
        try:
            import scrapy_redis  # noqa: F401  (installed with the [redis] extra)

            from benchmarks._redis import RedisUnavailable, redis_server

            redis_url = stack.enter_context(redis_server())
        except (ImportError, RedisUnavailable) as exc:
            print(f"scrapy-redis lines left out: {exc}")
        else:
            shared = {**on, **SCRAPY_REDIS, "REDIS_URL": redis_url}
            configurations += [
                ("scrapy-redis, 1 process", shared, 1),
                ("scrapy-redis, 2 processes", shared, 2),
            ]
        report(configurations, pages, base_url, args.repeat)
    server.shutdown()


def report(
    configurations: list[tuple[str, dict[str, Any], int]],
    pages: list[bytes],
    base_url: str,
    repeat: int,
) -> None:
    """Run every configuration ``repeat`` times (interleaved) and print the best run of each."""
    size = sum(map(len, pages)) / len(pages) / 1024
    print(f"{len(pages)} pages (mean {size:.0f} KiB) from trafilatura-eval, {os.cpu_count()} CPUs")
    print(f"{'':<26} {'':>6} {'':>8} {'':>7} {'':>7} {'extract':>8}"
          f"  {'CPU ms/item':^23}")  # fmt: skip
    print(f"{'configuration':<26} {'items':>6} {'items/s':>8} {'vs off':>7} {'wall s':>7}"
          f" {'ms/page':>8}  {'crawler':>7} {'workers':>7} {'server':>7}")  # fmt: skip
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    best: dict[str, dict[str, Any]] = {}
    for _ in range(repeat):  # interleaved, so a busy spell hits every configuration
        for label, settings, processes in configurations:
            if "REDIS_URL" in settings:  # a new crawl: empty queue, duplicate filter, stats
                import redis

                redis.Redis.from_url(settings["REDIS_URL"]).flushdb()
            served = time.process_time()  # this process only serves pages meanwhile
            result = run_crawls(base_url, len(pages), settings, processes, env)
            result["server_cpu_ms"] = (time.process_time() - served) * 1000 / result["items"]
            if label not in best or result["items_per_s"] > best[label]["items_per_s"]:
                best[label] = result
    baseline = best["plugin off"]["items_per_s"]
    for label, _, _ in configurations:
        result = best[label]
        tagratio = result["tagratio"]
        extracted = tagratio.get("tagratio/pages_extracted", 0)
        time_us = tagratio.get("tagratio/extraction_time_us", 0)
        per_page = f"{time_us / extracted / 1000:.1f}" if extracted else "-"
        print(
            f"{label:<26} {result['items']:>6} {result['items_per_s']:>8.1f} "
            f"{result['items_per_s'] / baseline:>6.0%} {result['wall_s']:>7.2f} {per_page:>8}  "
            f"{result['crawler_cpu_ms']:>7.2f} {result['workers_cpu_ms']:>7.2f} "
            f"{result['server_cpu_ms']:>7.2f}"
        )
        if len(result["items_per_process"]) > 1:
            print(f"{'':<26} items per process: {result['items_per_process']}")
        errors = {k: v for k, v in tagratio.items() if "/errors/" in k or "/skipped/" in k}
        if errors:
            print(f"{'':<26} {errors}")


if __name__ == "__main__":
    main()
