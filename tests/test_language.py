"""The language detector's compiled walk (language.py, _kernel.automaton_piece_counts): the same
feature counts as py3langid's own walk and the same language and probability, to the bit,
on generated text and on the samples of the development pages; refused for tables it
cannot read safely and for a detector that answers otherwise."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import _data
from scrapy_tagratio import language
from scrapy_tagratio.algorithms import DEFAULT_ALGORITHM, get_algorithm
from scrapy_tagratio.document import Document
from scrapy_tagratio.reader import kernel_status

try:
    from py3langid.langid import LanguageIdentifier, visit_counts
except ImportError:  # the [lang] extra is optional
    LanguageIdentifier = visit_counts = None

KERNEL = kernel_status()[0]
if KERNEL:
    from scrapy_tagratio import _kernel

needs_walk = pytest.mark.skipif(
    not KERNEL or visit_counts is None, reason="needs the compiled kernel and py3langid 0.4"
)


@pytest.fixture(scope="module")
def tables() -> Iterator[language._Tables]:
    found = language._compiled_tables(_kernel)
    assert found is not None, "py3langid's tables were refused"
    yield found


def _langid_bytes(text: str) -> bytes:
    """``text`` as py3langid's walk reads it (``LanguageIdentifier._encode``)."""
    if text.isupper():
        text = text.lower()
    return unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")


def _both_counts(
    tables: language._Tables, text: str, warm_up: int = 0
) -> tuple[list[Any], list[Any]]:
    """(the kernel's, py3langid's) features with their counts, in the order met."""
    identifier = language._identifier()
    data = _langid_bytes(text)
    features, counts = _kernel.automaton_piece_counts(
        tables.nextmove, tables.rowbase, tables.output, data, tables.scratch, warm_up
    )
    found, times = np.frombuffer(features, np.intp), np.frombuffer(counts, np.float32)
    compiled = list(zip(found.tolist(), times.tolist(), strict=True))
    visits = visit_counts(identifier.tk_nextmove, identifier._rowbase, identifier.tk_output, data)
    return compiled, [(f, float(c)) for f, c in (visits or {}).items()]


def _assert_same(tables: language._Tables, text: str) -> None:
    """The same counts walked in one piece, in pieces begun too late (1 and 2 bytes: many
    walked again) and as the detector walks them; the same language and probability."""
    for warm_up in (0, 1, 2, language._WARM_UP):
        compiled, own = _both_counts(tables, text, warm_up)
        assert compiled == own, f"warm-up {warm_up}"
        assert not tables.scratch.any()  # zero again for the next text
    language_, probability = language._identifier().classify(text)
    assert language._classify(tables, _kernel, text) == (language_, float(probability))


@needs_walk
@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    text=st.text(max_size=700)
    | st.text(st.characters(max_codepoint=0x24F), max_size=700)
    | st.text(st.characters(codec="utf-8", categories=["Lu", "Zs"]), max_size=200)
)
def test_the_compiled_walk_counts_and_answers_as_py3langid(
    tables: language._Tables, text: str
) -> None:
    _assert_same(tables, text)


@needs_walk
@pytest.mark.parametrize(
    "text",
    ["", " ", "A", "ÉTÉ À PARIS", "e\u0301te\u0301", "lone \udc80 surrogate", "\x00" * 50],
    ids=["empty", "space", "one letter", "upper case", "decomposed", "surrogate", "nul bytes"],
)
def test_the_compiled_walk_on_edge_cases(tables: language._Tables, text: str) -> None:
    _assert_same(tables, text)


@needs_walk
@pytest.mark.benchmark_data
@pytest.mark.skipif(_data.benchmarks_dir() is None, reason="needs ../shared/benchmarks")
def test_the_compiled_walk_on_every_development_pages_sample(tables: language._Tables) -> None:
    """The detector's sample (the first characters of the default's text) of every tenth
    page of the protocol's pool; all 1,961 with ``TAGRATIO_ALL_PAGES=1`` (CI)."""
    from benchmarks import protocol

    algorithm = get_algorithm(DEFAULT_ALGORITHM)()
    step = 1 if os.environ.get("TAGRATIO_ALL_PAGES") == "1" else 10
    for page in protocol.pool()[::step]:
        text = algorithm.run(Document.from_input(page.html())).text
        try:
            _assert_same(tables, text[: language.SAMPLE_CHARS])
        except AssertionError as exc:
            raise AssertionError(f"{page.key}: {exc}") from None


@needs_walk
def test_the_walk_refuses_indices_outside_its_tables(tables: language._Tables) -> None:
    """Out-of-range tables are an error, not a read past them, and the counts of the
    bytes before the error are zero again for the next text."""
    text = b"the quick brown fox"
    state = 0
    for byte in text[:-1]:  # the state before the last byte, features counted on the way
        state = int(tables.nextmove[tables.rowbase[state] + byte])
    nextmove = tables.nextmove.copy()
    nextmove[tables.rowbase[state] + text[-1]] = len(tables.output)  # a state too many
    clean, _ = _kernel.automaton_piece_counts(
        tables.nextmove, tables.rowbase, tables.output, text[:-1], tables.scratch
    )
    assert clean  # features were counted before the bad step
    with pytest.raises(ValueError, match="outside the table"):
        _kernel.automaton_piece_counts(
            nextmove, tables.rowbase, tables.output, text, tables.scratch
        )
    assert not tables.scratch.any()
    output = tables.output.copy()
    output[output >= 0] = len(tables.scratch)  # a feature too many
    with pytest.raises(ValueError, match="outside the counts"):
        _kernel.automaton_piece_counts(
            tables.nextmove, tables.rowbase, output, text, tables.scratch
        )
    assert not tables.scratch.any()


