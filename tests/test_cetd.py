"""CETD pinned to its paper (Sun, Song and Liao, SIGIR 2011)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_tagratio import ExtractionError, extract, reader
from scrapy_tagratio.algorithms import get_algorithm
from scrapy_tagratio.algorithms.cetd import (
    CECTD,
    CETD,
    CECTDSmoothing,
    _subtree_argmax,
    composite_text_density,
    density_sum,
    extract_content,
    sibling_smoothing,
    text_density,
)
from scrapy_tagratio.document import Document
from scrapy_tagratio.reader import kernel_status

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
        nodes.chars,
        nodes.tags,
        nodes.link_chars,
        nodes.link_tags,
        float(nodes.chars[0]),
        float(nodes.link_chars[0]),
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


def test_composite_density_of_a_linkless_page_is_the_plain_logarithm_stand_in() -> None:
    chars = np.array([100, 60])
    tags = np.array([1, 0])
    zeros = np.zeros(2, dtype=int)
    ctd = composite_text_density(chars, tags, zeros, zeros, 100.0, 0.0)
    assert np.all(np.isfinite(ctd))
    assert ctd[1] == pytest.approx(60 * math.log(60))


_CHARS, _TAGS = st.integers(0, 5000), st.integers(0, 300)
_STATS = st.tuples(_CHARS, _CHARS, _TAGS, _TAGS)  # C, LC, T, LT (LC and LT capped below)


@given(st.lists(_STATS, min_size=1, max_size=40), st.sampled_from([0.0, 1.0, 7.0, 1e6]))
def test_composite_density_is_the_same_on_both_paths(
    stats: list[tuple[int, int, int, int]], body_chars: float
) -> None:
    """The kernel's terms (int32 statistics, one C pass) give the numpy path's doubles,
    bit for bit: the node table's densities, and the model's features, are the same."""
    chars, link_chars, tags, link_tags = (
        np.array(column, dtype=np.int32)
        for column in zip(*((c, min(lc, c), t, min(lt, t)) for c, lc, t, lt in stats), strict=True)
    )
    arguments = (chars, tags, link_chars, link_tags, body_chars, float(link_chars.sum()))

    def density_by(name: str) -> bytes:
        saved, reader.DEFAULT_READER = reader.DEFAULT_READER, name
        try:
            return composite_text_density(*arguments).tobytes()
        finally:
            reader.DEFAULT_READER = saved

    pure = density_by("target")
    assert (
        pure
        == composite_text_density(
            *(a.astype(np.int64) if isinstance(a, np.ndarray) else a for a in arguments)
        ).tobytes()
    )
    if kernel_status()[0]:
        assert density_by("kernel") == pure


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_density_terms_refuse_arrays_of_different_lengths() -> None:
    """The C pass reads every array at the first one's indices, unchecked otherwise."""
    from scrapy_tagratio import _kernel

    two, three = np.zeros(2, dtype=np.int32), np.zeros(3, dtype=np.int32)
    with pytest.raises(ValueError, match="one value of each per node"):
        _kernel.density_terms(three, two, three, three, 0.0)


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
        + "<p>"
        + "long paragraph text " * 20
        + "</p>" * 1
        + "<p>"
        + "another long paragraph " * 20
        + "</p>"
        + "</div></div></body>"
    )
    doc = Document.from_input(page)
    nodes = doc.nodes
    density = text_density(nodes.chars, nodes.tags)
    sums = density_sum(nodes, density)
    marked, threshold = extract_content(nodes, density, sums, lam=1.0)
    best = int(np.argmax(sums))
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


# A page whose weakest node on the path from the max-DensitySum node (the article) up to
# the body is a wrapper below the body (TD 96 < the body's 99.7).
WEAK_WRAPPER = (
    "<body><p>" + "a plain paragraph straight in the body " * 6 + "</p>"
    "<div class='wrap'>"
    + "".join(f"<span>{i}</span>" for i in range(6))
    + "<div class='article'><p>"
    + "long paragraph text " * 20
    + "</p>"
    "<p>" + "another long paragraph " * 20 + "</p></div></div></body>"
)


