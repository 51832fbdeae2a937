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

from dataclasses import dataclass
from typing import Any

import numpy as np

from mapping.cluster.comm import Comm, Request
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
        self._pack: list[tuple[Any, Any]] = []
        self._unpack: list[tuple[Any, Any, int]] = []
        self._stage_out: list[tuple[Any, Any]] = []
        self._stage_in: list[tuple[Any, Any]] = []
        self.recv_requests: list[Request] = []
        self.send_requests: list[Request] = []
        for dest, transfers in msgs.sends.items():
            views = [send_view(arrays, t) for t in transfers]
            buf = self._buffer(sum(v.size for v in views), dtype)
            offset = 0
            for v in views:
                self._pack.append((v, buf[offset : offset + v.size].reshape(v.shape)))
                offset += v.size
            self.send_requests.append(comm.send_init(self._host(buf, out=True), dest, tag))
        for src, transfers in msgs.recvs.items():
            views = [(recv_view(xp, arrays, t), t.sign) for t in transfers]
            buf = self._buffer(sum(v.size for v, _ in views), dtype)
            offset = 0
            for v, sign in views:
                self._unpack.append((buf[offset : offset + v.size].reshape(v.shape), v, sign))
                offset += v.size
            self.recv_requests.append(comm.recv_init(self._host(buf, out=False), src, tag))

    def _buffer(self, n: int, dtype: Any) -> Any:
        return self.xp.empty(max(n, 1), dtype=dtype)

    def _host(self, buf: Any, out: bool) -> Any:
        """The buffer MPI sees: the buffer itself on CPU, a pinned host mirror for device data."""
        if self.xp is np:
            return buf
        import cupyx

        host = cupyx.empty_pinned(buf.shape, dtype=buf.dtype)
        (self._stage_out if out else self._stage_in).append((buf, host))
        return host

    def pack(self) -> None:
        copyto = self.xp.copyto
        for src, dst in self._pack:
            copyto(dst, src)
        for dev, host in self._stage_out:
            dev.get(out=host)
        if self._stage_out:
            self.xp.cuda.get_current_stream().synchronize()

    def unpack(self) -> None:
        for dev, host in self._stage_in:
            dev.set(host)
        copyto, negative = self.xp.copyto, self.xp.negative
        for buf, dst, sign in self._unpack:
            if sign > 0:
                copyto(dst, buf)
            else:
                negative(buf, out=dst)


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
        for view in self._negate:
            np.negative(view, out=view)
