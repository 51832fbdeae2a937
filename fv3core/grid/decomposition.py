"""The ranks of a cubed-sphere run: partition, communicator, and each rank's subdomain.

A run is either all ``6 * layout^2`` ranks in this process or one rank per MPI process; model
code loops over :attr:`Decomposition.ranks` and talks to the other ranks only through
:attr:`Decomposition.communicator` (:class:`mapping.cluster.Communicator`: gather, allreduce,
halo updaters), so it never needs to know which.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from fv3core.errors import FV3ConfigError
from fv3core.grid.subdomain import SubdomainSpec
from mapping.cluster import Communicator, CubedSpherePartitioner, PartitionError

#: halo width of every field (FV3's ``n_halo``)
N_HALO = 3

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Rank:
    """One rank's subdomain."""

    rank: int
    spec: SubdomainSpec

    def interior(self, a: np.ndarray) -> np.ndarray:
        """The compute cells ``[h:-h, h:-h]`` of a cell-centred array of this rank (a copy)."""
        h = self.spec.n_halo
        return np.array(a[h : h + self.spec.nx, h : h + self.spec.ny], copy=True)


@dataclass(frozen=True)
class Decomposition:
    """The partition of a C``resolution`` cube, the ranks this process runs and the
    communicator over all ranks."""

    resolution: int
    communicator: Communicator
    ranks: tuple[Rank, ...]

    @property
    def partitioner(self) -> CubedSpherePartitioner:
        return self.communicator.partitioner  # type: ignore[return-value]

    @property
    def total_ranks(self) -> int:
        return self.communicator.size

    @property
    def is_root(self) -> bool:
        """Whether this process runs rank 0 (where gathered fields arrive)."""
        return self.communicator.is_root_process

    def gather(self, per_rank: Mapping[int, np.ndarray]) -> np.ndarray | None:
        """The global cell-centred array (6, N, N[, ...]) from each rank's interior cells, on
        the root process (None elsewhere); collective."""
        return self.communicator.gather_tiles(per_rank, self.resolution)

    def gather_fields(
        self, per_rank: Mapping[int, Mapping[str, np.ndarray]]
    ) -> dict[str, np.ndarray] | None:
        """:meth:`gather` of every named field (the same names on every rank); collective."""
        names = list(next(iter(per_rank.values())))
        out = {k: self.gather({r: f[k] for r, f in per_rank.items()}) for k in names}
        return None if not self.is_root else out  # type: ignore[return-value]

    def max_over_ranks(self, value_of: Callable[[Rank], float]) -> float:
        """max over all ranks of ``value_of(rank)``; collective."""
        return float(self.communicator.allreduce({r.rank: value_of(r) for r in self.ranks}, "max"))

    def build_serially(self, build: Callable[[], T]) -> T:
        """``build()`` on each process in turn (rank order), so that MPI ranks compiling the
        same stencils into one cache do not race: the first builds, the others load."""
        comm = self.communicator
        if comm.holds_all_ranks:
            return build()
        built: Any = None
        for turn in range(comm.size):
            if turn in comm.ranks:
                built = build()
            comm.barrier()
        return built


def decompose(
    resolution: int,
    layout: int,
    *,
    mpi: bool = False,
) -> Decomposition:
    """The decomposition of C``resolution`` into ``layout x layout`` ranks per tile: every rank
    in this process, or (``mpi``) this MPI process's rank."""
    try:
        partitioner = CubedSpherePartitioner(layout=(layout, layout))
    except PartitionError as exc:
        raise FV3ConfigError(f"layout={layout}: {exc}") from exc
    if resolution % layout:
        raise FV3ConfigError(
            f"resolution C{resolution} is not divisible by layout {layout}: pick a resolution "
            f"that is a multiple of the layout (e.g. C{layout * max(1, resolution // layout)})"
        )
    if mpi:
        from mapping.cluster import MPIComm

        world = MPIComm()
        if world.size != partitioner.total_ranks:
            raise FV3ConfigError(
                f"layout {layout} needs {partitioner.total_ranks} MPI ranks (6 * layout^2) but "
                f"the job has {world.size}: run under mpiexec -n {partitioner.total_ranks} or "
                f"use --layout {_layout_for(world.size)}"
            )
        communicator = Communicator.over_mpi(partitioner, world)
    else:
        communicator = Communicator.in_process(partitioner)
    ranks = []
    for r in communicator.ranks:
        i0, i1, j0, j1 = partitioner.subdomain_extent(r, resolution, resolution)
        spec = SubdomainSpec(resolution, partitioner.tile_index(r), i0, i1, j0, j1, N_HALO)
        ranks.append(Rank(r, spec))
    return Decomposition(resolution, communicator, tuple(ranks))


def _layout_for(size: int) -> str:
    n = round((size / 6) ** 0.5)
    return str(n) if 6 * n * n == size else "(none: the rank count must be 6 * layout^2)"
