"""Edge synchronisation, FV3 corner fill, and single-tile (periodic / closed) exchanges.

References: the 3-D cube oracle (``cube_oracle``), pace-util's ``fill_corners_2d`` A- and B-grid
formulas written out below, and ``numpy.pad(mode="wrap")`` of the global tile. All comparisons
are exact (tolerance 0).
"""

from __future__ import annotations

import cube_oracle as oracle
import numpy as np
import pytest
from cluster_helpers import KINDS, assert_bitwise, build_local, exchange_all, make_spec

from mapping.cluster import CubedSpherePartitioner, ScalarHalo, TilePartitioner, VectorHalo


def _perturb_north_east_boundaries(local, part, N, h, staggers, rng) -> None:
    n = N // part.layout[0]
    for arrays in local:
        for (sx, sy), a in zip(staggers, arrays):
            if sx:
                a[h + n, h : h + n + sy] += rng.uniform(1, 2, a[h + n, h : h + n + sy].shape)
            if sy:
                a[h : h + n + sx, h + n] += rng.uniform(1, 2, a[h : h + n + sx, h + n].shape)


@pytest.mark.parametrize("kind", ["corner", "C", "D"])
def test_sync_overwrites_north_east_boundaries_with_owner_values(kind, rng) -> None:
    """Non-owned (north/east) boundary points are perturbed; one exchange restores them to the
    owner's values (oracle, exact), a second one also every halo copy taken from them."""
    part = CubedSpherePartitioner((2, 2))
    N, h, st = 8, 2, KINDS[kind]
    n = N // 2
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    _perturb_north_east_boundaries(local, part, N, h, st, rng)
    exchanges = build_local(part, lambda r: [make_spec(kind, local[r], h)])
    exchange_all(exchanges)
    interior = [
        [a[h : h + n + sx, h : h + n + sy] for (sx, sy), a in zip(st, arrays)] for arrays in local
    ]
    interior_want = [
        [a[h : h + n + sx, h : h + n + sy] for (sx, sy), a in zip(st, arrays)] for arrays in want
    ]
    # cube-corner points have no owner: each rank keeps its own (perturbed) value
    for arrays, wants in zip(interior, interior_want):
        for a, w in zip(arrays, wants):
            corner_pts = np.any(a != w, axis=-1)
            assert corner_pts.sum() <= 2, np.argwhere(corner_pts)
            w[corner_pts] = a[corner_pts]
    assert_bitwise(interior, interior_want)
    exchange_all(exchanges)
    for arrays, wants in zip(local, want):
        for a, w in zip(arrays, wants):
            w[h : h + n + 1, h : h + n + 1][...] = a[h : h + n + 1, h : h + n + 1]
    assert_bitwise(local, want)


def test_without_sync_boundaries_are_left_alone(rng) -> None:
    """sync_edges=False: halos match the oracle (exact); perturbed north/east boundary points
    are not overwritten."""
    part = CubedSpherePartitioner((1, 1))
    N, h, st = 6, 2, KINDS["D"]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    exchanges = build_local(part, lambda r: [make_spec("D", local[r], h, sync_edges=False)])
    exchange_all(exchanges)
    assert_bitwise(local, want)
    _perturb_north_east_boundaries(local, part, N, h, st, rng)
    before = [[a.copy() for a in arrays] for arrays in local]
    exchange_all(exchanges)
    for arrays, olds in zip(local, before):
        for (sx, sy), a, old in zip(st, arrays, olds):
            inner = (slice(h, h + N + sx), slice(h, h + N + sy))
            assert np.array_equal(a[inner], old[inner])


def _pace_corner_fill_ok(q: np.ndarray, h: int, n: int, grid: str, direction: str, corner: str):
    """pace-util fill_corners_2d formulas (A-grid: cell centres, B-grid: corners)."""
    is_, js = h, h
    ie = je = h + n - 1
    e = 0 if grid == "A" else 1  # B-grid: last interior corner index is ie + 1
    ok = True
    for i in range(1, h + 1):
        for j in range(1, h + 1):
            a = 1 if grid == "A" else 0  # A-grid sources are offset by one cell
            if direction == "x":
                tgt, src = {
                    "sw": ((is_ - i, js - j), (is_ - j, js + i - a)),
                    "nw": ((is_ - i, je + e + j), (is_ - j, je + e - i + a)),
                    "se": ((ie + e + i, js - j), (ie + e + j, js + i - a)),
                    "ne": ((ie + e + i, je + e + j), (ie + e + j, je + e - i + a)),
                }[corner]
            else:
                tgt, src = {
                    "sw": ((is_ - j, js - i), (is_ + i - a, js - j)),
                    "nw": ((is_ - j, je + e + i), (is_ + i - a, je + e + j)),
                    "se": ((ie + e + j, js - i), (ie + e - i + a, js - j)),
                    "ne": ((ie + e + j, je + e + i), (ie + e - i + a, je + e + j)),
                }[corner]
            ok &= bool(np.array_equal(q[tgt], q[src]))
    return ok


