"""MPIComm: the Comm interface over mpi4py -- the only module of stratoflow importing mpi4py."""

from __future__ import annotations

from typing import Any

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from mapping.cluster.comm import Comm, Request
from mapping.cluster.errors import HaloError


class _MPIRequest(Request):
    def __init__(self, req: MPI.Prequest, keep: Any = None) -> None:
        self.req = req
        self._keep = keep  # datatypes/buffers that must outlive the request

    def start(self) -> None:
        self.req.Start()

    def wait(self) -> None:
        self.req.Wait()


def _address(view: np.ndarray) -> int:
    return int(view.__array_interface__["data"][0])


def _view_datatype(view: np.ndarray, base: MPI.Datatype) -> tuple[MPI.Datatype, int]:
    """(datatype, absolute address) describing ``view``'s elements in its C order.

    A slab of a C-contiguous array becomes an MPI subarray; any other strides (transposed or
    flipped halo views, gt4py layouts with padding) become nested hvectors.
    """
    owner = view.base if isinstance(view.base, np.ndarray) else None
    while owner is not None and isinstance(owner.base, np.ndarray):
        owner = owner.base
    if (
        owner is not None
        and owner.flags.c_contiguous
        and owner.ndim == view.ndim
        and view.strides == owner.strides
    ):
        offset = (_address(view) - _address(owner)) // view.itemsize
        starts = list(np.unravel_index(offset, owner.shape))
        if all(s + n <= m for s, n, m in zip(starts, view.shape, owner.shape)):
            dt = base.Create_subarray(list(owner.shape), list(view.shape), [int(s) for s in starts])
            return dt, _address(owner)
    dt = base
    made = []
    for n, stride in reversed(list(zip(view.shape, view.strides))):
        dt = dt.Create_hvector(int(n), 1, int(stride))
        made.append(dt)
    for t in made[:-1]:
        t.Free()
    return dt, _address(view)


class MPIComm(Comm):
    """A real MPI communicator (default: a duplicate of ``COMM_WORLD``)."""

    supports_datatypes = True

    def __init__(self, comm: Any = None) -> None:
        self.comm = (comm if comm is not None else MPI.COMM_WORLD).Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    def send_init(self, buf: Any, dest: int, tag: int) -> Request:
        return _MPIRequest(self.comm.Send_init(buf, dest, tag), buf)

    def recv_init(self, buf: Any, source: int, tag: int) -> Request:
        return _MPIRequest(self.comm.Recv_init(buf, source, tag), buf)

    def _struct(self, views: list[np.ndarray]) -> MPI.Datatype:
        if not views:
            raise HaloError("internal: a datatype message needs at least one view")
        base = from_numpy_dtype(views[0].dtype)
        parts = [_view_datatype(v, base) for v in views]
        struct = MPI.Datatype.Create_struct([1] * len(parts), [a for _, a in parts],
                                            [t for t, _ in parts])
        struct.Commit()
        for t, _ in parts:
            t.Free()
        return struct

    def send_init_views(self, views: list[np.ndarray], dest: int, tag: int) -> Request:
        """A persistent send of all ``views`` (any strides) as one message, packed by MPI."""
        dt = self._struct(views)
        return _MPIRequest(self.comm.Send_init([MPI.BOTTOM, 1, dt], dest, tag), (dt, views))

    def recv_init_views(self, views: list[np.ndarray], source: int, tag: int) -> Request:
        """A persistent receive of one message straight into ``views`` (any strides)."""
        dt = self._struct(views)
        return _MPIRequest(self.comm.Recv_init([MPI.BOTTOM, 1, dt], source, tag), (dt, views))

    def startall(self, requests: list[Request]) -> None:
        if requests:
            MPI.Prequest.Startall([r.req for r in requests])  # type: ignore[attr-defined]

    def waitall(self, requests: list[Request]) -> None:
        if requests:
            MPI.Request.Waitall([r.req for r in requests])  # type: ignore[attr-defined]

    def barrier(self) -> None:
        self.comm.Barrier()

    def allreduce_max(self, value: float) -> float:
        return float(self.comm.allreduce(value, op=MPI.MAX))

    def next_tag(self) -> int:
        # every rank builds its exchanges in the same order, so local counters agree
        return super().next_tag()
