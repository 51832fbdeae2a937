"""The cubed sphere's tiles: FV3's tile layout, the connectivity of tile edges, subdomains."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.grid.cube import connectivity
from fv3core.grid.metric_terms import CubedSphere
from fv3core.grid.subdomain import SubdomainSpec


def test_fv3_tile_layout() -> None:
    """Tile centres match FV3's layout (analytic: the centre of each cube face, rotated by FV3's
    -10 degrees in longitude): tiles 1, 2, 4, 5 on the equator at 350, 80, 170, 260 E; tile 3 at
    the north pole, tile 6 at the south pole (1-based, as in FV3's documentation). At C4 the
    tile centre is the grid point (2, 2) of each tile, to 1e-9 degrees."""
    n = 4
    cube = CubedSphere.build(n, radius=6.3712e6, omega=7.292e-5)
    h = cube.n_halo
    expected = [(350.0, 0.0), (80.0, 0.0), (None, 90.0), (170.0, 0.0), (260.0, 0.0), (None, -90.0)]
    for t, (lon, lat) in enumerate(expected):
        clon, clat = np.rad2deg(cube.fields["grid"][t, h + n // 2, h + n // 2])
        assert clat == pytest.approx(lat, abs=1e-9)
        if lon is not None:
            assert (clon - lon + 180.0) % 360.0 - 180.0 == pytest.approx(0.0, abs=1e-9)


def test_connectivity_is_symmetric() -> None:
    """Each tile edge has exactly one partner edge, and the partner points back (topology of a
    cube: every tile touches 4 others)."""
    conn = connectivity()
    for (t, side), nb in conn.items():
        back = conn[(nb.tile, nb.side)]
        assert (back.tile, back.side, back.reversed) == (t, side, nb.reversed)
    for t in range(6):
        assert len({conn[(t, s)].tile for s in ("west", "east", "south", "north")}) == 4


def test_bad_resolution_and_subdomain() -> None:
    """User mistakes raise FV3ConfigError naming the offending value."""
    with pytest.raises(FV3ConfigError, match="C1"):
        CubedSphere.build(1, radius=6.3712e6, omega=7.292e-5)
    with pytest.raises(FV3ConfigError, match="outside"):
        SubdomainSpec(12, 0, 0, 13, 0, 12)
    with pytest.raises(FV3ConfigError, match="tile=6"):
        SubdomainSpec(12, 6, 0, 12, 0, 12)
