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
    under a second), or None when the package is not installed."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


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
