"""Communicator: the partitioner and the comms of the ranks this process runs, with gather,
scatter, broadcast, allreduce and halo updaters over all ranks.

A run is either every rank of the partitioner in this process (one ``LocalComm.create`` group:
:meth:`Communicator.in_process`) or one rank per MPI process (:meth:`Communicator.over_mpi`).
Model code loops over :attr:`Communicator.ranks`. The collectives take one value per rank of
this process, as a mapping ``{rank: value}``, so the same call serves both kinds of run: with
all ranks here they are computed from the mapping, under MPI with MPI collectives, and both give
bitwise the same results.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mapping.cluster.comm import Comm, LocalComm
from mapping.cluster.errors import HaloError
from mapping.cluster.exchange import HaloExchange
from mapping.cluster.in_process import ExchangeGroup
from mapping.cluster.partitioner import TilePartitioner, location_stagger
from mapping.cluster.specs import ScalarHalo, VectorHalo

log = logging.getLogger(__name__)

#: the reductions :meth:`Communicator.allreduce` offers
REDUCTIONS = ("max", "min", "sum")

#: one rank's block: (shape, dtype string), what every process learns about every block
_BlockInfo = tuple[tuple[int, ...], str]


class Communicator:
    """The ranks of a :class:`TilePartitioner` (or :class:`CubedSpherePartitioner`) that this
    process runs, and the collectives over all ranks.

    ``comms``: one :class:`MPIComm` (this process is one rank) or every :class:`LocalComm` of one
    ``LocalComm.create(partitioner.total_ranks)`` group (all ranks run here), in any order.
    The root is rank 0; the root process is the one that runs it.
    """

    def __init__(self, partitioner: TilePartitioner, comms: Sequence[Comm]) -> None:
        comms = list(comms)
        total = partitioner.total_ranks
        if not comms:
            raise HaloError(
                "Communicator needs the comm of every rank this process runs, got none; use "
                "Communicator.in_process(partitioner) or Communicator.over_mpi(partitioner)"
            )
        for c in comms:
            if c.size != total:
                raise HaloError(
                    f"rank {c.rank}: its {type(c).__name__} has {c.size} ranks but {partitioner!r} "
                    f"needs {total}: launch with mpiexec -n {total}, build the comms with "
                    f"LocalComm.create({total}), or change the layout"
                )
        if len(comms) > 1 or isinstance(comms[0], LocalComm):
            ranks = sorted(c.rank for c in comms)
            local = all(isinstance(c, LocalComm) for c in comms)
            if not local or ranks != list(range(total)) or not all(
                comms[0].same_group(c) for c in comms  # type: ignore[attr-defined]
            ):
                kinds = ", ".join(sorted({type(c).__name__ for c in comms}))
                raise HaloError(
                    f"Communicator runs one rank per process (one MPIComm) or all {total} ranks "
                    f"in this process (every LocalComm of one LocalComm.create({total}) group), "
                    f"got {len(comms)} comms ({kinds}) for ranks {ranks}; use "
                    f"Communicator.in_process(partitioner) or Communicator.over_mpi(partitioner)"
                )
        self._partitioner = partitioner
        self._comms = {c.rank: c for c in sorted(comms, key=lambda c: c.rank)}
        self._ranks = tuple(self._comms)
        log.debug("communicator for %r: ranks %s in this process", partitioner, self._ranks)

    @classmethod
    def in_process(cls, partitioner: TilePartitioner) -> Communicator:
        """All ranks of ``partitioner`` in this process (a new ``LocalComm.create`` group)."""
        return cls(partitioner, LocalComm.create(partitioner.total_ranks))

    @classmethod
    def over_mpi(cls, partitioner: TilePartitioner, comm: Any = None) -> Communicator:
        """This MPI process as one rank. ``comm``: an :class:`MPIComm`, an mpi4py communicator
        (duplicated) or None for ``COMM_WORLD``; it must have ``partitioner.total_ranks`` ranks."""
        from mapping.cluster.mpi_comm import MPIComm

        return cls(partitioner, [comm if isinstance(comm, MPIComm) else MPIComm(comm)])

    # --- who runs where ---------------------------------------------------------------------
    @property
    def partitioner(self) -> TilePartitioner:
        return self._partitioner

    @property
    def ranks(self) -> tuple[int, ...]:
        """The ranks this process runs, ascending."""
        return self._ranks

    @property
    def size(self) -> int:
        """Ranks in the whole run (``partitioner.total_ranks``)."""
        return self._partitioner.total_ranks

    @property
    def holds_all_ranks(self) -> bool:
        """Whether every rank runs in this process (collectives need no messages)."""
        return len(self._ranks) == self.size

    @property
    def is_root_process(self) -> bool:
        """Whether this process runs rank 0 (where :meth:`gather_tiles` delivers)."""
        return 0 in self._comms

    def comm_of(self, rank: int) -> Comm:
        """The comm of ``rank``, one of the ranks this process runs."""
        try:
            return self._comms[rank]
        except KeyError:
            raise HaloError(
                f"rank {rank} does not run in this process, which runs ranks {list(self._ranks)}"
            ) from None

    def barrier(self) -> None:
        """Synchronise the processes of the run (nothing to do when all ranks are here)."""
        if not self.holds_all_ranks:
            self._only_comm().barrier()

    # --- collectives ------------------------------------------------------------------------
    def gather_tiles(
        self,
        per_rank: Mapping[int, np.ndarray],
        nx_tile: int,
        ny_tile: int | None = None,
        *,
        location: str = "center",
    ) -> np.ndarray | None:
        """The global array ``(n_tiles, nx_tile + sx, ny_tile + sy, ...)`` on the root process,
        None on the others.

        ``per_rank[rank]``: the rank's interior (no halo) ``[i, j, ...]`` at ``location``, shape
        ``(nx + sx, ny + sy, ...)`` with ``nx, ny`` its cells and ``(sx, sy)`` the location's
        stagger (``corner``: both boundary points); trailing dimensions and dtype alike on
        every rank. Points two ranks share come from the rank that owns them (the one with the
        point on its west/south boundary), which is the value an exchange with
        ``sync_edges`` gives both. Collective.
        """
        ny_tile = nx_tile if ny_tile is None else ny_tile
        sx, sy = location_stagger(location)
        self._check_ranks(per_rank, "gather_tiles")
        mine = {rank: np.asarray(per_rank[rank]) for rank in self._ranks}
        if self.holds_all_ranks:
            info: list[_BlockInfo] = [(a.shape, a.dtype.str) for a in mine.values()]
        else:
            (a,) = mine.values()
            info = self._only_comm().allgather((a.shape, a.dtype.str))
        places = self._places(nx_tile, ny_tile, location)
        trailing, dtype = _check_blocks(info, places, f"gather_tiles({location!r})", nx_tile, ny_tile)
        if self.holds_all_ranks:
            blocks = list(mine.values())
        else:
            counts = [math.prod(shape) for shape, _ in info]
            flat = self._only_comm().gatherv(np.ascontiguousarray(a).reshape(-1), counts)
            if flat is None:
                return None
            pieces = np.split(flat, np.cumsum(counts)[:-1])
            blocks = [p.reshape(shape) for p, (shape, _) in zip(pieces, info)]
        out = np.empty((self._partitioner.n_tiles, nx_tile + sx, ny_tile + sy, *trailing), dtype)
        for (tile, si, sj), block in zip(places, blocks):  # rank order: owners write last
            out[tile, si, sj] = block
        return out

    def scatter_tiles(
        self, global_array: np.ndarray | None, *, location: str = "center"
    ) -> dict[int, np.ndarray]:
        """Each rank's interior block of ``global_array`` (the inverse of :meth:`gather_tiles`).

        ``global_array``: ``(n_tiles, nx_tile + sx, ny_tile + sy, ...)`` on the root process;
        ignored on the others (pass None). Returns ``{rank: block}`` for the ranks of this
        process, each block a new C-contiguous array ``(nx + sx, ny + sy, ...)``. Collective.
        """
        sx, sy = location_stagger(location)
        what = f"scatter_tiles({location!r})"
        g = np.asarray(global_array) if self.is_root_process else None
        header: tuple[Any, ...] | None = None
        if g is not None:
            problem = self._check_global(global_array, location, what)
            header = (problem,) if problem else (None, g.shape, g.dtype.str)
        if not self.holds_all_ranks:
            comm = self._only_comm()
            header = comm.bcast(header)
        assert header is not None
        if header[0]:
            raise HaloError(header[0])
        shape, dtype = header[1], np.dtype(header[2])
        places = self._places(shape[1] - sx, shape[2] - sy, location)
        if self.holds_all_ranks:
            assert g is not None
            return {rank: np.array(g[places[rank]], order="C") for rank in self._ranks}
        (rank,) = self._ranks
        block_shapes = [(si.stop - si.start, sj.stop - sj.start, *shape[3:]) for _, si, sj in places]
        recv = np.empty(block_shapes[rank], dtype)
        send = None
        if g is not None:
            send = np.concatenate([np.ascontiguousarray(g[p]).reshape(-1) for p in places])
        comm.scatterv(send, [math.prod(s) for s in block_shapes], recv.reshape(-1))
        return {rank: recv}

    def broadcast(self, value: Any) -> Any:
        """The root process's ``value`` (any picklable object) on every process; the argument
        is ignored elsewhere. With all ranks here: ``value`` itself. Collective."""
        if self.holds_all_ranks:
            return value
        return self._only_comm().bcast(value)

    def allreduce(self, per_rank: Mapping[int, float | np.ndarray], op: str) -> Any:
        """``op`` (``"max"``, ``"min"`` or ``"sum"``) over the values of all ranks, elementwise
        for arrays (one shape on every rank); the same result on every process: a Python
        number for scalars, an array otherwise.

        Every process reduces the values of all ranks itself (collected with one allgather under
        MPI), so in-process and MPI runs agree bit for bit. A floating-point ``"sum"`` is
        correctly rounded (``math.fsum`` of the per-rank values), hence independent of the rank
        order and of which process holds which rank; the per-rank values themselves depend on
        the decomposition. ``"max"``/``"min"`` propagate NaN. Collective.
        """
        if op not in REDUCTIONS:
            raise HaloError(f"allreduce: op={op!r}, use one of {', '.join(REDUCTIONS)}")
        self._check_ranks(per_rank, f"allreduce({op!r})")
        if self.holds_all_ranks:
            values = [per_rank[rank] for rank in self._ranks]
        else:
            values = self._only_comm().allgather(per_rank[self._ranks[0]])
        return _reduce(values, op)

    def exact_sum(self, per_rank: Mapping[int, np.ndarray]) -> float:
        """The sum of every element of every rank's array (any shapes), correctly rounded
        (``math.fsum``), the same on every process and for any decomposition of the same
        values: a global sum that does not depend on how the domain is split (FV3's
        ``g_sum(..., reproduce=.true.)``). Collective."""
        self._check_ranks(per_rank, "exact_sum")
        mine = [np.asarray(per_rank[rank], dtype=np.float64).reshape(-1) for rank in self._ranks]
        if self.holds_all_ranks:
            values = mine
        else:
            values = self._only_comm().allgather(mine[0])
        return _correctly_rounded_sum(np.concatenate(values).tolist())

    # --- halo exchange ----------------------------------------------------------------------
    def halo_updater(
        self,
        specs_per_rank: Mapping[int, Sequence[ScalarHalo | VectorHalo]],
        packing: str = "auto",
        *,
        in_process: bool = True,
    ) -> ExchangeGroup:
        """A halo updater for the fields of every rank of this process, built once.

        ``specs_per_rank[rank]``: the rank's list of :class:`ScalarHalo` / :class:`VectorHalo`
        (the same fields, in the same order, on every rank). Returns an :class:`ExchangeGroup`
        (``start()``, ``wait()``, ``update()``) over one :class:`HaloExchange` per rank, which
        with all ranks here runs as one :class:`InProcessExchange` (``in_process=False``: through
        messages). ``packing`` as for :class:`HaloExchange`. Collective.
        """
        self._check_ranks(specs_per_rank, "halo_updater")
        exchanges = []
        for rank in self._ranks:
            specs = specs_per_rank[rank]
            if isinstance(specs, ScalarHalo | VectorHalo):
                raise HaloError(
                    f"halo_updater: rank {rank} passed one {type(specs).__name__}; pass a list "
                    f"of specs per rank, e.g. {{{rank}: [{type(specs).__name__}(...)]}}"
                )
            try:
                exchanges.append(
                    HaloExchange(self._comms[rank], self._partitioner, specs, packing=packing)
                )
            except HaloError as err:
                raise type(err)(f"halo_updater: rank {rank}: {err}") from err
        return ExchangeGroup(exchanges, in_process=in_process)

    # --- helpers ----------------------------------------------------------------------------
    def _only_comm(self) -> Comm:
        (comm,) = self._comms.values()
        return comm

    def _check_ranks(self, per_rank: Mapping[int, Any], what: str) -> None:
        given = set(per_rank)
        if given != set(self._ranks):
            missing = sorted(set(self._ranks) - given)
            extra = sorted(given - set(self._ranks), key=repr)
            raise HaloError(
                f"{what}: expects one value per rank of this process, {{rank: value}} for ranks "
                f"{list(self._ranks)}; missing ranks {missing}, ranks not run here {extra}"
            )

    def _places(
        self, nx_tile: int, ny_tile: int, location: str
    ) -> list[tuple[int, slice, slice]]:
        """Per rank (all of them, in rank order): its tile and interior slices there."""
        part = self._partitioner
        return [
            (part.tile_index(rank), *part.global_slices(rank, nx_tile, ny_tile, location))
            for rank in range(part.total_ranks)
        ]

    def _check_global(self, global_array: Any, location: str, what: str) -> str | None:
        """Why ``global_array`` cannot be scattered, or None."""
        n_tiles = self._partitioner.n_tiles
        sx, sy = location_stagger(location)
        expect = f"({n_tiles}, nx_tile{' + 1' * sx}, ny_tile{' + 1' * sy}[, ...])"
        if global_array is None:
            return f"{what}: the root process must pass the global array {expect}, got None"
        g = np.asarray(global_array)
        if g.ndim < 3 or g.shape[0] != n_tiles:
            return f"{what}: expected the global array {expect}, got shape {g.shape}"
        try:
            self._partitioner.subdomain_extent(0, g.shape[1] - sx, g.shape[2] - sy)
        except HaloError as err:
            return f"{what}: global array of shape {g.shape}: {err}"
        return None


def _check_blocks(
    info: Sequence[_BlockInfo],
    places: Sequence[tuple[int, slice, slice]],
    what: str,
    nx_tile: int,
    ny_tile: int,
) -> tuple[tuple[int, ...], np.dtype]:
    """(trailing dimensions, dtype) that all ranks' blocks share; a HaloError naming the first
    rank whose block does not fit (the same on every process: all see all ``info``)."""
    (shape0, dtype0) = info[0]
    trailing = tuple(shape0[2:])
    for rank, ((shape, dtype), (_, si, sj)) in enumerate(zip(info, places)):
        want = (si.stop - si.start, sj.stop - sj.start)
        if tuple(shape[:2]) != want:
            raise HaloError(
                f"{what}: rank {rank} passed shape {tuple(shape)}, but its interior on a "
                f"{nx_tile}x{ny_tile} tile is {want} [i, j] (plus trailing dimensions): pass "
                f"the interior without halo points, e.g. field[h:-h, h:-h]"
            )
        if tuple(shape[2:]) != trailing or dtype != dtype0:
            raise HaloError(
                f"{what}: rank {rank} passed shape {tuple(shape)} {np.dtype(dtype)}, rank 0 "
                f"{tuple(shape0)} {np.dtype(dtype0)}: all ranks need the same trailing "
                f"dimensions and dtype"
            )
    return trailing, np.dtype(dtype0)


def _reduce(values: Sequence[Any], op: str) -> Any:
    """``op`` over ``values`` (one per rank, in rank order), elementwise."""
    arrays = [np.asarray(v) for v in values]
    for rank, a in enumerate(arrays):
        if a.shape != arrays[0].shape:
            raise HaloError(
                f"allreduce({op!r}): rank {rank} passed shape {a.shape}, rank 0 "
                f"{arrays[0].shape}: all ranks need values of one shape"
            )
    stacked = np.stack(arrays)
    if op == "max":
        out = np.max(stacked, axis=0)
    elif op == "min":
        out = np.min(stacked, axis=0)
    elif stacked.dtype.kind == "f":
        columns = stacked.reshape(len(arrays), -1).T.tolist()
        out = np.array([_correctly_rounded_sum(c) for c in columns], dtype=np.float64)
        out = out.reshape(stacked.shape[1:]).astype(stacked.dtype)
    else:
        out = np.sum(stacked, axis=0)
    return out.item() if out.ndim == 0 else out


def _correctly_rounded_sum(values: list[float]) -> float:
    """``math.fsum``; where that fails (inf - inf, overflow) the IEEE sum (inf or nan)."""
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.sum(values))
