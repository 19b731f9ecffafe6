"""The ``TAGRATIO_*`` Scrapy settings: read once, validated, frozen.

A setting whose default is None takes back that default from the string "None", the
command line's only way to give it (``scrapy crawl -s TAGRATIO_METADATA_FIELD=None``).
Every component (downloader middleware, spider middleware, pipeline) builds a
:class:`TagRatioSettings` in ``from_crawler``; a bad value stops the crawl at start-up with
a :class:`SettingsError` that names the setting and the values it allows. Spiders override
settings with ``custom_settings`` as usual, and single requests with
``request.meta["tagratio_settings"] = {"TAGRATIO_ALGORITHM": "cetr", ...}`` (see
:data:`PER_REQUEST`), validated the same way.

=============================  =============  ===============================================
setting                        default        meaning
=============================  =============  ===============================================
TAGRATIO_ENABLED               True           False disables every component
TAGRATIO_ALGORITHM             the default    a name from ``ALGORITHMS``
TAGRATIO_PARAMS                {}             the algorithm's parameters (dict or JSON)
TAGRATIO_OVERVIEW_ACTION       "drop"         drop: drop items of overview pages, keep their
                                              requests; tag: keep them (``is_overview`` in
                                              the scores); ignore: ``IgnoreRequest`` for
                                              overview pages; off: no overview detection
TAGRATIO_MIN_NET_TEXT_LENGTH   detector's     overview threshold on net text length (chars)
TAGRATIO_OVERVIEW_THRESHOLD    model file's   overview probability (0..1) from which a page
                                              is an overview page (its items dropped)
TAGRATIO_OVERVIEW_UNCERTAIN_   model file's   probability (0..1, at most the threshold) from
THRESHOLD                                     which a page is "uncertain": items kept, tagged
TAGRATIO_OVERVIEW_EVIDENCE     "combined"     combined: the detector's full model; net-text:
                                              TextSweeper's net text length test alone
TAGRATIO_TEXT_FIELD            "main_text"    item field for the main text ("": none)
TAGRATIO_SCORES_FIELD          "tagratio"     item field for ``Extraction.figures()`` ("": none)
TAGRATIO_HTML_FIELD            "main_html"    item field for the cleaned HTML
TAGRATIO_ATTACH_HTML           False          fill TAGRATIO_HTML_FIELD
TAGRATIO_ATTACH_BLOCKS         False          add per-block scores to the scores field
TAGRATIO_TEXT_FORMAT           "text"         what the text field holds: text (paragraphs on
                                              lines), markdown, or html (cleaned)
TAGRATIO_METADATA              True           read headline, authors, dates, language, ...
TAGRATIO_METADATA_FIELD        None           item field for ``Metadata.to_dict()``; None:
                                              ``metadata`` inside the scores field
TAGRATIO_SOURCE_FIELD          "raw_html"     item field the pipeline extracts from
TAGRATIO_WORKERS               0              0: extract in the reactor thread; N: N processes
                                              (at most 4 per CPU)
TAGRATIO_MAX_BYTES             5000000        larger pages are skipped (0: no limit)
TAGRATIO_TIME_BUDGET           5.0            seconds per page before it is skipped (0: none)
TAGRATIO_EXTRACT_STATUSES      []             HTTP statuses extracted besides 2xx
TAGRATIO_WORKER_TIMEOUT        30.0           seconds before a worker is killed (0: never)
TAGRATIO_WORKER_MAX_TASKS      1000           pages a worker extracts before it is replaced
                                              (0: never)
TAGRATIO_SITE_MEMORY           True           learn each site's template during the crawl and
                                              leave it out of the content (SiteMemory)
TAGRATIO_SITE_MEMORY_SCOPE     "host"         host: a site is a host; domain: a registrable
                                              domain (news.example.com = example.com)
TAGRATIO_SITE_MEMORY_MIN_PAGES fitted         other pages of the site a block must be seen
                                              on to be template
TAGRATIO_SITE_MEMORY_MAX_SITES 2000           sites remembered (least recently used go)
TAGRATIO_SITE_MEMORY_ENTRIES   4096           block fingerprints remembered per site
TAGRATIO_SITE_MEMORY_BACKEND   "local"        local: one memory per crawler process; redis:
                                              in the Redis of REDIS_URL (scrapy-redis), all
                                              processes of the crawl learn from each other
TAGRATIO_SITE_MEMORY_REDIS_KEY "%(spider)s:tagratio_memory"  prefix of its Redis keys
TAGRATIO_SITE_MEMORY_HOLD      0              cold start: the items of a page that knew fewer
                                              than N other pages of its site wait until N
                                              did (0: off), then it is read again
TAGRATIO_SITE_MEMORY_HOLD_SECONDS 30.0        longest wait of a held page
=============================  =============  ===============================================
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, Literal

from .algorithms import ALGORITHMS, DEFAULT_ALGORITHM, get_algorithm
from .algorithms.base import Algorithm, Labelling
from .document import Document
from .errors import ExtractionError
from .overview import OverviewDetector, OverviewVerdict
from .pool import ExtractionOptions
from .site_memory import SiteMemory

__all__ = [
    "BACKENDS",
    "DEFAULTS",
    "MAX_WORKERS_PER_CPU",
    "OVERVIEW_ACTIONS",
    "PER_REQUEST",
    "TEXT_FORMATS",
    "OverviewAction",
    "SettingsError",
    "TagRatioSettings",
    "TextFormat",
    "usable_cpus",
]

OverviewAction = Literal["drop", "tag", "ignore", "off"]
OVERVIEW_ACTIONS: tuple[OverviewAction, ...] = ("drop", "tag", "ignore", "off")
TextFormat = Literal["text", "markdown", "html"]
TEXT_FORMATS: tuple[TextFormat, ...] = ("text", "markdown", "html")

#: Every setting and its default (``None`` for the minimum net text length: the
#: overview detector's own default).
DEFAULTS: Mapping[str, Any] = {
    "TAGRATIO_ENABLED": True,
    "TAGRATIO_ALGORITHM": DEFAULT_ALGORITHM,
    "TAGRATIO_PARAMS": {},
    "TAGRATIO_OVERVIEW_ACTION": "drop",
    "TAGRATIO_MIN_NET_TEXT_LENGTH": None,
    "TAGRATIO_OVERVIEW_THRESHOLD": None,
    "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD": None,
    "TAGRATIO_OVERVIEW_EVIDENCE": "combined",
    "TAGRATIO_TEXT_FIELD": "main_text",
    "TAGRATIO_SCORES_FIELD": "tagratio",
    "TAGRATIO_HTML_FIELD": "main_html",
    "TAGRATIO_ATTACH_HTML": False,
    "TAGRATIO_ATTACH_BLOCKS": False,
    "TAGRATIO_TEXT_FORMAT": "text",
    "TAGRATIO_METADATA": True,
    "TAGRATIO_METADATA_FIELD": None,
    "TAGRATIO_SOURCE_FIELD": "raw_html",
    "TAGRATIO_WORKERS": 0,
    "TAGRATIO_MAX_BYTES": 5_000_000,
    "TAGRATIO_TIME_BUDGET": 5.0,
    "TAGRATIO_EXTRACT_STATUSES": (),
    "TAGRATIO_WORKER_TIMEOUT": 30.0,
    "TAGRATIO_WORKER_MAX_TASKS": 1000,
    "TAGRATIO_SITE_MEMORY": True,
    "TAGRATIO_SITE_MEMORY_SCOPE": "host",
    "TAGRATIO_SITE_MEMORY_MIN_PAGES": None,
    "TAGRATIO_SITE_MEMORY_MAX_SITES": 2000,
    "TAGRATIO_SITE_MEMORY_ENTRIES": 4096,
    "TAGRATIO_SITE_MEMORY_BACKEND": "local",
    "TAGRATIO_SITE_MEMORY_REDIS_KEY": "%(spider)s:tagratio_memory",
    "TAGRATIO_SITE_MEMORY_HOLD": 0,
    "TAGRATIO_SITE_MEMORY_HOLD_SECONDS": 30.0,
}
#: Settings a request may override in ``meta["tagratio_settings"]`` (the worker pool, the
#: site memory's shape and the pipeline's source field belong to the whole crawl; a request
#: may leave the site memory out with TAGRATIO_SITE_MEMORY).
PER_REQUEST = frozenset(DEFAULTS) - {
    "TAGRATIO_WORKERS",
    "TAGRATIO_WORKER_TIMEOUT",
    "TAGRATIO_WORKER_MAX_TASKS",
    "TAGRATIO_SOURCE_FIELD",
    "TAGRATIO_SITE_MEMORY_SCOPE",
    "TAGRATIO_SITE_MEMORY_MIN_PAGES",
    "TAGRATIO_SITE_MEMORY_MAX_SITES",
    "TAGRATIO_SITE_MEMORY_ENTRIES",
    "TAGRATIO_SITE_MEMORY_BACKEND",
    "TAGRATIO_SITE_MEMORY_REDIS_KEY",
    "TAGRATIO_SITE_MEMORY_HOLD",
    "TAGRATIO_SITE_MEMORY_HOLD_SECONDS",
}


class SettingsError(ExtractionError):
    """A ``TAGRATIO_*`` setting (or per-request override) with a value it cannot take."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="bad_parameter")


