"""Cubed-sphere grid generation and FV3 metric terms."""

from fv3core.grid.cube import N_TILES, connectivity, fill_tile_halos, tile_corners
from fv3core.grid.metric import OMEGA, RADIUS, MetricTerms, SubdomainSpec

__all__ = [
    "N_TILES",
    "OMEGA",
    "RADIUS",
    "MetricTerms",
    "SubdomainSpec",
    "connectivity",
    "fill_tile_halos",
    "tile_corners",
]
