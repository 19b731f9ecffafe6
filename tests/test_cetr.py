"""CETR (Weninger, Hsu and Han 2010) pinned to the papers' examples, its re-wrap, its
parameters and real pages of the development set."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import time
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks import _data
from scrapy_tagratio import extract
from scrapy_tagratio.algorithms import ALGORITHMS
from scrapy_tagratio.algorithms.cetr import CETR, line_table, tag_ratios, wrap_breaks
from scrapy_tagratio.clustering import CLUSTERINGS, MODES
from scrapy_tagratio.document import Document
from scrapy_tagratio.errors import ExtractionError

VARIANTS = [
    (c, m) for c, m in itertools.product(CLUSTERINGS, MODES) if (c, m) != ("threshold", "density")
]

# The paper's table of tag ratios, as source lines with indentation and trailing space
# (which count nothing) and the 'Text' and 'Tags' columns.
TABLE = [
    ('<div id="topnav">', 0, 1, 0.0),
    ('<div id="storyPageContent2">', 0, 1, 0.0),
    ('  <div id="author">James Smith</div>', 11, 2, 5.5),
    ("    OKLAHOMA CITY - Police were told that  ", 37, 0, 37.0),
    ("The Oklahoman reported Sunday. <br><br> Jones had\r", 41, 2, 20.5),
    ("</div></div>", 0, 2, 0.0),
]


def lines_of(html: str, **params: Any) -> Any:
    return line_table(Document.from_input(html).source, **params)


def test_tag_ratio_table_of_the_paper() -> None:
    html = "<html><body>\n" + "\r\n".join(row[0] for row in TABLE) + "\n</body></html>"
    lines = lines_of(html)
    # Line 0 is "<body>", the last "</body></html>".
    assert lines.chars[1:-1].tolist() == [row[1] for row in TABLE]
    assert lines.tags[1:-1].tolist() == [row[2] for row in TABLE]
    assert tag_ratios(lines.chars, lines.tags)[1:-1].tolist() == [row[3] for row in TABLE]


def test_white_space_counts_once_per_run_between_words() -> None:
    # "a", a run of 3 spaces (one), "b", then three runs parted by the tags <i> and </i>
    # (one each, as the table's "Sunday. <br><br> Jones" counts both spaces), "c"; the
    # runs before the first word and after the last count nothing.
    lines = lines_of("<body>\n   a   b <i>  </i> c   \n</body>")
    assert lines.chars[1] == 3 + 1 + 3
    assert lines.tags[1] == 2


def test_a_tag_over_several_lines_belongs_to_the_line_where_it_starts() -> None:
    lines = lines_of('<body>\n<a\n  href="/x"\n  class="y">Link text</a> after\n</body>')
    assert lines.chars.tolist() == [0, 15, 0]
    assert lines.tags.tolist() == [1, 2, 1]


def test_link_characters_are_counted_per_line() -> None:
    lines = lines_of('<body>\n<p>Read <a href="/x">the full story</a> now</p>\n</body>')
    assert lines.chars[1] == len("Read the full story now")
    assert lines.link_chars[1] == len("the full story")


# ---------------------------------------------------------------- re-wrap (the FAQ)


NO_WORD_BREAKS = np.zeros(0, dtype=np.int64)


def test_a_break_inside_a_tag_moves_past_the_end_of_the_tag() -> None:
    text = "x" * 55 + '<a href="/somewhere/far">' + "y" * 100
    tag_start, tag_end = 55, 55 + len('<a href="/somewhere/far">')
    breaks = wrap_breaks(
        np.array([0]),
        np.array([len(text)]),
        np.array([tag_start]),
        np.array([tag_end]),
        NO_WORD_BREAKS,
        wrap=60,
        wrap_above=60,
    )
    # The 60th character is inside the tag: the first break goes right after it (80),
    # then every 60 characters.
    assert breaks.tolist() == [tag_end, tag_end + 60]


def test_a_break_moves_on_to_the_next_word_boundary_within_reach() -> None:
    # Words of 7 letters and a space: boundaries (the spaces) at 7, 15, 23, ...
    text = "abcdefg " * 40
    spaces = np.array([i for i, ch in enumerate(text) if ch == " "])
    breaks = wrap_breaks(
        np.array([0]),
        np.array([len(text)]),
        NO_WORD_BREAKS,
        NO_WORD_BREAKS,
        spaces,
        wrap=60,
        wrap_above=60,
    )
    # 60 falls in the word at 56..62: the break goes to the space at 63, the next count
    # ends at 123, inside the word 120..126, so the break goes to 127, then 191, 255 and
    # 319 (the last space of the 320 characters).
    assert breaks.tolist() == [63, 127, 191, 255, 319]
    assert all(text[cut] == " " for cut in breaks)
    # Without a boundary within 60 characters (text without spaces) the cut stays.
    far = np.array([200])
    breaks = wrap_breaks(
        np.array([0]),
        np.array([300]),
        NO_WORD_BREAKS,
        NO_WORD_BREAKS,
        far,
        wrap=60,
        wrap_above=60,
    )
    assert breaks.tolist() == [60, 120, 200, 260]


def test_short_lines_are_not_wrapped() -> None:
    breaks = wrap_breaks(
        np.array([0, 101]),
        np.array([100, 150]),
        NO_WORD_BREAKS,
        NO_WORD_BREAKS,
        NO_WORD_BREAKS,
        wrap=60,
        wrap_above=200,
    )
    assert breaks.size == 0


def one_line_page(paragraphs: int) -> str:
    para = (
        '<p class="story">The council met on Tuesday to discuss the new budget, which '
        'includes <a href="/roads">money for roads</a> and schools.</p>'
    )
    nav = '<li><a href="/section/a">Section</a></li>'
    return (
        "<html><body><ul>"
        + nav * 40
        + "</ul><div>"
        + para * paragraphs
        + "</div><ul>"
        + nav * 40
        + "</ul></body></html>"
    )


def test_a_one_line_page_is_split_never_inside_a_tag() -> None:
    html = one_line_page(30)
    document = Document.from_input(html)
    source = document.source
    assert "\n" not in source.text
    lines = line_table(source)
    assert len(lines) > len(source.text) // 100  # pieces of 60 to 120 characters
    for cut in lines.starts[1:].tolist():
        inside = (source.tag_starts < cut) & (cut < source.tag_ends)
        assert not inside.any()
        # ... nor inside a word: a space or a tag ("<p>", "</p>" here) on either side.
        assert source.text[cut - 1] in " >" or source.text[cut] in " <"
    pieces = lines.ends - lines.starts
    assert (pieces[:-1] >= 60).all()  # a break only ever moves forward ...
    longest_tag = int((source.tag_ends - source.tag_starts).max())
    assert (pieces < 60 + longest_tag + 60).all()  # ... and not far: a tag, then a word
    # ... and the result reads as the paragraphs, with the navigation left out.
    result = CETR().run(document)
    assert "The council met on Tuesday to discuss the new budget" in result.text
    assert "money for roads and schools." in result.text
    # The navigation is left out but for the pieces next to the story that the smoothing
    # (radius 3) lifts: at most 3 pieces of about 60 characters (1-2 links) on each side.
    assert result.text.count("Section") <= 12


def test_a_page_with_many_head_lines_and_one_huge_body_line_is_wrapped() -> None:
    head = "<html>\n<head>\n" + "\n".join(f'<meta name="m{i}" content="x">' for i in range(200))
    html = head + "\n</head>\n" + one_line_page(30)[len("<html>") :]
    lines = lines_of(html)
    # The source view starts at <body>: line 0 is the whole body, cut into pieces.
    assert np.count_nonzero(lines.starts < len(html) - len(head)) > 50


def test_a_five_megabyte_one_line_page_takes_under_two_seconds() -> None:
    html = one_line_page(40_000)
    assert len(html) > 5_000_000
    started = time.process_time()  # this process's CPU time: other jobs do not count
    result = CETR().run(Document.from_input(html))  # parse, source view, CETR
    assert time.process_time() - started < 2.0
    assert "money for roads" in result.text
    assert len(result.block_scores) > 80_000


# ---------------------------------------------------------------- the algorithm


WORDS = "The committee heard evidence from residents about flooding in the valley "


def menu(label: str) -> list[str]:
    """40 menu entries, three source lines each, as templates write them."""
    return [
        line
        for i in range(40)
        for line in ('<li class="menu">', f'<a href="/{label}{i}">{label}{i:02d}</a>', "</li>")
    ]


def article_page() -> str:
    """Menu, 12 paragraph lines, footer: the shape of the paper's Figure 1."""
    paragraphs = [f"<p>{WORDS * 2}<a href='/r{i}'>report {i:02d}</a>.</p>" for i in range(12)]
    return "\n".join(
        [
            "<html><body>",
            "<ul>",
            *menu("Nav"),
            "</ul>",
            *paragraphs,
            "<ul>",
            *menu("Foot"),
            "</ul>",
            "</body></html>",
        ]
    )


