"""The block model's training (benchmarks/train_tagratio.py): each site weighs one, whatever
the number of its pages."""

from __future__ import annotations

import numpy as np

from benchmarks.train_tagratio import PageBlocks, fit, site_weights
from scrapy_tagratio.algorithms.tagratio import FEATURES, BlockRules


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
    model = fit(pages)
    probability = model.predict_proba(np.zeros((1, len(FEATURES))))[0, 1]
    assert abs(probability - 0.5) < 0.01
