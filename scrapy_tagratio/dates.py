"""Dates as pages write them, read into ISO 8601 without losing the page's time zone.

Pages give their publication time in machine formats (ISO 8601 in JSON-LD, ``article:*``
meta and ``<time datetime>``; RFC 2822 in some feeds' meta; compact ``20240503``) and in
prose ("3 May 2024", "May 3, 2024", "03.05.2024"). :func:`parse_date` reads the machine
formats; :func:`find_date` also finds a date inside a line of text (a byline). A value is
kept as precise as the page gives it: a date stays a date, a time without zone stays
naive, an offset stays the page's offset (not converted to UTC).

:func:`plausible` bounds dates: not before 1995 (htmldate's lower bound: the web's news
archives start there) and not after the crawl time, so a page's clock errors, copyright
years and events announced for later do not become publication dates.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

__all__ = [
    "EARLIEST",
    "MONTH_NAMES",
    "Parsed",
    "find_date",
    "parse_date",
    "plausible",
]

#: The earliest plausible publication date.
EARLIEST = date(1995, 1, 1)
#: Naive times and dates are local to the page: up to 14 hours ahead of UTC.
_LOCAL_AHEAD = timedelta(hours=14)

_ISO = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?"
)
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})(?:T?(\d{2})(\d{2})(\d{2})?)?$")
_SLASHED = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")
_DOTTED = re.compile(r"\b(\d{1,2})\.\s?(\d{1,2})\.\s?(\d{4})\b")
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            "jan january januar janvier enero gennaio januari janeiro",
            "feb february februar février fevrier febrero febbraio februari fevereiro",
            "mar march märz maerz mars marzo maart março marco",
            "apr april avril abril aprile",
            "may mai mayo maggio mei maio",
            "jun june juni juin junio giugno junho",
            "jul july juli juillet julio luglio julho",
            "aug august août aout agosto augustus",
            "sep sept september septembre septiembre settembre setembro",
            "oct october oktober octobre octubre ottobre outubro",
            "nov november novembre noviembre novembro",
            "dec december dezember décembre decembre diciembre dicembre desember dezembro",
        ),
        start=1,
    )
    for name in names.split()
}
#: Month names and abbreviations as a regex alternation, longest first.
MONTH_NAMES = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})\.?\s+(?:de\s+)?({MONTH_NAMES})\.?,?\s+(?:de\s+)?(\d{{4}})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I
)

#: What every written date holds (each pattern above asks for a four-digit year): text
#: without it is not searched for one.
_YEAR = re.compile(r"\d{4}")

Parsed = datetime | date


def _offset(text: str | None) -> timezone | None:
    if not text:
        return None
    if text == "Z":
        return timezone.utc
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
    if hours > 14 or minutes > 59:
        return None
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _build(
    year: str,
    month: str | int,
    day: str,
    hour: str | None = None,
    minute: str | None = None,
    second: str | None = None,
    zone: str | None = None,
) -> Parsed | None:
    try:
        if hour is None:
            return date(int(year), int(month), int(day))
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute or 0),
            int(second or 0),
            tzinfo=_offset(zone),
        )
    except ValueError:  # 31 February, hour 25, ...
        return None


def parse_date(text: str | None) -> Parsed | None:
    """A date or date-time from a machine-readable value (ISO 8601 and its common
    variants, compact ``YYYYMMDD[HHMM[SS]]``, RFC 2822), else one written in text (see
    :func:`find_date`); None when there is none."""
    if not text:
        return None
    text = text.strip()
    match = _ISO.match(text)
    if match:
        return _build(*match.groups())
    match = _COMPACT.match(text)
    if match:
        return _build(*match.groups())
    if text[:3].isalpha() and "," in text[:5]:
        try:
            return parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            pass
    return find_date(text)


def find_date(text: str) -> Parsed | None:
    """The first date written in ``text``: ISO, ``YYYY/MM/DD``, ``DD.MM.YYYY``,
    "3 May 2024" or "May 3, 2024" (month names in the main European languages)."""
    if _YEAR.search(text) is None:
        return None
    found: list[tuple[int, Parsed | None]] = []
    for pattern, order in (
        (_ISO, "ymd"),
        (_SLASHED, "ymd"),
        (_DOTTED, "dmy"),
        (_DAY_MONTH_YEAR, "dMy"),
        (_MONTH_DAY_YEAR, "Mdy"),
    ):
        match = pattern.search(text)
        if match is None:
            continue
        if pattern is _ISO:
            found.append((match.start(), _build(*match.groups())))
            continue
        parts = dict(zip(order, match.groups()[:3], strict=True))
        month = _MONTHS[parts["M"].lower()] if "M" in parts else parts["m"]
        found.append((match.start(), _build(parts["y"], month, parts["d"])))
    found = [(start, value) for start, value in found if value is not None]
    return min(found, key=lambda pair: pair[0])[1] if found else None


def plausible(value: Parsed, now: datetime) -> bool:
    """``value`` lies between :data:`EARLIEST` and ``now`` (the crawl time; naive values
    are local to the page, so they may run up to 14 hours ahead of UTC)."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            latest = now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)
            return value.date() >= EARLIEST and value <= latest
        day = value
    else:
        day = datetime(value.year, value.month, value.day)
    utc_now = now.astimezone(timezone.utc).replace(tzinfo=None) if now.tzinfo else now
    return day.date() >= EARLIEST and day <= utc_now + _LOCAL_AHEAD