@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0, 1.02, 1.5])
def test_lambda_scales_the_threshold_in_actual_use(lam: float) -> None:
    # Section 5.5: "We set the threshold in actual use as the base value, and use a
    # coefficient lambda to adjust the threshold value"; the threshold in actual use is
    # the minimum density on the path from the max-DensitySum node to <body> (4.2).
    nodes = Document.from_input(WEAK_WRAPPER).nodes
    density = text_density(nodes.chars, nodes.tags)
    sums = density_sum(nodes, density)
    best = int(np.argmax(sums))
    path_min = float(density[nodes.ancestors_or_self(best)].min())
    assert path_min == pytest.approx(96.0) and density[0] > path_min
    _, threshold = extract_content(nodes, density, sums, lam)
    assert threshold == pytest.approx(lam * path_min)


def test_a_threshold_above_the_body_density_views_the_whole_page_as_noise() -> None:
    # 5.5: "the threshold must be lower than the text density of the <body> tag, otherwise
    # the whole page will be viewed as noise". 1.5 x 96 = 144 > 99.7.
    assert extract(WEAK_WRAPPER, algorithm="cetd", lam=1.0).text
    assert extract(WEAK_WRAPPER, algorithm="cetd", lam=1.5).text == ""


def test_lambda_zero_keeps_every_node_of_a_real_page(benchmark_set: Any) -> None:
    # 5.5: "When lambda = 0, the recall is always 100% because all nodes in DOM are
    # included." CleanEval is the paper's data; on main, six of these pages lost the text
    # directly inside containers. (The algorithm's own text: extract() then leaves out a
    # leading headline, which Extraction.title holds.)
    data = benchmark_set("cleaneval")
    for page in data.pages("cleaneval", 40):
        document = Document.from_input(page.html)
        for name in ("cetd", "cectd", "cectd-s"):
            algorithm = get_algorithm(name).with_params(lam=0.0)
            assert algorithm.run(document).text == document.full_text, name


def test_figure_5_recall_falls_and_precision_rises_as_lambda_grows(benchmark_set: Any) -> None:
    # Figure 5 (CECTD-DS, Yahoo!): "a marked increase in recall and a sharp decrease in
    # precision by reducing the threshold". Word-LCS precision and recall (5.2, Eq. 1),
    # averaged over 40 CleanEval pages (the paper's data), for lambda from 0 to 1.
    from benchmarks.metrics import lcs_scores, summarise_lcs

    data = benchmark_set("cleaneval")
    lambdas = (0.0, 0.25, 0.5, 0.75, 1.0)
    scores: dict[float, list[Any]] = {lam: [] for lam in lambdas}
    for page in data.pages("cleaneval", 40):
        document = Document.from_input(page.html)
        for lam in lambdas:
            text = CECTD(lam=lam).run(document).text
            scores[lam].append(lcs_scores(page.gold["body"], text))
    precision, recall = zip(*(summarise_lcs(scores[lam])[:2] for lam in lambdas), strict=True)
    assert all(a >= b for a, b in itertools.pairwise(recall)), recall
    assert all(a <= b for a, b in itertools.pairwise(precision)), precision
    assert recall[0] - recall[-1] > 0.01 and precision[-1] - precision[0] > 0.05


def test_a_page_without_links_is_all_content() -> None:
    # 3.2: "all tags of a web page which have no hyperlinks will get an infinite density.
    # Thus, we would classify such a page as not containing noise."
    page = (
        "<body><div class='menu'><span>Home</span> <span>About</span> <span>Contact</span>"
        "</div><div class='story'>"
        + "".join(f"<p>Paragraph {i} of a long story told in plain words.</p>" for i in range(8))
        + "</div></body>"
    )
    document = Document.from_input(page)
    assert document.nodes.link_chars[0] == 0
    assert CECTD().run(document).text == document.full_text
    assert CECTDSmoothing().run(document).text == document.full_text
    filtered = CECTD(linkless_page_is_content=False).run(document).text
    assert "Paragraph 7" in filtered and "Contact" not in filtered
    # One link character makes the densities finite again: the page is filtered.
    linked = Document.from_input(page.replace("<span>Home</span>", "<a href='/'>Home</a>"))
    assert "Contact" not in CECTD().run(linked).text


