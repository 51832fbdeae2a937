"""Bad input gives a clear HaloError / PartitionError naming the field and the fix."""

from __future__ import annotations

import numpy as np
import pytest

from mapping.cluster import (
    CubedSpherePartitioner,
    HaloError,
    HaloExchange,
    LocalComm,
    PartitionError,
    ScalarHalo,
    TilePartitioner,
    VectorHalo,
)
from workflows.errors import is_user_error


def _field(n: int = 4, h: int = 2, extra: int = 0, dtype=np.float64) -> np.ndarray:
    return np.zeros((n + 2 * h + extra, n + 2 * h + extra, 3), dtype=dtype)


def test_comm_size_must_match_partitioner() -> None:
    comm = LocalComm.create(4)[0]
    with pytest.raises(HaloError, match=r"4 ranks but .* needs 6: launch with mpiexec -n 6"):
        HaloExchange(comm, CubedSpherePartitioner((1, 1)), [ScalarHalo(_field(), n_halo=2)])


def test_depth_deeper_than_allocated_halo() -> None:
    comm = LocalComm.create(1)[0]
    with pytest.raises(HaloError, match=r"field 0: halo depth 3 is deeper than .* n_halo=2"):
        HaloExchange(comm, TilePartitioner((1, 1)), [ScalarHalo(_field(), n_halo=2, depth=3)])


def test_depth_beyond_neighbour_interior() -> None:
    comms = LocalComm.create(54)
    with pytest.raises(HaloError, match="reaches beyond the interior of neighbour rank"):
        HaloExchange(comms[0], CubedSpherePartitioner((3, 3)), [ScalarHalo(_field(2, 3), n_halo=3)])


def test_mismatched_shapes_and_dtypes() -> None:
    comm = LocalComm.create(1)[0]
    part = TilePartitioner((1, 1))
    with pytest.raises(HaloError, match=r"field 1: .* same compute domain"):
        HaloExchange(comm, part, [ScalarHalo(_field(), n_halo=2), ScalarHalo(_field(extra=1), n_halo=2)])
    with pytest.raises(HaloError, match=r"field 1: .*float32.* same compute domain and dtype"):
        HaloExchange(
            comm, part,
            [ScalarHalo(_field(), n_halo=2), ScalarHalo(_field(dtype=np.float32), n_halo=2)],
        )
    with pytest.raises(HaloError, match=r"field 0 \(v, C-grid\)"):
        HaloExchange(comm, part, [VectorHalo(_field(extra=1)[:, :-1], _field(), n_halo=2, grid="C")])


def test_double_start_and_wait_without_start() -> None:
    comm = LocalComm.create(1)[0]
    ex = HaloExchange(comm, TilePartitioner((1, 1), periodic=True), [ScalarHalo(_field(), n_halo=2)])
    with pytest.raises(HaloError, match="wait\\(\\) without a matching start"):
        ex.wait()
    ex.start()
    with pytest.raises(HaloError, match="start\\(\\) called twice without wait"):
        ex.start()
    ex.wait()
    ex.update()


def test_local_comm_wait_before_peer_started() -> None:
    comms = LocalComm.create(6)
    part = CubedSpherePartitioner((1, 1))
    exchanges = [HaloExchange(c, part, [ScalarHalo(_field(), n_halo=2)]) for c in comms]
    exchanges[0].start()
    with pytest.raises(HaloError, match="call start\\(\\) on every rank's exchange before any wait"):
        exchanges[0].wait()


def test_bad_specs_and_packing() -> None:
    comm = LocalComm.create(1)[0]
    part = TilePartitioner((1, 1))
    with pytest.raises(HaloError, match="grid 'B', use 'A', 'C' or 'D'"):
        HaloExchange(comm, part, [VectorHalo(_field(), _field(), n_halo=2, grid="B")])
    with pytest.raises(HaloError, match="location 'edge' is not supported"):
        HaloExchange(comm, part, [ScalarHalo(_field(), n_halo=2, location="edge")])
    with pytest.raises(HaloError, match="packing='datatypes' needs an MPIComm"):
        HaloExchange(comm, part, [ScalarHalo(_field(), n_halo=2)], packing="datatypes")
    with pytest.raises(HaloError, match="corner_fill must be"):
        HaloExchange(
            LocalComm.create(6)[0], CubedSpherePartitioner((1, 1)),
            [ScalarHalo(_field(), n_halo=2, corner_fill="z")],
        )


def test_errors_are_user_errors_for_the_cli() -> None:
    assert is_user_error(HaloError("x")) and is_user_error(PartitionError("x"))
    assert issubclass(PartitionError, HaloError)
