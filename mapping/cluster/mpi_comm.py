"""MPIComm: the Comm interface over mpi4py -- the only module of stratoflow importing mpi4py."""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mpi4py import MPI
from mpi4py.util.dtlib import from_numpy_dtype

from mapping.cluster.comm import Comm, Request
from mapping.cluster.errors import HaloError


class _MPIRequest(Request):
    def __init__(self, req: MPI.Request, keep: Any = None) -> None:
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
    # trailing dimensions that are contiguous in memory become one contiguous block
    shape, strides = list(view.shape), list(view.strides)
    block = 1
    while shape and strides[-1] == view.itemsize * block:
        block *= shape.pop()
        strides.pop()
    dt = base.Create_contiguous(block)
    made = [dt]
    for n, stride in reversed(list(zip(shape, strides))):
        dt = dt.Create_hvector(int(n), 1, int(stride))
        made.append(dt)
    for t in made[:-1]:
        t.Free()
    return dt, _address(view)


def world_rank_size() -> tuple[int, int]:
    """This process's rank in ``COMM_WORLD`` and the world's size (initialises MPI)."""
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()


def abort_world(code: int) -> None:
    """``MPI_Abort(COMM_WORLD, code)``: the launcher ends every rank of the job (after
    ``MPI_Finalize`` the process just exits with ``code``; its launcher sees that)."""
    if MPI.Is_finalized():
        os._exit(code)
    MPI.COMM_WORLD.Abort(code)


def _close_epoch(win: MPI.Win) -> None:
    """End the passive-target epoch of a shared window (``Win_unlock_all``)."""
    if not MPI.Is_finalized():
        win.Unlock_all()


def _displacements(counts: Sequence[int]) -> list[int]:
    """Offsets of consecutive blocks of ``counts`` items."""
    return [int(v) for v in np.cumsum([0, *counts[:-1]])]


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

    def shared_segments(
        self,
        n_items: int,
        dtype: np.dtype,
        send_offsets: dict[int, int],
        recv_sizes: dict[int, int],
        copies: int = 2,
    ) -> tuple[list[np.ndarray], dict[int, list[np.ndarray]], Callable[[], None]] | None:
        """Collective: ``copies`` node-shared buffers of ``n_items`` for this rank, views into
        each peer's buffers of what it puts there for this rank (``recv_sizes[src]`` items at
        the offset the peer passed in ``send_offsets``), and ``sync``, the window's memory
        barrier. None unless all ranks share a node.

        Loads and stores to the window are ordered across processes only by MPI's memory model
        (MPI-3.1 section 11.5.5): the window is opened once in a passive-target epoch on every
        rank (``Win_lock_all(MODE_NOCHECK)``, closed at exit), a writer calls ``sync()`` after
        its stores and before the message that tells the reader, and the reader calls
        ``sync()`` after that message arrives and before its loads."""
        node = self.comm.Split_type(MPI.COMM_TYPE_SHARED)
        together = self.comm.allreduce(int(node.Get_size() == self.size), op=MPI.MIN)
        if not together:
            node.Free()
            return None
        itemsize = np.dtype(dtype).itemsize
        win = MPI.Win.Allocate_shared(max(copies * n_items, 1) * itemsize, itemsize, comm=node)
        win.Lock_all(MPI.MODE_NOCHECK)
        atexit.register(_close_epoch, win)  # before MPI_Finalize
        self._keep_alive = getattr(self, "_keep_alive", []) + [win, node]

        def segments(rank: int, n: int) -> list[np.ndarray]:
            buf, _ = win.Shared_query(rank)
            flat = np.ndarray(buffer=buf, dtype=dtype, shape=(len(buf) // itemsize,))
            return [flat[c * n : (c + 1) * n] for c in range(copies)]

        table = self.comm.alltoall([(send_offsets.get(d, -1), n_items) for d in range(self.size)])
        peers = {
            src: [seg[table[src][0] : table[src][0] + n] for seg in segments(src, table[src][1])]
            for src, n in recv_sizes.items()
        }
        return segments(self.rank, n_items), peers, win.Sync

    def isend(self, buf: Any, dest: int, tag: int) -> Request:
        return _MPIRequest(self.comm.Isend(buf, dest, tag), buf)

    def irecv(self, buf: Any, source: int, tag: int) -> Request:
        return _MPIRequest(self.comm.Irecv(buf, source, tag), buf)

    def idle_barrier(self, poll_s: float = 0.005) -> None:
        req = self.comm.Ibarrier()
        while not req.Test():
            time.sleep(poll_s)

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

    def waitany(self, requests: list[Request]) -> int:
        return int(MPI.Request.Waitany([r.req for r in requests]))  # type: ignore[attr-defined]

    def barrier(self) -> None:
        self.comm.Barrier()

    def allreduce_max(self, value: float) -> float:
        return float(self.comm.allreduce(value, op=MPI.MAX))

    def allreduce_sum(self, value: float) -> float:
        return self.comm.allreduce(value, op=MPI.SUM)

    def allgather(self, value: Any) -> list[Any]:
        return self.comm.allgather(value)

    def bcast(self, value: Any, root: int = 0) -> Any:
        return self.comm.bcast(value, root=root)

    def gatherv(self, send: np.ndarray, counts: Sequence[int], root: int = 0) -> np.ndarray | None:
        if self.rank != root:
            self.comm.Gatherv(send, None, root=root)
            return None
        recv = np.empty(int(sum(counts)), dtype=send.dtype)
        self.comm.Gatherv(send, [recv, (list(counts), _displacements(counts))], root=root)
        return recv

    def scatterv(
        self, send: np.ndarray | None, counts: Sequence[int], recv: np.ndarray, root: int = 0
    ) -> None:
        message = [send, (list(counts), _displacements(counts))] if self.rank == root else None
        self.comm.Scatterv(message, recv, root=root)

    def next_tag(self) -> int:
        # every rank builds its exchanges in the same order, so local counters agree
        return super().next_tag()
