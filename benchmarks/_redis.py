"""A private ``redis-server`` for tests and benchmarks: a free port on 127.0.0.1, no
persistence, its files in a temporary folder, stopped when done.

The binary is ``$REDIS_SERVER`` or ``redis-server`` on the ``PATH`` (Debian's
``redis-server`` package puts it in /usr/bin; ``.ci/run`` installs it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["RedisUnavailable", "find_redis_server", "redis_server"]


class RedisUnavailable(RuntimeError):
    """redis-server (or the redis client library) is not there, or would not start."""


def find_redis_server() -> str:
    """The path of the redis-server binary; RedisUnavailable says why there is none."""
    path = os.environ.get("REDIS_SERVER") or shutil.which("redis-server")
    if path is None:
        for folder in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
            candidate = Path(folder) / "redis-server"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        raise RedisUnavailable(
            "redis-server not found (install it: apt-get install redis-server, "
            "or set REDIS_SERVER to its path)"
        )
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server(timeout: float = 10.0) -> Iterator[str]:
    """Start a private redis-server; yields its URL (``redis://127.0.0.1:PORT/0``)."""
    try:
        import redis
    except ImportError as exc:
        raise RedisUnavailable(f"the redis client is not installed ({exc})") from None
    binary = find_redis_server()
    with tempfile.TemporaryDirectory(prefix="tagratio-redis-") as folder:
        port = _free_port()
        try:
            proc = subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", folder, "--daemonize", "no",
                 "--loglevel", "warning", "--logfile", str(Path(folder) / "redis.log")],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
        except OSError as exc:
            raise RedisUnavailable(f"{binary} could not be run: {exc}") from None
        url = f"redis://127.0.0.1:{port}/0"
        try:
            client = redis.Redis.from_url(url)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    client.ping()
                    break
                except redis.ConnectionError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        log = Path(folder) / "redis.log"
                        detail = log.read_text()[-2000:] if log.exists() else ""
                        raise RedisUnavailable(
                            f"{binary} did not start on port {port}: {detail}"
                        ) from None
                    time.sleep(0.05)
            client.close()
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
