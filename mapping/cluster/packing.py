"""How the halo data of one exchange gets into and out of messages.

* :class:`SlicePacker`: array slicing copies the send rectangles into one contiguous buffer per
  neighbour and the received buffer into the (rotated) halo views. NumPy on CPU; on GPU the
  same copies run as CuPy kernels on the device, and the buffers are staged through host memory
  (MPI never sees device memory).
* :class:`DatatypePacker`: MPI derived datatypes (subarray where the view is a plain slab of a
  C-ordered array, nested hvectors otherwise, one struct per neighbour) let MPI move the data
  straight from/to the fields; only the sign flips of rotated vectors remain for unpack.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mapping.cluster.comm import Comm, Request
from mapping.cluster.errors import HaloError
from mapping.cluster.plan import Transfer


@dataclass
class Messages:
    """What each neighbour exchanges: ordered transfers out of and into this rank."""

    sends: dict[int, list[Transfer]]
    recvs: dict[int, list[Transfer]]


def recv_view(xp: Any, arrays: list[Any], t: Transfer) -> Any:
    return xp.rot90(arrays[t.component][t.recv], t.k, axes=(0, 1))


def send_view(arrays: list[Any], t: Transfer) -> Any:
    return arrays[t.source_component][t.send]


class SlicePacker:
    """Pack/unpack by slicing into per-neighbour buffers allocated once."""

    name = "slicing"

    def __init__(self, comm: Comm, arrays: list[Any], msgs: Messages, tag: int, xp: Any) -> None:
        dtype = arrays[0].dtype
        self.xp = xp
        self._pack: list[list[tuple[Any, Any]]] = []
        self._unpack: list[list[tuple[Any, Any, int]]] = []
        self._stage_out: list[tuple[Any, Any] | None] = []
        self._stage_in: list[tuple[Any, Any] | None] = []
        self.recv_requests: list[Request] = []
        self.send_requests: list[Request] = []
        for dest, transfers in msgs.sends.items():
            views = [send_view(arrays, t) for t in transfers]
            buf = self._buffer(sum(v.size for v in views), dtype)
            offset, items = 0, []
            for v in views:
                items.append((v, buf[offset : offset + v.size].reshape(v.shape)))
                offset += v.size
            self._pack.append(items)
            self.send_requests.append(comm.send_init(self._host(buf, self._stage_out), dest, tag))
        for src, transfers in msgs.recvs.items():
            views = [(recv_view(xp, arrays, t), t.sign) for t in transfers]
            buf = self._buffer(sum(v.size for v, _ in views), dtype)
            offset, items2 = 0, []
            for v, sign in views:
                items2.append((buf[offset : offset + v.size].reshape(v.shape), v, sign))
                offset += v.size
            self._unpack.append(items2)
            self.recv_requests.append(comm.recv_init(self._host(buf, self._stage_in), src, tag))

    def _buffer(self, n: int, dtype: Any) -> Any:
        return self.xp.empty(max(n, 1), dtype=dtype)

    def _host(self, buf: Any, stage: list) -> Any:
        """The buffer MPI sees: the buffer itself on CPU, a pinned host mirror for device data."""
        if self.xp is np:
            stage.append(None)
            return buf
        import cupyx

        host = cupyx.empty_pinned(buf.shape, dtype=buf.dtype)
        stage.append((buf, host))
        return host

    def pack(self) -> None:
        """Fill every neighbour's send buffer."""
        copyto = self.xp.copyto
        for items, staged in zip(self._pack, self._stage_out):
            for src, dst in items:
                copyto(dst, src)
            if staged is not None:
                dev, host = staged
                dev.get(out=host)  # synchronous device -> host copy

    def unpack(self) -> None:
        """Copy every received message into the halos (negating where rotation demands)."""
        copyto, negative = self.xp.copyto, self.xp.negative
        for items, staged in zip(self._unpack, self._stage_in):
            if staged is not None:
                dev, host = staged
                dev.set(host)
            for buf, dst, sign in items:
                if sign > 0:
                    copyto(dst, buf)
                else:
                    negative(buf, out=dst)

    def finish(self) -> None:
        return None


def _overlaps(a: tuple[slice, slice], b: tuple[slice, slice]) -> bool:
    return all(x.start < y.stop and y.start < x.stop for x, y in zip(a, b))


