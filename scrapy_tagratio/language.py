"""The language of a page: its declarations, checked against its text.

Pages declare a language in ``<html lang>``, ``<meta http-equiv="content-language">``,
``og:locale``, Dublin Core and JSON-LD ``inLanguage``, and a fair share declare the wrong
one (a CMS template's default ``en`` on a German site). When the optional detector is
installed (``pip install scrapy-tagratio[lang]``: py3langid, a numpy port of langid.py,
Lui and Baldwin 2012, whose model ships inside the package) the declaration is checked
against the extracted text: a confident disagreement is decided by the text. Without it,
the first declaration is taken as given.

Most of the detector's time is langid's feature extraction, a walk of a byte automaton
over the sample, one Python step per byte. Where pages are read by the compiled kernel,
the kernel walks it (:func:`~scrapy_tagratio._kernel.automaton_piece_counts`: in pieces
side by side, as each byte's step waits on a cache miss in a 39 MB table) over the
identifier's own tables and the scores are computed as py3langid 0.4 computes them
(``LanguageIdentifier._decide``, normalised probabilities), so the language and
probability are the same floats; tables of another layout or range, or a py3langid whose
answers differ on the probe texts (:data:`_PROBES`), leave its own call in place, as does
the pure-Python path.
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from .reader import active_kernel

__all__ = [
    "CONFIDENT",
    "MIN_TEXT_CHARS",
    "SAMPLE_CHARS",
    "bcp47",
    "detect_language",
    "detector_available",
    "same_language",
]

#: Characters of text the detector reads (a few sentences settle langid's estimate; its
#: byte loop is the cost).
SAMPLE_CHARS = 600
#: Text shorter than this is not enough to overrule a declaration.
MIN_TEXT_CHARS = 200
#: Probability (normalised over the model's languages) from which the text overrules a
#: declaration.
CONFIDENT = 0.9

#: Bytes of text that settle the state of py3langid 0.4's automaton (its longest
#: feature: no state is further from the start). The kernel walks a sample in pieces side
#: by side, each begun this many bytes early
#: (:func:`~scrapy_tagratio._kernel.automaton_piece_counts`); a piece found in another
#: state is walked again, so a model with longer features gives the same counts.
_WARM_UP = 6

#: Languages the detector reports under their macrolanguage (langid's ``no`` covers
#: Bokmål and Nynorsk; ``ms`` Malay and Indonesian are told apart).
_MACROLANGUAGES = {"nb": "no", "nn": "no"}

_TAG = re.compile(r"^([A-Za-z]{2,3})(?:[-_]([A-Za-z]{4}))?(?:[-_]([A-Za-z]{2}|\d{3}))?\b")


def bcp47(value: str | None) -> str | None:
    """A declared language as a BCP 47 tag (``en_us`` -> ``en-US``, ``zh-hant-tw`` ->
    ``zh-Hant-TW``); None for values that are not language tags (``x-default``, ``*``)."""
    match = _TAG.match((value or "").strip())
    if match is None:
        return None
    language, script, region = match.groups()
    parts = [language.lower()]
    if script:
        parts.append(script.title())
    if region:
        parts.append(region.upper())
    return "-".join(parts)


def same_language(tag: str, detected: str) -> bool:
    """A BCP 47 tag and a detected ISO 639-1 code name the same language (``nb-NO`` and
    ``no`` do)."""
    primary = tag.split("-")[0].lower()
    return _MACROLANGUAGES.get(primary, primary) == _MACROLANGUAGES.get(detected, detected)


@cache
def _identifier() -> Any:
    """py3langid's identifier with normalised probabilities (its model loads once, in
    under a second), or None when the package is not installed."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


class _Tables(NamedTuple):
    """py3langid 0.4's model as the kernel's walk reads it, checked in range."""

    nextmove: np.ndarray  # uint32: the next state, at rowbase[state] + byte
    rowbase: np.ndarray  # int64: per state, the offset of its row in nextmove
    output: np.ndarray  # int32: per state, the feature it outputs, or -1
    scratch: np.ndarray  # int32: one zero per feature (the walk's counts)
    ptc: np.ndarray  # per feature and language, log P(feature | language)
    pc: np.ndarray  # per language, log P(language)
    classes: tuple[str, ...]
    aliases: tuple[tuple[int, int], ...]  # (first column, later column) of a repeated label


#: Texts on which the compiled walk's answers must be py3langid's, to the bit, before it
#: is used: scripts of several widths, a capitalised text (lowered by langid), accents
#: in decomposed form (NFC-normalised), and nothing the automaton knows.
_PROBES = (
    "The quick brown fox jumps over the lazy dog, and the dog does not mind at all.",
    "Der schnelle braune Fuchs springt über den faulen Hund; Größe zählt nicht.",
    "DIE ZEITUNG BERICHTET ÜBER DIE WAHLEN IN DEN LÄNDERN DES NORDENS",
    "Le cafe\u0301 est fermé le dimanche, mais la boulangerie reste ouverte.",
    "日本語の文章は、ひらがなとカタカナと漢字で書かれています。",
    "Москва — столица России, крупнейший по численности населения город страны.",
    "\U0001f600\U0001f600 \x00\x01",
    "",
)


