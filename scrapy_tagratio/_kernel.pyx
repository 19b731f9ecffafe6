# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled half of :mod:`scrapy_tagratio.reader`: one walk over an lxml tree in C.

It gives an :class:`~scrapy_tagratio.events._Recorder` exactly what lxml's parser
target would have called it with (start tags with their attributes, runs of text, end
tags), in document order, without one Python call per event: the tree is read through
lxml's public C API (``lxml/includes/etreepublic.pxd``) and libxml2's node structs
(``lxml/includes/tree.pxd``), the headers lxml ships for this use.

Built against one lxml and one libxml2; :data:`BUILT_AGAINST` says which, and the Python
side refuses the kernel when the running versions differ (the structs and the C API are
what the module was compiled for only then).

For the pages this kernel reads, more loops run in C: :func:`piece_lengths` counts
the node table's characters (runs of text with their white space collapsed),
:func:`text_lines` and :func:`event_markup` build the text and HTML output of the events
:func:`event_mask` selects,
:func:`runs_by_block` orders the runs of text by layout block, :func:`span_texts` builds
each block's text and :func:`ends_in` reads how it ends,
:func:`nearest_flagged` finds each node's nearest flagged ancestor (layout blocks),
:func:`subtree_argmax` the best node of each subtree (CETD's max-DensitySum search),
:func:`sibling_groups` the groups of repeated siblings and :func:`item_tests` what their
items hold (the structure detector),
:func:`first_codes` numbers tag names, :func:`span_text_lengths` measures the text of
elements (which hidden ones hold most of the page), :func:`kept_elements` and
:func:`body_events` build the node table's tree and events from the page's,
:func:`tree_sums` evaluates the default's block model, :func:`word_hashes` hashes the words
its word model reads (:func:`hashed_words`: each text's buckets, distinct;
:func:`span_hashed_words`: those of the layout blocks' texts, read from their runs), :func:`automaton_piece_counts` runs
the language detector's byte automaton and :func:`half_singles` converts the rows of its
half-precision table that a page's scores read.

:func:`sax_read` reads a page without a tree: libxml2's HTML parser (found in lxml's
``etree`` module by :func:`bind_libxml2`) calls it per start tag, run of text and end tag,
and it drives the same :class:`_Events` as :func:`walk`, so the events are the same.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize, PyByteArray_Resize
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Calloc, PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from cpython.unicode cimport (
    Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE, Py_UNICODE_TOLOWER, PyUnicode_1BYTE_DATA,
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_DecodeUTF8,
    PyUnicode_FromKindAndData,
    PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_New, PyUnicode_READ, PyUnicode_WRITE,
)
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.stdlib cimport qsort
from libc.string cimport memcmp, memcpy, memset, strlen

cimport cython
cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

import sys

cetree.import_lxml__etree()

#: (lxml version string, libxml2 version number) of the headers this module was built with.
BUILT_AGAINST = ((<bytes>cetree.LXML_VERSION_STRING).decode("ascii"), tree.LIBXML_VERSION)

# What an attribute is to the walk (codes by name; names are interned, so looked up by
# pointer once per distinct name and page).
cdef enum:
    OTHER = 0
    CLASS = 1
    ID = 2
    ROLE = 3
    ITEMPROP = 4
    HREF = 5
    SRC = 6
    ALT = 7
    SIGNAL = 8
    STYLE = 9

_CODES = {"class": CLASS, "id": ID, "role": ROLE, "itemprop": ITEMPROP, "href": HREF,
          "src": SRC, "alt": ALT, "style": STYLE}

cdef enum:
    #: What a tag is to the walk (flags per tag code).
    TAG_CODE = 1  # script or style: its text is code
    TAG_SIGNAL = 2  # one of signal_elements: its attributes are always read
    TAG_TBODY = 4  # tbody, left out where lexbor implied it
    TAG_HEAD = 8  # head, left out when empty (lexbor always makes one)

cdef enum:
    EVENT_TEXT = 0
    EVENT_OPEN = 1
    EVENT_CLOSE = 2


cdef inline str _text(const char* content):
    return PyUnicode_DecodeUTF8(content, strlen(content), NULL)


cdef inline const char* _plain_value(xmlAttr* attr):
    """The attribute's value as libxml2 holds it when that is one run of text (what
    lxml's ``attributeValue`` would decode), "" without one, else NULL (ask lxml)."""
    cdef xmlNode* child = attr.children
    if child is NULL:
        return ""
    if child.next is NULL and child.type == tree.XML_TEXT_NODE and child.content is not NULL:
        return <const char*>child.content
    return NULL


cdef inline str _value(xmlNode* node, xmlAttr* attr):
    cdef const char* plain = _plain_value(attr)
    if plain is NULL:
        return cetree.attributeValue(node, attr)
    return _text(plain)


@cython.final
cdef class _Ints:
    """A growing array of int32, handed over as a bytearray (numpy reads it in place)."""

    cdef int32_t* data
    cdef Py_ssize_t size, capacity

    def __cinit__(self):
        self.capacity = 1024
        self.data = <int32_t*>PyMem_Realloc(NULL, self.capacity * sizeof(int32_t))
        if self.data is NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef inline int append(self, int32_t value) except -1:
        cdef int32_t* grown
        if self.size == self.capacity:
            grown = <int32_t*>PyMem_Realloc(self.data, 2 * self.capacity * sizeof(int32_t))
            if grown is NULL:
                raise MemoryError()
            self.data, self.capacity = grown, 2 * self.capacity
        self.data[self.size] = value
        self.size += 1
        return 0

    cdef bytearray take(self):
        return PyByteArray_FromStringAndSize(<char*>self.data, self.size * sizeof(int32_t))


cdef inline size_t _slot(const void* key, size_t mask) noexcept:
    """The first slot of ``key`` (Fibonacci hashing): keys close together (libxml2's names
    side by side in its dictionary, lexbor's name ids counting up) spread over the table.
    The address shifted right by 4 put several names, or 16 ids, in one slot, and the
    probes grew with every distinct name: quadratic in a page of thousands of names."""
    return <size_t>((<uint64_t><uintptr_t>key * <uint64_t>0x9E3779B97F4A7C15ULL) >> 32) & mask


@cython.final
cdef class _Codes:
    """Small integer codes of interned libxml2 names, by pointer (open addressing): one
    probe per element or attribute, no Python object. libxml2's parser interns names in
    its dictionary, so a pointer names one string for the whole page."""

    cdef const void** keys
    cdef int32_t* values
    cdef Py_ssize_t size, capacity

    def __cinit__(self):
        self._allocate(256)

    def __dealloc__(self):
        PyMem_Free(self.keys)
        PyMem_Free(self.values)

    cdef int _allocate(self, Py_ssize_t capacity) except -1:
        """Empty slots for ``capacity`` names (any arrays held before are the caller's)."""
        cdef Py_ssize_t i
        self.keys = <const void**>PyMem_Malloc(capacity * sizeof(void*))
        self.values = <int32_t*>PyMem_Malloc(capacity * sizeof(int32_t))
        if self.keys is NULL or self.values is NULL:
            raise MemoryError()
        self.capacity, self.size = capacity, 0
        for i in range(capacity):
            self.keys[i] = NULL
        return 0

    cdef inline int32_t get(self, const void* key):
        """The code of ``key``, -1 if it has none yet."""
        cdef size_t mask = self.capacity - 1
        cdef size_t slot = _slot(key, mask)
        while self.keys[slot] is not NULL:
            if self.keys[slot] == key:
                return self.values[slot]
            slot = (slot + 1) & mask
        return -1

    cdef int put(self, const void* key, int32_t value) except -1:
        cdef const void** old_keys = self.keys
        cdef int32_t* old_values = self.values
        cdef Py_ssize_t old_capacity = self.capacity, i
        cdef size_t mask, slot
        if 2 * (self.size + 1) > self.capacity:  # grow: rehash into twice the slots
            self._allocate(2 * old_capacity)
            for i in range(old_capacity):
                if old_keys[i] is not NULL:
                    self.put(old_keys[i], old_values[i])
            PyMem_Free(old_keys)
            PyMem_Free(old_values)
        mask = self.capacity - 1
        slot = _slot(key, mask)
        while self.keys[slot] is not NULL:
            slot = (slot + 1) & mask
        self.keys[slot] = key
        self.values[slot] = value
        self.size += 1
        return 0


@cython.final
cdef class _Bytes:
    """A growing byte buffer (the hint of one element is assembled in it)."""

    cdef char* data
    cdef Py_ssize_t size, capacity

    def __cinit__(self):
        self.capacity = 256
        self.data = <char*>PyMem_Realloc(NULL, self.capacity)
        if self.data is NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.data)

    cdef inline int add(self, const char* text, Py_ssize_t length) except -1:
        cdef char* grown
        cdef Py_ssize_t capacity = self.capacity
        while self.size + length > capacity:
            capacity *= 2
        if capacity != self.capacity:
            grown = <char*>PyMem_Realloc(self.data, capacity)
            if grown is NULL:
                raise MemoryError()
            self.data, self.capacity = grown, capacity
        memcpy(self.data + self.size, text, length)
        self.size += length
        return 0


#: The hint of an element with attributes but none of the four.
_NO_HINT = "   "


@cython.final
cdef class _HintCache:
    """The hint of an element by its raw UTF-8 bytes (class, id, role, itemprop joined by
    spaces) -> the shared lower-cased string, bounded like ``events._HINTS`` (emptied
    when full). In C (open addressing on an FNV-1a hash of the bytes, compared in full):
    no bytes object and no dict call per element with attributes."""

    cdef uint64_t* hashes
    cdef char** keys  # NULL: an empty slot
    cdef Py_ssize_t* lengths
    cdef PyObject** values  # owned references
    cdef Py_ssize_t size, capacity, limit

    def __cinit__(self, Py_ssize_t limit):
        self.limit = limit
        self._allocate(256)

    def __dealloc__(self):
        self._release()

    cdef int _allocate(self, Py_ssize_t capacity) except -1:
        """Empty slots for ``capacity`` hints (any arrays held before are the caller's)."""
        self.hashes = <uint64_t*>PyMem_Malloc(capacity * sizeof(uint64_t))
        self.keys = <char**>PyMem_Calloc(capacity, sizeof(char*))
        self.lengths = <Py_ssize_t*>PyMem_Malloc(capacity * sizeof(Py_ssize_t))
        self.values = <PyObject**>PyMem_Malloc(capacity * sizeof(PyObject*))
        if self.hashes is NULL or self.keys is NULL or self.lengths is NULL or self.values is NULL:
            raise MemoryError()
        self.capacity, self.size = capacity, 0
        return 0

    cdef void _release(self):
        """Frees every key and value and the arrays."""
        cdef Py_ssize_t i
        if self.keys is not NULL:
            for i in range(self.capacity):
                if self.keys[i] is not NULL:
                    PyMem_Free(self.keys[i])
                    Py_XDECREF(self.values[i])
        PyMem_Free(self.hashes)
        PyMem_Free(self.keys)
        PyMem_Free(self.lengths)
        PyMem_Free(self.values)
        self.hashes, self.keys, self.lengths, self.values = NULL, NULL, NULL, NULL

    cdef Py_ssize_t _slot(self, uint64_t hash, const char* key, Py_ssize_t length):
        """The slot holding ``key``, or the empty slot where it goes."""
        cdef size_t mask = self.capacity - 1
        cdef size_t slot = hash & mask
        while self.keys[slot] is not NULL:
            if (
                self.hashes[slot] == hash and self.lengths[slot] == length
                and memcmp(self.keys[slot], key, length) == 0
            ):
                break
            slot = (slot + 1) & mask
        return slot

    cdef int _grow(self) except -1:
        """Twice the slots, the hints held moved over."""
        cdef uint64_t* hashes = self.hashes
        cdef char** keys = self.keys
        cdef Py_ssize_t* lengths = self.lengths
        cdef PyObject** values = self.values
        cdef Py_ssize_t capacity = self.capacity, size = self.size, i, slot
        self._allocate(2 * capacity)
        for i in range(capacity):
            if keys[i] is not NULL:
                slot = self._slot(hashes[i], keys[i], lengths[i])
                self.hashes[slot], self.keys[slot] = hashes[i], keys[i]
                self.lengths[slot], self.values[slot] = lengths[i], values[i]
        self.size = size
        PyMem_Free(hashes)
        PyMem_Free(keys)
        PyMem_Free(lengths)
        PyMem_Free(values)
        return 0

    cdef str get(self, const char* key, Py_ssize_t length):
        """The hint whose raw bytes are ``key[:length]``, lower-cased (as ``events._HINTS``)."""
        cdef uint64_t hash = 14695981039346656037ULL
        cdef Py_ssize_t i, slot
        cdef char* copy
        cdef str hint
        for i in range(length):
            hash = (hash ^ <uint8_t>key[i]) * 1099511628211ULL
        slot = self._slot(hash, key, length)
        if self.keys[slot] is not NULL:
            return <str><object>self.values[slot]
        hint = PyUnicode_DecodeUTF8(key, length, NULL).lower()
        if self.size >= self.limit:
            self._release()
            self._allocate(256)
        elif 2 * (self.size + 1) > self.capacity:
            self._grow()
        slot = self._slot(hash, key, length)
        copy = <char*>PyMem_Malloc(length + 1)
        if copy is NULL:
            raise MemoryError()
        memcpy(copy, key, length)
        Py_INCREF(hint)
        self.hashes[slot], self.keys[slot], self.lengths[slot] = hash, copy, length
        self.values[slot] = <PyObject*>hint
        self.size += 1
        return hint


cdef _HintCache _HINTS_BY_BYTES = _HintCache(1 << 14)


cdef inline str _hint(_Bytes key):
    """The hint whose raw bytes are in ``key``, lower-cased (as ``events._HINTS``)."""
    return _HINTS_BY_BYTES.get(key.data, key.size)


cdef str _assembled_hint(xmlNode* node, hint_names):
    """The hint of ``node`` from its attribute values as lxml reads them (the slow way,
    for values that are not one run of text)."""
    cdef list values = ["", "", "", ""]
    cdef xmlAttr* attr = node.properties
    cdef object code
    while attr is not NULL:
        code = _CODES.get(cetree.namespacedName(<xmlNode*>attr))
        if code is not None and CLASS <= code <= ITEMPROP:
            values[<int>code - CLASS] = cetree.attributeValue(node, attr)
        attr = attr.next
    return <str>hint_names[" ".join(values)]


