"""Page bytes to text, as Scrapy decodes them, and binary input refused before it is read."""

from __future__ import annotations

import codecs
import re

from w3lib.encoding import (
    html_body_declared_encoding,
    html_to_unicode,
    http_content_type_encoding,
    read_bom,
)

from .errors import ExtractionError

__all__ = ["decode_html"]

_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"%PDF", "PDF document"),
    (b"\x1f\x8b", "gzip data"),
    (b"GIF8", "GIF image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"RIFF", "RIFF media"),
    (b"\x00\x00\x01\x00", "icon"),
    (b"wOFF", "web font"),
)


_CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32))


#: Single-byte charsets (as w3lib names them) that are mistaken declarations of UTF-8.
_LEGACY_CHARSET = re.compile(r"(?:cp125\d|iso8859-\d+|latin-?1|windows-125\d|ascii)$", re.I)


def _sniff_binary(data: bytes, content_type: str | None = None) -> str | None:
    """Name of the binary format ``data`` looks like, or None for text.

    Text has next to no control bytes (none in the 2,106 development pages); random
    bytes (compressed or encrypted data) have 27 in 256, so more than 5% of the first 4 kB
    is binary: three standard deviations below random data's share at 300 bytes, eleven at
    4 kB (a bound of 10% let 12-42% of random bodies through, the shorter the more). A
    few stray NUL bytes in a short page are text: it takes more than 8 as well.
    UTF-16 and UTF-32 text, marked by its byte order mark or declared by the HTTP charset,
    is half NUL bytes: not counted."""
    head = data[:2048].lstrip()
    for signature, name in _BINARY_SIGNATURES:
        if head.startswith(signature):
            return name
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _declares_wide_unicode(content_type):
        return None
    sample = data[:4096]
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))  # one pass
    if controls > max(8, 0.05 * len(sample)):
        return "binary data"
    return None


def _declares_wide_unicode(content_type: str | None) -> bool:
    """Whether the HTTP charset is UTF-16 or UTF-32 (any byte order), as Scrapy reads it."""
    return _is_wide_unicode(http_content_type_encoding(content_type))


def _is_wide_unicode(encoding: str | None) -> bool:
    """Whether ``encoding`` (a Python codec name) is UTF-16 or UTF-32, any byte order."""
    return encoding is not None and codecs.lookup(encoding).name.startswith(("utf-16", "utf-32"))


def _detect_encoding(data: bytes) -> str | None:
    """Scrapy's fallback when neither HTTP, BOM nor meta names a charset
    (``TextResponse._auto_detect_fun``): UTF-8 if the bytes decode as UTF-8, else
    charset-normalizer's best guess (a dependency of Scrapy, used when present)."""
    try:
        data.decode("utf-8")
    except UnicodeError:
        pass
    else:
        return "utf-8"
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - Scrapy installs it
        return None
    match = from_bytes(data).best()
    return match.encoding if match else None


def decode_html(data: bytes, content_type: str | None = None) -> str:
    """Decode page bytes as Scrapy does: HTTP charset, BOM, meta charset, then detection.
    Raises :class:`ExtractionError` for binary data."""
    _refuse_binary(data, content_type)
    return _decode(data, content_type)


def _refuse_binary(data: bytes, content_type: str | None = None) -> None:
    kind = _sniff_binary(data, content_type)
    if kind is not None:
        raise ExtractionError(f"input is {kind}, not HTML", kind="not_html")


def _decode(data: bytes, content_type: str | None) -> str:
    """As Scrapy decodes, except that bytes declared in a legacy single-byte charset
    that are valid UTF-8 (and not ASCII) are read as UTF-8: re-encoded saves and
    misconfigured servers declare latin-1 over UTF-8, and trusting them gives mojibake
    ("Ã©" for "é"); real latin-1 text is almost never valid UTF-8. And a UTF-16 or UTF-32
    that the page declares in its own markup (no byte order mark, no HTTP charset) is
    read as UTF-8, as browsers do (WHATWG's prescan): a declaration read in ASCII is not
    in UTF-16 (real UTF-16 text without either is refused as binary before this), and
    read as UTF-16 the page is CJK mojibake."""
    return _decode_utf8(data, content_type)[0]


def _decode_utf8(data: bytes, content_type: str | None) -> tuple[str, bool]:
    """:func:`_decode`'s text, and whether ``data`` is exactly its UTF-8 encoding: read
    as UTF-8 without a byte order mark and without a replaced byte, or ASCII read by an
    ASCII-compatible legacy charset. The readers then hand ``data`` to the parser as it
    is instead of encoding the text again."""
    encoding, text = html_to_unicode(content_type, data, auto_detect_fun=_detect_encoding)
    if (
        _is_wide_unicode(encoding)
        and not _declares_wide_unicode(content_type)
        and read_bom(data)[0] is None
    ):  # declared by the page's markup: read as UTF-8
        encoding, text = html_to_unicode("text/html; charset=utf-8", data)
    if _LEGACY_CHARSET.match(encoding):
        if data.isascii():
            return text, True
        try:
            return data.decode("utf-8"), True
        except UnicodeDecodeError:
            return text, False
    same = (
        codecs.lookup(encoding).name == "utf-8"
        and not data.startswith(codecs.BOM_UTF8)
        and "\ufffd" not in text
    )
    return text, same


def _utf8_reading(data: bytes, content_type: str | None) -> bool:
    """Whether :func:`_decode` reads ``data`` as ``data.decode("utf-8")`` when ``data`` is
    well-formed UTF-8 (the caller checks that), decided without decoding it: no byte order
    mark, and the encoding ``html_to_unicode`` chooses, in its order (the HTTP charset,
    else the meta charset), is UTF-8 or a legacy charset (read as UTF-8 here), or is a
    UTF-16 or UTF-32 the meta declares (read as UTF-8 here too). A page that
    declares neither is decoded as before: what the detection would choose is its own
    business. The compiled reader then hands the bytes to the parser without the text
    ever being decoded."""
    if read_bom(data)[0] is not None:
        return False
    declared = http_content_type_encoding(content_type)
    encoding = declared or html_body_declared_encoding(data)
    if encoding is None:
        return False
    return (
        bool(_LEGACY_CHARSET.match(encoding))
        or codecs.lookup(encoding).name == "utf-8"
        or (declared is None and _is_wide_unicode(encoding))
    )