class DatatypePacker:
    """MPI derived datatypes describe the halo views; MPI packs. Needs ``comm.supports_datatypes``.

    MPI must not read a send region while a receive writes it. The only points both sent and
    received are boundary points on tile-edge lines through cube corners (``sync_edges``); those
    few send rectangles are snapshotted into private arrays at ``pack()`` and sent from there.
    """

    name = "datatypes"

    def __init__(self, comm: Comm, arrays: list[Any], msgs: Messages, tag: int, xp: Any) -> None:
        received = [t for ts in msgs.recvs.values() for t in ts]
        self._snapshots: list[tuple[Any, Any]] = []
        self.send_requests = []
        for dest, ts in msgs.sends.items():
            views = []
            for t in ts:
                view = send_view(arrays, t)
                if any(
                    u.component == t.source_component and _overlaps(u.recv, t.send)
                    for u in received
                ):
                    snap = np.empty(view.shape, dtype=view.dtype)
                    self._snapshots.append((view, snap))
                    view = snap
                views.append(view)
            self.send_requests.append(comm.send_init_views(views, dest, tag))  # type: ignore[attr-defined]
        self.recv_requests = [
            comm.recv_init_views([recv_view(np, arrays, t) for t in ts], src, tag)  # type: ignore[attr-defined]
            for src, ts in msgs.recvs.items()
        ]
        self._negate = [recv_view(np, arrays, t) for t in received if t.sign < 0]

    def pack(self) -> None:
        for live, snap in self._snapshots:
            np.copyto(snap, live)

    def unpack(self) -> None:
        """Sign flips of rotated vector components, after MPI wrote the halos."""
        for view in self._negate:
            np.negative(view, out=view)

    def finish(self) -> None:
        return None


class SharedMemoryPacker:
    """Ranks on one node copy straight from each other's memory (MPI-3 shared windows).

    Each rank packs its outgoing halo data into its own node-shared segment and tells each
    neighbour with a tiny "ready" message; the neighbour copies its halos straight out of that
    segment. Two copies in all -- as many as MPI's own shared-memory transport of contiguous
    buffers -- instead of pack + MPI (two) + unpack. Segments alternate between two copies:
    a neighbour's "ready" for step n proves it finished reading step n-1, so step n+1 may
    overwrite that copy without any extra "done" message.

    Memory ordering (MPI-3's unified and separate models alike): the window is in one
    ``lock_all`` epoch for its lifetime; ``pack()`` ends with ``Win_sync`` before the "ready"
    sends, ``unpack()`` starts with ``Win_sync`` after the "ready" receives. The message orders
    the two processes and the syncs order each side's stores and loads around it -- both for
    the data (written, then read) and for the buffer's reuse two steps later (read, then
    overwritten: the reader's next ``pack()`` syncs before its "ready").
    """

    name = "shared"

    def __init__(self, comm: Comm, arrays: list[Any], msgs: Messages, tag: int, xp: Any,
                 segments: tuple[list[Any], dict[int, list[Any]], Callable[[], None]]) -> None:
        if set(msgs.sends) != set(msgs.recvs):
            raise HaloError("internal: shared-memory packing needs mutual neighbours")
        mine, peers, self._sync = segments
        self._pack: list[list[tuple[Any, Any]]] = []
        self._unpack: list[list[tuple[Any, Any, int]]] = []
        for copy in range(len(mine)):
            items, offset = [], 0
            for transfers in msgs.sends.values():
                for t in transfers:
                    v = send_view(arrays, t)
                    items.append((v, mine[copy][offset : offset + v.size].reshape(v.shape)))
                    offset += v.size
            self._pack.append(items)
            items2 = []
            for src, transfers in msgs.recvs.items():
                seg, offset = peers[src][copy], 0
                for t in transfers:
                    v = recv_view(xp, arrays, t)
                    items2.append((seg[offset : offset + v.size].reshape(v.shape), v, t.sign))
                    offset += v.size
            self._unpack.append(items2)
        self._flags = np.zeros(len(msgs.recvs) + 1, dtype=np.int64)
        flags = [self._flags[i : i + 1] for i in range(len(self._flags))]
        self.send_requests = [comm.send_init(flags[-1], d, tag) for d in msgs.sends]
        self.recv_requests = [comm.recv_init(flags[i], s, tag) for i, s in enumerate(msgs.recvs)]
        self._step = 0

    @staticmethod
    def layout(msgs: Messages, arrays: list[Any]) -> tuple[int, dict[int, int], dict[int, int]]:
        """(items in my segment, offset of each destination's data, items from each source)."""
        send_offsets, offset = {}, 0
        for dest, ts in msgs.sends.items():
            send_offsets[dest] = offset
            offset += sum(send_view(arrays, t).size for t in ts)
        recv_sizes = {
            src: sum(arrays[t.component][t.recv].size for t in ts) for src, ts in msgs.recvs.items()
        }
        return offset, send_offsets, recv_sizes

    def pack(self) -> None:
        for src, dst in self._pack[self._step % 2]:
            np.copyto(dst, src)
        self._sync()  # stores (and the last step's loads) complete before "ready" is sent

    def unpack(self) -> None:
        self._sync()  # after "ready" arrived: the peers' stores are visible to these loads
        for buf, dst, sign in self._unpack[self._step % 2]:
            if sign > 0:
                np.copyto(dst, buf)
            else:
                np.negative(buf, out=dst)
        self._step += 1

    def finish(self) -> None:
        return None
