"""Reading a page: decoded HTML to :class:`~.events.PageEvents`, by one of the readers.

Two hand the page to libxml2's HTML parser (the parser Scrapy's selectors use, same
recovery from broken markup, same implied ``html``/``body``/``p`` elements), in the same
way (:func:`_feed`: from memory, or fed in parts) with the same options, and both end in
the same recorder (:mod:`.events`), so they give the same events, node table and
attributes (``tests/test_reader.py`` checks it on every development page):

* ``"target"``, pure Python: the parser calls the recorder for every start tag, run of
  text and end tag (lxml's *parser target*), and no tree is built;
* ``"kernel"``, compiled (``_kernel.pyx``, built when a C compiler is there): the page
  goes through libxml2's SAX callbacks into the kernel's recorder loop, and no tree is
  built (:func:`sax_status`: when libxml2's functions are found in lxml's module and a
  probe page, whole and pushed in parts, reads as the tree walk reads it); a page of one
  part is read from memory, a larger one pushed to the parser part by part (a page given
  as bytes that are its well-formed UTF-8 is read from them without being decoded:
  :func:`read_utf8`). Where the SAX reader is not used, the page is parsed into
  libxml2's tree and one C loop over it, through lxml's public C API, fills the
  recorder: faster than the target too, but the tree is held while it is read, and it
  stops nesting at depth 2048 (``huge_tree``) where the parser target and the SAX reader
  do not: a tree that reaches that depth is read again by the target (the linear path
  for deep nesting), and so is a page above :data:`KERNEL_MAX_CHARS` (its tree would
  cost more memory than the events).

The kernel is used when it was built and imports against the lxml and libxml2 it was
compiled for (:func:`kernel_status`); ``TAGRATIO_READER=target`` forces the pure path.

``TAGRATIO_READER=lexbor`` (or ``lexbor-python``, its Python walk even where the kernel
is built) reads pages with lexbor's HTML5 parser instead (:mod:`.lexbor_reader`): faster,
into the same kind of events, but HTML5's trees differ from libxml2's in places.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from types import ModuleType
from typing import Any

from lxml import etree

from . import lexbor_reader
from .events import (
    _BATCH,
    _HINTS,
    _TAG_NAMES,
    EVENT_CLOSE,
    EVENT_OPEN,
    EVENT_TEXT,
    KEPT_ATTRIBUTES,
    SIGNAL_ATTRIBUTES,
    SIGNAL_ELEMENTS,
    PageAttributes,
    PageEvents,
    _Recorder,
)

__all__ = [
    "DEFAULT_READER",
    "EVENT_CLOSE",
    "EVENT_OPEN",
    "EVENT_TEXT",
    "KEPT_ATTRIBUTES",
    "KERNEL_MAX_CHARS",
    "READERS",
    "READER_VARIABLE",
    "PageAttributes",
    "PageEvents",
    "Reader",
    "active_kernel",
    "kernel_status",
    "parse_html",
    "parser_input",
    "parser_parts",
    "read_page",
    "read_utf8",
    "sax_status",
]

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_EMPTY_PAGE = "<html><body></body></html>"
#: The first title's start tag and text up to the next tag; the end tag that closes it.
_TITLE_TEXT = re.compile(r"<title\b[^>]*>[^<]*", re.I)
_TITLE_CLOSE = re.compile(r"</title\s*>|$", re.I)
#: The end tag of a title, in a page's bytes.
_TITLE_CLOSE_BYTES = re.compile(rb"</title\s*>", re.I)
#: libxml2's options, the same for the tree and the events.
_OPTIONS: dict[str, Any] = {
    "encoding": "utf-8",
    "remove_comments": True,
    "remove_pis": True,
    "huge_tree": True,
    "no_network": True,
    "default_doctype": False,
}
#: The kernel's tree: without libxml2's table of ``id`` attributes (what ``id()`` in
#: XPath reads), which the walk does not use and which costs a hash per ``id``.
_KERNEL_OPTIONS: dict[str, Any] = {**_OPTIONS, "collect_ids": False}
#: Bytes (of the page's own UTF-8) or characters (encoded in turn) handed to the parser
#: at a time: a page of one part is parsed from memory.
_FEED_CHARS = 1 << 20
#: libxml2's tree keeps elements down to this depth (below ``html``) with ``huge_tree``
#: and drops deeper ones; the parser target and the SAX reader see them all.
_TREE_DEPTH_CAP = 2046
#: Pages above this many characters are read by the target where the kernel would hold
#: libxml2's tree (several times the page) beside the events (where the SAX reader is not
#: used; lexbor's reader holds its own tree): the target never builds it.
KERNEL_MAX_CHARS = 4_000_000
#: Environment variable naming the reader (a name in :data:`READERS`), read at import.
READER_VARIABLE = "TAGRATIO_READER"


def parser_input(text: str, utf8: bytes | None = None) -> str:
    """Decoded HTML as libxml2 should get it: NUL characters and an XML declaration
    dropped (libxml2 stops at the one and refuses a ``str`` with the other), an unclosed
    first ``<title>`` closed (libxml2 reads everything after it as the title's text, the
    whole page), a blank page replaced by an empty body. ``utf8``: ``text`` in UTF-8, when
    the caller has it (:func:`parser_parts`): a NUL character is a NUL byte there, found
    by a byte scan, faster than a scan of a text of two or four bytes a character."""
    if (b"\x00" in utf8) if utf8 is not None else ("\x00" in text):
        text = text.replace("\x00", "")
    text = _XML_DECLARATION.sub("", text, count=1)
    title = _TITLE_TEXT.search(text)
    if title is not None and _TITLE_CLOSE.match(text, title.end()) is None:
        # A title holds no markup: the first tag after its text ends it.
        text = f"{text[: title.end()]}</title>{text[title.end() :]}"
    return _EMPTY_PAGE if not text or text.isspace() else text


def parser_parts(text: str, utf8: bytes | None = None) -> Iterator[bytes]:
    """``text`` as libxml2 should get it (:func:`parser_input`), in UTF-8, in parts of at
    most :data:`_FEED_CHARS` bytes, or characters each encoded in turn, so that neither the
    encoded page nor the parser's copy of it need be held whole. ``utf8``: the page's bytes
    when they are ``text`` in UTF-8 (:func:`~.decoding._decode_utf8` says when): when the
    preparation left the text as it was, they are the parts (one part: the bytes object
    itself), and the text is not encoded again."""
    prepared = parser_input(text, utf8)
    if utf8 is not None and prepared == text:
        yield from _byte_parts(utf8)
    else:
        for start in range(0, len(prepared), _FEED_CHARS):
            yield prepared[start : start + _FEED_CHARS].encode("utf-8", "replace")


def _byte_parts(utf8: bytes) -> Iterator[bytes]:
    """``utf8`` in parts of at most :data:`_FEED_CHARS` bytes (one part: the bytes object
    itself)."""
    if len(utf8) <= _FEED_CHARS:
        yield utf8
    else:
        for start in range(0, len(utf8), _FEED_CHARS):
            yield utf8[start : start + _FEED_CHARS]


def _prepared_as_is(utf8: bytes) -> bool:
    """Whether :func:`parser_input` leaves the text whose well-formed UTF-8 is ``utf8`` as
    it is, decided from the bytes and the decoded text of the page's head alone (up to the
    first ``</title>``, found in the bytes): no NUL byte, and in the head, no XML
    declaration and a first title closed by ``</title>``. The head ends with ``>``, so
    whatever :func:`parser_input`'s patterns find or miss in it they find or miss in the
    whole text too. False when the head cannot tell (no ``</title>`` in the bytes, the title
    unclosed in the head): the caller then decodes the page."""
    if b"\x00" in utf8:
        return False
    close = _TITLE_CLOSE_BYTES.search(utf8)
    if close is None:
        return False
    head = utf8[: close.end()].decode("utf-8")
    title = _TITLE_TEXT.search(head)
    if _XML_DECLARATION.match(head) is not None or title is None:
        return False
    closed = _TITLE_CLOSE.match(head, title.end())
    return closed is not None and closed.end() > title.end()


def _feed(text: str, parser: Any, utf8: bytes | None = None) -> Any:
    """Hand ``text`` (:func:`parser_parts`) to lxml's ``parser``; what it returns. A page
    of one part is parsed from memory (libxml2's ``htmlCtxtReadMemory``, which gives the
    same tree and events as its push parser at less cost), a larger one fed part by part."""
    parts = parser_parts(text, utf8)
    first = next(parts)
    second = next(parts, None)
    if second is None:
        return etree.fromstring(first, parser)
    for part in chain((first, second), parts):
        parser.feed(part)
    return parser.close()


def parse_html(text: str) -> Any:
    """An lxml tree of decoded HTML, parsed as :func:`read_page` reads it (the tree type
    Scrapy's selectors use), for callers who want a tree."""
    root = _feed(text, etree.HTMLParser(**_OPTIONS))
    return root if root is not None else etree.fromstring(_EMPTY_PAGE, etree.HTMLParser())


def _read_target(
    text: str, check_deadline: Callable[[], None], utf8: bytes | None = None
) -> PageEvents:
    """The pure-Python reader: lxml's parser target, no tree."""
    parser = etree.HTMLParser(target=_Recorder(check_deadline), **_OPTIONS)
    page: PageEvents = _feed(text, parser, utf8)
    return page


def _load_kernel() -> tuple[ModuleType | None, str]:
    """The compiled kernel and why (not): it is used only against the lxml and libxml2
    versions (major.minor) it was built with, whose node structs and C API it reads, and
    only when it has every function the package calls
    (:data:`~.lexbor_reader.KERNEL_FUNCTIONS`)."""
    try:
        kernel = importlib.import_module("._kernel", __package__)
    except ImportError as exc:
        return None, f"not built ({exc})"
    stale = lexbor_reader.stale_kernel(kernel)
    if stale:
        return None, stale
    lxml_built, libxml_built = kernel.BUILT_AGAINST
    running = (etree.LXML_VERSION[:2], etree.LIBXML_VERSION[:2])
    built = (
        tuple(int(part) for part in lxml_built.split(".")[:2]),
        (libxml_built // 10000, libxml_built // 100 % 100),
    )
    if built != running:
        return None, f"built against lxml/libxml2 {built}, running {running}"
    return kernel, f"built against lxml {lxml_built}, libxml2 {libxml_built}"


_KERNEL, _KERNEL_STATUS = _load_kernel()


def kernel_status() -> tuple[bool, str]:
    """Whether the compiled kernel can read pages here, and why (not)."""
    return _KERNEL is not None, _KERNEL_STATUS


def active_kernel() -> ModuleType | None:
    """The compiled kernel when pages are read by it (:data:`DEFAULT_READER` is
    ``"kernel"``, or ``"lexbor"`` with its compiled walk), else None: its other loops
    (``piece_lengths``) serve the same pages, and the pure paths stay pure Python
    throughout."""
    if DEFAULT_READER == "lexbor":
        return lexbor_reader.lexbor_walk_kernel()
    return _KERNEL if DEFAULT_READER == "kernel" else None


def _read_kernel(
    text: str, check_deadline: Callable[[], None], utf8: bytes | None = None
) -> PageEvents:
    """The compiled reader: libxml2's SAX callbacks where the SAX reader is used
    (:func:`sax_status`), else libxml2's tree walked in C, or the target for a page too
    large for the tree (see the module's docstring) or with an element of more attributes
    than :data:`~.lexbor_reader.MAX_ATTRIBUTES` (libxml2, as lexbor, compares each
    attribute of an element with the others as it builds the tree)."""
    if _SAX is not None:
        return _read_sax(_SAX, parser_parts(text, utf8), check_deadline)
    if _KERNEL is None or len(text) > KERNEL_MAX_CHARS:
        return _read_target(text, check_deadline, utf8)
    markup = utf8 if utf8 is not None else text.encode("utf-8", "surrogatepass")
    if _KERNEL.most_attributes(markup) > lexbor_reader.MAX_ATTRIBUTES:
        return _read_target(text, check_deadline, utf8)  # libxml2's tree is quadratic in them
    return _read_tree(text, check_deadline, utf8)


def _read_sax(
    kernel: ModuleType, parts: Iterable[bytes], check_deadline: Callable[[], None]
) -> PageEvents:
    """The page ``parts`` (prepared, in UTF-8: :func:`parser_parts`) from libxml2's SAX
    callbacks, recorded in C by ``kernel``, without a tree (nor its depth cap)."""
    recorder = _Recorder(check_deadline)
    kernel.sax_read(parts, recorder, _TAG_NAMES, SIGNAL_ATTRIBUTES, SIGNAL_ELEMENTS, _BATCH)
    return recorder.close()


def _read_tree(
    text: str, check_deadline: Callable[[], None], utf8: bytes | None = None
) -> PageEvents:
    """libxml2's tree of the page, walked in C into the recorder; the target for a page too
    deep for the tree."""
    assert _KERNEL is not None
    root = _feed(text, etree.HTMLParser(**_KERNEL_OPTIONS), utf8)
    if root is None:
        return _read_target(text, check_deadline, utf8)
    recorder = _Recorder(check_deadline)
    deepest = _KERNEL.walk(
        root, recorder, _TAG_NAMES, _HINTS, SIGNAL_ATTRIBUTES, SIGNAL_ELEMENTS, _BATCH
    )
    if deepest >= _TREE_DEPTH_CAP:
        return _read_target(text, check_deadline, utf8)
    return recorder.close()


#: The probe page of lexbor's compiled walk and markup after ``</html>`` (libxml2 reports
#: it outside the root element; the tree keeps what is in elements, as a second root).
_SAX_PROBE = lexbor_reader.PROBE + "<p>after <b>the</b> end</p> text &amp; more"
#: Bytes a part when the probe page is pushed to the parser in parts.
_PROBE_PART = 7


def _load_sax(kernel: ModuleType | None, lxml_module: str) -> tuple[ModuleType | None, str]:
    """The kernel when it reads pages by libxml2's SAX callbacks, and why (not): when it
    finds libxml2's HTML parser, the memory and the push interfaces, in lxml's module
    ``lxml_module`` (exported by lxml's wheels, which link libxml2 into it; a build against
    a shared libxml2 may not export it) and reads the probe page, whole and pushed in
    parts, exactly as its tree walk does."""
    if kernel is None:
        return None, "no compiled kernel"
    if not kernel.bind_libxml2(os.fsencode(lxml_module)):
        return None, "libxml2's HTML parser was not found in lxml's module: the tree is walked"
    prepared = parser_input(_SAX_PROBE)
    probe, walked = prepared.encode("utf-8"), _read_tree(prepared, lambda: None)
    for parts in (
        [probe],
        [probe[start : start + _PROBE_PART] for start in range(0, len(probe), _PROBE_PART)],
    ):
        if not lexbor_reader.same_events(_read_sax(kernel, parts, lambda: None), walked):
            return None, "the SAX reader reads the probe page differently: the tree is walked"
    return kernel, "pages read from libxml2's SAX callbacks, no tree"


_SAX, _SAX_STATUS = _load_sax(_KERNEL, etree.__file__ or "")


def sax_status() -> tuple[bool, str]:
    """Whether the kernel reads pages without a tree (libxml2's SAX callbacks) here, and
    why (not)."""
    return _SAX is not None, _SAX_STATUS


def _read_lexbor(
    text: str,
    check_deadline: Callable[[], None],
    utf8: bytes | None = None,
    compiled: bool = True,
) -> PageEvents:
    """lexbor's HTML5 parser through selectolax (:mod:`.lexbor_reader`), its tree walked
    by the kernel where it can (``compiled``) and else in Python: the page as libxml2's
    readers get it (:func:`parser_input`); a page lexbor should not read (too deep, a
    frameset: :func:`~.lexbor_reader.scan_markup`), or without selectolax installed, is
    read by the target, and so is a page above :data:`KERNEL_MAX_CHARS` (lexbor's tree,
    held while it is walked, costs more memory than the events, as libxml2's does)."""
    if not lexbor_reader.lexbor_status()[0] or len(text) > KERNEL_MAX_CHARS:
        return _read_target(text, check_deadline, utf8)
    data = b"".join(parser_parts(text, utf8))  # one part: its bytes object, not copied
    return lexbor_reader.read_lexbor(
        data, lambda: _read_target(text, check_deadline, utf8), check_deadline, compiled
    )


def _read_lexbor_python(
    text: str, check_deadline: Callable[[], None], utf8: bytes | None = None
) -> PageEvents:
    """lexbor's reader with its Python walk, even where the kernel is built."""
    return _read_lexbor(text, check_deadline, utf8, compiled=False)


#: A reader: (decoded HTML, deadline check, the page's bytes when they are that HTML in
#: UTF-8, else None) -> events.
Reader = Callable[[str, Callable[[], None], "bytes | None"], PageEvents]
#: The readers by name; interchangeable.
READERS: dict[str, Reader] = {
    "target": _read_target,
    "kernel": _read_kernel,
    "lexbor": _read_lexbor,
    "lexbor-python": _read_lexbor_python,
}


def _default_reader() -> str:
    name = os.environ.get(READER_VARIABLE, "").strip().lower()
    if name and name not in READERS:
        raise ValueError(f"{READER_VARIABLE}={name!r}: expected one of {sorted(READERS)}")
    return name or ("kernel" if _KERNEL is not None else "target")


#: The reader :func:`read_page` uses unless told.
DEFAULT_READER = _default_reader()


def read_utf8(data: bytes, check_deadline: Callable[[], None] = lambda: None) -> PageEvents | None:
    """The events of a page from its bytes alone, when they are its text in UTF-8 if
    well-formed (the caller knows: :func:`~.decoding._utf8_reading`): where the default
    reader is the SAX reader (:func:`sax_status`), ``data`` well-formed UTF-8 (checked in
    C) and its text left as it is by :func:`parser_input` (:func:`_prepared_as_is`), the
    bytes go to the parser as they are and the text is never decoded (a Python string of
    the whole page costs about a tenth of libxml2's parse). None otherwise: the caller
    decodes the page and calls :func:`read_page`. The events are :func:`read_page`'s."""
    if _SAX is None or DEFAULT_READER != "kernel":
        return None
    if not (_SAX.utf8_valid(data) and _prepared_as_is(data)):
        return None
    page = _read_sax(_SAX, _byte_parts(data), check_deadline)
    return page if len(page) else read_page(_EMPTY_PAGE, reader="target")


def read_page(
    text: str,
    check_deadline: Callable[[], None] = lambda: None,
    reader: str | None = None,
    utf8: bytes | None = None,
) -> PageEvents:
    """Read decoded HTML into :class:`PageEvents` (see :func:`parser_input`; a page without
    elements reads as an empty body) with ``reader`` (a name in :data:`READERS`, default
    :data:`DEFAULT_READER`). ``check_deadline`` is called every few thousand elements (it
    raises to stop). ``utf8``: the page's bytes, only when they are exactly ``text`` in
    UTF-8 (:func:`~.decoding._decode_utf8` says when): handed to the parser as they are,
    which saves encoding the text again; the events are the same."""
    page = READERS[reader or DEFAULT_READER](text, check_deadline, utf8)
    return page if len(page) else read_page(_EMPTY_PAGE, reader="target")
