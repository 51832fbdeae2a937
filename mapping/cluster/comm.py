"""The small communicator interface halo exchange needs, and an in-process emulation of N ranks.

:class:`MPIComm` (in :mod:`mapping.cluster.mpi_comm`, the only module importing mpi4py) wraps a
real MPI communicator; :class:`LocalComm` emulates ``size`` ranks inside one process for tests:
all ranks share one mailbox, sends complete at once (buffered), a receive completes when its
message is there. Run every rank's ``start()`` before any rank's ``wait()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any

import numpy as np

from mapping.cluster.errors import HaloError


class Request(ABC):
    """A pending (or persistent, restartable) point-to-point operation."""

    @abstractmethod
    def start(self) -> None:
        """(Re)start a persistent request."""

    @abstractmethod
    def wait(self) -> None:
        """Block until the operation is complete."""


class Comm(ABC):
    """Point-to-point messaging between ``size`` ranks; this process is ``rank``."""

    rank: int
    size: int
    #: True where the comm can move data described by MPI derived datatypes (MPIComm)
    supports_datatypes: bool = False

    @abstractmethod
    def send_init(self, buf: Any, dest: int, tag: int) -> Request:
        """A persistent send of the whole contiguous buffer ``buf`` to ``dest``."""

    @abstractmethod
    def recv_init(self, buf: Any, source: int, tag: int) -> Request:
        """A persistent receive into the whole contiguous buffer ``buf`` from ``source``."""

    def isend(self, buf: Any, dest: int, tag: int) -> Request:
        """A one-off non-blocking send of a contiguous buffer (already started)."""
        req = self.send_init(buf, dest, tag)
        req.start()
        return req

    def irecv(self, buf: Any, source: int, tag: int) -> Request:
        """A one-off non-blocking receive into a contiguous buffer (already started)."""
        req = self.recv_init(buf, source, tag)
        req.start()
        return req

    def idle_barrier(self, poll_s: float = 0.005) -> None:
        """A barrier that sleeps while it waits (ranks oversubscribing cores don't spin)."""
        self.barrier()

    def startall(self, requests: list[Request]) -> None:
        for req in requests:
            req.start()

    def waitall(self, requests: list[Request]) -> None:
        for req in requests:
            req.wait()

    def waitany(self, requests: list[Request]) -> int:
        """Wait until one of ``requests`` completes; its index."""
        requests[0].wait()
        return 0

    @abstractmethod
    def barrier(self) -> None:
        """Synchronise all ranks."""

    @abstractmethod
    def allreduce_max(self, value: float) -> float:
        """Maximum of ``value`` over all ranks."""

    def next_tag(self) -> int:
        """A fresh message tag; collective (every rank builds its exchanges in the same order)."""
        self._tag_counter = getattr(self, "_tag_counter", 0) + 1
        return 1000 + self._tag_counter

    # --- collectives over all ranks (MPIComm runs them; a one-rank comm answers directly) ---
    def allgather(self, value: Any) -> list[Any]:
        """Every rank's ``value`` (a small picklable object), in rank order. Collective."""
        self._refuse_collective("allgather")
        return [value]

    def bcast(self, value: Any, root: int = 0) -> Any:
        """``root``'s ``value`` (a picklable object) on every rank. Collective."""
        self._refuse_collective("bcast")
        return value

    def gatherv(self, send: np.ndarray, counts: Sequence[int], root: int = 0) -> np.ndarray | None:
        """On ``root``: the 1-D concatenation, in rank order, of every rank's contiguous 1-D
        ``send`` (``counts[r]`` items from rank ``r``, one dtype); None elsewhere. Collective."""
        self._refuse_collective("gatherv")
        return np.array(send, copy=True)

    def scatterv(
        self, send: np.ndarray | None, counts: Sequence[int], recv: np.ndarray, root: int = 0
    ) -> None:
        """Rank ``r``'s contiguous 1-D ``recv`` gets its ``counts[r]`` items of ``root``'s 1-D
        ``send`` (consecutive blocks in rank order; ``send`` is ignored off the root). Collective."""
        self._refuse_collective("scatterv")
        assert send is not None
        np.copyto(recv, send)

    def _refuse_collective(self, name: str) -> None:
        if self.size > 1:
            raise HaloError(
                f"{type(self).__name__} rank {self.rank} of {self.size}: {name} needs ranks that "
                f"run concurrently (MPIComm); for ranks that all run in this process use "
                f"mapping.cluster.Communicator, which computes its collectives in place"
            )


class _Mailbox:
    def __init__(self) -> None:
        self.queues: dict[tuple[int, int, int], deque[np.ndarray]] = defaultdict(deque)


class _LocalSend(Request):
    def __init__(self, box: _Mailbox, buf: np.ndarray, src: int, dest: int, tag: int) -> None:
        self.box, self.buf, self.key = box, buf, (src, dest, tag)

    def start(self) -> None:
        self.box.queues[self.key].append(np.array(self.buf, copy=True))

    def wait(self) -> None:
        return None


class _LocalRecv(Request):
    def __init__(self, box: _Mailbox, buf: np.ndarray, src: int, dest: int, tag: int) -> None:
        self.box, self.buf, self.key = box, buf, (src, dest, tag)
        self.active = False

    def start(self) -> None:
        self.active = True

    def wait(self) -> None:
        if not self.active:
            return
        queue = self.box.queues.get(self.key)
        if not queue:
            src, dest, tag = self.key
            raise HaloError(
                f"LocalComm: rank {dest} waits for a message from rank {src} (tag {tag}) that "
                f"was never sent; with in-process ranks call start() on every rank's exchange "
                f"before any wait()"
            )
        msg = queue.popleft()
        if msg.size != self.buf.size:
            raise HaloError(
                f"LocalComm: rank {self.key[1]} expected {self.buf.size} values from rank "
                f"{self.key[0]}, got {msg.size}: the ranks built different exchanges"
            )
        np.copyto(self.buf.reshape(-1), msg.reshape(-1))
        self.active = False


class LocalComm(Comm):
    """One of ``size`` in-process ranks sharing a mailbox (see :meth:`create`)."""

    def __init__(self, rank: int, size: int, mailbox: _Mailbox) -> None:
        self.rank, self.size, self._box = rank, size, mailbox

    @classmethod
    def create(cls, size: int) -> list[LocalComm]:
        """``size`` per-rank communicators that talk to each other in this process."""
        if size < 1:
            raise HaloError(f"LocalComm.create needs a positive number of ranks, got {size}")
        box = _Mailbox()
        return [cls(r, size, box) for r in range(size)]

    def same_group(self, other: object) -> bool:
        """Whether ``other`` is a rank of the same :meth:`create` group as this one."""
        return isinstance(other, LocalComm) and other._box is self._box

    def _check_peer(self, peer: int) -> None:
        if not 0 <= peer < self.size:
            raise HaloError(f"LocalComm: rank {peer} does not exist (size {self.size})")

    def send_init(self, buf: np.ndarray, dest: int, tag: int) -> Request:
        self._check_peer(dest)
        return _LocalSend(self._box, buf, self.rank, dest, tag)

    def recv_init(self, buf: np.ndarray, source: int, tag: int) -> Request:
        self._check_peer(source)
        return _LocalRecv(self._box, buf, source, self.rank, tag)

    def barrier(self) -> None:
        if self.size > 1:
            raise HaloError("LocalComm ranks run one after another: collectives are unavailable")

    def allreduce_max(self, value: float) -> float:
        self.barrier()
        return value

    def pending_messages(self) -> int:
        """Messages sent but not yet received (0 after every exchange completed)."""
        return sum(len(q) for q in self._box.queues.values())
