"""Serial reference for halo exchange on the cubed sphere, built from 3-D cube geometry alone.

Each FV3 tile is a face of the cube [-N, N]^3 with an outward normal ``C`` and axes ``X``, ``Y``
(right-handed, X x Y = C). A point of a rank's array -- interior or halo -- is placed in 3-D
(halo points beyond a tile edge fold over the cube edge), the tile holding that 3-D point is
found, and the global field is read there. Vector components are carried across the edge by
unfolding the neighbour face into the receiving tile's plane. Nothing here uses the package's
connectivity table, rotation counts or index plans.
"""

from __future__ import annotations

import numpy as np

E1, E2, E3 = np.eye(3, dtype=int)
#: (C, X, Y) per tile: FV3 tiles 1..6 (0-based here); tile 2 holds the north pole.
FRAMES = [
    (E1, E2, E3),
    (E2, -E1, E3),
    (E3, -E1, -E2),
    (-E1, -E3, -E2),
    (-E2, -E3, E1),
    (-E3, E2, E1),
]
GRIDS = {"A": ((0, 0), (0, 0)), "C": ((1, 0), (0, 1)), "D": ((0, 1), (1, 0))}


def fold(tile: int, X: int, Y: int, N: int) -> np.ndarray | None:
    """3-D integer point (doubled units) of tile-frame doubled coordinates; None past a corner."""
    C, Xa, Ya = FRAMES[tile]
    a, b = X - N, Y - N
    if abs(a) > N and abs(b) > N:
        return None
    P = N * C
    for off, axis in ((a, Xa), (b, Ya)):
        if abs(off) > N:
            P = P + int(np.sign(off)) * N * axis - (abs(off) - N) * C
        else:
            P = P + off * axis
    return P


def tiles_at(P: np.ndarray, N: int) -> list[tuple[int, int, int]]:
    """(tile, X, Y) of every tile whose closed face contains P."""
    out = []
    for t, (C, Xa, Ya) in enumerate(FRAMES):
        if P @ C == N:
            out.append((t, int(P @ Xa) + N, int(P @ Ya) + N))
    return out


def owner(P: np.ndarray, N: int) -> tuple[int, int, int] | None:
    """The tile owning P: the only one, or the one with P on its west/south edge; None at a
    cube corner (three tiles)."""
    cands = tiles_at(P, N)
    if len(cands) == 1:
        return cands[0]
    if len(cands) == 2:
        ws = [c for c in cands if c[1] == 0 or c[2] == 0]
        assert len(ws) == 1, cands
        return ws[0]
    return None


def value_at(tile: int, comp: int, X: int, Y: int, G: list, staggers, N: int, use_owner=False):
    """Reference value (over k) of component ``comp`` at doubled (X, Y) of ``tile``'s frame.

    ``G[t][c]`` is the global array of component c on tile t; ``staggers[c]`` its (sx, sy);
    one component = scalar, two = vector (u, v). None where no value is defined (past a cube
    corner, or a cube-corner point itself). A point beyond the tile is read on the tile across
    that edge (the fold); a point of the tile itself on the tile itself, or with ``use_owner``
    on the tile owning it (west/south edge rule) -- used to make G consistent.
    """
    P = fold(tile, X, Y, N)
    if P is None:
        return None
    cands = tiles_at(P, N)
    Ca, XA, YA = FRAMES[tile]
    if 0 <= X <= 2 * N and 0 <= Y <= 2 * N:  # on the tile itself
        if len(cands) >= 3:
            return None
        own = owner(P, N) if use_owner else next(c for c in cands if c[0] == tile)
    else:  # across the edge the point lies beyond
        out_axis = XA * int(np.sign(X - N)) if not 0 <= X <= 2 * N else YA * int(np.sign(Y - N))
        own = next(c for c in cands if np.array_equal(FRAMES[c[0]][0], out_axis))
    tb, Xb, Yb = own
    if len(staggers) == 1:
        sx, sy = staggers[0]
        return G[tb][0][(Xb - 1 + sx) // 2, (Yb - 1 + sy) // 2]
    # vector: 3-D vector from the components present at the point on tile tb
    Cb, XB, YB = FRAMES[tb]
    w = 0
    for c, (sx, sy) in enumerate(staggers):
        if (Xb - 1 + sx) % 2 == 0 and (Yb - 1 + sy) % 2 == 0:
            axis = XB if c == 0 else YB
            w = w + G[tb][c][(Xb - 1 + sx) // 2, (Yb - 1 + sy) // 2][..., None] * axis
    if tb == tile:
        comps = (w @ XA, w @ YA)
    else:  # unfold tb into tile's plane across their shared edge: -Ca on tb -> Cb-direction
        if abs(Cb @ XA) == 1:
            comps = ((w @ -Ca) * (Cb @ XA), w @ YA)
        else:
            comps = (w @ XA, (w @ -Ca) * (Cb @ YA))
    return comps[comp]


def make_global(N: int, nz: int, staggers, rng: np.random.Generator) -> list:
    """Random global field, made consistent: shared tile-edge points take the owner's value."""
    G = [[rng.standard_normal((N + sx, N + sy, nz)) for sx, sy in staggers] for _ in range(6)]
    for t in range(6):
        for c, (sx, sy) in enumerate(staggers):
            for i in range(N + sx):
                for j in range(N + sy):
                    X, Y = 2 * i + 1 - sx, 2 * j + 1 - sy
                    if 0 < X < 2 * N and 0 < Y < 2 * N:
                        continue
                    val = value_at(t, c, X, Y, G, staggers, N, use_owner=True)
                    if val is not None:
                        G[t][c][i, j] = val
    return G


def scatter(G, part, N: int, h: int, staggers, rng) -> list[list[np.ndarray]]:
    """Per-rank local arrays: interior from G, halo filled with random garbage."""
    out = []
    lx = part.layout[0]
    n = N // lx
    for rank in range(part.total_ranks):
        t = part.tile_index(rank)
        i0, _, j0, _ = part.subdomain_extent(rank, N, N)
        arrays = []
        for c, (sx, sy) in enumerate(staggers):
            nz = G[0][c].shape[2]
            a = rng.standard_normal((n + sx + 2 * h, n + sy + 2 * h, nz)) + 1000.0
            a[h : h + n + sx, h : h + n + sy] = G[t][c][i0 : i0 + n + sx, j0 : j0 + n + sy]
            arrays.append(a)
        out.append(arrays)
    return out


def expected(locals_, G, part, N: int, h: int, depth: int, staggers) -> list[list[np.ndarray]]:
    """What every rank's arrays hold after an exact exchange of halo ``depth``: interior and halo
    within ``depth`` from the reference, everything else (deeper halo, cube-corner halo corners
    and cube-corner points) unchanged."""
    n = N // part.layout[0]
    out = []
    for rank, arrays in enumerate(locals_):
        t = part.tile_index(rank)
        i0, _, j0, _ = part.subdomain_extent(rank, N, N)
        res = []
        for c, ((sx, sy), a) in enumerate(zip(staggers, arrays)):
            e = a.copy()
            for i in range(h - depth, h + n + sx + depth):
                for j in range(h - depth, h + n + sy + depth):
                    X = 2 * (i0 + i - h) + 1 - sx
                    Y = 2 * (j0 + j - h) + 1 - sy
                    val = value_at(t, c, X, Y, G, staggers, N)
                    if val is not None:
                        e[i, j] = val
            res.append(e)
        out.append(res)
    return out
