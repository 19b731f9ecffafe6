"""TAGRATIO_* settings: defaults, command-line string forms, a clear error for every bad
value, per-request overrides, and the add-on's component list."""

from __future__ import annotations

import math
from typing import Any

import pytest
from scrapy.settings import Settings

from scrapy_tagratio import ALGORITHMS, DEFAULT_ALGORITHM, extract
from scrapy_tagratio.addon import Addon
from scrapy_tagratio.middlewares import TagRatioDownloaderMiddleware, TagRatioSpiderMiddleware
from scrapy_tagratio.overview import OverviewDetector
from scrapy_tagratio.settings import (
    MAX_WORKERS_PER_CPU,
    SettingsError,
    TagRatioSettings,
    usable_cpus,
)


def settings_of(**values: Any) -> TagRatioSettings:
    return TagRatioSettings.from_settings(Settings(values))


def test_defaults() -> None:
    s = settings_of()
    assert s.enabled is True
    assert s.algorithm == ALGORITHMS[DEFAULT_ALGORITHM]()
    assert s.overview_action == "drop"
    assert s.detector == OverviewDetector()
    assert (s.text_field, s.scores_field, s.html_field) == ("main_text", "tagratio", "main_html")
    assert s.source_field == "raw_html"
    assert (s.attach_html, s.attach_blocks, s.workers) == (False, False, 0)
    assert (s.max_bytes, s.time_budget) == (5_000_000, 5.0)
    assert s.item_fields == ("main_text", "tagratio")


def test_command_line_strings_are_parsed() -> None:
    # scrapy crawl -s NAME=VALUE gives strings.
    s = settings_of(
        TAGRATIO_ENABLED="false",
        TAGRATIO_WORKERS="2",
        TAGRATIO_ALGORITHM="cetr",
        TAGRATIO_PARAMS='{"lam": 0.5, "sigma": 2.0}',
        TAGRATIO_MAX_BYTES="0",
        TAGRATIO_TIME_BUDGET="0.25",
        TAGRATIO_ATTACH_BLOCKS="1",
        TAGRATIO_MIN_NET_TEXT_LENGTH="123",
        TAGRATIO_OVERVIEW_THRESHOLD="0.7",
        TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD="0.3",
        TAGRATIO_OVERVIEW_EVIDENCE="net-text",
    )
    assert s.enabled is False and s.workers == 2 and s.attach_blocks is True
    assert s.algorithm == ALGORITHMS["cetr"].with_params(lam=0.5, sigma=2.0)
    assert s.max_bytes is None  # 0: no limit
    assert s.time_budget == 0.25
    assert s.detector == OverviewDetector(
        min_net_text_length=123, threshold=0.7, uncertain_threshold=0.3, evidence="net-text"
    )
    assert s.detector.thresholds == (0.7, 0.3)
    assert s.options.time_budget == 0.25 and s.options.keep_blocks is True


def test_none_on_the_command_line_is_the_default() -> None:
    """``scrapy crawl -s NAME=None`` gives the string "None": for a setting whose default
    is None it is that default, not a field named "None" nor a bad number."""
    cmdline = Settings()
    for name in (
        "TAGRATIO_METADATA_FIELD",
        "TAGRATIO_MIN_NET_TEXT_LENGTH",
        "TAGRATIO_OVERVIEW_THRESHOLD",
        "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD",
        "TAGRATIO_SITE_MEMORY_MIN_PAGES",
    ):
        cmdline.set(name, "None", priority="cmdline")
    s = TagRatioSettings.from_settings(cmdline)
    default = settings_of()
    assert s.metadata_field is None and s.item_fields == default.item_fields
    assert s.detector == default.detector
    assert s.site_memory_options == default.site_memory_options
    # A field setting whose default is a name: "None" could mean that default or no
    # field, and a field named "None" is never meant; one line says what to give.
    for name in ("TAGRATIO_TEXT_FIELD", "TAGRATIO_SCORES_FIELD", "TAGRATIO_SOURCE_FIELD"):
        cmdline = Settings()
        cmdline.set(name, "None", priority="cmdline")
        with pytest.raises(SettingsError, match=f"{name} must be .*; got 'None'"):
            TagRatioSettings.from_settings(cmdline)