@cython.final
cdef class _Events:
    """What the three readers (the walks :func:`walk` and :func:`walk_lexbor`, and
    :func:`sax_read`) share: the events, texts, tags, hints, links and the tree's shape as
    they grow, the codes of tag and attribute names, the opening and closing of elements,
    one element's attributes as the reader reports them (their codes, the hint's raw parts,
    the links) and the batches of signals for ``recorder.read_signals``. Each reads its
    library's nodes or callbacks (names, attribute values, texts, children) and drives this
    in document order."""

    cdef list tags, texts, hints, names, signal_indices, signal_attribs
    cdef list more  # the last run's pieces after its first (``text``)
    cdef dict kept
    cdef object signal_attributes, signal_elements, read_signals, check_deadline
    cdef _Codes tag_codes, attribute_codes
    cdef _Ints tag_flags  # tag code -> TAG_CODE | TAG_SIGNAL | TAG_TBODY | TAG_HEAD
    cdef _Ints hinted  # the elements with attributes
    # The tree's shape, as events._shape derives it from the events: per element its
    # parent, depth and subtree end; per event its element and run of text.
    cdef _Ints parents, depths, ends, owners, pieces
    cdef _Ints stack  # the open elements
    cdef _Bytes hint_key
    cdef bytearray events
    cdef char* out
    cdef Py_ssize_t n_events, capacity, attributed, batch
    cdef bint in_code, outside
    # The element whose attributes are being read: class, id, role, itemprop as the
    # library holds them (NULL: not there), its links, whether it has a hint, a link, a
    # signal.
    cdef const char* parts[4]
    cdef size_t lengths[4]
    cdef object href, src, alt
    cdef bint has_hint, has_kept, signal

    def __cinit__(self, recorder, signal_attributes, signal_elements, Py_ssize_t batch):
        self.tags, self.texts, self.hints = recorder.tags, recorder.texts, recorder.hints
        self.kept = recorder.found.kept
        self.read_signals, self.check_deadline = recorder.read_signals, recorder.check_deadline
        self.signal_attributes, self.signal_elements = signal_attributes, signal_elements
        self.batch = batch
        self.names, self.signal_indices, self.signal_attribs = [], [], []
        self.more = []
        self.hinted = _Ints()
        self.tag_codes, self.attribute_codes = _Codes(), _Codes()
        self.tag_flags, self.stack = _Ints(), _Ints()
        self.parents, self.depths, self.ends = _Ints(), _Ints(), _Ints()
        self.owners, self.pieces = _Ints(), _Ints()
        self.hint_key = _Bytes()
        self.capacity = 1024
        self.events = bytearray(self.capacity)
        self.out = PyByteArray_AS_STRING(self.events)

    cdef inline int reserve(self) except -1:
        """Room for two more events (an element without children opens and closes)."""
        if self.n_events + 1 >= self.capacity:
            self.capacity *= 2
            PyByteArray_Resize(self.events, self.capacity)
            self.out = PyByteArray_AS_STRING(self.events)
        return 0

    cdef int new_tag(self, str name) except -1:
        """The code of ``name`` (the recorder's tag name), met first on this page."""
        cdef int tag = len(self.names)
        self.names.append(name)
        self.tag_flags.append(
            (TAG_CODE if name == "script" or name == "style" else 0)
            | (TAG_SIGNAL if name in self.signal_elements else 0)
            | (TAG_TBODY if name == "tbody" else 0)
            | (TAG_HEAD if name == "head" else 0)
        )
        return tag

    cdef int new_attribute(self, str key) except -1:
        """The code of attribute ``key``, met first on this page."""
        return _CODES.get(key, SIGNAL if key in self.signal_attributes else OTHER)

    cdef inline Py_ssize_t open(self, int tag) except -1:
        """The start tag of an element with tag code ``tag``; its index."""
        cdef Py_ssize_t index = len(self.tags)
        self.tags.append(self.names[tag])
        self.out[self.n_events] = EVENT_OPEN
        self.n_events += 1
        self.parents.append(self.stack.data[self.stack.size - 1] if self.stack.size else -1)
        self.depths.append(self.stack.size)
        self.ends.append(0)
        self.owners.append(index)
        self.pieces.append(-1)
        self.in_code = self.tag_flags.data[tag] & TAG_CODE
        return index

    cdef inline int start_attributes(self) except -1:
        """Before the attributes of the element just opened."""
        cdef int i
        self.href = self.src = self.alt = None
        self.signal = self.has_kept = self.has_hint = False
        for i in range(4):
            self.parts[i] = NULL
            self.lengths[i] = 0
        return 0

    cdef inline int style(self, str value) except -1:
        """A ``style`` attribute: a signal only with one of the words that hide."""
        value = value.lower()
        self.signal = self.signal or "none" in value or "hidden" in value
        return 0

    cdef inline int hint_part(self, int code) except -1:
        """A class, id, role or itemprop attribute (its value is in ``parts``)."""
        self.has_hint = True
        self.signal = self.signal or code == ITEMPROP
        return 0

    cdef inline int link(self, int code, str value) except -1:
        """An href, src or alt attribute."""
        self.has_kept = True
        if code == HREF:
            self.href = value
        elif code == SRC:
            self.src = value
        else:
            self.alt = value
        return 0

    cdef inline bint end_attributes(self, Py_ssize_t index, str hint, int tag) except -1:
        """After the attributes of element ``index``: its hint (``hint``, or None to join
        ``parts``) and links; whether ``read_signals`` needs all its attributes."""
        cdef int i
        self.hinted.append(index)
        if hint is None:
            if self.has_hint:
                self.hint_key.size = 0
                for i in range(4):
                    if i:
                        self.hint_key.add(" ", 1)
                    if self.lengths[i]:
                        self.hint_key.add(self.parts[i], self.lengths[i])
                hint = _hint(self.hint_key)
            else:
                hint = _NO_HINT
        self.hints.append(hint)
        if self.has_kept:
            self.kept[index] = (self.href, self.src, self.alt)
        return self.signal or self.in_code or self.tag_flags.data[tag] & TAG_SIGNAL

    cdef int signals(self, Py_ssize_t index, dict attrib) except -1:
        """The attributes of element ``index`` for ``read_signals`` (None: not needed),
        read every ``batch`` elements with attributes."""
        if attrib is not None:
            self.signal_indices.append(index)
            self.signal_attribs.append(attrib)
            if self.in_code:
                self.in_code = "ld+json" not in (attrib.get("type") or "")
        self.attributed += 1
        if self.attributed % self.batch == 0:
            self.check_deadline()
            self.read_signals(self.signal_indices, self.signal_attribs)
            self.signal_indices.clear()
            self.signal_attribs.clear()
        return 0

    cdef inline int close_empty(self, Py_ssize_t index) except -1:
        """The end tag of element ``index``, just opened, without children."""
        self.out[self.n_events] = EVENT_CLOSE
        self.n_events += 1
        self.owners.append(index)
        self.pieces.append(-1)
        self.ends.data[index] = index + 1
        self.in_code = False
        return 0

    cdef inline int close(self) except -1:
        """The end tag of the innermost open element."""
        cdef Py_ssize_t index
        self.reserve()
        self.out[self.n_events] = EVENT_CLOSE
        self.n_events += 1
        self.stack.size -= 1
        index = self.stack.data[self.stack.size]
        self.owners.append(index)
        self.pieces.append(-1)
        self.ends.data[index] = len(self.tags)
        self.in_code = False
        return 0

    cdef inline int text(self, str run) except -1:
        """A run of text (joined to the one before when no tag is between: when that
        run ends, ``join_run``; ``+=`` on the list's item copied the run at every piece,
        quadratic in a run of thousands of pieces, such as text between comments)."""
        if self.n_events and self.out[self.n_events - 1] == EVENT_TEXT:
            self.more.append(run)
        else:
            if self.more:
                self.join_run()
            self.texts.append(run)
            self.out[self.n_events] = EVENT_TEXT
            self.n_events += 1
            self.owners.append(self.stack.data[self.stack.size - 1] if self.stack.size else -1)
            self.pieces.append(len(self.texts) - 1)
            self.outside = self.outside or not self.stack.size
        return 0

    cdef int join_run(self) except -1:
        """The last run of text with its pieces after the first (``more``)."""
        self.more.insert(0, self.texts[len(self.texts) - 1])
        self.texts[len(self.texts) - 1] = "".join(self.more)
        self.more = []
        return 0

    cdef int finish(self, recorder) except -1:
        """The last signals; the events, the elements with attributes and, unless text is
        outside every element (``events._shape`` then derives it, dropping that text),
        the tree's shape into ``recorder``."""
        if self.more:
            self.join_run()
        self.check_deadline()
        self.read_signals(self.signal_indices, self.signal_attribs)
        recorder.hinted.frombytes(self.hinted.take())
        PyByteArray_Resize(self.events, self.n_events)
        recorder.events = self.events
        if not self.outside:
            recorder.shape = tuple(
                part.take()
                for part in (self.parents, self.depths, self.ends, self.owners, self.pieces)
            )
        return 0


def walk(
    cetree._Element root, recorder, tag_names, hint_names, signal_attributes,
    signal_elements, int batch,
):
    """Record the document of ``root`` (every top-level node: libxml2 can put content after
    ``</html>`` in a second root) into ``recorder``, as its parser-target methods and
    ``_read_attributes`` would: tags, events, texts, hints and links here, the rest of the
    attributes by ``recorder.read_signals`` for the elements that have one of
    ``signal_attributes`` or a tag in ``signal_elements``, every ``batch`` of them
    (``recorder.check_deadline`` between batches).

    ``tag_names`` maps lxml's tag to the shared, lower-cased name the recorder keeps;
    hints are lower-cased here (:func:`_hint`, shared across pages by their raw bytes),
    through ``hint_names`` only for values lxml has to assemble. ``recorder.shape`` gets
    the tree's shape (as ``events._shape`` would derive it from the events, int32 bytes).
    Returns the deepest element's depth (libxml2's tree stops nesting at a cap; the caller
    compares).

    Per element the loop touches Python only to append its tag and, when it has
    attributes, its hint (looked up by its raw bytes); names are coded by pointer in C
    (:class:`_Codes`), and attribute values become Python strings only for links and
    the elements ``read_signals`` reads. The events themselves are :class:`_Events`'s."""
    cdef xmlNode* node = root._c_node
    cdef xmlAttr* attr
    cdef _Events out = _Events(recorder, signal_attributes, signal_elements, batch)
    cdef const char* plain
    cdef dict attrib
    cdef Py_ssize_t index
    cdef int depth = 0, deepest = 0, code, tag
    cdef bint assembled
    cdef str key

    while node.prev is not NULL:  # the first top-level node
        node = node.prev
    while node is not NULL:
        out.reserve()
        if node.type == tree.XML_ELEMENT_NODE:
            tag = out.tag_codes.get(node.name) if node.ns is NULL else -1
            if tag < 0:
                tag = out.new_tag(tag_names[cetree.namespacedName(node)])
                if node.ns is NULL:
                    out.tag_codes.put(node.name, tag)
            index = out.open(tag)
            if node.properties is not NULL:
                out.start_attributes()
                assembled = False
                attr = node.properties
                while attr is not NULL:
                    code = out.attribute_codes.get(attr.name) if attr.ns is NULL else -1
                    if code < 0:
                        code = out.new_attribute(cetree.namespacedName(<xmlNode*>attr))
                        if attr.ns is NULL:
                            out.attribute_codes.put(attr.name, code)
                    if code == SIGNAL:
                        out.signal = True
                    elif code == STYLE:
                        out.style(_value(node, attr))
                    elif CLASS <= code <= ITEMPROP:
                        plain = _plain_value(attr)
                        if plain is NULL:  # entities: lxml assembles it (below)
                            assembled = True
                        else:  # the last of duplicates, as lxml reads them
                            out.parts[code - CLASS] = plain
                            out.lengths[code - CLASS] = strlen(plain)
                        out.hint_part(code)
                    elif code != OTHER:
                        out.link(code, _value(node, attr))
                    attr = attr.next
                attrib = None
                if out.end_attributes(
                    index, _assembled_hint(node, hint_names) if assembled else None, tag
                ):
                    attrib = {}
                    attr = node.properties
                    while attr is not NULL:
                        key = cetree.namespacedName(<xmlNode*>attr)
                        if key not in attrib:
                            attrib[key] = _value(node, attr)
                        attr = attr.next
                out.signals(index, attrib)
            if node.children is not NULL:
                out.stack.append(index)
                node = node.children
                depth += 1
                if depth > deepest:
                    deepest = depth
                continue
            out.close_empty(index)
        elif node.type == tree.XML_TEXT_NODE or node.type == tree.XML_CDATA_SECTION_NODE:
            if not out.in_code and node.content is not NULL and node.content[0] != 0:
                out.text(_text(<const char*>node.content))
        # Next in document order: the next sibling, else close the ancestors without one.
        while node.next is NULL and depth:
            node = node.parent
            depth -= 1
            out.close()
        node = node.next
    out.finish(recorder)
    return deepest


#: Per character below 256, whether it is white space to ``str.split``.
cdef bint _SPACE_UCS1[256]
for _ch in range(256):
    _SPACE_UCS1[_ch] = Py_UNICODE_ISSPACE(_ch)


cdef Py_ssize_t _collapsed_length(str text):
    """``len(" ".join(text.split()))``: the characters that are not white space, and one
    space between each two words. Strings of one byte per character (most runs, and
    the white space between tags) are read through a table."""
    cdef Py_ssize_t n = len(text), i, count = 0, words = 0
    cdef const uint8_t* chars
    cdef bint space = True, here
    cdef Py_UCS4 ch
    if PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND:
        chars = <const uint8_t*>PyUnicode_1BYTE_DATA(text)
        for i in range(n):
            here = _SPACE_UCS1[chars[i]]
            words += space and not here
            count += not here
            space = here
    else:
        for ch in text:
            here = Py_UNICODE_ISSPACE(ch)
            words += space and not here
            count += not here
            space = here
    return count + words - 1 if words else 0


#: The code units of a string of each kind (one, two or four bytes a character).
ctypedef fused _Unit:
    uint8_t
    uint16_t
    uint32_t


cdef inline Py_ssize_t _collapse_units(const _Unit* units, Py_ssize_t n, _Unit* out) noexcept:
    """:func:`_collapse_into` of the ``n`` characters at ``units`` (one loop per string
    kind; characters below 256 tested through :data:`_SPACE_UCS1`)."""
    cdef Py_ssize_t i, length = 0
    cdef bint pending = False  # white space after a word
    cdef Py_UCS4 ch
    for i in range(n):
        ch = units[i]
        if _SPACE_UCS1[ch] if ch < 256 else Py_UNICODE_ISSPACE(ch):
            pending = length > 0
            continue
        if pending:
            out[length] = 32
            length += 1
            pending = False
        out[length] = <_Unit>ch
        length += 1
    return length


cdef inline Py_ssize_t _collapse_into(str text, void* out) noexcept:
    """``" ".join(text.split())`` written to ``out`` (of ``text``'s kind, room for its
    length; ``str.split``'s white space is ``Py_UNICODE_ISSPACE``), and its length:
    :func:`_collapsed_length`'s, which counts it without writing by a loop without
    branches on the characters (the writing one cannot be one) and runs on every run
    of text of every page (one loop for both cost the node table 0.01x lxml's parse).
    """
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    if kind == PyUnicode_1BYTE_KIND:
        return _collapse_units(<const uint8_t*>data, n, <uint8_t*>out)
    if kind == PyUnicode_2BYTE_KIND:
        return _collapse_units(<const uint16_t*>data, n, <uint16_t*>out)
    return _collapse_units(<const uint32_t*>data, n, <uint32_t*>out)


def piece_lengths(list texts, const int32_t[::1] pieces):
    """Per index in ``pieces`` (into ``texts``, checked), ``len(" ".join(texts[i].split()))``:
    the characters of that run of text with its white space collapsed and stripped,
    counted in C (``str.split``'s white space is ``Py_UNICODE_ISSPACE``), as the bytes of
    int64s."""
    cdef Py_ssize_t n = pieces.shape[0], count = len(texts), i
    for i in range(n):
        if pieces[i] < 0 or pieces[i] >= count:
            raise IndexError(f"piece {pieces[i]} is not one of the {count} runs of text")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* lengths = <int64_t*>PyByteArray_AS_STRING(out)
    for i in range(n):
        lengths[i] = _collapsed_length(<str>texts[pieces[i]])
    return out



cdef Py_ssize_t _lines(
    list texts, const int32_t[::1] pieces, unsigned int kind, void* data, Py_UCS4* widest
):
    """The state machine of :func:`text_lines`: counts the characters of the text (and
    its widest character into ``widest``) when ``data`` is NULL, else writes them."""
    cdef Py_ssize_t i, length = 0
    cdef bint started = False, pending = False  # a line has a word; white space after it
    cdef int32_t piece
    cdef Py_UCS4 ch
    cdef str text
    for i in range(pieces.shape[0]):
        piece = pieces[i]
        if piece < 0:  # a line break
            started = pending = False
            continue
        text = <str>texts[piece]
        for ch in text:
            if Py_UNICODE_ISSPACE(ch):
                pending = started
                continue
            if not started:
                if length:
                    if data is not NULL:
                        PyUnicode_WRITE(kind, data, length, 10)  # "\n" between lines
                    length += 1
                started = True
            elif pending:
                if data is not NULL:
                    PyUnicode_WRITE(kind, data, length, 32)  # " " between words
                length += 1
            pending = False
            if data is not NULL:
                PyUnicode_WRITE(kind, data, length, ch)
            elif ch > widest[0]:
                widest[0] = ch
            length += 1
    return length