@pytest.mark.parametrize(("clustering", "mode"), VARIANTS)
def test_every_variant_finds_the_paragraphs_of_a_clear_page(clustering: str, mode: str) -> None:
    result = CETR(clustering=clustering, mode=mode).run(Document.from_input(article_page()))
    assert result.text.count("The committee heard evidence") == 24
    assert "Nav05" not in result.text and "Foot35" not in result.text


def test_labelling_figures_are_the_characters_of_the_content_lines() -> None:
    result = CETR().run(Document.from_input(article_page()))
    scores = result.block_scores
    assert scores.kind == "line"
    assert len(scores) == len(scores.labels) == len(scores.text_lengths)
    # By hand, line by line: "<body>", "<ul>", the menu (an entry is '<li ...>', a link
    # "Nav07" of 5 characters, '</li>'), "</ul>", the paragraphs (twice the words, their
    # spaces included as each lies between two words, then the link "report 07" and "."),
    # "<ul>", the footer (links "Foot07" of 6), "</ul>", "</body></html>".
    paragraph = 2 * len(WORDS) + len("report 07.")
    expected = [0, 0] + [0, 5, 0] * 40 + [0] + [paragraph] * 12 + [0] + [0, 6, 0] * 40 + [0, 0]
    links = [0, 0] + [0, 5, 0] * 40 + [0] + [len("report 07")] * 12 + [0] + [0, 6, 0] * 40 + [0, 0]
    assert scores.text_lengths.tolist() == expected
    assert result.total_chars == 40 * 5 + 12 * paragraph + 40 * 6
    labels = scores.labels
    assert labels[123:135].all() and not labels[:100].any() and not labels[-100:].any()
    assert result.content_chars == int(np.asarray(expected)[labels].sum())
    assert result.link_chars == int(np.asarray(links)[labels].sum())
    assert result.threshold is None
    assert result.content_nodes is None  # a source-level method: no cleaned HTML


