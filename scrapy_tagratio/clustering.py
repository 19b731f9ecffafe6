"""Partitioning of CETR's line points into content and non-content lines.

Pure functions over numpy arrays; no scikit-learn (importing ``sklearn.mixture`` costs
over a second, more than clustering a few thousand points in numpy). Read beside
``ttr-histogram-clustering.txt`` (Weninger and Hsu) and ``cetr-www2010-summary.txt``:

* **Threshold partitioning** (the baseline): line i is content iff ``h'_i >= lam * std(h')``
  (population standard deviation, ``lam = 1``: "the threshold at 1 sigma").
* **Clustering** of the points ``(h', g')`` into ``k = 3`` clusters; "the non-content label is
  given to the cluster with the centroid closest to the origin and the remaining clusters
  are labeled content". The clusterers:

  - :func:`kmeans` (Lloyd's algorithm). CETR's tailored k-means holds one centroid at the
    origin (``anchored=True``): that cluster is the non-content one. The other centroids
    start by k-means++ seeding (the origin counting as a chosen centre); of ten seedings
    the one of least squared error is kept.
  - :func:`farthest_first` (Hochbaum and Shmoys 1985, as Weka's ``FarthestFirst``): a
    random first centre, then repeatedly the point farthest from the chosen centres; the
    chosen points stay the centres (Weka's ``m_ClusterCentroids`` are the chosen
    instances, never moved) and every point joins the nearest one, the first on ties
    (``clusterProcessedInstance``). Weka measures distance on attributes scaled to
    [0, 1] by their range; here on the raw (h', g') (a reading of CETR, compared in
    :mod:`scrapy_tagratio.algorithms.cetr`). Where Weka, short of distinct points, would
    pick a copy of a centre (a cluster no point joins), fewer clusters come back.
  - :func:`gaussian_em` (Dempster et al. 1977, as Weka's ``EM``): a mixture of Gaussians
    with independent attributes (diagonal covariance), started from k-means, stopped
    when the mean log-likelihood gains less than 1e-6; minimum standard deviation 1e-6.
  - 1-D k-means: :func:`kmeans` on ``h'`` alone (the histogram before the paper moved
    to two dimensions).

* **Modes** (the paper's Table 2): *distance* takes the clusterer's own assignment;
  *density* wraps it as Weka's ``MakeDensityBasedClusterer`` does (:func:`density_reassign`):
  one normal distribution per cluster and attribute is fitted to the clusterer's labels,
  priors are the cluster sizes with a Laplace correction, and every point moves to the
  cluster of highest prior times density. A standard deviation at or below 1e-6 is
  replaced by the attribute's sample standard deviation over all points (Weka's
  ``numericStats.stdDev``), floored at 1e-6. The non-content cluster keeps its identity
  (the base clusterer's centroid closest to the origin).

Every random choice comes from ``numpy.random.default_rng(seed)``: same input, same labels.
The public functions take points as ``(n, d)`` rows; inside, the points are kept as ``(d, n)``
columns and per-cluster arrays as ``(k, ...)``, so each numpy call runs over long contiguous
rows (much faster than reducing over the short axis of ``(n, 2)``).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from .errors import ExtractionError

__all__ = [
    "CLUSTERINGS",
    "KMEANS_RESTARTS",
    "MIN_STD",
    "MODES",
    "density_reassign",
    "farthest_first",
    "gaussian_em",
    "kmeans",
    "nearest_to_origin",
    "partition",
    "threshold_partition",
]

#: Partitioning methods :func:`partition` knows.
CLUSTERINGS: Final = ("threshold", "kmeans", "kmeans-1d", "farthest-first", "em")
#: Assignment modes of the clusterers (Table 2 of the paper).
MODES: Final = ("distance", "density")
#: Weka's default minimum standard deviation of a fitted normal distribution.
MIN_STD: Final = 1e-6
#: k-means++ seedings per k-means (scikit-learn's classic ``n_init``); the best is kept.
KMEANS_RESTARTS: Final = 10
_MAX_ITER: Final = 100
#: Distances (runs x clusters x points) one batch of k-means runs holds at most.
_BATCH_DISTANCES: Final = 1 << 20
_EM_TOLERANCE: Final = 1e-6


def threshold_partition(values: np.ndarray, lam: float = 1.0) -> tuple[np.ndarray, float]:
    """Threshold partitioning: ``values >= lam * std(values)``; returns (mask, threshold)."""
    values = np.asarray(values, dtype=np.float64)
    threshold = lam * float(np.std(values)) if values.size else 0.0
    return values >= threshold, threshold


def _columns(points: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(points, dtype=np.float64).T)


def _squared_distances(cols: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """``(..., k, n)`` exact squared Euclidean distances of the points to ``(..., k, d)``
    centres (0 for a copy of a centre)."""
    diff = cols - centres[..., None]
    return (diff * diff).sum(axis=-2)


def _cluster_sums(cols: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster, its number of points and the sums of their coordinates (added in point
    order): ``(k,)`` and ``(k, d)`` for ``(n,)`` labels, ``(runs, k)`` and ``(runs, k, d)``
    for ``(runs, n)`` labels of several runs, one ``bincount`` over all runs."""
    runs = labels.shape[:-1]
    size = math.prod(runs) * k
    bins = (labels + np.arange(0, size, k).reshape(*runs, 1)).ravel()
    counts = np.bincount(bins, minlength=size).reshape(*runs, k)
    sums = np.stack(
        [np.bincount(bins, np.broadcast_to(row, labels.shape).ravel(), size) for row in cols],
        axis=1,
    )
    return counts, sums.reshape(*runs, k, cols.shape[0])