@pytest.mark.parametrize("kind", ["center", "corner"])
@pytest.mark.parametrize("direction", ["x", "y"])
def test_corner_fill_follows_fv3(kind, direction, rng) -> None:
    """At the cube corners the empty halo corners hold pace/FV3 fill_corners values (exact);
    every other point equals the oracle."""
    part = CubedSpherePartitioner((1, 1))
    N, h, st = 6, 3, KINDS[kind]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    exchange_all(build_local(part, lambda r: [make_spec(kind, local[r], h, corner_fill=direction)]))
    s = st[0][0]
    for arrays, wants in zip(local, want):
        q, w = arrays[0], wants[0]
        for corner in ("sw", "nw", "se", "ne"):
            assert _pace_corner_fill_ok(q, h, N, "A" if kind == "center" else "B", direction, corner)
        mask = np.ones(q.shape[:2], bool)
        for lo_i in (slice(0, h), slice(h + N + s, None)):
            for lo_j in (slice(0, h), slice(h + N + s, None)):
                mask[lo_i, lo_j] = False
        assert np.array_equal(q[mask], w[mask])


@pytest.mark.parametrize("kind", ["center", "corner", "C", "D"])
def test_periodic_tile_matches_numpy_wrap(kind, rng) -> None:
    """Doubly periodic 3x2 layout on a 12x8 tile: every local array equals the slice of
    ``np.pad(global, h, mode="wrap")`` around its subdomain (staggered: index NX == 0)."""
    part = TilePartitioner((3, 2), periodic=True)
    NX, NY, h, nz = 12, 8, 2, 3
    nx, ny = NX // 3, NY // 2
    st = KINDS[kind]
    glob = [rng.standard_normal((NX, NY, nz)) for _ in st]
    padded = [np.pad(g, ((h, h + 1), (h, h + 1), (0, 0)), mode="wrap") for g in glob]
    local, want = [], []
    for r in range(part.total_ranks):
        i0, _, j0, _ = part.subdomain_extent(r, NX, NY)
        arrays, wants = [], []
        for (sx, sy), p in zip(st, padded):
            w = p[i0 : i0 + nx + sx + 2 * h, j0 : j0 + ny + sy + 2 * h].copy()
            a = rng.standard_normal(w.shape)
            a[h : h + nx + sx, h : h + ny + sy] = w[h : h + nx + sx, h : h + ny + sy]
            arrays.append(a)
            wants.append(w)
        local.append(arrays)
        want.append(wants)
    exchange_all(build_local(part, lambda r: [make_spec(kind, local[r], h)]))
    assert_bitwise(local, want)


def test_closed_tile_leaves_outer_halo_and_fills_inner(rng) -> None:
    """Closed 2x2 tile: halos inside the tile come from the global array, halos past the tile
    edge stay as they were (exact)."""
    part = TilePartitioner((2, 2))
    N, h, nz = 8, 2, 2
    n = N // 2
    glob = rng.standard_normal((N + 1, N + 1, nz))  # corner points
    local, want = [], []
    for r in range(4):
        i0, _, j0, _ = part.subdomain_extent(r, N, N)
        a = rng.standard_normal((n + 1 + 2 * h, n + 1 + 2 * h, nz))
        a[h : h + n + 1, h : h + n + 1] = glob[i0 : i0 + n + 1, j0 : j0 + n + 1]
        w = a.copy()
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                gi, gj = i0 + i - h, j0 + j - h
                if 0 <= gi <= N and 0 <= gj <= N:
                    w[i, j] = glob[gi, gj]
        local.append([a])
        want.append([w])
    exchange_all(build_local(part, lambda r: [ScalarHalo(local[r][0], n_halo=h, location="corner")]))
    assert_bitwise(local, want)


def test_vector_on_periodic_tile_is_unrotated(rng) -> None:
    """Single periodic rank (its own neighbour in all 8 directions), A-grid vector: the halo
    is the wrapped interior, no sign change (np.pad wrap reference, exact)."""
    part = TilePartitioner((1, 1), periodic=True)
    u, v = (rng.standard_normal((10, 9, 2)) for _ in range(2))
    want = [np.pad(x[2:-2, 2:-2], ((2, 2), (2, 2), (0, 0)), mode="wrap") for x in (u, v)]
    exchange_all(build_local(part, lambda r: [VectorHalo(u, v, n_halo=2, grid="A")]))
    assert np.array_equal(u, want[0]) and np.array_equal(v, want[1])


