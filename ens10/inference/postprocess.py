"""Apply an exported baseline to ENS-10 forecasts and write the corrected Gaussian as CF netCDF.

Inputs are read lazily, ``chunk`` times at a time (a tqdm bar counts times); the output file is
created first with its CF metadata (xarray), filled time by time, and renamed into place only
when complete; a write that fails moves it to a rescue folder (:mod:`ens10.inference.streamed_output`). Under ``mpiexec`` with more than one rank the field is decomposed over the ranks
(:mod:`ens10.inference.distributed`); rank 0 writes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import dask.array as dsa
import numpy as np
import xarray as xr
from tqdm import tqdm

from ens10 import schema
from ens10.inference.errors import ExportError
from ens10.inference.exporter import ExportedModel, export_model, load_model, required_variables
from ens10.inference.forecasts import Forecasts, detect_layout, open_forecasts
from ens10.inference.runner import InferenceProgram
from ens10.inference.stacked import loops_supported
from ens10.inference.streamed_output import StreamedOutput
from stencils import CPU_BACKENDS, StencilFactory

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PostprocessConfig:
    """What ``stratoflow ens10 postprocess`` does."""

    model: Path
    data: Path
    out: Path
    backend: str = "numpy"
    dates: tuple[str, ...] | None = None
    years: tuple[int, int] | None = None
    chunk: int = 4
    layout: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.chunk < 1:
            raise ExportError(f"--chunk {self.chunk}: give a positive number of times per chunk")
        if self.out.suffix != ".nc":
            raise ExportError(f"--out {self.out}: the output is netCDF, name it *.nc")
        from ens10.inference.distributed import check_layout

        check_layout(self.layout, mpi_world_size())


def mpi_world_size() -> int:
    """Ranks of the MPI job this process was started in (1 outside mpiexec); reads only the
    launcher's environment, so plain runs never initialise MPI."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def _skeleton(path: Path, fc: Forecasts, exported: ExportedModel, cfg: PostprocessConfig) -> None:
    """Write the CF metadata and coordinates; data variables are filled later."""
    t = schema.target(exported.target)
    units, long_name = schema.UNITS[t.variable]
    level = f" at {t.level} hPa" if t.level is not None else ""
    shape = (len(fc.valid_time), len(fc.lat), len(fc.lon))
    empty = dsa.zeros(shape, chunks=(1, *shape[1:]), dtype=np.float64)
    attrs = {
        "mu": {"long_name": f"post-processed predictive mean of {long_name}{level}", "units": units,
               "cell_methods": "number: mean (Gaussian predictive distribution)"},
        "sigma": {"long_name": f"post-processed predictive standard deviation of {long_name}{level}",
                  "units": units, "cell_methods": "number: standard_deviation (Gaussian)"},
    }
    ds = xr.Dataset(
        {v: (("time", "lat", "lon"), empty, attrs[v]) for v in ("mu", "sigma")},
        coords={
            "time": ("time", fc.valid_time, {"long_name": "valid time (initialisation + 48 h)"}),
            "lat": ("lat", fc.lat, {"units": "degrees_north", "standard_name": "latitude"}),
            "lon": ("lon", fc.lon, {"units": "degrees_east", "standard_name": "longitude"}),
        },
        attrs={
            "title": f"ENS-10 {exported.target} post-processed by {exported.model} as a stencil program",
            "Conventions": "CF-1.8",
            "source": f"stratoflow ens10 postprocess (backend {cfg.backend}, {fc.layout} layout)",
            "model_checkpoint": str(cfg.model),
            "stencil_program": exported.program.name,
        },
    )
    enc = {v: {"dtype": "float64", "chunksizes": (1, *shape[1:]), "_FillValue": np.nan}
           for v in ("mu", "sigma")}
    ds.to_netcdf(path, encoding=enc, engine="netcdf4", compute=False)


def _check_grid(fc: Forecasts, exported: ExportedModel, cfg: PostprocessConfig) -> None:
    if fc.lat.shape != exported.lat.shape or fc.lon.shape != exported.lon.shape or not (
        np.allclose(fc.lat, exported.lat) and np.allclose(fc.lon, exported.lon)
    ):
        raise ExportError(
            f"--data {cfg.data}: grid {len(fc.lat)}x{len(fc.lon)} differs from the grid "
            f"{len(exported.lat)}x{len(exported.lon)} model {cfg.model} was trained on: use data "
            "on the training grid"
        )
    if not len(fc.valid_time):
        raise ExportError(f"--data {cfg.data}: no forecasts selected (check --dates/--years)")


