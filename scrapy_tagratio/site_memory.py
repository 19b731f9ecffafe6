"""Site memory: what a crawl has learnt of each site's template.

Menus, footers, sidebars, "related" and "most read" boxes, newsletter prompts and legal
notices repeat from page to page of a site; the article text does not. A single-page
extractor cannot see that; a crawl can. :class:`SiteMemory` keeps, per site, a fingerprint
of every text block of the pages extracted so far with the number of pages it was seen on.
A block of a new page whose fingerprint was seen on at least ``min_pages`` *other* pages of
the site is template: :func:`discount_template` takes it out of the content the algorithm
chose (any DOM algorithm: the default, CETD's variants, TextSweeper).

* **Fingerprint** of a layout block (:attr:`Document.pieces_by_block`): an 8-byte BLAKE2b
  hash of its UTF-8 text without ASCII white space and with every ASCII digit read as
  ``0`` (dates and counters change from page to page, the template does not), and of
  whether the block is mostly link text (a headline in a teaser list is not the same
  block as that headline over its article).
* **Memory**: per site, sorted ``uint64`` fingerprints with ``uint32`` page counts and the
  site's page number of their last sighting: 16 bytes an entry. Entries per site and sites
  overall are bounded; the least recently seen go first (per site, blocks seen on one page
  only before those seen on several). A memory pickles as plain arrays.
* **Long blocks and copies**: a paragraph seen on one other page may be an article quoted
  there rather than template, so blocks of ``long_block_chars`` characters or more may be
  made to need one page more; and a page the blocks of whose content (as the algorithm
  chose it) were mostly seen before (more than ``max_seen_share`` of their characters)
  is a copy of a page seen before (the same article under another URL), not template:
  nothing is removed from it. (The content decides, not the page's long blocks: on a site
  of short paragraphs the only long blocks may be template, and the page no copy.) A URL
  recorded before is read with that sighting left out, so a page captured again comes out
  as the first time; it is not counted twice, unless its content is new (another document
  under that URL: a feed entry's description recorded before its article).
* **Constants**: the defaults of ``min_pages``, ``long_block_chars`` and
  ``max_seen_share`` are read from ``models/site_memory.json``, which ``python -m
  benchmarks.site_memory --fit`` writes after choosing them on pages of the same sites
  (dragnet-dev), validated on held-out sites.

* **Headlines**: the memory also keeps the headlines of the site's pages judged content
  (articles). A page whose links to those headlines hold at least
  :data:`HEADLINE_SHARE` of its text, :data:`HEADLINE_LINKS` links or more, lists the
  site's articles: :func:`headline_evidence` makes it an overview page (with the reason).
  Related-article rails and "most read" boxes link to known headlines too, but hold a
  small share of an article page's text; the share was set between what the articles of
  dragnet-dev's multi-page sites reach when crawled in order and what the example
  project's section fronts reach after their articles (README, "Site memory"). On a
  short page such a box holds more, so links in template blocks (a box on every page of
  the site) do not count.

Which site a page belongs to is its host without ``www.`` (``scope="host"``) or its
registrable domain (``scope="domain"``, by the public suffix list that Scrapy's own
dependency tldextract ships; no network access).
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from hashlib import blake2b
from itertools import compress
from operator import add
from pathlib import Path
from typing import Any, Literal

import numpy as np

from .algorithms.base import Labelling, bad_parameter, check_range, dom_labelling
from .document import Document
from .overview import OverviewVerdict
from .urls import domain_and_suffix, host_of

__all__ = [
    "HEADLINE_LINKS",
    "HEADLINE_SHARE",
    "MODEL_PATH",
    "Scope",
    "SiteMemory",
    "discount_template",
    "headline_evidence",
    "headline_fingerprint",
    "page_fingerprints",
]

Scope = Literal["host", "domain"]
#: The fitted constants (written by ``python -m benchmarks.site_memory --fit``).
MODEL_PATH = Path(__file__).resolve().parent / "models" / "site_memory.json"
_EMPTY_HASH = blake2b(digest_size=8)
_DIGITS_TO_ZERO = bytes.maketrans(b"0123456789", b"0000000000")
_WHITESPACE = b" \t\n\r\f\v"
_NOT_WORD = re.compile(r"\W+")
_NOT_WORD_NOR_NUL = re.compile(r"[^\w\0]+")
#: A page links to at least this many headlines of the site's articles ...
HEADLINE_LINKS = 3
#: ... whose link text is at least this share of the page's text: an overview page.
HEADLINE_SHARE = 0.25
#: Headlines (and link texts) shorter than this, normalised, are not compared.
_MIN_HEADLINE_CHARS = 10


def _fingerprints(parts: Iterable[bytes]) -> np.ndarray:
    """The fingerprint of each of ``parts``: its 8-byte BLAKE2b hash as a ``uint64``."""
    digests = bytearray()
    for part in parts:
        # Copying an empty hash is cheaper than parsing a new one's keyword arguments.
        hash_ = _EMPTY_HASH.copy()
        hash_.update(part)
        digests += hash_.digest()
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def _joined_blocks(document: Document, blocks: np.ndarray) -> bytes:
    """The text of ``blocks`` (layout block nodes holding text, in document order) in
    UTF-8, each block's pieces (:attr:`Document.pieces_by_block`) as they are, a NUL
    between two blocks (the reader drops NUL characters, so none is text)."""
    block_of, pieces = document.pieces_by_block
    wanted = np.zeros(len(document.nodes), dtype=bool)
    wanted[blocks] = True
    in_blocks = wanted[block_of]
    owners = block_of[in_blocks]
    joined = np.frombuffer("\0".join(compress(pieces, in_blocks.tolist())).encode(), np.uint8)
    between_pieces = np.flatnonzero(joined == 0)
    keep = np.ones(len(joined), dtype=bool)
    keep[between_pieces[owners[1:] == owners[:-1]]] = False
    return joined[keep].tobytes()


def page_fingerprints(document: Document) -> tuple[np.ndarray, np.ndarray]:
    """The page's text blocks (node indices, document order) and their fingerprints
    (``uint64``, aligned; see the module docstring)."""
    nodes = document.nodes
    chars = nodes.block_chars
    blocks = np.flatnonzero(chars > 0)
    if not len(blocks):
        return blocks, np.zeros(0, dtype=np.uint64)
    # Normalised in one pass: ASCII white space out, every digit a 0.
    texts = _joined_blocks(document, blocks).translate(_DIGITS_TO_ZERO, _WHITESPACE)
    is_link = 2 * nodes.block_link_chars[blocks] > chars[blocks]
    kinds = [b"L" if link else b"T" for link in is_link.tolist()]
    return blocks, _fingerprints(map(add, kinds, texts.split(b"\0")))


def _headline_key(text: str | None) -> bytes | None:
    """A headline or a link's text as compared: lower case, letters and digits only;
    None when fewer than a few remain (too short to tell headlines apart)."""
    normalised = _NOT_WORD.sub("", (text or "").lower())
    return normalised.encode() if len(normalised) >= _MIN_HEADLINE_CHARS else None


def headline_fingerprint(text: str | None) -> np.uint64 | None:
    """The fingerprint of a headline or a link's text (8 bytes of BLAKE2b of its key:
    lower case, letters and digits only); None when too short to tell apart."""
    key = _headline_key(text)
    return None if key is None else _fingerprints([key])[0]


def _headline_links(document: Document) -> tuple[np.ndarray, np.ndarray]:
    """The page's link blocks (blocks of mostly link text: a teaser's headline) long
    enough to be headlines: their node indices and :func:`headline_fingerprint`."""
    nodes = document.nodes
    chars = nodes.block_chars
    blocks = np.flatnonzero((chars >= _MIN_HEADLINE_CHARS) & (2 * nodes.block_link_chars > chars))
    if not len(blocks):
        return blocks, np.zeros(0, dtype=np.uint64)
    # Every block's key (as _headline_key makes it) in one pass over their joined text.
    texts = _NOT_WORD_NOR_NUL.sub("", _joined_blocks(document, blocks).decode().lower())
    keys = texts.split("\0")
    long_enough = np.array([len(key) >= _MIN_HEADLINE_CHARS for key in keys], dtype=bool)
    prints = _fingerprints(key.encode() for key in keys if len(key) >= _MIN_HEADLINE_CHARS)
    return blocks[long_enough], prints


@cache
def _fitted_constants() -> dict[str, Any]:
    model: dict[str, Any] = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    return model["constants"]


def _url_fingerprint(url: str) -> np.uint64:
    return _fingerprints([url.partition("#")[0].encode("utf-8", "surrogatepass")])[0]


def _find(ordered: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``values`` is or would go in the sorted array ``ordered``, and whether
    it is there (a binary search: ``np.isin`` costs many times more on arrays this short)."""
    at = np.searchsorted(ordered, values)
    found = np.zeros(len(values), dtype=bool)
    inside = at < len(ordered)
    found[inside] = ordered[at[inside]] == values[inside]
    return at, found


