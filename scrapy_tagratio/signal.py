"""Shared numerics of the histogram methods: the discrete Gaussian kernel and smoothing
(CETR, Weninger and Hsu, Eq. 1-3) and the moving-average derivative (Eq. 4).

Readings of the paper (its equations are ambiguous):

* Eq. 1 builds a kernel of width ``2*ceil(sigma)+1`` with values ``exp(-j^2 / 2 sigma^2)``
  for ``j = -ceil(sigma)..ceil(sigma)``. Eq. 2 normalises by a sum over half the kernel;
  we normalise over the *whole* kernel, so smoothing preserves the histogram's mass.
* Eq. 3 defines interior points only; at the edges the kernel is cut off and renormalised
  over the part that lies inside the histogram (so a constant histogram stays constant).
* Eq. 4 sums ``q+1`` terms but the text says "the mean of the next three elements":
  we take the mean of ``h'[i+1..i+q]`` minus ``h'[i]``; near the end, the mean of what is
  left (the last point gets 0), so ``len(g) == len(h')``.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import ExtractionError

__all__ = ["gaussian_kernel", "gaussian_smooth", "moving_average_derivative"]


def gaussian_kernel(sigma: float, radius: int | None = None) -> np.ndarray:
    """Eq. 1-2: the normalised discrete Gaussian, ``radius = ceil(sigma)`` by default."""
    if not sigma > 0:
        raise ExtractionError(f"sigma must be > 0, got {sigma!r}", kind="bad_parameter")
    r = math.ceil(sigma) if radius is None else int(radius)
    j = np.arange(-r, r + 1, dtype=np.float64)
    kernel = np.exp(-(j**2) / (2.0 * sigma**2))
    return kernel / kernel.sum()


def gaussian_smooth(values: np.ndarray, sigma: float, radius: int | None = None) -> np.ndarray:
    """Eq. 3: convolve ``values`` with :func:`gaussian_kernel`; edges renormalised."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.copy()
    kernel = gaussian_kernel(sigma, radius)
    # "full" then cut: mode="same" returns the kernel's length for a shorter histogram.
    r, n = kernel.size // 2, values.size
    smoothed = np.convolve(values, kernel, mode="full")[r : r + n]
    weight = np.convolve(np.ones_like(values), kernel, mode="full")[r : r + n]
    return smoothed / weight


def moving_average_derivative(values: np.ndarray, q: int = 3) -> np.ndarray:
    """Eq. 4: ``mean(h'[i+1..i+q]) - h'[i]`` (the mean of what is left near the end)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return values.copy()
    if q < 1:
        raise ExtractionError(f"q must be >= 1, got {q!r}", kind="bad_parameter")
    prefix = np.concatenate(([0.0], np.cumsum(values)))
    start = np.arange(n) + 1
    stop = np.minimum(start + q, n)
    count = stop - start
    ahead = np.where(count > 0, (prefix[stop] - prefix[start]) / np.maximum(count, 1), values)
    return ahead - values
