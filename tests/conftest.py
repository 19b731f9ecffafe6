"""Shared fixtures: a real HTTP server on 127.0.0.1, and real Scrapy crawls run in a
subprocess (a Twisted reactor starts once per process, so crawls never run in pytest's).

* ``local_site`` (factory, session-wide): ``local_site(root=None)`` starts a threaded
  HTTP server serving the files under ``root`` plus pages added with
  ``site.add(path, body, content_type)``; servers stop at the end of the session.
* ``run_crawls`` (function): runs :mod:`crawl_runner` in a subprocess on a list of
  :class:`CrawlSpec` and returns a :class:`CrawlResult` per spec (items of the JSON Lines
  feed, stats, bootstrap error), all crawls of one call in one process, concurrently.
"""

from __future__ import annotations

import json
import mimetypes
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


# ---------------------------------------------------------------------- HTTP server
@dataclass(frozen=True)
class Page:
    body: bytes
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    #: Further response headers (``Location``, ``Content-Encoding``, ...).
    headers: tuple[tuple[str, str], ...] = ()


class LocalSite:
    """A threaded HTTP server on 127.0.0.1: files under ``root`` and added pages."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root.resolve() if root is not None else None
        self.pages: dict[str, Page] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                page = site.lookup(unquote(urlsplit(self.path).path))
                self.send_response(page.status)
                if page.content_type is not None:
                    self.send_header("Content-Type", page.content_type)
                for name, value in page.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(page.body)

            do_HEAD = do_GET

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(
        self,
        path: str,
        body: bytes | str,
        content_type: str | None = None,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> str:
        """Serve ``body`` at ``path`` with ``status`` and ``headers``; returns its URL."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.pages[path] = Page(
            data,
            content_type or "text/html; charset=utf-8",
            status,
            tuple((headers or {}).items()),
        )
        return self.url(path)

    def url(self, path: str) -> str:
        return self.base_url + path

    def lookup(self, path: str) -> Page:
        if path in self.pages:
            return self.pages[path]
        if self.root is not None:
            file = (self.root / path.lstrip("/")).resolve()
            if file.is_dir():
                file = file / "index.html"
            if file.is_file() and file.is_relative_to(self.root):
                kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                charset = "; charset=utf-8" if kind.startswith("text/") else ""
                return Page(file.read_bytes(), kind + charset)
        return Page(b"not found", "text/plain", 404)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def local_site() -> Iterator[Callable[..., LocalSite]]:
    sites: list[LocalSite] = []

    def start(root: Path | None = None) -> LocalSite:
        site = LocalSite(root)
        sites.append(site)
        return site

    yield start
    for site in sites:
        site.close()


# ---------------------------------------------------------------------- crawls
@dataclass
class CrawlSpec:
    """One crawl for :mod:`crawl_runner`: a spider (``module:Class``, importable from
    tests/), its arguments, and settings applied as the spider's ``custom_settings``."""

    name: str
    spider: str
    settings: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class CrawlResult:
    items: list[dict[str, Any]]
    stats: dict[str, Any]
    error: str | None
    #: Child processes (extraction workers) still alive after the crawls finished.
    live_children: int
    #: The log (stderr) of the process that ran the crawls (all crawls of one call).
    log: str = ""

    def tagratio_stats(self) -> dict[str, Any]:
        return {k: v for k, v in self.stats.items() if k.startswith("tagratio/")}


def python_env() -> dict[str, str]:
    """Environment for subprocesses: the repo and tests/ importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), str(TESTS), *filter(None, [env.get("PYTHONPATH")])]
    )
    return env


@pytest.fixture
def run_crawls(tmp_path: Path) -> Callable[..., dict[str, CrawlResult]]:
    def run(
        specs: list[CrawlSpec], *, reactor: str | None = None, timeout: float = 120
    ) -> dict[str, CrawlResult]:
        spec_file = tmp_path / "crawls.json"
        spec_file.write_text(
            json.dumps(
                {"reactor": reactor, "out": str(tmp_path), "crawls": [asdict(s) for s in specs]}
            )
        )
        proc = subprocess.run(
            [sys.executable, str(TESTS / "crawl_runner.py"), str(spec_file)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=python_env(),
        )
        if proc.returncode != 0:
            raise AssertionError(f"crawl runner failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        results = {}
        for spec in specs:
            outcome = json.loads((tmp_path / f"{spec.name}.result.json").read_text())
            feed = tmp_path / f"{spec.name}.jsonl"
            items = (
                [json.loads(line) for line in feed.read_text().splitlines()]
                if feed.exists()
                else []
            )
            results[spec.name] = CrawlResult(
                items, outcome["stats"], outcome["error"], outcome["live_children"], proc.stderr
            )
        return results

    return run


# ---------------------------------------------------------------------- benchmark data
@pytest.fixture(scope="session")
def benchmark_set() -> Callable[[str], Any]:
    """``benchmark_set(name)`` -> the module :mod:`benchmarks._data` after checking that the
    set is on this machine; skips the test with the reason when it is not."""
    from benchmarks import _data

    def load(name: str) -> Any:
        try:
            _data.dataset_dir(name)
        except FileNotFoundError as exc:
            pytest.skip(str(exc))
        return _data

    return load