# ---------------------------------------------------------------------- value parsers
# Command-line settings (-s NAME=VALUE) arrive as strings, so every parser accepts the
# string form too; each raises SettingsError naming the setting and what it allows.

_TRUE = {"1", "true", "True"}
_FALSE = {"0", "false", "False"}


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1) or (isinstance(value, str) and value in _TRUE | _FALSE):
        return value in (1, *_TRUE)
    raise SettingsError(f"{name} must be True or False (or 1/0, 'true'/'false'); got {value!r}")


def _number(name: str, value: Any, *, integer: bool, hint: str = "") -> float:
    kind = "an integer" if integer else "a number"
    if isinstance(value, str):
        try:
            value = int(value) if integer else float(value)
        except ValueError:
            raise SettingsError(f"{name} must be {kind} >= 0{hint}; got {value!r}") from None
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value) or value < 0:
        raise SettingsError(f"{name} must be {kind} >= 0{hint}; got {value!r}")
    return value


def _count(name: str, value: Any) -> int:
    return int(_number(name, value, integer=True))


#: TAGRATIO_WORKERS at most this many per CPU the crawl may use: extraction is CPU work, so
#: more workers only wait for the cores, and each is a whole interpreter with the models
#: loaded, which takes memory and CPU time to start.
MAX_WORKERS_PER_CPU = 4


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells, else all)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _workers(value: Any) -> int:
    """TAGRATIO_WORKERS: 0 to :data:`MAX_WORKERS_PER_CPU` per usable CPU (a typo of a
    million would start interpreters until the machine gives out)."""
    workers = _count("TAGRATIO_WORKERS", value)
    limit = MAX_WORKERS_PER_CPU * usable_cpus()
    if workers > limit:
        raise SettingsError(
            f"TAGRATIO_WORKERS must be an integer from 0 to {limit} ({MAX_WORKERS_PER_CPU} "
            f"per CPU of this machine: extraction is CPU work); got {workers}"
        )
    return workers