def _tables(identifier: Any) -> _Tables | None:
    """The identifier's tables for the kernel's walk, or None when they are not py3langid
    0.4's layout (rows of 256 next states shared between states, one feature or -1 per
    state) or anything in them is out of range (the walk reads them unchecked)."""
    try:
        moves, row_index = identifier.tk_nextmove, identifier.tk_row
        nextmove = np.frombuffer(moves, dtype=f"u{moves.itemsize}")
        rows = np.frombuffer(row_index, dtype=f"u{row_index.itemsize}")
        output = np.asarray(identifier.tk_output, dtype=np.int64)
        ptc, pc = np.asarray(identifier.nb_ptc), np.asarray(identifier.nb_pc)
        classes = tuple(str(label) for label in identifier.nb_classes)
    except (AttributeError, TypeError, ValueError):
        return None
    states, features = len(output), ptc.shape[0] if ptc.ndim == 2 else 0
    if (
        getattr(identifier, "min_confidence", None) is not None
        or nextmove.size == 0
        or nextmove.size % 256
        or len(rows) != states
        or ptc.shape != (features, len(classes))
        or pc.shape != (len(classes),)
        or int(nextmove.max()) >= states
        or int(rows.max()) >= nextmove.size // 256
        or int(output.max(initial=-1)) >= features
        or int(output.min(initial=-1)) < -1
    ):
        return None
    first: dict[str, int] = {}
    aliases = tuple(
        (first[label], column)
        for column, label in enumerate(classes)
        if first.setdefault(label, column) != column
    )
    return _Tables(
        nextmove=nextmove.astype(np.uint32, copy=False),
        rowbase=rows.astype(np.int64) << 8,
        output=output.astype(np.int32),
        scratch=np.zeros(features, dtype=np.int32),
        ptc=ptc,
        pc=pc,
        classes=classes,
        aliases=aliases,
    )


def _classify(tables: _Tables, kernel: Any, text: str) -> tuple[str, float]:
    """``text``'s language and probability as py3langid 0.4's ``classify`` gives them
    (normalised probabilities): upper-case text lowered, NFC, UTF-8; naive Bayes
    log-scores of the features' log-counts (Lui and Baldwin 2012, with py3langid's
    ``log1p``) scaled by one over the square root of the byte length, then normalised;
    the columns of a repeated label merged into its first."""
    if text.isupper():
        text = text.lower()
    data = unicodedata.normalize("NFC", text).encode("utf8", errors="surrogatepass")
    features, counts = kernel.automaton_piece_counts(
        tables.nextmove, tables.rowbase, tables.output, data, tables.scratch, _WARM_UP
    )
    if features:
        index = np.frombuffer(features, dtype=np.intp)
        weights = np.log1p(np.frombuffer(counts, dtype=np.float32))
        scores = weights @ _rows(tables, kernel, index) + tables.pc
    else:
        scores = np.zeros(len(tables.classes), dtype=np.float32)
    scores *= 1.0 / math.sqrt(len(data) or 1)
    np.exp(scores - scores.max(), out=scores)
    scores /= scores.sum()
    for first, later in tables.aliases:
        scores[first] += scores[later]
        scores[later] = 0.0
    best = int(scores.argmax())
    return tables.classes[best], float(scores[best])


def _rows(tables: _Tables, kernel: Any, index: np.ndarray) -> np.ndarray:
    """The rows ``index`` of ``tables.ptc``. py3langid keeps the table in half precision,
    and the product with the single-precision weights converts the rows it is given, one
    element at a time, before it multiplies: the kernel converts them instead
    (:func:`~scrapy_tagratio._kernel.half_singles`, the same floats), and the product is
    the same single-precision one."""
    rows = tables.ptc.take(index, axis=0)
    if rows.dtype != np.float16:
        return rows
    converted = kernel.half_singles(rows.view(np.uint16).ravel())
    return np.frombuffer(converted, dtype=np.float32).reshape(rows.shape)


@cache
def _compiled_tables(kernel: Any) -> _Tables | None:
    """The tables of ``kernel``'s walk, when the detector and tables of the layout it
    reads are there and it answers as py3langid does on every probe text."""
    identifier = _identifier()
    if identifier is None or not hasattr(kernel, "automaton_piece_counts"):
        return None
    tables = _tables(identifier)
    if tables is None:
        return None
    for probe in _PROBES:
        expected = identifier.classify(probe)
        if _classify(tables, kernel, probe) != (expected[0], float(expected[1])):
            return None
    return tables


def detector_available() -> bool:
    """Whether the optional language detector is installed."""
    return _identifier() is not None


def detect_language(text: str) -> tuple[str, float] | None:
    """The language of ``text`` (ISO 639-1) and its probability, or None without the
    detector or with too little text."""
    identifier, kernel = _identifier(), active_kernel()
    # The tables are made with the identifier (a crawl's warm-up page makes both).
    tables = _compiled_tables(kernel) if identifier is not None and kernel is not None else None
    if identifier is None or len(text) < MIN_TEXT_CHARS:
        return None
    sample = text[:SAMPLE_CHARS]
    if tables is not None:
        return _classify(tables, kernel, sample)
    language, probability = identifier.classify(sample)
    return str(language), float(probability)
