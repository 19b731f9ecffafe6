# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The compiled half of :mod:`scrapy_tagratio.readers.kernel`: one walk over an lxml tree in C.

It gives a :class:`~scrapy_tagratio.readers.target._Recorder` exactly what lxml's parser
target would have called it with (start tags with their attributes, runs of text, end
tags), in document order, without one Python call per event: the tree is read through
lxml's public C API (``lxml/includes/etreepublic.pxd``) and libxml2's node structs
(``lxml/includes/tree.pxd``), the headers lxml ships for this use.

Built against one lxml and one libxml2; :data:`BUILT_AGAINST` says which, and the Python
side refuses the kernel when the running versions differ (the structs and the C API are
what the module was compiled for only then).
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize, PyByteArray_Resize
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport int32_t
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.string cimport strlen

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
    EVENT_TEXT = 0
    EVENT_OPEN = 1
    EVENT_CLOSE = 2


cdef inline str _text(const char* content):
    return PyUnicode_DecodeUTF8(content, strlen(content), NULL)


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

    ``tag_names`` and ``hint_names`` map lxml's tag and the raw hint string to the shared,
    lower-cased strings the recorder keeps. ``recorder.shape`` gets the tree's shape (as
    ``events._shape`` would derive it from the events, int32 bytes). Returns the deepest
    element's depth (libxml2's tree stops nesting at a cap; the caller compares)."""
    cdef xmlNode* node = root._c_node
    cdef xmlAttr* attr
    cdef list tags = recorder.tags
    cdef list texts = recorder.texts
    cdef list hints = recorder.hints
    cdef dict kept = recorder.found.kept
    cdef list hinted = []
    cdef list signal_indices = [], signal_attribs = []
    cdef dict names = {}  # name pointer -> recorder's tag name (libxml2 interns names)
    cdef dict codes = {}  # attribute name pointer -> its code
    cdef dict attrib
    cdef bytearray events = bytearray(1024)
    cdef char* out = PyByteArray_AS_STRING(events)
    cdef Py_ssize_t n_events = 0, capacity = 1024, index, attributed = 0
    cdef int depth = 0, deepest = 0, code
    # The tree's shape, as events._shape derives it from the events: per element its
    # parent, depth and subtree end; per event its element and run of text.
    cdef _Ints parents = _Ints(), depths = _Ints(), ends = _Ints()
    cdef _Ints owners = _Ints(), pieces = _Ints(), stack = _Ints()  # stack: open elements
    cdef bint outside = False
    cdef bint in_code = False, signal, has_kept
    cdef str name, text, key, value
    cdef object klass, ident, role, itemprop, href, src, alt
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
            name = names.get(<size_t>node.name)
            if name is None:
                name = names[<size_t>node.name] = tag_names[cetree.namespacedName(node)]
            index = len(tags)
            tags.append(name)
            out[n_events] = EVENT_OPEN
            n_events += 1
            parents.append(stack.data[stack.size - 1] if stack.size else -1)
            depths.append(stack.size)
            ends.append(0)
            owners.append(index)
            pieces.append(-1)
            in_code = name == "script" or name == "style"
            if node.properties is not NULL:
                klass = ident = role = itemprop = ""
                href = src = alt = None
                signal = has_kept = False
                attr = node.properties
                while attr is not NULL:
                    found_code = codes.get(<size_t>attr.name)
                    if found_code is None:
                        key = cetree.namespacedName(<xmlNode*>attr)
                        found_code = codes[<size_t>attr.name] = (
                            _CODES.get(key, SIGNAL if key in signal_attributes else OTHER)
                        )
                    code = found_code
                    if code == SIGNAL:
                        signal = True
                    elif code == STYLE:  # hides only with one of these words
                        value = cetree.attributeValue(node, attr).lower()
                        signal = signal or "none" in value or "hidden" in value
                    elif code != OTHER:
                        value = cetree.attributeValue(node, attr)
                        if code == CLASS:
                            klass = value
                        elif code == ID:
                            ident = value
                        elif code == ROLE:
                            role = value
                        elif code == ITEMPROP:
                            itemprop = value
                            signal = True
                        else:
                            has_kept = True
                            if code == HREF:
                                href = value
                            elif code == SRC:
                                src = value
                            else:
                                alt = value
                    attr = attr.next
                hinted.append(index)
                hints.append(hint_names[f"{klass} {ident} {role} {itemprop}"])
                if has_kept:
                    kept[index] = (href, src, alt)
                if signal or in_code or name in signal_elements:
                    attrib = {}
                    attr = node.properties
                    while attr is not NULL:
                        key = cetree.namespacedName(<xmlNode*>attr)
                        if key not in attrib:
                            attrib[key] = cetree.attributeValue(node, attr)
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
            if not in_code and node.content is not NULL:
                text = _text(<const char*>node.content)
                if n_events and out[n_events - 1] == EVENT_TEXT:
                    texts[len(texts) - 1] += text
                elif text:
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
