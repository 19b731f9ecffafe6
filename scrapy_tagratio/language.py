"""The language of a page: its declarations, checked against its text.

Pages declare a language in ``<html lang>``, ``<meta http-equiv="content-language">``,
``og:locale``, Dublin Core and JSON-LD ``inLanguage``, and a fair share declare the wrong
one (a CMS template's default ``en`` on a German site). When the optional detector is
installed (``pip install scrapy-tagratio[lang]``: py3langid, a numpy port of langid.py,
Lui and Baldwin 2012, whose model ships inside the package) the declaration is checked
against the extracted text: a confident disagreement is decided by the text. Without it,
the first declaration is taken as given.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import numpy as np

from .reader import active_kernel

__all__ = [
    "CONFIDENT",
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
    under a second), or None when the package is not installed. Where the compiled
    kernel reads pages, its automaton walk (:func:`_compiled_walk`) replaces langid's
    byte loop; the scores, and so the languages, are the same."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    return _compiled_walk(identifier) or identifier


def _compiled_walk(identifier: Any) -> Any:
    """``identifier`` as an instance whose feature count (``_raw_score``'s automaton walk,
    langid's hot loop) runs in the kernel's :func:`langid_visits` while a kernel is
    active (:func:`~.reader.active_kernel`), and in langid's own loop otherwise; None when
    this py3langid keeps its automaton in another layout (then langid runs as it is)."""
    cls = type(identifier)
    nextmove = getattr(identifier, "tk_nextmove", None)
    rowbase = getattr(identifier, "_rowbase", None)
    output = getattr(identifier, "tk_output", None)
    if not (
        callable(getattr(cls, "_raw_score", None))
        and callable(getattr(cls, "_sparse_score", None))
        and getattr(nextmove, "typecode", None) == "I"
        and isinstance(rowbase, list)
        and isinstance(output, list)
    ):
        return None

    class CompiledWalk(cls):  # type: ignore[misc, valid-type]
        __slots__ = ()  # langid's layout, so the loaded identifier can take this class

        def _raw_score(self, text: bytes) -> Any:
            kernel = active_kernel()
            walk = getattr(kernel, "langid_visits", None)
            if walk is None or not isinstance(text, bytes):
                return super()._raw_score(text)
            visits = walk(text, nextmove, rows, features, size)
            if not visits:  # langid's own fallback scores
                return super()._raw_score(text)
            return self._sparse_score(visits, self.nb_ptc)

    rows = np.asarray(rowbase, dtype=np.int64)
    features = np.asarray(output, dtype=np.int32)
    size = int(features.max()) + 1
    identifier.__class__ = CompiledWalk
    return identifier


def detector_available() -> bool:
    """Whether the optional language detector is installed."""
    return _identifier() is not None


def detect_language(text: str) -> tuple[str, float] | None:
    """The language of ``text`` (ISO 639-1) and its probability, or None without the
    detector or with too little text."""
    identifier = _identifier()
    if identifier is None or len(text) < MIN_TEXT_CHARS:
        return None
    language, probability = identifier.classify(text[:SAMPLE_CHARS])
    return str(language), float(probability)
