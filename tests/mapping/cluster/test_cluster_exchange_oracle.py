"""Distributed exchange == serial oracle, bit for bit (in-process ranks, LocalComm).

Reference: ``cube_oracle`` -- the global cube field built on one process and every rank's
halo filled from it through 3-D cube geometry (folds over cube edges, vector unfolding). The
comparison is exact (tolerance 0): halo exchange only copies and negates.
"""

from __future__ import annotations

import cube_oracle as oracle
import numpy as np
import pytest
from cluster_helpers import KINDS, assert_bitwise, build_local, exchange_all, make_spec

from mapping.cluster import CubedSpherePartitioner, HaloExchange, LocalComm, ScalarHalo, VectorHalo

CASES = [((1, 1), 6, 2), ((3, 3), 12, 3)]  # (layout, cells per tile edge, n_halo): 6 and 54 ranks


@pytest.mark.parametrize("layout,N,h", CASES, ids=["6ranks", "54ranks"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_full_depth_matches_oracle(layout, N, h, kind, rng) -> None:
    """Scalars (centre, corner) and vectors (A, C, D) over all rotations; exact."""
    part = CubedSpherePartitioner(layout)
    st = KINDS[kind]
    G = oracle.make_global(N, 3, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, h, st)
    exchange_all(build_local(part, lambda r: [make_spec(kind, local[r], h)]))
    assert_bitwise(local, want)


@pytest.mark.parametrize("kind", list(KINDS))
def test_partial_depth_leaves_outer_halo_untouched(kind, rng) -> None:
    """Depth 1 of an allocated halo of 3 (54 ranks): oracle within depth, the rest unchanged."""
    part = CubedSpherePartitioner((3, 3))
    N, h, st = 12, 3, KINDS[kind]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, 1, st)
    exchange_all(build_local(part, lambda r: [make_spec(kind, local[r], h, depth=1)]))
    assert_bitwise(local, want)


#: corner-fill cases: (kind, corner_fill argument, oracle CORNER_SIDES key)
FILLS = [
    ("center", "x", "x"), ("center", "y", "y"), ("corner", "x", "x"), ("corner", "y", "y"),
    ("A", True, "A"), ("C", True, "C"), ("D", True, "D"),
]
FILL_IDS = [f"{k}-{o}" for k, _, o in FILLS]


@pytest.mark.parametrize("layout,N,h,depth", [((1, 1), 6, 3, 3), ((3, 3), 12, 3, 3),
                                              ((3, 3), 12, 3, 2), ((1, 1), 6, 3, 1)],
                         ids=["6ranks", "54ranks", "54ranks-depth2", "6ranks-depth1"])
@pytest.mark.parametrize("kind,fill,side", FILLS, ids=FILL_IDS)
def test_corner_fill_matches_oracle(layout, N, h, depth, kind, fill, side, rng) -> None:
    """corner_fill on: halo corners past the cube corners hold the oracle's turned copy of the
    adjacent halo (``cube_oracle.corner_source``), every other point the plain oracle; exact.
    Partial depth fills only the innermost depth x depth corner block."""
    part = CubedSpherePartitioner(layout)
    st = KINDS[kind]
    G = oracle.make_global(N, 2, st, rng)
    local = oracle.scatter(G, part, N, h, st, rng)
    want = oracle.expected(local, G, part, N, h, depth, st, corner_fill=side)
    plain = oracle.expected(local, G, part, N, h, depth, st)
    exchange_all(
        build_local(part, lambda r: [make_spec(kind, local[r], h, depth=depth, corner_fill=fill)])
    )
    assert_bitwise(local, want)
    n_filled = sum(
        int(np.any(w != p, axis=-1).sum()) for ws, ps in zip(want, plain) for w, p in zip(ws, ps)
    )
    assert n_filled == 24 * depth**2 * len(st)  # 8 cube corners x 3 tiles, per component


def test_many_fields_one_message_and_buffer_reuse(rng) -> None:
    """Two scalars + C and D vector pairs in one exchange (one message per neighbour), reused
    for three steps with new interior data each step; every step equals the oracle exactly."""
    part = CubedSpherePartitioner((2, 2))
    N, h, nz = 8, 3, 2
    kinds = ["center", "corner", "C", "D"]
    per_step = []
    for _ in range(3):
        Gs = [oracle.make_global(N, nz, KINDS[k], rng) for k in kinds]
        per_step.append(Gs)
    # the arrays the exchanges are built on (contents replaced in place every step)
    local = [oracle.scatter(G, part, N, h, KINDS[k], rng) for G, k in zip(per_step[0], kinds)]
    exchanges = build_local(
        part, lambda r: [make_spec(k, local[f][r], h) for f, k in enumerate(kinds)]
    )
    sizes = {len(ex._packer.send_requests) for ex in exchanges}
    assert sizes == {8} or sizes <= {7, 8}  # one message per neighbour (7 at cube corners)
    for Gs in per_step:
        fresh = [oracle.scatter(G, part, N, h, KINDS[k], rng) for G, k in zip(Gs, kinds)]
        for f in range(len(kinds)):
            for r in range(part.total_ranks):
                for c, a in enumerate(local[f][r]):
                    a[...] = fresh[f][r][c]
        exchange_all(exchanges)
        for f, k in enumerate(kinds):
            want = oracle.expected(fresh[f], Gs[f], part, N, h, h, KINDS[k])
            assert_bitwise(local[f], want)
    assert all(ex.n_exchanges == 3 for ex in exchanges)
    for r, ex in enumerate(exchanges):  # what one rank sends, its neighbour expects
        for dest, nbytes in ex.message_bytes().items():
            assert exchanges[dest].receive_bytes()[r] == nbytes > 0
    assert set(exchanges[0].timers) == {"pack", "post", "wait", "unpack"}
    assert all(v >= 0.0 for v in exchanges[0].timers.values())


@pytest.mark.parametrize("order", ["F", "gt4py"])
def test_other_memory_layouts_and_2d_fields(order, rng) -> None:
    """Fortran-ordered arrays / gt4py ``gt:cpu_ifirst`` storages (i fastest, padded) and a 2-D
    field give the same exact result as the oracle."""
    part = CubedSpherePartitioner((1, 1))
    N, h = 6, 2
    G = oracle.make_global(N, 3, KINDS["D"], rng)
    local = oracle.scatter(G, part, N, h, KINDS["D"], rng)
    G2 = oracle.make_global(N, 3, KINDS["center"], rng)
    local2 = oracle.scatter(G2, part, N, h, KINDS["center"], rng)
    want = oracle.expected(local, G, part, N, h, h, KINDS["D"])
    want2 = oracle.expected(local2, G2, part, N, h, h, KINDS["center"])

    def relayout(a: np.ndarray) -> np.ndarray:
        if order == "F":
            return np.asfortranarray(a)
        import gt4py.storage as gs

        out = gs.zeros(a.shape, dtype=a.dtype, backend="gt:cpu_ifirst", aligned_index=(h, h, 0))
        out[...] = a
        assert not out.flags.c_contiguous
        return out

    arrays = [[relayout(a) for a in rank] for rank in local]
    flat = [np.asfortranarray(rank[0][:, :, 0]) for rank in local2]
    exchange_all(
        build_local(
            part,
            lambda r: [VectorHalo(*arrays[r], n_halo=h, grid="D"), ScalarHalo(flat[r], n_halo=h)],
        )
    )
    assert_bitwise([[np.asarray(a) for a in rank] for rank in arrays], want)
    assert_bitwise([[f[:, :, None]] for f in flat], [[w[0][:, :, :1]] for w in want2])


def test_float32_and_independent_exchanges_on_one_comm(rng) -> None:
    """Two exchanges built on the same comms (different tags) in flight together, float32."""
    part = CubedSpherePartitioner((1, 1))
    N, h = 6, 1
    G = oracle.make_global(N, 2, KINDS["center"], rng)
    G = [[g.astype(np.float32) for g in t] for t in G]
    a = oracle.scatter(G, part, N, h, KINDS["center"], rng)
    b = oracle.scatter(G, part, N, h, KINDS["center"], rng)
    a = [[x.astype(np.float32) for x in r] for r in a]
    b = [[x.astype(np.float32) for x in r] for r in b]
    comms = LocalComm.create(6)
    ex_a = [HaloExchange(comms[r], part, [ScalarHalo(a[r][0], n_halo=h)]) for r in range(6)]
    ex_b = [HaloExchange(comms[r], part, [ScalarHalo(b[r][0], n_halo=h)]) for r in range(6)]
    for ex in ex_a + ex_b:
        ex.start()
    for ex in ex_b + ex_a:
        ex.wait()
    assert_bitwise(a, oracle.expected(a, G, part, N, h, h, KINDS["center"]))
    assert_bitwise(b, oracle.expected(b, G, part, N, h, h, KINDS["center"]))


@pytest.mark.parametrize("layout", [(1, 1), (2, 2)])
def test_every_point_received_at_most_once(layout) -> None:
    """MPI datatypes write received data in place and negate afterwards, which needs disjoint
    receive rectangles: checked by counting (exact)."""
    part = CubedSpherePartitioner(layout)
    N, h = 8, 2
    n = N // layout[0]
    for kind, st in KINDS.items():
        arrays = [
            [np.zeros((n + 2 * h + sx, n + 2 * h + sy, 1)) for sx, sy in st]
            for _ in range(part.total_ranks)
        ]
        comms = LocalComm.create(part.total_ranks)
        for r in range(part.total_ranks):
            ex = HaloExchange(comms[r], part, [make_spec(kind, arrays[r], h)])
            counts = [np.zeros(a.shape[:2], int) for a in arrays[r]]
            for transfers in ex._messages.recvs.values():
                for t in transfers:
                    counts[t.component][t.recv] += 1
            assert max(c.max() for c in counts) == 1, (kind, r)