def _limit(name: str, value: Any, *, integer: bool) -> float | None:
    """A resource limit: ``None`` or 0 mean no limit."""
    if value is None:
        return None
    # "inf" for no limit is refused: the message says what is (a float's inf is >= 0)
    number = _number(name, value, integer=integer, hint=" (0: no limit)")
    return number or None


#: Settings for which an explicit ``None`` is a value of its own, as in a request's
#: overrides: no limit, no field. Scrapy's ``Settings.get`` gives the default for None
#: (its convention, kept for the other settings), so ``TAGRATIO_MAX_BYTES = None`` kept the
#: 5 MB limit and ``TAGRATIO_SCORES_FIELD = None`` the scores, where the same values in
#: ``meta["tagratio_settings"]`` lifted the limit and left the field out.
_NONE_IS_A_VALUE = frozenset(
    {
        "TAGRATIO_MAX_BYTES",
        "TAGRATIO_TIME_BUDGET",
        "TAGRATIO_WORKER_TIMEOUT",
        "TAGRATIO_TEXT_FIELD",
        "TAGRATIO_SCORES_FIELD",
        "TAGRATIO_HTML_FIELD",
    }
)

#: How ``None`` reads on Scrapy's command line (``-s TAGRATIO_METADATA_FIELD=None``).
_NONE_SPELLINGS = frozenset({"None", "none"})


