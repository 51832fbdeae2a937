"""Uncertainty of mean scores over forecast initialisations: a moving-block bootstrap.

Scores of consecutive initialisations are correlated (the weather persists), so resampling
single initialisations would understate the uncertainty. :class:`BlockBootstrap` resamples
blocks of ``block`` consecutive initialisations (Künsch 1989, circular blocks) and gives
percentile intervals of the mean score and, for two forecasts scored on the same
initialisations, of the mean difference with a two-sided bootstrap p-value (the same resampled
indices for both: a paired test).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Interval:
    """A mean with its bootstrap percentile interval at ``level``."""

    mean: float
    low: float
    high: float
    level: float


@dataclass(frozen=True)
class PairedDifference:
    """Mean of ``a - b`` with its interval, and the two-sided bootstrap p-value of "no
    difference"; ``significant`` when the interval excludes 0."""

    difference: Interval
    p_value: float

    @property
    def significant(self) -> bool:
        return self.difference.low > 0.0 or self.difference.high < 0.0


def default_block(n: int) -> int:
    """The block length n^(1/3), rounded up (the rate that minimises the bootstrap's error of
    the variance of a mean; Hall, Horowitz & Jing 1995)."""
    return max(1, math.ceil(n ** (1.0 / 3.0)))


class BlockBootstrap:
    """``BlockBootstrap(n, block=None, resamples=2000, seed=0)``: resampled mean scores over
    ``n`` initialisations in time order, from ``resamples`` draws of ``ceil(n / block)``
    circular blocks (``block`` defaults to :func:`default_block`)."""

    def __init__(self, n: int, block: int | None = None, resamples: int = 2000, seed: int = 0):
        if n < 2:
            raise ValueError(f"a bootstrap needs at least 2 initialisations, got {n}")
        self.n = n
        self.block = default_block(n) if block is None else int(block)
        if not 1 <= self.block <= n:
            raise ValueError(f"block length {self.block} outside 1..{n}")
        self.resamples = resamples
        rng = np.random.default_rng(seed)
        starts = rng.integers(0, n, size=(resamples, math.ceil(n / self.block)))
        index = (starts[:, :, None] + np.arange(self.block)) % n
        self.index = index.reshape(resamples, -1)[:, :n]  # (resamples, n) initialisations

    def _check(self, scores: np.ndarray) -> np.ndarray:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape != (self.n,):
            raise ValueError(f"expected {self.n} scores (one per initialisation), got {scores.shape}")
        return scores

    def means(self, scores: np.ndarray) -> np.ndarray:
        """The ``resamples`` bootstrap means of ``scores`` (one per initialisation)."""
        return self._check(scores)[self.index].mean(axis=1)

    def interval(self, scores: np.ndarray, level: float = 0.95) -> Interval:
        """The mean of ``scores`` and its percentile interval at ``level``."""
        draws = self.means(scores)
        tail = 50.0 * (1.0 - level)
        low, high = np.percentile(draws, [tail, 100.0 - tail])
        return Interval(float(self._check(scores).mean()), float(low), float(high), level)

    def paired(self, a: np.ndarray, b: np.ndarray, level: float = 0.95) -> PairedDifference:
        """``a - b`` (scores of two forecasts on the same initialisations): its mean, interval
        and two-sided p-value (twice the share of resampled mean differences on the far side
        of 0, at least 1 / resamples)."""
        diff = self._check(a) - self._check(b)
        draws = self.means(diff)
        tail = 50.0 * (1.0 - level)
        low, high = np.percentile(draws, [tail, 100.0 - tail])
        below, above = np.mean(draws <= 0.0), np.mean(draws >= 0.0)
        p = min(1.0, max(2.0 * min(below, above), 1.0 / self.resamples))
        return PairedDifference(Interval(float(diff.mean()), float(low), float(high), level), float(p))
