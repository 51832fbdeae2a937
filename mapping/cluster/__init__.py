"""Cubed-sphere and tile domain decomposition, and halo exchange over MPI (or in-process ranks).

:class:`Communicator` is the front door: the partitioner and the comms of the ranks this process
runs, with gather/scatter of tiles, broadcast, allreduce and halo updaters.
``MPIComm`` is imported lazily so that importing this package never initialises MPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mapping.cluster.comm import Comm, LocalComm, Request
from mapping.cluster.communicator import Communicator
from mapping.cluster.errors import HaloError, PartitionError
from mapping.cluster.exchange import HaloExchange
from mapping.cluster.geometry import CORNER_DIRECTIONS, DIRECTIONS, EDGE_DIRECTIONS, LOCATIONS
from mapping.cluster.in_process import ExchangeGroup, InProcessExchange, runs_in_process
from mapping.cluster.partitioner import Boundary, CubedSpherePartitioner, TilePartitioner
from mapping.cluster.specs import ScalarHalo, VectorHalo

if TYPE_CHECKING:
    from mapping.cluster.mpi_comm import MPIComm

__all__ = [
    "Boundary",
    "CORNER_DIRECTIONS",
    "Comm",
    "Communicator",
    "CubedSpherePartitioner",
    "DIRECTIONS",
    "EDGE_DIRECTIONS",
    "ExchangeGroup",
    "HaloError",
    "HaloExchange",
    "InProcessExchange",
    "LOCATIONS",
    "LocalComm",
    "MPIComm",
    "PartitionError",
    "Request",
    "ScalarHalo",
    "TilePartitioner",
    "VectorHalo",
    "runs_in_process",
]


def __getattr__(name: str) -> Any:
    if name == "MPIComm":
        from mapping.cluster.mpi_comm import MPIComm

        return MPIComm
    raise AttributeError(f"module 'mapping.cluster' has no attribute {name!r}")
