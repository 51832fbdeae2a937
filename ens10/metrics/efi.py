"""Extreme Forecast Index (Lalaurette 2003; as used by ENS-10): how far the ensemble CDF lies
from the model-climate CDF, weighted towards the tails.

    EFI = 2/pi * integral_0^1 (p - F_f(q_p)) / sqrt(p (1 - p)) dp

with q_p the model-climate p-quantile and F_f the ensemble's CDF. EFI is -1 (every member below
the climate minimum) ... 0 (ensemble distributed like the climate) ... +1 (every member above).
"""

from __future__ import annotations

import numpy as np


class ExtremeForecastIndex:
    """EFI of ensembles against a model climate, on ``n_bins`` probability bins.

    Within a bin the ensemble CDF is evaluated once (at the climate quantile of the bin's centre
    probability) and the tail weight is integrated exactly, so the singular weight at p = 0, 1
    costs no accuracy: a climate-like ensemble gives 0, an ensemble outside the climate range +-1
    exactly.
    """

    def __init__(self, n_bins: int = 100) -> None:
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        self.probabilities = 0.5 * (edges[1:] + edges[:-1])
        root = np.sqrt(edges)
        asin = np.arcsin(root)
        # integral of 1/sqrt(p(1-p)) and of p/sqrt(p(1-p)) over each bin
        self._w0 = 2.0 * np.diff(asin)
        self._w1 = np.diff(asin - np.sqrt(edges * (1.0 - edges)))

    def climate_quantiles(self, climate: np.ndarray, axis: int = 0) -> np.ndarray:
        """Quantiles (n_bins, ...) of model-climate samples along ``axis`` (linear interpolation
        between order statistics, numpy's default 'linear' method)."""
        xs = np.sort(np.moveaxis(np.asarray(climate, dtype=np.float64), axis, 0), axis=0)
        pos = self.probabilities * (xs.shape[0] - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, xs.shape[0] - 1)
        frac = (pos - lo).reshape((-1,) + (1,) * (xs.ndim - 1))
        return xs[lo] * (1.0 - frac) + xs[hi] * frac

    def __call__(self, members: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
        """EFI of ``members`` (M, ...) against climate ``quantiles`` (n_bins, ...)."""
        x = np.asarray(members, dtype=np.float64)[None]
        q = np.asarray(quantiles, dtype=np.float64)[:, None]
        cdf = (x < q).mean(axis=1) + 0.5 * (x == q).mean(axis=1)  # (n_bins, ...)
        shape = (-1,) + (1,) * (cdf.ndim - 1)
        total = self._w1.sum() - (cdf * self._w0.reshape(shape)).sum(axis=0)
        return (2.0 / np.pi) * total
