"""Which halo points each rank receives from which neighbour: rectangles, rotations, signs.

The plan is derived from geometry alone (doubled coordinates mapped across tile edges), so one
routine covers cell-centred, corner and C/D-staggered fields and every rotation. Each rank
computes its own receive plan and, to know what to send, the receive plans of its neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

from mapping.cluster.errors import HaloError
from mapping.cluster.geometry import DIRECTIONS, map_across_edge
from mapping.cluster.partitioner import Boundary, TilePartitioner


@dataclass(frozen=True)
class ComponentGeometry:
    """One array of an exchange: stagger, halo, depth; ``vector`` = 0/1 for u/v, None for scalars."""

    name: str
    stagger: tuple[int, int]
    n_halo: int
    depth: int
    sync_edges: bool
    vector: int | None = None
    partner: int | None = None  # index of the other vector component


@dataclass(frozen=True)
class Transfer:
    """Halo rectangle ``recv`` of component ``component`` on the receiving rank, filled from
    rectangle ``send`` of component ``source_component`` on rank ``source``.

    ``np.rot90(receiver[recv], k)`` has the element order of ``sender[send]``; ``sign`` is -1
    where a rotated vector component changes sign.
    """

    direction: str
    source: int
    component: int
    source_component: int
    recv: tuple[slice, slice]
    send: tuple[slice, slice]
    k: int
    sign: int


def _axis_range(side: int, n: int, s: int, h: int, d: int, sync: bool) -> tuple[int, int]:
    """Local index range along one axis for side -1 (low halo), 0 (interior) or +1 (high halo)."""
    owned_high = h + n if (sync and s) else h + n + s  # north/east boundary point is received
    if side < 0:
        return h - d, h
    if side == 0:
        return h, owned_high
    return owned_high, h + n + s + d


def _source_of(comp: ComponentGeometry, n_rotations: int) -> tuple[int | None, int]:
    """(offset to the source component, sign) for a rotation; offset None = same component."""
    r = n_rotations % 4
    if comp.vector is None or r == 0:
        return None, 1
    if r == 2:
        return None, -1
    # r == 1: (u, v) = (v', -u');  r == 3: (u, v) = (-v', u')
    sign = (1 if comp.vector == 0 else -1) if r == 1 else (-1 if comp.vector == 0 else 1)
    return comp.partner, sign


def receive_plan(
    partitioner: TilePartitioner,
    rank: int,
    components: list[ComponentGeometry],
    local_cells: tuple[int, int],
) -> list[Transfer]:
    """All transfers into ``rank``, in the canonical order (direction, then component)."""
    nx, ny = local_cells
    lx, ly = partitioner.layout
    size = (2 * nx * lx, 2 * ny * ly)
    i0, _, j0, _ = partitioner.subdomain_extent(rank, nx * lx, ny * ly)
    plan: list[Transfer] = []
    for direction in DIRECTIONS:
        bnd = partitioner.boundary(rank, direction)
        if bnd is None:
            continue
        n_i0, _, n_j0, _ = partitioner.subdomain_extent(bnd.neighbour_rank, nx * lx, ny * ly)
        for ci, comp in enumerate(components):
            if comp.depth == 0:
                continue
            for a0, a1, b0, b1 in _rects(partitioner, rank, direction, bnd, comp, (nx, ny)):
                plan.append(
                    _transfer(partitioner, rank, direction, bnd, components, ci, (a0, a1, b0, b1),
                              (i0, j0), (n_i0, n_j0), size, (nx, ny))
                )
    return plan


def _rects(
    partitioner: TilePartitioner,
    rank: int,
    direction: str,
    bnd: Boundary,
    comp: ComponentGeometry,
    local_cells: tuple[int, int],
) -> list[tuple[int, int, int, int]]:
    """Halo rectangles ``(i0, i1, j0, j1)`` of one component towards one neighbour.

    With ``sync_edges`` the north/east boundary points of staggered fields are received too
    (the neighbour owns them). Where a diagonal neighbour is missing, the boundary line it would
    have sent is taken from this edge neighbour instead; a three-tile cube-corner point itself
    has no owner and is left to each rank.
    """
    dx, dy = DIRECTIONS[direction]
    nx, ny = local_cells
    sx, sy = comp.stagger
    h, d = comp.n_halo, comp.depth
    a0, a1 = _axis_range(dx, nx, sx, h, d, comp.sync_edges)
    b0, b1 = _axis_range(dy, ny, sy, h, d, comp.sync_edges)
    if a1 <= a0 or b1 <= b0:
        return []
    if dx != 0 and dy != 0:
        return [(a0, a1, b0, b1)]
    along_x = dx == 0
    s_along, s_norm, side = (sx, sy, dy) if along_x else (sy, sx, dx)
    lo, hi, n0, n1 = (a0, a1, b0, b1) if along_x else (b0, b1, a0, a1)
    if along_x:
        prefix = "north" if dy > 0 else "south"
        low_corner, high_corner = prefix + "west", prefix + "east"
    else:
        suffix = "east" if dx > 0 else "west"
        low_corner, high_corner = "south" + suffix, "north" + suffix
    # the rectangle's first line is this rank's own (received) boundary line
    has_boundary = comp.sync_edges and s_norm == 1 and side > 0
    pieces = []
    main_lo, main_hi = lo, hi
    if comp.sync_edges and s_along:
        if has_boundary and _is_cube_corner(partitioner, rank, low_corner):
            main_lo = lo + 1
            pieces.append((lo, lo + 1, n0 + 1, n1))
        if partitioner.boundary(rank, high_corner) is None:
            if has_boundary and _is_cube_corner(partitioner, rank, high_corner):
                pieces.append((hi, hi + 1, n0 + 1, n1))
            else:
                main_hi = hi + 1
    pieces.insert(0, (main_lo, main_hi, n0, n1))
    rects = [p if along_x else (p[2], p[3], p[0], p[1]) for p in pieces]
    return [r for r in rects if r[1] > r[0] and r[3] > r[2]]


def _is_cube_corner(partitioner: TilePartitioner, rank: int, corner: str) -> bool:
    """True where three tiles meet: no diagonal neighbour, but both edge neighbours exist."""
    if partitioner.boundary(rank, corner) is not None:
        return False
    ns, ew = corner[:5], corner[5:]
    return partitioner.boundary(rank, ns) is not None and partitioner.boundary(rank, ew) is not None


def _transfer(
    partitioner: TilePartitioner,
    rank: int,
    direction: str,
    bnd: Boundary,
    components: list[ComponentGeometry],
    ci: int,
    rect: tuple[int, int, int, int],
    origin: tuple[int, int],
    n_origin: tuple[int, int],
    size: tuple[int, int],
    local_cells: tuple[int, int],
) -> Transfer:
    comp = components[ci]
    sx, sy = comp.stagger
    h, d = comp.n_halo, comp.depth
    a0, a1, b0, b1 = rect
    i0, j0 = origin
    n_i0, n_j0 = n_origin
    nx, ny = local_cells
    partner, sign = _source_of(comp, bnd.n_rotations)
    src_ci = ci if partner is None else partner
    src = components[src_ci]
    tx, ty = src.stagger

    def to_source(i: int, j: int) -> tuple[int, int]:
        """Local index on the neighbour of local index (i, j) here (affine in i and j)."""
        X = 2 * (i0 + i - h) + 1 - sx
        Y = 2 * (j0 + j - h) + 1 - sy
        Xn, Yn = map_across_edge(X, Y, size, bnd.tile_offset, bnd.n_rotations)
        if (Xn - 1 + tx) % 2 or (Yn - 1 + ty) % 2:
            raise HaloError(
                f"field {comp.name!r} at stagger {comp.stagger} cannot cross the rotated "
                f"edge {direction} of rank {rank}: exchange x/y-staggered data as a "
                f"VectorHalo pair"
            )
        return (Xn - 1 + tx) // 2 - n_i0 + src.n_halo, (Yn - 1 + ty) // 2 - n_j0 + src.n_halo

    corners = [to_source(i, j) for i in (a0, a1 - 1) for j in (b0, b1 - 1)]
    s_lo = (min(c[0] for c in corners), min(c[1] for c in corners))
    s_hi = (max(c[0] for c in corners) + 1, max(c[1] for c in corners) + 1)
    A, B = a1 - a0, b1 - b0
    # receiver index of element [m, n] of np.rot90(receiver_rect, k)
    views = {
        0: lambda m, n: (m, n),
        1: lambda m, n: (n, B - 1 - m),
        2: lambda m, n: (A - 1 - m, B - 1 - n),
        3: lambda m, n: (A - 1 - n, m),
    }
    for k, g in views.items():  # noqa: B007 (k is used after the loop)
        if all(
            to_source(a0 + g(m, n)[0], b0 + g(m, n)[1]) == (s_lo[0] + m, s_lo[1] + n)
            for m, n in ((0, 0), (1, 0), (0, 1))
        ):
            break
    else:  # pragma: no cover - geometry guarantees a rotation exists
        raise HaloError(f"internal: no rotation maps {direction} halo of rank {rank}")
    if (
        s_lo[0] < src.n_halo
        or s_lo[1] < src.n_halo
        or s_hi[0] > src.n_halo + nx + tx
        or s_hi[1] > src.n_halo + ny + ty
    ):
        raise HaloError(
            f"halo depth {d} of field {comp.name!r} reaches beyond the interior of "
            f"neighbour rank {bnd.neighbour_rank} ({nx}x{ny} cells): use a smaller "
            f"depth or fewer ranks"
        )
    return Transfer(
        direction=direction,
        source=bnd.neighbour_rank,
        component=ci,
        source_component=src_ci,
        recv=(slice(a0, a1), slice(b0, b1)),
        send=(slice(s_lo[0], s_hi[0]), slice(s_lo[1], s_hi[1])),
        k=k,
        sign=sign,
    )

