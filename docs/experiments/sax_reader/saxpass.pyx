# cython: language_level=3, boundscheck=False, wraparound=False
"""Measurement prototype (issue 18): libxml2's HTML parser driven by C SAX callbacks.

One pass over a page's bytes: per element its tag code, depth and own text length (the
bytes of the runs of text directly inside it), no tree. libxml2's functions are found in
lxml's loaded ``etree`` module (which links libxml2 statically and exports its symbols),
as the project's kernel finds lexbor's in selectolax; the struct layouts come from the
headers lxml ships (``lxml.get_include()``).
"""
from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from libc.stdlib cimport malloc, realloc
from libc.string cimport memcpy, memset, strcmp


cdef extern from "libxml/HTMLparser.h":
    ctypedef unsigned char xmlChar
    ctypedef void (*startElementSAXFunc)(void* ctx, const xmlChar* name, const xmlChar** atts)
    ctypedef void (*endElementSAXFunc)(void* ctx, const xmlChar* name)
    ctypedef void (*charactersSAXFunc)(void* ctx, const xmlChar* ch, int len)
    ctypedef struct htmlSAXHandler:
        startElementSAXFunc startElement
        endElementSAXFunc endElement
        charactersSAXFunc characters
        charactersSAXFunc ignorableWhitespace
        charactersSAXFunc cdataBlock
        unsigned int initialized
    ctypedef struct xmlParserCtxt:
        void* myDoc
    ctypedef xmlParserCtxt* htmlParserCtxtPtr
    int HTML_PARSE_NODEFDTD, HTML_PARSE_NOERROR, HTML_PARSE_NOWARNING, HTML_PARSE_NONET
    int HTML_PARSE_COMPACT, HTML_PARSE_HUGE, HTML_PARSE_RECOVER

cdef extern from "<dlfcn.h>":
    void* dlopen(const char* filename, int flags)
    void* dlsym(void* handle, const char* symbol)
    int RTLD_NOW
    int RTLD_NOLOAD

ctypedef htmlParserCtxtPtr (*new_ctxt_f)(const htmlSAXHandler* sax, void* user) noexcept nogil
ctypedef void* (*read_memory_f)(htmlParserCtxtPtr ctxt, const char* buf, int size,
                                const char* url, const char* encoding, int options) noexcept nogil
ctypedef void (*free_ctxt_f)(htmlParserCtxtPtr ctxt) noexcept nogil

cdef new_ctxt_f _new_ctxt = NULL
cdef read_memory_f _read_memory = NULL
cdef free_ctxt_f _free_ctxt = NULL

cdef enum:
    # Name pointer cache slots: names are interned in the parser's dict, but implied tags
    # are libxml2's constants (two codes for one tag: fine here, a reader maps by name).
    CACHE = 256
    MAX_STACK = 1 << 20  # open elements (a real reader would grow it)


cdef struct Table:
    int32_t* tag
    int32_t* depth
    int64_t* text
    Py_ssize_t n
    Py_ssize_t cap
    int32_t* stack  # open element indices
    int32_t top
    int32_t deepest
    const xmlChar* names[CACHE]
    int32_t codes[CACHE]
    int32_t ncodes
    int64_t outside  # text bytes outside every element
    int failed
    int full  # also keep the text and the coded attributes' values (what the events need)
    char* buf  # runs of text, and href/src values, back to back
    Py_ssize_t used
    Py_ssize_t bufcap
    int64_t* runs  # (element, start, length) per run of text
    Py_ssize_t nruns
    Py_ssize_t runcap
    uint64_t* attrs  # (element << 8 | code, FNV-1a hash of the value) per coded attribute
    Py_ssize_t nattrs
    Py_ssize_t attrcap
    const xmlChar* anames[CACHE]
    int32_t acodes[CACHE]


cdef Table _t


