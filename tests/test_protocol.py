"""The shared training and validation protocol (benchmarks/protocol.py) on the real sets:
each page counted once, leave-one-set-out never trains on a member of the held-out set,
site-grouped folds never split a site."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import _data, protocol

pytestmark = [
    pytest.mark.benchmark_data,
    pytest.mark.skipif(
        _data.benchmarks_dir() is None,
        reason="needs ../shared/benchmarks (or TAGRATIO_BENCHMARKS): not on this machine",
    ),
]


@pytest.fixture(scope="module")
def pages() -> tuple[protocol.ProtocolPage, ...]:
    return protocol.pool()


def test_each_page_once_with_all_its_memberships(pages: tuple[protocol.ProtocolPage, ...]) -> None:
    paths = [page.path for page in pages]
    assert len(set(paths)) == len(paths)
    # Every gold record of every set is reachable, and none twice.
    memberships = [m for page in pages for m in page.memberships]
    assert len(memberships) == len(set(memberships))
    for dataset in protocol.CONTENT_SETS:
        assert sum(m[0] == dataset for m in memberships) == len(_data.load_gold(dataset))
    # overview-dev took pages from fundus-dev (its README): those are one page, two sets.
    shared = [page for page in pages if set(page.sets) == {"fundus", "overview"}]
    assert shared and all(page.overview_label == "article" for page in shared)


def test_leave_one_set_out_trains_on_no_member(pages: tuple[protocol.ProtocolPage, ...]) -> None:
    for dataset, train, test in protocol.leave_one_set_out(pages):
        assert len(test) == len(_data.load_gold(dataset))
        assert not any(dataset in pages[i].sets for i in train)
        assert len(train) + len(test) == len(pages)


def test_site_folds_never_split_a_site(pages: tuple[protocol.ProtocolPage, ...]) -> None:
    labels = np.array([page.is_overview for page in pages])
    folds = protocol.site_folds(pages, 5, labels=labels, seed=1)
    tested = np.concatenate([test for _, test in folds])
    assert sorted(tested.tolist()) == list(range(len(pages)))
    for train, test in folds:
        assert not {pages[i].site for i in train} & {pages[i].site for i in test}
    train = folds[0][0]
    for inner_train, inner_test in protocol.inner_folds(pages, train, 3, labels=labels):
        assert set(inner_train) | set(inner_test) <= set(train)
        assert not {pages[i].site for i in inner_train} & {pages[i].site for i in inner_test}