@needs_walk
def test_the_warm_up_is_the_automatons_depth(tables: language._Tables) -> None:
    """Every state of py3langid's automaton is reached from the start in at most
    ``_WARM_UP`` bytes, and some only in that many: a piece begun that early is in the
    one walk's state (fewer would walk pieces again, more would read bytes for nothing)."""
    states = len(tables.output)
    reached = np.zeros(states, dtype=bool)
    reached[0] = True
    frontier, depth = np.zeros(1, dtype=np.int64), 0
    while True:
        moves = (tables.rowbase[frontier][:, None] + np.arange(256)).ravel()
        new = np.zeros(states, dtype=bool)
        new[tables.nextmove[moves]] = True
        new &= ~reached
        if not new.any():
            break
        reached |= new
        frontier, depth = np.flatnonzero(new), depth + 1
    assert reached.all()
    assert depth == language._WARM_UP


@needs_walk
def test_a_move_outside_the_tables_in_a_later_piece(tables: language._Tables) -> None:
    """A text walked in pieces meets the bad move where the one walk does: an error, the
    counts zero again; the bytes before it count as before."""
    text = ("the quick brown fox jumps over the lazy dog " * 8).encode()
    state = 0
    for byte in text[:-1]:
        state = int(tables.nextmove[tables.rowbase[state] + byte])
    nextmove = tables.nextmove.copy()
    nextmove[tables.rowbase[state] + text[-1]] = len(tables.output)
    for warm_up in (0, 1, language._WARM_UP):
        with pytest.raises(ValueError, match="outside the table"):
            _kernel.automaton_piece_counts(
                nextmove, tables.rowbase, tables.output, text, tables.scratch, warm_up
            )
        assert not tables.scratch.any()
    with pytest.raises(ValueError, match="no bytes or more"):
        _kernel.automaton_piece_counts(
            tables.nextmove, tables.rowbase, tables.output, text, tables.scratch, -1
        )


@pytest.mark.skipif(not KERNEL, reason="needs the compiled kernel")
def test_the_kernels_half_singles_are_numpys_conversion() -> None:
    """The rows the scoring takes from the half-precision table, converted by the kernel,
    are numpy's ``astype(float32)`` to the bit: every half-precision value (zeros,
    subnormals, normals, infinities; NaNs stay NaNs, whose payloads a hardware conversion
    may quieten), in a few orders and lengths (the compiler's vector loop and its
    remainder), and none."""
    every = np.arange(1 << 16, dtype=np.uint16)
    for half in (every, every[::-1].copy(), every[5:12].copy(), every[:0]):
        converted = np.frombuffer(_kernel.half_singles(half), dtype=np.float32)
        expected = half.view(np.float16).astype(np.float32)
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(converted), nan)
        assert np.array_equal(converted[~nan].view(np.uint32), expected[~nan].view(np.uint32))


@needs_walk
def test_tables_the_walk_cannot_read_safely_are_refused() -> None:
    identifier = language._identifier()
    args = (identifier.nb_ptc, identifier.nb_pc, identifier.nb_classes, identifier.tk_nextmove)
    features = identifier.nb_ptc.shape[0]
    beyond = [features if f >= 0 else f for f in identifier.tk_output]  # a feature too many
    assert language._tables(LanguageIdentifier(*args, beyond, tk_row=identifier.tk_row)) is None
    # py3langid 0.3's layout: a dict from state to features, one row per state
    older = dict(enumerate([(f,) for f in identifier.tk_output]))
    assert language._tables(LanguageIdentifier(*args, older, tk_row=identifier.tk_row)) is None
    good = LanguageIdentifier(*args, identifier.tk_output, tk_row=identifier.tk_row)
    assert language._tables(good) is not None


@needs_walk
def test_a_detector_answering_otherwise_keeps_its_own_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Raw scores instead of probabilities: the probes differ, py3langid classifies."""
    identifier = language._identifier()
    raw = LanguageIdentifier(
        identifier.nb_ptc, identifier.nb_pc, identifier.nb_classes, identifier.tk_nextmove,
        identifier.tk_output, tk_row=identifier.tk_row,
    )  # fmt: skip
    monkeypatch.setattr(language, "_identifier", lambda: raw)
    language._compiled_tables.cache_clear()
    try:
        assert language._compiled_tables(_kernel) is None
        text = "The quick brown fox jumps over the lazy dog. " * 10
        assert language.detect_language(text) == raw.classify(text[: language.SAMPLE_CHARS])
    finally:
        language._compiled_tables.cache_clear()


def test_without_the_detector_nothing_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(language, "_identifier", lambda: None)
    language._compiled_tables.cache_clear()
    try:
        text = "The quick brown fox jumps over the lazy dog. " * 10
        assert language.detect_language(text) is None
        assert language._compiled_tables(object()) is None
    finally:
        language._compiled_tables.cache_clear()
