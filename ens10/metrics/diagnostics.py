"""Area weights, score averaging, spread-skill ratio, rank and PIT histograms, reliability
curves."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy.special import erf


def latitude_weights(lat) -> np.ndarray:
    """cos(latitude) weights normalised to mean 1 over the given latitudes (1-D array)."""
    w = np.cos(np.deg2rad(np.asarray(lat, dtype=np.float64)))
    w = np.clip(w, 0.0, None)
    return w / w.mean()


def weighted_mean(score: xr.DataArray, lat_dim: str = "lat") -> float:
    """Area-weighted mean of a score field (cos-latitude weights of mean 1), NaN skipped."""
    w = xr.DataArray(latitude_weights(score[lat_dim].values), dims=lat_dim,
                     coords={lat_dim: score[lat_dim]})
    return float(score.weighted(w).mean(skipna=True))


def spread_skill_ratio(spread_var, error_sq, members: int | None = None) -> float:
    """sqrt(mean predicted variance) / RMSE of the predicted mean.

    For an M-member ensemble pass the unbiased member variance and ``members=M``: the ratio then
    uses (M + 1)/M * variance (Fortin et al. 2014), so a calibrated ensemble scores 1.
    For a Gaussian forecast pass sigma^2 and ``members=None``.
    """
    var = np.nanmean(np.asarray(spread_var, dtype=np.float64))
    if members is not None:
        var *= (members + 1.0) / members
    return float(np.sqrt(var / np.nanmean(np.asarray(error_sq, dtype=np.float64))))


def rank_histogram(members, y, axis: int = 0, seed: int = 0) -> np.ndarray:
    """Counts (M + 1) of the rank of ``y`` among the members; ties broken at random."""
    x = np.moveaxis(np.asarray(members, dtype=np.float64), axis, 0)
    y = np.asarray(y, dtype=np.float64)
    m = x.shape[0]
    valid = np.isfinite(y) & np.isfinite(x).all(axis=0)
    below = (x < y[None]).sum(axis=0)
    ties = (x == y[None]).sum(axis=0)
    rng = np.random.default_rng(seed)
    rank = below + np.floor(rng.random(y.shape) * (ties + 1)).astype(int)
    return np.bincount(rank[valid].ravel(), minlength=m + 1)


def pit_gaussian(mu, sigma, y) -> np.ndarray:
    """Probability integral transform Phi((y - mu)/sigma) of Gaussian forecasts."""
    z = (np.asarray(y, dtype=np.float64) - mu) / sigma
    return 0.5 * (1.0 + erf(z / np.sqrt(2.0)))


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per probability bin: the mean forecast probability, the observed frequency of the event
    and the number of forecasts (NaN where a bin is empty)."""

    edges: np.ndarray
    forecast: np.ndarray
    observed: np.ndarray
    counts: np.ndarray


def reliability_curve(probability, event, bins: int = 10) -> ReliabilityCurve:
    """The reliability diagram of forecast probabilities ``probability`` of a binary ``event``
    (same shape; NaN pairs skipped) in ``bins`` equal bins of [0, 1] (1 falls in the last):
    a calibrated forecast lies on the diagonal."""
    p = np.asarray(probability, dtype=np.float64).ravel()
    e = np.asarray(event, dtype=np.float64).ravel()
    ok = np.isfinite(p) & np.isfinite(e)
    p, e = p[ok], e[ok]
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        forecast = np.bincount(which, weights=p, minlength=bins) / counts
        observed = np.bincount(which, weights=e, minlength=bins) / counts
    return ReliabilityCurve(edges, forecast, observed, counts.astype(np.int64))
