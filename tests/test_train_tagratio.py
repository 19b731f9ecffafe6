"""The block model's training (benchmarks/train_tagratio.py): each site weighs one, whatever
the number of its pages; the probability cut follows the sets' typical gain."""

from __future__ import annotations

import numpy as np

from benchmarks.train_tagratio import (
    WORD_BITS,
    PageBlocks,
    fit,
    pick_cut,
    site_weights,
    typical_gains,
)
from scrapy_tagratio.algorithms.tagratio import FEATURES, BlockRules
from scrapy_tagratio.algorithms.words import hashed_words


def page(site: str, label: int, blocks: int = 4) -> PageBlocks:
    """A page of ``blocks`` identical blocks, all labelled ``label``."""
    none = np.zeros(blocks, dtype=bool)
    return PageBlocks(
        key=f"{site}/{label}",
        site=site,
        dataset="fundus",
        sets=("fundus",),
        features=np.zeros((blocks, len(FEATURES)), dtype=np.float32),
        rules=BlockRules(
            none, none, none, none, none, np.ones(blocks), np.zeros((0, 3)), np.zeros((0, 2))
        ),
        labels=np.full(blocks, label, dtype=np.int8),
        weights=np.full(blocks, 1 / blocks, dtype=np.float32),
        texts=["text"] * blocks,
        words=hashed_words(["text"] * blocks, WORD_BITS),
        gold="text",
    )


def test_a_sites_pages_share_one_weight() -> None:
    pages = [page("a.example", 1), page("a.example", 1), page("a.example", 1), page("b.example", 0)]
    assert site_weights(pages).tolist() == [1 / 3, 1 / 3, 1 / 3, 1.0]


def test_three_pages_of_one_site_weigh_as_one_page_of_another() -> None:
    """Blocks that no feature tells apart: the model's probability is the weighted share of
    content among them, one half when each site weighs one (three quarters if each page
    weighed one)."""
    pages = [page("a.example", 1), page("a.example", 1), page("a.example", 1), page("b.example", 0)]
    model, _ = fit(pages)
    probability = model.predict_proba(np.zeros((1, len(FEATURES))))[0, 1]
    assert abs(probability - 0.5) < 0.01


def curves(**slopes: float) -> dict[float, dict[str, float]]:
    """Per cut of 0.3-0.7, each set's score: 0.9 at 0.5, changing by ``slope`` per unit of
    cut below 0.5 (0.02 from 0.5 to 0.3 for a slope of 0.1) and falling above it."""
    cuts = [round(0.3 + 0.025 * i, 3) for i in range(17)]
    return {
        cut: {
            name: 0.9 + slope * (0.5 - cut) if cut <= 0.5 else 0.9 - (cut - 0.5)
            for name, slope in slopes.items()
        }
        for cut in cuts
    }


def test_one_steep_set_does_not_move_the_cut() -> None:
    # One set gains 0.1 from a cut of 0.5 to 0.3 (a gold that rewards recall), two are
    # flat, one loses 0.01: the mean moves the cut down, the typical set keeps 0.5.
    scores = curves(cleaneval=0.5, dragnet=0.0, readability=0.0, fundus=-0.05)
    mean = {cut: float(np.mean(list(by_set.values()))) for cut, by_set in scores.items()}
    assert pick_cut(mean) <= 0.35
    assert pick_cut(typical_gains(scores)) == 0.5


def test_a_cut_most_sets_gain_at_is_chosen() -> None:
    # Three sets gain 0.04 from 0.5 to 0.3, one loses as much: 0.3 (0.325 is 0.005 worse).
    scores = curves(cleaneval=0.2, dragnet=0.2, readability=0.2, fundus=-0.2)
    assert pick_cut(typical_gains(scores)) == 0.3