def _none_spelled(name: str, value: Any) -> Any:
    """``None`` for the string "None" given to a setting whose default is None (the
    command line has no other way to give it back its default), else ``value``."""
    if DEFAULTS[name] is None and isinstance(value, str) and value.strip() in _NONE_SPELLINGS:
        return None
    return value


def _field(name: str, value: Any, *, optional: bool = False) -> str:
    """An item field name; with ``optional`` the empty string (or None) leaves it out.
    The string "None" is refused: it is how the command line spells None
    (``-s TAGRATIO_TEXT_FIELD=None``), which could mean the default or no field, and a
    field named "None" is never what was meant."""
    if optional and value in ("", None):
        return ""
    if not isinstance(value, str) or not value.strip() or value.strip() in _NONE_SPELLINGS:
        allowed = "an item field name or '' (none)" if optional else "a non-empty item field name"
        raise SettingsError(f"{name} must be {allowed}; got {value!r}")
    return value


def _statuses(name: str, value: Any) -> frozenset[int]:
    """HTTP status codes, as a list, a comma-separated string (``-s NAME=404,410``) or a
    JSON array (``-s NAME=[404,410]``, the spelling ``TAGRATIO_PARAMS`` takes)."""
    try:
        if isinstance(value, str) and value.strip().startswith("["):
            value = json.loads(value)
        codes = (
            [c.strip() for c in value.split(",") if c.strip()] if isinstance(value, str) else value
        )
        return frozenset(map(_status, codes))
    except (TypeError, ValueError):
        raise SettingsError(
            f"{name} must be a list of HTTP status codes (100-599), e.g. [404, 410] or "
            f"'404,410'; got {value!r}"
        ) from None


def _status(code: Any) -> int:
    if isinstance(code, bool) or not isinstance(code, (int, str)) or not 100 <= int(code) <= 599:
        raise ValueError(code)
    return int(code)


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise SettingsError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return str(value)


