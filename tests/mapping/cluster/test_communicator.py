"""Communicator: gather/scatter of tiles, broadcast, allreduce and halo updaters.

In-process runs (6 and 24 LocalComm ranks) are checked against NumPy on the global array and
against the existing ``HaloExchange``; real MPI runs (mpi-pytest, 6 processes) against the
in-process Communicator computed in the same process. All comparisons are exact.
"""

from __future__ import annotations

import math

import cube_oracle as oracle
import numpy as np
import pytest
from cluster_helpers import KINDS, build_local, exchange_all, make_spec

from mapping.cluster import (
    Communicator,
    CubedSpherePartitioner,
    ExchangeGroup,
    HaloError,
    LocalComm,
    PartitionError,
    ScalarHalo,
    TilePartitioner,
)

N = 12  # C12 tiles
STAGGER = {"center": (0, 0), "corner": (1, 1)}


def _hand_blocks(G: np.ndarray, layout: tuple[int, int], location: str) -> dict[int, np.ndarray]:
    """Each rank's interior of the global ``G`` (n_tiles, ...), cut with the documented rank
    numbering ``rank = tile*nx*ny + j*nx + i`` (no partitioner involved)."""
    lx, ly = layout
    sx, sy = STAGGER[location]
    cx, cy = (G.shape[1] - sx) // lx, (G.shape[2] - sy) // ly
    return {
        tile * lx * ly + j * lx + i: G[tile, i * cx : (i + 1) * cx + sx, j * cy : (j + 1) * cy + sy].copy()
        for tile in range(G.shape[0])
        for j in range(ly)
        for i in range(lx)
    }


def _global(rng, n_tiles: int, nx: int, ny: int, location: str, trailing=()) -> np.ndarray:
    sx, sy = STAGGER[location]
    return rng.standard_normal((n_tiles, nx + sx, ny + sy, *trailing))


# --- in process --------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", [1, 2])
@pytest.mark.parametrize(("location", "trailing"), [("center", ()), ("center", (4, 3)), ("corner", (2,))])
def test_gather_tiles_reassembles_the_global_array(layout, location, trailing, rng) -> None:
    """Reference: the global array itself, cut into rank blocks by hand; gathering the blocks
    (6 or 24 ranks, with trailing dimensions, cell centres or corners) gives it back exactly."""
    part = CubedSpherePartitioner((layout, layout))
    G = _global(rng, 6, N, N, location, trailing)
    blocks = _hand_blocks(G, part.layout, location)
    comm = Communicator.in_process(part)
    assert comm.ranks == tuple(range(6 * layout**2)) and comm.size == 6 * layout**2
    assert comm.is_root_process and comm.holds_all_ranks
    out = comm.gather_tiles(blocks, N, location=location)
    assert out.dtype == G.dtype and np.array_equal(out, G)


def test_gather_tiles_takes_shared_points_from_their_owner(rng) -> None:
    """Reference: the global corner array; ranks' copies of points they share but do not own
    (their north/east boundary) are spoiled, and the gather still equals the global array."""
    part = CubedSpherePartitioner((2, 2))
    G = _global(rng, 6, N, N, "corner")
    blocks = _hand_blocks(G, part.layout, "corner")
    for rank, b in blocks.items():
        i, j = part.subtile_index(rank)
        if i == 0:
            b[-1, :] = np.nan  # the east boundary belongs to rank (1, j)
        if j == 0:
            b[:, -1] = np.nan
    assert np.array_equal(Communicator.in_process(part).gather_tiles(blocks, N, location="corner"), G)


def test_gather_tiles_on_a_rectangular_tile_layout(rng) -> None:
    """Reference: the global array of one 9x4 tile on a 3x2 layout, cut by hand."""
    part = TilePartitioner((3, 2))
    G = _global(rng, 1, 9, 4, "center")
    out = Communicator.in_process(part).gather_tiles(_hand_blocks(G, (3, 2), "center"), 9, 4)
    assert np.array_equal(out, G)


