"""Gradient-boosted decision trees as plain arrays, evaluated with numpy, loaded from JSON.

The default algorithm's block model is fitted offline with scikit-learn
(``benchmarks/train_tagratio.py``) and shipped as data: per tree, the arrays of its nodes
(split feature, threshold, left and right child, leaf value). Evaluating it needs no
scikit-learn: every tree is walked for every row at once, one numpy step per level (a
row goes left when its feature value is at most the node's threshold, as scikit-learn's
trees do), so a page costs a few array operations per tree level, not a Python step per
block and tree.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ExtractionError
from ..reader import active_kernel

__all__ = ["MODEL_VERSION", "BoostedTrees", "load_model"]

#: Format version of the model files this code reads.
MODEL_VERSION = 1
#: Rows evaluated at a time (the numpy walk holds several trees x rows arrays: at 8,192
#: rows they were the pure readers' peak of memory on a 20 MB page).
_ROWS = 1 << 11


@dataclass(frozen=True, eq=False)
class BoostedTrees:
    """A binary classifier: ``sigmoid(baseline + sum of the trees' leaf values)``.

    The node arrays are ``n_trees x n_nodes`` (padded): ``feature`` (-1 at a leaf),
    ``threshold``, ``left``/``right`` (child node indices; a leaf points to itself) and
    ``value`` (the leaf's contribution, learning rate included). ``depth`` is the deepest
    level: that many steps bring every row to its leaf.
    """

    features: tuple[str, ...]
    baseline: float
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    depth: int
    #: Keep a block whose probability reaches this (chosen by the training script).
    cut: float
    #: Everything else the file says (training data, validation figures).
    about: dict[str, Any]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BoostedTrees:
        """The model of a parsed model file; :class:`ExtractionError` if it is not one, or
        is malformed (a key missing, a value of another type, node arrays of different
        shapes, a child or feature index out of range): checked once when the file is
        read, since the compiled kernel walks the arrays without bounds checks."""
        if data.get("version") != MODEL_VERSION or data.get("kind") != "boosted-trees":
            raise ExtractionError(
                f"model file has version {data.get('version')!r} / kind {data.get('kind')!r}; "
                f"this code reads version {MODEL_VERSION} boosted-trees"
            )
        try:
            trees = data["trees"]
            model = cls(
                features=tuple(data["features"]),
                baseline=float(data["baseline"]),
                feature=np.array(trees["feature"], dtype=np.intp),
                threshold=np.array(trees["threshold"], dtype=np.float64),
                left=np.array(trees["left"], dtype=np.intp),
                right=np.array(trees["right"], dtype=np.intp),
                value=np.array(trees["value"], dtype=np.float64),
                depth=int(trees["depth"]),
                cut=float(data["cut"]),
                about={k: v for k, v in data.items() if k not in ("trees",)},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ExtractionError(f"malformed model file: {type(exc).__name__}: {exc}") from exc
        model._check_nodes()
        return model

    def _check_nodes(self) -> None:
        """:class:`ExtractionError` unless the node arrays are one ``n_trees x n_nodes``
        shape, every child index is a node of its tree and every split feature is a
        column (-1 at a leaf)."""
        shape = self.feature.shape
        arrays = (self.feature, self.threshold, self.left, self.right, self.value)
        if len(shape) != 2 or any(array.shape != shape for array in arrays):
            shapes = ", ".join(str(array.shape) for array in arrays)
            raise ExtractionError(f"malformed model file: node arrays of shapes {shapes}")
        size = shape[1]
        children = np.concatenate((self.left.ravel(), self.right.ravel()))
        if children.size and (children.min() < 0 or children.max() >= size):
            raise ExtractionError(f"malformed model file: a child index outside 0..{size - 1}")
        if self.feature.size and (
            self.feature.min() < -1 or self.feature.max() >= len(self.features)
        ):
            raise ExtractionError(
                f"malformed model file: a split feature outside -1..{len(self.features) - 1}"
            )
        if self.depth < 0:
            raise ExtractionError(f"malformed model file: depth {self.depth}")

    def to_dict(self) -> dict[str, Any]:
        """The model as a model file holds it (the inverse of :meth:`from_dict`)."""
        return {
            **self.about,
            "version": MODEL_VERSION,
            "kind": "boosted-trees",
            "features": list(self.features),
            "baseline": self.baseline,
            "cut": self.cut,
            "trees": {
                "depth": self.depth,
                "feature": self.feature.tolist(),
                "threshold": self.threshold.tolist(),
                "left": self.left.tolist(),
                "right": self.right.tolist(),
                "value": self.value.tolist(),
            },
        }

    @cached_property
    def _flat(self) -> tuple[np.ndarray, ...]:
        """The node arrays flattened, children as flat indices: a walk step is then a
        few one-dimensional ``take`` calls instead of two-dimensional fancy indexing."""
        n_trees, size = self.feature.shape
        offset = (np.arange(n_trees, dtype=np.intp) * size)[:, None]
        return (
            np.maximum(self.feature, 0).ravel(),
            self.threshold.ravel(),
            (self.left + offset).ravel(),
            (self.right + offset).ravel(),
            self.value.ravel(),
            offset,
        )

    def raw(self, x: np.ndarray) -> np.ndarray:
        """The log-odds of each row of ``x`` (rows x features, float32 or float64): in a C
        loop where the compiled kernel reads the pages
        (:func:`~scrapy_tagratio.reader.active_kernel`), else with numpy; rows taken
        :data:`_ROWS` at a time either way (converted to float64, and the numpy walk holds
        a few trees x rows arrays); the same floats either way."""
        if not len(x) or not self.feature.shape[0]:
            return np.full(len(x), self.baseline)
        kernel = active_kernel()
        if kernel is not None:
            feature, threshold, left, right, value, offset = self._flat
            roots, sums = offset.ravel(), np.empty(len(x))
            for start in range(0, len(x), _ROWS):  # float64 rows a slice at a time
                rows = np.ascontiguousarray(x[start : start + _ROWS], dtype=np.float64)
                kernel.tree_sums(
                    rows, feature, threshold, left, right, value, roots, self.depth,
                    sums[start : start + _ROWS],
                )  # fmt: skip
            return self.baseline + sums
        return self._raw_numpy(x)

    def _raw_numpy(self, x: np.ndarray) -> np.ndarray:
        """:meth:`raw` with numpy: every tree walked for every row at once."""
        if len(x) > _ROWS:
            return np.concatenate(
                [self._raw_numpy(x[i : i + _ROWS]) for i in range(0, len(x), _ROWS)]
            )
        feature, threshold, left, right, value, offset = self._flat
        values = np.ascontiguousarray(x, dtype=np.float64).ravel()
        row_start = np.arange(len(x)) * x.shape[1]
        node = np.repeat(offset, len(x), axis=1)  # trees x rows, flat node indices
        for _ in range(self.depth):
            goes_left = values.take(row_start + feature.take(node)) <= threshold.take(node)
            node = np.where(goes_left, left.take(node), right.take(node))
        # The leaves added in tree order, as the kernel adds them: ``sum(axis=0)`` does
        # that for several rows, but sums a single row's contiguous column pairwise.
        return self.baseline + np.cumsum(value.take(node), axis=0)[-1]

    def probability(self, x: np.ndarray) -> np.ndarray:
        """The probability of the positive class per row of ``x``."""
        return 1.0 / (1.0 + np.exp(-self.raw(x)))


_CACHE: dict[str, BoostedTrees] = {}


def load_model(name: str) -> BoostedTrees:
    """The model file ``scrapy_tagratio/models/<name>.json``, or the file ``name`` when it
    ends with ``.json`` (a model written by the training script), read once per process."""
    if name not in _CACHE:
        path: Any = (
            Path(name)
            if name.endswith(".json")
            else resources.files("scrapy_tagratio") / "models" / f"{name}.json"
        )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ExtractionError(f"cannot read the model file {path}: {exc}") from exc
        try:
            _CACHE[name] = BoostedTrees.from_dict(data)
        except ExtractionError as exc:  # the message names the file
            raise ExtractionError(f"{path}: {exc}") from exc
    return _CACHE[name]
