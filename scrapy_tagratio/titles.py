"""Headings read against the page's titles, word for word (case, spacing and punctuation
aside): a heading that is the title, or begins or ends it, is the headline the title
carries with the site's name ("Headline | Site", "Site - Headline").

Shared by :mod:`.headline` (the headline left out of the text) and the default algorithm
(:func:`~scrapy_tagratio.algorithms.tagratio.headline_block`: the article's header zone),
so that both find the same headline.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["HEADLINE_TAGS", "names_title", "title_words"]

#: The headings a headline is written in (smaller ones are section headings).
HEADLINE_TAGS = frozenset({"h1", "h2", "h3"})

_WORD = re.compile(r"\w+")


def title_words(text: str | None) -> list[str]:
    """The words of ``text``, case folded and in normalization form C, so that a word
    written decomposed (a base letter and a combining mark, which ``\\w`` does not
    match) is the same word precomposed (None: none)."""
    return _WORD.findall(unicodedata.normalize("NFC", (text or "").casefold()))


def names_title(heading: list[str], title: list[str]) -> bool:
    """Whether the words ``heading`` are the words ``title``, or two or more of them that
    begin or end it."""
    if not heading:
        return False
    size = len(heading)
    return heading == title or (2 <= size < len(title) and heading in (title[:size], title[-size:]))