def _fv3_vector_corner_rules(grid: str, h: int, n: int):
    """FV3's vector corner fill (``fill_corners_agrid`` / ``_cgrid`` / ``_dgrid`` with
    ``vector=True``, pace-util ``corners.py``) written out: per corner, a function of the loop
    indices (i, j) in 1..h giving rows (target comp, ti, tj, source comp, si, sj, sign)."""
    is_ = js = h
    ie = je = h + n - 1
    m = -1  # mysign for vector=True
    return {
        "A": {
            "sw": lambda i, j: [(0, is_ - i, js - j, 1, is_ - j, js - 1 + i, m),
                                (1, is_ - j, js - i, 0, is_ - 1 + i, js - j, m)],
            "nw": lambda i, j: [(0, is_ - i, je + j, 1, is_ - j, je - i + 1, 1),
                                (1, is_ - j, je + i, 0, is_ - 1 + i, je + j, 1)],
            "se": lambda i, j: [(0, ie + i, js - j, 1, ie + j, js - 1 + i, 1),
                                (1, ie + j, js - i, 0, ie - i + 1, js - j, 1)],
            "ne": lambda i, j: [(0, ie + i, je + j, 1, ie + j, je - i + 1, m),
                                (1, ie + j, je + i, 0, ie - i + 1, je + j, m)],
        },
        "C": {
            "sw": lambda i, j: [(0, is_ - i, js - j, 1, is_ - 1 + j, js - i, 1),
                                (1, is_ - i, js - j, 0, is_ - j, js - 1 + i, 1)],
            "nw": lambda i, j: [(0, is_ - i, je + j, 1, is_ - 1 + j, je + 1 + i, m),
                                (1, is_ - i, je + 1 + j, 0, is_ - j, je + 1 - i, m)],
            "se": lambda i, j: [(0, ie + 1 + i, js - j, 1, ie + 1 - j, js - i, m),
                                (1, ie + i, js - j, 0, ie + 1 + j, js - 1 + i, m)],
            "ne": lambda i, j: [(0, ie + 1 + i, je + j, 1, ie + 1 - j, je + 1 + i, 1),
                                (1, ie + i, je + 1 + j, 0, ie + 1 + j, je + 1 - i, 1)],
        },
        "D": {  # literal ``i + 2`` / ``j + 2`` as in pace (halo 3)
            "sw": lambda i, j: [(0, is_ - i, js - j, 1, is_ - j, i + 2, m),
                                (1, is_ - i, js - j, 0, j + 2, js - i, m)],
            "nw": lambda i, j: [(0, is_ - i, je + 1 + j, 1, is_ - j, je + 1 - i, 1),
                                (1, is_ - i, je + j, 0, j + 2, je + 1 + i, 1)],
            "se": lambda i, j: [(0, ie + i, js - j, 1, ie + 1 + j, i + 2, 1),
                                (1, ie + 1 + i, js - j, 0, ie - j + 1, js - i, 1)],
            "ne": lambda i, j: [(0, ie + i, je + 1 + j, 1, ie + 1 + j, je - i + 1, m),
                                (1, ie + 1 + i, je + j, 0, ie - j + 1, je + 1 + i, m)],
        },
    }[grid]


@pytest.mark.parametrize("layout", [(1, 1), (2, 2)])
@pytest.mark.parametrize("grid", ["A", "C", "D"])
def test_vector_corner_fill_follows_fv3(grid, layout, rng) -> None:
    """(u, v) with corner_fill on the A-, C- and D-grid: the cube-corner halo corners hold the
    values of FV3's fill_corners_{a,c,d}grid(vector=True) for halo 3 (formulas transcribed in
    ``_fv3_vector_corner_rules``), exactly; every other point equals the oracle."""
    part = CubedSpherePartitioner(layout)
    N, h, st = 6 * layout[0], 3, KINDS[grid]
    n = N // layout[0]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    exchange_all(build_local(part, lambda r: [make_spec(grid, local[r], h, corner_fill=True)]))
    rules = _fv3_vector_corner_rules(grid, h, n)
    n_checked = 0
    for rank, (arrays, wants) in enumerate(zip(local, want)):
        i_t, j_t = part.subtile_index(rank)
        at = {"s": j_t == 0, "n": j_t == layout[1] - 1, "w": i_t == 0, "e": i_t == layout[0] - 1}
        targets = [np.zeros(a.shape[:2], bool) for a in arrays]
        for corner, rule in rules.items():
            if not (at[corner[0]] and at[corner[1]]):
                continue
            for i in range(1, h + 1):
                for j in range(1, h + 1):
                    for tc, ti, tj, sc, si, sj, sign in rule(i, j):
                        assert np.array_equal(arrays[tc][ti, tj], sign * arrays[sc][si, sj]), (
                            rank, corner, tc, i, j)
                        targets[tc][ti, tj] = True
                        n_checked += 1
        for a, w, t in zip(arrays, wants, targets):
            assert np.array_equal(a[~t], w[~t])
    assert n_checked == 24 * 2 * h * h  # 8 cube corners x 3 tiles, both components


def test_vector_corner_fill_takes_no_side() -> None:
    """corner_fill 'x'/'y' on a vector pair is refused, naming the field (its sides are fixed
    by the grid)."""
    from mapping.cluster import HaloError, HaloExchange, LocalComm

    a = np.zeros((10, 10, 1))
    with pytest.raises(HaloError, match=r"field 1 \(A-grid vector\): corner_fill must be True"):
        HaloExchange(LocalComm.create(6)[0], CubedSpherePartitioner((1, 1)),
                     [ScalarHalo(a, n_halo=2), VectorHalo(a, a, n_halo=2, grid="A",
                                                          corner_fill="x")])
