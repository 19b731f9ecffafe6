"""CETD pinned to its paper (Sun, Song and Liao, SIGIR 2011)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scrapy_tagratio import ExtractionError, extract
from scrapy_tagratio.algorithms.cetd import (
    CETD,
    composite_text_density,
    density_sum,
    extract_content,
    sibling_smoothing,
    text_density,
)
from scrapy_tagratio.document import Document

# Example 1 of the paper, with texts of the lengths Example 2 states: the headline has
# 46 characters, the body 39 of which the link 15.
HEADLINE = "South Korea to Hold Artillery Drills on Island"
BODY_TEXT = "The announcement came as"  # 24 characters + the 15 of the link = 39
EXAMPLE_1 = (
    '<body><div class="main"><div class="article">'
    f'<div class="articleHeadline">{HEADLINE}</div>'
    f'<div class="articleBody">{BODY_TEXT} <a>Bill Richardson</a></div>'
    "</div></div></body>"
)


def example_nodes() -> tuple[Document, dict[str, int]]:
    doc = Document.from_input(EXAMPLE_1)
    names = {"body": 0}
    for i, hint in enumerate(doc.nodes.hint):
        for name in ("main", "article", "articleheadline", "articlebody"):
            if hint.split() and hint.split()[0] == name:
                names[name] = i
    names["a"] = doc.nodes.tag.index("a")
    return doc, names


def test_example_2_text_densities() -> None:
    assert len(HEADLINE) == 46 and len(BODY_TEXT) + len("Bill Richardson") == 39
    doc, at = example_nodes()
    nodes = doc.nodes
    expected = {  # (chars, tags, density) of Example 2
        "main": (85, 4, 21.25),
        "article": (85, 3, 85 / 3),
        "articleheadline": (46, 1, 46.0),
        "articlebody": (39, 1, 39.0),
        "a": (15, 1, 15.0),
    }
    density = text_density(nodes.chars, nodes.tags)
    for name, (chars, tags, td) in expected.items():
        i = at[name]
        assert nodes.chars[i] == chars, name
        assert max(nodes.tags[i], 1) == tags, name
        assert density[i] == pytest.approx(td), name
    assert density[at["article"]] == pytest.approx(28.33, abs=0.005)


def test_composite_density_is_definition_2() -> None:
    doc, at = example_nodes()
    nodes = doc.nodes
    ctd = composite_text_density(
        nodes.chars, nodes.tags, nodes.link_chars, nodes.link_tags,
        float(nodes.chars[0]), float(nodes.link_chars[0]),
    )
    # articleBody: C = 39, T = 1, LC = 15, LT = 1; body: Cb = 85, LCb = 15.
    c, t, lc, lt, cb, lcb = 39, 1, 15, 1, 85, 15
    base = math.log(c / (c - lc) * lc + lcb / cb * c + math.e)
    expected = c / t * math.log(c / lc * t / lt) / math.log(base)
    assert ctd[at["articlebody"]] == pytest.approx(expected)
    # "a node's density will be zero if there are only hyperlinks in its subtree"
    assert ctd[at["a"]] == 0.0
    # headline: no links, LC = 0 -> 1: C/T * log_{ln(LCb/Cb*C + e)}(C*T)
    c = 46
    expected = c * math.log(c) / math.log(math.log(lcb / cb * c + math.e))
    assert ctd[at["articleheadline"]] == pytest.approx(expected)


def test_page_without_links_uses_plain_logarithm() -> None:
    chars = np.array([100, 60])
    tags = np.array([1, 0])
    zeros = np.zeros(2, dtype=int)
    ctd = composite_text_density(chars, tags, zeros, zeros, 100.0, 0.0)
    assert np.all(np.isfinite(ctd))
    assert ctd[1] == pytest.approx(60 * math.log(60))


def test_density_sum_is_the_sum_of_children() -> None:
    doc, at = example_nodes()
    density = text_density(doc.nodes.chars, doc.nodes.tags)
    sums = density_sum(doc.nodes, density)
    assert sums[at["article"]] == pytest.approx(46 + 39)
    assert sums[at["main"]] == pytest.approx(85 / 3)
    assert sums[at["a"]] == 0


def test_threshold_is_lowered_along_the_max_densitysum_path() -> None:
    # body density 21.25/... : the article (max DensitySum) sits under a weak wrapper.
    page = (
        "<body><div class='nav'>" + "<a>x</a>" * 30 + "</div>"
        "<div class='wrap'><div class='article'>"
        + "<p>" + "long paragraph text " * 20 + "</p>" * 1
        + "<p>" + "another long paragraph " * 20 + "</p>"
        + "</div></div></body>"
    )
    doc = Document.from_input(page)
    nodes = doc.nodes
    density = text_density(nodes.chars, nodes.tags)
    marked, threshold = extract_content(nodes, density, lam=1.0)
    best = int(np.argmax(density_sum(nodes, density)))
    on_path = np.zeros(len(nodes), dtype=bool)
    on_path[best] = True
    path_min = density[nodes.with_ancestors(on_path)].min()
    assert threshold == pytest.approx(min(density[0], path_min))
    text = doc.text_of(nodes.with_descendants(marked))
    assert "long paragraph text" in text and "another long paragraph" in text
    assert "x" not in text.split()


def test_sibling_smoothing_weights() -> None:
    doc = Document.from_input("<body><p>a</p><p>bb</p><p>cccc</p></body>")
    values = np.array([0.0, 4.0, 8.0, 16.0])
    smoothed = sibling_smoothing(doc.nodes, values)
    assert smoothed[0] == 0.0  # the root has no siblings
    assert smoothed[1] == pytest.approx((2 * 4 + 8) / 3)
    assert smoothed[2] == pytest.approx((4 + 2 * 8 + 16) / 4)
    assert smoothed[3] == pytest.approx((8 + 2 * 16) / 3)


@pytest.mark.parametrize("name", ["cetd", "cectd", "cectd-s"])
def test_variants_find_the_article_and_leave_the_menu(name: str) -> None:
    page = (
        "<html><body><ul class='menu'>"
        + "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(15))
        + "</ul><div class='story'><h1>Storm hits the coast</h1>"
        + "".join(
            f"<p>Paragraph {i} of the story tells what happened on the coast during the "
            "night, when the storm reached the harbour and boats broke loose.</p>"
            for i in range(6)
        )
        + "</div><div class='footer'><a href='/imprint'>Imprint</a> <a href='/p'>Privacy</a>"
        "</div></body></html>"
    )
    result = extract(page, algorithm=name)
    assert "Paragraph 5 of the story" in result.text
    assert "Section 3" not in result.text
    assert "Imprint" not in result.text
    assert result.html is not None and "<p>" in result.html


def test_bad_parameters_name_themselves() -> None:
    with pytest.raises(ExtractionError, match="'density'"):
        CETD(density="tf")
    with pytest.raises(ExtractionError, match="'lam'"):
        extract("<p>x</p>", algorithm="cectd", lam="high")
