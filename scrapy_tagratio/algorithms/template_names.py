"""The vocabulary of web templates: what an element's class, id, role and itemprop words name.

An element's *hint* (its class, id, role and itemprop words, lower case: the node table's
:attr:`~scrapy_tagratio.nodetable.NodeTable.hint`) often says what its template put there:
a boilerplate region (:data:`BOILERPLATE_HINT`: a sidebar, a share bar, a menu), the
article's body (:data:`CONTENT_HINT`, which overrules a boilerplate word, and
:data:`BODY_HINT`, the vocabulary trafilatura's ``BODY_XPATH`` looks for first), a comment
(:data:`COMMENT_HINT`), a comment thread's container (:data:`THREAD_HINT`) or the
article's notes (:data:`NOTES_HINT`). Class words are the vocabulary of web templates,
English whatever the page's language. They are read as components, after "-" and "_"
become spaces: "menu-item" and "sd_sharing" name a menu and a share bar, "update" does
not name a date.

Each vocabulary but the body's is tested by a :class:`~scrapy_tagratio.cleaning.HintTest`
(:data:`BOILERPLATE_NAMES`, :data:`COMMENT_NAMES`, :data:`THREAD_NAMES`,
:data:`NOTES_NAMES`): with the compiled kernel, most hints are ruled out by their words in
one C pass first. The body's names are found in one C pass too (the kernel's
``word_pairs``). :func:`hint_flags` and :func:`body_names` read each distinct hint of a
page once.

A hint may also name a section after its heading, as docutils, Sphinx and Pandoc do
(``<div class="section" id="sharing-with-a-single-developer">``): such an id says what the
section is about, not what the template put there (:func:`heading_slug_hints`,
:func:`slugged_furniture`).

What the default algorithm decides from these names (page furniture, comment threads,
the article's notes and its end) is :mod:`.tagratio`'s.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..cleaning import HintTest, by_ascii_letter
from ..document import Document, NodeTable
from ..reader import active_kernel
from .base import HEADING_TAGS

__all__ = [
    "BODY_HINT",
    "BODY_NAME_LIST",
    "BODY_PAIRS",
    "BOILERPLATE_HINT",
    "BOILERPLATE_NAMES",
    "BOILERPLATE_WORDS",
    "COMMENT_HINT",
    "COMMENT_NAMES",
    "COMMENT_WHOLE_WORDS",
    "COMMENT_WORDS",
    "CONTENT_HINT",
    "NOTES_HINT",
    "NOTES_NAMES",
    "NOTES_WORDS",
    "SLUG_WORDS",
    "THREAD_HINT",
    "THREAD_NAMES",
    "body_names",
    "comment_forms",
    "heading_slug_hints",
    "hint_flags",
    "slugged_furniture",
]

#: Class/id/role words of boilerplate regions (the vocabulary of web templates, which is
#: English whatever the page's language): a hint names such a region when one of its
#: words starts with one of these (regular expressions, each starting with a letter).
BOILERPLATE_WORDS = (
    "comment", "share", "sharing", "social", "related", "recommend", "newsletter", "subscri",
    "sidebar", "widget", "footer", "breadcrumb", "nav", "menu", "promo", "sponsor", "advert",
    "banner", "cookie", "consent", "popup", "modal", "paywall", "tags", "taglist", "author",
    "bio", "byline", "pagination", "pager", "complementary", "contentinfo", "disqus",
    "outbrain", "taboola", "caption", "credit", "copyright", "meta", "date", "rating",
    "toolbar", "overlay", "login", "signup", "tweet", "twitter", "instagram", "embed",
    "legend", "upsell", "affiliate", "donat", "flyout", "likes", "rss", r"ads?\b",
)  # fmt: skip


def _by_first_letter(words: tuple[str, ...]) -> str:
    """The alternation of ``words`` grouped by their first letter: Python's ``re`` tries
    the branches of an alternation one by one, so grouped, a word that starts none of
    them fails after one test per letter instead of one per word (the hints of a page
    are the hot loop of :func:`hint_flags`)."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:])
    return "|".join(f"{letter}(?:{'|'.join(rests)})" for letter, rests in groups.items())


