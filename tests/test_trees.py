"""Boosted trees shipped as arrays: the numpy walk predicts what scikit-learn predicts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from benchmarks.train_tagratio import export
from scrapy_tagratio import ExtractionError, reader
from scrapy_tagratio.algorithms import trees as trees_module
from scrapy_tagratio.algorithms.trees import BoostedTrees, load_model
from scrapy_tagratio.reader import kernel_status


@pytest.fixture(scope="module")
def fitted() -> tuple[HistGradientBoostingClassifier, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 5))
    # An interaction a linear model cannot fit: content when both signs agree.
    y = ((x[:, 0] > 0) == (x[:, 1] > 0.3)).astype(int)
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=3, random_state=0)
    return model.fit(x, y), x


Fitted = tuple[HistGradientBoostingClassifier, np.ndarray]


def test_numpy_walk_matches_scikit_learn(fitted: Fitted) -> None:
    model, x = fitted
    trees = export(model)
    assert np.allclose(trees.probability(x), model.predict_proba(x)[:, 1], atol=1e-12)
    assert ((trees.probability(x) >= 0.5) == model.predict(x)).all()


def test_many_rows_are_taken_in_parts_with_the_same_result(fitted: Fitted) -> None:
    model, x = fitted
    trees = export(model)
    many = np.tile(x, (6, 1))  # above the rows taken at a time
    assert np.allclose(trees.probability(many), np.tile(trees.probability(x), 6))


def test_model_file_round_trip(fitted: Fitted, tmp_path: Path) -> None:
    model, x = fitted
    trees = dataclasses.replace(export(model), cut=0.42, about={"note": "test"})
    path = tmp_path / "model.json"
    path.write_text(json.dumps(trees.to_dict()))
    loaded = load_model(str(path))
    assert loaded.cut == 0.42 and loaded.about["note"] == "test"
    assert np.allclose(loaded.probability(x), trees.probability(x))


def test_a_file_of_another_format_is_refused(fitted: Fitted) -> None:
    model, _ = fitted
    data = export(model).to_dict()
    with pytest.raises(ExtractionError, match="version"):
        BoostedTrees.from_dict({**data, "version": 99})


def _malformed(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Copies of the model file ``data``, each broken in one way a hand edit, a truncated
    write or a file of another tool breaks it."""
    trees = data["trees"]
    ragged = [row[:3] if i == 0 else row for i, row in enumerate(trees["feature"])]
    far_child = [[10**9, *row[1:]] if i == 0 else row for i, row in enumerate(trees["left"])]
    far_feature = [[len(data["features"]), *row[1:]] if i == 0 else row for i, row in
                   enumerate(trees["feature"])]  # fmt: skip
    return {
        "no trees": {k: v for k, v in data.items() if k != "trees"},
        "no cut": {k: v for k, v in data.items() if k != "cut"},
        "cut not a number": {**data, "cut": "x"},
        "trees not a dict": {**data, "trees": [1, 2]},
        "ragged rows": {**data, "trees": {**trees, "feature": ragged}},
        "shapes differ": {**data, "trees": {**trees, "value": trees["value"][:1]}},
        "child out of range": {**data, "trees": {**trees, "left": far_child}},
        "feature out of range": {**data, "trees": {**trees, "feature": far_feature}},
        "negative depth": {**data, "trees": {**trees, "depth": -1}},
    }


def test_a_malformed_file_is_refused_when_read(fitted: Fitted, tmp_path: Path) -> None:
    """A model file that is JSON of the right version but malformed is refused with an
    ExtractionError when it is read (so a crawl naming it in TAGRATIO_PARAMS stops with one
    line): a missing key or a value of another type raised KeyError or ValueError (an
    asyncio traceback at the crawl's start), and a child index out of range made the
    compiled kernel read outside its arrays (a segmentation fault on the first page)."""
    model, _ = fitted
    for why, data in _malformed(export(model).to_dict()).items():
        with pytest.raises(ExtractionError, match="malformed model file"):
            BoostedTrees.from_dict(data)
        path = tmp_path / f"{why.replace(' ', '_')}.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ExtractionError, match=f"{path}: malformed model file"):
            load_model(str(path))


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_the_kernels_tree_sums_are_the_numpy_walks_floats(
    fitted: Fitted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel reads the pages it also evaluates the trees; its log-odds must be
    numpy's to the last bit (the same walk, the leaves added in tree order), missing
    values and ties on a threshold included."""
    monkeypatch.setattr(reader, "DEFAULT_READER", "kernel")
    model, x = fitted
    rows = np.concatenate((x, np.full((3, x.shape[1]), np.nan), np.zeros((0, x.shape[1]))))
    for trees in (export(model), load_model("tagratio")):
        width = len(trees.features)
        rng = np.random.default_rng(1)
        data = rows[:, :width] if width <= rows.shape[1] else rng.normal(size=(500, width))
        data = np.concatenate((data, np.repeat(trees.threshold.ravel()[:width, None], width, 1)))
        assert np.array_equal(trees.raw(data), trees._raw_numpy(data))
        assert np.array_equal(trees.raw(data[:0]), trees._raw_numpy(data[:0]))


@pytest.mark.parametrize("path", ["kernel", "target"])
def test_float32_rows_are_evaluated_as_their_float64_values(
    fitted: Fitted, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """The block features are float32 (the values the model was fitted on); rows of any
    count, in parts above the rows taken at a time, give the log-odds of the same values
    in float64, on the kernel's loop and on numpy's walk."""
    if path == "kernel" and not kernel_status()[0]:
        pytest.skip(f"compiled kernel: {kernel_status()[1]}")
    monkeypatch.setattr(reader, "DEFAULT_READER", path)
    model, x = fitted
    trees = export(model)
    many = np.tile(x, (6, 1)).astype(np.float32)  # above the rows taken at a time
    assert np.array_equal(trees.raw(many), trees.raw(many.astype(np.float64)))
    assert np.array_equal(trees.raw(many), trees._raw_numpy(many.astype(np.float64)))


@pytest.mark.skipif(not kernel_status()[0], reason=f"compiled kernel: {kernel_status()[1]}")
def test_a_single_row_has_the_kernels_floats(monkeypatch: pytest.MonkeyPatch) -> None:
    """One row (a page of one text block, or the last part of a long page) on its own:
    numpy sums a column of leaf values pairwise where the kernel adds them in tree order,
    and the pure path's block scores differed from the kernel's in the last bit (found by
    fuzzing: a page that is 125 letters ``a``)."""
    monkeypatch.setattr(reader, "DEFAULT_READER", "kernel")
    trees = load_model("tagratio")
    rows = np.random.default_rng(2).normal(size=(300, len(trees.features)))
    for row in rows:
        assert np.array_equal(trees.raw(row[None, :]), trees._raw_numpy(row[None, :]))
    one_more = np.resize(rows, (trees_module._ROWS + 1, rows.shape[1]))  # a last part of 1
    for row in rows[:10]:
        one_more[-1] = row
        assert np.array_equal(trees.raw(one_more), trees._raw_numpy(one_more))
