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

:func:`collapsed_lengths` counts the node table's characters (runs of text with their
white space collapsed) in C for the pages this kernel reads.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize, PyByteArray_Resize
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.stdint cimport int32_t, int64_t
from cpython.unicode cimport Py_UNICODE_ISSPACE, PyUnicode_DecodeUTF8
from libc.string cimport memcpy, strlen

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

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
        cdef size_t slot = ((<size_t>key) >> 4) & mask
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
        slot = ((<size_t>key) >> 4) & mask
        while self.keys[slot] is not NULL:
            slot = (slot + 1) & mask
        self.keys[slot] = key
        self.values[slot] = value
        self.size += 1
        return 0


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


#: The hint of an element as its raw UTF-8 bytes (class, id, role, itemprop joined by
#: spaces) -> the shared lower-cased string; bounded like ``events._HINTS``.
_HINT_BYTES = {}
_HINT_BYTES_SIZE = 1 << 14
#: The hint of an element with attributes but none of the four.
_NO_HINT = "   "


cdef str _hint(_Bytes key):
    """The hint whose raw bytes are in ``key``, lower-cased (as ``events._HINTS``)."""
    cdef bytes raw = PyBytes_FromStringAndSize(key.data, key.size)
    cdef object hint = _HINT_BYTES.get(raw)
    if hint is None:
        if len(_HINT_BYTES) >= _HINT_BYTES_SIZE:
            _HINT_BYTES.clear()
        hint = _HINT_BYTES[raw] = PyUnicode_DecodeUTF8(key.data, key.size, NULL).lower()
    return <str>hint


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
    the elements ``read_signals`` reads."""
    cdef xmlNode* node = root._c_node
    cdef xmlAttr* attr
    cdef list tags = recorder.tags
    cdef list texts = recorder.texts
    cdef list hints = recorder.hints
    cdef dict kept = recorder.found.kept
    cdef list hinted = []
    cdef list signal_indices = [], signal_attribs = []
    cdef list names = []  # tag code -> recorder's tag name
    cdef _Codes tag_codes = _Codes(), attribute_codes = _Codes()
    cdef _Ints tag_flags = _Ints()  # tag code -> TAG_CODE | TAG_SIGNAL
    cdef _Bytes hint_key = _Bytes()
    cdef const char* parts[4]  # class, id, role, itemprop as libxml2 holds them
    cdef const char* plain
    cdef dict attrib
    cdef bytearray events = bytearray(1024)
    cdef char* out = PyByteArray_AS_STRING(events)
    cdef Py_ssize_t n_events = 0, capacity = 1024, index, attributed = 0, i
    cdef int depth = 0, deepest = 0, code, tag, flags
    # The tree's shape, as events._shape derives it from the events: per element its
    # parent, depth and subtree end; per event its element and run of text.
    cdef _Ints parents = _Ints(), depths = _Ints(), ends = _Ints()
    cdef _Ints owners = _Ints(), pieces = _Ints(), stack = _Ints()  # stack: open elements
    cdef bint outside = False
    cdef bint in_code = False, signal, has_kept, has_hint, assembled
    cdef str name, text, key, value
    cdef object href, src, alt
    read_signals = recorder.read_signals
    check_deadline = recorder.check_deadline

    while node.prev is not NULL:  # the first top-level node
        node = node.prev
    while node is not NULL:
        if n_events + 1 >= capacity:
            capacity *= 2
            PyByteArray_Resize(events, capacity)
            out = PyByteArray_AS_STRING(events)
        if node.type == tree.XML_ELEMENT_NODE:
            tag = tag_codes.get(node.name) if node.ns is NULL else -1
            if tag < 0:
                name = tag_names[cetree.namespacedName(node)]
                tag = len(names)
                names.append(name)
                tag_flags.append(
                    (TAG_CODE if name == "script" or name == "style" else 0)
                    | (TAG_SIGNAL if name in signal_elements else 0)
                )
                if node.ns is NULL:
                    tag_codes.put(node.name, tag)
            flags = tag_flags.data[tag]
            index = len(tags)
            tags.append(names[tag])
            out[n_events] = EVENT_OPEN
            n_events += 1
            parents.append(stack.data[stack.size - 1] if stack.size else -1)
            depths.append(stack.size)
            ends.append(0)
            owners.append(index)
            pieces.append(-1)
            in_code = flags & TAG_CODE
            if node.properties is not NULL:
                href = src = alt = None
                signal = has_kept = has_hint = assembled = False
                for i in range(4):
                    parts[i] = ""
                attr = node.properties
                while attr is not NULL:
                    code = attribute_codes.get(attr.name) if attr.ns is NULL else -1
                    if code < 0:
                        key = cetree.namespacedName(<xmlNode*>attr)
                        code = _CODES.get(key, SIGNAL if key in signal_attributes else OTHER)
                        if attr.ns is NULL:
                            attribute_codes.put(attr.name, code)
                    if code == SIGNAL:
                        signal = True
                    elif code == STYLE:  # hides only with one of these words
                        value = _value(node, attr).lower()
                        signal = signal or "none" in value or "hidden" in value
                    elif code == CLASS or code == ID or code == ROLE or code == ITEMPROP:
                        plain = _plain_value(attr)
                        if plain is NULL:  # entities: lxml assembles it (below)
                            assembled = True
                        else:
                            parts[code - CLASS] = plain
                        has_hint = True
                        signal = signal or code == ITEMPROP
                    elif code != OTHER:
                        has_kept = True
                        if code == HREF:
                            href = _value(node, attr)
                        elif code == SRC:
                            src = _value(node, attr)
                        else:
                            alt = _value(node, attr)
                    attr = attr.next
                hinted.append(index)
                if assembled:
                    hints.append(_assembled_hint(node, hint_names))
                elif has_hint:
                    hint_key.size = 0
                    for i in range(4):
                        if i:
                            hint_key.add(" ", 1)
                        hint_key.add(parts[i], strlen(parts[i]))
                    hints.append(_hint(hint_key))
                else:
                    hints.append(_NO_HINT)
                if has_kept:
                    kept[index] = (href, src, alt)
                if signal or in_code or flags & TAG_SIGNAL:
                    attrib = {}
                    attr = node.properties
                    while attr is not NULL:
                        key = cetree.namespacedName(<xmlNode*>attr)
                        if key not in attrib:
                            attrib[key] = _value(node, attr)
                        attr = attr.next
                    signal_indices.append(index)
                    signal_attribs.append(attrib)
                    if in_code:
                        in_code = "ld+json" not in (attrib.get("type") or "")
                attributed += 1
                if attributed % batch == 0:
                    check_deadline()
                    read_signals(signal_indices, signal_attribs)
                    signal_indices.clear()
                    signal_attribs.clear()
            if node.children is not NULL:
                stack.append(index)
                node = node.children
                depth += 1
                if depth > deepest:
                    deepest = depth
                continue
            out[n_events] = EVENT_CLOSE
            n_events += 1
            owners.append(index)
            pieces.append(-1)
            ends.data[index] = index + 1
            in_code = False
        elif node.type == tree.XML_TEXT_NODE or node.type == tree.XML_CDATA_SECTION_NODE:
            if not in_code and node.content is not NULL and node.content[0] != 0:
                text = _text(<const char*>node.content)
                if n_events and out[n_events - 1] == EVENT_TEXT:
                    texts[len(texts) - 1] += text
                else:
                    texts.append(text)
                    out[n_events] = EVENT_TEXT
                    n_events += 1
                    owners.append(stack.data[stack.size - 1] if stack.size else -1)
                    pieces.append(len(texts) - 1)
                    outside = outside or not stack.size
        # Next in document order: the next sibling, else close the ancestors without one.
        while node.next is NULL and depth:
            node = node.parent
            depth -= 1
            if n_events + 1 >= capacity:
                capacity *= 2
                PyByteArray_Resize(events, capacity)
                out = PyByteArray_AS_STRING(events)
            out[n_events] = EVENT_CLOSE
            n_events += 1
            stack.size -= 1
            index = stack.data[stack.size]
            owners.append(index)
            pieces.append(-1)
            ends.data[index] = len(tags)
            in_code = False
        node = node.next
    check_deadline()
    read_signals(signal_indices, signal_attribs)
    recorder.hinted.extend(hinted)
    PyByteArray_Resize(events, n_events)
    recorder.events = events
    if not outside:  # else events._shape derives it, dropping the text outside
        recorder.shape = tuple(
            part.take() for part in (parents, depths, ends, owners, pieces)
        )
    return deepest


def collapsed_lengths(list texts, list pieces):
    """Per index in ``pieces``, ``len(" ".join(texts[i].split()))``: the characters of
    that run of text with its white space collapsed and stripped, counted in C
    (``str.split``'s white space is ``Py_UNICODE_ISSPACE``), as the bytes of int64s."""
    cdef Py_ssize_t n = len(pieces), i, count
    cdef bytearray out = PyByteArray_FromStringAndSize(NULL, n * sizeof(int64_t))
    cdef int64_t* lengths = <int64_t*>PyByteArray_AS_STRING(out)
    cdef bint in_word
    cdef Py_UCS4 ch
    cdef str text
    for i in range(n):
        text = <str>texts[<Py_ssize_t>pieces[i]]
        count = 0
        in_word = False
        for ch in text:
            if Py_UNICODE_ISSPACE(ch):
                in_word = False
            else:
                if not in_word and count:
                    count += 1  # the one space between two words
                in_word = True
                count += 1
        lengths[i] = count
    return out
