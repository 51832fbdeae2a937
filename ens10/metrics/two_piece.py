"""The two-piece normal distribution: a skewed predictive distribution with a closed-form CRPS.

Density ``A exp(-(x - loc)^2 / (2 s1^2))`` left of ``loc`` and ``A exp(-(x - loc)^2 / (2 s2^2))``
right of it, ``A = sqrt(2 / pi) / (s1 + s2)`` (Gibbons & Mylroie 1973; John 1982). It is a
mixture of a left half-normal ``loc - s1 |Z|`` (weight ``s1 / (s1 + s2)``) and a right one
``loc + s2 |Z|``; ``s1 = s2`` is the Gaussian. The CRPS follows from ``E|X - y| - E|X - X'| / 2``
of that mixture (Gneiting & Thorarinsdottir 2010 give the same score in another form).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import simpson
from scipy.special import erf, ndtri

_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_PHI0 = 1.0 / np.sqrt(2.0 * np.pi)
#: E| |Z1| - |Z2| | of two independent standard half-normals
_HALF_NORMAL_GINI = 2.0 * (2.0 - np.sqrt(2.0)) / np.sqrt(np.pi)


def _norm_cdf(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + erf(z / np.sqrt(2.0)))


def _abs_half_normal_minus(t: np.ndarray) -> np.ndarray:
    """E| |Z| - t | for a standard normal Z, elementwise in t."""
    tp = np.maximum(t, 0.0)
    excess = tp * (2.0 * _norm_cdf(tp) - 1.0) - 2.0 * (_PHI0 - _PHI0 * np.exp(-0.5 * tp * tp))
    return _SQRT_2_OVER_PI - t + 2.0 * excess


@dataclass(frozen=True)
class TwoPieceNormal:
    """Two-piece normal with mode ``loc``, left scale ``scale_left`` and right scale
    ``scale_right`` (arrays broadcast together)."""

    loc: np.ndarray
    scale_left: np.ndarray
    scale_right: np.ndarray

    @classmethod
    def from_moments(cls, mean, std, ratio) -> TwoPieceNormal:
        """The distribution with this mean and standard deviation whose right/left scale ratio
        is ``ratio`` (> 1: skewed to the right)."""
        mean, std, k = (np.asarray(a, dtype=np.float64) for a in (mean, std, ratio))
        s1 = std / np.sqrt((1.0 - 2.0 / np.pi) * (k - 1.0) ** 2 + k)
        s2 = k * s1
        return cls(mean - _SQRT_2_OVER_PI * (s2 - s1), s1, s2)

    @property
    def mean(self) -> np.ndarray:
        return self.loc + _SQRT_2_OVER_PI * (self.scale_right - self.scale_left)

    @property
    def std(self) -> np.ndarray:
        s1, s2 = self.scale_left, self.scale_right
        return np.sqrt((1.0 - 2.0 / np.pi) * (s2 - s1) ** 2 + s1 * s2)

    def cdf(self, x) -> np.ndarray:
        s1, s2 = self.scale_left, self.scale_right
        x = np.asarray(x, dtype=np.float64)
        left = 2.0 * s1 / (s1 + s2) * _norm_cdf((x - self.loc) / s1)
        right = (s1 - s2) / (s1 + s2) + 2.0 * s2 / (s1 + s2) * _norm_cdf((x - self.loc) / s2)
        return np.where(x < self.loc, left, right)

    def ppf(self, p) -> np.ndarray:
        """Quantile function (inverse of :meth:`cdf`)."""
        s1, s2 = self.scale_left, self.scale_right
        p = np.asarray(p, dtype=np.float64)
        w1 = s1 / (s1 + s2)
        left = self.loc + s1 * ndtri(np.minimum(p / (2.0 * w1), 1.0))
        right = self.loc + s2 * ndtri(np.clip((p * (s1 + s2) - s1 + s2) / (2.0 * s2), 0.0, 1.0))
        return np.where(p < w1, left, right)

    def crps(self, y) -> np.ndarray:
        """Closed-form CRPS at the outcomes ``y`` (same units as ``y``)."""
        s1, s2 = self.scale_left, self.scale_right
        y = np.asarray(y, dtype=np.float64)
        w1, w2 = s1 / (s1 + s2), s2 / (s1 + s2)
        skill = (w1 * s1 * _abs_half_normal_minus((self.loc - y) / s1)
                 + w2 * s2 * _abs_half_normal_minus((y - self.loc) / s2))
        spread = ((w1 * w1 * s1 + w2 * w2 * s2) * _HALF_NORMAL_GINI
                  + 2.0 * w1 * w2 * (s1 + s2) * _SQRT_2_OVER_PI)
        return skill - 0.5 * spread

    def twcrps_upper(self, y, threshold, points: int = 401) -> np.ndarray:
        """Threshold-weighted CRPS with weight 1{x > threshold}: the integral of
        ``(F(x) - 1{y <= x})^2`` over ``x > threshold``, by Simpson's rule on ``points``
        nodes either side of ``max(y, threshold)``, from 10 left scales below the mode (where
        ``F^2 < 1e-40``) to 10 right scales above."""
        y, t = np.broadcast_arrays(np.asarray(y, np.float64), np.asarray(threshold, np.float64))
        loc, s2 = (np.broadcast_to(a, y.shape) for a in (self.loc, self.scale_right))
        s1 = np.broadcast_to(self.scale_left, y.shape)
        dist = TwoPieceNormal(loc[..., None], s1[..., None], s2[..., None])
        split = np.maximum(y, t)
        end = np.maximum(split, loc) + 10.0 * s2
        u = np.linspace(0.0, 1.0, points)
        start = np.minimum(np.maximum(t, loc - 10.0 * s1), split)
        below = start[..., None] + (split - start)[..., None] * u  # F^2 between threshold and y
        above = split[..., None] + (end - split)[..., None] * u  # (1 - F)^2 beyond
        low = simpson(dist.cdf(below) ** 2, x=below, axis=-1)
        high = simpson((1.0 - dist.cdf(above)) ** 2, x=above, axis=-1)
        return np.where(np.isfinite(y), low + high, np.nan)
