"""ENS-10 verification metrics (numpy/xarray; torch versions in :mod:`ens10.metrics.torch`)."""

from ens10.metrics.crps import crps_ensemble, crps_gaussian
from ens10.metrics.diagnostics import (
    latitude_weights,
    pit_gaussian,
    rank_histogram,
    reliability_curve,
    spread_skill_ratio,
    weighted_mean,
)
from ens10.metrics.efi import ExtremeForecastIndex
from ens10.metrics.threshold import ThresholdWeightedCRPS
from ens10.metrics.uncertainty import BlockBootstrap

__all__ = [
    "BlockBootstrap",
    "ExtremeForecastIndex",
    "ThresholdWeightedCRPS",
    "crps_ensemble",
    "crps_gaussian",
    "latitude_weights",
    "pit_gaussian",
    "rank_histogram",
    "reliability_curve",
    "spread_skill_ratio",
    "weighted_mean",
]