def span_text_lengths(
    list texts, const int32_t[::1] pieces, const int64_t[::1] starts, const int64_t[::1] stops
):
    """Per span of events ``[starts[k], stops[k])``, the characters of the runs of text among
    them (``pieces``: per event, its index in ``texts``, -1 for an element's opening or
    closing; indices and spans checked): one pass summing the runs' lengths in event order,
    then a difference per span (spans may nest, as elements do); as the bytes of int64s."""
    cdef Py_ssize_t n = pieces.shape[0], count = len(texts), spans = starts.shape[0], e, k
    if stops.shape[0] != spans:
        raise ValueError("one stop per start")
    for k in range(spans):
        if not 0 <= starts[k] <= stops[k] <= n:
            raise IndexError(f"span [{starts[k]}, {stops[k]}) is not within {n} events")
    for e in range(n):
        if pieces[e] >= count:
            raise IndexError(f"piece {pieces[e]} is not one of the {count} runs of text")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, spans * sizeof(int64_t))
    cdef int64_t* lengths = <int64_t*>PyByteArray_AS_STRING(out)
    cdef int64_t* before = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    if before is NULL:
        raise MemoryError()
    before[0] = 0
    for e in range(n):
        before[e + 1] = before[e] + (len(<str>texts[pieces[e]]) if pieces[e] >= 0 else 0)
    for k in range(spans):
        lengths[k] = before[stops[k]] - before[starts[k]]
    PyMem_Free(before)
    return out


def starts_words(list texts, const int64_t[::1] read, tuple prefixes, tuple whole):
    """Per index in ``read`` (into ``texts``, checked), whether a word of that text, read
    with ``-`` and ``_`` as spaces, starts with one of the given prefixes or is one of the
    given whole words, as bytes of 0 and 1: what a regular expression
    ``\\b(?:p1|p2|...|w1\\b|w2\\b...)`` finds in the text so read, a word being a run of
    the characters ``re`` calls word characters (``str.isalnum`` or ``_``). The prefixes
    and whole words are ASCII word characters, given by their first character:
    ``prefixes[c]`` (and ``whole[c]``) is the tuple of those starting with ``chr(c)``, for
    ``c`` below 128. One pass over each text's word starts, each compared in C with the
    words of its first letter (the regular expression tries each of its branches at each
    position), and a page's distinct hints in one call (a Python call per hint costs
    several times the test)."""
    cdef Py_ssize_t n = read.shape[0], k
    if len(prefixes) != 128 or len(whole) != 128:
        raise ValueError("one tuple of words per ASCII character")
    _check_read(read, len(texts))
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n)
    cdef char* found = PyByteArray_AS_STRING(out)
    for k in range(n):
        found[k] = _starts_word(<str?>texts[read[k]], prefixes, whole)
    return out



#: No prefixes (or whole words) for any first character.
cdef tuple _NO_WORDS = tuple(() for _ch in range(128))


def words_and_doubts(
    list texts, const int64_t[::1] read, tuple prefixes, tuple whole, tuple doubts
):
    """Per index in ``read`` (into ``texts``, checked), 0 where the text holds none of
    the words of :func:`starts_words` (``prefixes``, ``whole``), 1 where it holds one
    and none of ``doubts`` (whole words, given as ``whole`` is), 2 where it holds both:
    :func:`starts_words` and then, on the texts holding the words, ``starts_words`` of
    the doubts, in one call; as bytes."""
    cdef Py_ssize_t n = read.shape[0], k
    cdef str text
    if len(prefixes) != 128 or len(whole) != 128 or len(doubts) != 128:
        raise ValueError("one tuple of words per ASCII character")
    _check_read(read, len(texts))
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n)
    cdef char* found = PyByteArray_AS_STRING(out)
    for k in range(n):
        text = <str?>texts[read[k]]
        found[k] = 0
        if _starts_word(text, prefixes, whole):
            found[k] = 2 if _starts_word(text, _NO_WORDS, doubts) else 1
    return out


cdef int _check_read(const int64_t[::1] read, Py_ssize_t count) except -1:
    """Each index of ``read`` is one of ``count`` texts (an IndexError otherwise)."""
    cdef Py_ssize_t k
    for k in range(read.shape[0]):
        if read[k] < 0 or read[k] >= count:
            raise IndexError(f"text {read[k]} is not one of the {count} texts")
    return 0


cdef int _check_spans(
    const int32_t[::1] pieces, const int64_t[::1] starts, const int64_t[::1] stops,
    Py_ssize_t count,
) except -1:
    """Each span ``[starts[k], stops[k])`` lies within ``pieces``, one stop per start, and
    each piece is one of ``count`` runs of text (a ValueError or IndexError otherwise)."""
    cdef Py_ssize_t k, i
    if stops.shape[0] != starts.shape[0]:
        raise ValueError("one stop per start")
    for k in range(starts.shape[0]):
        if not 0 <= starts[k] <= stops[k] <= pieces.shape[0]:
            raise IndexError(
                f"span [{starts[k]}, {stops[k]}) is not within {pieces.shape[0]} pieces"
            )
    for i in range(pieces.shape[0]):
        if pieces[i] < 0 or pieces[i] >= count:
            raise IndexError(f"piece {pieces[i]} is not one of the {count} runs of text")
    return 0


