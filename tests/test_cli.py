"""The command line: python -m scrapy_tagratio extract / algorithms, and --plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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
        input=stdin, capture_output=True, timeout=120, check=False,
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
    done = run("extract", str(page_file), "-a", "cetr", "-p", "clustering=threshold",
               "-p", "lam=0.5", "-f", "json", "--blocks")
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


def test_algorithms_lists_every_name_first_on_its_line() -> None:
    done = run("algorithms")
    assert done.returncode == 0
    heads = [line.split()[0].rstrip(":") for line in done.stdout.decode().splitlines()
             if line and not line.startswith(" ")]
    assert heads == list(ALGORITHMS)
    assert f"{DEFAULT_ALGORITHM} (default):" in done.stdout.decode()
    assert "    clustering = 'farthest-first'" in done.stdout.decode()


def test_plot_draws_a_png(page_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs the plot extra (matplotlib)")
    out = tmp_path / "scores.png"
    done = run("extract", str(page_file), "-a", "cectd", "--plot", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000