@pytest.mark.parametrize("layout", [1, 2])
@pytest.mark.parametrize("location", ["center", "corner"])
def test_scatter_gather_round_trip(layout, location, rng) -> None:
    """Reference: the hand-cut blocks of the global array; scatter_tiles gives those (as fresh
    C-contiguous arrays), and gather_tiles(scatter_tiles(G)) is G."""
    part = CubedSpherePartitioner((layout, layout))
    G = _global(rng, 6, N, N, location, (3,))
    comm = Communicator.in_process(part)
    blocks = comm.scatter_tiles(G, location=location)
    want = _hand_blocks(G, part.layout, location)
    assert sorted(blocks) == sorted(want)
    for rank, b in blocks.items():
        assert b.flags.c_contiguous and not np.shares_memory(b, G)
        assert np.array_equal(b, want[rank]), f"rank {rank}"
    assert np.array_equal(comm.gather_tiles(blocks, N, location=location), G)


@pytest.mark.parametrize("layout", [1, 2])
def test_allreduce_matches_numpy(layout, rng) -> None:
    """Reference: NumPy's max/min over the stacked per-rank values, and math.fsum (correctly
    rounded) for the sum, on scalars and on arrays; the sum also agrees with numpy.sum to
    rounding and is the same whichever rank holds which value."""
    part = CubedSpherePartitioner((layout, layout))
    comm = Communicator.in_process(part)
    n = part.total_ranks
    scalars = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, n)
    arrays = rng.standard_normal((n, 5, 3))
    for values in (scalars, arrays):
        per_rank = {r: values[r] if values.ndim > 1 else float(values[r]) for r in range(n)}
        assert np.array_equal(comm.allreduce(per_rank, "max"), values.max(axis=0))
        assert np.array_equal(comm.allreduce(per_rank, "min"), values.min(axis=0))
        total = comm.allreduce(per_rank, "sum")
        exact = np.array([math.fsum(c) for c in values.reshape(n, -1).T]).reshape(values.shape[1:])
        assert np.array_equal(total, exact)
        np.testing.assert_allclose(total, values.sum(axis=0), rtol=1e-12, atol=1e-12)
        reversed_ = {r: per_rank[n - 1 - r] for r in range(n)}
        assert np.array_equal(comm.allreduce(reversed_, "sum"), total)
    assert isinstance(comm.allreduce({r: float(r) for r in range(n)}, "max"), float)
    assert comm.allreduce({r: r for r in range(n)}, "sum") == n * (n - 1) // 2
    inf = {r: (math.inf if r == 0 else -math.inf if r == 1 else 1.0) for r in range(n)}
    assert math.isnan(comm.allreduce(inf, "sum"))
    assert math.isnan(comm.allreduce({r: math.nan if r == 2 else 0.0 for r in range(n)}, "max"))


@pytest.mark.parametrize("layout", [1, 2])
def test_exact_sum_is_correctly_rounded_and_split_independent(layout, rng) -> None:
    """Reference: math.fsum of all the values (correctly rounded), which numpy.sum misses on
    values of very different magnitudes; the same however the values are split over ranks
    (one split per rank, or everything on rank 0 and empty arrays elsewhere)."""
    part = CubedSpherePartitioner((layout, layout))
    comm = Communicator.in_process(part)
    n = part.total_ranks
    values = rng.standard_normal(60 * n) * 10.0 ** rng.integers(-12, 12, 60 * n)
    values[0], values[-1] = 1e30, -1e30  # they cancel: the small values decide the sum
    exact = math.fsum(values.tolist())
    split = {r: part_ for r, part_ in enumerate(np.array_split(values, n))}
    lumped = {r: values.reshape(6, -1) if r == 0 else np.zeros(0) for r in range(n)}
    assert comm.exact_sum(split) == comm.exact_sum(lumped) == exact
    assert float(np.sum(values)) != exact  # the test's data do need the exact sum


def test_broadcast_in_process_returns_the_value() -> None:
    """Reference: the value itself (the root process is this one)."""
    comm = Communicator.in_process(CubedSpherePartitioner((1, 1)))
    value = {"dt": 0.5, "steps": np.arange(3)}
    assert comm.broadcast(value) is value
    comm.barrier()  # nothing to synchronise with all ranks here


HALO_CASES = [("center", {}), ("corner", {"corner_fill": "x"}), ("C", {"corner_fill": True}),
              ("D", {"corner_fill": True, "depth": 2})]  # fmt: skip