cdef inline int32_t _code(Table* t, const xmlChar* name) noexcept nogil:
    cdef uintptr_t h = (<uintptr_t>name >> 4) & (CACHE - 1)
    cdef int i
    for i in range(CACHE):
        if t.names[h] == name:
            return t.codes[h]
        if t.names[h] == NULL:
            t.names[h] = name
            t.codes[h] = t.ncodes
            t.ncodes += 1
            return t.codes[h]
        h = (h + 1) & (CACHE - 1)
    return -1


cdef const char* _ATTR_NAMES[8]
_ATTR_NAMES[:] = [b"class", b"id", b"role", b"itemprop", b"href", b"src", b"alt", b"style"]


cdef inline int32_t _acode(Table* t, const xmlChar* name) noexcept nogil:
    cdef uintptr_t h = (<uintptr_t>name >> 4) & (CACHE - 1)
    cdef int i, k
    for i in range(CACHE):
        if t.anames[h] == name:
            return t.acodes[h]
        if t.anames[h] == NULL:
            t.anames[h] = name
            t.acodes[h] = 0
            for k in range(8):
                if strcmp(<const char*>name, _ATTR_NAMES[k]) == 0:
                    t.acodes[h] = k + 1
            return t.acodes[h]
        h = (h + 1) & (CACHE - 1)
    return 0


cdef inline Py_ssize_t _keep(Table* t, const xmlChar* data, Py_ssize_t length) noexcept nogil:
    cdef Py_ssize_t at = t.used
    if t.used + length > t.bufcap:
        while t.used + length > t.bufcap:
            t.bufcap *= 2
        t.buf = <char*>realloc(t.buf, t.bufcap)
    memcpy(t.buf + t.used, data, length)
    t.used += length
    return at


cdef void _attributes(Table* t, const xmlChar** atts, int64_t element) noexcept nogil:
    cdef int32_t code
    cdef uint64_t h
    cdef const xmlChar* v
    cdef Py_ssize_t length
    while atts[0] != NULL:
        code = _acode(t, atts[0])
        v = atts[1]
        if code and v != NULL:
            h = 14695981039346656037ULL
            length = 0
            while v[length]:
                h = (h ^ v[length]) * 1099511628211ULL
                length += 1
            if code == 5 or code == 6:
                _keep(t, v, length)
            if t.nattrs + 2 > t.attrcap:
                t.attrcap *= 2
                t.attrs = <uint64_t*>realloc(t.attrs, t.attrcap * sizeof(uint64_t))
            t.attrs[t.nattrs] = (<uint64_t>element << 8) | code
            t.attrs[t.nattrs + 1] = h
            t.nattrs += 2
        atts += 2


cdef void _start(void* ctx, const xmlChar* name, const xmlChar** atts) noexcept nogil:
    cdef Table* t = &_t
    cdef Py_ssize_t cap
    if t.n == t.cap:
        cap = t.cap * 2
        t.tag = <int32_t*>realloc(t.tag, cap * sizeof(int32_t))
        t.depth = <int32_t*>realloc(t.depth, cap * sizeof(int32_t))
        t.text = <int64_t*>realloc(t.text, cap * sizeof(int64_t))
        t.cap = cap
    if t.top + 1 >= MAX_STACK:
        t.failed = 1
        return
    t.tag[t.n] = _code(t, name)
    t.depth[t.n] = t.top + 1
    t.text[t.n] = 0
    t.top += 1
    t.stack[t.top] = <int32_t>t.n
    if t.top > t.deepest:
        t.deepest = t.top
    if t.full and atts != NULL:
        _attributes(t, atts, t.n)
    t.n += 1


cdef void _end(void* ctx, const xmlChar* name) noexcept nogil:
    cdef Table* t = &_t
    if t.top >= 0:
        t.top -= 1


cdef void _chars(void* ctx, const xmlChar* ch, int length) noexcept nogil:
    cdef Table* t = &_t
    cdef int64_t element = -1
    if t.top >= 0:
        element = t.stack[t.top]
        t.text[element] += length
    else:
        t.outside += length
    if t.full:
        if t.nruns + 3 > t.runcap:
            t.runcap *= 2
            t.runs = <int64_t*>realloc(t.runs, t.runcap * sizeof(int64_t))
        t.runs[t.nruns] = element
        t.runs[t.nruns + 1] = _keep(t, ch, length)
        t.runs[t.nruns + 2] = length
        t.nruns += 3


