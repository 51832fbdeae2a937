"""Small extracts of Fortran FV3 runs for CI, where ``../shared`` is absent, in two layouts.

**Single-time extract** (format 1) of a run with printed norms (``../shared/fv3-reference``):
the state after ``hours`` (depth, A-grid winds, relative vorticity), the state at t = 0, the
cell areas and centres, and the printed norms at both times, all float64 ``[tile, i, j]``, in
one compressed ``.npz`` that records its source files, their SHA-256 and the command that made
it.

    python -m fv3core.validation.extract --reference ../shared/fv3-reference/tc2_C24_d1 \\
        --hours 6 --output tests/fv3core/data/fv3_tc2_c24_6h.npz

**Run extract** (format 2) of a run made with ``benchmarks/fortran_fv3`` (no printed norms):
depth, surface height and A-grid winds at each of ``hours``, and the SWNORMS/SWINV norms at
t = 0 and every output time computed offline from the netCDF output (:func:`offline_norms`;
the t = 0 vorticity the enstrophy needs comes from the run's ``t0/`` companion, a zero-length
run whose ``atmos_t0`` file holds it), into ``OUTPUT/extract.npz`` beside a copy of the run's
exact ``input.nml`` (``OUTPUT/input.nml``); the metadata hold the sources' SHA-256, the Fortran
build and run provenance and the command.

    python -m fv3core.validation.extract --run /work/fortran_fv3/runs/tc5_C24_d1 \\
        --hours 6 24 --output tests/fv3core/data/fortran/tc5_C24_d1

**3-D run extract** (format 3) of a run of the hydrostatic core (``npz`` > 1; the
Jablonowski-Williamson runs of ``benchmarks/fortran_fv3/jw_cases.sh``): the 3-D prognostics
(delp, temp, ucomp, vcomp, sphum; ``[time, tile, i, j, k]``, k = 0 the top layer), the 2-D ps,
u850, v850, t850, vort850 (``[time, tile, i, j]``) and the restarts' D-grid winds (at t = 0 and
the run's end), each at its own hours (t = 0 from the ``t0/`` companion), with ak, bk, ptop, the
grid, zsurf and phis, into ``OUTPUT/extract.npz`` beside the run's ``input.nml`` and
``provenance.txt``.  ``--fields NAME[:H1,H2] ...`` picks fields (and hours per field):

    python -m fv3core.validation.extract --run /work/fortran_fv3_hydro/runs/jw_C24_L26 \\
        --hours 0 6 24 --output tests/fv3core/data/fortran/jw_C24_L26

An existing output is kept unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fv3core.errors import FV3ReferenceError
from fv3core.validation.norms import (
    ALL_NAMES,
    GRAVITY,
    Invariants,
    coriolis,
    sw_norms,
)
from fv3core.validation.reference import (
    KINDS,
    TILES,
    FV3Reference,
    NormTable,
    ReferenceState,
    _read_tile,
    reference_root,
)
from stencils.atomic import atomic_output

FORMAT = 1
#: the arrays of an extract, (6, N, N) each
FIELDS = ("depth", "u", "v", "vorticity", "initial_depth", "initial_surface", "initial_u",
          "initial_v", "area", "lon", "lat")  # fmt: skip


@dataclass(frozen=True)
class ReferenceExtract:
    """What an extract holds: ``initial`` and ``output`` (at ``hours``) states, ``area`` (m^2),
    cell centres ``lon``/``lat`` (degrees), the printed norms at 0 h and at ``hours``
    (``printed_initial``, ``printed``: name -> value, with ``printed_lines`` the raw
    SWNORMS/SWINV lines) and ``metadata`` (run, sources with SHA-256, command)."""

    run: str
    hours: float
    initial: ReferenceState
    output: ReferenceState
    area: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    printed_initial: dict[str, float]
    printed: dict[str, float]
    printed_lines: tuple[str, ...]
    metadata: dict[str, Any]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extract(reference: FV3Reference, hours: float = 6.0) -> dict[str, np.ndarray]:
    """The arrays of an extract of ``reference`` at ``hours`` (``metadata`` without the
    command: :func:`write_extract` adds it)."""
    grid, start, state = reference.grid(), reference.initial(), reference.output(hours)
    norms = reference.printed_norms()
    assert state.vorticity is not None
    i0, i1 = norms.index(0.0), norms.index(hours)
    sources = [{"name": p.name, "path": str(p.resolve()), "sha256": sha256(p)}
               for p in reference.files()]  # fmt: skip
    meta = {"format": FORMAT, "run": reference.name, "hours": hours, "sources": sources}
    return {
        "depth": state.depth, "u": state.u, "v": state.v, "vorticity": state.vorticity,
        "initial_depth": start.depth, "initial_surface": start.surface,
        "initial_u": start.u, "initial_v": start.v,
        "area": grid.area, "lon": grid.lon, "lat": grid.lat,
        "norm_names": np.array(ALL_NAMES),
        "printed_initial": np.array([norms[n][i0] for n in ALL_NAMES]),
        "printed": np.array([norms[n][i1] for n in ALL_NAMES]),
        "printed_lines": np.array([*norms.lines[i0], *norms.lines[i1]]),
        "metadata": np.array(json.dumps(meta, sort_keys=True)),
    }  # fmt: skip


def write_extract(reference: FV3Reference, output: str | Path, *, hours: float = 6.0,
                  command: str = "", overwrite: bool = False) -> Path:  # fmt: skip
    """Write :func:`extract` of ``reference`` to ``output`` (compressed ``.npz``, atomically),
    recording ``command``; an existing ``output`` is an error unless ``overwrite``."""
    output = Path(output)
    if output.exists() and not overwrite:
        raise FV3ReferenceError(f"{output} exists: pass --force (overwrite=True) to replace it")
    arrays = extract(reference, hours)
    meta = json.loads(str(arrays["metadata"]))
    meta["command"] = command
    arrays["metadata"] = np.array(json.dumps(meta, sort_keys=True))
    with atomic_output(output) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
    return output


def load_extract(path: str | Path) -> ReferenceExtract:
    """Read an extract written by :func:`write_extract`."""
    path = Path(path)
    data = _load_npz(path, (*FIELDS, "norm_names", "printed_initial", "printed",
                            "printed_lines", "metadata"))  # fmt: skip
    meta = json.loads(str(data["metadata"]))
    if meta.get("format") != FORMAT:
        raise FV3ReferenceError(f"{path}: extract format {meta.get('format')}, this reader "
                                f"knows {FORMAT}; rewrite it with --force")  # fmt: skip
    names = [str(n) for n in data["norm_names"]]
    hours = float(meta["hours"])
    initial = ReferenceState(0.0, data["initial_depth"], data["initial_surface"],
                             data["initial_u"], data["initial_v"])  # fmt: skip
    output = ReferenceState(hours, data["depth"], data["initial_surface"], data["u"], data["v"],
                            data["vorticity"])  # fmt: skip
    return ReferenceExtract(
        run=str(meta["run"]), hours=hours, initial=initial, output=output, area=data["area"],
        lon=data["lon"], lat=data["lat"],
        printed_initial=dict(zip(names, map(float, data["printed_initial"]), strict=True)),
        printed=dict(zip(names, map(float, data["printed"]), strict=True)),
        printed_lines=tuple(str(s) for s in data["printed_lines"]), metadata=meta,
    )  # fmt: skip


# -- run extracts (format 2): runs of benchmarks/fortran_fv3, norms computed offline ---------

RUN_FORMAT = 2
#: the fields of a run extract at each of its hours, (n_hours, 6, N, N) each
RUN_FIELDS = ("depth", "u", "v")
#: the file of a run extract in its folder, beside the run's input.nml
RUN_EXTRACT = "extract.npz"
#: the t = 0 companion run's file and variables (benchmarks/fortran_fv3/cases.sh)
T0_KIND = "atmos_t0"
T0_NAMES = ("ps", "ucomp", "vcomp", "vort")


@dataclass(frozen=True)
class RunExtract:
    """What a run extract holds: ``states`` (hours -> depth, surface, A-grid winds),
    the offline ``norms`` (every SWNORMS/SWINV quantity at t = 0 and each output time of the
    run), the run's exact ``namelist`` text and ``metadata`` (sources with SHA-256, Fortran
    provenance, command)."""

    run: str
    states: dict[float, ReferenceState]
    norms: NormTable
    namelist: str
    metadata: dict[str, Any]

    @property
    def hours(self) -> tuple[float, ...]:
        return tuple(self.states)


def t0_state(reference: FV3Reference, t0: str | Path | None = None) -> ReferenceState:
    """The state at t = 0 with FV3's relative vorticity: ``atmos_static``'s depth and winds and
    the ``vort`` of the ``t0`` companion run (default ``<run>/t0``).  The companion must be the
    run's namelist with ``days = 0`` and its ``atmos_t0`` record at t = 0, whose winds equal
    ``atmos_static``'s bit for bit and whose ``ps`` is g D (at t = 0 FV3's ``ps`` is still
    ``delp``; fv_dynamics makes it ``delp / g`` in the shallow-water core) within 1e-15 relative
    of g ``ps_ic``; anything else is an :class:`FV3ReferenceError`."""
    folder = Path(t0) if t0 is not None else reference.path / "t0"
    companion = FV3Reference(folder)
    expected = _zero_length(reference.namelist_text)
    if _zero_length(companion.namelist_text) != expected or expected == reference.namelist_text:
        raise FV3ReferenceError(
            f"{folder / 'input.nml'} is not {reference.path / 'input.nml'} with days = 0: make the "
            f"t = 0 companion with benchmarks/fortran_fv3/cases.sh"
        )
    times, data = _read_kind(companion, T0_KIND, T0_NAMES)
    if times.tolist() != [0.0]:
        raise FV3ReferenceError(f"{folder}: {T0_KIND} has the times {times.tolist()} days, "
                                f"expected one record at 0")  # fmt: skip
    start = reference.initial()
    geopotential, u, v, vort = (data[n][:, 0] for n in T0_NAMES)
    depth = geopotential / GRAVITY
    if not (np.array_equal(u, start.u) and np.array_equal(v, start.v)) or (
            np.abs(depth - start.depth).max() > 1e-15 * np.abs(start.depth).max()):  # fmt: skip
        raise FV3ReferenceError(f"{folder}: the {T0_KIND} state is not {reference.path}'s "
                                f"atmos_static initial state")  # fmt: skip
    return ReferenceState(0.0, start.depth, start.surface, start.u, start.v, vort)


def offline_norms(reference: FV3Reference, start: ReferenceState) -> NormTable:
    """The SWNORMS/SWINV quantities (:data:`~fv3core.validation.norms.ALL_NAMES`) at t = 0 and
    at every ``atmos_out`` time, computed from the netCDF output as FV3's diagnostic defines
    them (fv3core.validation.norms; ``start`` = :func:`t0_state`, whose vorticity gives the
    t = 0 enstrophy; the Coriolis parameter of the namelist's ``alpha``).  A quantity FV3 cannot
    define either is NaN (the enstrophy where the depth is 0: test_case 1 outside its bell)."""
    grid = reference.grid()
    alpha = float(reference.namelist.get("test_case_nml", {}).get("alpha", 0.0))
    f0 = coriolis(grid.lon, grid.lat, alpha)
    initial = start.fields(f0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rows = [sw_norms(initial, initial, grid.area)]
        inv0 = Invariants(**{k: rows[0][k] for k in ("Hmin", "Hmax", "mass", "energy",
                                                      "enstrophy")})  # fmt: skip
        hours = [0.0, *reference.output_times()]
        for h in hours[1:]:
            rows.append(sw_norms(reference.output(h).fields(f0), initial, grid.area,
                                 initial_invariants=inv0))  # fmt: skip
    values = {n: np.array([r[n] if math.isfinite(r[n]) else math.nan for r in rows])
              for n in ALL_NAMES}  # fmt: skip
    return NormTable(np.array(hours), values, reference.path)


def extract_run(reference: FV3Reference, hours: tuple[float, ...] = (6.0, 24.0), *,
                t0: str | Path | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """The arrays of a run extract of ``reference`` (``metadata`` without the command)."""
    start = t0_state(reference, t0)
    table = offline_norms(reference, start)
    states = [reference.output(h) for h in hours]
    t0_folder = Path(t0) if t0 is not None else reference.path / "t0"
    sources = [{"name": str(p.relative_to(reference.path)) if p.is_relative_to(reference.path)
                else f"t0/{p.name}", "path": str(p.resolve()), "sha256": sha256(p)}
               for p in _run_files(reference, t0_folder)]  # fmt: skip
    meta = {"format": RUN_FORMAT, "run": reference.name, "hours": list(hours),
            "sources": sources, "norms": "computed offline by fv3core.validation.extract."
            "offline_norms from the netCDF output (t = 0 vorticity from the t0 companion)",
            "fortran": {"run": run_provenance(reference.path), "t0": run_provenance(t0_folder)}}
    arrays: dict[str, np.ndarray] = {
        "hours": np.array(hours, dtype=np.float64),
        "surface": start.surface,
        **{name: np.stack([getattr(s, name) for s in states]) for name in RUN_FIELDS},
        "norm_names": np.array(ALL_NAMES),
        "norm_hours": table.hours,
        "norms": np.stack([table[n] for n in ALL_NAMES], axis=1),
        "metadata": np.array(json.dumps(meta, sort_keys=True)),
    }
    if (reference.path / "norms.txt").is_file():  # a run with printed norms: keep them too
        printed = reference.printed_norms()
        arrays["printed_hours"] = printed.hours
        arrays["printed"] = np.stack([printed[n] for n in ALL_NAMES], axis=1)
    return arrays


def write_run_extract(reference: FV3Reference, output: str | Path, *,
                      hours: tuple[float, ...] = (6.0, 24.0), t0: str | Path | None = None,
                      command: str = "", overwrite: bool = False) -> Path:  # fmt: skip
    """Write :func:`extract_run` of ``reference`` to ``output/extract.npz`` and the run's
    ``input.nml`` to ``output/input.nml`` (both atomically), recording ``command``; existing
    files are an error unless ``overwrite``.  Returns the ``.npz``."""
    return _write_extract(reference, Path(output), lambda: extract_run(reference, hours, t0=t0),
                          command=command, overwrite=overwrite, copies=("input.nml",))  # fmt: skip


def _write_extract(reference: FV3Reference, folder: Path,
                   arrays_of: Callable[[], dict[str, np.ndarray]], *, command: str,
                   overwrite: bool, copies: tuple[str, ...]) -> Path:  # fmt: skip
    """``arrays_of()`` (an extract's arrays, with ``metadata``) to ``folder/extract.npz`` with
    ``command`` recorded, and the run's files ``copies`` beside it (those the run has), each
    written atomically; existing files are an error unless ``overwrite``."""
    npz = folder / RUN_EXTRACT
    for path in (npz, *(folder / name for name in copies)):
        if path.exists() and not overwrite:
            raise FV3ReferenceError(f"{path} exists: pass --force (overwrite=True) to replace it")
    arrays = arrays_of()
    meta = json.loads(str(arrays["metadata"]))
    meta["command"] = command
    arrays["metadata"] = np.array(json.dumps(meta, sort_keys=True))
    with atomic_output(npz) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
    for name in copies:
        source = reference.path / name
        if source.is_file():
            with atomic_output(folder / name) as tmp:
                tmp.write_bytes(source.read_bytes())
    return npz


def load_run_extract(path: str | Path) -> RunExtract:
    """Read a run extract (its folder or its ``extract.npz``) written by
    :func:`write_run_extract`; the folder's ``input.nml`` must be the one it was made from."""
    path = Path(path)
    folder, npz = (path, path / RUN_EXTRACT) if path.is_dir() else (path.parent, path)
    data = _load_npz(npz, ("hours", "surface", *RUN_FIELDS, "norm_names", "norm_hours", "norms",
                           "metadata"))  # fmt: skip
    meta = json.loads(str(data["metadata"]))
    if meta.get("format") != RUN_FORMAT:
        raise FV3ReferenceError(f"{npz}: extract format {meta.get('format')}, this reader "
                                f"knows {RUN_FORMAT} for run extracts; rewrite it with --force")  # fmt: skip
    nml = folder / "input.nml"
    (source,) = [s for s in meta["sources"] if s["name"] == "input.nml"]
    if not nml.is_file() or sha256(nml) != source["sha256"]:
        raise FV3ReferenceError(f"{nml} is missing or not the input.nml {npz} was made from "
                                f"(sha256 {source['sha256']})")  # fmt: skip
    names = [str(n) for n in data["norm_names"]]
    table = NormTable(data["norm_hours"], {n: data["norms"][:, k] for k, n in enumerate(names)},
                      npz)  # fmt: skip
    states = {float(h): ReferenceState(float(h), data["depth"][k], data["surface"],
                                       data["u"][k], data["v"][k])
              for k, h in enumerate(data["hours"])}  # fmt: skip
    return RunExtract(run=str(meta["run"]), states=states, norms=table, namelist=nml.read_text(),
                      metadata=meta)  # fmt: skip


# -- 3-D run extracts (format 3): runs of the hydrostatic core (jw_cases.sh) -----------------

RUN3D_FORMAT = 3
#: 3-D fields of a 3-D run extract, ``[time, tile, i, j, k]`` (k = 0 the top layer), and units
FIELDS_3D = {"delp": "Pa", "temp": "K", "ucomp": "m/s", "vcomp": "m/s", "sphum": "kg/kg"}
#: the non-hydrostatic core's 3-D fields (runs with ``hydrostatic = .false.``), as FIELDS_3D
FIELDS_NONHYDROSTATIC = {"w": "m/s", "delz": "m"}
#: 2-D fields, ``[time, tile, i, j]``
FIELDS_2D = {"ps": "Pa", "u850": "m/s", "v850": "m/s", "t850": "K", "vort850": "1/s"}
#: D-grid winds from the restarts (``RESTART/fv_core.res.tile*.nc``), at t = 0 (the t0
#: companion's) and at the end of the run only: u ``[time, tile, i, j(N+1), k]``,
#: v ``[time, tile, i(N+1), j, k]``
DGRID = {"u_dgrid": "m/s", "v_dgrid": "m/s"}
#: every field name a 3-D extract takes
FIELDS_3D_RUN = (*FIELDS_3D, *FIELDS_2D, *DGRID)


def is_3d_run(reference: FV3Reference) -> bool:
    """Whether ``reference`` is a run of the 3-D core (``npz`` > 1 in its ``&fv_core_nml``)."""
    return int(reference.namelist.get("fv_core_nml", {}).get("npz", 1)) > 1


def is_hydrostatic_run(reference: FV3Reference) -> bool:
    """Whether ``reference`` ran FV3's hydrostatic core (``hydrostatic``, default true)."""
    return bool(reference.namelist.get("fv_core_nml", {}).get("hydrostatic", True))


def parse_field_specs(specs: tuple[str, ...], hours: tuple[float, ...]
                      ) -> dict[str, tuple[float, ...]]:  # fmt: skip
    """``NAME`` (at every one of ``hours``) or ``NAME:H1,H2`` (at those hours only) -> hours."""
    out: dict[str, tuple[float, ...]] = {}
    for spec in specs:
        name, sep, when = spec.partition(":")
        if name not in FIELDS_3D_RUN and name not in FIELDS_NONHYDROSTATIC:
            raise FV3ReferenceError(f"unknown field {name!r} in {spec!r}: a 3-D extract takes "
                                    f"{FIELDS_3D_RUN} and, of a non-hydrostatic run, "
                                    f"{tuple(FIELDS_NONHYDROSTATIC)}")  # fmt: skip
        try:
            times = tuple(float(h) for h in when.split(",")) if sep else hours
        except ValueError:
            raise FV3ReferenceError(f"{spec!r}: expected NAME or NAME:H1,H2 (hours)") from None
        out[name] = times
    return out


@dataclass(frozen=True)
class Run3DExtract:
    """What a 3-D run extract holds: ``fields`` (name -> array over that field's
    ``field_hours``: 3-D ``[time, tile, i, j, k]`` with k = 0 the top layer, 2-D
    ``[time, tile, i, j]``, D-grid ``u_dgrid [time, tile, i, j(N+1), k]`` and ``v_dgrid
    [time, tile, i(N+1), j, k]``; float64 as FV3 wrote them), the vertical coordinate ``ak``
    (Pa) and ``bk`` (npz + 1 interfaces, top first) with ``ptop`` = ``ak[0]`` (Pa), the grid
    (``lon``, ``lat`` cell centres and ``corner_lon``/``corner_lat`` in degrees, ``area`` in
    m^2), the surface height ``zsurf`` (m) and geopotential ``phis`` (m^2/s^2, the restart's,
    ``[tile, i, j]``), the run's exact ``namelist`` and ``metadata`` (units, sources with
    SHA-256, Fortran provenance, command)."""

    run: str
    fields: dict[str, np.ndarray]
    field_hours: dict[str, tuple[float, ...]]
    ak: np.ndarray
    bk: np.ndarray
    ptop: float
    grid: dict[str, np.ndarray]
    zsurf: np.ndarray
    phis: np.ndarray
    namelist: str
    metadata: dict[str, Any]
    #: FV3's per-step prints (:func:`printed_diagnostics`): times (h) and name -> values
    printed_hours: np.ndarray = field(default_factory=lambda: np.zeros(0))
    printed: dict[str, np.ndarray] = field(default_factory=dict)

    def at(self, name: str, hours: float) -> np.ndarray:
        """Field ``name`` at ``hours``."""
        if name not in self.fields:
            raise FV3ReferenceError(f"{self.run}: no field {name!r}; it has {sorted(self.fields)}")
        times = self.field_hours[name]
        hits = [k for k, h in enumerate(times) if abs(h - hours) < 1e-6]
        if not hits:
            raise FV3ReferenceError(f"{self.run}: {name} not extracted at {hours:g} h; it is at "
                                    f"{list(times)} h")  # fmt: skip
        return self.fields[name][hits[0]]


def _tiles(folder: Path, kind: str, names: tuple[str, ...], timed: bool
           ) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # fmt: skip
    """``kind.tile1..6.nc`` in ``folder``: times (hours; timed only) and fields with the tile
    after the time axis and k last: ``[(time,) tile, i, j(, k)]``."""
    times, per_tile = None, []
    for t in range(1, TILES + 1):
        path = folder / f"{kind}.tile{t}.nc"
        if not path.is_file():
            raise FV3ReferenceError(f"{path} is missing: run the case with "
                                    f"benchmarks/fortran_fv3/jw_cases.sh")  # fmt: skip
        tile_times, arrays = _read_tile(path, names, timed=timed)
        if times is not None and not np.array_equal(times, tile_times):
            raise FV3ReferenceError(f"{path}: times {tile_times} differ from tile 1's {times}")
        times = tile_times
        per_tile.append(arrays)
    out = {}
    for n in names:
        a = np.stack([tile[n] for tile in per_tile], axis=1 if timed else 0)
        if a.ndim == (5 if timed else 4):  # (..., k, i, j) -> (..., i, j, k)
            a = np.moveaxis(a, -3, -1)
        out[n] = np.ascontiguousarray(a)
    assert times is not None
    return times * 24.0, out


def _restart(folder: Path) -> tuple[dict[str, np.ndarray], list[Path]]:
    """``RESTART/`` of a run folder: ak, bk (fv_core.res.nc) and the D-grid winds
    (fv_core.res.tile*.nc) as ``u_dgrid [tile, i, j(N+1), k]``, ``v_dgrid [tile, i(N+1), j, k]``,
    the surface geopotential ``phis [tile, i, j]``."""
    import xarray as xr

    files = [folder / "RESTART" / "fv_core.res.nc"] + [
        folder / "RESTART" / f"fv_core.res.tile{t}.nc" for t in range(1, TILES + 1)]
    for f in files:
        if not f.is_file():
            raise FV3ReferenceError(f"{f} is missing: run.sh keeps the run's RESTART/")
    out: dict[str, np.ndarray] = {}
    with xr.open_dataset(files[0], decode_times=False, mask_and_scale=False) as ds:
        out["ak"] = np.asarray(ds["ak"].values, dtype=np.float64).reshape(-1)
        out["bk"] = np.asarray(ds["bk"].values, dtype=np.float64).reshape(-1)
    winds: dict[str, list[np.ndarray]] = {"u": [], "v": []}
    phis = []
    for f in files[1:]:
        with xr.open_dataset(f, decode_times=False, mask_and_scale=False) as ds:
            for n in winds:  # (Time, zaxis, y, x) -> (i, j, k)
                a = np.asarray(ds[n].values, dtype=np.float64)[0]
                winds[n].append(np.ascontiguousarray(np.transpose(a, (2, 1, 0))))
            phis.append(np.asarray(ds["phis"].values, dtype=np.float64)[0].T.copy())
    out["u_dgrid"] = np.stack(winds["u"])
    out["v_dgrid"] = np.stack(winds["v"])
    out["phis"] = np.stack(phis)
    return out, files


def _static_vertical(folder: Path) -> dict[str, np.ndarray]:
    """``atmos_static.tile1.nc``'s ``pk`` (FV3's name for ak, Pa) and ``bk`` on the half levels."""
    import xarray as xr

    path = folder / "atmos_static.tile1.nc"
    with xr.open_dataset(path, decode_times=False, mask_and_scale=False) as ds:
        for n in ("pk", "bk"):
            if n not in ds.variables:
                raise FV3ReferenceError(f"{path}: no {n!r} (the diag_table of jw_cases.sh "
                                        f"writes it)")  # fmt: skip
        return {"ak": np.asarray(ds["pk"].values, dtype=np.float64),
                "bk": np.asarray(ds["bk"].values, dtype=np.float64)}


def _t0_companion(reference: FV3Reference, folder: Path) -> None:
    """Fails unless ``folder`` holds ``reference``'s namelist with ``days = 0``."""
    companion = FV3Reference(folder)
    expected = _zero_length(reference.namelist_text)
    if _zero_length(companion.namelist_text) != expected or expected == reference.namelist_text:
        raise FV3ReferenceError(
            f"{folder / 'input.nml'} is not {reference.path / 'input.nml'} with days = 0: make "
            f"the t = 0 companion with benchmarks/fortran_fv3/jw_cases.sh")


_SIM_TIME = re.compile(r"^ Simulation Time:(.{6})(.{5})\s*$")
_MINMAX = re.compile(r"^\s*(\S.*?)\s*:\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_TOTAL_PS = re.compile(r"Total surface pressure \(mb\)\s*=\s*(\S+)")
_ENERGY = re.compile(r"Energy_Deficit \(W/m\*\*2\)\s*=\s*(\S+)")
_CLOCK = re.compile(r"^(\S.*?)\s{2,}(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+\d+\s+\d+\s+\d+\s*$")
_BLOCK = re.compile(r"^   ([A-Z_0-9]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+\d+\s*$")


def printed_diagnostics(stdout: str | Path) -> dict[str, np.ndarray]:
    """FV3's per-step prints (``print_freq``) in a run's ``stdout.txt``: ``printed_hours`` (the
    model time of each ``Simulation Time`` block), ``printed_names`` (``total_ps_mb``, the
    global mean surface pressure in hPa at 17 digits -- FV3's mass check --, then
    ``<quantity>_max``, ``_min``, ``_mean`` of each max/min line: PS in hPa, UA, VA, TA, tracers;
    with ``consv_te`` > 0 also ``energy_deficit_w_m2``, the energy fixer's printed deficit)
    and ``printed`` ``[time, name]``; the t = 0 mean surface pressure (printed at the end of
    the initialisation) is row 0 with NaN for the rest."""
    lines = Path(stdout).read_text().splitlines()
    rows: list[dict[str, float]] = []
    hours: list[float] = []
    current: dict[str, float] | None = None
    for line in lines:
        m = _SIM_TIME.match(line)
        if m:
            current = {}
            rows.append(current)
            hours.append(24.0 * int(m.group(1)) + int(m.group(2)) / 3600.0)
            continue
        m = _TOTAL_PS.search(line)
        if m:
            if current is None:  # the initial state's, before the first step
                current = {}
                rows.append(current)
                hours.append(0.0)
            current["total_ps_mb"] = float(m.group(1))
            continue
        m = _ENERGY.search(line)
        if m and current is not None:  # consv_te > 0: the energy fixer's deficit
            current["energy_deficit_w_m2"] = float(m.group(1))
            continue
        m = _MINMAX.match(line)
        if m and current is not None and rows and hours:
            name = m.group(1).split("(")[0].strip().replace(" ", "_")
            try:
                vals = [float(v) for v in m.groups()[1:]]
            except ValueError:
                continue
            for suffix, v in zip(("max", "min", "mean"), vals, strict=True):
                current[f"{name}_{suffix}"] = v
    if not rows:
        raise FV3ReferenceError(f"{stdout}: no per-step prints (set print_freq in fv_core_nml)")
    names = list(dict.fromkeys(k for r in rows for k in r))
    table = np.array([[r.get(n, math.nan) for n in names] for r in rows], dtype=np.float64)
    return {"printed_hours": np.array(hours), "printed_names": np.array(names), "printed": table}


def printed_timings(stdout: str | Path) -> dict[str, float]:
    """The run's timers from ``stdout.txt``: FV3's block timers (``ATMOS_TOTAL``,
    ``FV_DYNAMICS``, ``DYN_CORE``, ``REMAPPING``, ... total time on PE 0, s) and FMS's clocks
    (``MAIN: time loop``, ... average over the PEs, s)."""
    out: dict[str, float] = {}
    for line in Path(stdout).read_text().splitlines():
        m = _CLOCK.match(line)
        if m:
            out[m.group(1).strip()] = float(m.group(5))
            continue
        m = _BLOCK.match(line)
        if m:
            out[m.group(1)] = float(m.group(4))
    return out


def extract_3d_run(reference: FV3Reference, fields: dict[str, tuple[float, ...]], *,
                   t0: str | Path | None = None) -> dict[str, np.ndarray]:  # fmt: skip
    """The arrays of a 3-D run extract of ``reference`` (``metadata`` without the command):
    each of ``fields`` (name -> hours, :func:`parse_field_specs`) at its hours (0: the
    ``atmos_t0`` record and restart of the t = 0 companion ``t0``, default ``RUN/t0``, which
    must be the run's namelist with ``days = 0``; later: ``atmos_out``; D-grid winds: the
    restarts, so only at 0 and the run's end), ak/bk/ptop, the grid, the surface height and
    geopotential.  ak and bk of the restart and of ``atmos_static`` must agree."""
    t0_folder = Path(t0) if t0 is not None else reference.path / "t0"
    grid = reference.grid()
    static = reference._read("atmos_static", ("zsurf",))
    vertical = _static_vertical(reference.path)
    restart, restart_files = _restart(reference.path)
    for n in ("ak", "bk"):
        if not np.array_equal(vertical[n], restart[n]):
            raise FV3ReferenceError(f"{reference.path}: {n} of atmos_static and of the restart "
                                    f"differ")  # fmt: skip
    end = reference.run_hours
    for n in DGRID:
        bad = [h for h in fields.get(n, ()) if h not in (0.0, end)]
        if bad:
            raise FV3ReferenceError(f"{n} at {bad} h: the D-grid winds come from the restarts, "
                                    f"at 0 and at the run's end ({end:g} h) only")  # fmt: skip
    sources = [reference.path / n for n in ("input.nml", "diag_table", "field_table")]
    sources += [reference.path / f"{k}.tile{t}.nc" for k in ("grid_spec", "atmos_static")
                for t in range(1, TILES + 1)]  # fmt: skip
    sources += restart_files
    dyn = [n for n in fields if n not in DGRID]
    # (name, hours) -> array
    values: dict[tuple[str, float], np.ndarray] = {}
    later = sorted({h for n in dyn for h in fields[n] if h != 0.0})
    if later:
        names = tuple(n for n in dyn if any(h != 0.0 for h in fields[n]))
        times, data = _tiles(reference.path, "atmos_out", names, timed=True)
        sources += [reference.path / f"atmos_out.tile{t}.nc" for t in range(1, TILES + 1)]
        for n in names:
            for h in fields[n]:
                if h == 0.0:
                    continue
                hits = np.flatnonzero(np.isclose(times, h, rtol=0.0, atol=1e-6))
                if not hits.size:
                    raise FV3ReferenceError(f"{reference.path}: no atmos_out record at {h:g} h; "
                                            f"there are {times.tolist()} h")  # fmt: skip
                values[n, h] = data[n][int(hits[0])]
    if any(0.0 in fields[n] for n in fields):
        _t0_companion(reference, t0_folder)
        sources += [t0_folder / "input.nml", t0_folder / "diag_table"]
        names = tuple(n for n in dyn if 0.0 in fields[n])
        if names:
            times, data = _tiles(t0_folder, T0_KIND, names, timed=True)
            if times.tolist() != [0.0]:
                raise FV3ReferenceError(f"{t0_folder}: {T0_KIND} has the times "
                                        f"{times.tolist()} h, expected one record at 0")  # fmt: skip
            sources += [t0_folder / f"{T0_KIND}.tile{t}.nc" for t in range(1, TILES + 1)]
            for n in names:
                values[n, 0.0] = data[n][0]
        if any(0.0 in fields.get(n, ()) for n in DGRID):
            start, files = _restart(t0_folder)
            sources += files
            for n in DGRID:
                values[n, 0.0] = start[n]
    for n in DGRID:
        if end in fields.get(n, ()) and end != 0.0:
            values[n, end] = restart[n]
    stdout = reference.path / "stdout.txt"
    printed = printed_diagnostics(stdout) if stdout.is_file() else {}
    timings = printed_timings(stdout) if stdout.is_file() else {}
    if stdout.is_file():
        sources.append(stdout)
    main = reference.namelist.get("main_nml", {})
    steps = round(end * 3600.0 / float(main.get("dt_atmos", 1.0)))
    units = {**FIELDS_3D, **FIELDS_NONHYDROSTATIC, **FIELDS_2D, **DGRID}
    meta = {"format": RUN3D_FORMAT, "run": reference.name,
            "timings_s": timings, "steps": steps,
            "field_hours": {n: list(h) for n, h in fields.items()},
            "units": {n: units[n] for n in fields} | {
                "ak": "Pa", "bk": "1", "ptop": "Pa", "zsurf": "m", "phis": "m^2/s^2",
                "area": "m^2", "lon": "degrees_E", "lat": "degrees_N", "corner_lon": "degrees_E",
                "corner_lat": "degrees_N"},
            "layout": "3-D [time, tile, i, j, k] (k = 0 the top layer), 2-D [time, tile, i, j]; "
                      "u_dgrid [time, tile, i, j(N+1), k], v_dgrid [time, tile, i(N+1), j, k]; "
                      "time over hours_<name>; tile 0..5 = FV3's tile1..6",
            "sources": [{"name": str(p.relative_to(reference.path)), "path": str(p.resolve()),
                         "sha256": sha256(p)} for p in sources],
            "fortran": {"run": run_provenance(reference.path), "t0": run_provenance(t0_folder)}}
    return {
        "ak": restart["ak"], "bk": restart["bk"], "ptop": np.array(restart["ak"][0]),
        "zsurf": static["zsurf"], "phis": restart["phis"], "area": grid.area, "lon": grid.lon,
        "lat": grid.lat, "corner_lon": grid.corner_lon, "corner_lat": grid.corner_lat,
        **{n: np.stack([values[n, h] for h in fields[n]]) for n in fields},
        **{f"hours_{n}": np.array(fields[n], dtype=np.float64) for n in fields},
        **printed,
        "metadata": np.array(json.dumps(meta, sort_keys=True)),
    }  # fmt: skip


def write_3d_run_extract(reference: FV3Reference, output: str | Path, *,
                         fields: dict[str, tuple[float, ...]], t0: str | Path | None = None,
                         command: str = "", overwrite: bool = False) -> Path:  # fmt: skip
    """Write :func:`extract_3d_run` to ``output/extract.npz`` and the run's ``input.nml`` and
    ``provenance.txt`` beside it (atomically); existing files are an error unless ``overwrite``.
    Returns the ``.npz``."""
    return _write_extract(reference, Path(output),
                          lambda: extract_3d_run(reference, fields, t0=t0), command=command,
                          overwrite=overwrite, copies=("input.nml", "provenance.txt"))  # fmt: skip


def load_3d_run_extract(path: str | Path) -> Run3DExtract:
    """Read a 3-D run extract (its folder or its ``extract.npz``) written by
    :func:`write_3d_run_extract`; the folder's ``input.nml`` must be the one it was made from."""
    path = Path(path)
    folder, npz = (path, path / RUN_EXTRACT) if path.is_dir() else (path.parent, path)
    static = ("ak", "bk", "ptop", "zsurf", "phis", "area", "lon", "lat", "corner_lon",
              "corner_lat")  # fmt: skip
    data = _load_npz(npz, (*static, "metadata"))
    meta = json.loads(str(data["metadata"]))
    if meta.get("format") != RUN3D_FORMAT:
        raise FV3ReferenceError(f"{npz}: extract format {meta.get('format')}, this reader "
                                f"knows {RUN3D_FORMAT} for 3-D run extracts")  # fmt: skip
    nml = folder / "input.nml"
    (source,) = [s for s in meta["sources"] if s["name"] == "input.nml"]
    if not nml.is_file() or sha256(nml) != source["sha256"]:
        raise FV3ReferenceError(f"{nml} is missing or not the input.nml {npz} was made from "
                                f"(sha256 {source['sha256']})")  # fmt: skip
    names = list(meta["field_hours"])
    missing = [k for n in names for k in (n, f"hours_{n}") if k not in data]
    if missing:
        raise FV3ReferenceError(f"{npz}: its metadata list fields whose arrays it lacks: {missing}")
    return Run3DExtract(
        run=str(meta["run"]), fields={n: data[n] for n in names},
        field_hours={n: tuple(float(h) for h in data[f"hours_{n}"]) for n in names},
        ak=data["ak"], bk=data["bk"], ptop=float(data["ptop"]),
        grid={n: data[n] for n in ("lon", "lat", "corner_lon", "corner_lat", "area")},
        zsurf=data["zsurf"], phis=data["phis"], namelist=nml.read_text(), metadata=meta,
        printed_hours=data.get("printed_hours", np.zeros(0)),
        printed={str(n): data["printed"][:, k] for k, n in enumerate(data.get("printed_names", ()))},
    )  # fmt: skip


def _load_npz(path: Path, required: tuple[str, ...]) -> dict[str, np.ndarray]:
    if not path.is_file():
        raise FV3ReferenceError(f"reference extract {path} does not exist: write it with "
                                f"`python -m fv3core.validation.extract`")  # fmt: skip
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise FV3ReferenceError(f"cannot read {path} as an .npz extract: {exc}") from exc
    missing = [k for k in required if k not in data]
    if missing:
        raise FV3ReferenceError(f"{path} is not a reference extract: it lacks {missing}")
    return data


def _zero_length(namelist: str) -> str:
    """``namelist`` with its ``&main_nml`` run length (days/hours/minutes/seconds) blanked."""
    return re.sub(r"(?im)^(\s*(days|hours|minutes|seconds)\s*=).*$", r"\1", namelist)


def _read_kind(reference: FV3Reference, kind: str, names: tuple[str, ...]
               ) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # fmt: skip
    """``kind.tile1..6.nc`` of a run folder: times (days) and (6, time, N, N) arrays."""
    times, tiles = None, []
    for t in range(1, TILES + 1):
        path = reference.path / f"{kind}.tile{t}.nc"
        if not path.is_file():
            raise FV3ReferenceError(f"{path} is missing: run the t = 0 companion "
                                    f"(benchmarks/fortran_fv3/cases.sh)")  # fmt: skip
        tile_times, arrays = _read_tile(path, names, timed=True)
        times = tile_times if times is None else times
        tiles.append(arrays)
    assert times is not None
    return times, {n: np.stack([tile[n] for tile in tiles]) for n in names}


def _run_files(reference: FV3Reference, t0: Path) -> list[Path]:
    names = ["input.nml", "diag_table", "field_table"] + [f"{k}.tile{t}.nc" for k in KINDS
                                                          for t in range(1, TILES + 1)]  # fmt: skip
    files = [reference.path / n for n in names]
    files += [t0 / "input.nml", t0 / "diag_table"] + [t0 / f"{T0_KIND}.tile{t}.nc"
                                                       for t in range(1, TILES + 1)]  # fmt: skip
    if (reference.path / "norms.txt").is_file():
        files.append(reference.path / "norms.txt")
    for f in files:
        if not f.is_file():
            raise FV3ReferenceError(f"{f} is missing: a run folder of benchmarks/fortran_fv3 "
                                    f"holds it (run.sh, cases.sh)")  # fmt: skip
    return files


def run_provenance(folder: Path) -> dict[str, str]:
    """``provenance.txt`` of a run folder (run.sh: command, build), ``{}`` without one."""
    path = folder / "provenance.txt"
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m fv3core.validation.extract", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    source = p.add_mutually_exclusive_group()
    source.add_argument("--reference", type=Path, default=None,
                        help="reference run folder with printed norms, for a single-time extract "
                        "(default: tc2_C24_d1 of $STRATOFLOW_FV3_REFERENCE or "
                        "../shared/fv3-reference)")  # fmt: skip
    source.add_argument("--run", type=Path, default=None,
                        help="a run folder of benchmarks/fortran_fv3 (with its t0/ companion), "
                        "for a run extract: --output is then a folder")  # fmt: skip
    p.add_argument("--t0", type=Path, default=None,
                   help="the run's t = 0 companion folder (default: RUN/t0)")
    p.add_argument("--hours", type=float, nargs="+", default=None,
                   help="output time(s) to extract (default 6; with --run 6 24)")
    p.add_argument("--output", type=Path, required=True,
                   help="the .npz to write (with --run: the folder for extract.npz + input.nml)")
    p.add_argument("--fields", nargs="+", default=None, metavar="NAME[:H1,H2]",
                   help="with --run of a 3-D run: the fields to extract, each at every one of "
                   "--hours or at the hours after its colon (default: all of "
                   f"{', '.join(FIELDS_3D_RUN)}, and of a non-hydrostatic run "
                   f"{', '.join(FIELDS_NONHYDROSTATIC)}; the D-grid winds at 0 and the run's end)")
    p.add_argument("--force", action="store_true", help="replace an existing output")
    args = p.parse_args(argv)
    command = shlex.join(["python", "-m", "fv3core.validation.extract", *argv])
    try:
        if args.run is not None and is_3d_run(FV3Reference(args.run)):
            run = FV3Reference(args.run)
            hours = tuple(args.hours) if args.hours else (0.0, 6.0, 24.0)
            ends = ",".join(f"{h:g}" for h in hours if h in (0.0, run.run_hours))
            names = FIELDS_3D_RUN + (tuple(FIELDS_NONHYDROSTATIC) if not is_hydrostatic_run(run) else ())
            specs = tuple(args.fields) if args.fields else tuple(
                n if n not in DGRID else f"{n}:{ends}" for n in names
                if n not in DGRID or ends)  # fmt: skip
            out = write_3d_run_extract(run, args.output, fields=parse_field_specs(specs, hours),
                                       t0=args.t0, command=command, overwrite=args.force)  # fmt: skip
        elif args.run is not None:
            if args.fields:
                p.error("--fields needs --run of a 3-D run")
            hours = tuple(args.hours) if args.hours else (6.0, 24.0)
            out = write_run_extract(FV3Reference(args.run), args.output, hours=hours,
                                    t0=args.t0, command=command, overwrite=args.force)  # fmt: skip
        else:
            if args.t0 is not None or (args.hours and len(args.hours) != 1):
                p.error("--t0 and several --hours need --run")
            folder = args.reference if args.reference is not None else (
                reference_root() / "tc2_C24_d1")  # fmt: skip
            out = write_extract(FV3Reference(folder), args.output,
                                hours=args.hours[0] if args.hours else 6.0, command=command,
                                overwrite=args.force)  # fmt: skip
    except FV3ReferenceError as exc:
        print(f"FV3ReferenceError: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