ALL_ALGORITHMS = ", ".join(repr(name) for name in sorted(ALGORITHMS))


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("TAGRATIO_ENABLED", "maybe", "TAGRATIO_ENABLED must be True or False"),
        ("TAGRATIO_ALGORITHM", "x", f"TAGRATIO_ALGORITHM must be one of {ALL_ALGORITHMS}; got 'x'"),
        ("TAGRATIO_PARAMS", {"nope": 1}, "TAGRATIO_PARAMS: unknown parameter(s) nope for"),
        ("TAGRATIO_PARAMS", "{not json", "TAGRATIO_PARAMS must be a dict (or a JSON object)"),
        ("TAGRATIO_PARAMS", [1, 2], "TAGRATIO_PARAMS must be a dict (or a JSON object)"),
        (
            "TAGRATIO_OVERVIEW_ACTION",
            "delete",
            "TAGRATIO_OVERVIEW_ACTION must be one of 'drop', 'tag', 'ignore', 'off'; got 'delete'",
        ),
        ("TAGRATIO_MIN_NET_TEXT_LENGTH", -5, "TAGRATIO_MIN_NET_TEXT_LENGTH must be an integer"),
        ("TAGRATIO_MIN_NET_TEXT_LENGTH", 0, "TAGRATIO_MIN_NET_TEXT_LENGTH: parameter"),
        ("TAGRATIO_OVERVIEW_THRESHOLD", 1.5, "TAGRATIO_OVERVIEW_THRESHOLD must be a number from 0"),
        (
            "TAGRATIO_OVERVIEW_THRESHOLD",
            "high",
            "TAGRATIO_OVERVIEW_THRESHOLD must be a number from 0 to 1 (None: the model file's); "
            "got 'high'",
        ),
        (
            "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD",
            -0.1,
            "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD must be a number from 0 to 1",
        ),
        (
            "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD",
            1.0,  # above the model's drop threshold
            "TAGRATIO_OVERVIEW_UNCERTAIN_THRESHOLD: parameter 'uncertain_threshold' (1.0) must",
        ),
        (
            "TAGRATIO_OVERVIEW_EVIDENCE",
            "links",
            "TAGRATIO_OVERVIEW_EVIDENCE must be one of 'combined', 'net-text'; got 'links'",
        ),
        ("TAGRATIO_TEXT_FIELD", " ", "TAGRATIO_TEXT_FIELD must be an item field name or ''"),
        ("TAGRATIO_SCORES_FIELD", 3, "TAGRATIO_SCORES_FIELD must be an item field name or ''"),
        ("TAGRATIO_SOURCE_FIELD", "", "TAGRATIO_SOURCE_FIELD must be a non-empty item field"),
        ("TAGRATIO_EXTRACT_STATUSES", "4o4", "TAGRATIO_EXTRACT_STATUSES must be a list of HTTP"),
        ("TAGRATIO_EXTRACT_STATUSES", [99], "TAGRATIO_EXTRACT_STATUSES must be a list of HTTP"),
        ("TAGRATIO_EXTRACT_STATUSES", "[404,", "TAGRATIO_EXTRACT_STATUSES must be a list of HTTP"),
        ("TAGRATIO_EXTRACT_STATUSES", '["x"]', "TAGRATIO_EXTRACT_STATUSES must be a list of HTTP"),
        ("TAGRATIO_WORKER_TIMEOUT", -1, "TAGRATIO_WORKER_TIMEOUT must be a number >= 0"),
        ("TAGRATIO_WORKER_MAX_TASKS", 0.5, "TAGRATIO_WORKER_MAX_TASKS must be an integer >= 0"),
        ("TAGRATIO_SCORES_FIELD", "main_text", "must name different fields"),
        ("TAGRATIO_ATTACH_HTML", "yes please", "TAGRATIO_ATTACH_HTML must be True or False"),
        ("TAGRATIO_WORKERS", "many", "TAGRATIO_WORKERS must be an integer >= 0; got 'many'"),
        ("TAGRATIO_WORKERS", -1, "TAGRATIO_WORKERS must be an integer >= 0; got -1"),
        ("TAGRATIO_WORKERS", 1.5, "TAGRATIO_WORKERS must be an integer >= 0; got 1.5"),
        ("TAGRATIO_WORKERS", True, "TAGRATIO_WORKERS must be an integer >= 0; got True"),
        ("TAGRATIO_MAX_BYTES", "10MB", "TAGRATIO_MAX_BYTES must be an integer >= 0"),
        ("TAGRATIO_TIME_BUDGET", "nan", "TAGRATIO_TIME_BUDGET must be a number >= 0"),
        ("TAGRATIO_TIME_BUDGET", -1.0, "TAGRATIO_TIME_BUDGET must be a number >= 0"),
        ("TAGRATIO_ALGORITM", "cetr", "unknown setting TAGRATIO_ALGORITM; the settings are:"),
        # "no limit" spelled inf read "must be a number >= 0; got inf": 0 is no limit
        ("TAGRATIO_TIME_BUDGET", "inf", "TAGRATIO_TIME_BUDGET must be a number >= 0 (0: no limit)"),
        ("TAGRATIO_WORKER_TIMEOUT", math.inf, "must be a number >= 0 (0: no limit); got inf"),
        ("TAGRATIO_MAX_BYTES", "-1", "TAGRATIO_MAX_BYTES must be an integer >= 0 (0: no limit)"),
    ],
)
def test_bad_value_names_the_setting_and_allowed_values(
    name: str, value: Any, message: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        settings_of(**{name: value})
    assert message in str(caught.value)


def test_workers_are_bounded_by_the_cpus() -> None:
    # TAGRATIO_WORKERS=1000000 (a typo) was accepted: the pool started interpreters until
    # the machine gave out, no page was extracted, and Ctrl-C could not end the crawl.
    limit = MAX_WORKERS_PER_CPU * usable_cpus()
    assert settings_of(TAGRATIO_WORKERS=limit).workers == limit
    for too_many in (limit + 1, 1_000_000, str(limit + 1)):
        with pytest.raises(SettingsError) as caught:
            settings_of(TAGRATIO_WORKERS=too_many)
        assert f"TAGRATIO_WORKERS must be an integer from 0 to {limit}" in str(caught.value)
        assert f"got {int(too_many)}" in str(caught.value)


def test_empty_text_or_scores_field_leaves_it_out() -> None:
    assert settings_of(TAGRATIO_SCORES_FIELD="").item_fields == ("main_text",)
    assert settings_of(TAGRATIO_TEXT_FIELD="", TAGRATIO_SCORES_FIELD="").item_fields == ()
    both_off = settings_of(TAGRATIO_TEXT_FIELD="", TAGRATIO_SCORES_FIELD="", TAGRATIO_ATTACH_HTML=1)
    assert both_off.item_fields == ("main_html",)


def test_extracted_statuses() -> None:
    default = settings_of()
    assert [default.extracts_status(s) for s in (200, 204, 299, 301, 404, 500)] == [
        True, True, True, False, False, False
    ]  # fmt: skip
    listed = settings_of(TAGRATIO_EXTRACT_STATUSES=" 404, 410")
    assert listed.extract_statuses == {404, 410} and listed.extracts_status(410)
    assert settings_of(TAGRATIO_EXTRACT_STATUSES=[500]).extract_statuses == {500}
    # The JSON spelling of the command line (-s TAGRATIO_EXTRACT_STATUSES=[404,410]).
    assert settings_of(TAGRATIO_EXTRACT_STATUSES=" [404, 410]").extract_statuses == {404, 410}


def test_bad_algorithm_parameter_value_is_reported_by_the_algorithm() -> None:
    with pytest.raises(SettingsError, match=r"^TAGRATIO_PARAMS: parameter 'lam'"):
        settings_of(TAGRATIO_ALGORITHM="cetd", TAGRATIO_PARAMS={"lam": "high"})


def test_spider_custom_settings_take_priority() -> None:
    settings = Settings({"TAGRATIO_OVERVIEW_ACTION": "tag"})
    settings.setdict({"TAGRATIO_OVERVIEW_ACTION": "ignore"}, priority="spider")
    assert TagRatioSettings.from_settings(settings).overview_action == "ignore"


def test_per_request_overrides() -> None:
    crawl = settings_of(TAGRATIO_ALGORITHM="cectd", TAGRATIO_PARAMS={"lam": 0.8})
    assert crawl.with_overrides(None) is crawl and crawl.with_overrides({}) is crawl
    tagged = crawl.with_overrides({"TAGRATIO_OVERVIEW_ACTION": "tag", "TAGRATIO_TEXT_FIELD": "t"})
    assert (tagged.overview_action, tagged.text_field) == ("tag", "t")
    assert tagged.algorithm == crawl.algorithm  # the crawl's parameters stay
    # A different algorithm alone: the crawl's parameters (for its algorithm) are dropped.
    cetr = crawl.with_overrides({"TAGRATIO_ALGORITHM": "cetr"})
    assert cetr.algorithm == ALGORITHMS["cetr"]()
    cetr_params = crawl.with_overrides({"TAGRATIO_ALGORITHM": "cetr", "TAGRATIO_PARAMS": {"q": 4}})
    assert cetr_params.algorithm == ALGORITHMS["cetr"].with_params(q=4)
    with pytest.raises(SettingsError, match="unknown per-request setting TAGRATIO_WORKERS"):
        crawl.with_overrides({"TAGRATIO_WORKERS": 2})
    with pytest.raises(SettingsError, match="TAGRATIO_TIME_BUDGET must be a number >= 0"):
        crawl.with_overrides({"TAGRATIO_TIME_BUDGET": "soon"})
    with pytest.raises(SettingsError, match=r"meta\['tagratio_settings'\] must be a dict"):
        crawl.with_overrides(["TAGRATIO_ENABLED"])  # type: ignore[arg-type]
    # Keys that are not names (a TypeError from sorting them escaped the downloader
    # middleware, which fails the page as a download error: its items were lost).
    for keys in ({1: 2, "TAGRATIO_X": 3}, {("TAGRATIO_ENABLED",): False}):
        with pytest.raises(SettingsError, match=r"meta\['tagratio_settings'\] must be a dict"):
            crawl.with_overrides(keys)


LINK_LIST = (
    "<html><body><ul>"
    + "".join(f'<li><a href="/p/{i}">Harbour story number {i} of today</a></li>' for i in range(60))
    + "</ul></body></html>"
)


def test_overview_action_off_turns_detection_off() -> None:
    assert extract(LINK_LIST, overview=settings_of().detector).is_overview is True
    off = extract(LINK_LIST, overview=settings_of(TAGRATIO_OVERVIEW_ACTION="off").detector)
    assert off.is_overview is False
    assert off.overview_reasons == ("overview detection off",)


def test_addon_leaves_other_packages_paths_to_scrapy() -> None:
    # Scrapy never loads a path switched off with None; the add-on loaded every listed
    # path, so a stale one of another package (NameError) stopped the crawl.
    settings = Settings({"SPIDER_MIDDLEWARES": {"oldproject.middlewares.Gone": None}})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES") == {
        "oldproject.middlewares.Gone": None,
        TagRatioSpiderMiddleware: 950,
    }