def _params(name: str, value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except json.JSONDecodeError:
            raise SettingsError(
                f"{name} must be a dict (or a JSON object) of algorithm parameters; got {value!r}"
            ) from None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise SettingsError(
            f"{name} must be a dict (or a JSON object) of algorithm parameters; got {value!r}"
        )
    return dict(value)


def _detector(raw: Mapping[str, Any]) -> OverviewDetector:
    """The overview detector the TAGRATIO_MIN_NET_TEXT_LENGTH, _OVERVIEW_THRESHOLD,
    _OVERVIEW_UNCERTAIN_THRESHOLD and _OVERVIEW_EVIDENCE settings describe (None: the
    detector's default, from the model file)."""
    options: dict[str, Any] = {
        "evidence": _choice(
            "TAGRATIO_OVERVIEW_EVIDENCE",
            raw["TAGRATIO_OVERVIEW_EVIDENCE"],
            ("combined", "net-text"),
        )
    }
    if raw["TAGRATIO_MIN_NET_TEXT_LENGTH"] is not None:
        options["min_net_text_length"] = _count(
            "TAGRATIO_MIN_NET_TEXT_LENGTH", raw["TAGRATIO_MIN_NET_TEXT_LENGTH"]
        )
    for name, option in (
        ("TAGRATIO_OVERVIEW_THRESHOLD", "threshold"),
        ("TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD", "uncertain_threshold"),
    ):
        if raw[name] is not None:
            # One message for every bad value ("high" and -0.1 read "must be a number
            # >= 0", as if 5 were allowed).
            allowed = f"{name} must be a number from 0 to 1 (None: the model file's)"
            try:
                value = _number(name, raw[name], integer=False)
            except SettingsError:
                raise SettingsError(f"{allowed}; got {raw[name]!r}") from None
            if value > 1:
                raise SettingsError(f"{allowed}; got {value!r}")
            options[option] = value
    try:
        return OverviewDetector(**options)
    except ExtractionError as exc:  # a minimum below 1, or uncertain above the threshold
        name = (
            "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD"
            if "uncertain_threshold" in str(exc)
            else "TAGRATIO_MIN_NET_TEXT_LENGTH"
        )
        raise SettingsError(f"{name}: {exc}") from None


#: The values TAGRATIO_SITE_MEMORY_BACKEND takes.
BACKENDS = ("local", "redis")


def _redis_key(value: Any) -> str:
    """TAGRATIO_SITE_MEMORY_REDIS_KEY: a non-empty prefix whose only placeholder is
    ``%(spider)s``."""
    name = "TAGRATIO_SITE_MEMORY_REDIS_KEY"
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(f"{name} must be a non-empty key prefix; got {value!r}")
    try:
        value % {"spider": "spider"}
    except (KeyError, ValueError, TypeError):
        raise SettingsError(
            f"{name} may hold %(spider)s and no other placeholder; got {value!r}"
        ) from None
    return value


def _site_memory_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The SiteMemory arguments of the TAGRATIO_SITE_MEMORY_* settings, checked by building
    one (None for the minimum of pages: the fitted default)."""
    options: dict[str, Any] = {
        "scope": _choice(
            "TAGRATIO_SITE_MEMORY_SCOPE", raw["TAGRATIO_SITE_MEMORY_SCOPE"], ("host", "domain")
        ),
        "max_sites": _count(
            "TAGRATIO_SITE_MEMORY_MAX_SITES", raw["TAGRATIO_SITE_MEMORY_MAX_SITES"]
        ),
        "max_entries": _count("TAGRATIO_SITE_MEMORY_ENTRIES", raw["TAGRATIO_SITE_MEMORY_ENTRIES"]),
    }
    if raw["TAGRATIO_SITE_MEMORY_MIN_PAGES"] is not None:
        options["min_pages"] = _count(
            "TAGRATIO_SITE_MEMORY_MIN_PAGES", raw["TAGRATIO_SITE_MEMORY_MIN_PAGES"]
        )
    names = {
        "min_pages": "TAGRATIO_SITE_MEMORY_MIN_PAGES",
        "max_sites": "TAGRATIO_SITE_MEMORY_MAX_SITES",
        "max_entries": "TAGRATIO_SITE_MEMORY_ENTRIES",
    }
    try:
        SiteMemory(**options)
    except ExtractionError as exc:  # a count below 1
        name = next((names[key] for key in names if key in str(exc)), "TAGRATIO_SITE_MEMORY_*")
        raise SettingsError(f"{name}: {exc}") from None
    return options


# ---------------------------------------------------------------------- overview "off"
@dataclass(frozen=True)
class _NoOverviewDetection(OverviewDetector):
    """TAGRATIO_OVERVIEW_ACTION = "off": the detector does not run; every page is an article."""

    site_evidence: ClassVar[bool] = False

    def detect(self, document: Document, labelling: Labelling) -> OverviewVerdict:
        return OverviewVerdict(False, 0.0, ("overview detection off",))


# ---------------------------------------------------------------------- the settings
@dataclass(frozen=True)
class TagRatioSettings:
    """The validated ``TAGRATIO_*`` settings of a crawl (or of one request)."""

    enabled: bool
    algorithm: Algorithm
    overview_action: OverviewAction
    detector: OverviewDetector
    text_field: str
    scores_field: str
    html_field: str
    attach_html: bool
    attach_blocks: bool
    text_format: TextFormat
    metadata: bool
    #: None: the metadata goes into the scores field, under "metadata".
    metadata_field: str | None
    source_field: str
    workers: int
    max_bytes: int | None
    time_budget: float | None
    extract_statuses: frozenset[int]
    worker_timeout: float | None
    worker_max_tasks: int | None
    site_memory: bool
    #: The arguments of the crawl's :class:`SiteMemory` (validated).
    site_memory_options: Mapping[str, Any]
    #: Where the memory lives: "local" (this process) or "redis" (scrapy-redis's Redis).
    site_memory_backend: Literal["local", "redis"]
    #: The prefix of its Redis keys (``%(spider)s``: the spider's name).
    site_memory_redis_key: str
    #: Cold start: pages of a site held until this many other pages were seen (0: off) ...
    site_memory_hold: int
    #: ... or this many seconds passed.
    site_memory_hold_seconds: float
    #: The raw values these were validated from (what per-request overrides merge into).
    raw: Mapping[str, Any] = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_settings(cls, settings: Any) -> TagRatioSettings:
        """Validate the ``TAGRATIO_*`` entries of Scrapy ``settings`` (or any mapping)."""
        names = [key for key in settings if isinstance(key, str)]
        _reject_unknown([n for n in names if n.startswith("TAGRATIO_")], DEFAULTS, "setting")
        raw = {
            name: settings[name]
            if name in _NONE_IS_A_VALUE and name in settings
            else settings.get(name, default)
            for name, default in DEFAULTS.items()
        }
        return cls._validate(raw)

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> TagRatioSettings:
        """These settings with a request's ``meta["tagratio_settings"]`` applied.

        Overriding ``TAGRATIO_ALGORITHM`` alone resets ``TAGRATIO_PARAMS`` (the crawl's
        parameters belong to the crawl's algorithm).
        """
        if not overrides:
            return self
        if not isinstance(overrides, Mapping) or not all(isinstance(k, str) for k in overrides):
            raise SettingsError(
                f"meta['tagratio_settings'] must be a dict of TAGRATIO_* settings; "
                f"got {overrides!r}"
            )
        _reject_unknown(list(overrides), PER_REQUEST, "per-request setting")
        raw = dict(self.raw)
        if "TAGRATIO_ALGORITHM" in overrides and "TAGRATIO_PARAMS" not in overrides:
            raw["TAGRATIO_PARAMS"] = {}
        raw.update(overrides)
        return self._validate(raw)

    @cached_property
    def options(self) -> ExtractionOptions:
        """What an extraction needs (sent to worker processes)."""
        return ExtractionOptions(
            algorithm=self.algorithm,
            detector=self.detector,
            max_bytes=self.max_bytes,
            time_budget=self.time_budget,
            keep_blocks=self.attach_blocks,
            keep_html=self.attach_html or self.text_format == "html",
            keep_markdown=self.text_format == "markdown",
            metadata=self.metadata,
        )

    @property
    def item_fields(self) -> tuple[str, ...]:
        """The fields this plugin sets on an item (a declared item class needs them);
        a field set to "" is left out."""
        fields = (
            self.text_field,
            self.scores_field,
            self.html_field if self.attach_html else "",
            (self.metadata_field or "") if self.metadata else "",
        )
        return tuple(field for field in fields if field)

    def new_site_memory(self) -> SiteMemory:
        """A new, empty memory as TAGRATIO_SITE_MEMORY_* describe it (one per crawl)."""
        return SiteMemory(**self.site_memory_options)

    def extracts_status(self, status: int) -> bool:
        """Whether a response with this HTTP status is extracted (2xx, and the statuses
        of TAGRATIO_EXTRACT_STATUSES): error pages are not the content of a site."""
        return 200 <= status < 300 or status in self.extract_statuses

    @classmethod
    def _validate(cls, raw: dict[str, Any]) -> TagRatioSettings:
        raw = {name: _none_spelled(name, value) for name, value in raw.items()}
        algorithm_name = _choice(
            "TAGRATIO_ALGORITHM", raw["TAGRATIO_ALGORITHM"], tuple(sorted(ALGORITHMS))
        )
        params = _params("TAGRATIO_PARAMS", raw["TAGRATIO_PARAMS"])
        try:
            algorithm = get_algorithm(algorithm_name).with_params(**params)
        except ExtractionError as exc:
            raise SettingsError(f"TAGRATIO_PARAMS: {exc}") from None
        action = _choice(
            "TAGRATIO_OVERVIEW_ACTION", raw["TAGRATIO_OVERVIEW_ACTION"], OVERVIEW_ACTIONS
        )
        detector = _NoOverviewDetection() if action == "off" else _detector(raw)
        fields = {
            name: _field(name, raw[name], optional=name != "TAGRATIO_SOURCE_FIELD")
            for name in (
                "TAGRATIO_TEXT_FIELD",
                "TAGRATIO_SCORES_FIELD",
                "TAGRATIO_HTML_FIELD",
                "TAGRATIO_SOURCE_FIELD",
            )
        }
        if raw["TAGRATIO_METADATA_FIELD"] is not None:
            fields["TAGRATIO_METADATA_FIELD"] = _field(
                "TAGRATIO_METADATA_FIELD", raw["TAGRATIO_METADATA_FIELD"]
            )
        named = [field for field in fields.values() if field]
        if len(set(named)) < len(named):
            raise SettingsError(f"{', '.join(fields)} must name different fields; got {fields}")
        max_bytes = _limit("TAGRATIO_MAX_BYTES", raw["TAGRATIO_MAX_BYTES"], integer=True)
        return cls(
            enabled=_bool("TAGRATIO_ENABLED", raw["TAGRATIO_ENABLED"]),
            algorithm=algorithm,
            overview_action=action,  # type: ignore[arg-type]  # checked by _choice
            detector=detector,
            text_field=fields["TAGRATIO_TEXT_FIELD"],
            scores_field=fields["TAGRATIO_SCORES_FIELD"],
            html_field=fields["TAGRATIO_HTML_FIELD"],
            attach_html=_bool("TAGRATIO_ATTACH_HTML", raw["TAGRATIO_ATTACH_HTML"]),
            attach_blocks=_bool("TAGRATIO_ATTACH_BLOCKS", raw["TAGRATIO_ATTACH_BLOCKS"]),
            text_format=_choice(  # type: ignore[arg-type]  # checked by _choice
                "TAGRATIO_TEXT_FORMAT", raw["TAGRATIO_TEXT_FORMAT"], TEXT_FORMATS
            ),
            metadata=_bool("TAGRATIO_METADATA", raw["TAGRATIO_METADATA"]),
            metadata_field=fields.get("TAGRATIO_METADATA_FIELD"),
            source_field=fields["TAGRATIO_SOURCE_FIELD"],
            workers=_workers(raw["TAGRATIO_WORKERS"]),
            max_bytes=int(max_bytes) if max_bytes is not None else None,
            time_budget=_limit("TAGRATIO_TIME_BUDGET", raw["TAGRATIO_TIME_BUDGET"], integer=False),
            extract_statuses=_statuses(
                "TAGRATIO_EXTRACT_STATUSES", raw["TAGRATIO_EXTRACT_STATUSES"]
            ),
            worker_timeout=_limit(
                "TAGRATIO_WORKER_TIMEOUT", raw["TAGRATIO_WORKER_TIMEOUT"], integer=False
            ),
            worker_max_tasks=_count("TAGRATIO_WORKER_MAX_TASKS", raw["TAGRATIO_WORKER_MAX_TASKS"])
            or None,
            site_memory=_bool("TAGRATIO_SITE_MEMORY", raw["TAGRATIO_SITE_MEMORY"]),
            site_memory_options=_site_memory_options(raw),
            site_memory_backend=_choice(  # type: ignore[arg-type]  # checked by _choice
                "TAGRATIO_SITE_MEMORY_BACKEND", raw["TAGRATIO_SITE_MEMORY_BACKEND"], BACKENDS
            ),
            site_memory_redis_key=_redis_key(raw["TAGRATIO_SITE_MEMORY_REDIS_KEY"]),
            site_memory_hold=_count("TAGRATIO_SITE_MEMORY_HOLD", raw["TAGRATIO_SITE_MEMORY_HOLD"]),
            site_memory_hold_seconds=_number(
                "TAGRATIO_SITE_MEMORY_HOLD_SECONDS",
                raw["TAGRATIO_SITE_MEMORY_HOLD_SECONDS"],
                integer=False,
            ),
            raw=raw,
        )


def _reject_unknown(names: list[str], known: Mapping[str, Any] | frozenset[str], what: str) -> None:
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise SettingsError(
            f"unknown {what} {', '.join(unknown)}; the {what}s are: {', '.join(sorted(known))}"
        )