@pytest.mark.parametrize("layout", [1, 2])
@pytest.mark.parametrize(("kind", "options"), HALO_CASES)
@pytest.mark.parametrize("in_process", [True, False])
def test_halo_updater_equals_halo_exchange_bitwise(layout, kind, options, in_process, rng) -> None:
    """Reference: the existing HaloExchange of every rank (all start(), then all wait()) on a
    copy of the same fields; the updater's update() and its start()/wait() give the same
    halos bit for bit, through InProcessExchange or (in_process=False) through messages."""
    part = CubedSpherePartitioner((layout, layout))
    h, st = 3, KINDS[kind]
    local = oracle.scatter(oracle.make_global(N, 2, st, rng), part, N, h, st, rng)
    ref = [[a.copy() for a in arrays] for arrays in local]
    exchange_all(build_local(part, lambda r: [make_spec(kind, ref[r], h, **options)]))
    comm = Communicator.in_process(part)
    updater = comm.halo_updater(
        {r: [make_spec(kind, local[r], h, **options)] for r in comm.ranks}, in_process=in_process
    )
    assert isinstance(updater, ExchangeGroup) and (updater.direct is not None) == in_process
    before = [[a.copy() for a in arrays] for arrays in local]
    for run in ("update", "start/wait"):
        if run == "update":
            updater.update()
        else:
            updater.start()
            updater.wait()
        for rank, (arrays, wants) in enumerate(zip(local, ref)):
            for c, (a, w) in enumerate(zip(arrays, wants)):
                assert np.array_equal(a, w), f"{run}: rank {rank} component {c} differs"
        for arrays, olds in zip(local, before):
            for a, old in zip(arrays, olds):
                a[...] = old


# --- errors ------------------------------------------------------------------------------------


def test_comms_must_be_one_mpi_rank_or_a_whole_local_group() -> None:
    """Reference: the documented rule (one MPIComm, or every LocalComm of one group)."""
    part = CubedSpherePartitioner((1, 1))
    comms = LocalComm.create(6)
    Communicator(part, list(reversed(comms)))  # any order is fine
    with pytest.raises(HaloError, match=r"got 5 comms \(LocalComm\) for ranks \[0, 1, 2, 3, 4\]"):
        Communicator(part, comms[:5])
    with pytest.raises(HaloError, match=r"for ranks \[0\]"):
        Communicator(part, comms[:1])
    with pytest.raises(HaloError, match="for ranks"):
        Communicator(part, comms[:3] + LocalComm.create(6)[3:])  # two groups
    with pytest.raises(HaloError, match=r"has 4 ranks but .* needs 6: launch with mpiexec -n 6"):
        Communicator(part, LocalComm.create(4))
    with pytest.raises(HaloError, match="got none"):
        Communicator(part, [])


def test_per_rank_mappings_must_name_the_ranks_of_this_process(rng) -> None:
    """Reference: the ranks of the process; missing and foreign ranks are named."""
    comm = Communicator.in_process(CubedSpherePartitioner((1, 1)))
    blocks = comm.scatter_tiles(_global(rng, 6, N, N, "center"))
    del blocks[4]
    with pytest.raises(HaloError, match=r"gather_tiles: .* missing ranks \[4\], ranks not run here \[\]"):
        comm.gather_tiles(blocks, N)
    with pytest.raises(HaloError, match=r"allreduce\('max'\): .* ranks not run here \[6\]"):
        comm.allreduce({r: 1.0 for r in range(7)}, "max")
    with pytest.raises(HaloError, match=r"halo_updater: .* missing ranks \[0, 1, 2, 3, 4, 5\]"):
        comm.halo_updater({})
    with pytest.raises(HaloError, match="rank 7 does not run in this process"):
        comm.comm_of(7)
    assert comm.comm_of(3).rank == 3