def _plus_plus_centres(
    cols: np.ndarray, k: int, rng: np.random.Generator, anchored: bool
) -> np.ndarray:
    """k-means++ seeding; with ``anchored`` the first centre is the origin."""
    dims, n = cols.shape
    centres = np.zeros((k, dims))
    if not anchored:
        centres[0] = cols[:, rng.integers(n)]
    nearest = _squared_distances(cols, centres[:1])[0]
    for c in range(1, k):
        cumulative = np.cumsum(nearest)
        if cumulative[-1] > 0:  # pick with probability proportional to squared distance
            pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
        else:
            pick = int(rng.integers(n))
        centres[c] = cols[:, min(pick, n - 1)]
        nearest = np.minimum(nearest, _squared_distances(cols, centres[c : c + 1])[0])
    return centres


def _nearest(distances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per point of ``(runs, k, n)`` distances, the first cluster of least distance and
    that distance: ``argmin`` and ``min`` over axis 1, as k - 1 comparisons of contiguous
    rows (numpy's ``argmin`` along the strided axis costs twice as much)."""
    labels = np.zeros((distances.shape[0], distances.shape[2]), dtype=np.intp)
    nearest = distances[:, 0].copy()
    for c in range(1, distances.shape[1]):
        closer = distances[:, c] < nearest
        labels[closer] = c
        np.minimum(nearest, distances[:, c], out=nearest)
    return labels, nearest


def _lloyd(
    cols: np.ndarray, centres: np.ndarray, anchored: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lloyd's algorithm from a batch of ``(runs, k, d)`` seed centroids, all runs at once:
    ``(runs, n)`` labels, centroids and each run's SSE. A run stops when no label changes
    (its labels, centroids and SSE then stay as they are while the others go on), or after
    :data:`_MAX_ITER` rounds (SSE of the last assignment). Every run computes exactly what
    it would alone: the batch only shares the numpy calls."""
    runs, k, _ = centres.shape
    n = cols.shape[1]
    centres = centres.copy()
    movable = np.ones(k, dtype=bool)
    movable[0] = not anchored
    labels = np.full((runs, n), -1)
    sse = np.zeros(runs)
    active = np.arange(runs)
    for _ in range(_MAX_ITER):
        new_labels, nearest = _nearest(_squared_distances(cols, centres[active]))
        sse[active] = nearest.sum(axis=1)
        moved = (new_labels != labels[active]).any(axis=1)
        active, new_labels = active[moved], new_labels[moved]
        if not active.size:
            break
        labels[active] = new_labels
        counts, sums = _cluster_sums(cols, new_labels, k)
        update = movable & (counts > 0)
        moved_centres = centres[active]
        moved_centres[update] = sums[update] / counts[update][:, None]
        centres[active] = moved_centres
    return labels, centres, sse


def _kmeans(
    cols: np.ndarray, k: int, rng: np.random.Generator, anchored: bool
) -> tuple[np.ndarray, np.ndarray]:
    seeds = np.stack([_plus_plus_centres(cols, k, rng, anchored) for _ in range(KMEANS_RESTARTS)])
    per_batch = max(1, _BATCH_DISTANCES // (k * cols.shape[1]))  # bounds the memory held
    batches = [
        _lloyd(cols, seeds[i : i + per_batch], anchored)
        for i in range(0, KMEANS_RESTARTS, per_batch)
    ]
    labels, centres, sse = (np.concatenate(parts) for parts in zip(*batches, strict=True))
    best = int(np.argmin(sse))  # the first run of least SSE
    return labels[best], centres[best]


def kmeans(
    points: np.ndarray, k: int, rng: np.random.Generator, *, anchored: bool
) -> tuple[np.ndarray, np.ndarray]:
    """k-means; returns (labels, centroids). With ``anchored`` centroid 0 stays at the
    origin (CETR's tailored k-means), the others move to their clusters' means; an empty
    cluster keeps its centroid. Lloyd's algorithm runs until no label changes (at most 100
    rounds), from :data:`KMEANS_RESTARTS` k-means++ seedings; the run of least squared
    error wins (one seeding can leave a free centroid on the menu lines near the origin)."""
    return _kmeans(_columns(points), k, rng, anchored)


def farthest_first(
    points: np.ndarray, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Farthest-first traversal as Weka's ``FarthestFirst``; returns (labels, centres =
    the chosen points). Each point joins its nearest centre, the earliest chosen on ties.

    Fewer than ``k`` clusters come back when fewer than ``k`` distinct points exist."""
    cols = _columns(points)
    first = int(rng.integers(cols.shape[1]))
    chosen = [first]
    nearest = _squared_distances(cols, cols[:, first][None, :])[0]
    for _ in range(1, k):
        far = int(np.argmax(nearest))
        if nearest[far] == 0:
            break
        chosen.append(far)
        nearest = np.minimum(nearest, _squared_distances(cols, cols[:, far][None, :])[0])
    centres = cols[:, chosen].T
    return _squared_distances(cols, centres).argmin(axis=0), centres


def _fit_diagonal_gaussians(
    cols: np.ndarray, weights: np.ndarray, *, laplace: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cluster (rows of ``weights``, ``(k, n)`` memberships): mean and standard
    deviation of each attribute, and the prior. As Weka does: a standard deviation at or
    below :data:`MIN_STD` is replaced by the attribute's sample standard deviation over
    all points, floored at
    :data:`MIN_STD`; ``laplace`` adds one to every cluster's count (MakeDensityBasedClusterer).
    A cluster without weight has no mean (NaN) and density 0 everywhere (Weka gives it
    mean 0 and the largest double as deviation: a density of about e^-710 per attribute,
    which only a point that every other cluster puts further out than that could prefer)."""
    mass = weights.sum(axis=1)
    safe = np.where(mass > 0, mass, 1.0)[:, None]
    means = (weights[:, None, :] * cols[None, :, :]).sum(axis=2) / safe
    diff = cols[None, :, :] - means[:, :, None]
    stds = np.sqrt((weights[:, None, :] * diff * diff).sum(axis=2) / safe)
    overall = np.maximum(cols.std(axis=1, ddof=1 if cols.shape[1] > 1 else 0), MIN_STD)
    stds = np.where(stds <= MIN_STD, overall[None, :], stds)
    stds[mass <= 0] = np.inf
    means[mass <= 0] = np.nan
    priors = mass + 1.0 if laplace else mass.astype(np.float64)
    return means, stds, priors / priors.sum()


def _log_joint_density(
    cols: np.ndarray, means: np.ndarray, stds: np.ndarray, priors: np.ndarray
) -> np.ndarray:
    """``(k, n)`` log(prior) + the sum over attributes of the log normal density."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (cols[None, :, :] - means[:, :, None]) / stds[:, :, None]
        constant = np.log(stds).sum(axis=1) + 0.5 * cols.shape[0] * np.log(2 * np.pi)
        joint = -0.5 * (z * z).sum(axis=1) - constant[:, None] + np.log(priors)[:, None]
    return np.where(np.isnan(joint), -np.inf, joint)


def _one_hot(labels: np.ndarray, k: int) -> np.ndarray:
    return (np.arange(k)[:, None] == labels[None, :]).astype(np.float64)


def gaussian_em(
    points: np.ndarray, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """EM for a mixture of ``k`` diagonal Gaussians started from k-means; returns
    (labels = most probable component, centroids = component means)."""
    cols = _columns(points)
    start, _ = _kmeans(cols, k, rng, anchored=False)
    responsibilities = _one_hot(start, k)
    previous = -np.inf
    for _ in range(_MAX_ITER):
        means, stds, priors = _fit_diagonal_gaussians(cols, responsibilities, laplace=False)
        joint = _log_joint_density(cols, means, stds, priors)
        top = joint.max(axis=0)
        log_norm = top + np.log(np.exp(joint - top[None, :]).sum(axis=0))
        likelihood = float(log_norm.mean())
        responsibilities = np.exp(joint - log_norm[None, :])
        if likelihood - previous < _EM_TOLERANCE:
            break
        previous = likelihood
    return joint.argmax(axis=0), means


def density_reassign(points: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Density mode (Weka's MakeDensityBasedClusterer): fit one normal per cluster and
    attribute to ``labels``, Laplace-corrected priors; each point goes to the cluster of
    highest prior times density."""
    cols = _columns(points)
    means, stds, priors = _fit_diagonal_gaussians(cols, _one_hot(labels, k), laplace=True)
    return _log_joint_density(cols, means, stds, priors).argmax(axis=0)


def nearest_to_origin(centroids: np.ndarray) -> int:
    """Index of the centroid closest to the origin (the non-content cluster); centroids
    of empty clusters (NaN) are never chosen."""
    norms = (centroids**2).sum(axis=1)
    return int(np.argmin(np.where(np.isnan(norms), np.inf, norms)))


def partition(
    points: np.ndarray,
    clustering: str,
    *,
    mode: str = "distance",
    k: int = 3,
    lam: float = 1.0,
    seed: int = 1,
) -> tuple[np.ndarray, float | None]:
    """Content mask over the rows of ``points`` (``(n, 2)``: h', g') and the threshold
    (threshold partitioning only, else None). ``clustering`` is one of
    :data:`CLUSTERINGS`, ``mode`` one of :data:`MODES`."""
    if clustering not in CLUSTERINGS:
        raise ExtractionError(
            f"unknown clustering {clustering!r}; choose one of: {', '.join(CLUSTERINGS)}",
            kind="bad_parameter",
        )
    if mode not in MODES:
        raise ExtractionError(
            f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}", kind="bad_parameter"
        )
    points = np.asarray(points, dtype=np.float64)
    if clustering == "threshold":
        return threshold_partition(points[:, 0], lam)
    if len(points) == 0:
        return np.zeros(0, dtype=bool), None
    if clustering == "kmeans-1d":
        points = points[:, :1]
    rng = np.random.default_rng(seed)
    if clustering == "farthest-first":
        labels, centroids = farthest_first(points, k, rng)
    elif clustering == "em":
        labels, centroids = gaussian_em(points, k, rng)
    else:
        labels, centroids = kmeans(points, k, rng, anchored=True)
    if mode == "density":
        labels = density_reassign(points, labels, len(centroids))
    return labels != nearest_to_origin(centroids), None