def test_threshold_mode_keeps_lines_at_or_above_lam_times_std() -> None:
    html = article_page()
    for lam in (0.5, 1.0, 2.0):
        result = CETR(clustering="threshold", lam=lam).run(Document.from_input(html))
        scores = result.block_scores
        h = scores.scores  # every line of the page holds a tag: every line is a bucket
        assert result.threshold == pytest.approx(lam * float(np.std(h)))
        assert (scores.labels == (h >= result.threshold)).all()


def test_the_same_seed_gives_the_same_result_on_an_unclear_page() -> None:
    rng = np.random.default_rng(3)
    lines = [
        "<p>" + "word " * int(n) + "</p>" + "<b></b>" * int(t)
        for n, t in zip(rng.integers(0, 40, 300), rng.integers(0, 6, 300), strict=True)
    ]
    html = "<html><body>\n" + "\n".join(lines) + "\n</body></html>"
    for clustering in CLUSTERINGS:
        first = extract(html, algorithm="cetr", clustering=clustering, seed=7)
        again = extract(html, algorithm="cetr", clustering=clustering, seed=7)
        assert first.text == again.text
        assert first.block_scores is not None and again.block_scores is not None
        assert (first.block_scores.labels == again.block_scores.labels).all()


def test_tiny_and_empty_pages_give_a_result_not_an_error() -> None:
    for html in ("<html><body></body></html>", "", "<p>Just one line of text.</p>", "x"):
        for clustering, mode in VARIANTS:
            result = extract(html, algorithm="cetr", clustering=clustering, mode=mode)
            assert result.text in ("", "Just one line of text.", "x")


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"clustering": "dbscan"}, "clustering"),
        ({"mode": "fuzzy"}, "mode"),
        ({"clustering": "threshold", "mode": "density"}, "mode"),
        ({"k": 1}, "k"),
        ({"k": 2.5}, "k"),
        ({"lam": -1.0}, "lam"),
        ({"lam": float("nan")}, "lam"),
        ({"seed": -1}, "seed"),
        ({"sigma": 0}, "sigma"),
        ({"q": 0}, "q"),
        ({"wrap": 0}, "wrap"),
        ({"wrap": 100, "wrap_above": 50}, "wrap_above"),
    ],
)
def test_a_bad_parameter_is_an_extraction_error_naming_it(
    params: dict[str, Any], name: str
) -> None:
    with pytest.raises(ExtractionError, match=f"'{name}'"):
        extract("<p>text</p>", algorithm="cetr", **params)