BOILERPLATE_HINT = re.compile(rf"\b(?:{_by_first_letter(BOILERPLATE_WORDS)})")


#: :data:`BOILERPLATE_HINT` for the kernel's word test (``starts_words``, the same
#: answers): its words as prefixes of a word, and ``ads?\b``'s two as whole words.
_BOILERPLATE_PREFIXES = by_ascii_letter(tuple(w for w in BOILERPLATE_WORDS if w.isalpha()))
_BOILERPLATE_WHOLE = by_ascii_letter(("ad", "ads"))
#: Hints that mark the article body itself and overrule the above.
CONTENT_HINT = re.compile(r"\b(?:article {0,2}body|post content|entry content)\b")
#: Class/id/itemprop words that name the element holding the article's body, read after
#: "-" and "_" become spaces (trafilatura's ``BODY_XPATH``, its first and most specific
#: vocabulary: ``entry-content``, ``post-body``, ``article__content``, ``articleBody``...,
#: and ``story-body``), as pairs: a word starting with the first word, white space or
#: nothing, and one of its second words ending a word. Template vocabulary, English
#: whatever the page's language.
BODY_PAIRS = (
    ("article", ("body", "text", "content", "container")),
    ("post", ("body", "text", "content", "entry", "inner")),
    ("entry", ("content",)),
    ("text", ("content",)),
    ("page", ("content",)),
    ("art", ("content",)),
    ("story", ("body",)),
    ("body", ("text",)),
)
_BODY_ALTERNATION = "|".join(rf"{first}\s*(?:{'|'.join(seconds)})" for first, seconds in BODY_PAIRS)
BODY_HINT = re.compile(rf"\b(?:{_BODY_ALTERNATION})\b")
#: The body names (:func:`_body_name`) in the order of :data:`BODY_PAIRS`: the numbers of
#: the kernel's ``word_pairs`` and of :func:`body_names`.
BODY_NAME_LIST = tuple(first + second for first, seconds in BODY_PAIRS for second in seconds)
_BODY_NUMBERS = {name: number for number, name in enumerate(BODY_NAME_LIST)}
_BODY_FIRSTS = tuple(first for first, _ in BODY_PAIRS)
_BODY_SECONDS = tuple(seconds for _, seconds in BODY_PAIRS)
#: Class/id words that name a comment (template vocabulary, English whatever the page's
#: language): a repeated item (:attr:`~scrapy_tagratio.structure.Structures.repeated`)
#: so named counts as a comment of a thread even where the structure test misses it
#: (a thread whose items have no meta block, or whose replies nest the bodies). A hint
#: names a comment when one of its words (read after "-" and "_" become spaces) starts
#: with one of :data:`COMMENT_WORDS` or is one of :data:`COMMENT_WHOLE_WORDS`
#: ("replies-count" names one, "replyto" does not).
COMMENT_WORDS = ("comment", "disqus")
COMMENT_WHOLE_WORDS = ("reply", "replies")
COMMENT_HINT = re.compile(rf"\b(?:{'|'.join(COMMENT_WORDS)}|(?:{'|'.join(COMMENT_WHOLE_WORDS)})\b)")
#: Class/id words that name the article's notes: its references, footnotes, endnotes or
#: bibliography (Wikipedia's ``reflist``, a blog's ``footnotes``), read after "-" and "_"
#: become spaces. Template vocabulary, English whatever the page's language.
#: Plural words only: a singular "reference" is a CMS's link field (Drupal's
#: ``field--type-entity-reference``), a singular "footnote" a credit line.
NOTES_WORDS = ("references", "reflist", "footnotes", "endnotes", "bibliography")
NOTES_HINT = re.compile(rf"\b(?:{'|'.join(NOTES_WORDS)})\b")
#: Class/id words that name a comment thread's container
#: (:func:`~.tagratio.named_comments`), read as :data:`COMMENT_HINT`: whole words only,
#: since a container so named is not an item and its name must say "the comments", not
#: "commentary" (an article type) or "commented" (a post that has comments).
THREAD_HINT = re.compile(r"\b(?:comments?|comment ?list|commentlist|disqus ?thread)\b")


