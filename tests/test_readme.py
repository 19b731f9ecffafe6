"""The README says what the code does: its settings and stats tables list exactly the
settings and stats of the code, and its quick start runs pasted into one shell."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, python_env

from scrapy_tagratio.overview import OverviewDetector
from scrapy_tagratio.settings import DEFAULTS
from scrapy_tagratio.site_memory import SiteMemory

README = (REPO / "README.md").read_text()


def table_rows(heading: str) -> list[list[str]]:
    """The cells (backticks removed) of the markdown table whose header starts with
    ``| heading |``."""
    start = README.index(f"| {heading} |")
    rows = []
    for line in README[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip().strip("`") for cell in line.strip("|").split("|")])
    return rows


def shown(value: Any) -> str:
    """A default as the README writes it."""
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def test_settings_table_matches_the_settings_module() -> None:
    rows = {name: default for name, default, _ in table_rows("setting")}
    assert list(rows) == list(DEFAULTS)
    detector = OverviewDetector()
    detector_defaults = {
        "TAGRATIO_MIN_NET_TEXT_LENGTH": detector.min_net_text_length,
        "TAGRATIO_OVERVIEW_THRESHOLD": detector.threshold,
        "TAGRATIO_SITE_MEMORY_MIN_PAGES": SiteMemory().min_pages,
    }
    for name, default in DEFAULTS.items():
        expected = detector_defaults.get(name, default)
        assert rows[name] == shown(expected), name


def code_stats() -> set[str]:
    """Every ``tagratio/`` stat name the package writes: literal names, and the fixed
    prefix of formatted ones (up to their first ``{``)."""
    names = set()
    for source in (REPO / "scrapy_tagratio").rglob("*.py"):
        for prefix, name in re.findall(r'(f?)"(tagratio/[a-z_/]*)', source.read_text()):
            names.add(name + ("{" if prefix else ""))
    return names


def test_stats_table_matches_the_code() -> None:
    table = {row[0] for row in table_rows("stat")}
    literal = {name for name in table if "<" not in name}
    families = {name.split("<")[0] for name in table if "<" in name}
    written = code_stats()
    fixed = {name for name in written if not name.endswith("{")}
    formatted = {name[:-1] for name in written if name.endswith("{")}
    # Every name the code writes is in the table, by name or in a <family>.
    assert literal <= fixed
    for name in (fixed - literal) | formatted:
        assert any(name.startswith(family) for family in families), name
    # Every family is one the code writes to.
    assert all(any(f.startswith(family) for f in formatted) for family in families)


def quick_start_blocks() -> list[str]:
    section = README[README.index("## Quick start") : README.index("## Use it in a project")]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_quick_start_commands_run_one_after_the_other(tmp_path: Path) -> None:
    first, second = quick_start_blocks()
    # The installs are the reader's; the test suite is the one running now. What is left
    # must run from the repository root in one shell, and leave it there for the second.
    crawl = first.replace("pip install -e . && ", "").strip()
    assert "pip install -e" in first and crawl != first.strip()
    install_and_test = r'pip install -e "\.\[test[a-z,]*\]" && python -m pytest -q'
    assert re.fullmatch(install_and_test, second.strip())
    feed = tmp_path / "articles.jsonl"
    options = f"{feed} -s AUTOTHROTTLE_ENABLED=False -L ERROR"
    script = (
        f"{crawl.replace('articles.jsonl', options)}\n"
        "test -f pyproject.toml && test -d tests && pwd\n"
    )
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=REPO, capture_output=True, text=True,
        timeout=300, env={**python_env(), "PATH": f"{Path(sys.executable).parent}:"
                          + python_env().get("PATH", "")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == str(REPO)
    items = [json.loads(line) for line in feed.read_text().splitlines()]
    verdicts = [item["tagratio"]["overview_verdict"] for item in items]
    assert verdicts.count("content") == 7  # "seven articles"
    assert set(verdicts) <= {"content", "uncertain"}


@pytest.mark.parametrize("readme", ["README.md", "example_project/README.md"])
def test_no_quick_start_leaves_the_shell_elsewhere(readme: str) -> None:
    text = (REPO / readme).read_text()
    section = text[text.index("## Quick start") :]
    section = section[: section.index("\n## ", 3)]
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.splitlines():
            assert not re.match(r"^[^(]*\bcd\b", line), (readme, line)
