"""The project's default: CECTD's signals, structure and context combined per text block.

CECTD-DS (:mod:`.cetd`) finds the content well but keeps too much: Algorithm 2 marks the
max-DensitySum node under *every* node above the threshold, so sidebars, footers, comment
threads, captions and teaser boxes with dense text come along. The
papers leave the combination of their signals open; this algorithm decides per *text
block* (the nearest block-level element of each piece of text) from:

* the CETD signals: composite text density (Definition 2) of the block, its margin over
  the DensitySum threshold (4.1-4.2), whether CECTD-DS marks it (Algorithm 2), the
  DensitySum of its parent relative to the page's maximum (Definition 3);
* the link share of its text (CETD's LC/C, TextSweeper's link text), its length and kind
  (heading, paragraph, list item, table cell);
* page furniture around it: a ``nav``/``aside``/``footer``/``form``/``figure``... ancestor,
  or an ancestor whose class/id/role words name a boilerplate region (class words are the
  vocabulary of web templates, English whatever the page's language: :mod:`.template_names`);
* structure (:mod:`..structure`): whether it lies in a comment thread, a teaser list or any
  repeated sibling item, found without reading a word (less the groups that are the page's
  layout, :meth:`~scrapy_tagratio.structure.Structures.without_layout`);
* context: the *main container*, the max-DensitySum node outside every comment thread and
  teaser list (:func:`main_container`: a thread often holds the densest node, and must not
  become the article), or the parent of that node when it is one of sibling sections of
  one text (:func:`sections_parent`); whether the block lies inside it or after its end,
  its depth below it and its share of the container's text, the container's share of the
  page, the page's length, and the length and link share of the previous and next blocks.
  Hints on the path from the body to the main container do not count: a hint on the
  article's own container (``class="post has-sidebar"``) says nothing about its parts.

**Comment threads** are decided by a rule, not learned: a thread outside the main
container, on a page with article prose outside every thread (:data:`ARTICLE_PROSE_CHARS`),
is the discussion *of* an article and is dropped; a thread that is the page's main content
(a forum or Q&A page: no article beside it) or lies inside the main container is left to
the model. The development sets' gold disagrees here (dragnet-dev and readability-dev drop
such threads, trafilatura-eval keeps them on forums and some blogs), so a learner fitted on
some sets learns to keep the comments others drop; the rule makes the choice once, and the
training script leaves those blocks out (``benchmarks/train_tagratio.py``). A thread is
what the structure test finds, or repeated items whose class or id names a comment
(:data:`~.template_names.COMMENT_HINT`: the structure test misses threads whose items lack
a meta block), or the repeated items of an element whose class or id names the comments
(:data:`~.template_names.THREAD_HINT`: ``<div id="comments">`` around unnamed
``<dt>``/``<dd>`` pairs) and holds no article (no ``h1``, mostly its items' text, little
prose of its own); beside an article, the list holding a thread's items cannot be the main
container either (it is often the densest node, and the rule above only drops what lies
outside the main container).

**The discussion after the headline** is dropped by a rule as well: the blocks of items
named as comments (:func:`named_comments`) that lie after the article's headline (see the
lead below), when the headline is no part of them. The rule above needs
:data:`ARTICLE_PROSE_CHARS` of article prose beside the thread; a short post (a video, a
photo, a question of two lines) under a long thread has less, so its named comment list
was the main container and the model kept the comments (dragnet-dev's blogs: the largest
block of kept text that its gold leaves out). A headline the page's titles name, followed
by a list its template names as comments, is an article and its discussion, however short
the article; a forum's posts are rarely named so. Where no heading before the main
container is the headline (the container may hold the article's heading, its paragraphs
and the thread side by side), the named thread after :data:`ARTICLE_PROSE_CHARS` of
article prose is the discussion of that prose; a named thread with less prose before it
(a forum's posts under the forum's name) is left to the model.

**The article's lead** is kept by a rule too: article prose (a paragraph's length, few
links, outside comment threads and teaser lists) outside page furniture that lies after
the article's headline (the last of the headings before the main container whose words are
the page's ``og:title`` or ``<title>``, or begin or end it: :func:`headline_block`) and
before the main container: the lead, standfirst or intro that templates put above the
body's container. Nothing else tells the model that these paragraphs belong to the
article, and it dropped many (trafilatura-eval's largest class of gold lost outside the
main container); as a rule (the model unchanged) they are kept on the pages where they
occur and nowhere else, where a model refitted with them as a feature moved the other sets
more than it gained (development notes, accuracy18).

**The article's notes** are kept by a rule too: the blocks under an element its template
names as the article's references, footnotes, endnotes or bibliography
(:data:`~.template_names.NOTES_HINT`: Wikipedia's ``reflist``, a journal's
``c-article-references``, a blog's ``footnotes``), after the article's headline, outside
page furniture and comment threads. Citations are lists of links, so the model reads them
as a teaser list and drops them, yet every development set whose gold holds such a list
counts it as the article's (readability-dev's Wikipedia pages, trafilatura-eval's snippets;
none counts it as boilerplate), as the peers do.

**The article's end** is a rule as well: many templates name the element that holds
the article's body (``class="entry-content"``, ``itemprop="articleBody"``,
``article__body``...: :data:`~.template_names.BODY_HINT`, the vocabulary trafilatura's
``BODY_XPATH`` looks for first). Where the elements of one such name hold at least
:data:`BODY_SHARE` of the text the model keeps (each block's characters weighted by its
probability), the article ends where the last of them ends, and the blocks after it
(comments the structure test missed, author boxes, related stories, the site's footer) are
dropped (:func:`content_probability`). A name alone does not decide it: a ``post-content``
on each teaser of a rail holds little of the kept text, and elements of one name that hold
the comments too (``entry-content`` on the post and on each comment) end after them.

**Links to other pages after the article** are dropped by a rule: a block of a teaser list
(:mod:`..structure`: items leading to distinct pages through their headlines) that lies
after the main container's end, and whose text is all but entirely link text
(:data:`LINKED_SHARE`: a headline and nothing of its own, such as "most read", "more
from", a rail of numbered stories). The development sets' gold leaves out almost all of
these (by words, 97% of the labelled ones on every set), yet a model fitted without the
set that holds most of them keeps them where the main container is short, as another
site's rails would be kept; the lead and the notes (references are lists of links) are
kept before the rule is read.

**The article's code** is kept by a rule as well: preformatted blocks (``pre``) in the main
container, outside page furniture and comment threads. Code is short lines of symbols,
which the model reads as furniture, but in the article's container it is the article's (a
tutorial's commands, a post's listings), as the development sets' gold has it (of the text
in ``pre`` elements, trafilatura-eval's snippets count 19 as content and 1 as boilerplate,
readability-dev's gold holds 104 of 110).

**A data table is decided whole** (rows of cells, not a table that lays the page out:
:func:`~scrapy_tagratio.cleaning.data_tables`): each of its blocks gets the probability of
its most probable block, so a table the model keeps in part (its longer cells, not the
short ones beside them) is kept entire, as a layout block is kept or left whole
(:func:`~.base.dom_labelling`); half a table's cells make no sense on their own, and the
development sets' gold holds such tables whole.

Gradient-boosted trees (:mod:`.trees`) turn these into the probability that the block is
main content; blocks at or above the model's cut are kept. The model is data: the file
``scrapy_tagratio/models/tagratio.json``, written by ``benchmarks/train_tagratio.py`` from
the labelled blocks of every development set, with the names of the features it was fitted
on (checked against :data:`FEATURES` by the tests), its training-data fingerprint and its
leave-one-set-out and site-grouped validation figures.

**One feature reads the block's words** (``word_score``, :mod:`.words`): the log-odds of a
logistic regression over the hashed words of a short block (the model file's
``max_words``; a longer block gets the neutral 0), learned with the trees from the same
labelled blocks (and shipped in the same file). The errors the other features left on
trafilatura-eval were mostly short furniture inside the article's container that only its
words tell apart (prompts to subscribe or share, disclosures, copyright lines, bylines);
on long blocks the word score added nothing the structure did not see, and lost pages of
a set left out of training (development notes, issue 14).

**A short output is filled** (:func:`kept_blocks`): where the blocks at the cut hold less
than :data:`ARTICLE_PROSE_CHARS` characters, the most probable blocks under it are kept
too, in order, until the output holds that much, as long as the model gives them half the
cut or more. Every page of the development sets is an article or a post, yet on some the
model left nothing at the cut (a news site's short summary above a long thread that the
rules drop, a story whose paragraphs all score just under the cut) and the output was
empty or one line. The overview detector judges the filled output.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..cleaning import data_tables, name_codes
from ..document import Document, NodeTable
from ..errors import ExtractionError
from ..structure import Structures, find_structures
from ..titles import HEADLINE_TAGS, names_title, title_words
from .base import (
    HEADING_TAGS,
    Algorithm,
    Labelling,
    bad_parameter,
    check_range,
    dom_labelling,
)
from .cetd import CECTD, density_sum, extract_content
from .template_names import (
    BODY_NAME_LIST,
    COMMENT_NAMES,
    NOTES_NAMES,
    THREAD_NAMES,
    body_names,
    comment_forms,
    hint_flags,
    slugged_furniture,
)
from .trees import BoostedTrees, load_model
from .words import WordScores

__all__ = [
    "ARTICLE_PROSE_CHARS",
    "BODY_SHARE",
    "FEATURES",
    "LINKED_SHARE",
    "MODEL_NAME",
    "BlockRules",
    "TagRatio",
    "block_features",
    "content_probability",
    "headline_block",
    "kept_blocks",
    "main_container",
    "named_comments",
    "sections_parent",
    "word_model",
]

#: Elements that hold page furniture, not article text.
BOILERPLATE_TAGS = frozenset(
    {"nav", "aside", "footer", "form", "menu", "button", "select", "figure", "figcaption",
     "time", "address"}
)  # fmt: skip
#: A text block counts as article prose when it has at least this many characters, under
#: :data:`PROSE_LINK_SHARE` of them in links, and lies in no comment thread, teaser list or
#: page furniture; a page with :data:`ARTICLE_PROSE_CHARS` of such prose has an article
#: beside its comment threads. Design constants (a paragraph, a short article), not fitted:
#: 300 and 1000 characters gave the same leave-one-set-out scores within 0.001.
PROSE_BLOCK_CHARS = 80
PROSE_LINK_SHARE = 0.3
ARTICLE_PROSE_CHARS = 300
#: A sibling of the main container with its tag and at least this share of its DensitySum
#: is another section of the same text (:func:`sections_parent`). Design constant ("about
#: as dense"), not fitted.
SECTION_SHARE = 0.5
#: A block of a teaser list after the main container with at least this share of link
#: text is a link to another page and nothing else (design constant: "all but entirely").
LINKED_SHARE = 0.9
#: The elements of one body name (:data:`~.template_names.BODY_HINT`) end the article when
#: they hold at least this share of the probability-weighted text of the page's blocks.
#: Design constant ("half of what the model keeps"), not fitted: leaving one set out, 0.3
#: gained more on dragnet-dev and the other sets could not choose between 0.3 and 0.7
#: (development notes).
BODY_SHARE = 0.5
#: How many headings (the last before the main container) are compared with the page's
#: titles (:func:`headline_block`).
HEADLINE_CANDIDATES = 8
#: A page whose blocks at the cut hold less than :data:`ARTICLE_PROSE_CHARS` characters keeps
#: its most probable other blocks as well, if their probability reaches this share of the
#: cut (:func:`kept_blocks`). Design constant ("the model leaned towards content at least
#: half as far as the cut asks"), not fitted.
SHORT_OUTPUT_CUT_SHARE = 0.5
#: A block whose text ends with one of these characters (after closing quotes and brackets,
#: :data:`SENTENCE_CLOSING`) ends as a sentence (feature ``ends_sentence``): full stops,
#: question and exclamation marks of the Latin and the CJK scripts and the ellipsis. A
#: short paragraph, list item or line of dialogue of the article mostly ends so; a
#: caption's credit, a prompt ("Read also:"), a box heading or a byline mostly does not.
SENTENCE_ENDS = ".!?\u2026\u3002\uff01\uff1f"
SENTENCE_CLOSING = "\"')]\u00bb\u2019\u201d"


#: Names of the features of :func:`block_features`, in column order.
FEATURES = (
    # CETD's signals (Definitions 1-3, Algorithm 2) and the block itself.
    "log_length",
    "link_share",
    "log_density",
    "density_over_threshold",
    "marked_by_cectd",
    "parent_densitysum",
    "is_heading",
    "is_list_item",
    "is_paragraph",
    "is_table_cell",
    # Page furniture off the main path.
    "under_furniture_tag",
    "under_furniture_hint",
    # Structure (:mod:`..structure`): repeated items, comment threads, teaser lists.
    "in_comment_thread",
    "in_teaser_list",
    "in_repeated_item",
    "thread_beside_article",
    # Context: where the block lies relative to the main container and its neighbours.
    "depth_below_main",
    "position",
    "inside_main",
    "after_main",
    "share_of_main",
    "main_share_of_page",
    "log_page_length",
    "previous_log_length",
    "previous_link_share",
    "next_log_length",
    "next_link_share",
    # The text: whether it ends as a sentence does (:data:`SENTENCE_ENDS`), the block's
    # and its neighbours'.
    "ends_sentence",
    "previous_ends_sentence",
    "next_ends_sentence",
    # The block's words: their log-odds by the model file's word model (:mod:`.words`).
    "word_score",
)
#: The model file the default reads (``scrapy_tagratio/models/tagratio.json``).
MODEL_NAME = "tagratio"
#: CECTD-DS, whose composite text density the features read: made once (making one
#: validates its parameters, a few microseconds a page).
_CECTD = CECTD()


def main_container(
    nodes: NodeTable,
    sums: np.ndarray,
    structures: Structures,
    items: np.ndarray | None = None,
    prose: np.ndarray | None = None,
    comment_forms: np.ndarray | None = None,
) -> int:
    """The node of maximal DensitySum (CETD Definition 3) that is neither inside a comment
    thread or teaser list nor one of their items: on many blog and news pages the thread
    holds the densest node, and the article container must not lose to it. With
    ``items`` (boolean per node: the items named as comments, :func:`named_comments`, and
    the teaser lists' items, on a page with an article beside them), neither a node
    inside one nor a node holding more than half of its text in them can be it either:
    the list that holds a thread's or a teaser list's items is no article (a list of
    many dense items outweighs the article's paragraphs), unless it holds article prose
    too (``prose``: per node, the characters of article prose its own block holds; a
    node holding :data:`ARTICLE_PROSE_CHARS` of it is the article's container, whatever
    list follows the story in it). Items the structure test alone calls comments do not
    count here: on a blog's front page its posts are such items, and their list is the
    content. Nor can a node inside ``comment_forms`` (boolean per node: in a form its
    template names as the comment form, :func:`~.template_names.comment_forms`): its labels
    and the comment policy beside the fields are dense text with no links. The body when
    every candidate is excluded."""
    excluded = structures.comment | structures.teaser
    if comment_forms is not None:
        excluded = excluded | comment_forms
    if items is not None and items.any():
        inside = nodes.with_descendants(items)
        # Per node outside the items, the characters of its subtree that lie in them (the
        # nodes inside are excluded whatever they hold).
        in_items = nodes.subtree_sum(np.where(inside, nodes.own_chars, 0))
        holds_list = 2 * in_items > nodes.chars
        if prose is not None:
            holds_list &= nodes.subtree_sum(prose) < ARTICLE_PROSE_CHARS
        excluded = excluded | inside | holds_list
    # Every candidate excluded: all are -inf, and the first, the body, is the maximum.
    return int(np.argmax(np.where(excluded, -np.inf, sums)))


def prose_like(length: np.ndarray, link_share: np.ndarray) -> np.ndarray:
    """Per text block (its length and link share): it reads as article prose, at least
    :data:`PROSE_BLOCK_CHARS` characters with under :data:`PROSE_LINK_SHARE` of them in
    links (the callers add where it must not lie: threads, teaser lists)."""
    return (length >= PROSE_BLOCK_CHARS) & (link_share < PROSE_LINK_SHARE)


def named_comments(nodes: NodeTable, structures: Structures) -> np.ndarray:
    """Boolean per node: a repeated item whose class or id names a comment
    (:data:`~.template_names.COMMENT_HINT`), or a repeated item of a *named thread*: an
    element (not an item, nor the page's ``html`` or ``body``, whose classes describe the
    page) whose class or id names comments (:data:`~.template_names.THREAD_HINT`), which
    holds no ``h1``, at least half of its text in repeated items and under
    :data:`ARTICLE_PROSE_CHARS` of prose outside them, as ``<div id="comments">`` around a
    list of unnamed ``<dt>`` authors and ``<dd>`` bodies."""
    items = structures.repeated
    named = hint_flags(nodes, items, COMMENT_NAMES)
    # The elements holding items whose hints name a thread, then those of them that may be
    # one: a hint's answer does not depend on the others read, and most pages have none,
    # so the narrowing is done only where there is something to narrow.
    containers = hint_flags(nodes, nodes.with_ancestors(items) & ~items, THREAD_NAMES)
    if not containers.any():
        return named
    containers &= ~nodes.tag_mask(("html", "body"))
    containers &= ~nodes.with_ancestors(nodes.tag_mask(("h1",)))  # an article's, not a thread's
    # The outermost such elements outside named items (a comment's own parts are no thread).
    containers &= ~nodes.with_descendants(named)
    containers &= ~nodes.with_descendants(containers)[np.maximum(nodes.parent, 0)]
    if not containers.any():
        return named
    positions = np.arange(len(nodes))
    length = nodes.block_chars
    prose = prose_like(length, nodes.block_link_chars / np.maximum(length, 1))
    for container in np.flatnonzero(containers).tolist():
        below = (positions > container) & (positions < nodes.end[container])
        in_items = nodes.with_descendants(items & below)
        held = int(length[in_items].sum())
        own_prose = int(length[below & prose & ~in_items].sum())
        if 2 * held >= int(nodes.chars[container]) and own_prose < ARTICLE_PROSE_CHARS:
            named |= items & below
    return named


def sections_parent(nodes: NodeTable, sums: np.ndarray, main: int, excluded: np.ndarray) -> int:
    """The parent of ``main`` when ``main`` is one section of a text split into sibling
    sections of its tag (documentation chapters, long reads, a blog's posts): CETD's
    main container is the single densest node, so the article's other sections lay
    outside it and after its end. A sibling counts when it has ``main``'s tag, at
    least :data:`SECTION_SHARE` of its DensitySum (Definition 3), is not ``excluded``
    (comment threads, teaser lists) and has no hint naming page furniture (a sidebar
    column beside the article); ``main`` itself otherwise."""
    parent = int(nodes.parent[main])
    if parent < 0:
        return main
    codes, _ = nodes.tag_codes
    siblings = (nodes.parent == parent) & (codes == codes[main]) & ~excluded
    siblings[main] = False
    siblings &= sums >= SECTION_SHARE * sums[main]
    if not (siblings.any() and sums[main] > 0):  # most pages: no hint to read
        return main
    siblings &= ~hint_flags(nodes, where=siblings)
    return parent if siblings.any() else main


def headline_block(document: Document, blocks: np.ndarray, before: int) -> int:
    """The block of the article's headline among ``blocks`` (a page's text blocks in
    document order): the last of the :data:`HEADLINE_CANDIDATES` ``h1``-``h3`` blocks
    before node ``before`` whose words (case and punctuation aside) are the page's
    ``og:title`` or ``<title>``, or begin or end it (:mod:`..headline` reads the headline
    so); -1 when there is none."""
    titles = [t for t in (title_words(document.title), title_words(document.html_title)) if t]
    if not titles:
        return -1
    heads = blocks[(blocks < before) & document.nodes.tag_mask(HEADLINE_TAGS)[blocks]]
    heads = heads[-HEADLINE_CANDIDATES:]
    if not heads.size:
        return -1
    texts = document.few_block_texts(heads)
    for block, text in zip(reversed(heads.tolist()), reversed(texts), strict=True):
        if any(names_title(title_words(text), title) for title in titles):
            return block
    return -1


def body_wrappers(nodes: NodeTable, body: np.ndarray, prose: np.ndarray) -> np.ndarray:
    """Boolean per node: it is or wraps an element named as the article's body (``body``:
    per node, its body name's number, -1 for none: :func:`~.template_names.body_names`) that
    holds article prose (``prose``: per node, the characters of article prose its own block
    holds), as Blogger's ``date-outer`` and ``widget Blog`` wrap its ``post-body``, or a
    theme's post element with ``author-x`` classes its ``entry-content``. A boilerplate word
    in such an element's name describes what else it holds (a date, a widget), not the body:
    :func:`block_features` does not read it. The bodies: those holding a third of the
    largest body's prose or more (a widget's excerpts of other posts, each under the same
    body name, are shorter than the article), and the bodies with prose inside those (an
    embed's text in the article)."""
    named = np.flatnonzero(body >= 0)
    if not named.size:
        return np.zeros(len(nodes), dtype=bool)
    held = nodes.subtree_sum(prose)[named]
    articles = np.zeros(len(nodes), dtype=bool)
    articles[named[held >= max(ARTICLE_PROSE_CHARS, float(held.max()) / 3)]] = True
    bodies = np.zeros(len(nodes), dtype=bool)
    bodies[named[nodes.with_descendants(articles)[named] & (held > 0)]] = True
    return nodes.with_ancestors(bodies)


def body_spans(nodes: NodeTable, blocks: np.ndarray, body: np.ndarray) -> np.ndarray:
    """The elements whose hint names the article's body (``body``: per node, the number
    of its body name, -1 for none: :func:`~.template_names.body_names`), as spans of
    ``blocks`` (a page's text blocks in document order): one row ``(name, first, stop)`` per
    element that holds a block and lies in no earlier element of its name, ``name`` its body
    name's number (numbered in order of first use), its blocks ``blocks[first:stop]``.
    Linear in the page (no pass per name: a page may hold thousands of names)."""
    elements = np.flatnonzero(body >= 0)
    if not elements.size:  # nearly half the pages name no body: none of the passes below
        return np.empty((0, 3), dtype=np.int64)
    in_order, _ = name_codes([BODY_NAME_LIST[k] for k in body[elements].tolist()])
    names = in_order.astype(np.int64)
    order = np.lexsort((elements, names))  # by name, then in document order
    elements, names = elements[order], names[order]
    ends = nodes.end[elements].astype(np.int64)
    # The furthest end of each name's elements so far: offset by name, one running maximum
    # serves all names (a name's offset exceeds every end of the names before it).
    offset = names * (len(nodes) + 1)
    reach = np.maximum.accumulate(offset + ends) - offset
    first_of_name = np.concatenate(([True], names[1:] != names[:-1]))
    inside_earlier = ~first_of_name & (elements < np.concatenate(([0], reach[:-1])))
    first = np.searchsorted(blocks, elements)
    stop = np.searchsorted(blocks, ends)
    kept = ~inside_earlier & (stop > first)
    return np.column_stack((names[kept], first[kept], stop[kept]))


def table_spans(nodes: NodeTable, blocks: np.ndarray) -> np.ndarray:
    """The data tables (:func:`~scrapy_tagratio.cleaning.data_tables`) as spans of
    ``blocks`` (a page's text blocks in document order): one row ``(first, stop)`` per
    table holding a block, its blocks ``blocks[first:stop]``. A data table holds no other
    table, so the spans are disjoint."""
    tables = np.flatnonzero(data_tables(nodes))
    if not tables.size:  # most pages: none of the passes below
        return np.empty((0, 2), dtype=np.intp)
    first = np.searchsorted(blocks, tables)
    stop = np.searchsorted(blocks, nodes.end[tables])
    held = stop > first
    return np.column_stack((first[held], stop[held]))


@dataclass(frozen=True, eq=False)
class BlockRules:
    """What the rules of the module's description read beside the model, per block of
    :func:`block_features` (document order)."""

    #: The article's lead: kept whatever the model says.
    lead: np.ndarray
    #: The discussion after the article's headline: dropped whatever the model says.
    discussion: np.ndarray
    #: The teasers' links after the article (:data:`LINKED_SHARE`): dropped whatever the
    #: model says.
    links_after: np.ndarray
    #: The article's notes (references, footnotes) after its headline: kept whatever the
    #: model says.
    notes: np.ndarray
    #: The article's code (``pre`` blocks in the main container): kept whatever the model
    #: says.
    code: np.ndarray
    #: The block's characters (the weights of :data:`BODY_SHARE`).
    chars: np.ndarray
    #: The elements naming the article's body, as spans of blocks (:func:`body_spans`).
    bodies: np.ndarray
    #: The data tables, as spans of blocks (:func:`table_spans`).
    tables: np.ndarray

    def body_end(self, probability: np.ndarray) -> int | None:
        """The last block of the article's body: of the body names whose elements hold
        the most probability-weighted text, their last block, if they hold at least
        :data:`BODY_SHARE` of the page's; None otherwise."""
        if not len(self.bodies):
            return None
        names, first, stop = self.bodies.T
        before = np.concatenate(([0.0], np.cumsum(probability * self.chars)))
        # Per name's number (a name without a span holds 0.0): ties go to the first.
        held = np.bincount(names, weights=before[stop] - before[first])
        best = int(np.argmax(held))
        if held[best] <= 0.0 or held[best] < BODY_SHARE * before[-1]:
            return None
        return int(stop[names == best].max()) - 1


_TEASER = FEATURES.index("in_teaser_list")
_AFTER_MAIN = FEATURES.index("after_main")
_LINK_SHARE = FEATURES.index("link_share")


def _links_after_article(features: np.ndarray) -> np.ndarray:
    """Per block, whether it is a teaser's link after the main container's end (so outside
    it), with at least :data:`LINKED_SHARE` of link text (the rule of the module's
    description)."""
    return (
        (features[:, _TEASER] > 0)
        & (features[:, _AFTER_MAIN] > 0)
        & (features[:, _LINK_SHARE] >= LINKED_SHARE)
    )


def block_features(
    document: Document, words: WordScores | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, BlockRules]:
    """Features of the page's text blocks, their ``word_score`` by the word model ``words``
    (:func:`word_model` of the block model; None: 0, for the training script, which
    scores them with each fold's own word model).

    Returns ``(blocks, features, owner, rules)``: the node indices of the blocks (the
    block-level elements that own text, in document order), a ``len(blocks) x
    len(FEATURES)`` array whose columns are :data:`FEATURES` (float32), each node's block
    (:attr:`NodeTable.block`), and what the rules of the module's description read
    (:class:`BlockRules`: the article's lead, the discussion after its headline, its
    notes and code, the body's names, the data tables).
    """
    nodes = document.nodes
    n = len(nodes)
    density = _CECTD.densities(nodes)
    sums = density_sum(nodes, density)
    marked, threshold = extract_content(nodes, density, sums, 1.0)
    by_cectd = nodes.with_descendants(marked)
    structures = find_structures(document).without_layout(nodes)
    named = named_comments(nodes, structures)
    in_named = nodes.with_descendants(named)  # in an item named as a comment
    threads = structures.comment | in_named
    owner = nodes.block
    length = nodes.block_chars
    link_length = nodes.block_link_chars
    blocks = nodes.text_blocks
    parents = np.maximum(nodes.parent[blocks], 0)
    log_density = np.log1p(np.maximum(density[blocks], 0.0))
    log_length = np.log1p(length[blocks])
    link_share = link_length[blocks] / np.maximum(length[blocks], 1)
    in_thread = threads[blocks]
    # Article prose: long, unlinked blocks outside threads, teaser lists and furniture.
    prose = prose_like(length[blocks], link_share) & ~(in_thread | structures.teaser[blocks])
    text_path = nodes.with_ancestors(length > 0)  # the nodes holding text blocks
    own_prose = np.zeros(n, dtype=np.int32)  # whole characters: summed in C by subtree_sum
    own_prose[blocks[prose]] = length[blocks[prose]]
    body = body_names(nodes, text_path)
    wraps_body = body_wrappers(nodes, body, own_prose)

    def furniture_around(main: int) -> tuple[np.ndarray, np.ndarray]:
        """Per node, under a furniture tag / a boilerplate hint off ``main``'s path.
        Only the text blocks' flags are read, and a block is under a hint exactly when
        one of its ancestors-or-self off the main path has it: the other nodes' hints
        are not read (about two in five of a page's distinct hints)."""
        main_path = nodes.ancestors_or_self(main)
        under_tag = nodes.with_descendants(nodes.tag_mask(BOILERPLATE_TAGS) & ~main_path)
        on_text_path = text_path & ~main_path & ~wraps_body
        hinted = hint_flags(nodes, where=on_text_path)
        if hinted.any():
            hinted &= ~slugged_furniture(document, hinted, main_path)
        return under_tag, nodes.with_descendants(hinted)

    def article_beside(under_tag: np.ndarray, under_hint: np.ndarray) -> bool:
        """The page holds :data:`ARTICLE_PROSE_CHARS` of article prose outside page
        furniture (:func:`furniture_around` a main container)."""
        furniture = under_tag[blocks] | under_hint[blocks]
        return float(length[blocks][prose & ~furniture].sum()) >= ARTICLE_PROSE_CHARS

    in_forms = comment_forms(nodes)
    main = main_container(nodes, sums, structures, comment_forms=in_forms)
    under_tag, under_hint = furniture_around(main)
    has_article = article_beside(under_tag, under_hint)
    if not has_article and named.any():
        # The main container lies in a named thread or is its list: the article's own
        # container is then off the main path, and its hints (a blog post's "author-x"
        # or "comments-open" classes) make its prose look like furniture. Seen from the
        # container outside the thread, the article's prose is the article's.
        outside = main_container(nodes, sums, structures, named, own_prose, in_forms)
        has_article = outside != main and article_beside(*furniture_around(outside))
    if has_article:  # the thread is the discussion of an article: its list is no article
        items = named | structures.teaser_items
        beside = main_container(nodes, sums, structures, items, own_prose, in_forms)
        if beside != main:
            main = beside
            under_tag, under_hint = furniture_around(main)
    sections = sections_parent(nodes, sums, main, threads | structures.teaser)
    if sections != main:
        main = sections
        under_tag, under_hint = furniture_around(main)
    inside = (blocks >= main) & (blocks < nodes.end[main])
    headline = headline_block(document, blocks, main)
    lead = (blocks > headline) & (nodes.end[blocks] <= main) & (headline >= 0)
    furniture = under_tag[blocks] | under_hint[blocks]  # per block, around the main container
    lead &= prose & ~furniture
    # The discussion of the article: a named thread after its headline or, on a page where
    # no headline was found before the main container (it may hold the article and its
    # thread side by side), after the article's prose.
    if headline >= 0:
        discussion = in_named[blocks] & (blocks > headline) & ~in_named[headline]
    else:
        prose_chars = own_prose[blocks]
        prose_before = np.cumsum(prose_chars) - prose_chars
        discussion = in_named[blocks] & (prose_before >= ARTICLE_PROSE_CHARS)
    page_chars = max(float(nodes.chars[0]), 1.0)
    main_chars = max(float(nodes.chars[main]), 1.0)
    previous = lambda values: np.concatenate(([0.0], values))[:-1]  # noqa: E731
    ends_sentence = document.block_ends_in(blocks, SENTENCE_ENDS, SENTENCE_CLOSING)
    following = lambda values: np.concatenate((values, [0.0]))[1:]  # noqa: E731

    def columns() -> Iterator[np.ndarray | float]:
        """The columns of :data:`FEATURES`, in order, computed one at a time as the matrix
        is filled (all held at once beside it, they would be the page's peak of memory on
        a large page)."""
        yield log_length
        yield link_share
        yield log_density
        yield log_density - np.log1p(max(threshold, 0.0))
        yield by_cectd[blocks]
        yield sums[parents] / max(float(sums.max()), 1e-9)
        yield nodes.block_tag_mask(HEADING_TAGS)
        yield nodes.block_tag_mask(("li",))
        yield nodes.block_tag_mask(("p",))
        yield nodes.block_tag_mask(("td", "th"))
        yield under_tag[blocks]
        yield under_hint[blocks]
        yield in_thread
        yield structures.teaser[blocks]
        yield nodes.with_descendants(structures.repeated)[blocks]
        yield in_thread & ~inside & has_article
        yield np.clip((nodes.depth[blocks] - nodes.depth[main]) / 5.0, -3.0, 3.0)
        yield blocks / max(n, 1)
        yield inside
        yield blocks >= nodes.end[main]
        yield np.where(inside, length[blocks] / main_chars, 0.0)
        yield main_chars / page_chars
        yield np.log1p(page_chars)
        yield previous(log_length)
        yield previous(link_share)
        yield following(log_length)
        yield following(link_share)
        yield ends_sentence
        yield previous(ends_sentence)
        yield following(ends_sentence)
        yield word_scores

    # Before the matrix is allocated: on a large page it is tens of MB.
    word_scores = 0.0 if words is None else words.block_scores(document, blocks)
    # float32: the values the model was fitted and validated on (the training script keeps
    # the features so), and half the memory of float64 on a large page.
    features = np.empty((len(blocks), len(FEATURES)), dtype=np.float32)
    for column, values in zip(features.T, columns(), strict=True):
        column[:] = values
    # The article's notes: blocks under an element its template names as references or
    # footnotes, outside page furniture and threads, after the headline where there is one.
    notes = nodes.with_descendants(hint_flags(nodes, text_path, NOTES_NAMES))[blocks]
    notes &= ~(furniture | in_thread) & (blocks > headline)
    # The article's code: preformatted blocks in the main container, outside page
    # furniture and threads.
    code = nodes.block_tag_mask(("pre",)) & inside & ~(furniture | in_thread)
    rules = BlockRules(
        lead,
        discussion,
        _links_after_article(features),
        notes,
        code,
        length[blocks],
        body_spans(nodes, blocks, body),
        table_spans(nodes, blocks),
    )
    return blocks, features, owner, rules


_BESIDE_ARTICLE = FEATURES.index("thread_beside_article")


@functools.cache  # per model object (models are read once per process: :func:`load_model`)
def word_model(model: BoostedTrees) -> WordScores:
    """The word model of the block model ``model`` (its file's ``"words"``);
    :class:`ExtractionError` if it has none."""
    if "words" not in model.about:
        raise ExtractionError("the block model file holds no word model ('words')")
    return WordScores.from_dict(model.about["words"])


def content_probability(model: BoostedTrees, features: np.ndarray, rules: BlockRules) -> np.ndarray:
    """Per block (a row of :func:`block_features` and its :class:`BlockRules`), the
    probability that it is main content: the model's, 0 for a comment thread beside an
    article, for the discussion after the article's headline and for the teasers' links
    after the article, 1 for the article's
    lead, notes and code, then 0 after the article's body's end, and each data table's blocks
    the probability of its most probable block (the rules of the module's description)."""
    probability = model.probability(features)
    probability[features[:, _BESIDE_ARTICLE] > 0] = 0.0
    probability[rules.discussion] = 0.0
    probability[rules.links_after] = 0.0
    probability[rules.lead] = 1.0
    probability[rules.notes] = 1.0
    probability[rules.code] = 1.0
    end = rules.body_end(probability)
    if end is not None:
        probability[end + 1 :] = 0.0
    if len(rules.tables):
        # The tables' blocks, table after table (the spans are disjoint and not empty).
        first, stop = rules.tables.T
        sizes = stop - first
        offsets = np.cumsum(sizes) - sizes
        in_tables = np.arange(int(sizes.sum())) - np.repeat(offsets - first, sizes)
        most = np.maximum.reduceat(probability[in_tables], offsets)
        probability[in_tables] = np.repeat(most, sizes)
    return probability


def kept_blocks(probability: np.ndarray, cut: float, chars: np.ndarray) -> np.ndarray:
    """Per block (its content probability and its characters ``chars``), whether the output
    keeps it: its probability reaches ``cut``; and on a page where those blocks hold less
    than :data:`ARTICLE_PROSE_CHARS` characters, the most probable of the others too, in
    order of probability until the kept blocks hold that much, while their probability
    reaches :data:`SHORT_OUTPUT_CUT_SHARE` of the cut. An article page whose model leaves
    nothing or a line at the cut (a short post above a long thread the rules drop, a
    story whose blocks all score just under the cut) gave an empty or one-line text,
    though its next blocks were the article; pages whose other blocks the model gives
    little keep what the cut keeps."""
    kept = probability >= cut
    missing = ARTICLE_PROSE_CHARS - int(chars[kept].sum())
    if missing <= 0:
        return kept
    others = np.flatnonzero(~kept & (probability >= SHORT_OUTPUT_CUT_SHARE * cut))
    if others.size:
        order = others[np.argsort(-probability[others], kind="stable")]
        count = int(np.searchsorted(np.cumsum(chars[order]), missing)) + 1
        kept[order[:count]] = True
    return kept


@dataclass(frozen=True)
class TagRatio(Algorithm):
    """CECTD's signals, page furniture, repeated structures and context combined per text
    block by boosted trees fitted on every development set."""

    name: ClassVar[str] = "tagratio"
    summary: ClassVar[str] = (
        "default: per text block, CECTD densities, link share, page furniture, comment "
        "threads and teaser lists, and context, combined by boosted trees fitted on the "
        "development sets"
    )

    #: Keep blocks whose content probability reaches this value; None: the model's own
    #: cut, chosen inside the training folds.
    threshold: float | None = None
    #: The block model: the shipped one, or the path of a ``.json`` model file written by
    #: ``benchmarks/train_tagratio.py`` (validation runs score held-out sets with these).
    model: str = MODEL_NAME

    def validate(self) -> None:
        if self.threshold is not None:
            check_range("threshold", self.threshold, 0.0, 1.0)
        if not isinstance(self.model, str) or not (
            self.model == MODEL_NAME or self.model.endswith(".json")
        ):
            raise bad_parameter(
                f"parameter 'model' must be {MODEL_NAME!r} or a path ending in .json, "
                f"not {self.model!r}"
            )
        # A missing or malformed file is an error now, not per page; so is a model of
        # other features (another version of this code): its trees would split on the
        # wrong columns of block_features.
        model = load_model(self.model)
        if model.features != FEATURES:
            pairs = itertools.zip_longest(model.features, FEATURES, fillvalue=None)
            at, (theirs, ours) = next(
                (i, pair) for i, pair in enumerate(pairs) if pair[0] != pair[1]
            )
            raise ExtractionError(
                f"the model file {self.model} holds a model of other features (written by "
                f"another version of this code): its feature {at} is {theirs!r}, this "
                f"code's is {ours!r}"
            )
        word_model(model)

    def run(self, document: Document) -> Labelling:
        nodes = document.nodes
        n = len(nodes)
        model = load_model(self.model)
        cut = model.cut if self.threshold is None else self.threshold
        if n == 0 or nodes.chars[0] == 0:
            return dom_labelling(document, np.zeros(n, dtype=bool), np.zeros(n), cut)
        blocks, features, owner, rules = block_features(document, word_model(model))
        probability = np.zeros(n)
        probability[blocks] = content_probability(model, features, rules)
        del features  # not held while the text is built (large pages)
        kept = np.zeros(n, dtype=bool)
        kept[blocks] = kept_blocks(probability[blocks], cut, rules.chars)
        # Scores per node: the probability of the block it belongs to. The per-block
        # arrays are not held while the text is built (a large page's peak of memory).
        content, scores = kept[owner], probability[owner]
        del blocks, owner, rules, probability, kept
        return dom_labelling(document, content, scores, cut)