@lru_cache(maxsize=1 << 16)
def _body_name(hint: str) -> str:
    """The body name the hint holds (:data:`BODY_HINT`), its words joined and lower case:
    ``article-body``, ``article__body article-body--wide`` and ``articleBody`` all give
    ``articlebody``, one body whatever modifiers the template adds; ``""`` for none.
    Cached across pages as :func:`_names_boilerplate` is."""
    # Every name of BODY_HINT holds one of these words: a hint without them (six in seven of
    # the pool's distinct hints) is not read further, as the regular expression costs more
    # than these tests (written out: a generator over a tuple of them cost twice as much).
    if not (
        "body" in hint
        or "content" in hint
        or "text" in hint
        or "entry" in hint
        or "inner" in hint
        or "container" in hint
    ):
        return ""
    match = BODY_HINT.search(hint.replace("-", " ").replace("_", " "))
    return "" if match is None else "".join(match.group().split())


def _body_numbers(hints: list[str], read: np.ndarray) -> np.ndarray:
    """Per hint of ``hints`` that ``read`` indexes, the number of its body name
    (:func:`_body_name`) in :data:`BODY_NAME_LIST`, -1 for none: with the compiled kernel
    in one C pass over them (``word_pairs`` of :data:`BODY_PAIRS`, the same names), else
    a call of :func:`_body_name` per hint."""
    kernel = active_kernel()
    if kernel is not None:
        found = kernel.word_pairs(
            hints, read.astype(np.int64, copy=False), _BODY_FIRSTS, _BODY_SECONDS
        )
        return np.frombuffer(found, dtype=np.int64)
    names = (_body_name(hints[i]) for i in read.tolist())
    return np.fromiter((_BODY_NUMBERS.get(name, -1) for name in names), np.int64, len(read))


@lru_cache(maxsize=1 << 16)
def _names_boilerplate(hint: str) -> bool:
    """The hint names a boilerplate region, and not the article body (which overrules).

    Class words are read as components: "menu-item" and "sd_sharing" name a menu and a
    share bar, "update" does not name a date; a class that names the element's state or a
    page builder's wrapper (:data:`_NOT_REGIONS`) is not read. Cached across pages: a
    site's pages repeat their class names, so on a crawl most lookups are hits. (With the
    compiled kernel, :data:`BOILERPLATE_NAMES` finds the words by its word test and calls
    this only for the hints that hold one.)
    """
    words = _NOT_REGIONS.sub(" ", hint).replace("-", " ").replace("_", " ")
    return BOILERPLATE_HINT.search(words) is not None and _not_article_body(hint)


#: Class names that hold a boilerplate word without naming a boilerplate region: a state
#: modifier (``has-sidebar``, ``no-comments``, ``o-section--has-ads``: the element holds or
#: lacks such a region; the rest of the class is not read) and a page builder's element
#: wrapper (Elementor's ``elementor-widget-container``: every heading and paragraph of its
#: pages is a "widget"; the words after it are read, ``elementor-widget-nav-menu`` is a
#: menu).
#: Written as ``(?:\b|(?<=_))(?:has|no|with|without)[-_]\S*|\belementor[-_]widget``
#: reads, with each word's first letter before the test of what precedes it (a letter not
#: preceded by a word character other than "_": a word's start or after "_"; for
#: "elementor", by none), so that the expression looks for those letters first: the
#: same matches (the pool's 241,409 distinct hints and 300,000 random strings of these
#: words and separators), in half the time on long class lists.
_NOT_REGIONS = re.compile(
    r"(?:h(?<![^\W_]h)as|n(?<![^\W_]n)o|w(?<![^\W_]w)ith(?:out)?)[-_]\S*"
    r"|e(?<!\we)lementor[-_]widget"
)