cdef bint _starts_word(str text, tuple prefixes, tuple whole) noexcept:
    """:func:`starts_words` of one text."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 character
    cdef bint previous_is_word = False, is_word
    for i in range(n):
        character = PyUnicode_READ(kind, data, i)
        is_word = _is_word(character)
        if is_word and not previous_is_word and character < 128 and (
            _word_at(kind, data, n, i, <tuple>prefixes[<Py_ssize_t>character], False) >= 0
            or _word_at(kind, data, n, i, <tuple>whole[<Py_ssize_t>character], True) >= 0
        ):
            return True
        previous_is_word = is_word
    return False


cdef inline Py_ssize_t _word_at(
    int kind, void* data, Py_ssize_t n, Py_ssize_t at, tuple words, bint whole
) noexcept:
    """The index of the first of ``words`` that is at ``at`` in the text of ``n``
    characters at ``data`` (with ``whole``, ending a word there), -1 for none."""
    cdef Py_ssize_t j, size
    cdef str word
    for j in range(PyTuple_GET_SIZE(words)):
        word = <str>PyTuple_GET_ITEM(words, j)
        size = PyUnicode_GET_LENGTH(word)
        if at + size > n or not _same(kind, data, at, word, size):
            continue
        if not whole or at + size == n or not _is_word(PyUnicode_READ(kind, data, at + size)):
            return j
    return -1


def word_hashes(list texts, Py_ssize_t max_words):
    """Per text of ``texts`` lower-cased (``str.lower``), its number of words (runs of the
    characters ``re`` calls word characters, ``\\w``), counted up to ``max_words + 1``
    (every word with 0); and the CRC-32 of each word's UTF-8 bytes (``zlib.crc32``), word
    after word, of the texts of at most ``max_words`` words (of every text with 0): both as
    the bytes of int64s. What :func:`~scrapy_tagratio.algorithms.words.word_hashes` finds
    with ``re`` and ``zlib``, without a Python string per word."""
    if max_words < 0:
        raise ValueError(f"max_words must be 0 or more, not {max_words}")
    cdef Py_ssize_t n = len(texts), k, total = 0
    cdef bytearray counted = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* counts = <int64_t*>PyByteArray_AS_STRING(counted)
    cdef list hashed_texts = []  # lower-cased, of at most max_words words
    cdef str lowered
    for k in range(n):
        lowered = (<str?>texts[k]).lower()
        counts[k] = _crc_words(lowered, NULL, max_words + 1 if max_words else 0)
        if not max_words or counts[k] <= max_words:
            hashed_texts.append(lowered)
            total += counts[k]
    cdef bytearray hashed = PyByteArray_FromStringAndSize(NULL, total * sizeof(int64_t))
    cdef int64_t* hashes = <int64_t*>PyByteArray_AS_STRING(hashed)
    for lowered in hashed_texts:
        hashes += _crc_words(lowered, hashes, 0)
    return counted, hashed


def hashed_words(list texts, Py_ssize_t bits, Py_ssize_t max_words):
    """What :func:`~scrapy_tagratio.algorithms.words.hashed_words` gives, as the bytes of
    int64s: per text, where its buckets start (one more at the end), the distinct
    ``bits``-bit buckets (a word's CRC-32, its low ``bits`` bits) of each text's words
    in increasing order, and its number of words; the words and counts of
    :func:`word_hashes`, each text's few buckets sorted and made distinct in place
    (:func:`_distinct_buckets`: no sort of the page's keys together)."""
    if bits < 0:
        raise ValueError(f"bits must be 0 or more, not {bits}")
    counted, hashed = word_hashes(texts, max_words)
    return _distinct_buckets(counted, hashed, bits, max_words)


def span_hashed_words(
    list texts,
    const int32_t[::1] pieces,
    const int64_t[::1] starts,
    const int64_t[::1] stops,
    Py_ssize_t bits,
    Py_ssize_t max_words,
):
    """:func:`hashed_words` of the texts :func:`span_texts` would build (per span
    ``[starts[k], stops[k])`` of ``pieces``, indices into ``texts``; all checked), read
    from the runs themselves: no text is built. Collapsing white space changes no word
    (white space is no word character, and one space stays between words), and each
    character is lower-cased as it is read by ``Py_UNICODE_TOLOWER``, which is
    ``str.lower``'s mapping for every character but two (:func:`_span_words`)."""
    cdef Py_ssize_t spans = starts.shape[0], count = len(texts), k, total = 0
    if bits < 0:
        raise ValueError(f"bits must be 0 or more, not {bits}")
    if max_words < 0:
        raise ValueError(f"max_words must be 0 or more, not {max_words}")
    _check_spans(pieces, starts, stops, count)
    cdef bytearray counted = PyByteArray_FromStringAndSize(NULL, spans * sizeof(int64_t))
    cdef int64_t* counts = <int64_t*>PyByteArray_AS_STRING(counted)
    cdef const int32_t* runs = &pieces[0] if pieces.shape[0] else NULL
    for k in range(spans):
        counts[k] = _span_words(
            texts, runs, starts[k], stops[k], NULL, max_words + 1 if max_words else 0
        )
        if not max_words or counts[k] <= max_words:
            total += counts[k]
    cdef bytearray hashed = PyByteArray_FromStringAndSize(NULL, total * sizeof(int64_t))
    cdef int64_t* hashes = <int64_t*>PyByteArray_AS_STRING(hashed)
    for k in range(spans):
        if not max_words or counts[k] <= max_words:
            hashes += _span_words(texts, runs, starts[k], stops[k], hashes, 0)
    return _distinct_buckets(counted, hashed, bits, max_words)


cdef Py_ssize_t _span_words(
    list texts,
    const int32_t* pieces,
    Py_ssize_t start,
    Py_ssize_t stop,
    int64_t* hashes,
    Py_ssize_t most,
) except -1:
    """:func:`_crc_words` of the lower-cased join of the runs ``texts[pieces[i]]``, ``i``
    in ``[start, stop)``, a character at a time across the runs (a word may go on from
    one run into the next). ``str.lower`` maps each character as ``Py_UNICODE_TOLOWER``
    does but U+0130 (two characters: "i" and a combining dot) and U+03A3 (the capital
    sigma, final or not by the letters around it): a span holding either is joined,
    collapsed as :func:`span_texts` does and lower-cased by ``str.lower``."""
    cdef Py_ssize_t i, j, n
    cdef str run
    cdef int kind
    cdef void* data
    cdef Py_UCS4 character
    for i in range(start, stop):
        run = <str>texts[pieces[i]]
        if PyUnicode_KIND(run) == PyUnicode_1BYTE_KIND:  # neither character fits a byte
            continue
        kind, data = PyUnicode_KIND(run), PyUnicode_DATA(run)
        for j in range(PyUnicode_GET_LENGTH(run)):
            character = PyUnicode_READ(kind, data, j)
            if character == 0x130 or character == 0x3A3:
                joined = "".join([texts[pieces[k]] for k in range(start, stop)])
                return _crc_words(" ".join(joined.split()).lower(), hashes, most)
    cdef _Words state = _Words(hashes, most, 0, 0xFFFFFFFF, False)
    for i in range(start, stop):
        run = <str>texts[pieces[i]]
        kind, data, n = PyUnicode_KIND(run), PyUnicode_DATA(run), PyUnicode_GET_LENGTH(run)
        for j in range(n):
            character = PyUnicode_READ(kind, data, j)
            if 65 <= character <= 90:  # "A" to "Z"
                character = <Py_UCS4>(<uint32_t>character + 32)
            elif character >= 128:
                character = Py_UNICODE_TOLOWER(character)
            if _read_character(&state, character):
                return state.words
    return _words_read(&state)


cdef tuple _distinct_buckets(
    bytearray counted, bytearray hashed, Py_ssize_t bits, Py_ssize_t max_words
):
    """The rows of :func:`hashed_words` from the words' counts and CRC-32s (``counted``
    per text, ``hashed`` word after word of the texts of at most ``max_words`` words,
    every text with 0): each text's buckets (the low ``bits`` bits) sorted and made
    distinct in place, ``hashed`` cut to them; (starts, buckets, counts)."""
    cdef Py_ssize_t n = len(counted) // sizeof(int64_t), k, i, size, at = 0, kept = 0
    cdef const int64_t* counts = <const int64_t*>PyByteArray_AS_STRING(counted)
    cdef int64_t* buckets = <int64_t*>PyByteArray_AS_STRING(hashed)
    cdef int64_t mask = 0xFFFFFFFF if bits >= 32 else (1 << bits) - 1, bucket, previous = 0
    cdef bytearray started = PyByteArray_FromStringAndSize(NULL, (n + 1) * sizeof(int64_t))
    cdef int64_t* starts = <int64_t*>PyByteArray_AS_STRING(started)
    for k in range(n):
        starts[k] = kept
        size = counts[k] if not max_words or counts[k] <= max_words else 0
        for i in range(at, at + size):
            buckets[i] &= mask
        _sort_int64(buckets + at, size)
        # Written over the sorted words (never ahead of the one read).
        for i in range(at, at + size):
            bucket = buckets[i]
            if i == at or bucket != previous:
                buckets[kept] = bucket
                kept += 1
            previous = bucket
        at += size
    starts[n] = kept
    PyByteArray_Resize(hashed, kept * sizeof(int64_t))
    return started, hashed, counted


cdef void _sort_int64(int64_t* values, Py_ssize_t n) noexcept:
    """Sort ``n`` int64s in place, in increasing order: by insertion for the few words of
    a short text, else by ``qsort``."""
    cdef Py_ssize_t i, j
    cdef int64_t value
    if n > 16:
        qsort(values, n, sizeof(int64_t), _compare_int64)
        return
    for i in range(1, n):
        value = values[i]
        j = i - 1
        while j >= 0 and values[j] > value:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = value


cdef int _compare_int64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


#: zlib's CRC-32 table (the reflected polynomial 0xEDB88320), per byte value.
cdef uint32_t _CRC_TABLE[256]
for _ch in range(256):
    _CRC_TABLE[_ch] = _ch
    for _bit in range(8):
        _CRC_TABLE[_ch] = (_CRC_TABLE[_ch] >> 1) ^ (0xEDB88320 if _CRC_TABLE[_ch] & 1 else 0)


cdef inline uint32_t _crc_byte(uint32_t crc, uint32_t byte) noexcept:
    """The running CRC-32 ``crc`` (complemented, as zlib keeps it) after one more byte."""
    return _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)


cdef inline uint32_t _crc_character(uint32_t crc, uint32_t code) noexcept:
    """:func:`_crc_byte` over the UTF-8 bytes of the character of code point ``code``."""
    if code < 0x80:
        return _crc_byte(crc, code)
    if code < 0x800:
        crc = _crc_byte(crc, 0xC0 | (code >> 6))
    else:
        if code < 0x10000:
            crc = _crc_byte(crc, 0xE0 | (code >> 12))
        else:
            crc = _crc_byte(crc, 0xF0 | (code >> 18))
            crc = _crc_byte(crc, 0x80 | ((code >> 12) & 0x3F))
        crc = _crc_byte(crc, 0x80 | ((code >> 6) & 0x3F))
    return _crc_byte(crc, 0x80 | (code & 0x3F))


cdef Py_ssize_t _crc_words(str text, int64_t* hashes, Py_ssize_t most) noexcept:
    """The number of words (runs of ``\\w``) of ``text``, counted up to ``most`` (every
    word with 0); their CRC-32s written to ``hashes`` in order unless it is NULL."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef _Words state = _Words(hashes, most, 0, 0xFFFFFFFF, False)
    for i in range(n):
        if _read_character(&state, PyUnicode_READ(kind, data, i)):
            return state.words
    return _words_read(&state)


cdef struct _Words:
    # The words of a text read a character at a time (:func:`_read_character`): their
    # CRC-32s written to ``hashes`` unless it is NULL, read up to ``most`` words (every
    # word with 0); the words ended so far, the running CRC-32 of the word being read
    # (complemented, as zlib keeps it) and whether a word is being read.
    int64_t* hashes
    Py_ssize_t most
    Py_ssize_t words
    uint32_t crc
    bint inside


cdef inline bint _read_character(_Words* state, Py_UCS4 character) noexcept:
    """One more character of ``state``'s text (a word character of ``re``'s ``\\w``,
    :func:`_is_word`'s or ``_``, goes on a word, any other ends one); True once the
    words read reach ``state.most``."""
    if _is_word(character) or character == 95:
        if state.hashes is not NULL:
            state.crc = _crc_character(state.crc, <uint32_t>character)
        state.inside = True
        return False
    if not state.inside:
        return False
    if state.hashes is not NULL:
        state.hashes[state.words] = state.crc ^ 0xFFFFFFFF
        state.crc = 0xFFFFFFFF
    state.words += 1
    state.inside = False
    return state.words == state.most


cdef inline Py_ssize_t _words_read(_Words* state) noexcept:
    """The number of words of ``state``'s text at its end (a word being read ends there)."""
    if state.inside:
        if state.hashes is not NULL:
            state.hashes[state.words] = state.crc ^ 0xFFFFFFFF
        state.words += 1
        state.inside = False
    return state.words


def word_pairs(list texts, const int64_t[::1] read, tuple firsts, tuple seconds):
    """Per index in ``read`` (into ``texts``, checked), the number of the pair that text
    holds, read with ``-`` and ``_`` as spaces, as the bytes of int64: the first pair found
    at the leftmost word start where one is, -1 for none. A pair is a word starting with
    ``firsts[i]``, then white space or nothing, then one of ``seconds[i]`` ending a word
    (what ``\\b(?:f1\\s*(?:s1|s2...)|f2\\s*(?:...)...)\\b`` finds, its branches tried in
    order); pairs are numbered in that order (``firsts[0]`` with each of ``seconds[0]``,
    then ``firsts[1]``'s...). Words as :func:`starts_words` reads them; the words are
    ASCII word characters."""
    cdef Py_ssize_t n = read.shape[0], k
    if len(seconds) != len(firsts):
        raise ValueError("one tuple of second words per first word")
    _check_read(read, len(texts))
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* found = <int64_t*>PyByteArray_AS_STRING(out)
    for k in range(n):
        found[k] = _word_pair(<str?>texts[read[k]], firsts, seconds)
    return out


cdef int64_t _word_pair(str text, tuple firsts, tuple seconds) noexcept:
    """:func:`word_pairs` of one text."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, f, s, at, size, number
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 character
    cdef bint previous_is_word = False, is_word
    cdef str word
    cdef tuple after
    for i in range(n):
        character = PyUnicode_READ(kind, data, i)
        is_word = _is_word(character)
        if is_word and not previous_is_word:
            number = 0
            for f in range(PyTuple_GET_SIZE(firsts)):
                word = <str>PyTuple_GET_ITEM(firsts, f)
                after = <tuple>PyTuple_GET_ITEM(seconds, f)
                size = PyUnicode_GET_LENGTH(word)
                if i + size <= n and _same(kind, data, i, word, size):
                    at = i + size
                    while at < n and _is_space(PyUnicode_READ(kind, data, at)):
                        at += 1
                    s = _word_at(kind, data, n, at, after, True)
                    if s >= 0:
                        return number + s
                number += PyTuple_GET_SIZE(after)
        previous_is_word = is_word
    return -1


cdef inline bint _is_space(Py_UCS4 character) noexcept:
    """White space of ``re`` (``\\s``: ``str.isspace``), or ``-`` or ``_`` (read as one)."""
    return character == 45 or character == 95 or Py_UNICODE_ISSPACE(character)


#: Per ASCII character, whether it is a word character of :func:`_is_word`.
cdef bint _WORD_ASCII[128]
for _ch in range(128):
    _WORD_ASCII[_ch] = _ch != ord("_") and Py_UNICODE_ISALNUM(_ch)


cdef inline bint _is_word(Py_UCS4 character) noexcept:
    """A word character of ``re`` (``\\w``) that is not ``_`` (read as a space); ASCII
    through a table (``Py_UNICODE_ISALNUM`` is up to four calls a character)."""
    if character < 128:
        return _WORD_ASCII[character]
    return Py_UNICODE_ISALNUM(character)


cdef inline bint _same(int kind, void* data, Py_ssize_t at, str word, Py_ssize_t size) noexcept:
    """``text[at:at + size] == word`` for the text at ``data`` (the caller checked that it
    is long enough)."""
    cdef int word_kind = PyUnicode_KIND(word)
    cdef void* word_data = PyUnicode_DATA(word)
    cdef Py_ssize_t k
    for k in range(size):
        if PyUnicode_READ(kind, data, at + k) != PyUnicode_READ(word_kind, word_data, k):
            return False
    return True

def first_codes(names):
    """Per name of the sequence ``names`` (tag names), a small integer: the distinct names
    numbered in the order they first appear; as (the bytes of the codes as ``intp``,
    the dict from name to code), what :class:`~scrapy_tagratio.cleaning.TagClasses` and
    :attr:`~scrapy_tagratio.nodetable.NodeTable.tag_codes` give."""
    cdef list items = names if type(names) is list else list(names)
    cdef Py_ssize_t n = len(items), i
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(Py_ssize_t))
    cdef Py_ssize_t* codes = <Py_ssize_t*>PyByteArray_AS_STRING(out)
    cdef dict found = {}
    cdef object name, code
    for i in range(n):
        name = items[i]
        code = found.get(name)
        if code is None:
            code = len(found)
            found[name] = code
        codes[i] = <Py_ssize_t>code
    return out, found


def nearest_flagged(const int32_t[::1] parent, const uint8_t[::1] flags):
    """Per node of a tree in document order (``parent[i] < i``, -1 for the root), its
    nearest strict ancestor whose flag is set, -1 where none is: the parent when it is
    flagged, else the parent's answer, in one pass; as the bytes of int64s (what
    :meth:`~scrapy_tagratio.nodetable.NodeTable.nearest_ancestor` gives)."""
    cdef Py_ssize_t n = parent.shape[0], i
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* nearest = <int64_t*>PyByteArray_AS_STRING(out)
    cdef int32_t up
    for i in range(n):
        up = parent[i]
        if up < 0:
            nearest[i] = -1
        elif flags[up]:
            nearest[i] = up
        else:
            nearest[i] = nearest[up]
    return out


cdef inline bint _ranks_above(double value, int64_t post, Py_ssize_t node,
                              double other, int64_t other_post, Py_ssize_t other_node):
    """``(value, post, node)`` after ``(other, other_post, other_node)`` in numpy's sort
    order: NaN after every number, then the post-order position, then the index."""
    cdef bint nan = value != value, other_nan = other != other
    if nan != other_nan:
        return nan
    if not nan and value != other:
        return value > other
    if post != other_post:
        return post > other_post
    return node > other_node


def subtree_argmax(const int32_t[::1] parent, const double[::1] values, const int64_t[::1] post):
    """Per node of a tree in document order (``parent[i] < i``, checked; -1 for the root),
    the node of its subtree (itself included) that ranks last by ``(values, post, index)`` in
    numpy's sort order (what ``np.lexsort((post, values))`` ranks): the nodes in reverse
    order, each handing its answer to its parent, whose descendants all come after it, in
    one pass; as the bytes of int64s (what
    :func:`~scrapy_tagratio.algorithms.cetd._subtree_argmax` gives)."""
    cdef Py_ssize_t n = parent.shape[0], i, mine, theirs
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* best = <int64_t*>PyByteArray_AS_STRING(out)
    cdef int32_t up
    for i in range(n):
        best[i] = i
    if values.shape[0] != n or post.shape[0] != n:
        raise ValueError("one value and one post-order position per node")
    for i in range(n - 1, -1, -1):
        up = parent[i]
        if up < 0:
            continue
        if up >= i:  # not a tree in document order: the write below would stray
            raise ValueError(f"node {i}: parent {up} does not come before it")
        mine, theirs = best[i], best[up]
        if _ranks_above(values[mine], post[mine], mine, values[theirs], post[theirs], theirs):
            best[up] = mine
    return out


cdef double _E = 2.718281828459045  # numpy's e, the double nearest to e


@cython.cdivision(True)
def density_terms(
    const int32_t[::1] chars,
    const int32_t[::1] link_chars,
    const int32_t[::1] tags,
    const int32_t[::1] link_tags,
    double link_ratio,
):
    """Per node, the three terms of CETD's composite text density that need no logarithm
    (what :func:`~scrapy_tagratio.algorithms.cetd._density_terms` gives: the same IEEE
    operations in the same order, so the same doubles): the logarithm base's argument
    over e, ``(C / (C - LC) * LC + link_ratio * C) / e``; the logarithm's argument, ``C /
    LC * (T / LT)``, 1 where it is not above 0; and the text density ``C / T``; each zero
    denominator read as 1. As three bytes of float64s."""
    cdef Py_ssize_t n = chars.shape[0], i
    if link_chars.shape[0] != n or tags.shape[0] != n or link_tags.shape[0] != n:
        raise ValueError("one value of each per node")
    cdef bytearray scaled_out = PyByteArray_FromStringAndSize(NULL, n * sizeof(double))
    cdef bytearray argument_out = PyByteArray_FromStringAndSize(NULL, n * sizeof(double))
    cdef bytearray density_out = PyByteArray_FromStringAndSize(NULL, n * sizeof(double))
    cdef double* scaled = <double*>PyByteArray_AS_STRING(scaled_out)
    cdef double* argument = <double*>PyByteArray_AS_STRING(argument_out)
    cdef double* density = <double*>PyByteArray_AS_STRING(density_out)
    cdef double c, lc, non_link, tag_count, link_tag_count, value
    for i in range(n):
        c = chars[i]
        lc = link_chars[i]
        non_link = c - lc
        tag_count = tags[i] if tags[i] > 1 else 1
        link_tag_count = link_tags[i] if link_tags[i] != 0 else 1
        scaled[i] = (c / (non_link if non_link != 0 else 1.0) * lc + link_ratio * c) / _E
        value = c / (lc if lc != 0 else 1.0) * (tag_count / link_tag_count)
        argument[i] = value if value > 0 else 1.0
        density[i] = c / tag_count
    return scaled_out, argument_out, density_out


cdef int _compare_codes(const void* a, const void* b) noexcept nogil:
    cdef Py_ssize_t x = (<const Py_ssize_t*>a)[0], y = (<const Py_ssize_t*>b)[0]
    return (x > y) - (x < y)


# Bits of item_tests' ``kinds``, per node: a ``time`` element, a heading (``h1``-``h6``),
# a major heading (``h1``-``h3``), an ``<a>``.
cdef enum:
    ITEM_TIME = 1
    ITEM_HEADING = 2
    ITEM_MAJOR = 4
    ITEM_ANCHOR = 8


def item_tests(
    const int32_t[::1] end, const int32_t[::1] chars, const int32_t[::1] link_chars,
    const uint8_t[::1] is_link, const int64_t[::1] block, const double[::1] block_chars,
    const double[::1] block_link_chars, const uint8_t[::1] kinds, const Py_ssize_t[::1] items,
    double meta_chars, double comment_body_chars, double headline_chars, double headline_share,
):
    """The per-item tests of :func:`~scrapy_tagratio.structure.find_structures` (its
    module's steps 2 to 4) in one pass each way over a node table (``end``, ``chars``,
    ``link_chars``, ``is_link``, ``block`` and its ``block_chars`` and
    ``block_link_chars``, as :class:`~scrapy_tagratio.nodetable.NodeTable` holds them;
    ``kinds``, the ``ITEM_*`` bits of each node): per node of ``items``, whether it looks
    like a comment, and its first headline link where that link is large enough to make
    it a teaser (-1 where not), as the bytes of a bool and of an int64 per item. The sums
    over subtrees are prefix-sum differences, as numpy's (the body's characters in
    float64, summed in the same order), so every comparison is numpy's. Indices out of
    range are a ValueError."""
    cdef Py_ssize_t n = end.shape[0], i, item, k = items.shape[0], link, reach = 0
    if (chars.shape[0] != n or link_chars.shape[0] != n or is_link.shape[0] != n
            or block.shape[0] != n or block_chars.shape[0] != n
            or block_link_chars.shape[0] != n or kinds.shape[0] != n):
        raise ValueError("one value per node in every array")
    for i in range(n):
        if end[i] <= i or end[i] > n or block[i] < 0 or block[i] >= n:
            raise ValueError(f"node {i}: subtree end or block outside the table")
    for i in range(k):
        if items[i] < 0 or items[i] >= n:
            raise ValueError(f"item {items[i]} outside the table")
    cdef bytearray comment_out = PyByteArray_FromStringAndSize(NULL, k)
    cdef bytearray headline_out = PyByteArray_FromStringAndSize(NULL, k * sizeof(int64_t))
    cdef uint8_t* looks_comment = <uint8_t*>PyByteArray_AS_STRING(comment_out)
    cdef int64_t* headline = <int64_t*>PyByteArray_AS_STRING(headline_out)
    # Per node: its block holds a time element; its subtree is inside a heading's. Prefix
    # sums (index i: over the nodes before i) of the meta blocks, the body's characters,
    # the major headings and the headings; the next headline link at or after i.
    cdef uint8_t* holds_time = <uint8_t*>PyMem_Calloc(n + 1, 1)
    cdef uint8_t* in_heading = <uint8_t*>PyMem_Malloc(n + 1)
    cdef int64_t* metas = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    cdef double* body = <double*>PyMem_Malloc((n + 1) * sizeof(double))
    cdef int64_t* majors = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    cdef int64_t* headings = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    cdef int64_t* next_link = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    cdef double length, linked, unlinked, item_chars
    cdef bint meta, found
    try:
        if (holds_time is NULL or in_heading is NULL or metas is NULL or body is NULL
                or majors is NULL or headings is NULL or next_link is NULL):
            raise MemoryError()
        for i in range(n):
            if kinds[i] & ITEM_TIME:
                holds_time[block[i]] = 1
        metas[0] = majors[0] = headings[0] = 0
        body[0] = 0.0
        for i in range(n):
            length, linked = block_chars[i], block_link_chars[i]
            meta = length > 0 and length <= meta_chars and (2 * linked >= length or holds_time[i])
            metas[i + 1] = metas[i] + meta
            body[i + 1] = body[i] + (0.0 if meta else length - linked)
            majors[i + 1] = majors[i] + ((kinds[i] & ITEM_MAJOR) != 0)
            headings[i + 1] = headings[i] + ((kinds[i] & ITEM_HEADING) != 0)
            if kinds[i] & ITEM_HEADING and end[i] > reach:
                reach = end[i]
            in_heading[i] = reach > i
        next_link[n] = n
        for i in range(n - 1, -1, -1):
            # A headline link: an <a> link with text, headline-long or in or around a heading.
            if (kinds[i] & ITEM_ANCHOR and is_link[i] and chars[i] > 0
                    and (chars[i] >= headline_chars or in_heading[i]
                         or headings[end[i]] - headings[i] > 0)):
                next_link[i] = i
            else:
                next_link[i] = next_link[i + 1]
        for i in range(k):
            item = items[i]
            item_chars, linked = <double>chars[item], <double>link_chars[item]
            unlinked = item_chars - linked
            looks_comment[i] = (
                metas[end[item]] - metas[item] >= 1
                and majors[end[item]] - majors[item] <= 0
                and body[end[item]] - body[item] >= comment_body_chars
                and unlinked >= 2 * linked
            )
            link = next_link[item]
            found = link < end[item]
            headline[i] = link if found and (
                <double>chars[link] >= headline_share * item_chars or in_heading[link]
            ) else -1
    finally:
        PyMem_Free(holds_time)
        PyMem_Free(in_heading)
        PyMem_Free(metas)
        PyMem_Free(body)
        PyMem_Free(majors)
        PyMem_Free(headings)
        PyMem_Free(next_link)
    return comment_out, headline_out


def sibling_groups(
    const int32_t[::1] parent, const Py_ssize_t[::1] codes, const uint8_t[::1] candidate,
    Py_ssize_t n_codes, Py_ssize_t min_repeats,
):
    """Per node of a tree in document order (``parent[i] < i``, checked; -1 for the root),
    the number of its group of repeated siblings, -1 where it is in none: the
    ``candidate`` nodes grouped by (parent, tag code, ``0 <= code < n_codes``), a group
    needing ``min_repeats`` members, the groups numbered in order of (parent, code). The
    candidates are listed by parent (a counting sort) and each parent's children counted
    per code; as the bytes of int64s (what
    :func:`~scrapy_tagratio.structure.repeated_items` gives)."""
    cdef Py_ssize_t n = parent.shape[0], i, j, code, up, first, last, used, number = 0
    if codes.shape[0] != n or candidate.shape[0] != n:
        raise ValueError("one code and one candidate flag per node")
    for i in range(n):
        if parent[i] >= i or parent[i] < -1:
            raise ValueError(f"node {i}: parent {parent[i]} does not come before it")
        if codes[i] < 0 or codes[i] >= n_codes:
            raise ValueError(f"node {i}: code {codes[i]} not below {n_codes}")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* group = <int64_t*>PyByteArray_AS_STRING(out)
    cdef Py_ssize_t* start = <Py_ssize_t*>PyMem_Calloc(n + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t* children = <Py_ssize_t*>PyMem_Malloc((n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* count = <Py_ssize_t*>PyMem_Calloc(n_codes + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t* seen = <Py_ssize_t*>PyMem_Malloc((n_codes + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* numbers = <Py_ssize_t*>PyMem_Malloc((n_codes + 1) * sizeof(Py_ssize_t))
    try:
        if start is NULL or children is NULL or count is NULL or seen is NULL or numbers is NULL:
            raise MemoryError()
        for i in range(n):
            group[i] = -1
            if candidate[i] and parent[i] >= 0:
                start[parent[i] + 1] += 1
        for i in range(n):
            start[i + 1] += start[i]
        for i in range(n):  # children in document order, a parent's after its start
            if candidate[i] and parent[i] >= 0:
                up = parent[i]
                children[start[up]] = i
                start[up] += 1
        for up in range(n):  # start[up] is now the end of up's children
            first, last = start[up - 1] if up else 0, start[up]
            if last - first < min_repeats:
                continue
            used = 0
            for j in range(first, last):
                code = codes[children[j]]
                if count[code] == 0:
                    seen[used] = code
                    used += 1
                count[code] += 1
            qsort(seen, used, sizeof(Py_ssize_t), _compare_codes)
            for j in range(used):
                code = seen[j]
                if count[code] >= min_repeats:
                    numbers[code] = number
                    number += 1
            for j in range(first, last):
                code = codes[children[j]]
                if count[code] >= min_repeats:
                    group[children[j]] = numbers[code]
            for j in range(used):
                count[seen[j]] = 0
    finally:
        PyMem_Free(start)
        PyMem_Free(children)
        PyMem_Free(count)
        PyMem_Free(seen)
        PyMem_Free(numbers)
    return out


def event_mask(
    const int8_t[::1] kinds,
    const int32_t[::1] owners,
    const uint8_t[::1] texts_of,
    const uint8_t[::1] others_of,
):
    """Per event (``kinds``, ``owners``: a node of the table, checked), whether it is
    selected: a text event when its owner is flagged in ``texts_of``, an opening or
    closing when its owner is flagged in ``others_of`` (per node); as the bytes of bools
    (what ``np.where(kinds == EVENT_TEXT, texts_of[owners], others_of[owners])`` gives,
    in one pass)."""
    cdef Py_ssize_t n = kinds.shape[0], nodes = texts_of.shape[0], e, owner
    if owners.shape[0] != n:
        raise ValueError("one owner per event")
    if others_of.shape[0] != nodes:
        raise ValueError("one flag of each kind per node")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n)
    cdef uint8_t* selected = <uint8_t*>PyByteArray_AS_STRING(out)
    for e in range(n):
        owner = owners[e]
        if owner < 0 or owner >= nodes:
            raise IndexError(f"event {e}: owner {owner} outside the table of {nodes} nodes")
        if kinds[e] == EVENT_TEXT:
            selected[e] = texts_of[owner] != 0
        else:
            selected[e] = others_of[owner] != 0
    return out


def subtree_mask(const int32_t[::1] end, const uint8_t[::1] flags):
    """Per node of a tree whose subtrees are the ranges ``[i, end[i])``, whether it lies
    in the subtree of a flagged node (the flagged nodes included): the furthest end of
    the flagged subtrees met so far passes it; as the bytes of bools (what
    :func:`~scrapy_tagratio.nodetable._subtree_mask` gives)."""
    cdef Py_ssize_t n = end.shape[0], i
    if flags.shape[0] != n:
        raise ValueError("one flag per node")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n)
    cdef uint8_t* inside = <uint8_t*>PyByteArray_AS_STRING(out)
    cdef int64_t reach = 0
    for i in range(n):
        if flags[i] and end[i] > reach:
            reach = end[i]
        inside[i] = reach > i
    return out


def subtree_flagged(const int32_t[::1] end, const uint8_t[::1] flags):
    """Per node of a tree whose subtrees are the ranges ``[i, end[i])`` (``i < end[i] <=
    n``, checked), whether its subtree holds a flagged node: the count of flags before
    ``end[i]`` passes the count before ``i``; as the bytes of bools (what
    :func:`~scrapy_tagratio.nodetable._subtree_flagged` gives), without the int32 copy of
    the flags and the comparison pass of :func:`subtree_sums`."""
    cdef Py_ssize_t n = end.shape[0], i
    if flags.shape[0] != n:
        raise ValueError("one flag per node")
    cdef int64_t* prefix = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    if prefix == NULL:
        raise MemoryError()
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n)
    cdef uint8_t* holds = <uint8_t*>PyByteArray_AS_STRING(out)
    try:
        prefix[0] = 0
        for i in range(n):
            prefix[i + 1] = prefix[i] + (flags[i] != 0)
        for i in range(n):
            if end[i] <= i or end[i] > n:
                raise ValueError(f"node {i}: subtree end {end[i]} outside ({i}, {n}]")
            holds[i] = prefix[end[i]] > prefix[i]
    finally:
        PyMem_Free(prefix)
    return out


def subtree_sums(const int32_t[::1] end, const int32_t[::1] values):
    """Per node of a tree whose subtrees are the ranges ``[i, end[i])`` (``i < end[i] <=
    n``, checked), the sum of ``values`` over its subtree: differences of prefix sums, in
    int64; as the bytes of int64s (what :func:`~scrapy_tagratio.nodetable._subtree_sum`
    gives)."""
    cdef Py_ssize_t n = end.shape[0], i
    if values.shape[0] != n:
        raise ValueError("one value per node")
    for i in range(n):
        if end[i] <= i or end[i] > n:
            raise ValueError(f"node {i}: subtree end {end[i]} outside ({i}, {n}]")
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, (n + 1) * sizeof(int64_t))
    cdef int64_t* prefix = <int64_t*>PyByteArray_AS_STRING(out)
    prefix[0] = 0
    for i in range(n):
        prefix[i + 1] = prefix[i] + values[i]
    for i in range(n):  # in place: prefix[end[i]] is read before any later i writes it
        prefix[i] = prefix[end[i]] - prefix[i]
    PyByteArray_Resize(out, n * sizeof(int64_t))
    return out


cdef bytearray _zeros(Py_ssize_t size):
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, size)
    memset(PyByteArray_AS_STRING(out), 0, size)
    return out


def kept_elements(
    const int32_t[::1] parent, const int32_t[::1] end, const int32_t[::1] depth,
    const uint8_t[::1] skip, const uint8_t[::1] link, Py_ssize_t body,
):
    """The elements of a page (``parent``, ``depth``, subtrees ``[i, end[i])``; checked:
    ``-1 <= parent[i] < i < end[i] <= n``) that lie in ``body``'s subtree and in the
    subtree of no element ``skip`` marks there, as the node table keeps them: what
    :func:`~scrapy_tagratio.document._kept_elements` gives, as bytes. Per element,
    ``keep`` (bools) and ``before`` (int64s, one more at the end: how many are kept before
    it); per kept element, its index, the table's parent (-1 for ``body``), depth below
    ``body``, end, descendants and descendant links (int32s), whether ``link`` marks it
    and whether it lies in a marked subtree below the first (bools)."""
    cdef Py_ssize_t n = end.shape[0], i, k, m
    if parent.shape[0] != n or depth.shape[0] != n or skip.shape[0] != n or link.shape[0] != n:
        raise ValueError("one parent, depth, skip and link flag per element")
    if not 0 <= body < n:
        raise IndexError(f"body {body} is not one of the {n} elements")
    for i in range(n):
        if end[i] <= i or end[i] > n or parent[i] < -1 or parent[i] >= i:
            raise ValueError(f"element {i}: parent {parent[i]} or end {end[i]} out of order")
    cdef bytearray keep_out = _zeros(n), before_out = _zeros((n + 1) * sizeof(int64_t))
    cdef uint8_t* keep = <uint8_t*>PyByteArray_AS_STRING(keep_out)
    cdef int64_t* before = <int64_t*>PyByteArray_AS_STRING(before_out)
    cdef int64_t reach = 0  # the furthest end of the skipped subtrees met so far
    for i in range(body, end[body]):
        if skip[i] and end[i] > reach:
            reach = end[i]
        keep[i] = reach <= i
    for i in range(n):
        before[i + 1] = before[i] + keep[i]
    m = before[n]
    columns = [_zeros(m * sizeof(int32_t)) for _ in range(6)]
    cdef int32_t* element = <int32_t*>PyByteArray_AS_STRING(columns[0])
    cdef int32_t* table_parent = <int32_t*>PyByteArray_AS_STRING(columns[1])
    cdef int32_t* table_depth = <int32_t*>PyByteArray_AS_STRING(columns[2])
    cdef int32_t* table_end = <int32_t*>PyByteArray_AS_STRING(columns[3])
    cdef int32_t* tags = <int32_t*>PyByteArray_AS_STRING(columns[4])
    cdef int32_t* link_tags = <int32_t*>PyByteArray_AS_STRING(columns[5])
    cdef bytearray is_link_out = _zeros(m), in_link_out = _zeros(m)
    cdef uint8_t* is_link = <uint8_t*>PyByteArray_AS_STRING(is_link_out)
    cdef uint8_t* in_link = <uint8_t*>PyByteArray_AS_STRING(in_link_out)
    for i in range(body, end[body]):
        if keep[i]:
            k = before[i]
            element[k] = i
            table_parent[k] = before[parent[i]] if parent[i] >= body else -1
            table_depth[k] = depth[i] - depth[body]
            table_end[k] = before[end[i]]
            is_link[k] = link[i] != 0
    # Links below the first node (the walk starts outside any link); descendants counted
    # from the ends, descendant links by running counts of the links at each end.
    cdef int64_t* links_before = <int64_t*>PyMem_Malloc((m + 1) * sizeof(int64_t))
    if links_before == NULL:
        raise MemoryError()
    links_before[0] = 0
    for k in range(m):
        links_before[k + 1] = links_before[k] + is_link[k]
    reach = 0
    for k in range(m):
        if k > 0 and is_link[k] and table_end[k] > reach:
            reach = table_end[k]
        in_link[k] = reach > k
        tags[k] = table_end[k] - k - 1
        link_tags[k] = links_before[table_end[k]] - links_before[k + 1]
    PyMem_Free(links_before)
    return (keep_out, before_out, *columns, is_link_out, in_link_out)


def body_events(
    const int32_t[::1] nodes, const int8_t[::1] kinds, const int32_t[::1] pieces, list texts,
    const int64_t[::1] before, const uint8_t[::1] in_link,
):
    """The events (per event its element, -1 for none, kind and piece of ``texts``) whose
    element a node table keeps (``before``, :func:`kept_elements`'s; ``in_link`` per node
    of the table), as :func:`~scrapy_tagratio.document._body_events` gives them, as
    bytes: per such event its kind (int8s), its node and piece (int32s); per run of
    ``texts`` and one more, its collapsed length (:func:`piece_lengths`) where such an
    event holds it, else 0 (int64s); per node, the collapsed characters of its own text
    and of those in a link (int32s, as the table holds them: a run or a node of 2**31
    characters is beyond any page). Elements, their nodes and a text event's piece are
    checked."""
    cdef Py_ssize_t events = nodes.shape[0], n = before.shape[0] - 1, count = len(texts)
    cdef Py_ssize_t e, node, owner, piece, kept = 0
    cdef int32_t length
    if kinds.shape[0] != events or pieces.shape[0] != events:
        raise ValueError("one kind and piece per event")
    if n < 0 or in_link.shape[0] != before[n]:
        raise ValueError("one link flag per kept element")
    cdef Py_ssize_t m = in_link.shape[0]
    cdef bytearray kinds_out = _zeros(events), owners_out = _zeros(events * sizeof(int32_t))
    cdef bytearray pieces_out = _zeros(events * sizeof(int32_t))
    cdef bytearray lengths_out = _zeros((count + 1) * sizeof(int64_t))
    cdef bytearray own_out = _zeros(m * sizeof(int32_t)), own_link_out = _zeros(m * sizeof(int32_t))
    cdef int8_t* kept_kinds = <int8_t*>PyByteArray_AS_STRING(kinds_out)
    cdef int32_t* owners = <int32_t*>PyByteArray_AS_STRING(owners_out)
    cdef int32_t* kept_pieces = <int32_t*>PyByteArray_AS_STRING(pieces_out)
    cdef int64_t* lengths = <int64_t*>PyByteArray_AS_STRING(lengths_out)
    cdef int32_t* own = <int32_t*>PyByteArray_AS_STRING(own_out)
    cdef int32_t* own_link = <int32_t*>PyByteArray_AS_STRING(own_link_out)
    for e in range(events):
        node = nodes[e]
        if node < -1 or node >= n:
            raise IndexError(f"event {e}: element {node} is not one of the {n} elements")
        if node < 0 or before[node + 1] == before[node]:
            continue
        owner = before[node]
        if owner < 0 or owner >= m:
            raise ValueError(f"event {e}: node {owner} is not one of the {m} kept elements")
        kept_kinds[kept] = kinds[e]
        owners[kept] = owner
        kept_pieces[kept] = pieces[e]
        kept += 1
        if kinds[e] == EVENT_TEXT:
            piece = pieces[e]
            if piece < 0 or piece >= count:
                raise IndexError(f"piece {piece} is not one of the {count} runs of text")
            length = <int32_t>_collapsed_length(<str>texts[piece])
            lengths[piece] = length
            own[owner] += length
            if in_link[owner]:
                own_link[owner] += length
    PyByteArray_Resize(kinds_out, kept)
    PyByteArray_Resize(owners_out, kept * sizeof(int32_t))
    PyByteArray_Resize(pieces_out, kept * sizeof(int32_t))
    return kinds_out, owners_out, pieces_out, lengths_out, own_out, own_link_out


def text_lines(list texts, const int32_t[::1] pieces):
    """The text of the runs ``texts[p]`` for ``p`` in ``pieces`` (-1: a line break),
    as :meth:`~scrapy_tagratio.document.Document.text_of` gives it: each line's words
    (``str.split``'s white space is ``Py_UNICODE_ISSPACE``) joined by one space, lines
    without a word left out, the others joined by newlines; built in two passes (the
    size and widest character, then the characters), so the string is made once, in
    its final width."""
    cdef Py_UCS4 widest = 0
    cdef Py_ssize_t length = _lines(texts, pieces, 0, NULL, &widest)
    cdef str out = PyUnicode_New(length, widest)
    _lines(texts, pieces, PyUnicode_KIND(out), PyUnicode_DATA(out), &widest)
    return out


def span_texts(
    list texts, const int32_t[::1] pieces, const int64_t[::1] starts, const int64_t[::1] stops
):
    """Per span ``[starts[k], stops[k])`` of ``pieces`` (indices into ``texts``; all
    checked), its runs of text joined with their white space collapsed:
    ``" ".join("".join([texts[p] for p in pieces[starts[k]:stops[k]]]).split())``
    (``str.split``'s white space is ``Py_UNICODE_ISSPACE``), what
    :meth:`~scrapy_tagratio.document.Document.block_texts` gives per layout block: the
    joined text collapsed by :func:`_collapse_into` into a buffer, made a string of its
    widest character (white space of a wider kind may be gone), and no list of words;
    a text that is already collapsed is returned as it is."""
    cdef Py_ssize_t spans = starts.shape[0], count = len(texts), k, i, length, size = 0
    _check_spans(pieces, starts, stops, count)
    cdef list out = [None] * spans
    cdef str text
    cdef int kind
    cdef void* buffer = NULL
    try:
        for k in range(spans):
            if stops[k] - starts[k] == 1:
                text = <str?>texts[pieces[starts[k]]]
            else:
                text = "".join([texts[pieces[i]] for i in range(starts[k], stops[k])])
            kind = PyUnicode_KIND(text)
            if PyUnicode_GET_LENGTH(text) * kind > size:
                size = PyUnicode_GET_LENGTH(text) * kind
                PyMem_Free(buffer)
                buffer = PyMem_Malloc(size)
                if buffer is NULL:
                    raise MemoryError()
            length = _collapse_into(text, buffer)
            if length < PyUnicode_GET_LENGTH(text) or memcmp(
                buffer, PyUnicode_DATA(text), length * kind
            ):
                text = PyUnicode_FromKindAndData(kind, buffer, length)
            out[k] = text
    finally:
        PyMem_Free(buffer)
    return out


def ends_in(
    list texts,
    const int32_t[::1] pieces,
    const int64_t[::1] starts,
    const int64_t[::1] stops,
    str ends,
    str closing,
):
    """Per span ``[starts[k], stops[k])`` of ``pieces`` (indices into ``texts``; all
    checked), whether its last run that is not blank (white space alone,
    ``Py_UNICODE_ISSPACE`` as ``str.rstrip``'s) ends with one of the characters of
    ``ends`` once its trailing white space and characters of ``closing`` are stripped,
    in any order (French sets a space before a closing guillemet: "feu. \u00bb" ends
    with "."; False for a span of blank runs only, and for a last run of closing
    characters alone), as bytes of 0 and 1. One loop back from each span's end: no text
    is built or stripped."""
    cdef Py_ssize_t spans = starts.shape[0], count = len(texts), k, i, at
    cdef str text
    cdef int kind
    cdef void* data
    _check_spans(pieces, starts, stops, count)
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, spans)
    cdef char* found = PyByteArray_AS_STRING(out)
    for k in range(spans):
        found[k] = False
        for i in range(stops[k] - 1, starts[k] - 1, -1):
            text = <str>texts[pieces[i]]
            kind, data = PyUnicode_KIND(text), PyUnicode_DATA(text)
            at = PyUnicode_GET_LENGTH(text) - 1
            while at >= 0 and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at)):
                at -= 1
            if at < 0:  # a blank run: the block's end is in a run before it
                continue
            while at >= 0 and (
                _holds(closing, PyUnicode_READ(kind, data, at))
                or Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at))
            ):
                at -= 1
            found[k] = at >= 0 and _holds(ends, PyUnicode_READ(kind, data, at))
            break
    return out


cdef inline bint _holds(str characters, Py_UCS4 character) noexcept:
    """``character`` is one of ``characters`` (a short string: scanned)."""
    cdef int kind = PyUnicode_KIND(characters)
    cdef void* data = PyUnicode_DATA(characters)
    cdef Py_ssize_t i
    for i in range(PyUnicode_GET_LENGTH(characters)):
        if PyUnicode_READ(kind, data, i) == character:
            return True
    return False


def runs_by_block(
    const int8_t[::1] kinds,
    const int32_t[::1] owners,
    const int32_t[::1] piece,
    const int64_t[::1] block,
):
    """The runs of text of the text events (``kinds``, ``owners``, ``piece``) in the
    order of their owner's block (``block``, per node; within a block, document order),
    and per node where its block's runs start among them (one more at the end: node
    ``k``'s are ``[bounds[k], bounds[k + 1])``); as the bytes of int64 (the bounds) and
    of int32 (the runs). A counting sort, two passes over the events: numpy's stable
    argsort of the blocks and a search per block give the same. Every index read is
    checked."""
    cdef Py_ssize_t n = block.shape[0], events = kinds.shape[0], e, owner, node
    if owners.shape[0] != events or piece.shape[0] != events:
        raise ValueError("one owner and one piece per event")
    cdef bytearray bounded = _zeros((n + 1) * sizeof(int64_t))
    cdef int64_t* bounds = <int64_t*>PyByteArray_AS_STRING(bounded)
    for e in range(events):
        if kinds[e] != EVENT_TEXT:
            continue
        owner = owners[e]
        if owner < 0 or owner >= n:
            raise IndexError(f"event {e}: owner {owner} outside the table of {n} nodes")
        node = block[owner]
        if node < 0 or node >= n:
            raise IndexError(f"node {owner}: block {node} outside the table of {n} nodes")
        bounds[node + 1] += 1
    for node in range(n):
        bounds[node + 1] += bounds[node]
    cdef bytearray ordered = PyByteArray_FromStringAndSize(NULL, bounds[n] * sizeof(int32_t))
    cdef int32_t* runs = <int32_t*>PyByteArray_AS_STRING(ordered)
    cdef int64_t* filled = <int64_t*>PyMem_Malloc((n + 1) * sizeof(int64_t))
    if filled == NULL:
        raise MemoryError()
    memcpy(filled, bounds, (n + 1) * sizeof(int64_t))
    for e in range(events):
        if kinds[e] == EVENT_TEXT:
            node = block[owners[e]]
            runs[filled[node]] = piece[e]
            filled[node] += 1
    PyMem_Free(filled)
    return bounded, ordered


def block_pieces(
    const int8_t[::1] kinds,
    const int32_t[::1] owners,
    const int32_t[::1] piece,
    list texts,
    const int64_t[::1] block,
    const int32_t[::1] end,
    const int64_t[::1] blocks,
):
    """Per node of ``blocks``, the runs of text its block owns, in document order: the
    text events (``kinds``, ``owners``, ``piece`` into ``texts``) whose owner's block
    (``block``, per node) is that node, read from its subtree's events only: from its
    opening to the opening of the first node after its subtree (``end``), node ``k``
    opening at the ``k``-th opening event (every node opens once, in document order).
    The openings are found by one scan of the kinds up to the last one needed, not of
    all the page's events: what :meth:`~scrapy_tagratio.document.Document.few_block_texts`
    joins. Every index read is checked."""
    cdef Py_ssize_t n = block.shape[0], events = kinds.shape[0], count = len(texts)
    cdef Py_ssize_t k, e, first, stop, owner, node, at, last = -1, seen = 0
    if end.shape[0] != n:
        raise ValueError("one block and one end per node")
    if owners.shape[0] != events or piece.shape[0] != events:
        raise ValueError("one owner and one piece per event")
    for k in range(blocks.shape[0]):
        node = blocks[k]
        if node < 0 or node >= n or end[node] <= node or end[node] > n:
            raise IndexError(f"block {node} outside the table of {n} nodes")
        last = max(last, end[node])
    # Per node up to the last one needed, its opening event; the count of events after
    # the last node (a subtree reaching the table's end runs to the last event).
    cdef int64_t* opens = <int64_t*>PyMem_Malloc((last + 2) * sizeof(int64_t))
    if opens == NULL:
        raise MemoryError()
    cdef list found = [], pieces
    try:
        for e in range(events):
            if seen > last:
                break
            if kinds[e] == EVENT_OPEN:
                opens[seen] = e
                seen += 1
        if seen < min(last + 1, n):
            raise ValueError(f"{seen} openings for {n} nodes")
        if last == n:
            opens[n] = events
        for k in range(blocks.shape[0]):
            node = blocks[k]
            first, stop = opens[node], opens[end[node]]
            pieces = []
            for e in range(first, stop):
                if kinds[e] != EVENT_TEXT:
                    continue
                owner = owners[e]
                if owner < 0 or owner >= n:
                    raise IndexError(f"event {e}: owner {owner} outside the table")
                if block[owner] != node:
                    continue
                at = piece[e]
                if at < 0 or at >= count:
                    raise IndexError(f"event {e}: piece {at} outside the {count} texts")
                pieces.append(texts[at])
            found.append(pieces)
    finally:
        PyMem_Free(opens)
    return found


cdef str _markup_text(str text):
    """A run of text as the cleaned HTML writes it: each stretch of white space
    (``Py_UNICODE_ISSPACE``, as ``str.split``) one space, at its ends too, and ``&``,
    ``<`` and ``>`` escaped: ``html.escape(quote=False)`` of what
    :func:`~scrapy_tagratio.document._collapse_pieces` gives. A run without either is
    returned as it is."""
    cdef Py_ssize_t length = 0, at = 0
    cdef str markup, entity
    cdef bint space = False, changed = False
    cdef Py_UCS4 ch, widest = 0, part
    cdef unsigned int kind
    cdef void* data
    for ch in text:  # the size, the widest character, and whether anything changes
        if Py_UNICODE_ISSPACE(ch):
            changed |= space or ch != 32
            if not space:
                length += 1
            space = True
            continue
        space = False
        if ch == 38:  # &amp;
            length += 5
            changed = True
        elif ch == 60 or ch == 62:  # &lt; &gt;
            length += 4
            changed = True
        else:
            length += 1
            if ch > widest:
                widest = ch
    if not changed:
        return text
    # The escapes and the space are ASCII: the widest other character decides the width.
    markup = PyUnicode_New(length, widest if widest > 32 else 32)
    kind, data = PyUnicode_KIND(markup), PyUnicode_DATA(markup)
    space = False
    for ch in text:
        if Py_UNICODE_ISSPACE(ch):
            if not space:
                PyUnicode_WRITE(kind, data, at, 32)
                at += 1
            space = True
            continue
        space = False
        if ch == 38 or ch == 60 or ch == 62:
            entity = "&amp;" if ch == 38 else "&lt;" if ch == 60 else "&gt;"
            for part in entity:
                PyUnicode_WRITE(kind, data, at, part)
                at += 1
        else:
            PyUnicode_WRITE(kind, data, at, ch)
            at += 1
    return markup


def event_markup(
    const int8_t[::1] kinds,
    const int32_t[::1] nodes,
    const int32_t[::1] pieces,
    list texts,
    const int32_t[::1] elements,
    tuple tags,
    dict attributes,
    object attribute_markup,
    frozenset void,
):
    """The cleaned HTML of a run of events (``kinds``, and of each its node ``nodes`` and
    its run of text ``pieces``), as :meth:`~scrapy_tagratio.document.Document._markup`
    writes it: a text event's run ``texts[piece]``, white space collapsed and escaped
    (:func:`_markup_text`), a start tag ``<tag>`` (``tags[node]``) with the markup of its
    element's kept attributes (``attribute_markup(values)`` where ``attributes`` has
    ``elements[node]``), an end tag ``</tag>`` unless the tag is in ``void``; joined. Runs
    within ``texts`` and nodes within ``tags`` and ``elements`` (checked)."""
    cdef Py_ssize_t n = kinds.shape[0], i, node, piece
    cdef Py_ssize_t count = min(len(tags), elements.shape[0])
    cdef list parts = []
    cdef object tag, values
    if nodes.shape[0] != n or pieces.shape[0] != n:
        raise ValueError("one node and one run per event")
    for i in range(n):
        if kinds[i] == EVENT_TEXT:
            piece = pieces[i]
            if piece < 0 or piece >= len(texts):
                raise IndexError(f"run {piece} is not one of the {len(texts)} runs")
            parts.append(_markup_text(<str?>texts[piece]))
            continue
        node = nodes[i]
        if node < 0 or node >= count:
            raise IndexError(f"node {node} is not one of the {count} nodes")
        tag = <object>PyTuple_GET_ITEM(tags, node)
        if kinds[i] == EVENT_OPEN:
            parts.append("<")
            parts.append(tag)
            values = attributes.get(elements[node])
            if values is not None:
                parts.append(attribute_markup(values))
            parts.append(">")
        elif kinds[i] != EVENT_CLOSE:
            raise ValueError(f"event {i} is of no kind")
        elif tag not in void:
            parts.append("</")
            parts.append(tag)
            parts.append(">")
    return "".join(parts)


def tree_sums(
    const double[:, ::1] x,
    const Py_ssize_t[::1] feature,
    const double[::1] threshold,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const double[::1] value,
    const Py_ssize_t[::1] roots,
    int depth,
    double[::1] out,
):
    """Per row of ``x``, the sum of the leaf values of boosted trees (the flat node
    arrays of :class:`~scrapy_tagratio.algorithms.trees.BoostedTrees`, one root per
    tree in ``roots``) into ``out``: each row walks ``depth`` steps down each tree (left
    when its feature value is at most the node's threshold) and the leaves are added in
    tree order, the walk and the order of numpy's evaluation, so the sums are the same
    floats. A row's trees are walked together, a step of every tree at a time, each
    choosing its child without a branch: a step waits on the loads of the one before,
    and the walks of the other trees, independent of it, keep the processor busy
    meanwhile (one tree at a time, with a branch per step, took half as long again)."""
    cdef Py_ssize_t row, tree, step, trees = roots.shape[0], node, goes_right
    cdef double total
    cdef const double* values
    if x.shape[0] == 0 or trees == 0:
        return
    cdef Py_ssize_t* nodes = <Py_ssize_t*>PyMem_Malloc(trees * sizeof(Py_ssize_t))
    if nodes == NULL:
        raise MemoryError()
    try:
        for row in range(x.shape[0]):
            values = &x[row, 0]
            memcpy(nodes, &roots[0], trees * sizeof(Py_ssize_t))
            for step in range(depth):
                for tree in range(trees):
                    node = nodes[tree]
                    # Right unless at most the threshold (NaN goes right, as in numpy's walk).
                    goes_right = not (values[feature[node]] <= threshold[node])
                    nodes[tree] = left[node] + goes_right * (right[node] - left[node])
            total = value[nodes[0]]
            for tree in range(1, trees):
                total += value[nodes[tree]]
            out[row] = total
    finally:
        PyMem_Free(nodes)

cdef struct _Automaton:
    # langid's byte automaton (automaton_piece_counts' tables) as raw pointers, with their sizes.
    const uint32_t* nextmove
    Py_ssize_t moves
    const int64_t* rowbase
    const int32_t* output
    Py_ssize_t states


cdef enum:
    #: Walks of automaton_piece_counts in flight at once, and the fewest bytes each walks per
    #: byte of its warm-up (shorter texts are walked in fewer pieces, or in one).
    _WALKS = 16
    _BYTES_PER_WARM_UP_BYTE = 4


cdef inline bint _move(const _Automaton* automaton, int64_t* state, uint8_t byte) noexcept nogil:
    """One step of the automaton from ``state[0]`` over ``byte``: False, the state kept,
    when the move or the state it leads to is outside the tables."""
    cdef int64_t at = automaton.rowbase[state[0]] + byte
    cdef uint32_t next_state
    if at < 0 or at >= automaton.moves:
        return False
    next_state = automaton.nextmove[at]
    if next_state >= automaton.states:
        return False
    state[0] = next_state
    return True


cdef Py_ssize_t _walk(
    const _Automaton* automaton, const uint8_t* data, Py_ssize_t begin, Py_ssize_t end,
    int64_t* state, int32_t* outputs,
) noexcept nogil:
    """Walk ``data[begin:end]`` one byte after another from ``state[0]``, each byte's
    output (its state's feature, or a negative number) in ``outputs``; ``end``, or the
    first byte whose move is outside the tables (``state[0]`` the state before it)."""
    cdef Py_ssize_t i
    for i in range(begin, end):
        if not _move(automaton, state, data[i]):
            return i
        outputs[i] = automaton.output[state[0]]
    return end


cdef Py_ssize_t _walk_in_pieces(
    const _Automaton* automaton, const uint8_t* data, Py_ssize_t n, Py_ssize_t warm_up,
    int32_t* outputs,
) noexcept nogil:
    """What :func:`_walk` from state 0 over ``data[:n]`` gives, walked as up to
    ``_WALKS`` pieces side by side: each step of the walk waits on a cache miss in the
    automaton's table, and walks independent of each other keep several misses in
    flight. A piece starts from state 0 ``warm_up`` bytes before its first byte (the
    automaton's state depends on the last bytes read only, as many as its longest
    feature); a piece whose state on reaching its first byte is not the one the piece
    before ended in (or that met a move outside the tables) is walked again from that
    state, so the outputs are the one walk's in every case. ``n``, or the first byte whose
    move is outside the tables."""
    cdef Py_ssize_t pieces = 1, length, step, piece, i, at
    cdef Py_ssize_t begin[_WALKS + 1]
    cdef int64_t state[_WALKS]
    cdef int64_t arrived[_WALKS]  # each piece's state on reaching its first byte
    cdef bint walking[_WALKS]  # no move outside the tables met yet
    cdef int64_t before = 0
    if warm_up > 0:
        pieces = min(<Py_ssize_t>_WALKS, n // (warm_up * _BYTES_PER_WARM_UP_BYTE))
    if pieces < 2:
        return _walk(automaton, data, 0, n, &before, outputs)
    length = n // pieces
    for piece in range(pieces):
        begin[piece] = piece * length
        state[piece] = 0
        walking[piece] = True
    begin[pieces] = n
    for step in range(warm_up):  # piece 0 starts where the walk does, in its state
        for piece in range(1, pieces):
            if walking[piece]:
                walking[piece] = _move(automaton, &state[piece], data[begin[piece] - warm_up + step])
    for piece in range(pieces):
        arrived[piece] = state[piece]
    for step in range(length):
        for piece in range(pieces):
            if walking[piece]:
                i = begin[piece] + step
                walking[piece] = _move(automaton, &state[piece], data[i])
                outputs[i] = automaton.output[state[piece]]
    for piece in range(pieces):
        if walking[piece]:  # the last piece's remainder, each piece ending in its state
            walking[piece] = _walk(
                automaton, data, begin[piece] + length, begin[piece + 1], &state[piece], outputs
            ) == begin[piece + 1]
        if not walking[piece] or arrived[piece] != before:
            state[piece] = before
            at = _walk(automaton, data, begin[piece], begin[piece + 1], &state[piece], outputs)
            if at < begin[piece + 1]:
                return at
        before = state[piece]
    return n


def automaton_piece_counts(
    const uint32_t[::1] nextmove,
    const int64_t[::1] rowbase,
    const int32_t[::1] output,
    const uint8_t[::1] data,
    int32_t[::1] scratch,
    Py_ssize_t warm_up=0,
):
    """The features a byte automaton outputs over ``data`` and how often: what langid's
    feature extraction counts (Lui and Baldwin 2012; py3langid's ``visit_counts``), from
    state 0, ``state = nextmove[rowbase[state] + byte]`` per byte, and the state's feature
    ``output[state]`` counted when it is not negative. As (the bytes of the features as
    ``intp``, the bytes of their counts as ``float32``), features in the order they are
    first met, the order of py3langid's ``Counter``, so the scores summed over them are
    the same floats. With ``warm_up`` (the automaton's longest feature, in bytes), the
    walk runs in pieces side by side (:func:`_walk_in_pieces`), with the same outputs.
    A state, row or feature out of range is a ValueError; ``scratch`` (one zero per
    feature) holds the counts and is zero again on return: the GIL, held throughout, keeps
    threads from sharing it at once."""
    cdef Py_ssize_t n = data.shape[0], i, walked, states = output.shape[0]
    cdef int32_t feature
    cdef _Ints order = _Ints()
    cdef str problem = None  # raised once scratch is zero again
    cdef _Automaton automaton
    cdef int32_t* outputs
    if rowbase.shape[0] != states or states == 0:
        raise ValueError("one row and one output per state")
    if warm_up < 0:
        raise ValueError("a warm-up of no bytes or more")
    if n == 0:
        return bytearray(), bytearray()
    automaton.nextmove, automaton.moves = &nextmove[0], nextmove.shape[0]
    automaton.rowbase, automaton.output, automaton.states = &rowbase[0], &output[0], states
    outputs = <int32_t*>PyMem_Malloc(n * sizeof(int32_t))
    if outputs == NULL:
        raise MemoryError()
    try:
        walked = _walk_in_pieces(&automaton, &data[0], n, warm_up, outputs)
        for i in range(walked):  # counted in the order of the bytes, as one walk counts
            feature = outputs[i]
            if feature >= scratch.shape[0]:
                problem = f"feature {feature} outside the counts"
                break
            if feature >= 0:
                if scratch[feature] == 0:
                    order.append(feature)
                scratch[feature] += 1
        if problem is None and walked < n:
            problem = f"byte {walked}: a move outside the table"
    finally:
        PyMem_Free(outputs)
    cdef bytearray features = PyByteArray_FromStringAndSize(NULL, order.size * sizeof(Py_ssize_t))
    cdef bytearray counts = PyByteArray_FromStringAndSize(NULL, order.size * sizeof(float))
    cdef Py_ssize_t* feature_out = <Py_ssize_t*>PyByteArray_AS_STRING(features)
    cdef float* count_out = <float*>PyByteArray_AS_STRING(counts)
    for i in range(order.size):
        feature = order.data[i]
        feature_out[i] = feature
        count_out[i] = <float>scratch[feature]
        scratch[feature] = 0
    if problem is not None:
        raise ValueError(problem)
    return features, counts



cdef extern from *:
    """
    /* The bits of the single-precision floats that the half-precision floats ``half``
       are (half_singles): each of the three cases computed and one chosen by masks, with no
       branch and no aliasing between the two arrays, so the compiler converts several at
       a time. */
    static void tagratio_half_to_single(const uint16_t *restrict half, uint32_t *restrict single,
                                        Py_ssize_t count) {
        for (Py_ssize_t i = 0; i < count; i++) {
            uint32_t sign = ((uint32_t)half[i] & 0x8000u) << 16, magnitude = half[i] & 0x7fffu;
            /* Normal: the exponent rebased from 15 to 127. */
            uint32_t normal = (magnitude << 13) + 0x38000000u;
            /* Infinity, or NaN with its payload. */
            uint32_t special = 0x7f800000u | ((magnitude & 0x3ffu) << 13);
            /* Zero or subnormal: magnitude * 2**-24, a normal single (or zero). */
            float small = (float)(int32_t)magnitude * 5.9604644775390625e-08f;
            uint32_t tiny;
            memcpy(&tiny, &small, sizeof tiny);
            uint32_t is_tiny = -(uint32_t)(magnitude < 0x0400u);
            uint32_t is_special = -(uint32_t)(magnitude >= 0x7c00u);
            uint32_t large = (special & is_special) | (normal & ~is_special);
            single[i] = sign | (tiny & is_tiny) | (large & ~is_tiny);
        }
    }
    """
    void tagratio_half_to_single(const uint16_t* half, uint32_t* single, Py_ssize_t count) noexcept nogil


def half_singles(const uint16_t[::1] half):
    """The single-precision floats that the IEEE half-precision floats ``half`` (their
    bits) are, as the bytes of ``half.view(float16).astype(float32)`` (every half is
    exactly a single, so any exact conversion gives numpy's floats; numpy converts
    element by element, which was half of the language detector's scoring)."""
    cdef Py_ssize_t count = half.shape[0]
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, count * sizeof(uint32_t))
    if count:
        tagratio_half_to_single(&half[0], <uint32_t*>PyByteArray_AS_STRING(out), count)
    return out

# ----------------------------------------------------------------------------- lexbor
# The walk over lexbor's tree (selectolax's parser, :mod:`scrapy_tagratio.lexbor_reader`).
# selectolax ships no lexbor headers: the node structs below are lexbor's (``dom/interfaces/
# node.h`` and ``character_data.h`` of lexbor 2 and 3), used only to step from node to node
# and read text; names and attributes come through lexbor's exported functions, found in
# selectolax's module at run time (:func:`bind_lexbor`). The Python side checks the walk
# against selectolax's own API on a probe page before using it (a changed layout fails).
cdef extern from *:
    """
    typedef struct tr_lxb_node tr_lxb_node_t;
    struct tr_lxb_node {
        void *events;
        uintptr_t local_name;
        uintptr_t prefix;
        uintptr_t ns;
        void *owner_document;
        tr_lxb_node_t *next;
        tr_lxb_node_t *prev;
        tr_lxb_node_t *parent;
        tr_lxb_node_t *first_child;
        tr_lxb_node_t *last_child;
        void *user;
        int type;
    };
    typedef struct {
        tr_lxb_node_t node;
        unsigned char *data;
        size_t length;
    } tr_lxb_character_data_t;
    typedef const unsigned char *(*tr_lxb_name_f)(void *, size_t *);
    typedef void *(*tr_lxb_step_f)(void *);
    """
    ctypedef struct tr_lxb_node_t:
        uintptr_t local_name
        tr_lxb_node_t* next
        tr_lxb_node_t* parent
        tr_lxb_node_t* first_child
        int type
    ctypedef struct tr_lxb_character_data_t:
        unsigned char* data
        size_t length
    ctypedef const unsigned char* (*tr_lxb_name_f)(void*, size_t*)
    ctypedef void* (*tr_lxb_step_f)(void*)

cdef extern from *:
    """
    #ifndef TAGRATIO_SELECTOLAX_VERSION
    #define TAGRATIO_SELECTOLAX_VERSION ""
    #endif
    """
    const char* TAGRATIO_SELECTOLAX_VERSION

#: The selectolax (and so the lexbor it bundles) this module was built beside, "" if
#: selectolax was not there: the walk is used only with that version (and a probe page).
SELECTOLAX_BUILT_AGAINST = (<bytes>TAGRATIO_SELECTOLAX_VERSION).decode("ascii")

cdef extern from "<dlfcn.h>":
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

cdef enum:
    LXB_ELEMENT = 1
    LXB_TEXT = 3
    LXB_CDATA = 4

cdef tr_lxb_name_f _element_name = NULL  # lxb_dom_element_qualified_name
cdef tr_lxb_name_f _attr_name = NULL  # lxb_dom_attr_qualified_name
cdef tr_lxb_name_f _attr_value = NULL  # lxb_dom_attr_value_noi
cdef tr_lxb_step_f _first_attr = NULL  # lxb_dom_element_first_attribute_noi
cdef tr_lxb_step_f _next_attr = NULL  # lxb_dom_element_next_attribute_noi


cdef bint _find_symbols(bytes path, tuple names, void** found) except -1:
    """Find the functions ``names`` (bytes) in the loaded module ``path`` (not loaded: not
    found), into ``found``; whether all were."""
    cdef void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD)
    cdef Py_ssize_t i
    if handle is NULL:
        return False
    for i in range(len(names)):
        found[i] = dlsym(handle, <bytes>names[i])
        if found[i] is NULL:
            return False
    return True


def bind_lexbor(bytes path):
    """Find lexbor's functions in selectolax's loaded module ``path``; whether all were
    (if not, what was found before is kept)."""
    global _element_name, _attr_name, _attr_value, _first_attr, _next_attr
    cdef void* found[5]
    if not _find_symbols(path, (
        b"lxb_dom_element_qualified_name", b"lxb_dom_attr_qualified_name",
        b"lxb_dom_attr_value_noi", b"lxb_dom_element_first_attribute_noi",
        b"lxb_dom_element_next_attribute_noi",
    ), found):
        return False
    _element_name = <tr_lxb_name_f>found[0]
    _attr_name = <tr_lxb_name_f>found[1]
    _attr_value = <tr_lxb_name_f>found[2]
    _first_attr = <tr_lxb_step_f>found[3]
    _next_attr = <tr_lxb_step_f>found[4]
    return True


cdef inline str _lxb_text(const unsigned char* data, size_t length):
    return PyUnicode_DecodeUTF8(<const char*>data, length, NULL) if data is not NULL else ""


cdef inline str _lxb_value(void* attr):
    cdef size_t length = 0
    cdef const unsigned char* data = _attr_value(attr, &length)
    return _lxb_text(data, length)


def walk_lexbor(
    size_t root_address, recorder, tag_names, signal_attributes, signal_elements,
    int batch, bint skip_tbody,
):
    """Record lexbor's tree from its ``html`` element (at ``root_address``, selectolax's
    ``mem_id``; the parser holding it must stay alive) into ``recorder``, as ``walk`` does
    for libxml2's tree: tags, events, texts, hints and links here, the signals by
    ``recorder.read_signals``, the shape in ``recorder.shape``. With ``skip_tbody`` a
    ``tbody`` without attributes is left out (its children read as the table's); so is
    an empty ``head`` without attributes (lexbor makes one where libxml2 does not)."""
    cdef tr_lxb_node_t* node = <tr_lxb_node_t*>root_address
    cdef tr_lxb_character_data_t* text_node
    cdef void* attr
    cdef _Events out = _Events(recorder, signal_attributes, signal_elements, batch)
    cdef const unsigned char* raw
    cdef size_t length
    cdef dict attrib
    cdef Py_ssize_t index
    cdef int code, tag, flags
    cdef _Ints recorded = _Ints()  # per level of the walk: 1 if its element has events
    cdef str key

    while node is not NULL:
        out.reserve()
        if node.type == LXB_ELEMENT:
            tag = out.tag_codes.get(<void*>node.local_name)
            if tag < 0:
                raw = _element_name(<void*>node, &length)
                tag = out.new_tag(tag_names[_lxb_text(raw, length)])
                out.tag_codes.put(<void*>node.local_name, tag)
            flags = out.tag_flags.data[tag]
            attr = _first_attr(<void*>node)
            if attr is NULL and (
                (skip_tbody and flags & TAG_TBODY) or (flags & TAG_HEAD and node.first_child is NULL)
            ):
                if node.first_child is not NULL:  # its children: read as the table's
                    recorded.append(0)
                    node = node.first_child
                    continue
            else:
                index = out.open(tag)
                if attr is not NULL:
                    out.start_attributes()
                    while attr is not NULL:
                        raw = _attr_name(attr, &length)
                        code = out.attribute_codes.get(<const void*>raw)
                        if code < 0:
                            code = out.new_attribute(_lxb_text(raw, length))
                            out.attribute_codes.put(<const void*>raw, code)
                        if code == SIGNAL:
                            out.signal = True
                        elif code == STYLE:
                            out.style(_lxb_value(attr))
                        elif CLASS <= code <= ITEMPROP:
                            if out.parts[code - CLASS] is NULL:  # the first of duplicates
                                raw = _attr_value(attr, &out.lengths[code - CLASS])
                                if raw is NULL:
                                    raw = <const unsigned char*>""
                                out.parts[code - CLASS] = <const char*>raw
                            out.hint_part(code)
                        elif code != OTHER:
                            out.link(code, _lxb_value(attr))
                        attr = _next_attr(attr)
                    attrib = None
                    if out.end_attributes(index, None, tag):
                        attrib = {}
                        attr = _first_attr(<void*>node)
                        while attr is not NULL:
                            raw = _attr_name(attr, &length)
                            key = _lxb_text(raw, length)
                            if key not in attrib:
                                attrib[key] = _lxb_value(attr)
                            attr = _next_attr(attr)
                    out.signals(index, attrib)
                if node.first_child is not NULL:
                    out.stack.append(index)
                    recorded.append(1)
                    node = node.first_child
                    continue
                out.close_empty(index)
        elif node.type == LXB_TEXT or node.type == LXB_CDATA:
            text_node = <tr_lxb_character_data_t*>node
            if not out.in_code and text_node.length:
                out.text(_lxb_text(text_node.data, text_node.length))
        # Next in document order: the next sibling, else close the ancestors without one.
        while node.next is NULL and recorded.size:
            node = node.parent
            recorded.size -= 1
            if recorded.data[recorded.size]:
                out.close()
        if not recorded.size:  # back at the root: its siblings are not the page's
            break
        node = node.next
    out.finish(recorder)


cdef extern from "<string.h>":
    const void* memchr(const void* s, int c, size_t n)

cdef extern from *:
    """
    /* The tags whose start tag makes lexbor look down its stack of open elements (see
       lexbor_reader.scan_markup), lower case, by length. */
    static const char *tr_deep_tags[11] = {
        NULL, NULL, "ul ol dl ", "div nav ", "main menu form ", "aside ",
        "header footer figure center hgroup ", "section article details address ",
        "fieldset ", NULL, "blockquote "
    };
    static int tr_is_deep_tag(const unsigned char *name, size_t length) {
        const char *tag = length < 11 ? tr_deep_tags[length] : NULL;
        if (tag == NULL) return 0;
        for (; *tag; tag += length + 1)
            if (tag[0] == name[0] && memcmp(tag, name, length) == 0) return 1;
        return 0;
    }
    """
    bint tr_is_deep_tag(const unsigned char* name, size_t length)


def utf8_valid(const unsigned char[:] data):
    """Whether ``data`` is well-formed UTF-8 (Unicode's table 3-7: what
    ``data.decode("utf-8")`` accepts, no surrogates, no overlong forms, nothing above
    U+10FFFF), checked without building the text: eight ASCII bytes at a time, then byte
    by byte through each sequence."""
    cdef Py_ssize_t n = data.shape[0], at = 0
    cdef const unsigned char* base = &data[0] if n else NULL
    cdef uint64_t word
    cdef unsigned char lead, low, high
    cdef int follow
    while at < n:
        if at + 8 <= n:
            memcpy(&word, base + at, 8)
            if not (word & 0x8080808080808080ULL):
                at += 8
                continue
        lead = base[at]
        at += 1
        if lead < 0x80:
            continue
        # The range of the byte after the lead, and how many bytes follow it.
        low, high = 0x80, 0xBF
        if 0xC2 <= lead <= 0xDF:
            follow = 1
        elif 0xE0 <= lead <= 0xEF:
            follow = 2
            if lead == 0xE0:
                low = 0xA0
            elif lead == 0xED:
                high = 0x9F
        elif 0xF0 <= lead <= 0xF4:
            follow = 3
            if lead == 0xF0:
                low = 0x90
            elif lead == 0xF4:
                high = 0x8F
        else:
            return False
        if at + follow > n or not (low <= base[at] <= high):
            return False
        at += 1
        follow -= 1
        while follow:
            if not (0x80 <= base[at] <= 0xBF):
                return False
            at += 1
            follow -= 1
    return True


def scan_markup(const unsigned char[:] data, Py_ssize_t limit):
    """One ``memchr`` pass over the tags of the markup ``data``: whether lexbor should not
    read it (the block tags it is slow on nest deeper than ``limit``, start tags minus
    end tags in order, more than ``limit`` ``<option`` start tags, or a ``<frameset`` is
    there), whether a ``<tbody`` start tag is
    there, and where the last ``</html>`` ends (-1 without one). Names are compared in
    lower case."""
    cdef Py_ssize_t n = data.shape[0], at = 0, start, depth = 0, length, html_end = -1
    cdef Py_ssize_t options = 0
    cdef const unsigned char* base = &data[0] if n else NULL
    cdef const unsigned char* found
    cdef unsigned char name[12]
    cdef unsigned char ch
    cdef bint closing, deep = False, tbody = False
    while at < n:
        found = <const unsigned char*>memchr(base + at, 60, n - at)  # "<"
        if found is NULL:
            break
        at = found - base + 1
        closing = at < n and base[at] == 47  # "/"
        start = at + closing
        length = 0
        while start + length < n and length < 11:
            ch = base[start + length]
            if 65 <= ch <= 90:
                ch += 32
            if not (97 <= ch <= 122):
                break
            name[length] = ch
            length += 1
        if length < 2 or length == 11 or start + length >= n:
            continue
        ch = base[start + length]
        if not (ch == 62 or ch == 47 or ch == 32 or 9 <= ch <= 13):  # > / white space
            continue
        if tr_is_deep_tag(name, length):
            depth += -1 if closing else 1
            deep = deep or depth > limit
        elif length == 5 and not closing and memcmp(name, b"tbody", 5) == 0:
            tbody = True
        elif length == 6 and not closing and memcmp(name, b"option", 6) == 0:
            options += 1
            deep = deep or options > limit  # lexbor is quadratic in a select's options
        elif length == 8 and not closing and memcmp(name, b"frameset", 8) == 0:
            deep = True  # lexbor would drop the body (HTML5's frameset mode)
        elif length == 4 and closing and memcmp(name, b"html", 4) == 0:
            found = <const unsigned char*>memchr(base + start, 62, n - start)  # ">"
            if found is not NULL:
                html_end = found - base + 1
    return deep, tbody, html_end



def most_attributes(const unsigned char[:] data):
    """The most attributes any start tag of the markup ``data`` holds, as
    ``lexbor_reader._most_attributes`` counts them: a start tag is ``<`` and a letter, its
    name runs to white space, ``/`` or ``>``, and it ends at the first ``>`` outside
    quotes (a ``"`` or ``'`` quotes up to the next same quote), or with ``data``; its
    attributes are its runs of bytes other than white space after the name, quoted runs
    read as nothing. One ``memchr`` pass to the tags, a byte loop over each tag."""
    cdef Py_ssize_t n = data.shape[0], at = 0, count, most = 0
    cdef const unsigned char* base = &data[0] if n else NULL
    cdef const unsigned char* found
    cdef unsigned char ch
    cdef bint in_run
    while at < n:
        found = <const unsigned char*>memchr(base + at, 60, n - at)  # "<"
        if found is NULL:
            break
        at = found - base + 1
        if at >= n or not (97 <= (base[at] | 32) <= 122):  # a letter
            continue
        while at < n and not (base[at] == 32 or 9 <= base[at] <= 13 or base[at] == 47
                              or base[at] == 62):
            at += 1
        count = 0
        in_run = False
        while at < n and base[at] != 62:  # ">"
            ch = base[at]
            if ch == 34 or ch == 39:  # a quoted run, up to the same quote
                found = <const unsigned char*>memchr(base + at + 1, ch, n - at - 1)
                at = n if found is NULL else found - base + 1
                continue
            if ch == 32 or 9 <= ch <= 13:
                in_run = False
            elif not in_run:
                in_run = True
                count += 1
            at += 1
        most = max(most, count)
    return most

# ----------------------------------------------------------------------------- SAX driver
# The reader without a tree: the third driver of _Events, from the SAX callbacks of
# libxml2's HTML parser. lxml's wheels link libxml2 into its ``etree`` module and export its
# functions: they are found there at run time (:func:`bind_libxml2`), as lexbor's are in
# selectolax's module; ``htmlSAXHandler`` is from the libxml2 headers lxml ships. Only the
# element and text callbacks are set, so libxml2 builds no tree. The Python side checks this
# reader against :func:`walk` on a probe page before using it.
cdef extern from "libxml/HTMLparser.h":
    ctypedef void (*tr_start_f)(void* ctx, const unsigned char* name, const unsigned char** atts)
    ctypedef void (*tr_end_f)(void* ctx, const unsigned char* name)
    ctypedef void (*tr_chars_f)(void* ctx, const unsigned char* ch, int len)
    ctypedef struct htmlSAXHandler:
        tr_start_f startElement
        tr_end_f endElement
        tr_chars_f characters
        tr_chars_f ignorableWhitespace
        tr_chars_f cdataBlock
        unsigned int initialized
    int HTML_PARSE_NODEFDTD, HTML_PARSE_NOERROR, HTML_PARSE_NOWARNING, HTML_PARSE_NONET
    int HTML_PARSE_COMPACT, HTML_PARSE_HUGE, HTML_PARSE_RECOVER

cdef extern from "libxml/encoding.h":
    int XML_CHAR_ENCODING_UTF8

ctypedef void* (*tr_new_ctxt_f)(const htmlSAXHandler* sax, void* user)
ctypedef void* (*tr_read_memory_f)(void* ctxt, const char* buf, int size, const char* url,
                                   const char* encoding, int options)
ctypedef void (*tr_ctxt_f)(void* ctxt)
ctypedef void* (*tr_push_ctxt_f)(htmlSAXHandler* sax, void* user, const char* chunk, int size,
                                 const char* filename, int encoding)
ctypedef int (*tr_parse_chunk_f)(void* ctxt, const char* chunk, int size, int terminate)
ctypedef int (*tr_options_f)(void* ctxt, int options)

# libxml2's functions, in the order of _LIBXML2_NAMES (dlsym's pointers, copied as found):
# a page of one part is parsed from memory, a larger one pushed part by part.
ctypedef struct tr_libxml2_t:
    tr_new_ctxt_f new_ctxt
    tr_read_memory_f read_memory
    tr_ctxt_f free_ctxt
    tr_ctxt_f stop
    tr_push_ctxt_f push_ctxt
    tr_parse_chunk_f parse_chunk
    tr_options_f use_options

_LIBXML2_NAMES = (
    b"htmlNewSAXParserCtxt", b"htmlCtxtReadMemory", b"htmlFreeParserCtxt", b"xmlStopParser",
    b"htmlCreatePushParserCtxt", b"htmlParseChunk", b"htmlCtxtUseOptions",
)
cdef tr_libxml2_t _LIBXML2  # static: NULL until bound
assert sizeof(tr_libxml2_t) == len(_LIBXML2_NAMES) * sizeof(void*)
cdef htmlSAXHandler _SAX
cdef int _SAX_OPTIONS = (HTML_PARSE_RECOVER | HTML_PARSE_NODEFDTD | HTML_PARSE_NOERROR
                         | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_COMPACT
                         | HTML_PARSE_HUGE)


def bind_libxml2(bytes path):
    """Find libxml2's HTML parser in lxml's loaded module ``path``; whether all of it was
    (if not, what was found before is kept)."""
    cdef void* found[7]  # len(_LIBXML2_NAMES)
    if not _find_symbols(path, _LIBXML2_NAMES, found):
        return False
    memcpy(&_LIBXML2, found, sizeof(_LIBXML2))
    memset(&_SAX, 0, sizeof(_SAX))
    _SAX.startElement = _sax_start
    _SAX.endElement = _sax_end
    _SAX.characters = _sax_chars
    _SAX.ignorableWhitespace = _sax_chars
    _SAX.cdataBlock = _sax_chars
    _SAX.initialized = 1
    return True


cdef const char* _EMPTY = ""


@cython.final
cdef class _SaxDriver:
    """One page's SAX reading: libxml2's callbacks (:func:`_sax_start`, :func:`_sax_end`,
    :func:`_sax_chars`) into :class:`_Events`, as :func:`walk` drives it over the tree.
    Runs of text are coalesced until the next tag (libxml2 splits them at entities, dropped
    comments and its buffer's edges, the tree holds them whole); an exception in a callback
    (``check_deadline``'s) is kept, the parser stopped, and it is raised after the parse."""

    cdef _Events out
    cdef object tag_names, error
    cdef _Bytes run  # the current run of text, coalesced across characters() calls
    cdef void* ctxt
    cdef int depth, deepest

    cdef int flush(self) except -1:
        if self.run.size:
            # Text outside every element: the tree has no place for it (libxml2's tree
            # builder drops it), and _Events would then leave the shape to Python.
            if not self.out.in_code and self.out.stack.size:
                self.out.text(PyUnicode_DecodeUTF8(self.run.data, self.run.size, NULL))
            self.run.size = 0
        return 0

    cdef int start(self, const unsigned char* name, const unsigned char** atts) except -1:
        cdef _Events out = self.out
        cdef int tag, code
        cdef Py_ssize_t index
        cdef const unsigned char** pair
        cdef const char* value
        cdef dict attrib
        cdef str key
        self.flush()
        out.reserve()
        tag = out.tag_codes.get(<const char*>name)
        if tag < 0:
            tag = out.new_tag(self.tag_names[_text(<const char*>name)])
            out.tag_codes.put(<const char*>name, tag)
        index = out.open(tag)
        if atts is not NULL and atts[0] is not NULL:
            out.start_attributes()
            pair = atts
            while pair[0] is not NULL:
                code = out.attribute_codes.get(<const char*>pair[0])
                if code < 0:
                    code = out.new_attribute(_text(<const char*>pair[0]))
                    out.attribute_codes.put(<const char*>pair[0], code)
                value = <const char*>pair[1] if pair[1] is not NULL else _EMPTY
                if code == SIGNAL:
                    out.signal = True
                elif code == STYLE:
                    out.style(_text(value))
                elif CLASS <= code <= ITEMPROP:
                    out.parts[code - CLASS] = value
                    out.lengths[code - CLASS] = strlen(value)
                    out.hint_part(code)
                elif code != OTHER:
                    out.link(code, _text(value))
                pair += 2
            attrib = None
            if out.end_attributes(index, None, tag):
                attrib = {}
                pair = atts
                while pair[0] is not NULL:
                    key = _text(<const char*>pair[0])
                    if key not in attrib:
                        attrib[key] = _text(<const char*>pair[1] if pair[1] is not NULL else _EMPTY)
                    pair += 2
            out.signals(index, attrib)
        out.stack.append(index)
        self.depth += 1
        if self.depth > self.deepest:
            self.deepest = self.depth
        return 0

    cdef int end(self) except -1:
        self.flush()
        self.out.close()
        self.depth -= 1
        return 0

    cdef void fail(self) noexcept:
        if self.error is None:
            self.error = sys.exc_info()[1]
        _LIBXML2.stop(self.ctxt)


cdef void _sax_start(void* ctx, const unsigned char* name, const unsigned char** atts) noexcept:
    cdef _SaxDriver driver = <_SaxDriver>ctx
    if driver.error is not None:
        return
    try:
        driver.start(name, atts)
    except BaseException:
        driver.fail()


cdef void _sax_end(void* ctx, const unsigned char* name) noexcept:
    cdef _SaxDriver driver = <_SaxDriver>ctx
    if driver.error is not None:
        return
    try:
        driver.end()
    except BaseException:
        driver.fail()


cdef void _sax_chars(void* ctx, const unsigned char* ch, int length) noexcept:
    cdef _SaxDriver driver = <_SaxDriver>ctx
    try:
        driver.run.add(<const char*>ch, length)
    except BaseException:
        driver.fail()


def sax_read(
    parts, recorder, tag_names, signal_attributes, signal_elements, int batch,
):
    """Record the page ``parts`` (an iterable of its UTF-8 bytes in order, as :func:`walk`'s
    tree was parsed from) into ``recorder`` as :func:`walk` records its tree, from libxml2's
    SAX events with the kernel parser's options (:func:`bind_libxml2` first); the deepest
    element's depth. A page of one part is parsed from memory; a larger one is pushed part
    by part (``htmlParseChunk``), so that only the part at hand need be encoded, and the
    deadline is checked after each part as well as in the callbacks. Without a tree,
    nothing limits the depth and the page is never held twice."""
    cdef _SaxDriver driver = _SaxDriver()
    cdef const unsigned char[:] data
    driver.out = _Events(recorder, signal_attributes, signal_elements, batch)
    driver.tag_names = tag_names
    driver.run = _Bytes()
    if _LIBXML2.new_ctxt is NULL:
        raise RuntimeError("libxml2's HTML parser was not found: call bind_libxml2 first")
    parts = iter(parts)
    data = next(parts)
    following = next(parts, None)
    if following is None:  # one part: from memory
        driver.ctxt = _LIBXML2.new_ctxt(&_SAX, <void*>driver)
    else:
        driver.ctxt = _LIBXML2.push_ctxt(&_SAX, <void*>driver, NULL, 0, NULL,
                                         XML_CHAR_ENCODING_UTF8)
    if driver.ctxt is NULL:
        raise MemoryError()
    try:
        if following is None:
            _LIBXML2.read_memory(driver.ctxt, <const char*>&data[0], <int>data.shape[0], NULL,
                                 "UTF-8", _SAX_OPTIONS)
        else:
            _LIBXML2.use_options(driver.ctxt, _SAX_OPTIONS)
            while data is not None and driver.error is None:
                if data.shape[0]:
                    _LIBXML2.parse_chunk(driver.ctxt, <const char*>&data[0], <int>data.shape[0], 0)
                if driver.error is None:
                    driver.out.check_deadline()
                data, following = following, next(parts, None)
            if driver.error is None:
                _LIBXML2.parse_chunk(driver.ctxt, NULL, 0, 1)
    finally:
        _LIBXML2.free_ctxt(driver.ctxt)
    if driver.error is not None:
        raise driver.error
    driver.flush()
    while driver.depth > 0:  # libxml2 closes every element; in case
        driver.end()
    driver.out.finish(recorder)
    return driver.deepest
