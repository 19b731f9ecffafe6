"""Which site a development page belongs to (``benchmarks.protocol.site_of``): the
site-grouped folds keep a site's pages on one side, so a page must not be put in a site
of many unrelated pages (a web archive's captures, trafilatura-eval's pages saved without
their address), nor two pages of one site in two sites."""

from __future__ import annotations

import pytest

from benchmarks.protocol import site_of


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://www.example.org/a/b.html", "example.org"),
        ("example.org/a", "example.org"),
        # A Wayback Machine capture: the archived site, with or without its scheme.
        (
            "https://web.archive.org/web/20160401095740/http://www.welpenkaufen24.de/",
            "welpenkaufen24.de",
        ),
        ("https://web.archive.org/web/20130307194448/the-pain.net/2008/05/a.html", "the-pain.net"),
        # trafilatura-eval's pages saved without their address: the host the name starts with.
        ("hard::iwr.de.IWR-Pressedienst.html", "iwr.de"),
        ("hard::nationnews.com-schools.html", "nationnews.com"),
        ("hard::jamaica.gleaner.com-victims.html", "jamaica.gleaner.com"),
        ("hard::laestrella.com.pa-laboral.html", "laestrella.com.pa"),
        ("hard::mercurynews.com.2023.01.16.letters-1119.html", "mercurynews.com"),
        # A slug word that is also a suffix does not lengthen the host.
        ("hard::example.com.news.html", "example.com"),
        ("hard::notahost.html", None),
        (None, None),
    ],
)
def test_site_of(url: str | None, site: str | None) -> None:
    assert site_of(url) == site


def test_two_saved_pages_of_one_site_share_it() -> None:
    assert site_of("hard::nationnews.com-schools.html") == site_of(
        "hard::nationnews.com-tridents.html"
    )
