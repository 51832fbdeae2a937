"""Serial reference for halo exchange on the cubed sphere, built from 3-D cube geometry alone.

Each FV3 tile is a face of the cube [-N, N]^3 (doubled units) with an outward normal ``C`` and
axes ``X``, ``Y`` (right-handed, X x Y = C). A point of a rank's array -- interior or halo -- is
placed in 3-D (halo points beyond a tile edge fold over the cube edge), the tile holding that
point is found, and the global field is read there. Vector components are carried across the
edge by unfolding the neighbour face into the receiving tile's plane. Nothing here uses the
package's connectivity table, rotation counts or index plans.
"""

from __future__ import annotations

from functools import cache

import numpy as np

Vec = tuple[int, int, int]
E1, E2, E3 = (1, 0, 0), (0, 1, 0), (0, 0, 1)


def _neg(v: Vec) -> Vec:
    return (-v[0], -v[1], -v[2])


def _dot(a: Vec, b: Vec) -> int:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _add(*terms: tuple[int, Vec]) -> Vec:
    return tuple(sum(c * v[i] for c, v in terms) for i in range(3))  # type: ignore[return-value]


#: (C, X, Y) per tile: FV3 tiles 1..6 (0-based here); tile 2 holds the north pole.
FRAMES: list[tuple[Vec, Vec, Vec]] = [
    (E1, E2, E3),
    (E2, _neg(E1), E3),
    (E3, _neg(E1), _neg(E2)),
    (_neg(E1), _neg(E3), _neg(E2)),
    (_neg(E2), _neg(E3), E1),
    (_neg(E3), E2, E1),
]
GRIDS = {"A": ((0, 0), (0, 0)), "C": ((1, 0), (0, 1)), "D": ((0, 1), (1, 0))}


def fold(tile: int, X: int, Y: int, N: int) -> Vec | None:
    """3-D point of tile-frame doubled coordinates (halo folds over the edge); None past a corner."""
    C, Xa, Ya = FRAMES[tile]
    a, b = X - N, Y - N
    if abs(a) > N and abs(b) > N:
        return None
    terms = [(N, C)]
    for off, axis in ((a, Xa), (b, Ya)):
        if abs(off) > N:
            terms += [((1 if off > 0 else -1) * N, axis), (-(abs(off) - N), C)]
        else:
            terms.append((off, axis))
    return _add(*terms)


def tiles_at(P: Vec, N: int) -> list[tuple[int, int, int]]:
    """(tile, X, Y) of every tile whose closed face contains P."""
    return [
        (t, _dot(P, Xa) + N, _dot(P, Ya) + N)
        for t, (C, Xa, Ya) in enumerate(FRAMES)
        if _dot(P, C) == N
    ]


def owner(P: Vec, N: int) -> tuple[int, int, int] | None:
    """The tile owning P: the only one, or the one with P on its west/south edge; None at a cube
    corner (three tiles)."""
    cands = tiles_at(P, N)
    if len(cands) == 1:
        return cands[0]
    if len(cands) == 2:
        ws = [c for c in cands if c[1] == 0 or c[2] == 0]
        assert len(ws) == 1, cands
        return ws[0]
    return None


def source(tile: int, comp: int, X: int, Y: int, N: int, staggers, use_owner=False, halo=False):
    """Where the reference value of component ``comp`` at doubled (X, Y) of ``tile`` comes from:
    ``(source tile, source component, i, j, sign)``, or None where no value is defined.

    A point beyond the tile is read on the tile across that edge (the fold); a point of the tile
    on the tile itself, or with ``use_owner`` on the tile owning it (west/south edge rule; used
    to make G consistent). A cube-corner point has no owner and each rank keeps its own.
    """
    P = fold(tile, X, Y, N)
    if P is None:
        return None
    cands = tiles_at(P, N)
    Ca, XA, YA = FRAMES[tile]
    if 0 <= X <= 2 * N and 0 <= Y <= 2 * N:
        if len(cands) >= 3:
            if halo:  # only reachable when the halo is as deep as a subdomain
                raise ValueError("a halo point is a cube-corner point: its source is ambiguous")
            return None
        own = owner(P, N) if use_owner else next(c for c in cands if c[0] == tile)
    else:
        s = (1 if X > N else -1) if not 0 <= X <= 2 * N else (1 if Y > N else -1)
        out_axis = _add((s, XA)) if not 0 <= X <= 2 * N else _add((s, YA))
        own = next(c for c in cands if FRAMES[c[0]][0] == out_axis)
    tb, Xb, Yb = own
    Cb, XB, YB = FRAMES[tb]
    want = XA if comp == 0 else YA
    for cb, (sx, sy) in enumerate(staggers):
        if (Xb - 1 + sx) % 2 or (Yb - 1 + sy) % 2:
            continue
        i, j = (Xb - 1 + sx) // 2, (Yb - 1 + sy) // 2
        if len(staggers) == 1:
            return tb, 0, i, j, 1
        axis = XB if cb == 0 else YB
        if tb != tile and _dot(axis, Ca) != 0:  # unfold tb into tile's plane: -Ca -> Cb
            axis = _add((_dot(axis, _neg(Ca)), Cb))
        coeff = _dot(axis, want)
        if coeff:
            return tb, cb, i, j, coeff
    raise AssertionError(f"no component of tile {tb} at ({Xb}, {Yb}) maps onto component {comp}")


#: FV3 corner fill: the halo side ("x": west/east, "y": south/north) each component's empty
#: corner is read from -- scalars as asked, vectors as fill_corners_agrid/_cgrid/_dgrid do
CORNER_SIDES = {"x": ("x",), "y": ("y",), "A": ("x", "y"), "C": ("y", "x"), "D": ("x", "y")}
_TURNS = (np.array([[0, 1], [-1, 0]]), np.array([[0, -1], [1, 0]]))  # the two 90-degree turns