def _merged(old: np.ndarray, is_new: np.ndarray, new: np.ndarray | int) -> np.ndarray:
    """``old``'s values where ``is_new`` is False, in order, and ``new`` where it is True."""
    merged = np.empty(len(is_new), dtype=old.dtype)
    merged[~is_new] = old
    merged[is_new] = new
    return merged


class _Site:
    """One site's entries: sorted fingerprints, page counts, last sighting; and the
    fingerprints of the URLs recorded, oldest first."""

    __slots__ = ("fingerprints", "headlines", "last_seen", "pages", "pages_seen", "urls")

    def __init__(self) -> None:
        self.fingerprints = np.zeros(0, dtype=np.uint64)
        self.pages = np.zeros(0, dtype=np.uint32)
        self.last_seen = np.zeros(0, dtype=np.uint32)
        self.pages_seen = 0
        self.urls = np.zeros(0, dtype=np.uint64)
        #: Headline fingerprints of the site's articles, oldest first.
        self.headlines = np.zeros(0, dtype=np.uint64)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def copy(self) -> _Site:
        """An independent copy (its arrays copied; :meth:`record` changes some in place)."""
        copied = _Site.__new__(_Site)
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(copied, name, value.copy() if isinstance(value, np.ndarray) else value)
        return copied

    def counts(self, fingerprints: np.ndarray) -> np.ndarray:
        """Pages each fingerprint was seen on (0 for unknown ones)."""
        at, found = _find(self.fingerprints, fingerprints)
        counts = np.zeros(len(fingerprints), dtype=np.int64)
        counts[found] = self.pages[at[found]]
        return counts

    def record(self, fingerprints: np.ndarray, max_entries: int) -> None:
        """Count one more page holding each of ``fingerprints`` (each counted once)."""
        self.pages_seen += 1
        unique = np.sort(fingerprints)
        first = np.ones(len(unique), dtype=bool)
        first[1:] = unique[1:] != unique[:-1]
        unique = unique[first]
        at, found = _find(self.fingerprints, unique)
        self.pages[at[found]] += 1
        self.last_seen[at[found]] = self.pages_seen
        new = unique[~found]
        if len(new):
            # The new fingerprints' places in the merged sorted arrays (np.insert of three
            # arrays, with one mask).
            is_new = np.zeros(len(self.fingerprints) + len(new), dtype=bool)
            is_new[at[~found] + np.arange(len(new))] = True
            self.fingerprints = _merged(self.fingerprints, is_new, new)
            self.pages = _merged(self.pages, is_new, 1)
            self.last_seen = _merged(self.last_seen, is_new, self.pages_seen)
        if len(self.fingerprints) > max_entries:
            # Keep the blocks seen on several pages, then the most recently seen; down to
            # three quarters of the bound, so that the sort runs once in many pages.
            order = np.lexsort((self.last_seen, self.pages > 1))[-(3 * max_entries // 4) :]
            keep = np.sort(order)
            self.fingerprints = self.fingerprints[keep]
            self.pages = self.pages[keep]
            self.last_seen = self.last_seen[keep]


class SiteMemory:
    """Per-site memory of the text blocks of the pages extracted so far.

    Args:
        min_pages: a block seen on at least this many other pages of the site is template
            (None: the fitted default).
        long_block_chars: a block of at least this many characters needs one page more
            (None: the fitted default).
        max_seen_share: a page more than this share of whose content's characters (its
            long blocks', without a content mask) were seen on other pages of the site is a
            copy: nothing is removed from it (None: the fitted default).
        max_entries: fingerprints kept per site.
        max_sites: sites kept; the least recently used goes first.
        scope: ``"host"`` (host without ``www.``) or ``"domain"`` (registrable domain).

    Not thread-safe: one memory serves one crawler (Scrapy's reactor thread).
    """

    def __init__(
        self,
        *,
        min_pages: int | None = None,
        long_block_chars: int | None = None,
        max_seen_share: float | None = None,
        max_entries: int = 4096,
        max_sites: int = 2000,
        scope: Scope = "host",
    ) -> None:
        fitted = _fitted_constants()
        min_pages = fitted["min_pages"] if min_pages is None else min_pages
        long_block_chars = (
            fitted["long_block_chars"] if long_block_chars is None else long_block_chars
        )
        max_seen_share = fitted["max_seen_share"] if max_seen_share is None else max_seen_share
        check_range("min_pages", min_pages, 1, integer=True)
        check_range("long_block_chars", long_block_chars, 1, integer=True)
        check_range("max_seen_share", max_seen_share, 0.0, 1.0)
        check_range("max_entries", max_entries, 1, integer=True)
        check_range("max_sites", max_sites, 1, integer=True)
        if scope not in ("host", "domain"):
            raise bad_parameter(f"scope must be 'host' or 'domain', got {scope!r}")
        self.min_pages = min_pages
        self.long_block_chars = long_block_chars
        self.max_seen_share = max_seen_share
        self.max_entries = max_entries
        self.max_sites = max_sites
        self.scope: Scope = scope
        self._sites: OrderedDict[str, _Site] = OrderedDict()
        #: The last page recorded: ``(site, fingerprints, url)`` (see :meth:`snapshot`).
        self.last_recorded: tuple[str, np.ndarray, str | None] | None = None

    def __repr__(self) -> str:
        return (
            f"SiteMemory(min_pages={self.min_pages}, sites={len(self._sites)}, "
            f"entries={self.entries})"
        )

    def __len__(self) -> int:
        return len(self._sites)

    @property
    def entries(self) -> int:
        """Fingerprints held over all sites."""
        return sum(len(site.fingerprints) for site in self._sites.values())

    @property
    def nbytes(self) -> int:
        """Bytes of the fingerprint arrays (the memory's size, Python objects aside)."""
        return sum(
            site.fingerprints.nbytes
            + site.pages.nbytes
            + site.last_seen.nbytes
            + site.urls.nbytes
            + site.headlines.nbytes
            for site in self._sites.values()
        )

    def site_of(self, url: str | None) -> str | None:
        """The site ``url`` belongs to under this memory's scope; None without a host."""
        host = host_of(url)
        if host is not None and self.scope == "domain":
            domain, suffix = domain_and_suffix(host)
            if domain and suffix:
                return f"{domain}.{suffix}"
        return host

    def pages_seen(self, site: str) -> int:
        """Pages of ``site`` recorded (0 for a site not in memory)."""
        entry = self._sites.get(site)
        return entry.pages_seen if entry is not None else 0

    def counts(self, site: str, fingerprints: np.ndarray) -> np.ndarray:
        """Number of pages of ``site`` on which each fingerprint was seen."""
        entry = self._sites.get(site)
        if entry is None:
            return np.zeros(len(fingerprints), dtype=np.int64)
        self._sites.move_to_end(site)
        return entry.counts(fingerprints)

    def template_blocks(
        self,
        site: str,
        document: Document,
        blocks: np.ndarray,
        fingerprints: np.ndarray,
        *,
        content: np.ndarray | None = None,
    ) -> np.ndarray:
        """The blocks of a page of ``site`` (from :func:`page_fingerprints`) that are template:
        seen on ``min_pages`` other pages of the site, long blocks on one more; none when
        the page is a copy of one seen before: more than ``max_seen_share`` of the
        characters of the blocks of ``content`` (the algorithm's node mask; without one,
        of its long blocks) were seen before. For a page not recorded yet (call it before
        :meth:`record`); a crawl's pages, which may be held or fetched again, go through
        :meth:`template_for_page`."""
        counts = self.counts(site, fingerprints)
        return self._template(document, blocks, counts, content, recorded=False)

    def template_for_page(
        self,
        site: str,
        url: str,
        document: Document,
        blocks: np.ndarray,
        fingerprints: np.ndarray,
        *,
        content: np.ndarray | None = None,
        held: bool = False,
    ) -> tuple[np.ndarray, bool]:
        """A page of ``site`` about to be read (from :func:`page_fingerprints`;
        ``content`` as in :meth:`template_blocks`): its template blocks, and whether to
        :meth:`record` it afterwards.

        A page held at the cold start (``held``) or whose URL was recorded
        (:meth:`is_revisit`) is read with that sighting left out. It is recorded unless
        held or its content was seen (the copy test): a page captured again is not counted
        twice, while another document recorded under its URL first (a feed entry's
        description) does not keep the page itself out of the memory."""
        revisit = held or self.is_revisit(site, url)
        counts = self.counts(site, fingerprints)
        captured_again = revisit and self._is_copy(document, blocks, counts, content)
        template = self._template(document, blocks, counts, content, recorded=revisit)
        return template, not (held or captured_again)

    def _template(
        self,
        document: Document,
        blocks: np.ndarray,
        counts: np.ndarray,
        content: np.ndarray | None,
        *,
        recorded: bool,
    ) -> np.ndarray:
        """:meth:`template_blocks` from the blocks' ``counts``; with ``recorded``, the
        page's own sighting, one per distinct fingerprint, is left out."""
        if recorded:
            counts = np.maximum(counts - 1, 0)
        if self._is_copy(document, blocks, counts, content):
            return blocks[:0]
        long = document.nodes.block_chars[blocks] >= self.long_block_chars
        return blocks[counts >= self.min_pages + long]

    def _is_copy(
        self,
        document: Document,
        blocks: np.ndarray,
        counts: np.ndarray,
        content: np.ndarray | None,
    ) -> bool:
        """Whether more than ``max_seen_share`` of the characters of the blocks of
        ``content`` (without a node mask, of the long blocks) were seen before
        (``counts``, per block of ``blocks``)."""
        nodes = document.nodes
        chars = nodes.block_chars[blocks]
        if content is not None and len(nodes):
            in_content = np.zeros(len(nodes), dtype=bool)
            in_content[nodes.block[content]] = True
            guarded = in_content[blocks]
        else:
            guarded = chars >= self.long_block_chars
        total = chars[guarded].sum()
        return bool(total) and chars[guarded & (counts > 0)].sum() > self.max_seen_share * total

    def known_headlines(self, site: str, fingerprints: np.ndarray) -> np.ndarray:
        """Whether each fingerprint (:func:`headline_fingerprint`) is a headline of an
        article of ``site`` recorded before."""
        entry = self._sites.get(site)
        if entry is None:
            return np.zeros(len(fingerprints), dtype=bool)
        return _find(np.sort(entry.headlines), fingerprints)[1]

    def headlines(self, site: str) -> int:
        """Headlines of ``site`` recorded."""
        entry = self._sites.get(site)
        return len(entry.headlines) if entry is not None else 0

    def record_headline(self, site: str, headline: str | None) -> None:
        """Remember the headline of an article of ``site`` (the newest ``max_entries``)."""
        entry = self._sites.get(site)
        fingerprint = headline_fingerprint(headline)
        if entry is None or fingerprint is None or fingerprint in entry.headlines:
            return
        entry.headlines = np.append(entry.headlines[-(self.max_entries - 1) :], fingerprint)

    def snapshot(self, url: str | None) -> SiteMemory:
        """A memory with this one's constants holding a copy of what it knows of ``url``'s
        site only: what a worker process needs to extract one page of the site as this
        memory would. The worker's :attr:`last_recorded` goes back to :meth:`record`."""
        snapshot = SiteMemory(
            min_pages=self.min_pages,
            long_block_chars=self.long_block_chars,
            max_seen_share=self.max_seen_share,
            max_entries=self.max_entries,
            max_sites=1,
            scope=self.scope,
        )
        site = self.site_of(url)
        entry = self._sites.get(site) if site is not None else None
        if site is not None and entry is not None:
            snapshot._sites[site] = entry.copy()
        return snapshot

    def is_revisit(self, site: str, url: str) -> bool:
        """Whether ``url`` (fragment aside) was recorded for ``site`` before: its blocks
        are already counted, so they would match themselves."""
        entry = self._sites.get(site)
        return entry is not None and bool((entry.urls == _url_fingerprint(url)).any())

    def record(self, site: str, fingerprints: np.ndarray, url: str | None = None) -> None:
        """Record one page of ``site`` holding ``fingerprints`` (and its ``url``, so that
        a page captured again is known: :meth:`is_revisit`)."""
        entry = self._sites.get(site)
        if entry is None:
            entry = self._sites[site] = _Site()
            while len(self._sites) > self.max_sites:
                self._sites.popitem(last=False)
        self._sites.move_to_end(site)
        fingerprints = np.asarray(fingerprints, dtype=np.uint64)
        entry.record(fingerprints, self.max_entries)
        self.last_recorded = (site, fingerprints, url)
        if url is not None:
            entry.urls = np.append(entry.urls[-(self.max_entries - 1) :], _url_fingerprint(url))


def discount_template(
    document: Document, labelling: Labelling, template_blocks: np.ndarray
) -> tuple[Labelling, int]:
    """Take the template blocks (layout block node indices) out of a DOM algorithm's
    content; returns the new labelling and the characters of content taken out.

    Labellings without a node mask (CETR, the CCB family) are returned unchanged. The block
    scores gain a ``template`` flag per node, so each affected block says why it is out.
    """
    nodes = document.nodes
    if labelling.content_nodes is None or not len(nodes):
        return labelling, 0
    template = np.zeros(len(nodes), dtype=bool)
    template[template_blocks] = True
    template = template[nodes.block]
    content = labelling.content_nodes
    removed = int(nodes.own_chars[content & template].sum())
    if removed:
        labelling = dom_labelling(
            document, content & ~template, labelling.block_scores.scores, labelling.threshold
        )
    scores = replace(labelling.block_scores, template=template)
    return replace(labelling, block_scores=scores), removed


def headline_evidence(
    memory: SiteMemory,
    site: str,
    document: Document,
    verdict: OverviewVerdict,
    template: np.ndarray,
) -> OverviewVerdict:
    """``verdict``, made "overview" when the page links to :data:`HEADLINE_LINKS` or more
    headlines of articles already crawled from ``site`` whose link text is at least
    :data:`HEADLINE_SHARE` of the page's text (see the module docstring). A link counts
    when it is a block of its own (mostly link text), as a teaser's headline is, and not
    one of the page's ``template`` blocks (:meth:`SiteMemory.template_blocks`): a "most
    read" box on every page of the site links to known headlines from the articles too,
    and on a short page it holds a large share of the text."""
    nodes = document.nodes
    total = int(nodes.chars[0]) if len(nodes) else 0
    # A page whose links altogether hold less than the share cannot pass: most articles,
    # whose link texts are not read then.
    if (
        verdict.is_overview
        or not total
        or nodes.link_chars[0] < HEADLINE_SHARE * total
        or memory.headlines(site) < HEADLINE_LINKS
    ):
        return verdict
    blocks, prints = _headline_links(document)
    is_template = np.zeros(len(nodes), dtype=bool)
    is_template[template] = True
    known = memory.known_headlines(site, prints) & ~is_template[blocks]
    links, share = int(known.sum()), nodes.block_chars[blocks[known]].sum() / total
    if links < HEADLINE_LINKS or share < HEADLINE_SHARE:
        return verdict
    reason = (
        f"links to {links} headlines of pages already crawled from the site "
        f"({share:.0%} of its text)"
    )
    return OverviewVerdict(True, verdict.score, (reason, *verdict.reasons), "overview")