def test_ancestors_of_marked_nodes_keep_their_own_text() -> None:
    # 4.2: "we extract the content by keeping its ancestors and subtrees": the wrapper's
    # own text is kept with it (on main it was dropped).
    intro = "An introduction to the story below"
    document = Document.from_input(WEAK_WRAPPER.replace("<span>0</span>", f"<span>0</span>{intro}"))
    nodes = document.nodes
    density = text_density(nodes.chars, nodes.tags)
    marked, _ = extract_content(nodes, density, density_sum(nodes, density), 1.0)
    wrap = [hint.split()[:1] for hint in nodes.hint].index(["wrap"])
    assert not marked[wrap] and nodes.with_ancestors(marked)[wrap]
    assert intro in CETD().run(document).text


def _tree(climbs: list[int]) -> Any:
    """A node table of the tree whose node ``k + 1`` is the child of the node reached from
    node ``k`` by ``climbs[k]`` steps up (document order, as a parser builds it)."""
    parent, depth = [-1], [0]
    for climb in climbs:
        node = len(parent) - 1
        for _ in range(climb):
            node = max(parent[node], 0)
        parent.append(node)
        depth.append(depth[node] + 1)
    end = list(range(1, len(parent) + 1))
    for node in range(len(parent) - 1, 0, -1):
        end[parent[node]] = max(end[parent[node]], end[node])
    table = Document.from_input("<p>x</p>").nodes
    return dataclasses.replace(
        table,
        tag=("p",) * len(parent),
        parent=np.array(parent, dtype=np.int32),
        depth=np.array(depth, dtype=np.int32),
        end=np.array(end, dtype=np.int32),
    )


def _argmax_by(name: str, nodes: Any, values: np.ndarray) -> list[int]:
    saved, reader.DEFAULT_READER = reader.DEFAULT_READER, name
    try:
        return [int(i) for i in _subtree_argmax(nodes, values)]
    finally:
        reader.DEFAULT_READER = saved


_SUMS = st.sampled_from([0.0, -0.0, 1.0, 2.5, math.nan])  # ties, signed zeros, NaN


@given(st.lists(st.tuples(st.integers(0, 3), _SUMS), max_size=60), _SUMS)
def test_the_max_density_sum_node_of_each_subtree(
    spec: list[tuple[int, float]], root_value: float
) -> None:
    """Per subtree, the node of the bottom-up pass of the docstring (a child's best
    replaces its parent's only when strictly larger, children visited last to first) on
    trees with many ties; the kernel's one pass gives the numpy path's nodes, NaN too."""
    nodes = _tree([climb for climb, _ in spec])
    values = np.array([root_value, *(value for _, value in spec)])
    children: dict[int, list[int]] = {}
    for node, up in enumerate(nodes.parent.tolist()):
        children.setdefault(up, []).append(node)

    def best(node: int) -> int:
        found = node
        for child in reversed(children.get(node, [])):
            candidate = best(child)
            if values[candidate] > values[found]:
                found = candidate
        return found

    pure = _argmax_by("target", nodes, values)
    if not np.isnan(values).any():
        assert pure == [best(node) for node in range(len(values))]
    if kernel_status()[0]:
        assert _argmax_by("kernel", nodes, values) == pure


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_search_refuses_a_parent_after_its_child() -> None:
    """The C pass writes to ``best[parent[i]]`` unchecked otherwise."""
    from scrapy_tagratio import _kernel

    parent = np.array([-1, 0, 5], dtype=np.int32)  # node 2's parent is past the table
    with pytest.raises(ValueError, match="does not come before"):
        _kernel.subtree_argmax(parent, np.zeros(3), np.arange(3, dtype=np.int64))