def corner_source(tile: int, comp: int, X: int, Y: int, N: int, staggers, side: str):
    """Reference for a halo point past a cube corner under FV3's corner fill (``side`` "x" or
    "y"): the field there is a copy of the ``side`` halo turned by 90 degrees about the cube
    corner, vectors turned with it: ``g(T) = M^-1 f(M T)`` with ``M`` the turn that takes the
    corner quadrant onto that halo. Returns ``(source tile, source comp, i, j, sign)``."""
    cx, cy = (0 if X < 0 else 2 * N), (0 if Y < 0 else 2 * N)
    pq = np.array([X - cx, Y - cy])
    for M in _TURNS:
        Xs, Ys = M @ pq + (cx, cy)
        inside_x, inside_y = 0 <= Xs <= 2 * N, 0 <= Ys <= 2 * N
        if (side == "x" and inside_y and not inside_x) or (side == "y" and inside_x and not inside_y):
            break
    else:  # pragma: no cover
        raise AssertionError("no turn maps the corner onto the halo side")
    if len(staggers) == 1:
        return source(tile, 0, int(Xs), int(Ys), N, staggers, halo=True)
    Minv = M.T
    for cb, (sx, sy) in enumerate(staggers):
        if (Xs - 1 + sx) % 2 or (Ys - 1 + sy) % 2 or Minv[comp, cb] == 0:
            continue
        tb, cb2, i, j, sign = source(tile, cb, int(Xs), int(Ys), N, staggers, halo=True)
        return tb, cb2, i, j, int(Minv[comp, cb]) * sign
    raise AssertionError(f"no component at ({Xs}, {Ys}) turns into component {comp}")


@cache
def _gather(layout, N: int, h: int, depth: int, staggers, rank: int, fill=None) -> list:
    """Per component of ``rank``: rows (target i, target j, source tile, source comp, si, sj,
    sign); ``fill`` (a CORNER_SIDES key) adds the corner-filled points past cube corners."""
    from mapping.cluster import CubedSpherePartitioner  # rank numbering only

    part = CubedSpherePartitioner(layout)
    n = N // layout[0]
    t = part.tile_index(rank)
    i0, _, j0, _ = part.subdomain_extent(rank, N, N)
    per_comp = []
    for c, (sx, sy) in enumerate(staggers):
        rows = []
        for i in range(h - depth, h + n + sx + depth):
            for j in range(h - depth, h + n + sy + depth):
                X = 2 * (i0 + i - h) + 1 - sx
                Y = 2 * (j0 + j - h) + 1 - sy
                halo = not (h <= i < h + n + sx and h <= j < h + n + sy)
                src = source(t, c, X, Y, N, staggers, halo=halo)
                if src is None and halo and fill is not None:
                    src = corner_source(t, c, X, Y, N, staggers, CORNER_SIDES[fill][c])
                if src is not None:
                    rows.append((i, j, *src))
        per_comp.append(np.array(rows, dtype=np.int64).reshape(-1, 7))
    return per_comp


def make_global(N: int, nz: int, staggers, rng: np.random.Generator) -> list:
    """Random global field G[tile][comp], made consistent: shared tile-edge points take the
    owner's value (rotated into the tile's frame for vectors)."""
    staggers = tuple(tuple(s) for s in staggers)
    G = [[rng.standard_normal((N + sx, N + sy, nz)) for sx, sy in staggers] for _ in range(6)]
    for t, c, i, j, tb, cb, si, sj, sign in _consistency(N, staggers):
        G[t][c][i, j] = sign * G[tb][cb][si, sj]
    return G


@cache
def _consistency(N: int, staggers) -> list:
    rows = []
    for t in range(6):
        for c, (sx, sy) in enumerate(staggers):
            for i in range(N + sx):
                for j in range(N + sy):
                    X, Y = 2 * i + 1 - sx, 2 * j + 1 - sy
                    if 0 < X < 2 * N and 0 < Y < 2 * N:
                        continue
                    src = source(t, c, X, Y, N, staggers, use_owner=True)
                    if src is not None and src[0] != t:
                        rows.append((t, c, i, j, *src))
    return rows


def scatter(G, part, N: int, h: int, staggers, rng) -> list[list[np.ndarray]]:
    """Per-rank local arrays: interior from G, halo filled with random garbage."""
    n = N // part.layout[0]
    out = []
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


def expected(
    locals_, G, part, N: int, h: int, depth: int, staggers, ranks=None, corner_fill=None
) -> list[list[np.ndarray]]:
    """What the arrays of ``ranks`` (default all; ``locals_`` holds exactly those) hold after an
    exact exchange of halo ``depth``: interior and halo within ``depth`` from the reference;
    everything else (deeper halo, halo corners past a cube corner unless ``corner_fill`` -- a
    CORNER_SIDES key -- asks for them, cube-corner points) unchanged."""
    staggers = tuple(tuple(s) for s in staggers)
    ranks = range(part.total_ranks) if ranks is None else ranks
    stacked = [np.stack([G[t][cb] for t in range(6)]) for cb in range(len(staggers))]
    out = []
    for arrays, rank in zip(locals_, ranks):
        per_comp = _gather(tuple(part.layout), N, h, depth, staggers, rank, corner_fill)
        res = []
        for a, rows in zip(arrays, per_comp):
            e = a.copy()
            for cb in range(len(staggers)):
                sel = rows[rows[:, 3] == cb]
                src = stacked[cb][sel[:, 2], sel[:, 4], sel[:, 5]]
                e[sel[:, 0], sel[:, 1]] = sel[:, 6, None].astype(a.dtype) * src
            res.append(e)
        out.append(res)
    return out
