
# ----------------------------------------------------------------------------- SAX driver
from libc.string cimport memset

# speed12 prototype: the third driver of _Events, libxml2's HTML parser's SAX callbacks
# (found in lxml's etree module), no tree.
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

ctypedef void* (*tr_new_ctxt_f)(const htmlSAXHandler* sax, void* user)
ctypedef void* (*tr_read_memory_f)(void* ctxt, const char* buf, int size, const char* url,
                                   const char* encoding, int options)
ctypedef void (*tr_ctxt_f)(void* ctxt)

cdef tr_new_ctxt_f _sax_new_ctxt = NULL
cdef tr_read_memory_f _sax_read_memory = NULL
cdef tr_ctxt_f _sax_free_ctxt = NULL
cdef tr_ctxt_f _sax_stop = NULL
cdef htmlSAXHandler _SAX
cdef int _SAX_OPTIONS = (HTML_PARSE_RECOVER | HTML_PARSE_NODEFDTD | HTML_PARSE_NOERROR
                         | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | HTML_PARSE_COMPACT
                         | HTML_PARSE_HUGE)


def bind_libxml2(bytes path):
    """Find libxml2's HTML parser in lxml's loaded module ``path``; whether all was."""
    global _sax_new_ctxt, _sax_read_memory, _sax_free_ctxt, _sax_stop
    cdef void* handle = dlopen(path, RTLD_NOW | RTLD_NOLOAD)
    if handle is NULL:
        return False
    _sax_new_ctxt = <tr_new_ctxt_f>dlsym(handle, "htmlNewSAXParserCtxt")
    _sax_read_memory = <tr_read_memory_f>dlsym(handle, "htmlCtxtReadMemory")
    _sax_free_ctxt = <tr_ctxt_f>dlsym(handle, "htmlFreeParserCtxt")
    _sax_stop = <tr_ctxt_f>dlsym(handle, "xmlStopParser")
    memset(&_SAX, 0, sizeof(_SAX))
    _SAX.startElement = _sax_start
    _SAX.endElement = _sax_end
    _SAX.characters = _sax_chars
    _SAX.ignorableWhitespace = _sax_chars
    _SAX.cdataBlock = _sax_chars
    _SAX.initialized = 1
    return not (_sax_new_ctxt is NULL or _sax_read_memory is NULL
                or _sax_free_ctxt is NULL or _sax_stop is NULL)


cdef const char* _EMPTY = ""


@cython.final
cdef class _SaxDriver:
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
        import sys
        if self.error is None:
            self.error = sys.exc_info()[1]
        _sax_stop(self.ctxt)


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


def sax_walk(
    const unsigned char[:] data, recorder, tag_names, signal_attributes, signal_elements,
    int batch,
):
    """Record the page ``data`` (UTF-8) into ``recorder`` as :func:`walk` records its tree,
    from libxml2's SAX events; the deepest element's depth."""
    cdef _SaxDriver driver = _SaxDriver()
    driver.out = _Events(recorder, signal_attributes, signal_elements, batch)
    driver.tag_names = tag_names
    driver.run = _Bytes()
    driver.ctxt = _sax_new_ctxt(&_SAX, <void*>driver)
    if driver.ctxt is NULL:
        raise MemoryError()
    try:
        _sax_read_memory(driver.ctxt, <const char*>&data[0], <int>data.shape[0], NULL,
                         "UTF-8", _SAX_OPTIONS)
    finally:
        _sax_free_ctxt(driver.ctxt)
    if driver.error is not None:
        raise driver.error
    driver.flush()
    while driver.depth > 0:  # libxml2 closes every element; in case
        driver.end()
    driver.out.finish(recorder)
    global _LAST_SIZES
    _LAST_SIZES = (driver.out.tag_codes.size, driver.out.attribute_codes.size)
    return driver.deepest


_LAST_SIZES = (0, 0)


def last_code_sizes():
    """Distinct tag and attribute name pointers of the last sax_walk (prototype check)."""
    return _LAST_SIZES
