"""Threshold-weighted CRPS of Gaussian forecasts: the CRPS restricted to one tail.

twCRPS(F, y) = integral over z >= t of (F(z) - 1{y <= z})^2 dz (weight 1{z >= t}; Gneiting &
Ranjan 2011) scores only how well a forecast places the outcomes above the threshold ``t``
(heat extremes; ``tail="lower"`` scores below it, cold extremes). For F = N(mu, sigma^2) it is
sigma times the standard-normal score at tau = (t - mu) / sigma and w = max((y - mu) / sigma, tau):

    w (2 Phi(w) - 1) + 2 phi(w) - tau Phi(tau)^2 - 2 phi(tau) Phi(tau) - (1 - Phi(sqrt(2) tau)) / sqrt(pi),

from the chaining form E|v(X) - v(y)| - E|v(X) - v(X')| / 2 with v(z) = max(z, t) (Allen et al.
2023); as t -> -inf it is the closed-form CRPS.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ens10.metrics.crps import _INV_SQRT_2PI, _INV_SQRT_PI


def _pdf(z: np.ndarray) -> np.ndarray:
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


class ThresholdWeightedCRPS:
    """``ThresholdWeightedCRPS(tail="upper")(mu, sigma, y, threshold)``: the twCRPS of
    N(mu, sigma^2) at ``y`` for outcomes above (``"upper"``) or below (``"lower"``)
    ``threshold``; broadcasts, in the units of ``y``."""

    def __init__(self, tail: str = "upper") -> None:
        if tail not in ("upper", "lower"):
            raise ValueError(f"tail {tail!r}: use 'upper' or 'lower'")
        self.tail = tail

    def __call__(self, mu, sigma, y, threshold) -> np.ndarray:
        mu, sigma, y, t = (np.asarray(a, dtype=np.float64) for a in (mu, sigma, y, threshold))
        if self.tail == "lower":  # the lower tail of F is the upper tail of -X
            mu, y, t = -mu, -y, -t
        tau = (t - mu) / sigma
        w = np.maximum((y - mu) / sigma, tau)
        cdf_tau = ndtr(tau)
        score = (w * (2.0 * ndtr(w) - 1.0) + 2.0 * _pdf(w) - tau * cdf_tau**2
                 - 2.0 * _pdf(tau) * cdf_tau - ndtr(-np.sqrt(2.0) * tau) * _INV_SQRT_PI)  # fmt: skip
        return sigma * score