def _not_article_body(hint: str) -> bool:
    """The hint does not name the article body (:data:`CONTENT_HINT`), which overrules a
    boilerplate word. Every match holds "body" or "content", tested first."""
    return not (
        ("body" in hint or "content" in hint)
        and CONTENT_HINT.search(hint.replace("-", " ").replace("_", " ")) is not None
    )


def _names_comment(hint: str) -> bool:
    """The hint names a comment (:data:`COMMENT_HINT`). Every match holds one of the
    three words tested first, which rule out most hints at the cost of a substring
    search each (the regular expression costs several times that)."""
    return ("comment" in hint or "repl" in hint or "disqus" in hint) and (
        COMMENT_HINT.search(hint.replace("-", " ").replace("_", " ")) is not None
    )


def _names_thread(hint: str) -> bool:
    """The hint names a comment thread's container (:data:`THREAD_HINT`)."""
    return ("comment" in hint or "disqus" in hint) and (
        THREAD_HINT.search(hint.replace("-", " ").replace("_", " ")) is not None
    )


def _names_notes(hint: str) -> bool:
    """The hint names the article's notes (:data:`NOTES_HINT`); as :func:`_names_comment`,
    a substring every match holds is tested first."""
    return ("ref" in hint or "note" in hint or "biblio" in hint) and (
        NOTES_HINT.search(hint.replace("-", " ").replace("_", " ")) is not None
    )


@lru_cache(maxsize=1 << 16)
def _holding_boilerplate_words(hint: str) -> bool:
    """:func:`_names_boilerplate` of a hint known to hold one of :data:`BOILERPLATE_HINT`'s
    words (the kernel's word test found it): named unless it names the article body, or
    has a class that names no region (:data:`_NOT_REGIONS`, rare), where the whole test
    decides whether a word lies outside such classes. Cached across pages, as
    :func:`_names_boilerplate` is; every match of :data:`_NOT_REGIONS` holds "has", "no-",
    "no_", "with" or "elementor", tested first (the expression costs several times that).
    The classes naming no region are taken out in the same pass that finds them, and the
    rest read by the kernel's word test (:func:`_boilerplate_words`)."""
    if "has" in hint or "no-" in hint or "no_" in hint or "with" in hint or "elementor" in hint:
        rest, regions = _NOT_REGIONS.subn(" ", hint)
        if regions:  # _names_boilerplate(hint), its expression read once
            return _boilerplate_words(rest) and _not_article_body(hint)
    return _not_article_body(hint)


_FIRST = np.zeros(1, dtype=np.int64)  # the index of a list of one text


def _boilerplate_words(text: str) -> bool:
    """``text`` holds a word of :data:`BOILERPLATE_HINT` (its ``search`` after "-" and
    "_" became spaces): with the compiled kernel, its word test (``starts_words``, the
    same answers), which reads an Elementor page's long class lists in a fraction of the
    expression's several microseconds."""
    kernel = active_kernel()
    if kernel is None:
        return BOILERPLATE_HINT.search(text.replace("-", " ").replace("_", " ")) is not None
    found = kernel.starts_words([text], _FIRST, _BOILERPLATE_PREFIXES, _BOILERPLATE_WHOLE)
    return bool(found[0])


#: The hint names a boilerplate region (:func:`_names_boilerplate`): the kernel's words
#: are :data:`BOILERPLATE_HINT`'s own, and a hint holding them is named unless they lie
#: only in a class that names no region (:data:`_NOT_REGIONS`) or it names the article
#: body (:func:`_holding_boilerplate_words`). Each of those holds one of the doubts as a
#: whole word: a class naming no region "has", "no", "with", "without" or "elementor"
#: (followed by "-" or "_"), the article body's names "body", "content" or "articlebody"
#: (their last word); the kernel names the other hints (nine in ten) without a Python call.
BOILERPLATE_NAMES = HintTest(
    _names_boilerplate,
    _BOILERPLATE_PREFIXES,
    _BOILERPLATE_WHOLE,
    True,
    _holding_boilerplate_words,
    by_ascii_letter(
        ("has", "no", "with", "without", "elementor", "body", "content", "articlebody")
    ),
)
#: The hint names a comment (:data:`COMMENT_HINT`; the words are the test).
COMMENT_NAMES = HintTest(
    _names_comment, by_ascii_letter(COMMENT_WORDS), by_ascii_letter(COMMENT_WHOLE_WORDS), True
)
#: The hint names a comment thread's container (:data:`THREAD_HINT`): every name starts a
#: word with "comment" or "disqus".
THREAD_NAMES = HintTest(_names_thread, by_ascii_letter(("comment", "disqus")))
#: The hint names the article's notes (:data:`NOTES_HINT`; the words are the test).
NOTES_NAMES = HintTest(_names_notes, by_ascii_letter(()), by_ascii_letter(NOTES_WORDS), True)


