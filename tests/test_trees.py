"""Boosted trees shipped as arrays: the numpy walk predicts what scikit-learn predicts."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from benchmarks.train_tagratio import export
from scrapy_tagratio import ExtractionError
from scrapy_tagratio.algorithms.trees import BoostedTrees, load_model


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
