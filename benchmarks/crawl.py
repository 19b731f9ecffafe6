"""Crawl throughput with the plugin off, on in the reactor thread, and on with N workers.

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

``extract ms/page`` is the wall time of one extraction (it grows when processes share
cores). CPU milliseconds per item, over the same window, show where the cores go: the crawl
process (all its threads), its worker processes (read from ``/proc``; Linux only) and this
process's HTTP server (which a real crawl would not run on the crawler's cores). With 2
cores, plugin-on throughput is bounded by 2 / (sum of the three) and by 1 / (crawl process
alone), the crawl process being one reactor thread.

    python benchmarks/crawl.py --pages 200 --workers 2 --repeat 3

Needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS). A script that prints figures, not a
test.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
    """Run one crawl in this process; return its figures."""
    import scrapy
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    marks: dict[str, Any] = {"first_response": None, "last_item": None, "items": 0}
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
            marks["first_response"] = time.perf_counter()
            cpu["first_response"] = (time.process_time(), children_cpu())

    def on_item(**kwargs: Any) -> None:
        marks["items"] += 1
        marks["last_item"] = time.perf_counter()

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
    crawler.signals.connect(on_response, signal=signals.response_received)
    crawler.signals.connect(on_item, signal=signals.item_scraped)
    crawler.signals.connect(on_idle, signal=signals.spider_idle)
    started = time.perf_counter()
    process.crawl(crawler)
    process.start()
    wall = time.perf_counter() - started
    window = (marks["last_item"] or started) - (marks["first_response"] or started)
    stats = crawler.stats.get_stats() if crawler.stats is not None else {}
    items = marks["items"]
    (own_0, workers_0), (own_1, workers_1) = cpu["first_response"], cpu["idle"]
    return {
        "items": items,
        "items_per_s": items / window if window > 0 else 0.0,
        "wall_s": wall,
        "crawler_cpu_ms": (own_1 - own_0) * 1000 / items,
        "workers_cpu_ms": (workers_1 - workers_0) * 1000 / items,
        "tagratio": {k: v for k, v in stats.items() if k.startswith("tagratio/")},
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
    configurations = [
        ("plugin off", {}),
        ("plugin on, 0 workers", on),
        (f"plugin on, {args.workers} workers", {**on, "TAGRATIO_WORKERS": args.workers}),
    ]
    size = sum(map(len, pages)) / len(pages) / 1024
    print(f"{len(pages)} pages (mean {size:.0f} KiB) from trafilatura-eval, {os.cpu_count()} CPUs")
    print(f"{'':<24} {'':>6} {'':>8} {'':>7} {'':>7} {'extract':>8}"
          f"  {'CPU ms/item':^23}")  # fmt: skip
    print(f"{'configuration':<24} {'items':>6} {'items/s':>8} {'vs off':>7} {'wall s':>7}"
          f" {'ms/page':>8}  {'crawler':>7} {'workers':>7} {'server':>7}")  # fmt: skip
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    best: dict[str, dict[str, Any]] = {}
    for _ in range(args.repeat):  # interleaved, so a busy spell hits every configuration
        for label, settings in configurations:
            served = time.process_time()  # this process only serves pages meanwhile
            proc = subprocess.run(
                [sys.executable, __file__, "--crawl", base_url, str(len(pages)),
                 json.dumps(settings)],
                capture_output=True,
                text=True,
                env=env,
            )  # fmt: skip
            if proc.returncode != 0:
                sys.exit(f"{label}: crawl failed\n{proc.stderr[-3000:]}")
            result = json.loads(proc.stdout.strip().splitlines()[-1])
            result["server_cpu_ms"] = (time.process_time() - served) * 1000 / result["items"]
            if label not in best or result["items_per_s"] > best[label]["items_per_s"]:
                best[label] = result
    baseline = best["plugin off"]["items_per_s"]
    for label, _ in configurations:
        result = best[label]
        tagratio = result["tagratio"]
        extracted = tagratio.get("tagratio/pages_extracted", 0)
        time_us = tagratio.get("tagratio/extraction_time_us", 0)
        per_page = f"{time_us / extracted / 1000:.1f}" if extracted else "-"
        print(
            f"{label:<24} {result['items']:>6} {result['items_per_s']:>8.1f} "
            f"{result['items_per_s'] / baseline:>6.0%} {result['wall_s']:>7.2f} {per_page:>8}  "
            f"{result['crawler_cpu_ms']:>7.2f} {result['workers_cpu_ms']:>7.2f} "
            f"{result['server_cpu_ms']:>7.2f}"
        )
        errors = {k: v for k, v in tagratio.items() if "/errors/" in k or "/skipped/" in k}
        if errors:
            print(f"{'':<24} {errors}")
    server.shutdown()


if __name__ == "__main__":
    main()
