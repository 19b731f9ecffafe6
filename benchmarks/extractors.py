"""Named text extractors for the benchmark scripts: ours, the full-text baseline and peers.

A spec names one extractor:

* an algorithm of :data:`scrapy_tagratio.ALGORITHMS` (``cectd``), optionally with parameters
  after a colon (``cetr:clustering=threshold,sigma=2``; values read as int, float,
  true/false/none, else text);
* ``fulltext``: all visible text of the page (``Document.full_text``), the baseline;
* the peers, each as its authors use it: ``trafilatura``
  (``trafilatura.extract(html, include_comments=False, include_tables=True)`` on the page
  bytes, the configuration of its own published benchmark; its defaults keep comments),
  ``readability`` (readability-lxml ``Document(html).summary()``, its HTML turned into text
  with block elements as line breaks), ``justext`` (every paragraph jusText
  does not class as boilerplate). jusText needs a stop-word list: the language is guessed as
  the stop-list among jusText's 100 that covers most words of the page's paragraphs, English
  when no stop word is found. A fixed language would cripple it on the non-English pages
  (most of trafilatura-eval is German), and the guess reads nothing but jusText's own lists.

Every extractor is a function ``(html_bytes, url) -> text``; an extractor may raise, and the
caller decides what that means (the accuracy rule: empty text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from typing import Any

from scrapy_tagratio import ALGORITHMS, extract
from scrapy_tagratio.algorithms import get_algorithm
from scrapy_tagratio.document import Document, strip_tags

__all__ = ["BASELINE", "PEERS", "Extractor", "make_extractor", "parse_spec"]

Extractor = Callable[[bytes, "str | None"], str]
#: The peers ``--peers`` adds, in table order.
PEERS = ("trafilatura", "readability", "justext")
BASELINE = "fulltext"


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"cetr:clustering=threshold"`` -> ``("cetr", {"clustering": "threshold"})``.

    Raises ValueError naming the problem for an unknown name or a malformed parameter.
    """
    name, _, rest = spec.partition(":")
    params: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"bad parameter {item!r} in {spec!r}: write name=value")
        params[key.strip()] = _value(value.strip())
    if name in (BASELINE, *PEERS):
        if params:
            raise ValueError(f"{name} takes no parameters")
    elif name not in ALGORITHMS:
        known = ", ".join([*sorted(ALGORITHMS), BASELINE, *PEERS])
        raise ValueError(f"unknown extractor {name!r}; choose from: {known}")
    else:
        get_algorithm(name).with_params(**params)  # ExtractionError names a bad parameter
    return name, params


def _full_text(html: bytes, url: str | None) -> str:
    return Document.from_input(html, url=url).full_text


def _trafilatura(html: bytes, url: str | None) -> str:
    import trafilatura

    # The configuration of trafilatura's own published benchmark: its defaults keep
    # comments, which no gold text of these sets holds.
    return trafilatura.extract(html, include_comments=False, include_tables=True) or ""


def _readability(html: bytes, url: str | None) -> str:
    from readability import Document as ReadabilityDocument

    return strip_tags([ReadabilityDocument(html).summary()])


@cache
def _stopword_languages() -> dict[str, tuple[str, ...]]:
    """Stop word -> the jusText languages whose list has it."""
    import justext

    index: dict[str, list[str]] = {}
    for language in sorted(justext.get_stoplists()):
        for word in justext.get_stoplist(language):
            index.setdefault(word, []).append(language)
    return {word: tuple(languages) for word, languages in index.items()}


def guess_stoplist_language(words: list[str]) -> str:
    """The jusText language whose stop list covers most of ``words``; English if none."""
    index = _stopword_languages()
    hits: Counter[str] = Counter()
    for word in words:
        hits.update(index.get(word.lower(), ()))
    return hits.most_common(1)[0][0] if hits else "English"


def _justext(html: bytes, url: str | None) -> str:
    import justext
    from justext import core

    dom = core.preprocessor(core.html_to_dom(html))
    paragraphs = core.ParagraphMaker.make_paragraphs(dom)
    words = [w for p in paragraphs for w in p.text.split()]
    stoplist = justext.get_stoplist(guess_stoplist_language(words))
    core.classify_paragraphs(paragraphs, stoplist)
    core.revise_paragraph_classification(paragraphs)
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


_NAMED: dict[str, Extractor] = {
    BASELINE: _full_text,
    "trafilatura": _trafilatura,
    "readability": _readability,
    "justext": _justext,
}


def make_extractor(spec: str, *, time_budget: float | None = None) -> Extractor:
    """The extractor a spec names; ``time_budget`` (seconds) applies to our algorithms."""
    name, params = parse_spec(spec)
    if name in _NAMED:
        return _NAMED[name]

    def run(html: bytes, url: str | None) -> str:
        return extract(html, algorithm=name, url=url, time_budget=time_budget, **params).text

    return run
