"""Real MPI (mpiexec via mpi-pytest): 6 and 24 ranks, both packings, against the 3-D oracle.

Every rank builds the same global field (same seed), exchanges its own piece over MPIComm and
compares bit for bit (tolerance 0) with the serial oracle. Failures are gathered before the
assertion so that no rank is left waiting in a collective.
"""

from __future__ import annotations

import cube_oracle as oracle
import numpy as np
import pytest
from cluster_helpers import KINDS, make_spec

from mapping.cluster import CubedSpherePartitioner, HaloExchange

KIND_LIST = ["center", "corner", "A", "C", "D"]


#: corner_fill argument per kind and the oracle's CORNER_SIDES key
FILLS = {"center": ("y", "y"), "corner": ("x", "x"), "A": (True, "A"), "C": (True, "C"),
         "D": (True, "D")}


def _run(
    layout: tuple[int, int], N: int, h: int, kinds: list[str], packings, fill: bool = False
) -> None:
    from mapping.cluster import MPIComm

    comm = MPIComm()
    part = CubedSpherePartitioner(layout)
    rank = comm.rank
    failures: list[str] = []
    rng = np.random.default_rng(11)  # identical on every rank
    Gs = {k: oracle.make_global(N, 3, KINDS[k], rng) for k in kinds}
    pieces = {k: oracle.scatter(Gs[k], part, N, h, KINDS[k], rng)[rank] for k in kinds}
    want = {
        k: oracle.expected([pieces[k]], Gs[k], part, N, h, h, KINDS[k], ranks=[rank],
                           corner_fill=FILLS[k][1] if fill else None)[0]
        for k in kinds
    }
    kw = {k: {"corner_fill": FILLS[k][0]} if fill else {} for k in kinds}
    for packing, order in packings:
        mine = {k: [np.array(a, order=order) for a in pieces[k]] for k in kinds}
        ex = HaloExchange(comm, part, [make_spec(k, mine[k], h, **kw[k]) for k in kinds], packing=packing)
        for step in range(2):  # persistent requests reused
            ex.update()
            for k in kinds:
                for c, (a, w) in enumerate(zip(mine[k], want[k])):
                    if not np.array_equal(a, w):
                        failures.append(f"rank {rank} {packing}/{order} step {step} {k}[{c}]")
        if packing == "auto":
            assert ex.packing_choice in ex.packing_times
            assert set(ex.packing_times) == {"slicing", "datatypes", "shared"}
    everything = comm.comm.allgather(failures)
    assert not any(everything), everything


@pytest.mark.parallel(nprocs=6)
def test_mpi_6_ranks_all_kinds_all_packings() -> None:
    _run(
        (1, 1), N=6, h=2, kinds=KIND_LIST,
        packings=[
            ("slicing", "C"), ("datatypes", "C"), ("datatypes", "F"), ("shared", "F"), ("auto", "C")
        ],
    )


@pytest.mark.parallel(nprocs=6)
def test_mpi_6_ranks_corner_fill() -> None:
    """corner_fill on for scalars (both sides) and A/C/D vectors in one exchange: equals the
    oracle extended with FV3's corner rule, exactly."""
    _run((1, 1), N=6, h=3, kinds=KIND_LIST, packings=[("slicing", "C"), ("datatypes", "F")],
         fill=True)


@pytest.mark.parallel(nprocs=24)
def test_mpi_24_ranks() -> None:
    _run((2, 2), N=8, h=3, kinds=["center", "corner", "D"],
         packings=[("slicing", "C"), ("datatypes", "F"), ("shared", "C")])
