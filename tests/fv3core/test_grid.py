"""Grid and metric terms of the FV3 cubed sphere."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

from fv3core.errors import FV3ConfigError
from fv3core.grid import MetricTerms, SubdomainSpec, connectivity
from fv3core.grid.spherical import xyz_to_lonlat


def _tile(n: int, tile: int, **kw) -> MetricTerms:
    return MetricTerms.build(SubdomainSpec(n, tile, 0, n, 0, n), **kw)


@pytest.mark.parametrize("n", [12, 48])
@pytest.mark.parametrize("grid_type", ["equal_distance", "equiangular"])
def test_total_area_is_sphere_area(n: int, grid_type: str) -> None:
    """Sum of cell areas over the 6 tiles equals 4 pi R^2 (analytic) to 1e-12 relative."""
    total = sum(_tile(n, t, grid_type=grid_type).interior_area.sum() for t in range(6))
    radius = _tile(n, 0).radius
    assert abs(total / (4.0 * np.pi * radius**2) - 1.0) < 1e-12


def test_fv3_tile_layout() -> None:
    """Tile centres match FV3's layout: tiles 1, 2, 4, 5 on the equator at 350, 80, 170, 260 E;
    tile 3 at the north pole, tile 6 at the south pole (1-based, as in FV3 documentation)."""
    n = 4
    expected = [(350.0, 0.0), (80.0, 0.0), (None, 90.0), (170.0, 0.0), (260.0, 0.0), (None, -90.0)]
    for t, (lon, lat) in enumerate(expected):
        g = _tile(n, t)
        clon, clat = xyz_to_lonlat(g.xyz[3 + n // 2, 3 + n // 2])
        assert np.rad2deg(clat) == pytest.approx(lat, abs=1e-9)
        if lon is not None:
            assert np.rad2deg(clon) == pytest.approx(lon, abs=1e-9)


def test_connectivity_is_symmetric() -> None:
    """Each tile edge has exactly one partner edge, and the partner points back (topology of a
    cube: every tile touches 4 others)."""
    conn = connectivity()
    for (t, side), nb in conn.items():
        back = conn[(nb.tile, nb.side)]
        assert (back.tile, back.side, back.reversed) == (t, side, nb.reversed)
    for t in range(6):
        assert len({conn[(t, s)].tile for s in ("west", "east", "south", "north")}) == 4


@pytest.mark.parametrize("n", [12])
def test_halo_metric_terms_equal_neighbour_interior(n: int) -> None:
    """Continuity across tile edges: every non-corner halo cell of a tile coincides (distance
    < 1e-9 rad, found by a k-d tree search, independent of the connectivity table) with an
    interior cell of another tile, and its area, dxa/dya pair and Coriolis parameter equal that
    cell's to 1e-9 relative (dxa/dya may swap roles on rotated tiles)."""
    tiles = [_tile(n, t) for t in range(6)]
    h = 3
    centres = np.concatenate([g.xyz_agrid[h:-h, h:-h].reshape(-1, 3) for g in tiles])
    owner = np.concatenate(
        [np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), -1).reshape(-1, 2)] * 6
    )
    tile_of = np.repeat(np.arange(6), n * n)
    tree = cKDTree(centres)
    for t, g in enumerate(tiles):
        mask = np.zeros(g.area.shape, bool)
        mask[:h, h:-h] = mask[-h:, h:-h] = mask[h:-h, :h] = mask[h:-h, -h:] = True
        dist, idx = tree.query(g.xyz_agrid[mask])
        assert dist.max() < 1e-9
        assert np.all(tile_of[idx] != t)
        for k, (i, j) in enumerate(zip(*np.nonzero(mask))):
            src = tiles[tile_of[idx[k]]]
            si, sj = owner[idx[k]] + h
            assert g.area[i, j] == pytest.approx(src.area[si, sj], rel=1e-9)
            assert sorted([g.dxa[i, j], g.dya[i, j]]) == pytest.approx(
                sorted([src.dxa[si, sj], src.dya[si, sj]]), rel=1e-9
            )
            assert g.f0[i, j] == pytest.approx(src.f0[si, sj], rel=1e-9, abs=1e-18)


def test_subdomain_halo_equals_adjacent_subdomain() -> None:
    """With a 2x2 layout, the halo of the south-west subdomain equals the interior of its
    east neighbour on the same tile (exact copy of the same geometry)."""
    n, h = 12, 3
    sw = MetricTerms.build(SubdomainSpec(n, 1, 0, 6, 0, 6))
    se = MetricTerms.build(SubdomainSpec(n, 1, 6, 12, 0, 6))
    np.testing.assert_array_equal(sw.area[-h:, h:-h], se.area[h : 2 * h, h:-h])
    np.testing.assert_array_equal(sw.dx[-h:, h:-h], se.dx[h : 2 * h, h:-h])


def test_metric_sanity() -> None:
    """Orthogonality at tile centres (cos_sg = 0 on the tile's central lines by symmetry), the
    120 degree angle at cube vertices (|cos| = 1/2 in the corner cell, analytic for a cube
    vertex in the limit of small cells: checked to 0.02), and positive lengths."""
    n, h = 48, 3
    g = _tile(n, 0)
    c = n // 2 + h
    assert np.abs(g.cos_sg[4, c - 1 : c + 1, c - 1 : c + 1]).max() < 0.03
    assert abs(abs(g.cos_sg[4, h, h]) - 0.5) < 0.02
    for arr in (g.dx, g.dy, g.dxa, g.dya, g.dxc, g.dyc, g.area):
        assert np.all(arr > 0)


def test_bad_resolution_and_subdomain() -> None:
    """User mistakes raise FV3ConfigError naming the offending value."""
    with pytest.raises(FV3ConfigError, match="C1"):
        MetricTerms.build(SubdomainSpec(1, 0, 0, 1, 0, 1))
    with pytest.raises(FV3ConfigError, match="outside"):
        SubdomainSpec(12, 0, 0, 13, 0, 12)
    with pytest.raises(FV3ConfigError, match="grid_type"):
        _tile(12, 0, grid_type="conformal")


def test_divergence_theorem_with_metric_terms() -> None:
    """Face lengths, face normals and cell areas satisfy the divergence theorem: for the
    tangential gradient of the coordinate function x (spherical harmonic l=1,
    div grad x = -2x / R^2, analytic), the sum of exact face fluxes over each cell of the
    north-pole tile at C48 divided by the area matches -2x/R^2 to 1e-3 relative wherever
    |x| > 0.1."""
    g = _tile(48, 2)
    ex = np.array([1.0, 0.0, 0.0])

    def grad(p):
        return (ex - (p @ ex)[..., None] * p) / g.radius

    fx = np.sum(grad(g.xyz_xface) * g.xface_normal(), -1) * g.dy
    fy = np.sum(grad(g.xyz_yface) * g.yface_normal(), -1) * g.dx
    div = (fx[1:] - fx[:-1] + fy[:, 1:] - fy[:, :-1]) / g.area
    x = g.xyz_agrid[..., 0]
    exact = -2.0 * x / g.radius**2
    mask = np.abs(x) > 0.1
    mask[:3] = mask[-3:] = mask[:, :3] = mask[:, -3:] = False
    np.testing.assert_allclose(div[mask], exact[mask], rtol=1e-3)
