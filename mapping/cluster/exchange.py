"""HaloExchange: built once for a set of fields, then ``start()``/``wait()`` every step."""

from __future__ import annotations

import logging
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mapping.cluster.arrays import array_module, as_3d
from mapping.cluster.comm import Comm
from mapping.cluster.corners import CornerFill, VectorCornerFill
from mapping.cluster.errors import HaloError
from mapping.cluster.geometry import LOCATIONS
from mapping.cluster.packing import DatatypePacker, Messages, SharedMemoryPacker, SlicePacker
from mapping.cluster.partitioner import TilePartitioner
from mapping.cluster.plan import ComponentGeometry, Transfer, receive_plan
from mapping.cluster.specs import VECTOR_GRIDS, ScalarHalo, VectorHalo

log = logging.getLogger(__name__)

PHASES = ("pack", "post", "wait", "unpack")
PACKINGS = ("auto", "slicing", "datatypes", "shared")


class HaloExchange:
    """Fills the halos of ``specs`` (ScalarHalo / VectorHalo) on this rank from its neighbours.

    Construction is collective (every rank builds the same exchange, in the same order). All
    fields travel in one message per neighbour; buffers and persistent requests are made once.
    ``packing``: ``"slicing"``, ``"datatypes"``, ``"shared"`` (the last two: MPIComm with NumPy
    arrays; shared: all ranks on one node) or ``"auto"``, which on MPI times each once at
    construction (the exchange runs a few times) and keeps the fastest; ``packing_choice``
    tells which won and ``packing_times`` the measured seconds.
    """

    def __init__(
        self,
        comm: Comm,
        partitioner: TilePartitioner,
        specs: Sequence[ScalarHalo | VectorHalo],
        packing: str = "auto",
        measure_repeats: int = 10,
    ) -> None:
        if comm.size != partitioner.total_ranks:
            raise HaloError(
                f"communicator has {comm.size} ranks but {partitioner!r} needs "
                f"{partitioner.total_ranks}: launch with mpiexec -n {partitioner.total_ranks} "
                f"or change the layout"
            )
        if packing not in PACKINGS:
            raise HaloError(f"packing={packing!r}: use one of {', '.join(PACKINGS)}")
        if not specs:
            raise HaloError("HaloExchange needs at least one ScalarHalo or VectorHalo")
        self.comm, self.partitioner, self.rank = comm, partitioner, comm.rank
        self.timers: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self.n_exchanges = 0
        self._started = False
        arrays, geoms, fills = self._components(specs)
        self._arrays = arrays
        self.xp = array_module(arrays[0])
        self.local_cells = self._check_shapes(arrays, geoms)
        self._messages = self._build_messages(geoms)
        self._corner_fills = [
            cf
            for cf in (
                VectorCornerFill(partitioner, self.rank, arrays[ci], arrays[ci + 1], direction,
                                 (geoms[ci].stagger, geoms[ci + 1].stagger), geoms[ci].n_halo,
                                 geoms[ci].depth, self.local_cells)
                if direction in VECTOR_GRIDS
                else CornerFill(partitioner, self.rank, arrays[ci], geoms[ci].stagger,
                                geoms[ci].n_halo, geoms[ci].depth, self.local_cells, direction)
                for ci, direction in fills
            )
            if cf.active
        ]
        tag = comm.next_tag()
        self.packing_times: dict[str, float] = {}
        use_datatypes = comm.supports_datatypes and self.xp.__name__ == "numpy"
        if packing in ("datatypes", "shared") and not use_datatypes:
            raise HaloError(
                f"packing={packing!r} needs an MPIComm and NumPy (CPU) arrays; use 'slicing'"
            )
        segments = None
        if use_datatypes and packing in ("auto", "shared"):
            n_items, offsets, sizes = SharedMemoryPacker.layout(self._messages, arrays)
            segments = comm.shared_segments(n_items, arrays[0].dtype, offsets, sizes)  # type: ignore[attr-defined]
            if segments is None and packing == "shared":
                raise HaloError("packing='shared' needs all ranks on one node; use 'slicing'")
        if packing == "auto" and use_datatypes:
            self._packer = self._measure(tag, measure_repeats, segments)
        elif packing == "datatypes":
            self._packer = DatatypePacker(comm, arrays, self._messages, tag, self.xp)
        elif packing == "shared":
            self._packer = SharedMemoryPacker(comm, arrays, self._messages, tag, self.xp, segments)
        else:
            self._packer = SlicePacker(comm, arrays, self._messages, tag, self.xp)
        self.packing_choice = self._packer.name

    # --- construction -----------------------------------------------------------------------
    @staticmethod
    def _components(
        specs: Sequence[ScalarHalo | VectorHalo],
    ) -> tuple[list[Any], list[ComponentGeometry], list[tuple[int, str]]]:
        arrays: list[Any] = []
        geoms: list[ComponentGeometry] = []
        fills: list[tuple[int, str]] = []
        for fi, spec in enumerate(specs):
            h = int(spec.n_halo)
            if h < 0:
                raise HaloError(f"field {fi}: n_halo must be >= 0, got {spec.n_halo}")
            depth = h if spec.depth is None else int(spec.depth)
            if not 0 <= depth <= h:
                raise HaloError(
                    f"field {fi}: halo depth {spec.depth} is deeper than the allocated halo "
                    f"n_halo={h}; pass depth <= {h} or allocate a wider halo"
                )
            if isinstance(spec, ScalarHalo):
                if spec.location not in ("center", "corner"):
                    raise HaloError(
                        f"field {fi}: ScalarHalo location {spec.location!r} is not supported; "
                        f"use 'center' or 'corner', or a VectorHalo for staggered (u, v) pairs"
                    )
                if spec.corner_fill not in (False, True, "x", "y"):
                    raise HaloError(
                        f"field {fi}: corner_fill must be False, True, 'x' or 'y', got "
                        f"{spec.corner_fill!r}"
                    )
                if spec.corner_fill:
                    fills.append((len(arrays), "x" if spec.corner_fill is True else spec.corner_fill))
                arrays.append(as_3d(spec.data))
                geoms.append(
                    ComponentGeometry(f"field {fi}", LOCATIONS[spec.location], h, depth,
                                      spec.sync_edges)
                )
            elif isinstance(spec, VectorHalo):
                if spec.grid not in VECTOR_GRIDS:
                    raise HaloError(f"field {fi}: grid {spec.grid!r}, use 'A', 'C' or 'D'")
                base = len(arrays)
                if spec.corner_fill not in (False, True):
                    raise HaloError(
                        f"field {fi} ({spec.grid}-grid vector): corner_fill must be True or "
                        f"False, got {spec.corner_fill!r}; 'x'/'y' choose the side for scalars "
                        f"only (a vector pair's sides are fixed by its grid, as in FV3)"
                    )
                if spec.corner_fill:
                    fills.append((base, spec.grid))
                for c, (data, stagger) in enumerate(zip((spec.u, spec.v), VECTOR_GRIDS[spec.grid])):
                    arrays.append(as_3d(data))
                    geoms.append(
                        ComponentGeometry(f"field {fi} ({'uv'[c]}, {spec.grid}-grid)", stagger, h,
                                          depth, spec.sync_edges, vector=c, partner=base + 1 - c)
                    )
            else:
                raise HaloError(
                    f"field {fi}: expected ScalarHalo or VectorHalo, got {type(spec).__name__}"
                )
        return arrays, geoms, fills

    def _check_shapes(self, arrays: list[Any], geoms: list[ComponentGeometry]) -> tuple[int, int]:
        first = None
        for a, g in zip(arrays, geoms):
            if a.ndim != 3:
                raise HaloError(f"{g.name}: expected a 2-D or 3-D array [i, j(, k)], got {a.ndim}-D")
            if array_module(a) is not self.xp:
                raise HaloError(f"{g.name}: mixes NumPy and CuPy arrays in one exchange")
            sx, sy = g.stagger
            nx, ny = a.shape[0] - 2 * g.n_halo - sx, a.shape[1] - 2 * g.n_halo - sy
            key = (nx, ny, a.dtype)
            if nx < 1 or ny < 1:
                raise HaloError(
                    f"{g.name}: shape {a.shape} leaves no interior for n_halo={g.n_halo} at "
                    f"stagger {g.stagger}"
                )
            if first is None:
                first = (g.name, a.shape, key)
            elif key != first[2]:
                raise HaloError(
                    f"{g.name}: shape {a.shape} / dtype {a.dtype} means a {nx}x{ny} {a.dtype} "
                    f"compute domain, but {first[0]} (shape {first[1]}) means "
                    f"{first[2][0]}x{first[2][1]} {first[2][2]}: all fields of one exchange need "
                    f"the same compute domain and dtype (levels may differ)"
                )
        assert first is not None
        return first[2][0], first[2][1]

    def _build_messages(self, geoms: list[ComponentGeometry]) -> Messages:
        part, rank = self.partitioner, self.rank
        part.subdomain_extent(rank, self.local_cells[0] * part.layout[0],
                              self.local_cells[1] * part.layout[1])
        recvs: dict[int, list[Transfer]] = defaultdict(list)
        for t in receive_plan(part, rank, geoms, self.local_cells):
            recvs[t.source].append(t)
        sends: dict[int, list[Transfer]] = defaultdict(list)
        for dest in sorted(recvs):  # neighbours are mutual: who sends to me, receives from me
            for t in receive_plan(part, dest, geoms, self.local_cells):
                if t.source == rank:
                    sends[dest].append(t)
        return Messages(sends=dict(sends), recvs=dict(recvs))

    def _measure(self, tag: int, repeats: int, segments: Any) -> Any:
        candidates: list[Any] = [
            SlicePacker(self.comm, self._arrays, self._messages, tag, self.xp),
            DatatypePacker(self.comm, self._arrays, self._messages, tag, self.xp),
        ]
        if segments is not None:
            candidates.append(
                SharedMemoryPacker(self.comm, self._arrays, self._messages, tag, self.xp, segments)
            )
        samples: dict[str, list[float]] = {p.name: [] for p in candidates}
        for i in range(repeats + 1):  # interleaved, so drift on a shared machine hits all alike
            for packer in candidates:
                self._packer = packer
                self.comm.barrier()
                t0 = time.perf_counter()
                self.update()
                if i:  # the first round warms up
                    samples[packer.name].append(time.perf_counter() - t0)
        for name, values in samples.items():
            self.packing_times[name] = self.comm.allreduce_max(statistics.median(values))
        self.reset_timers()
        best = min(candidates, key=lambda p: self.packing_times[p.name])
        log.debug("halo packing times %s -> %s", self.packing_times, best.name)
        return best

    # --- running ----------------------------------------------------------------------------
    @property
    def neighbours(self) -> list[int]:
        """Ranks this rank exchanges messages with."""
        return sorted(set(self._messages.sends) | set(self._messages.recvs))

    def message_bytes(self) -> dict[int, int]:
        """Bytes this rank sends to each neighbour per exchange."""
        itemsize = self._arrays[0].dtype.itemsize
        return {
            dest: itemsize * sum(
                (t.send[0].stop - t.send[0].start)
                * (t.send[1].stop - t.send[1].start)
                * self._arrays[t.source_component].shape[2]
                for t in ts
            )
            for dest, ts in self._messages.sends.items()
        }

    def receive_bytes(self) -> dict[int, int]:
        """Bytes this rank receives from each neighbour per exchange."""
        itemsize = self._arrays[0].dtype.itemsize
        return {
            src: itemsize * sum(self._arrays[t.component][t.recv].size for t in ts)
            for src, ts in self._messages.recvs.items()
        }

    def start(self) -> None:
        """Pack, post receives and sends. Call :meth:`wait` before the next start.

        Packing comes first: with datatypes, snapshots of points that are also received must be
        taken before any receive can land. (Packing per neighbour and posting each send at once,
        or unpacking each message on arrival, measured slower with ranks oversubscribing cores.)
        """
        if self._started:
            raise HaloError(
                f"rank {self.rank}: start() called twice without wait(); every start() needs "
                f"its wait() before the fields may be exchanged again"
            )
        self._started = True
        p, comm, timers = self._packer, self.comm, self.timers
        t0 = time.perf_counter()
        p.pack()
        t1 = time.perf_counter()
        comm.startall(p.recv_requests)
        comm.startall(p.send_requests)
        timers["pack"] += t1 - t0
        timers["post"] += time.perf_counter() - t1

    def wait(self) -> None:
        """Complete the exchange started by :meth:`start`: receive, unpack, corner fill."""
        if not self._started:
            raise HaloError(f"rank {self.rank}: wait() without a matching start()")
        p, comm, timers = self._packer, self.comm, self.timers
        t0 = time.perf_counter()
        comm.waitall(p.recv_requests)
        t1 = time.perf_counter()
        p.unpack()
        for fill in self._corner_fills:
            fill()
        t2 = time.perf_counter()
        comm.waitall(p.send_requests)
        p.finish()
        timers["wait"] += (t1 - t0) + (time.perf_counter() - t2)
        timers["unpack"] += t2 - t1
        self._started = False
        self.n_exchanges += 1

    def update(self) -> None:
        """Blocking exchange: ``start()`` then ``wait()``."""
        self.start()
        self.wait()

    def reset_timers(self) -> None:
        self.timers = dict.fromkeys(PHASES, 0.0)
        self.n_exchanges = 0
