"""Ranks of a cubed-sphere run: the partition, each rank's subdomain and grid, and its comm.

A run is either all ``6 * layout^2`` ranks in this process (``LocalComm``) or one rank per MPI
process (``MPIComm``); model code loops over ``ranks`` and never needs to know which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fv3core.errors import FV3ConfigError
from fv3core.grid.metric import MetricTerms, SubdomainSpec
from mapping.cluster import CubedSpherePartitioner, LocalComm, PartitionError

N_HALO = 3


@dataclass(frozen=True, eq=False)
class Rank:
    rank: int
    comm: Any
    spec: SubdomainSpec
    metric: MetricTerms


def build_ranks(
    resolution: int,
    layout: int,
    mpi: bool = False,
    radius: float | None = None,
    alpha: float = 0.0,
) -> tuple[CubedSpherePartitioner, list[Rank]]:
    """The partitioner and the ranks this process runs (all of them in-process, or its own)."""
    try:
        part = CubedSpherePartitioner(layout=(layout, layout))
    except PartitionError as exc:
        raise FV3ConfigError(f"layout={layout}: {exc}") from exc
    if resolution % layout:
        raise FV3ConfigError(
            f"resolution C{resolution} is not divisible by layout {layout}: pick a resolution "
            f"that is a multiple of the layout (e.g. C{layout * max(1, resolution // layout)})"
        )
    if mpi:
        from mapping.cluster import MPIComm

        comm = MPIComm()
        if comm.size != part.total_ranks:
            raise FV3ConfigError(
                f"layout {layout} needs {part.total_ranks} MPI ranks (6 * layout^2) but the job "
                f"has {comm.size}: run under mpiexec -n {part.total_ranks} or use "
                f"--layout {_layout_for(comm.size)}"
            )
        comms = {comm.rank: comm}
    else:
        comms = dict(enumerate(LocalComm.create(part.total_ranks)))
    kw: dict[str, Any] = {"alpha": alpha}
    if radius is not None:
        kw["radius"] = radius
    ranks = []
    for r, comm in comms.items():
        i0, i1, j0, j1 = part.subdomain_extent(r, resolution, resolution)
        spec = SubdomainSpec(resolution, part.tile_index(r), i0, i1, j0, j1, N_HALO)
        ranks.append(Rank(r, comm, spec, MetricTerms.build(spec, **kw)))
    return part, ranks


def _layout_for(size: int) -> str:
    n = round((size / 6) ** 0.5)
    return str(n) if 6 * n * n == size else "(none: the rank count must be 6 * layout^2)"