def test_bad_shapes_are_named(rng) -> None:
    """Reference: each rank's interior shape (12x12 on C12, 1x1 layout); blocks with halos,
    other trailing dimensions or dtypes, and wrong global arrays are refused, naming the rank."""
    part = CubedSpherePartitioner((1, 1))
    comm = Communicator.in_process(part)
    blocks = comm.scatter_tiles(_global(rng, 6, N, N, "center", (2,)))
    with_halo = {**blocks, 3: np.zeros((N + 6, N + 6, 2))}
    with pytest.raises(HaloError, match=r"rank 3 passed shape \(18, 18, 2\), but its interior .* \(12, 12\)"):
        comm.gather_tiles(with_halo, N)
    with pytest.raises(HaloError, match=r"rank 0 passed shape \(12, 12, 2\), but its interior .* \(13, 13\)"):
        comm.gather_tiles(blocks, N, location="corner")
    with pytest.raises(HaloError, match=r"rank 2 passed shape \(12, 12, 3\).* same trailing"):
        comm.gather_tiles({**blocks, 2: np.zeros((N, N, 3))}, N)
    with pytest.raises(HaloError, match=r"rank 5 .*float32.* dtype"):
        comm.gather_tiles({**blocks, 5: blocks[5].astype(np.float32)}, N)
    with pytest.raises(PartitionError, match="unknown location 'edge'"):
        comm.gather_tiles(blocks, N, location="edge")
    with pytest.raises(HaloError, match=r"expected the global array \(6, nx_tile, ny_tile"):
        comm.scatter_tiles(np.zeros((5, N, N)))
    with pytest.raises(HaloError, match="must pass the global array"):
        comm.scatter_tiles(None)
    with pytest.raises(HaloError, match=r"shape \(6, 13, 13\): .* does not divide evenly"):
        Communicator.in_process(CubedSpherePartitioner((2, 2))).scatter_tiles(np.zeros((6, 13, 13)))
    with pytest.raises(HaloError, match=r"rank 1 passed shape \(3,\), rank 0 \(2,\)"):
        comm.allreduce({r: np.zeros(3 if r == 1 else 2) for r in range(6)}, "sum")
    with pytest.raises(HaloError, match="op='mean', use one of max, min, sum"):
        comm.allreduce({r: 1.0 for r in range(6)}, "mean")


def test_halo_updater_errors_name_the_rank() -> None:
    """Reference: HaloExchange's own messages, prefixed with the rank; a spec not in a list and
    start()/wait() out of order are refused."""
    comm = Communicator.in_process(CubedSpherePartitioner((1, 1)))
    fields = {r: np.zeros((N + 6, N + 6, 1)) for r in comm.ranks}
    with pytest.raises(HaloError, match=r"rank 0 passed one ScalarHalo; pass a list"):
        comm.halo_updater({r: ScalarHalo(f, n_halo=3) for r, f in fields.items()})
    with pytest.raises(HaloError, match=r"halo_updater: rank 0: field 0: halo depth 4 is deeper"):
        comm.halo_updater({r: [ScalarHalo(f, n_halo=3, depth=4)] for r, f in fields.items()})
    updater = comm.halo_updater({r: [ScalarHalo(f, n_halo=3)] for r, f in fields.items()})
    with pytest.raises(HaloError, match=r"wait\(\) without a matching start"):
        updater.wait()
    updater.start()
    with pytest.raises(HaloError, match=r"start\(\) called twice without wait"):
        updater.start()
    updater.wait()


def test_local_comm_ranks_refuse_collectives() -> None:
    """Reference: LocalComm's rule that in-process ranks run one after another; a one-rank
    comm answers directly."""
    comms = LocalComm.create(6)
    with pytest.raises(HaloError, match="allgather needs ranks that run concurrently"):
        comms[0].allgather(1.0)
    with pytest.raises(HaloError, match="bcast needs ranks"):
        comms[1].bcast(1.0)
    (one,) = LocalComm.create(1)
    assert one.allgather(2.0) == [2.0] and one.bcast(3) == 3
    np.testing.assert_array_equal(one.gatherv(np.arange(3.0), [3]), np.arange(3.0))


# --- real MPI ----------------------------------------------------------------------------------
# One mpi-pytest test: starting 6 processes costs far more than the checks themselves.


def _mpi_tiles(mpi: Communicator, local: Communicator, rank: int) -> list[str]:
    failures = []
    rng = np.random.default_rng(5)
    for location, trailing in (("center", ()), ("center", (3, 2)), ("corner", (2,))):
        G = _global(rng, 6, N, N, location, trailing)
        want = local.scatter_tiles(G, location=location)[rank]
        mine = mpi.scatter_tiles(G if rank == 0 else None, location=location)
        if sorted(mine) != [rank] or not np.array_equal(mine[rank], want):
            failures.append(f"rank {rank} scatter {location} {trailing}")
        out = mpi.gather_tiles({rank: mine[rank]}, N, location=location)
        if (rank == 0) != (out is not None) or (out is not None and not np.array_equal(out, G)):
            failures.append(f"rank {rank} gather {location} {trailing}")
    bad = np.zeros((N + 1, N)) if rank == 3 else np.zeros((N, N))
    with pytest.raises(HaloError, match=r"rank 3 passed shape \(13, 12\)"):
        mpi.gather_tiles({rank: bad}, N)
    counts = [r + 1 for r in range(6)]  # rank r sends r + 1 values
    joined = mpi.comm_of(rank).gatherv(np.full(rank + 1, float(rank)), counts)
    if rank == 0 and not np.array_equal(joined, np.repeat(np.arange(6.0), counts)):
        failures.append(f"gatherv {joined}")
    return failures