def test_addon_names_the_components_when_one_of_its_paths_does_not_load() -> None:
    settings = Settings({"ITEM_PIPELINES": {"scrapy_tagratio.TagRatioPipeline": None}})
    with pytest.raises(SettingsError) as caught:
        Addon().update_settings(settings)
    message = str(caught.value)
    assert message.startswith("ITEM_PIPELINES lists 'scrapy_tagratio.TagRatioPipeline'")
    assert "scrapy_tagratio.pipelines.TagRatioPipeline" in message


def test_addon_adds_the_three_components() -> None:
    settings = Settings({"ITEM_PIPELINES": {"scrapy_tagratio.pipelines.TagRatioPipeline": 700}})
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {TagRatioDownloaderMiddleware: 540}
    assert settings.getdict("SPIDER_MIDDLEWARES") == {TagRatioSpiderMiddleware: 950}
    # A component the project already lists keeps the project's priority.
    assert settings.getdict("ITEM_PIPELINES") == {"scrapy_tagratio.pipelines.TagRatioPipeline": 700}


class ProjectDownloaderMiddleware(TagRatioDownloaderMiddleware):
    """A project's own subclass, listed in its settings."""


def test_addon_takes_a_listed_subclass_for_the_component() -> None:
    # The add-on added ours beside the subclass: each page was extracted twice.
    path = f"{__name__}.ProjectDownloaderMiddleware"
    settings = Settings({"DOWNLOADER_MIDDLEWARES": {path: 545}})
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {path: 545}
    assert settings.getdict("SPIDER_MIDDLEWARES") == {TagRatioSpiderMiddleware: 950}


