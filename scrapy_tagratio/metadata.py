"""Article metadata: headline, authors, dates, language, canonical URL, site name,
description, main image and page type, each with the evidence it came from.

Read from the page as the extractor already read it (:class:`~.reader.PageEvents`: the
``meta`` elements, JSON-LD, links, ``datetime`` and ``itemprop`` attributes are collected
during the one parse), so no second parse is made. Evidence is taken in order of trust,
as trafilatura and htmldate do, the first usable value winning:

1. JSON-LD (``@graph`` and lists included; the article node: ``NewsArticle``,
   ``BlogPosting``, ... preferred to ``WebPage``),
2. OpenGraph and ``article:*`` meta,
3. other meta: ``citation_*``, Dublin Core, parse.ly, ``author``, ``description``, ...,
4. microdata (``itemprop`` on elements),
5. ``<time datetime>`` and byline elements (``rel=author``, ``author``/``byline`` classes)
   in the article: between its headline and the end of the main content, outside
   comments, related lists, footers and asides,
6. text: a date written in the byline or at the start of the main text.

No date after the crawl time (``now``) or before 1995 is taken (:func:`.dates.plausible`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from html import unescape
from typing import Any, Literal, get_args
from urllib.parse import urljoin

import numpy as np

from .dates import MONTH_NAMES, Parsed, find_date, parse_date, plausible
from .language import CONFIDENT, bcp47, detect_language, same_language
from .reader import PageEvents
from .source import reader_text
from .urls import host_of

__all__ = [
    "SOURCES",
    "Metadata",
    "MetadataSource",
    "clean",
    "read_metadata",
    "split_names",
]

MetadataSource = Literal[
    "json-ld", "opengraph", "meta", "microdata", "byline", "time element", "text", "title"
]
#: Every source a value can come from, most trusted first (``title``: the ``<title>``
#: element or the first ``<h1>``, the last resort for the headline).
SOURCES: tuple[MetadataSource, ...] = get_args(MetadataSource)


@dataclass(frozen=True)
class Metadata:
    """What a page says about itself.

    Attributes:
        headline: the article's own title, without the site name ``<title>`` adds.
        authors: the authors' names (people or, where the page names no person, the
            organisation), without "By" or dates.
        published, modified: ISO 8601 as precise as the page gives them (a date, a
            local time, or a time with the page's own UTC offset).
        language: BCP 47 tag (``de``, ``en-US``).
        canonical_url: ``<link rel="canonical">``, ``og:url`` or JSON-LD ``url``.
        site_name, description: as declared.
        image: URL of the main image.
        page_type: JSON-LD ``@type`` of the main node, else ``og:type``.
        sources: per field above that has a value, where it came from (:data:`SOURCES`).
    """

    headline: str | None = None
    authors: tuple[str, ...] = ()
    published: str | None = None
    modified: str | None = None
    language: str | None = None
    canonical_url: str | None = None
    site_name: str | None = None
    description: str | None = None
    image: str | None = None
    page_type: str | None = None
    sources: Mapping[str, MetadataSource] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (authors as a list)."""
        return {
            "headline": self.headline,
            "authors": list(self.authors),
            "published": self.published,
            "modified": self.modified,
            "language": self.language,
            "canonical_url": self.canonical_url,
            "site_name": self.site_name,
            "description": self.description,
            "image": self.image,
            "page_type": self.page_type,
            "sources": dict(self.sources),
        }


# ---------------------------------------------------------------------- JSON-LD
#: schema.org types of an article's node (``*Article`` types are recognised by name).
_ARTICLE_TYPES = frozenset(
    [
        "blogposting",
        "liveblogposting",
        "socialmediaposting",
        "discussionforumposting",
        "report",
        "reportagenews",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "reviewnewsarticle",
        "backgroundnewsarticle",
        "scholarlyarticle",
        "techarticle",
        "creativework",
        "videoobject",
        "recipe",
        "review",
        "qapage",
        "howto",
    ]
)
_PAGE_TYPES = frozenset({"webpage", "itempage", "aboutpage", "profilepage", "collectionpage"})
#: What may wrap a JSON-LD script's JSON: a CDATA section or an HTML comment, each mark
#: maybe behind a ``//`` (a script comment), at the start of the source.
_JSON_OPENING = re.compile(r"\s*(?://\s*)?(?:<!\[CDATA\[|<!--)")
_JSON_CLOSINGS = ("]]>", "-->")


def _json_source(text: str) -> str:
    """The JSON of a JSON-LD script: without a CDATA or comment mark at its start and
    at its end (each maybe behind ``//``), stripped. Only the two ends are looked at: a
    pattern searched through the whole source cost more than parsing the JSON."""
    opening = _JSON_OPENING.match(text)
    text = (text[opening.end() :] if opening else text).rstrip()
    if text.endswith(_JSON_CLOSINGS):
        text = text[:-3].rstrip()
        text = text[:-2] if text.endswith("//") else text
    return text.strip()


#: The ``\\u`` escape of a lone surrogate (half of a pair, cut off as a JavaScript
#: substring leaves it): JSON reads it as a lone surrogate, which no UTF-8 output holds.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _json_ld_nodes(page: PageEvents) -> list[dict[str, Any]]:
    """Every JSON object of the page's JSON-LD scripts, ``@graph`` and lists flattened,
    in document order; unreadable scripts are skipped."""
    nodes: list[dict[str, Any]] = []
    for script in page.json_ld_sources:
        source = _json_source(script)
        if not source:
            continue
        if "\\ud" in source or "\\uD" in source:  # what a surrogate's escape starts with
            source = _LONE_SURROGATE.sub(r"\\ufffd", source)
        try:
            data = json.loads(source, strict=False)
        except RecursionError:  # nested deeper than Python's stack: no metadata there
            continue
        except ValueError:
            try:  # one object followed by junk (a stray ";", a second object)
                data = json.JSONDecoder(strict=False).raw_decode(source)[0]
            except (ValueError, RecursionError):
                continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                nodes.append(item)
                if isinstance(item.get("@graph"), list):
                    stack.extend(reversed(item["@graph"]))
    return nodes


def _types(node: Mapping[str, Any]) -> list[str]:
    return [k.rsplit("/", 1)[-1].lower() for k in _raw_types(node)]


def _raw_types(node: Mapping[str, Any]) -> list[str]:
    kind = node.get("@type")
    return [k for k in (kind if isinstance(kind, list) else [kind]) if isinstance(k, str)]


def _is_article(node: Mapping[str, Any]) -> bool:
    return any(k.endswith("article") or k in _ARTICLE_TYPES for k in _types(node))


def _main_node(nodes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The article's node: the first article-typed node with a headline, else the first
    article-typed node, else the first web page node."""
    articles = [n for n in nodes if _is_article(n)]
    if articles:
        return next((n for n in articles if n.get("headline")), articles[0])
    return next((n for n in nodes if not _PAGE_TYPES.isdisjoint(_types(n))), None)


_INVISIBLE = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")


def clean(text: str) -> str:
    """Text of a page's value as read: HTML entities that were escaped twice (``&amp;ouml;``
    in a ``content`` attribute) decoded, soft hyphens and zero-width characters dropped,
    in Unicode normalization form C as the text outputs are (:func:`~.source.reader_text`),
    white space collapsed."""
    if "&" in text:
        text = unescape(text)
    if not text.isascii():  # the invisible characters are not ASCII
        text = reader_text(_INVISIBLE.sub("", text))
    return " ".join(text.split())


def _text(value: Any) -> str | None:
    """A plain string from a JSON-LD value (first of a list, ``@value``, ``name``)."""
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        value = value.get("@value") or value.get("name")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    return clean(value) or None


def _url(value: Any) -> str | None:
    """A URL from a JSON-LD value (a string, an ``ImageObject``, ``@id``, a list)."""
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        value = value.get("url") or value.get("contentUrl") or value.get("@id")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _people(value: Any, by_id: Mapping[str, dict[str, Any]]) -> list[str]:
    """Names from a JSON-LD ``author``/``creator``: strings, Person or Organization nodes
    (``name``, ``givenName`` + ``familyName``, Reuters' ``byline``), ``@id`` references
    into the graph, lists of any of these."""
    values = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in values:
        if isinstance(item, dict) and set(item) <= {"@id", "@type"} and item.get("@id") in by_id:
            item = by_id[item["@id"]]
        if isinstance(item, str):
            names.extend(split_names(item))
        elif isinstance(item, dict):
            name = item.get("name") or item.get("byline")
            if not name and (item.get("givenName") or item.get("familyName")):
                name = f"{item.get('givenName') or ''} {item.get('familyName') or ''}"
            names.extend(split_names(_text(name) or ""))
    return names


# ---------------------------------------------------------------------- names
_BY = re.compile(
    r"^(?:(?:written|posted|reported|text|story|photos?)\s+)?"
    r"(?:by|von|par|por|di|da|door|av|af|przez|от|автор|tekst|text|texto|fotos?)\b[:\s]*",
    re.I,
)
#: Between names: punctuation, and "and" in the languages of the development sets.
_NAME_SEPARATORS = re.compile(r"\s*(?:[,;|/&]|\b(?:and|und|et|y|og|och|i|e)\b)\s*")
_NOT_NAME = re.compile(
    r"https?://|www\.|@|\d{3}|\d{1,2}[:./]\d{1,2}|^(?:bild|foto|photo|image|credit)s?\b", re.I
)
_INITIALS = re.compile(r"\s*\([^()]{1,6}\)")


def split_names(text: str) -> list[str]:
    """People's names from a byline or an author field: "By A, B and C" -> A, B, C;
    "By", dates, URLs, e-mail addresses and initials in brackets ("(obe)") dropped.
    ``;`` always separates; commas, "and" and the like only when most parts are
    several words long ("Smith, John" is one person; so is "Reuters")."""
    names: list[str] = []
    for chunk in clean(text).split(";"):
        chunk = _BY.sub("", _INITIALS.sub("", chunk)).strip(" -–—:|,.")
        if not chunk or (_NOT_NAME.search(chunk) and len(chunk.split()) > 6):
            continue
        parts = [_BY.sub("", p.strip(" -–—:|,.")).strip() for p in _NAME_SEPARATORS.split(chunk)]
        parts = [p for p in parts if p and not _NOT_NAME.search(p)]
        long_parts = sum(len(p.split()) >= 2 or not p.isascii() for p in parts)
        if len(parts) > 1 and 2 * long_parts > len(parts):
            names.extend(parts)
        elif not _NOT_NAME.search(chunk) and len(chunk) <= 80:
            names.append(chunk)
    return names


def _first_last(name: str) -> str:
    """A scholarly "Last, First" name as "First Last" (``citation_author``, Dublin Core)."""
    last, comma, first = name.partition(",")
    if comma and "," not in first and 1 <= len(first.split()) <= 3 and len(last.split()) <= 3:
        return f"{first.strip()} {last.strip()}"
    return name


# ---------------------------------------------------------------------- meta
#: Meta keys (``property``, ``name`` or ``itemprop``, lower case) per field, most trusted
#: first within each source.
_OPENGRAPH = {
    "headline": ("og:title",),
    "published": ("article:published_time", "og:article:published_time"),
    "modified": ("article:modified_time", "og:updated_time", "og:article:modified_time"),
    "authors": ("article:author", "og:article:author"),
    "site_name": ("og:site_name",),
    "description": ("og:description",),
    "image": ("og:image", "og:image:url", "og:image:secure_url"),
    "canonical_url": ("og:url",),
    "page_type": ("og:type",),
}
_META = {
    name: tuple(keys.split())
    for name, keys in {
        "headline": """twitter:title citation_title dc.title dcterms.title parsely-title
            sailthru.title headline""",
        "published": """citation_publication_date citation_date citation_online_date
            dc.date.issued dcterms.issued dc.date dcterms.date dcterms.created
            parsely-pub-date sailthru.date article.published published_time publishdate
            publish-date pubdate date datepublished og:pubdate article_date_original
            cxenseparse:recs:publishtime pdate release_date""",
        "modified": """dcterms.modified dc.date.modified article.updated lastmod
            last-modified datemodified modified_time""",
        "authors": """citation_author dc.creator dcterms.creator parsely-author
            sailthru.author author byl article.author twitter:creator""",
        "site_name": "application-name publisher dc.publisher twitter:site",
        "description": "description twitter:description dc.description",
        "image": "twitter:image twitter:image:src thumbnail",
    }.items()
}
#: Meta keys declaring the language, after ``<html lang>``: Dublin Core, then OpenGraph's
#: locale (often a template's default).
_LANGUAGE_META = ("dc.language", "dcterms.language", "language", "og:locale")
#: Every meta key read above.
_READ_META = frozenset(
    [*(k for t in (_OPENGRAPH, _META) for keys in t.values() for k in keys), *_LANGUAGE_META]
)


def _meta_values(page: PageEvents) -> dict[str, list[tuple[str, bool]]]:
    """Meta ``content`` per lower-case key read (:data:`_READ_META`), in document order;
    the flag tells an ``itemprop`` (microdata) from a ``property``/``name`` (meta). Only
    the contents of those keys are cleaned: most of a page's meta (viewport, robots,
    verification codes, apps' settings) are never read."""
    values: dict[str, list[tuple[str, bool]]] = {}
    for meta_property, name, itemprop, content in page.attributes.metas:
        read = []
        for key, microdata in ((meta_property, False), (name, False), (itemprop, True)):
            key = (key or "").strip().lower()
            if key in _READ_META:
                read.append((key, microdata))
        if not read:
            continue
        content = clean(content or "")
        if not content:
            continue
        for key, microdata in read:
            values.setdefault(key, []).append((content, microdata))
    return values


# ---------------------------------------------------------------------- the article's region
_OFF_ARTICLE = re.compile(
    r"comment|related|recommend|footer|sidebar|teaser|more-?(?:news|stories|articles)|"
    r"newsletter|promo|trending|popular|widget|breadcrumb|\bnav|menu|social|share",
)
#: (Not ``header``: an article's own header holds its byline and date.)
_OFF_ARTICLE_TAGS = frozenset({"footer", "aside", "nav", "form"})
_BYLINE_HINT = re.compile(r"author|byline|\bby\b|writer|creator|reporter|autor|auteur")
_DATE_HINT = r"date|time|publish|posted|updated|datum|fecha"
#: Elements whose text may give the date: date-hinted ones and bylines.
_DATED = re.compile(f"{_DATE_HINT}|{_BYLINE_HINT.pattern}")
#: ``rel=author`` links read (a page with more is listing people, not naming its authors).
_MAX_LINKED_AUTHORS = 10
#: Elements after the headline searched for a byline, and characters of text read there.
_BYLINE_REACH = 80
_BYLINE_TEXT = 200
#: Distinct hints whose matches are remembered (class names repeat within and across
#: pages: list items, cards, a site's template).
_HINT_MEMORY = 4096


@lru_cache(maxsize=_HINT_MEMORY)
def _off_hint(hint: str) -> bool:
    """The hint marks an off-article element (:data:`_OFF_ARTICLE`)."""
    return _OFF_ARTICLE.search(hint) is not None


@lru_cache(maxsize=_HINT_MEMORY)
def _byline_hint(hint: str) -> bool:
    """The hint marks a byline (:data:`_BYLINE_HINT`)."""
    return _BYLINE_HINT.search(hint) is not None


@lru_cache(maxsize=_HINT_MEMORY)
def _dated_hint(hint: str) -> bool:
    """The hint marks an element whose text may give the date (:data:`_DATED`)."""
    return _DATED.search(hint) is not None


@dataclass
class _Article:
    """Where the article sits in the page's elements: from its headline (or the start of
    the main content) to the end of the main content."""

    page: PageEvents
    start: int
    stop: int

    #: Elements of the region already settled (on or off the article).
    _settled: dict[int, bool] = field(default_factory=dict, init=False, repr=False)

    def holds(self, element: int) -> bool:
        """``element`` is in the article and not inside a comment thread, a related list,
        a footer, an aside or the like (an element of the region so marked)."""
        return self.start <= element < self.stop and not self._off(element)

    def _off(self, element: int) -> bool:
        """``element`` or one of its ancestors in the region is an off-article element.
        Only the few elements asked about are settled: a walk up their parents, stopped
        at the first one already settled, so every element is looked at once at most."""
        page, settled, start = self.page, self._settled, self.start
        path = []
        off = False
        while element >= start:
            known = settled.get(element)
            if known is not None:
                off = known
                break
            path.append(element)
            if page.tags[element] in _OFF_ARTICLE_TAGS or _off_hint(page.hints[element]):
                off = True
                break
            element = int(page.parent[element])
        for passed in path:
            settled[passed] = off
        return off


def _first(tags: list[str], tag: str, count: int) -> list[int]:
    """The first ``count`` elements named ``tag`` (``list.index`` scans at C speed)."""
    found: list[int] = []
    start = 0
    while len(found) < count:
        try:
            start = tags.index(tag, start) + 1
        except ValueError:
            break
        found.append(start - 1)
    return found


def _article(
    page: PageEvents, content: np.ndarray | None, headline: str | None, headings: dict[int, str]
) -> _Article:
    """The article's region (see :class:`_Article`). ``content``: page elements of the
    main content, None when the algorithm has no DOM content; ``headings``: the first
    ``<h1>`` elements and their text."""
    folded = _fold(headline or "")
    heading = next((i for i, text in headings.items() if folded and _fold(text) == folded), None)
    if heading is None and headings:
        heading = next(iter(headings))
    if content is not None and content.size:
        first, last = int(content[0]), int(content[-1])
        start = heading if heading is not None and heading < first else first
        return _Article(page, start, int(page.end[last]))
    return _Article(page, heading if heading is not None else 0, len(page))


# ---------------------------------------------------------------------- headline
_TITLE_SEPARATORS = re.compile(r"\s+(?:[|\-–—:·•»«~/]|::)\s+")
_FOLD = re.compile(r"[\W_]+")
#: Distinct texts whose folded form is remembered (:func:`_fold`): a few pages' worth, as
#: the texts folded again are the page's own (a far larger cache hits hardly more often),
#: and a heading that swallowed a broken page's text is not kept long.
_FOLD_MEMORY = 64


@lru_cache(maxsize=_FOLD_MEMORY)
def _fold(text: str) -> str:
    """Case and punctuation folded, for comparisons. Cached: a page folds its titles,
    headings and site names several times (the headline's candidates and the site names
    they end with, the article's heading, the bylines' test of the site's name), over
    half of the calls a text folded before."""
    if not text.isascii():  # the invisible characters are not ASCII
        text = _INVISIBLE.sub("", text)
    return _FOLD.sub(" ", text.casefold()).strip()


def _site_names(site_names: list[str]) -> set[str]:
    """The folded names a title's site-name part may be (:func:`_strip_site_name`), the
    first word of each too ("example.com" -> "example com" -> "example")."""
    names = {_fold(name) for name in site_names if name}
    return names | {n.split(" ")[0] for n in names if n}


def _strip_site_name(title: str, names: set[str], folded_headings: set[str]) -> str:
    """``title`` without the site name a ``<title>``/``og:title`` appends or prepends
    ("Headline | Site", "Site - Headline"): a part is dropped when it is the site name,
    the host name (``names``: :func:`_site_names`), or when one of the page's ``<h1>``
    is the rest (``folded_headings``: their non-empty folded texts)."""
    parts = _TITLE_SEPARATORS.split(title)
    if len(parts) < 2:
        return title
    for cut in range(1, len(parts)):
        for kept in (parts[:cut], parts[cut:]):
            text = _title_join(title, kept)
            if _fold(text) in folded_headings:
                return text
    if _is_site(parts[-1], names):
        return _title_join(title, parts[:-1])
    if _is_site(parts[0], names):
        return _title_join(title, parts[1:])
    return title


def _is_site(part: str, names: set[str]) -> bool:
    folded = _fold(part)
    return bool(folded) and any(
        folded == name or folded.replace(" ", "") == name.replace(" ", "") for name in names
    )


def _title_join(title: str, parts: list[str]) -> str:
    """The stretch of ``title`` from the first to the last of ``parts`` (keeping the
    separators between them)."""
    start = title.find(parts[0])
    end = title.rfind(parts[-1]) + len(parts[-1])
    return title[start:end].strip() if 0 <= start < end else " ".join(parts)


# ---------------------------------------------------------------------- assembly
class _Fields:
    """The first usable value per field and its source."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, MetadataSource] = {}

    def offer(self, name: str, value: Any, source: MetadataSource) -> None:
        if name not in self.values and value:
            self.values[name] = value
            self.sources[name] = source


def _host_names(url: str | None) -> list[str]:
    """The URL's host (:func:`~scrapy_tagratio.urls.host_of`) and that host less its
    top-level domain: the names a site signs its titles and bylines with; none without a
    host."""
    host = host_of(url)
    return [host, host.rsplit(".", 1)[0]] if host else []


#: An absolute http(s) address that ``urljoin`` gives back as it is against any page: a
#: host, no white space or control character (which ``urlsplit`` strips or drops), no
#: ``;`` before the query (path parameters) and no empty query or fragment (a bare ``?``
#: or ``#``, which ``urlunparse`` drops).
_PLAIN_ADDRESS = re.compile(
    r"https?://[^/?#;\x00-\x20][^?#;\x00-\x20]*(?:\?[^#\x00-\x20]+)?(?:#[^\x00-\x20]+)?"
)


def _absolute(url: str, address: str) -> str:
    """``address`` resolved against the page's ``url``; as declared when the page's URL
    does not parse. Most addresses are absolute already (:data:`_PLAIN_ADDRESS`): they
    are given back without ``urljoin``'s two parses and join (about 15 us a call)."""
    if _PLAIN_ADDRESS.fullmatch(address):
        return address
    try:
        return urljoin(url, address)
    except ValueError:
        return address


def read_metadata(
    page: PageEvents,
    *,
    url: str | None = None,
    text: str = "",
    content: np.ndarray | None = None,
    now: datetime | None = None,
    detect: bool = True,
) -> Metadata:
    """The metadata of a page read by :func:`~.reader.read_page`.

    Args:
        page: the page's events and attributes.
        url: the page's URL (resolves relative links; its host is a site name).
        text: the extracted main text (its language, a date at its start).
        content: page elements of the main content in document order (None when the
            algorithm marks no elements): where bylines and times are looked for.
        now: the crawl time; later dates are not taken (default: now, UTC).
        detect: check the declared language against ``text`` (when the optional detector
            is installed).
    """
    now = now or datetime.now(timezone.utc)
    fields = _Fields()
    titles: list[tuple[str, MetadataSource]] = []
    metas = _meta_values(page)
    _from_json_ld(page, fields, titles, now)  # 1.
    _from_meta(metas, fields, titles, now)  # 2.-4.
    _canonical(page, fields)
    headings = {i: page.text_under(i) for i in _first(page.tags, "h1", _HEADINGS)}
    hosts = _host_names(url)
    headline = _headline(page, fields, titles, list(headings.values()), hosts)
    article = _article(page, content, headline, headings)
    _microdata(page, fields, article, now)  # 4.
    _bylines(page, fields, article, hosts)  # 5.
    _times(page, fields, article, now)
    if "published" not in fields.values:  # 6.
        start = text[:_BYLINE_TEXT]
        fields.offer("published", _plausible_value(find_date(start), now), "text")
    _language(page, fields, metas, text, detect)

    values = fields.values
    for name in ("canonical_url", "image"):
        if name in values and url:
            values[name] = _absolute(url, values[name])
    authors = tuple(dict.fromkeys(values.get("authors", ())))
    return Metadata(
        headline=headline,
        authors=authors,
        published=values.get("published"),
        modified=values.get("modified"),
        language=values.get("language"),
        canonical_url=values.get("canonical_url"),
        site_name=values.get("site_name"),
        description=values.get("description"),
        image=values.get("image"),
        page_type=values.get("page_type"),
        sources={k: v for k, v in fields.sources.items() if k != "authors" or authors},
    )


def _from_json_ld(
    page: PageEvents, fields: _Fields, titles: list[tuple[str, MetadataSource]], now: datetime
) -> None:
    """Fields of the article's JSON-LD node (the site's name also from its WebSite or
    organisation node)."""
    nodes = _json_ld_nodes(page)
    by_id = {n["@id"]: n for n in nodes if isinstance(n.get("@id"), str) and len(n) > 2}
    main = _main_node(nodes)
    if main is not None:
        titles.extend(
            (title, "json-ld")
            for title in (_text(main.get("headline")), _text(main.get("name")))
            if title
        )
        fields.offer(
            "authors", _people(main.get("author") or main.get("creator"), by_id), "json-ld"
        )
        for name, key in (("published", "datePublished"), ("modified", "dateModified")):
            fields.offer(name, _plausible(_text(main.get(key)), now), "json-ld")
        fields.offer("language", bcp47(_text(main.get("inLanguage"))), "json-ld")
        fields.offer("description", _text(main.get("description")), "json-ld")
        fields.offer("image", _url(main.get("image")), "json-ld")
        fields.offer("canonical_url", _url(main.get("url")), "json-ld")
        fields.offer("page_type", next(iter(_raw_types(main)), None), "json-ld")
        publisher = main.get("publisher")
        if isinstance(publisher, dict) and publisher.get("@id") in by_id:
            publisher = by_id[publisher["@id"]]
        fields.offer("site_name", _text(publisher), "json-ld")
    for node in nodes:
        if not {"website", "newsmediaorganization"}.isdisjoint(_types(node)):
            fields.offer("site_name", _text(node.get("name")), "json-ld")


#: Meta keys whose names are written "Last, First" (Google Scholar's and Dublin Core's
#: convention).
_LAST_FIRST = frozenset({"citation_author", "dc.creator", "dcterms.creator"})


def _from_meta(
    metas: Mapping[str, list[tuple[str, bool]]],
    fields: _Fields,
    titles: list[tuple[str, MetadataSource]],
    now: datetime,
) -> None:
    """Fields of OpenGraph, the other meta, and ``itemprop`` meta (microdata)."""
    tables: tuple[tuple[Mapping[str, tuple[str, ...]], MetadataSource, bool], ...] = (
        (_OPENGRAPH, "opengraph", False),
        (_META, "meta", False),
        (_OPENGRAPH, "microdata", True),
        (_META, "microdata", True),
    )
    for table, source, microdata in tables:
        for name, keys in table.items():
            if metas.keys().isdisjoint(keys):  # nothing to offer (most fields of a page)
                continue
            if name in fields.values and name != "headline":  # a more trusted source's
                continue
            keyed = [
                (key, value)
                for key in keys
                for value, is_item in metas.get(key, ())
                if is_item == microdata
            ]
            values = [value for _, value in keyed]
            if name == "headline":
                titles.extend((value, source) for value in values)
            elif name == "authors":
                people = [
                    person
                    for key, value in keyed
                    for person in split_names(_first_last(value) if key in _LAST_FIRST else value)
                ]
                fields.offer(name, list(dict.fromkeys(people)), source)
            elif name in ("published", "modified"):
                dates = (_plausible(value, now) for value in values)
                fields.offer(name, next(filter(None, dates), None), source)
            else:
                fields.offer(name, next(iter(values), None), source)


def _canonical(page: PageEvents, fields: _Fields) -> None:
    """``<link rel="canonical">``: the page's own statement, above ``og:url`` and
    JSON-LD."""
    href = page.canonical_link
    if href:
        fields.values["canonical_url"] = href
        fields.sources["canonical_url"] = "meta"


def _plausible_value(value: Parsed | None, now: datetime) -> str | None:
    return value.isoformat() if value is not None and plausible(value, now) else None


def _plausible(text: str | None, now: datetime) -> str | None:
    """``text`` read as a date, in ISO 8601, if it is a plausible publication date."""
    return _plausible_value(parse_date(text), now)


def _headline(
    page: PageEvents,
    fields: _Fields,
    titles: list[tuple[str, MetadataSource]],
    headings: list[str],
    hosts: list[str],
) -> str | None:
    """The headline: the most trusted source's title (JSON-LD, OpenGraph, meta; else the
    page's ``<title>`` and ``<h1>`` elements), without its site-name part. Within that
    source the first title another source confirms (the same text, or a ``<title>`` /
    ``og:title`` holding it) wins, else its first: so a JSON-LD ``headline`` that is a
    description (Wikipedia's) gives way to the node's ``name``, and an ``<h1>`` that is
    the site's logo to the ``<title>``. ``hosts``: the URL's host names
    (:func:`_host_names`), site names too."""
    html_title = page.title_text
    names = _site_names([fields.values.get("site_name") or "", *hosts])
    folded_headings = {_fold(heading) for heading in headings} - {""}
    found = [*titles, (html_title, "title"), *((h, "title") for h in headings)]
    # A page's sources repeat one title (og:title, twitter:title, <title>): each
    # distinct one is read once: (without the site name, that folded, itself folded).
    read: dict[str, tuple[str, str, str] | None] = {}
    for title, _ in found:
        if title not in read:
            cleaned = clean(title)
            stripped = _strip_site_name(cleaned, names, folded_headings) if cleaned else ""
            read[title] = (stripped, _fold(stripped), _fold(title)) if cleaned else None
    candidates: list[tuple[str, MetadataSource, str]] = []
    folded: list[str] = []
    for title, source in found:
        done = read[title]
        if done is not None:
            candidates.append((done[0], source, done[2]))
            folded.append(done[1])
    if not candidates:
        return None

    def confirmed(index: int) -> bool:
        own = folded[index]
        return len(own) >= _MIN_HEADLINE and any(
            own == folded[other] or f" {own} " in f" {raw} "
            for other, (_, _, raw) in enumerate(candidates)
            if other != index
        )

    first_source = candidates[0][1]
    group = [i for i, (_, source, _) in enumerate(candidates) if source == first_source]
    best = next((i for i in group if confirmed(i)), group[0])
    headline, source, _ = candidates[best]
    fields.offer("headline", headline, source)
    return headline


#: ``<h1>`` elements read as headline candidates; folded characters a confirmed headline
#: needs (a site's two-letter logo is contained in every ``<title>``).
_HEADINGS = 5
_MIN_HEADLINE = 8


_ITEMPROP_FIELDS = {"datepublished": "published", "datemodified": "modified", "author": "authors"}


def _microdata(page: PageEvents, fields: _Fields, article: _Article, now: datetime) -> None:
    """``itemprop`` on elements in the article: author and dates (the first of each; an
    element's text is read only while its field is still open)."""
    for element, name, value in page.attributes.itemprops:
        if all(key in fields.values for key in _ITEMPROP_FIELDS.values()):
            return
        key = _ITEMPROP_FIELDS.get(name.strip().lower())
        if key is None or key in fields.values or not article.holds(element):
            continue
        if key == "authors":
            names = split_names(_strip_dates(page.text_under(element)[:_BYLINE_TEXT]))
            fields.offer(key, names, "microdata")
        else:
            fields.offer(key, _plausible(value or page.text_under(element), now), "microdata")


def _bylines(page: PageEvents, fields: _Fields, article: _Article, hosts: list[str]) -> None:
    """Authors from ``rel=author`` links and byline elements near the headline, where
    the page's data names no author or only the site itself (an organisation standing
    in for the reporter; ``hosts``: the URL's host names, :func:`_host_names`)."""
    known = fields.values.get("authors")
    if known:
        site = {_fold(n) for n in (fields.values.get("site_name") or "", *hosts) if n}
        if not all(_is_site(name, site) for name in known):
            return
    names = _linked_authors(page, article) or _byline_names(page, article)
    if names:
        fields.values["authors"] = names
        fields.sources["authors"] = "byline"


def _linked_authors(page: PageEvents, article: _Article) -> list[str]:
    """Names in the article's ``<a rel="author">`` links."""
    linked = [
        owner
        for owner in page.with_rel("author")
        if page.tags[owner] == "a" and article.holds(owner)
    ][:_MAX_LINKED_AUTHORS]
    return list(dict.fromkeys(n for owner in linked for n in split_names(page.text_under(owner))))


def _byline_names(page: PageEvents, article: _Article) -> list[str]:
    """Names in the first author- or byline-hinted element after the headline."""
    stop = min(article.stop, article.start + _BYLINE_REACH * 4)
    for element, hint in enumerate(page.hints[article.start : stop].tolist(), article.start):
        if hint and _byline_hint(hint) and article.holds(element):
            names = split_names(_strip_dates(page.text_under(element)[:_BYLINE_TEXT]))
            if names:
                return names
    return []


#: Where a byline's names end: a date or time ("3 May", "May 3", "03.05."), or a dot
#: separating them from it.
_BYLINE_END = re.compile(rf"\d|\s[·•]\s|\b(?:{MONTH_NAMES})\.?\s+\d", re.I)


def _strip_dates(text: str) -> str:
    """A byline's text up to its date ("By A and B · 26 April 2024" -> "By A and B")."""
    return _BYLINE_END.split(text, maxsplit=1)[0].strip()


def _times(page: PageEvents, fields: _Fields, article: _Article, now: datetime) -> None:
    """``<time datetime>`` in the article (the first plausible one), then a date written
    in a date-hinted or byline element next to the headline."""
    for element, value in page.attributes.datetimes:
        if article.holds(element):
            fields.offer("published", _plausible(value, now), "time element")
            if "published" in fields.values:
                break
    if "published" in fields.values:
        return
    stop = min(article.stop, article.start + _BYLINE_REACH)
    for element, hint in enumerate(page.hints[article.start : stop].tolist(), article.start):
        if hint and _dated_hint(hint) and article.holds(element):
            written = _plausible_value(find_date(page.text_under(element)[:_BYLINE_TEXT]), now)
            if written:
                fields.offer("published", written, "text")
                return


def _language(
    page: PageEvents,
    fields: _Fields,
    metas: Mapping[str, list[tuple[str, bool]]],
    text: str,
    detect: bool,
) -> None:
    """The declared language (JSON-LD ``inLanguage``, ``<html lang>`` and
    content-language, Dublin Core, ``og:locale``), checked against the text when the
    detector is installed: a confident detection of another language wins."""
    declarations = [
        *page.attributes.languages,
        *(value for key in _LANGUAGE_META for value, _ in metas.get(key, ())),
    ]
    for declared in declarations:
        fields.offer("language", bcp47(declared.split(",")[0]), "meta")
    if not detect:
        return
    detected = detect_language(text)
    if detected is None:
        return
    language, probability = detected
    chosen = fields.values.get("language")
    if chosen is None or (not same_language(chosen, language) and probability >= CONFIDENT):
        fields.values["language"] = language
        fields.sources["language"] = "text"
