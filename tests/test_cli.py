"""The command line: python -m scrapy_tagratio extract / algorithms, and --plot."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import LocalSite

from scrapy_tagratio import ALGORITHMS, DEFAULT_ALGORITHM

PAGE = (
    "<html><head><title>Quay opens</title></head><body><nav>"
    + "".join(f"<a href='/s{i}'>Section {i}</a> " for i in range(10))
    + "</nav><article>"
    + "".join(
        f"<p>Paragraph {i}: the new quay opened on Monday after three years of work, and "
        "the ferries to the islands will now run twice as often in summer.</p>"
        for i in range(6)
    )
    + "</article></body></html>"
)


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "scrapy_tagratio", *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.fixture()
def page_file(tmp_path: Path) -> Path:
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    return path


def test_extract_prints_the_main_text(page_file: Path) -> None:
    done = run("extract", str(page_file))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "Paragraph 5: the new quay opened" in text and "Section 3" not in text


def test_extract_json_with_algorithm_and_parameter(page_file: Path) -> None:
    done = run(
        "extract",
        str(page_file),
        "-a",
        "cetr",
        "-p",
        "clustering=threshold",
        "-p",
        "lam=0.5",
        "-f",
        "json",
        "--blocks",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["algorithm"] == "cetr"
    assert data["params"]["clustering"] == "threshold" and data["params"]["lam"] == 0.5
    assert data["blocks"] and {"kind", "score", "is_content"} <= set(data["blocks"][0])


def test_extract_reads_standard_input_and_reports_bad_input() -> None:
    done = run("extract", "-", stdin=PAGE.encode())
    assert done.returncode == 0 and b"Paragraph 0" in done.stdout
    done = run("extract", "-", stdin=b"\x89PNG\r\n\x1a\n" + bytes(100))
    assert done.returncode == 1 and b"PNG" in done.stderr
    done = run("extract", "-", "-a", "cectd", "-p", "lam=-1", stdin=PAGE.encode())
    assert done.returncode == 1 and b"'lam'" in done.stderr
    done = run("extract", "-", "-p", "lam=1", stdin=PAGE.encode())  # tagratio has no lam
    assert done.returncode == 1 and b"unknown parameter(s) lam" in done.stderr


@pytest.mark.parametrize("name", ["url", "html", "time_budget", "metadata"])
def test_a_parameter_named_as_an_argument_of_extract_is_an_unknown_parameter(
    name: str, page_file: Path
) -> None:
    # -p sets the algorithm's parameters only: a name extract() takes itself is no
    # parameter of any algorithm, said in one line (not a TypeError's traceback, nor
    # silently extract()'s own argument).
    done = run("extract", str(page_file), "-p", f"{name}=1")
    assert done.returncode == 1, done.stderr
    assert done.stderr.decode().startswith("error: ")
    assert f"unknown parameter(s) {name}" in done.stderr.decode()


def test_algorithms_lists_every_name_first_on_its_line() -> None:
    done = run("algorithms")
    assert done.returncode == 0
    heads = [
        line.split()[0].rstrip(":")
        for line in done.stdout.decode().splitlines()
        if line and not line.startswith(" ")
    ]
    assert heads == list(ALGORITHMS)
    assert f"{DEFAULT_ALGORITHM} (default):" in done.stdout.decode()
    assert "    clustering = 'farthest-first'" in done.stdout.decode()


def test_plot_draws_a_png(page_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs the plot extra (matplotlib)")
    out = tmp_path / "scores.png"
    done = run("extract", str(page_file), "-a", "cectd", "--plot", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_extract_reads_gzip_input(page_file: Path, tmp_path: Path) -> None:
    packed = tmp_path / "page.html.gz"
    packed.write_bytes(gzip.compress(PAGE.encode()))
    done = run("extract", str(packed))
    assert done.returncode == 0, done.stderr
    assert done.stdout == run("extract", str(page_file)).stdout
    done = run("extract", "-", stdin=gzip.compress(PAGE.encode()))
    assert done.returncode == 0 and b"Paragraph 5" in done.stdout
    broken = tmp_path / "broken.gz"
    broken.write_bytes(gzip.compress(PAGE.encode())[:40])
    done = run("extract", str(broken))
    assert done.returncode == 2
    assert done.stderr.decode().splitlines() == [
        f"error: cannot read {broken}: bad gzip data: "
        "Compressed file ended before the end-of-stream marker was reached"
    ]


def test_blocks_without_json_output_is_refused_in_one_line(page_file: Path) -> None:
    # The block scores exist only in the json output; other formats ignored the flag.
    done = run("extract", str(page_file), "--blocks")
    assert done.returncode == 2 and not done.stdout
    assert done.stderr.decode().splitlines() == [
        "error: --blocks adds the block scores to the json output: use -f json"
    ]
    assert run("extract", str(page_file), "--blocks", "-f", "json").returncode == 0


def test_plot_failures_end_in_one_line_and_a_status(page_file: Path, tmp_path: Path) -> None:
    unwritable = tmp_path / "missing-dir" / "scores.png"
    if importlib.util.find_spec("matplotlib") is not None:
        done = run("extract", str(page_file), "-a", "cectd", "--plot", str(unwritable))
        assert done.returncode == 1 and b"Traceback" not in done.stderr
        [line] = done.stderr.decode().splitlines()
        assert line.startswith(f"error: cannot draw the plot to {unwritable}: ")
    # Without matplotlib (an installed package that fails to import stands for it).
    fake = tmp_path / "fake" / "matplotlib"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake.parent), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_tagratio", "extract", str(page_file), "--plot", "x.png"],
        capture_output=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    [line] = done.stderr.decode().splitlines()
    assert "plotting needs matplotlib: pip install 'scrapy-tagratio[plot]'" in line


def test_a_closed_output_pipe_ends_quietly(tmp_path: Path) -> None:
    big = tmp_path / "big.html"
    big.write_text(PAGE.replace("<article>", "<article>" + "<p>Teaser line.</p>" * 3000))
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_tagratio", "extract", str(big), "-f", "json", "--blocks"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)  # like `| head -c 100`, then the reader goes away
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert stderr == b""


def test_extract_of_a_redirected_url_reads_the_page_at_its_final_address(
    local_site: Callable[..., LocalSite],
) -> None:
    # As a crawl does (response.url): the overview detector and the metadata read the
    # address the page came from, not the one asked for.
    site = local_site()
    story = site.add("/news/2024/05/quay-opens.html", PAGE)
    moved = site.add("/s/17", "", status=301, headers={"Location": story})
    done = run("extract", moved, "-f", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["url"] == story


@pytest.mark.parametrize(
    "source", ["ftp://example.org/page.html", "HTTPS://127.0.0.1:1/x", "http://[::1/page"]
)
def test_extract_names_a_url_it_cannot_read(source: str) -> None:
    done = run("extract", source)
    assert done.returncode == 2
    message = done.stderr.decode()
    assert message.startswith(f"error: cannot read {source}: ")
    assert "No such file" not in message


def test_extract_refuses_a_url_served_as_another_type_than_html(
    local_site: Callable[..., LocalSite],
) -> None:
    # The crawl extracts only responses Scrapy reads as HTML; the command line says why it
    # does not either, and reads the same page served as XHTML.
    site = local_site()
    plain = site.add("/notes.txt", PAGE, content_type="text/plain; charset=utf-8")
    done = run("extract", plain)
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"error: cannot read {plain}: ")
    assert "served as text/plain, not HTML" in done.stderr.decode()
    xhtml = site.add("/page.xhtml", PAGE, content_type="application/xhtml+xml")
    read = run("extract", xhtml)
    assert read.returncode == 0, read.stderr
    assert "the new quay opened on Monday" in read.stdout.decode()