cdef htmlSAXHandler _sax


def bind(bytes path):
    """Find libxml2's HTML parser in lxml's loaded ``etree`` module; whether all was."""
    global _new_ctxt, _read_memory, _free_ctxt
    cdef void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD)
    if handle is NULL:
        return False
    _new_ctxt = <new_ctxt_f>dlsym(handle, "htmlNewSAXParserCtxt")
    _read_memory = <read_memory_f>dlsym(handle, "htmlCtxtReadMemory")
    _free_ctxt = <free_ctxt_f>dlsym(handle, "htmlFreeParserCtxt")
    memset(&_sax, 0, sizeof(_sax))
    _sax.startElement = _start
    _sax.endElement = _end
    _sax.characters = _chars
    _sax.ignorableWhitespace = _chars
    _sax.cdataBlock = _chars
    _sax.initialized = 1
    _t.cap = 1024
    _t.tag = <int32_t*>malloc(_t.cap * sizeof(int32_t))
    _t.depth = <int32_t*>malloc(_t.cap * sizeof(int32_t))
    _t.text = <int64_t*>malloc(_t.cap * sizeof(int64_t))
    _t.stack = <int32_t*>malloc(MAX_STACK * sizeof(int32_t))
    _t.bufcap = 1 << 16
    _t.buf = <char*>malloc(_t.bufcap)
    _t.runcap = 3 * 1024
    _t.runs = <int64_t*>malloc(_t.runcap * sizeof(int64_t))
    _t.attrcap = 2 * 1024
    _t.attrs = <uint64_t*>malloc(_t.attrcap * sizeof(uint64_t))
    return not (_new_ctxt is NULL or _read_memory is NULL or _free_ctxt is NULL)


OPTIONS = (HTML_PARSE_RECOVER | HTML_PARSE_NODEFDTD | HTML_PARSE_NOERROR
           | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_COMPACT | HTML_PARSE_HUGE)


def run(const unsigned char[:] data, bint full=False, int options=OPTIONS):
    """One SAX pass over UTF-8 ``data``: (elements, text bytes inside them, deepest).
    ``full``: also keep the runs of text, href/src values and hashes of the coded
    attributes' values in C arrays (a stand-in for what the target reader's events need)."""
    cdef Table* t = &_t
    cdef htmlParserCtxtPtr ctxt
    cdef Py_ssize_t i
    cdef int64_t total = 0
    cdef void* doc
    t.n = 0
    t.top = -1
    t.deepest = 0
    t.ncodes = 0
    t.outside = 0
    t.failed = 0
    t.full = full
    t.used = 0
    t.nruns = 0
    t.nattrs = 0
    memset(t.names, 0, sizeof(t.names))
    memset(t.anames, 0, sizeof(t.anames))
    with nogil:
        ctxt = _new_ctxt(&_sax, NULL)
        doc = _read_memory(ctxt, <const char*>&data[0], <int>data.shape[0], NULL, "UTF-8", options)
        _free_ctxt(ctxt)
        for i in range(t.n):
            total += t.text[i]
    if doc is not NULL:
        raise RuntimeError("libxml2 built a document")
    if t.failed:
        raise RuntimeError("deeper than MAX_STACK")
    return t.n, total, t.deepest


def kept():
    """The last full pass's (runs of text, coded attributes, bytes kept)."""
    return _t.nruns // 3, _t.nattrs // 2, _t.used


def table():
    """The last pass's (tags codes, depths, own text lengths) as lists (for checks)."""
    cdef Py_ssize_t i
    return ([_t.tag[i] for i in range(_t.n)], [_t.depth[i] for i in range(_t.n)],
            [_t.text[i] for i in range(_t.n)])