def _mpi_reductions(mpi: Communicator, local: Communicator, rank: int) -> list[str]:
    failures = []
    rng = np.random.default_rng(9)
    scalars = rng.standard_normal(6) * 10.0 ** rng.integers(-8, 8, 6)
    arrays = rng.standard_normal((6, 4, 3))
    for values in (scalars, arrays):
        per_rank = {r: values[r] if values.ndim > 1 else float(values[r]) for r in range(6)}
        for op in ("max", "min", "sum"):
            got = mpi.allreduce({rank: per_rank[rank]}, op)
            if not np.array_equal(got, local.allreduce(per_rank, op)):
                failures.append(f"rank {rank} {op} {values.shape}: {got}")
    blocks = {r: rng.standard_normal((r + 1, 3)) * 10.0 ** rng.integers(-8, 8, (r + 1, 3))
              for r in range(6)}  # fmt: skip
    got_sum = mpi.exact_sum({rank: blocks[rank]})
    if got_sum != local.exact_sum(blocks):
        failures.append(f"rank {rank} exact_sum: {got_sum}")
    value = {"dt": 225.0, "levels": np.arange(4.0)} if rank == 0 else None
    got = mpi.broadcast(value)
    if got["dt"] != 225.0 or not np.array_equal(got["levels"], np.arange(4.0)):
        failures.append(f"rank {rank} broadcast {got}")
    mpi.barrier()
    return failures


def _mpi_halo_updater(mpi: Communicator, local: Communicator, rank: int) -> list[str]:
    failures = []
    for kind, options in HALO_CASES:
        st, h = KINDS[kind], 3
        rng = np.random.default_rng(13)
        pieces = oracle.scatter(oracle.make_global(N, 2, st, rng), local.partitioner, N, h, st, rng)
        mine = [a.copy() for a in pieces[rank]]
        local.halo_updater({r: [make_spec(kind, pieces[r], h, **options)] for r in local.ranks}).update()
        for packing in ("slicing", "datatypes"):
            fields = [a.copy() for a in mine]
            updater = mpi.halo_updater({rank: [make_spec(kind, fields, h, **options)]}, packing)
            updater.start()
            updater.wait()
            for c, (a, w) in enumerate(zip(fields, pieces[rank])):
                if not np.array_equal(a, w):
                    failures.append(f"rank {rank} {kind} {packing} component {c}")
    return failures


@pytest.mark.parallel(nprocs=[6])
def test_mpi_communicator_equals_in_process() -> None:
    """Six MPI processes, one rank each, against the in-process Communicator computed in the
    same process on the same data (same seeds everywhere), bit for bit:

    - scatter_tiles: the in-process blocks; gather_tiles: the global array itself on the root,
      None elsewhere (centres, corners, trailing dimensions); a wrong block shape on rank 3
      raises the same HaloError on every process; ``MPIComm.gatherv`` joins blocks of
      different sizes in rank order.
    - allreduce max/min/sum of scalars and arrays: the in-process allreduce of all six values;
      exact_sum of blocks of different shapes: the in-process one; broadcast: the root's object.
    - halo_updater (slicing and datatypes packing, start()/wait()): the in-process updater's
      halos, for centre and corner scalars and C/D vectors with corner fill.
    """
    part = CubedSpherePartitioner((1, 1))
    mpi, local = Communicator.over_mpi(part), Communicator.in_process(part)
    (rank,) = mpi.ranks
    assert mpi.size == 6 and not mpi.holds_all_ranks and mpi.is_root_process == (rank == 0)
    failures = (
        _mpi_tiles(mpi, local, rank)
        + _mpi_reductions(mpi, local, rank)
        + _mpi_halo_updater(mpi, local, rank)
    )
    everything = mpi.comm_of(rank).allgather(failures)  # no process left waiting in a collective
    assert not any(everything), everything
