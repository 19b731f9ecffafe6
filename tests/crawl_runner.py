"""Run real Scrapy crawls in this (sub)process and write their feeds and stats.

Usage: ``python tests/crawl_runner.py SPEC.json`` where the spec is
``{"reactor": dotted path or null, "out": folder, "crawls": [{"name", "spider", "settings",
"args"}]}`` (see ``conftest.CrawlSpec``). All crawls run concurrently in one
``CrawlerProcess``; each writes ``<out>/<name>.jsonl`` (its JSON Lines feed) and
``<out>/<name>.result.json`` (``{"stats": ..., "error": ..., "live_children": ...}``, the
error being the message of a crawl that failed to start, e.g. on a bad setting, and
``live_children`` the child processes still alive after all crawls finished).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess
from twisted.python.failure import Failure


def child_pids() -> set[int]:
    """The process ids of this process's children, alive or not yet reaped (Linux's
    ``/proc/<pid>/task/<tid>/children``: the worker pool starts its processes with
    :mod:`subprocess`, which :func:`multiprocessing.active_children` does not see). A
    thread that ends while they are read (the reactor's thread pool shutting down) is
    skipped: Linux hands its children to another thread of the process."""
    pids: set[int] = set()
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            listed = children.read_text()
        except FileNotFoundError:  # the thread ended between the listing and the read
            continue
        pids.update(map(int, listed.split()))
    return pids


def load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def record_error(failure: Failure, errors: list[str]) -> None:
    errors.append(failure.getErrorMessage())


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text())
    out = Path(spec["out"])
    base = {
        "LOG_LEVEL": "INFO",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
    }
    if spec.get("reactor"):
        base["TWISTED_REACTOR"] = spec["reactor"]
    process = CrawlerProcess(base)
    runs = []
    for crawl in spec["crawls"]:
        spider = load(crawl["spider"])
        settings = {
            **crawl["settings"],
            "FEEDS": {str(out / f"{crawl['name']}.jsonl"): {"format": "jsonlines"}},
        }
        # The crawl's settings become the spider's custom_settings, as in a project.
        spidercls = type(spider.__name__, (spider,), {"custom_settings": settings})
        crawler = process.create_crawler(spidercls)
        errors: list[str] = []
        process.crawl(crawler, **crawl["args"]).addErrback(record_error, errors)
        runs.append((crawl["name"], crawler, errors))
    process.start()
    # Worker processes still running once every crawl has finished (should be none).
    live_children = len(child_pids())
    for name, crawler, errors in runs:
        stats = crawler.stats.get_stats() if crawler.stats is not None else {}
        result = {
            "stats": stats,
            "error": errors[0] if errors else None,
            "live_children": live_children,
        }
        (out / f"{name}.result.json").write_text(json.dumps(result, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