def postprocess(cfg: PostprocessConfig, comm=None, rescue_folders: Sequence[Path] = ()) -> Path | None:
    """Run ``cfg``; returns the written file (None on MPI ranks other than 0). Should writing
    ``cfg.out`` fail, the result is kept in the first of ``rescue_folders`` that takes it
    (:class:`~ens10.inference.streamed_output.RescuedOutput` names it)."""
    if cfg.backend not in CPU_BACKENDS and not cfg.backend.startswith(("gt:gpu", "dace:gpu", "cuda")):
        raise ExportError(f"--backend {cfg.backend!r}: choose one of {', '.join(CPU_BACKENDS)}")
    net, ckpt = load_model(cfg.model)
    kind = schema.target(ckpt["target"]).kind
    layout = detect_layout(cfg.data, kind)
    stats = "members" if layout == "raw" else "given"
    if comm is None and mpi_world_size() > 1:
        from mapping.cluster import MPIComm

        comm = MPIComm()
    rank = comm.rank if comm is not None else 0
    fc = open_forecasts(cfg.data, ckpt["target"], required_variables(net, ckpt), dates=cfg.dates,
                        years=cfg.years)
    exported = export_model(net, ckpt, members=fc.members, stats=stats, loops=loops_supported(cfg.backend))
    _check_grid(fc, exported, cfg)
    order = [fc.names.index(n) for n in exported.forecast_inputs]
    factory = StencilFactory(cfg.backend)
    if comm is not None and comm.size > 1:
        from ens10.inference.distributed import DistributedInference

        dist = DistributedInference(exported, comm, factory, cfg.layout)

        def step(t: int) -> tuple[np.ndarray, np.ndarray] | None:
            return dist(lambda la, lo: fc.read(t, t + 1, la, lo)[0][order])
        log.info("rank %d of %d: layout %s, block %dx%d, halo %d", rank, comm.size, dist.layout,
                 dist.ny, dist.nx, exported.halo)
    else:
        runner = InferenceProgram(exported, factory)
        cache: dict[int, np.ndarray] = {}

        def step(t: int) -> tuple[np.ndarray, np.ndarray] | None:
            if t not in cache:  # read a whole chunk lazily, run it time by time
                cache.clear()
                t1 = min(t + cfg.chunk, len(fc.valid_time))
                cache.update(zip(range(t, t1), fc.read(t, t1)))
            block = cache[t]
            return runner({n: block[i] for n, i in zip(exported.forecast_inputs, order)})

    # rank 0 writes the output (through a temporary file); the other ranks only compute
    out = None
    if rank == 0:
        out = StreamedOutput(cfg.out, lambda p: _skeleton(p, fc, exported, cfg), rescue_folders)
    with out if out is not None else nullcontext():
        times = range(len(fc.valid_time))
        bar = tqdm(times, desc=f"postprocess {exported.model}/{exported.target}", unit="time",
                   disable=rank != 0, leave=False)
        for t in bar:
            res = step(t)
            if out is not None and res is not None:
                out.write(t, res[0], res[1])
        if out is None:
            return None
        out.finish()
    log.info("wrote %s (%d times, backend %s)", cfg.out, len(fc.valid_time), cfg.backend)
    return cfg.out


def parse_layout(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        a, b = (int(v) for v in text.lower().strip().split("x"))
    except ValueError:
        raise ExportError(f"--layout {text!r}: give P_LATxP_LON, e.g. 1x4") from None
    return a, b


def parse_years(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    from ens10.sample import parse_years as _parse

    return _parse(text)


def config_from_args(model: str, data: str, out: str, backend: str = "numpy",
                     dates: Sequence[str] | None = None, years: str | None = None, chunk: int = 4,
                     layout: str | None = None) -> PostprocessConfig:
    return PostprocessConfig(Path(model), Path(data), Path(out), backend,
                             tuple(dates) if dates else None, parse_years(years), chunk,
                             parse_layout(layout))