def hint_flags(
    nodes: NodeTable, where: np.ndarray | None = None, test: HintTest = BOILERPLATE_NAMES
) -> np.ndarray:
    """Boolean per node: its class/id/role/itemprop names a boilerplate region (and not
    the article body), or what ``test`` tests. Each distinct hint of the page is read
    once (:attr:`NodeTable.hint_codes`); with ``where`` (a boolean mask), only the hints
    of the nodes it marks are read, the others are False (the tests of an uncached hint
    are most of this function's time; with the compiled kernel, most hints are ruled out
    by their words in one C pass first: :class:`~scrapy_tagratio.cleaning.HintTest`)."""
    codes, hints, read = _hints_read(nodes, where)
    flags = test.named(hints, read)[codes]
    return flags if where is None else flags & where


def _hints_read(
    nodes: NodeTable, where: np.ndarray | None
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The node table's :attr:`~NodeTable.hint_codes` (per node, its hint's number; the
    hints by number) and the numbers of the hints of the nodes ``where`` marks (all
    nodes where None), each once."""
    codes, hints = nodes.hint_codes
    present = np.zeros(len(hints), dtype=bool)
    present[codes if where is None else codes[where]] = True
    return codes, hints, present.nonzero()[0]  # np.flatnonzero's wrapper: 0.7 us a call


def comment_forms(nodes: NodeTable) -> np.ndarray:
    """Boolean per node: it is or lies in a ``form`` whose class or id names a comment
    (:data:`COMMENT_HINT`), as WordPress's ``form#commentform``: the form readers write
    their comments in, never the article."""
    forms = nodes.tag_mask(("form",))
    if forms.any():
        forms = hint_flags(nodes, forms, COMMENT_NAMES)
    return nodes.with_descendants(forms) if forms.any() else forms


def body_names(nodes: NodeTable, where: np.ndarray) -> np.ndarray:
    """Per node that ``where`` marks, the number of the body name its hint holds
    (:func:`_body_name`, an index into :data:`BODY_NAME_LIST`), -1 for none and for the
    other nodes: each distinct hint of the nodes marked read once (:func:`_body_numbers`,
    in one C pass with the compiled kernel)."""
    codes, hints, read = _hints_read(nodes, where)
    numbers = np.full(len(hints), -1, dtype=np.int8)  # BODY_NAME_LIST: under 128 names
    numbers[read] = _body_numbers(hints, read)
    return np.where(where, numbers[codes], np.int8(-1))


#: A run of letters and digits (a word of a slug: "_" separates words there).
_SLUG_WORD = re.compile(r"[^\W_]+")


def _slug(text: str) -> str:
    """``text`` as a generator's section id: lower case, every run of other characters
    than letters and digits one hyphen, none at either end."""
    return "-".join(_SLUG_WORD.findall(text.lower()))


#: The fewest words a section's slug must join for the section to be told by it
#: (:func:`slugged_furniture`): a template's names join two or three words as often
#: ("related-posts", "widget-area-sidebar"), a heading's more.
SLUG_WORDS = 4
#: A word of a hint that joins :data:`SLUG_WORDS` words or more: ``SLUG_WORDS - 1`` of the
#: separators "-" and "_" in one run without white space, found from the first of them. (A
#: pattern that may start at any character, ``[^\s_-]*(?:[-_][^\s_-]*){3}``, finds the same
#: words, but runs over the rest of a word from each of its characters: quadratic in the
#: word's length, and most of :func:`heading_slug_hints`'s time.)
_LONG_SLUG = re.compile(rf"[-_](?:[^\s_-]*[-_]){{{SLUG_WORDS - 2}}}")


def _words_joined(word: str) -> int:
    """How many words ``word`` joins by hyphens and underscores."""
    return word.count("-") + word.count("_") + 1


def _may_slug(hint: str, heading_chars: int) -> bool:
    """A word of ``hint`` may be the slug of a heading of ``heading_chars`` characters: it
    joins :data:`SLUG_WORDS` words or more, and the heading is as long or longer by up to
    a half (the punctuation and spaces the slug leaves out or merges). The lengths are
    compared first: most words are far shorter than a heading."""
    for word in hint.split():
        if len(word) <= heading_chars <= 1.5 * len(word) + 2 and _words_joined(word) >= SLUG_WORDS:
            return True
    return False


def heading_slug_hints(document: Document, candidates: np.ndarray) -> list[str | None]:
    """Per node of ``candidates`` (indices): its hint without its words that are the
    slug of its first heading's text (:func:`_slug`) and join :data:`SLUG_WORDS` words or
    more, or None when it holds no such word, as docutils, Sphinx and Pandoc name each section
    after its heading (``<div class="section" id="sharing-with-a-single-developer">``):
    such an id says what the section is about, not what the template put there. Only
    the headings whose length fits a word of the hint (:func:`_may_slug`) are read."""
    nodes = document.nodes
    found: list[str | None] = [None] * len(candidates)
    # The hints with a word that joins enough words, each distinct hint read once (a search
    # per hint costs less than one scan of them all joined and the bisection that finds
    # which hint a match lies in: 10 against 14 us on the main containers' paths of the
    # pool, 31 against 52 on the furniture's nodes).
    codes, distinct = nodes.hint_codes
    search = _LONG_SLUG.search
    long_words = [code for code in set(codes[candidates].tolist()) if search(distinct[code])]
    if not long_words:
        return found
    wanted = np.zeros(len(distinct), dtype=bool)
    wanted[long_words] = True
    joined = np.flatnonzero(wanted[codes[candidates]]).tolist()
    headings = nodes.text_blocks[nodes.block_tag_mask(HEADING_TAGS)]  # with text of their own
    if not headings.size:
        return found
    chosen = candidates[joined]
    after = np.minimum(np.searchsorted(headings, chosen, side="right"), len(headings) - 1)
    first = headings[after]
    own = (first > chosen) & (first < nodes.end[chosen])
    lengths = nodes.block_chars[first].tolist()
    fitting = [
        i for i in np.flatnonzero(own).tolist() if _may_slug(nodes.hint[chosen[i]], lengths[i])
    ]
    if not fitting:
        return found
    texts = document.few_block_texts(first[fitting])
    for i, text in zip(fitting, texts, strict=True):
        slug, hint = _slug(text), nodes.hint[chosen[i]].split()
        rest = [word for word in hint if _slug(word) != slug]
        if _words_joined(slug) >= SLUG_WORDS and len(rest) < len(hint):
            found[joined[i]] = " ".join(rest)
    return found


def slugged_furniture(document: Document, named: np.ndarray, main_path: np.ndarray) -> np.ndarray:
    """Boolean per node: of those ``named`` as page furniture by their hints, those named
    so only through the slug of their section's heading (:func:`heading_slug_hints`), on
    a page whose main container is or lies in a section named after its heading too
    (``main_path``: the container and its ancestors): the generator's convention, looked
    for first (a few nodes)."""
    slugged = np.zeros(len(document.nodes), dtype=bool)
    if all(rest is None for rest in heading_slug_hints(document, np.flatnonzero(main_path))):
        return slugged
    candidates = np.flatnonzero(named)
    for node, rest in zip(
        candidates.tolist(), heading_slug_hints(document, candidates), strict=True
    ):
        slugged[node] = rest is not None and not BOILERPLATE_NAMES.names(rest)
    return slugged
