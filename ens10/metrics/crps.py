"""Continuous ranked probability score, numpy versions.

CRPS(F, y) = integral (F(x) - 1{x >= y})^2 dx = E|X - y| - 1/2 E|X - X'|.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

_INV_SQRT_PI = 1.0 / np.sqrt(np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def crps_gaussian(mu, sigma, y):
    """Closed-form CRPS of N(mu, sigma^2) at y (Gneiting et al. 2005); broadcasts, any units.

    sigma * [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)],  z = (y - mu) / sigma.
    """
    mu, sigma, y = (np.asarray(a, dtype=np.float64) for a in (mu, sigma, y))
    z = (y - mu) / sigma
    cdf = 0.5 * (1.0 + erf(z / np.sqrt(2.0)))
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * z * z)
    return sigma * (z * (2.0 * cdf - 1.0) + 2.0 * pdf - _INV_SQRT_PI)


def crps_ensemble(members, y, axis: int = 0, fair: bool = False):
    """CRPS of the empirical distribution of ``members`` (along ``axis``) at ``y``.

    ``fair=True`` gives the ensemble-size-adjusted ('fair', Ferro 2014) score, whose expectation
    over M-member ensembles drawn from F equals CRPS(F):
        mean|x_i - y| - sum_ij |x_i - x_j| / (2 M (M - 1)),
    the standard score divides the second term by 2 M^2. The pairwise sum uses the sorted form
    sum_ij |x_i - x_j| = 2 sum_i (2 i - M - 1) x_(i), O(M log M).
    """
    x = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    y = np.asarray(y, dtype=np.float64)
    m = x.shape[0]
    if fair and m < 2:
        raise ValueError("the fair CRPS needs at least 2 members")
    skill = np.abs(x - y[None]).mean(axis=0)
    xs = np.sort(x, axis=0)
    rank = (2.0 * np.arange(1, m + 1) - m - 1).reshape((m,) + (1,) * (x.ndim - 1))
    pair_sum = 2.0 * (rank * xs).sum(axis=0)
    denom = 2.0 * m * (m - 1) if fair else 2.0 * m * m
    return skill - pair_sum / denom