def test_none_means_no_limit_and_no_field_in_the_settings_as_in_a_request() -> None:
    # Scrapy's Settings.get gives the default for None: TAGRATIO_MAX_BYTES = None kept
    # the 5 MB limit and TAGRATIO_SCORES_FIELD = None the scores, where the same values
    # in meta["tagratio_settings"] lifted the limit and left the field out.
    nones = {
        "TAGRATIO_MAX_BYTES": None,
        "TAGRATIO_TIME_BUDGET": None,
        "TAGRATIO_TEXT_FIELD": None,
        "TAGRATIO_SCORES_FIELD": None,
        "TAGRATIO_HTML_FIELD": None,
    }
    configured = settings_of(**nones, TAGRATIO_WORKER_TIMEOUT=None)
    requested = settings_of().with_overrides(nones)
    for s in (configured, requested):
        assert (s.max_bytes, s.time_budget) == (None, None)
        assert (s.text_field, s.scores_field, s.html_field) == ("", "", "")
    assert configured.worker_timeout is None
    # Where None has no meaning of its own it is still the default, as Scrapy reads it.
    assert settings_of(TAGRATIO_WORKERS=None, TAGRATIO_ENABLED=None).workers == 0
    assert settings_of(TAGRATIO_ENABLED=None).enabled is True
