"""The benchmark loader reads every gold text as written (benchmarks/_data.py)."""

from __future__ import annotations

from typing import Any

from benchmarks._data import _utf16_repaired

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
