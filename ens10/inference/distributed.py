"""Lat-lon domain decomposition of an exported program over MPI ranks (``mapping.cluster``).

Ranks form a ``(P_lat, P_lon)`` grid over the field (i = latitude, j = longitude). Halos are
exchanged with :class:`mapping.cluster.HaloExchange`, periodic in longitude only; beyond the
poles the halo replicates the pole row (as LeNet's ``pad_sphere``). Latitude need not divide
evenly (ENS-10's 361 rows are prime-ish): the field is extended beyond the north pole by copies
of the pole row up to a multiple of ``P_lat``; those rows are computed and discarded, and they
feed exactly the replicated values a pole halo would hold, so results are bitwise those of one
process. Every rank reads only its own block of the input (lazily) and rank 0 gathers and
writes the outputs.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np

from ens10.inference.errors import ExportError
from ens10.inference.exporter import ExportedModel
from ens10.inference.runner import InferenceProgram
from mapping.cluster import Comm, HaloExchange, ScalarHalo, TilePartitioner
from stencils import StencilFactory

log = logging.getLogger(__name__)


class LonPeriodicPartitioner(TilePartitioner):
    """A single tile, periodic along j (longitude) and closed along i (latitude)."""

    def _tile_link(self, tile: int, edge: tuple[int, int]) -> tuple[int, int] | None:
        return (tile, 0) if edge[0] == 0 else None


def check_layout(layout: tuple[int, int] | None, ranks: int | None = None) -> None:
    """The one check of a ``--layout`` P_LATxP_LON for every path that takes one (the
    postprocess configuration, :class:`DistributedInference`): both factors whole numbers >= 1
    and, when ``ranks`` is known, their product the number of MPI ranks."""
    if layout is None:
        return
    p_lat, p_lon = layout
    if min(p_lat, p_lon) < 1:
        raise ExportError(
            f"--layout {p_lat}x{p_lon}: both factors must be whole numbers >= 1 (ranks along "
            "latitude x longitude), e.g. 1x4"
        )
    if ranks is not None and p_lat * p_lon != ranks:
        raise ExportError(
            f"--layout {p_lat}x{p_lon} needs {p_lat * p_lon} MPI ranks, but the job has {ranks}: "
            f"start it with mpiexec -n {p_lat * p_lon}, or give a layout of {ranks} ranks"
        )


def default_layout(size: int, nlon: int) -> tuple[int, int]:
    """(P_lat, P_lon): as square as possible, with P_lon dividing the number of longitudes."""
    best = None
    for p_lat in range(1, size + 1):
        if size % p_lat or nlon % (size // p_lat):
            continue
        score = abs(math.log(p_lat / (size // p_lat)))
        if best is None or score < best[0]:
            best = (score, (p_lat, size // p_lat))
    if best is None:
        raise ExportError(f"{size} ranks cannot split {nlon} longitudes evenly: choose another -n")
    return best[1]


class DistributedInference:
    """``__call__(read)`` runs one time step on this rank's block; rank 0 returns the global
    (mu, sigma), the others None. ``read(lat_slice, lon_slice)`` returns the forecast fields
    (field, lat, lon) of a block of the global field."""

    def __init__(self, exported: ExportedModel, comm: Comm, backend: str | StencilFactory = "numpy",
                 layout: tuple[int, int] | None = None) -> None:
        nlat, nlon = exported.shape
        self.exported, self.comm = exported, comm
        self.layout = layout or default_layout(comm.size, nlon)
        check_layout(self.layout, comm.size)
        p_lat, p_lon = self.layout
        if nlon % p_lon:
            raise ExportError(f"layout {p_lat}x{p_lon}: {nlon} longitudes do not split into {p_lon}")
        if p_lat > nlat:
            raise ExportError(f"layout {p_lat}x{p_lon}: more latitude ranks than the {nlat} rows")
        self.nlat, self.nlon = nlat, nlon
        self.ny = -(-nlat // p_lat)  # rows per rank (the last block may reach past the pole)
        self.nx = nlon // p_lon
        self.h = exported.halo
        self.partitioner = LonPeriodicPartitioner(self.layout)
        if comm.rank != 0:  # rank 0 compiles into the stencil cache first, the others load
            comm.idle_barrier()
        self.runner = InferenceProgram(exported, backend)
        if comm.rank == 0:
            comm.idle_barrier()
        bi, bj = self.partitioner.subtile_index(comm.rank)
        self.i0, self.j0 = bi * self.ny, bj * self.nx
        h = self.h
        self.names = list(exported.field_inputs)
        self.local = {n: np.zeros((self.ny + 2 * h, self.nx + 2 * h, 1)) for n in self.names}
        self.exchange = (
            HaloExchange(comm, self.partitioner, [ScalarHalo(self.local[n], h) for n in self.names],
                         packing="slicing")
            if h > 0 else None
        )
        for name, field in exported.static.items():
            self._fill_interior(name, self._rows(field))

    def _rows(self, field: np.ndarray) -> np.ndarray:
        """This rank's rows of a global (lat, lon[, ...]) array, extended past the north pole."""
        rows = np.clip(np.arange(self.i0, self.i0 + self.ny), 0, self.nlat - 1)
        return field[rows][:, self.j0:self.j0 + self.nx]

    def _fill_interior(self, name: str, block: np.ndarray) -> None:
        h = self.h
        self.local[name][h:h + self.ny, h:h + self.nx, 0] = block

    def _fill_poles(self) -> None:
        """Replicate the pole rows into the halo beyond the poles (after the exchange)."""
        h, p_lat = self.h, self.layout[0]
        bi, _ = self.partitioner.subtile_index(self.comm.rank)
        for arr in self.local.values():
            if bi == 0:
                arr[:h] = arr[h:h + 1]
            if bi == p_lat - 1:
                arr[h + self.ny:] = arr[h + self.ny - 1:h + self.ny]

    def __call__(self, read: Callable[[slice, slice], np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
        lat_hi = min(self.i0 + self.ny, self.nlat)
        block = read(slice(min(self.i0, self.nlat - 1), lat_hi), slice(self.j0, self.j0 + self.nx))
        if block.shape[1] < self.ny:  # rows past the north pole: copies of the pole row
            pad = self.ny - block.shape[1]
            block = np.concatenate([block, np.repeat(block[:, -1:], pad, axis=1)], axis=1)
        forecast = self.exported.forecast_inputs
        for f, name in enumerate(forecast):
            self._fill_interior(name, block[f])
        if self.exchange is not None:
            self.exchange.update()
            self._fill_poles()
        mu, sigma = self.runner({n: a[:, :, 0] for n, a in self.local.items()}, padded=True)
        return self._gather(np.stack([mu, sigma]))

    def _gather(self, part: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        comm = self.comm
        tag = 7919
        part = np.ascontiguousarray(part)
        if comm.rank != 0:
            req = comm.isend(part, 0, tag)
            req.wait()
            return None
        out = np.empty((2, self.ny * self.layout[0], self.nlon))
        for r in range(comm.size):
            bi, bj = self.partitioner.subtile_index(r)
            if r == 0:
                buf = part
            else:
                buf = np.empty_like(part)
                comm.irecv(buf, r, tag).wait()
            out[:, bi * self.ny:(bi + 1) * self.ny, bj * self.nx:(bj + 1) * self.nx] = buf
        return out[0, : self.nlat], out[1, : self.nlat]
