"""CETR's numerics (Weninger and Hsu, Eq. 1-4) against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scrapy_tagratio.errors import ExtractionError
from scrapy_tagratio.signal import gaussian_kernel, gaussian_smooth, moving_average_derivative

# Eq. 1 for sigma = 3: exp(-j^2 / 18), j = -3..3, i.e. 1, 0.945959, 0.800737, 0.606531;
# the whole kernel sums to 5.706455, so Eq. 2 (normalised over the whole kernel) gives:
KERNEL_SIGMA_3 = [0.106289, 0.140321, 0.165770, 0.175240, 0.165770, 0.140321, 0.106289]


def test_kernel_for_sigma_3_matches_eq_1_and_2_by_hand() -> None:
    kernel = gaussian_kernel(3.0)
    assert kernel.shape == (7,)  # width 2 * ceil(sigma) + 1
    assert kernel == pytest.approx(KERNEL_SIGMA_3, abs=1e-6)
    assert kernel.sum() == pytest.approx(1.0)


def test_kernel_width_rounds_sigma_up() -> None:
    kernel = gaussian_kernel(2.5)
    assert kernel.shape == (7,)  # ceil(2.5) = 3
    for j in range(4):
        assert kernel[3 + j] / kernel[3] == pytest.approx(math.exp(-(j**2) / 12.5))


def test_kernel_rejects_non_positive_sigma() -> None:
    with pytest.raises(ExtractionError, match="sigma must be > 0, got 0") as raised:
        gaussian_kernel(0)
    assert raised.value.kind == "bad_parameter"


def test_smoothing_an_impulse_interior_points_follow_eq_3() -> None:
    # h = 10 at line 4 of 9. Interior points (the whole kernel inside: 3 <= i <= 5; Eq. 3's
    # upper bound len(h) - ceil(sigma) would reach one past the end):
    # h'_4 = k'_3 * 10 = 1.752401, h'_3 = k'_2 * 10 = h'_5 = k'_4 * 10 = 1.657701.
    impulse = np.array([0, 0, 0, 0, 10, 0, 0, 0, 0], dtype=float)
    smoothed = gaussian_smooth(impulse, 3.0)
    assert smoothed[3:6] == pytest.approx([1.657701, 1.752401, 1.657701], abs=1e-6)


def test_smoothing_edges_renormalise_the_part_of_the_kernel_inside() -> None:
    # Edges (Eq. 3 is silent), h = 10 at line 3 of 7: h'_0 = k'_0 * 10 / (k'_0 + ... + k'_3)
    # = 1.062892 / 0.587620 = 1.808797; h'_1 = k'_1 * 10 / (k'_0 + ... + k'_4) = 1.862532;
    # h'_2 = k'_2 * 10 / (k'_0 + ... + k'_5) = 1.854850; h'_4 = k'_4 * 10 / (k'_0 + ... + k'_5)
    # = 1.854850 again by symmetry.
    smoothed = gaussian_smooth(np.array([0, 0, 0, 10, 0, 0, 0], dtype=float), 3.0)
    assert smoothed == pytest.approx(
        [1.808797, 1.862532, 1.854850, 1.752401, 1.854850, 1.862532, 1.808797], abs=1e-6
    )
    # ... so a constant histogram stays constant, edges included, also when it is
    # shorter than the kernel (the output always has the histogram's length).
    assert gaussian_smooth(np.full(5, 4.0), 3.0) == pytest.approx([4.0] * 5)
    assert gaussian_smooth(np.array([7.0]), 3.0) == pytest.approx([7.0])


def test_smoothing_spreads_a_spike_and_keeps_its_place() -> None:
    spike = np.zeros(40)
    spike[20] = 100.0
    smoothed = gaussian_smooth(spike, 3.0)
    assert int(np.argmax(smoothed)) == 20
    assert smoothed.max() < 20  # 100 * 0.175240
    assert np.count_nonzero(smoothed > 1e-12) == 7  # radius 3 on either side


def test_derivative_eq_4_is_the_mean_of_the_next_q_minus_the_value() -> None:
    # h' = 1, 2, 4, 8, 16 with q = 3:
    # g_0 = (2 + 4 + 8) / 3 - 1 = 11/3, g_1 = (4 + 8 + 16) / 3 - 2 = 22/3 (Eq. 4 proper,
    # 0 <= i < len - q); near the end the mean of what is left: g_2 = (8 + 16) / 2 - 4 = 8,
    # g_3 = 16 - 8 = 8, and g_4 = 0 (nothing follows).
    g = moving_average_derivative(np.array([1, 2, 4, 8, 16], dtype=float), 3)
    assert g == pytest.approx([11 / 3, 22 / 3, 8.0, 8.0, 0.0])


def test_derivative_of_a_ramp_is_flat() -> None:
    # h'_i = i: the mean of i+1..i+3 is i+2, so g_i = 2 wherever three values follow.
    g = moving_average_derivative(np.arange(10, dtype=float), 3)
    assert g[:7] == pytest.approx([2.0] * 7)


def test_derivative_rejects_q_below_one_and_handles_empty_input() -> None:
    with pytest.raises(ExtractionError, match="q must be >= 1, got 0"):
        moving_average_derivative(np.ones(3), 0)
    assert moving_average_derivative(np.zeros(0), 3).size == 0
    assert gaussian_smooth(np.zeros(0), 3.0).size == 0
