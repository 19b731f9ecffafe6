"""The partitioning of CETR's points (h', g') on point sets whose answer is known."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scrapy_tagratio.clustering import (
    CLUSTERINGS,
    MODES,
    _fit_diagonal_gaussians,
    density_reassign,
    farthest_first,
    gaussian_em,
    kmeans,
    nearest_to_origin,
    partition,
    threshold_partition,
)
from scrapy_tagratio.errors import ExtractionError


def blob_and_far_points(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """What the paper's Figure 5 shows: a dense blob of non-content lines at the origin and
    content lines spread away from it (two groups). Returns (points, is_content)."""
    rng = np.random.default_rng(seed)
    blob = rng.uniform(0.0, 2.0, size=(300, 2))
    plateau = np.column_stack((rng.uniform(40, 60, 30), rng.uniform(0, 5, 30)))
    edges = np.column_stack((rng.uniform(20, 40, 15), rng.uniform(25, 35, 15)))
    points = np.concatenate((blob, plateau, edges))
    is_content = np.arange(len(points)) >= len(blob)
    order = rng.permutation(len(points))  # the histogram's lines are not sorted
    return points[order], is_content[order]


def test_threshold_partition_is_lam_times_the_population_std() -> None:
    # mean 10/3, mean of squares 100/3: variance 200/9, std = 4.714045.
    values = np.array([0, 0, 0, 0, 10, 10], dtype=float)
    mask, threshold = threshold_partition(values, 1.0)
    assert threshold == pytest.approx(4.714045, abs=1e-6)
    assert mask.tolist() == [False] * 4 + [True] * 2
    mask, threshold = threshold_partition(values, 3.0)
    assert threshold == pytest.approx(14.142136, abs=1e-6)
    assert not mask.any()


def test_threshold_partition_uses_h_prime_only() -> None:
    points = np.array([[0.0, 50.0], [0.0, 50.0], [10.0, 0.0]])
    mask, threshold = partition(points, "threshold")
    assert threshold == pytest.approx(np.std([0.0, 0.0, 10.0]))
    assert mask.tolist() == [False, False, True]


@pytest.mark.parametrize(
    ("clustering", "mode"),
    [(c, m) for c, m in itertools.product(CLUSTERINGS, MODES) if c != "threshold"],
)
def test_every_clusterer_separates_the_origin_blob_from_far_points(
    clustering: str, mode: str
) -> None:
    points, is_content = blob_and_far_points()
    mask, threshold = partition(points, clustering, mode=mode, k=3, seed=1)
    assert threshold is None
    assert mask.tolist() == is_content.tolist()


def test_anchored_kmeans_holds_one_centroid_at_the_origin() -> None:
    points, is_content = blob_and_far_points()
    labels, centroids = kmeans(points, 3, np.random.default_rng(1), anchored=True)
    assert centroids[0].tolist() == [0.0, 0.0]
    assert ((labels == 0) == ~is_content).all()
    # The other two centroids are the means of their clusters.
    for c in (1, 2):
        assert centroids[c] == pytest.approx(points[labels == c].mean(axis=0))


def test_kmeans_finds_three_separated_groups() -> None:
    groups = [np.array([0.0, 0.0]), np.array([100.0, 0.0]), np.array([0.0, 100.0])]
    rng = np.random.default_rng(3)
    points = np.concatenate([g + rng.normal(0, 1, (20, 2)) for g in groups])
    labels, centroids = kmeans(points, 3, np.random.default_rng(7), anchored=False)
    assert len(set(labels[:20])) == len(set(labels[20:40])) == len(set(labels[40:])) == 1
    assert len(set(labels.tolist())) == 3
    assert nearest_to_origin(centroids) == labels[0]


def test_farthest_first_takes_the_farthest_points_as_centres() -> None:
    # Points on a line: whichever point starts, the next centres are the extremes,
    # 0 and 100, and the middle cluster takes what is nearest to the first centre.
    points = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [49.0, 0.0], [50.0, 0.0], [100.0, 0.0]])
    for seed in range(6):
        labels, centroids = farthest_first(points, 3, np.random.default_rng(seed))
        clusters = {frozenset(np.flatnonzero(labels == c).tolist()) for c in set(labels.tolist())}
        assert frozenset({5}) in clusters
        assert any(0 in c for c in clusters)
        assert len(clusters) == 3
        assert len(centroids) == 3


def test_farthest_first_keeps_the_chosen_points_as_centres() -> None:
    # Weka's FarthestFirst (the paper's clusterer): m_ClusterCentroids are the chosen
    # instances, never moved; clusterProcessedInstance puts each point with the nearest.
    rng = np.random.default_rng(9)
    points = np.abs(rng.normal(0, 10, (200, 2)))
    labels, centres = farthest_first(points, 3, np.random.default_rng(1))
    rows = {tuple(p) for p in points.tolist()}
    assert all(tuple(c) in rows for c in centres.tolist())
    nearest = ((points[:, None, :] - centres[None]) ** 2).sum(axis=2).argmin(axis=1)
    assert labels.tolist() == nearest.tolist()


def test_the_non_content_cluster_is_the_one_whose_chosen_point_is_nearest_the_origin() -> None:
    # "the non-content label is given to the cluster with the centroid closest to the
    # origin": with Weka's FarthestFirst the centroid is the chosen point. Seed 11 starts
    # at P1 = (0, 12); then P4 = (100, 100), the farthest, then P3 = (13, 0). P2 = (0, 20)
    # joins P1. Chosen points: |P1| = 12 < |P3| = 13, so {P1, P2} is non-content; the
    # cluster means would say otherwise (|(0, 16)| = 16 > 13).
    points = np.array([[0.0, 12.0], [0.0, 20.0], [13.0, 0.0], [100.0, 100.0]])
    assert np.random.default_rng(11).integers(4) == 0
    mask, _ = partition(points, "farthest-first", seed=11)
    assert mask.tolist() == [False, False, True, True]


def test_a_degenerate_deviation_falls_back_to_the_sample_deviation_of_all_points() -> None:
    # MakeDensityBasedClusterer: a deviation <= 1e-6 is replaced by
    # data.attributeStats(j).numericStats.stdDev, Weka's sample deviation (n - 1).
    values = np.array([0.0, 0.0, 0.0, 0.0, 10.0, 12.0])
    weights = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 1, 1]], dtype=float)
    _, stds, priors = _fit_diagonal_gaussians(values[None, :], weights, laplace=True)
    assert stds[0, 0] == pytest.approx(np.std(values, ddof=1))
    assert stds[1, 0] == pytest.approx(1.0)
    assert priors.tolist() == pytest.approx([5 / 8, 3 / 8])


def test_farthest_first_stops_when_points_run_out() -> None:
    points = np.array([[1.0, 1.0], [1.0, 1.0], [5.0, 5.0]])
    labels, centroids = farthest_first(points, 3, np.random.default_rng(0))
    assert len(centroids) == 2
    assert labels[0] == labels[1] != labels[2]


def test_em_agrees_with_scikit_learn_on_separated_groups() -> None:
    mixture = pytest.importorskip("sklearn.mixture")
    rng = np.random.default_rng(5)
    points = np.concatenate(
        [
            rng.normal((0, 0), (1, 1), (200, 2)),
            rng.normal((30, 5), (4, 1), (60, 2)),
            rng.normal((10, 40), (2, 6), (60, 2)),
        ]
    )
    labels, means = gaussian_em(points, 3, np.random.default_rng(1))
    reference = mixture.GaussianMixture(3, covariance_type="diag", random_state=0).fit(points)
    theirs = reference.predict(points)
    # Same partition up to the numbering of the components.
    pairs = set(zip(labels.tolist(), theirs.tolist(), strict=True))
    assert len(pairs) == 3
    assert sorted(map(tuple, np.round(means, 0))) == sorted(
        map(tuple, np.round(reference.means_, 0))
    )


def test_density_mode_moves_a_point_from_a_tight_cluster_to_a_wide_one() -> None:
    # Cluster 0: 50 points at -10 and +10 (mean 0, std 10). Cluster 1: 50 points at
    # 100 +- 0.1, and the point 55, which is nearer to 100 than to 0 by distance.
    # Fitted normals: cluster 1 with the point 55 has mean 99.12 and std 6.2, so
    # log N(55) = -25.0 - 1.8 - 0.9 = -27.7 there, against -15.1 - 2.3 - 0.9 = -18.3 in
    # cluster 0 (Laplace priors 51/103 and 52/103): by density the point 55 joins cluster 0.
    wide = np.repeat([-10.0, 10.0], 25)
    tight = np.repeat([99.9, 100.1], 25)
    points = np.concatenate((wide, tight, [55.0]))[:, None]
    labels = np.array([0] * 50 + [1] * 50 + [1])
    moved = density_reassign(points, labels, 2)
    assert moved[-1] == 0
    assert (moved[:-1] == labels[:-1]).all()


def test_density_mode_keeps_the_identity_of_the_non_content_cluster() -> None:
    points, is_content = blob_and_far_points(seed=4)
    distance, _ = partition(points, "kmeans", mode="distance")
    density, _ = partition(points, "kmeans", mode="density")
    assert distance.tolist() == density.tolist() == is_content.tolist()


@pytest.mark.parametrize("clustering", CLUSTERINGS)
def test_same_seed_same_labels(clustering: str) -> None:
    rng = np.random.default_rng(11)
    # An unclear page: one smear of points, where random choices matter.
    points = np.abs(rng.normal(0, 10, (500, 2))) * rng.uniform(0, 3, (500, 1))
    first, _ = partition(points, clustering, seed=42)
    again, _ = partition(points, clustering, seed=42)
    assert first.tolist() == again.tolist()


def test_seed_changes_the_random_first_centre() -> None:
    rng = np.random.default_rng(12)
    points = np.abs(rng.normal(0, 10, (500, 2)))
    outcomes = {tuple(partition(points, "farthest-first", seed=s)[0].tolist()) for s in range(10)}
    assert len(outcomes) > 1


def test_degenerate_inputs_do_not_fail() -> None:
    for clustering, mode in itertools.product(CLUSTERINGS, MODES):
        if clustering == "threshold" and mode == "density":
            continue
        empty, _ = partition(np.zeros((0, 2)), clustering, mode=mode)
        assert empty.shape == (0,)
        single, _ = partition(np.array([[5.0, 1.0]]), clustering, mode=mode)
        assert single.shape == (1,)
        zeros, _ = partition(np.zeros((50, 2)), clustering, mode=mode)
        assert zeros.shape == (50,)
        if clustering != "threshold":
            assert not zeros.any()  # everything sits at the origin: nothing is content


def test_unknown_names_are_rejected_naming_the_value_and_the_choices() -> None:
    with pytest.raises(ExtractionError, match="'dbscan'; choose one of: threshold") as raised:
        partition(np.zeros((3, 2)), "dbscan")
    assert raised.value.kind == "bad_parameter"
    with pytest.raises(ExtractionError, match="'fuzzy'; choose one of: distance"):
        partition(np.zeros((3, 2)), "kmeans", mode="fuzzy")
