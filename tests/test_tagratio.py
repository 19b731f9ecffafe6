"""The default algorithm: CECTD's signals and page furniture combined per text block."""

from __future__ import annotations

import re

import numpy as np
import pytest

from scrapy_tagratio import DEFAULT_ALGORITHM, ExtractionError, extract
from scrapy_tagratio.algorithms.tagratio import (
    FEATURE_MEANS,
    FEATURE_SCALES,
    FEATURES,
    WEIGHTS,
    TagRatio,
    block_features,
    content_probability,
    hint_flags,
)
from scrapy_tagratio.document import Document

STORY = "".join(
    f"<p>Paragraph {i}: the council met on Tuesday evening and, after a long debate about "
    "the harbour, agreed to repair the old sea wall before the winter storms arrive. The "
    "engineers warned that another season of high tides could undermine the promenade, "
    "and the shop owners along the front asked for the work to start at once.</p>"
    for i in range(8)
)
# Dense, link-free boilerplate that CECTD-DS keeps (its recursion marks every dense block).
SIDEBAR = (
    "<div class='sidebar-widget'><p>About this newspaper: we have reported on the town and "
    "its people for more than a hundred years, independent and without paywalls.</p></div>"
)
COMMENTS = (
    "<section id='comments'>"
    + "".join(
        f"<div class='comment'><p>Reader {i} says the wall should have been repaired years "
        "ago, and the council has wasted too much time on studies and meetings.</p></div>"
        for i in range(4)
    )
    + "</section>"
)
PAGE = (
    "<html><body><nav>" + "".join(f"<a href='/s{i}'>Section {i}</a>" for i in range(12))
    + "</nav><div class='layout'><article><h1>Council repairs the wall</h1>"
    + STORY
    + "<div class='share-bar'><a href='#'>Share</a> <a href='#'>Tweet</a></div>"
    + "<h3>Read more</h3><ul><li><a href='/a'>An older story about the wall</a></li></ul>"
    + "</article>" + SIDEBAR + "</div>" + COMMENTS
    + "<footer>Copyright 2026 The Harbour Times. All rights reserved.</footer></body></html>"
)


def test_tagratio_is_the_default() -> None:
    assert DEFAULT_ALGORITHM == "tagratio"
    assert extract(PAGE).algorithm == "tagratio"


def test_keeps_the_story_and_prunes_what_cectd_keeps() -> None:
    cectd = extract(PAGE, algorithm="cectd").text
    ours = extract(PAGE).text
    for i in range(8):
        assert f"Paragraph {i}:" in ours
    assert "About this newspaper" in cectd or "Reader 0 says" in cectd  # the paper's loss
    for boilerplate in ("About this newspaper", "Reader 0 says", "Section 3", "Share",
                        "Copyright 2026", "Read more"):
        assert boilerplate not in ours, boilerplate


def test_short_last_paragraph_in_the_body_container_stays() -> None:
    page = PAGE.replace("</article>", "<p>The work starts in May.</p></article>")
    assert "The work starts in May." in extract(page).text


def test_hints_read_class_words_as_components() -> None:
    doc = Document.from_input(
        "<body><div class='menu-item'>a</div><div class='update-info'>b</div>"
        "<div class='sd_sharing'>c</div><div class='address'>d</div><div id='ad'>e</div></body>"
    )
    flags = hint_flags(doc.nodes)
    flagged = [doc.nodes.hint[i].strip() for i in range(len(flags)) if flags[i]]
    assert flagged == ["menu-item", "sd_sharing", "ad"]


def test_parameters_are_validated() -> None:
    with pytest.raises(ExtractionError, match="'threshold'"):
        TagRatio(threshold=1.5)
    with pytest.raises(ExtractionError, match="use_hints"):
        extract(PAGE, use_hints=False)


def test_model_constants_match_the_features() -> None:
    for constants in (FEATURE_MEANS, FEATURE_SCALES, WEIGHTS):
        assert constants.shape == (len(FEATURES),)
    assert np.all(FEATURE_SCALES > 0)


def test_block_features_are_one_row_per_text_block() -> None:
    doc = Document.from_input(PAGE)
    blocks, features, owner, threshold = block_features(doc)
    assert features.shape == (len(blocks), len(FEATURES))
    assert np.all(np.isfinite(features)) and threshold > 0
    # every node with own text belongs to exactly one of the blocks
    texted = np.flatnonzero(doc.nodes.own_chars > 0)
    assert set(owner[texted].tolist()) == set(blocks.tolist())


def test_furniture_lowers_the_content_probability() -> None:
    paragraph = STORY.split("</p>")[0] + "</p>"
    inside = PAGE.replace("<h1>", paragraph.replace("Paragraph 0", "Marked") + "<h1>")
    boxed = PAGE.replace(
        "<h1>", "<div class='related-box'>" + paragraph.replace("Paragraph 0", "Marked")
        + "</div><h1>"
    )

    def probability(page: str) -> float:
        doc = Document.from_input(page)
        blocks, features, _, _ = block_features(doc)
        texts = [doc.text_of(doc.nodes.with_descendants(np.eye(1, len(doc.nodes), b,
                 dtype=bool)[0])) for b in blocks.tolist()]
        row = next(i for i, t in enumerate(texts) if t.startswith("Marked"))
        return float(content_probability(features[row : row + 1])[0])

    assert probability(boxed) < probability(inside) - 0.1


def _ws(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_accuracy_on_development_pages(benchmark_set) -> None:  # type: ignore[no-untyped-def]
    """The default beats CECTD-DS and full text on 200 real pages (snippet F1, README rule).

    Measured 2026-11-22 on these 200 pages: see README "Benchmarks" for the full set.
    """
    data = benchmark_set("trafilatura")
    counts = {"tagratio": [0, 0, 0], "cectd": [0, 0, 0]}
    for page in data.pages("trafilatura", limit=200):
        for name, tally in counts.items():
            text = _ws(extract(page.html, algorithm=name).text)
            found = sum(_ws(s) in text for s in page.gold["with"])
            tally[0] += found
            tally[1] += len(page.gold["with"]) - found
            tally[2] += sum(_ws(s) in text for s in page.gold["without"])
    f1 = {k: 2 * tp / (2 * tp + fn + fp) for k, (tp, fn, fp) in counts.items()}
    assert f1["tagratio"] >= 0.91
    assert f1["tagratio"] > f1["cectd"] + 0.05