def test_registry_name_and_defaults() -> None:
    assert ALGORITHMS["cetr"] is CETR
    params = CETR().params()
    assert params["k"] == 3 and params["sigma"] == 3.0 and params["q"] == 3
    assert params["lam"] == 1.0 and params["seed"] == 1 and params["wrap"] == 60


# ---------------------------------------------------------------- real pages


TRAFILATURA_EVAL = (_data.benchmarks_dir() or Path("../shared/benchmarks")) / "trafilatura-eval"
needs_data = pytest.mark.skipif(
    not (TRAFILATURA_EVAL / "gold.json").is_file(),
    reason=f"development set not found at {TRAFILATURA_EVAL} (set TAGRATIO_BENCHMARKS)",
)


@cache
def gold() -> dict[str, Any]:
    return json.loads((TRAFILATURA_EVAL / "gold.json").read_text("utf-8"))


def page(page_id: str) -> bytes:
    return gzip.decompress((TRAFILATURA_EVAL / "pages" / f"{page_id}.html.gz").read_bytes())


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# Pages checked by hand: the 'with' snippets are article text, the 'without' ones menus,
# related links or footers (see the comment beside each).
REAL_PAGES = (
    # US local news: 'without' are a navigation bar link ("Building A Better Bay Area") and
    # sidebar section heads ("Top Stories", "Live Streams").
    "abc7news.com-Napa",
    # German town hall notice: 'without' are the footer's copyright, opening hours, a link.
    "ahlen.de.reparaturcafe",
    # German magazine article: 'without' are the footer menu ("Unsere Inhalte"), the login
    # button and the related-articles heading.
    "7mind.de.grenzen",
    # German trade news: 'without' are share buttons, a job-market link, a newsletter box.
    "Solarserver.de.solarthermisches_kraftwerk_dubai",
    # Polish news: 'without' are the "Najnowsze" (latest) list heading, a teaser, the source.
    "Eurostat__Polska_z_najnizszym_bezrobociem_w_caej_UE",
)


@needs_data
@pytest.mark.benchmark_data
@pytest.mark.parametrize("page_id", REAL_PAGES)
def test_real_page_main_text_found_and_navigation_left_out(page_id: str) -> None:
    entry = gold()[page_id]
    text = normalised(extract(page(page_id), algorithm="cetr", url=entry["url"]).text)
    for snippet in entry["with"]:
        assert normalised(snippet) in text
    for snippet in entry["without"]:
        assert normalised(snippet) not in text


@needs_data
@pytest.mark.benchmark_data
@pytest.mark.parametrize(("clustering", "mode"), VARIANTS)
def test_every_variant_runs_on_real_pages(clustering: str, mode: str) -> None:
    algorithm = CETR(clustering=clustering, mode=mode)
    for page_id in sorted(gold())[:5]:
        result = algorithm.run(Document.from_input(page(page_id)))
        assert 0 <= result.content_chars <= result.total_chars
        assert result.link_chars <= result.content_chars
