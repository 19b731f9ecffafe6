"""The benchmark loader reads every gold text as written, and its cache files are written
whole (benchmarks/_data.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks._data import _utf16_repaired, write_atomically

TEXT = "Forgiving your enemies\n\n“Then all that’s left now is to forgive them.” – Paulo"


def test_a_gold_text_stored_as_utf16_is_read_back() -> None:
    """UTF-16LE bytes with a byte-order mark, decoded as UTF-8 (the state of four
    dragnet-dev gold bodies), come back as the text; a unit whose bytes UTF-8 could not
    read stays one replacement character."""
    garbled = "\ufeffCafé ".encode("utf-16-le").decode("utf-8", "replace") + TEXT.encode(
        "utf-16-le"
    ).decode("utf-8", "replace")
    assert "\x00" in garbled
    assert _utf16_repaired(garbled) == "Caf\ufffd " + TEXT


def test_other_texts_are_unchanged() -> None:
    for text in (TEXT, "", "\ufffd\ufffd plain", "Ünïcödé text"):
        assert _utf16_repaired(text) == text


def test_dragnet_gold_bodies_are_text(benchmark_set: Any) -> None:
    """No gold body of dragnet-dev holds NUL characters; page 158's gold starts with the
    post's title, as its page shows it (checked by hand)."""
    gold = benchmark_set("dragnet").load_gold("dragnet")
    assert not [page_id for page_id, record in gold.items() if "\x00" in record["body"]]
    assert gold["158"]["body"].split("\n", 3)[2] == "Forgiving your enemies"


def test_a_cache_file_is_replaced_whole(tmp_path: Path) -> None:
    """The new bytes replace the old ones, in a folder made on the way, and no part file
    is left beside them."""
    path = tmp_path / "cache" / "blocks.pkl"
    write_atomically(path, b"old")
    write_atomically(path, b"new" * 1000)
    assert path.read_bytes() == b"new" * 1000
    assert sorted(p.name for p in path.parent.iterdir()) == ["blocks.pkl"]


def test_a_write_stopped_before_its_end_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write stopped after the new bytes are out but before they are in place (the
    rename fails) leaves the file as it was, so a reader never sees part of the new one,
    and removes its part file."""
    path = tmp_path / "models.json"
    write_atomically(path, b"whole")

    def stopped(source: object, target: object) -> None:
        raise OSError("stopped")

    monkeypatch.setattr("benchmarks._data.os.replace", stopped)
    with pytest.raises(OSError, match="stopped"):
        write_atomically(path, b"new bytes")
    assert path.read_bytes() == b"whole"
    assert [p.name for p in tmp_path.iterdir()] == ["models.json"]
