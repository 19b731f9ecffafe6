"""Reading a page with lexbor (through selectolax), the HTML5 parser: a third reader
beside libxml2's two (:mod:`.reader`), giving the same :class:`~.events.PageEvents`.

lexbor parses about twice as fast as libxml2, as browsers do (HTML5's tree building), so
its trees differ from libxml2's in places (``tests/test_lexbor_reader.py`` and
``benchmarks/reader_shapes.py`` count where): a ``table`` gets its implied ``tbody``, an
``a`` wrapping blocks is split around them, text and elements after ``</html>`` go into the
body, and a page is kept to any depth. Some of these are undone here, cheaply, so that the
node table is libxml2's wherever that is cheap to get:

* the markup after the last ``</html>`` is cut off before parsing (:func:`scan_markup`
  finds it): libxml2 puts it in a second root, which the node table never reads;
* an implied ``tbody`` (one without attributes in a ``table`` whose source has no
  ``<tbody``) is left out of the events, its children read as the table's;
* so is the empty ``head`` lexbor makes for a page without one (libxml2 makes none).

The pure-Python walk (:func:`read_lexbor`) calls the same recorder as lxml's parser target
(:class:`~.events._Recorder`) per start tag, run of text and end tag.

lexbor is quadratic in the depth of nested block tags (each ``<div>`` looks down the stack
of open elements for a ``<p>`` to close): a page whose block tags may nest deeper than
:data:`MAX_BLOCK_DEPTH` is read by libxml2's parser target instead, and so is a page with a
``<frameset>`` (HTML5 then drops the body; libxml2 reads it); :func:`scan_markup` finds
both.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from .events import _BATCH, _TAG_NAMES, SIGNAL_ATTRIBUTES, SIGNAL_ELEMENTS, PageEvents, _Recorder

__all__ = [
    "KERNEL_FUNCTIONS",
    "MAX_ATTRIBUTES",
    "MAX_BLOCK_DEPTH",
    "PROBE",
    "lexbor_status",
    "lexbor_walk_kernel",
    "lexbor_walk_status",
    "read_lexbor",
    "same_events",
    "scan_markup",
    "stale_kernel",
]

#: The compiled kernel's functions the package calls (here, in the lower of the two
#: modules that load the kernel): a kernel built from older sources (an editable install
#: whose ``_kernel.pyx`` changed since its last build) lacks some and is not used.
KERNEL_FUNCTIONS = (
    "walk", "walk_lexbor", "bind_lexbor", "scan_markup", "piece_lengths", "span_text_lengths",
    "text_lines", "starts_words", "word_pairs", "first_codes", "nearest_flagged",
    "subtree_mask", "subtree_sums", "subtree_argmax", "sibling_groups", "item_tests",
    "tree_sums", "automaton_piece_counts", "half_singles", "bind_libxml2", "sax_read",
    "utf8_valid", "most_attributes", "kept_elements", "body_events", "event_markup",
    "density_terms", "subtree_flagged", "block_pieces", "words_and_doubts", "word_hashes",
    "span_texts", "ends_in", "hashed_words", "runs_by_block", "span_hashed_words",
    "event_mask",
)  # fmt: skip


def stale_kernel(kernel: ModuleType) -> str | None:
    """Why ``kernel`` is not used when it lacks one of :data:`KERNEL_FUNCTIONS`, else
    None."""
    missing = [name for name in KERNEL_FUNCTIONS if not hasattr(kernel, name)]
    return f"built from older sources (no {', '.join(missing)}): rebuild it" if missing else None


def _load() -> tuple[ModuleType | None, str]:
    try:
        from selectolax import lexbor
    except ImportError as exc:
        return None, f"selectolax is not installed ({exc})"
    return lexbor, f"selectolax {_version()}"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("selectolax")
    except PackageNotFoundError:  # pragma: no cover - imported but not installed
        return "unknown"


_LEXBOR, _STATUS = _load()

#: Block tags nested deeper than this may make lexbor's tree building slow (quadratic):
#: such pages go to the linear reader; and so do pages of more ``option`` start tags
#: (lexbor is quadratic in the options of one ``select``: 20,000 took 1.5 s).
MAX_BLOCK_DEPTH = 4096
#: A page with a start tag of more attributes than this goes to the linear reader too:
#: lexbor compares each attribute with the element's others (10,000 take 0.2 s, 100,000
#: took 21 s), and so does libxml2's tree building (100,000: 28 s; its SAX and target
#: readers build no tree). Counted as :func:`_most_attributes` does, a script's text can
#: read as a few thousand (``a<b`` starts a "tag"): the development pages reach 3,898.
MAX_ATTRIBUTES = 10_000
#: The start and end tags of the elements whose start tag closes an open ``p`` (the ones
#: that make lexbor look down its stack), for :func:`scan_markup`.
_BLOCK_TAG = re.compile(
    rb"<(/?)(?:div|section|article|aside|nav|header|footer|main|ul|ol|dl|blockquote"
    rb"|fieldset|figure|details|center|menu|address|hgroup|form)[\s/>]",
    re.I,
)
_HTML_END = re.compile(rb"</html(?:[\s/][^>]*)?>", re.I)
_TBODY = re.compile(rb"<tbody[\s/>]", re.I)
_FRAMESET = re.compile(rb"<frameset[\s/>]", re.I)
_OPTION = re.compile(rb"<option[\s/>]", re.I)
#: A start tag up to its ``>`` (not taken) or the end of the markup, for
#: :func:`_most_attributes`: its name, then (group 1) the rest, quoted runs whole.
_START_TAG = re.compile(rb"<[A-Za-z][^\s/>]*((?:[^>\"']+|\"[^\"]*\"?|'[^']*'?)*)")
_QUOTED = re.compile(rb"\"[^\"]*\"?|'[^']*'?")
#: lexbor's tag ids of text and element nodes (``LXB_TAG__TEXT``; elements above 5).
_TEXT_ID = 2
_LAST_SPECIAL_ID = 5


def lexbor_status() -> tuple[bool, str]:
    """Whether lexbor (selectolax) can read pages here, and why (not)."""
    return _LEXBOR is not None, _STATUS


def scan_markup(data: bytes) -> tuple[bool, bool, int]:
    """What the lexbor reader checks in the markup ``data`` before parsing it: whether
    lexbor should leave it to the linear reader (its block tags may nest deeper than
    :data:`MAX_BLOCK_DEPTH`, it has more ``<option`` start tags than that, a start tag of
    more than :data:`MAX_ATTRIBUTES` attributes, or a ``<frameset``, for which HTML5
    drops the body that libxml2 reads), whether it has a
    ``<tbody`` start tag, and where its last ``</html>`` ends (-1 without one). In one C
    pass with the compiled kernel, else by string searches and regex passes (the depth
    and the options only on pages with more than :data:`MAX_BLOCK_DEPTH` tags, which
    bounds the others)."""
    if _KERNEL is not None:
        linear, tbody, html_end = _KERNEL.scan_markup(data, MAX_BLOCK_DEPTH)
        return linear or _KERNEL.most_attributes(data) > MAX_ATTRIBUTES, tbody, html_end
    linear = _FRAMESET.search(data) is not None
    if not linear and data.count(b"<") > MAX_BLOCK_DEPTH:
        closes = np.fromiter((len(m.group(1)) for m in _BLOCK_TAG.finditer(data)), np.int8)
        linear = len(closes) > MAX_BLOCK_DEPTH and bool(
            np.cumsum(1 - 2 * closes.astype(np.int32)).max() > MAX_BLOCK_DEPTH
        )
        linear = linear or sum(1 for _ in _OPTION.finditer(data)) > MAX_BLOCK_DEPTH
    linear = linear or _most_attributes(data) > MAX_ATTRIBUTES
    tbody = _TBODY.search(data) is not None
    html_end = max((m.end() for m in _HTML_END.finditer(data)), default=-1)
    return linear, tbody, html_end


def _most_attributes(data: bytes) -> int:
    """The most attributes any start tag of the markup ``data`` holds (the compiled
    kernel's ``most_attributes`` counts the same): a start tag is ``<`` and a letter,
    its name runs to white space, ``/`` or ``>``, and it ends at the first ``>`` outside
    quotes (a ``"`` or ``'`` quotes up to the next same quote), or with ``data``; its
    attributes are its runs of bytes other than white space after the name, quoted runs
    read as nothing (so a tag cannot hide attributes behind a quoted ``>``). A tag of
    ``k`` such runs is at least ``2k - 1`` bytes long, so only long tags are counted.
    The compiled twin, many times faster, runs where the kernel is built."""
    most = 0
    for tag in _START_TAG.finditer(data):
        rest = tag.group(1)
        if len(rest) >= 2 * most + 1:
            most = max(most, len(_QUOTED.sub(b"", rest).split()))
    return most


def _walk_python(root: object, recorder: _Recorder, implied_tbody: bool) -> None:
    """The pure-Python walk of lexbor's tree from ``root`` (selectolax nodes), one
    recorder call per start tag, run of text and end tag (attribute values lexbor holds
    without a value read as ``""``, as lxml gives them)."""
    start, end, data = recorder.start, recorder.end, recorder.data
    stack = [_node_iter(root, start)]
    skipped: list[bool] = []  # per open element: its events are left out (implied tbody)
    while stack:
        for node in stack[-1]:
            kind = node.tag_id
            if kind == _TEXT_ID:
                data(node.text_content)
            elif kind > _LAST_SPECIAL_ID:
                tag = node.tag
                attributes = node.attributes
                if None in attributes.values():
                    attributes = {key: value or "" for key, value in attributes.items()}
                implied = not attributes and (
                    (implied_tbody and tag == "tbody") or (tag == "head" and node.child is None)
                )
                if not implied:
                    start(tag, attributes)
                skipped.append(implied)
                stack.append(node.iter(include_text=True))
                break
        else:
            stack.pop()
            if not skipped or not skipped.pop():
                end("")


def _node_iter(root: Any, start: Callable[[str, Any], None]) -> Any:
    """``root`` opened in the recorder; the iterator over its children."""
    attributes = {key: value or "" for key, value in root.attributes.items()}
    start(root.tag, attributes)
    return root.iter(include_text=True)


def read_lexbor(
    data: bytes,
    linear: Callable[[], PageEvents],
    check_deadline: Callable[[], None],
    compiled: bool = True,
) -> PageEvents:
    """Parse ``data`` (the page as the parsers get it, in UTF-8) with lexbor (up to its
    last ``</html>``) and walk the tree into the recorder: by the compiled walk when it
    is usable (:func:`lexbor_walk_status`) and ``compiled``, else in Python. A page lexbor
    should not read (too deep, or a frameset: :func:`scan_markup`) is read by ``linear()``
    instead."""
    if _LEXBOR is None:
        raise RuntimeError(f"the lexbor reader needs selectolax: {_STATUS}")
    to_linear, has_tbody, html_end = scan_markup(data)
    if to_linear:
        return linear()
    if html_end >= 0:  # what follows goes to a second root in libxml2's tree: dropped
        data = data[:html_end]
    tree = _LEXBOR.LexborHTMLParser(data)
    del data
    root = tree.root
    recorder = _Recorder(check_deadline)
    if root is not None:
        if compiled and _KERNEL is not None:
            _KERNEL.walk_lexbor(
                root.mem_id, recorder, _TAG_NAMES, SIGNAL_ATTRIBUTES, SIGNAL_ELEMENTS,
                _BATCH, not has_tbody,
            )  # fmt: skip
        else:
            _walk_python(root, recorder, not has_tbody)
    del tree  # the compiled walk read its nodes; nothing refers to them now
    return recorder.close()


#: A page with what the walks (here, and the kernel's readers of libxml2's parser in
#: :mod:`.reader`) must agree on: attributes (hints, links, signals, valueless and
#: entity-laden values), text runs split by comments, code, tables, foreign elements.
PROBE = (
    '<html lang="en"><head><title>T &amp; U</title><meta name="d" content="x">'
    '<link rel="next" href="/2"><script type="application/ld+json">{"a": 1}</script>'
    "<script>var x = '<p>';</script><style>p{}</style></head><body class=\"B\">"
    '<div id="Main" class="a &amp; b" role="main" hidden><p>one<!-- c -->two</p></div>'
    '<table><tr><td itemprop="name" style="display:none">cell</td></tr></table>'
    '<a href="/x" onclick="f()"><img src="i.png" alt="I"></a><time datetime="2020">t</time>'
    '<svg viewBox="0 0 1 1"><linearGradient/></svg><my-tag data-x>z</my-tag>tail</body></html>'
)


def _load_walk() -> tuple[ModuleType | None, str]:
    """The compiled walk (in ``_kernel``) and why (not): used only beside the selectolax
    (and so lexbor) version it was built with, when it finds lexbor's functions in
    selectolax's module, and when it reads a probe page exactly as the Python walk does."""
    if _LEXBOR is None:
        return None, _STATUS
    try:
        kernel = importlib.import_module("._kernel", __package__)
    except ImportError as exc:
        return None, f"not built ({exc})"
    stale = stale_kernel(kernel)
    if stale:
        return None, stale
    running = _version()
    built = getattr(kernel, "SELECTOLAX_BUILT_AGAINST", "")
    if built != running:
        return None, f"built against selectolax {built or '(none)'}, running {running}"
    if not kernel.bind_lexbor(os.fsencode(_LEXBOR.__file__ or "")):
        return None, "lexbor's functions were not found in selectolax's module"
    global _KERNEL
    previous, _KERNEL = _KERNEL, kernel
    try:
        pages = [
            read_lexbor(PROBE.encode("utf-8"), _no_linear, lambda: None, compiled)
            for compiled in (True, False)
        ]
    finally:
        _KERNEL = previous
    if not same_events(*pages):
        return None, "the compiled walk reads the probe page differently: not used"
    return kernel, f"compiled walk, built against selectolax {built}"


def _no_linear() -> PageEvents:
    raise AssertionError("the probe page is not deep")


def same_events(one: PageEvents, other: PageEvents) -> bool:
    """Whether two readings of a page are the same in every field."""
    arrays = ("parent", "depth", "end", "hints", "kinds", "nodes", "pieces")
    return (
        one.tags == other.tags
        and one.texts == other.texts
        and all(np.array_equal(getattr(one, name), getattr(other, name)) for name in arrays)
        and one.attributes == other.attributes
    )


_KERNEL: ModuleType | None = None
_KERNEL, _WALK_STATUS = _load_walk()


def lexbor_walk_status() -> tuple[bool, str]:
    """Whether lexbor's tree is walked by the compiled kernel here, and why (not)."""
    return _KERNEL is not None, _WALK_STATUS


def lexbor_walk_kernel() -> ModuleType | None:
    """The compiled kernel when it walks lexbor's trees here, else None."""
    return _KERNEL
