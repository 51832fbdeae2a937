"""GFDL's Fortran FV3 shallow-water reference runs (``../shared/fv3-reference/<run>/``, described
in its README.md) read into fv3core's conventions.

One run folder holds ``input.nml``, ``norms.txt`` (the SWNORMS/SWINV lines), and FMS netCDF files
per cube tile (``grid_spec``, ``atmos_static``, ``atmos_out`` ``.tile1..6.nc``, all float64).
:class:`FV3Reference` turns them into global ``(6, N, N)`` arrays indexed ``[tile, i, j]`` like
every fv3core field: the files are ``(grid_yt, grid_xt) = (j, i)`` and their tile 1..6 is
fv3core's tile 0..5.

    from fv3core.validation import FV3Reference
    ref = FV3Reference("../shared/fv3-reference/tc2_C24_d1")
    grid, start = ref.grid(), ref.initial()
    later = ref.output(6.0)                        # hours
    ref.printed_norms()["h_l2"]                     # one value per printed line (6-hourly)
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from fv3core.errors import FV3ReferenceError
from fv3core.validation.norms import ALL_NAMES, INVARIANT_NAMES, NORM_NAMES, ShallowWaterFields

#: where the reference runs live in this project's checkout layout (``../shared`` of the repo);
#: the environment variable ``STRATOFLOW_FV3_REFERENCE`` names another folder
DEFAULT_ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "fv3-reference"
TILES = 6
KINDS = ("grid_spec", "atmos_static", "atmos_out")


def reference_root() -> Path:
    """The folder of the reference runs: ``$STRATOFLOW_FV3_REFERENCE`` or :data:`DEFAULT_ROOT`."""
    env = os.environ.get("STRATOFLOW_FV3_REFERENCE")
    return Path(env) if env else DEFAULT_ROOT


def reference_runs(root: str | Path | None = None) -> list[FV3Reference]:
    """Every run folder (one with an ``input.nml``) under ``root``, sorted by name."""
    root = Path(root) if root is not None else reference_root()
    if not root.is_dir():
        raise FV3ReferenceError(
            f"reference folder {root} does not exist: set STRATOFLOW_FV3_REFERENCE or pass the "
            f"folder that holds the tc2_C<N>_d<days> runs"
        )
    return [FV3Reference(p) for p in sorted(root.iterdir()) if (p / "input.nml").is_file()]


@dataclass(frozen=True)
class ReferenceGrid:
    """The reference's grid (``grid_spec``): cell corners ``corner_lon``, ``corner_lat``
    (6, N+1, N+1) and centres ``lon``, ``lat`` (6, N, N) in degrees, ``area`` (6, N, N) in m^2."""

    corner_lon: np.ndarray
    corner_lat: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    area: np.ndarray

    @property
    def resolution(self) -> int:
        return int(self.area.shape[1])


@dataclass(frozen=True)
class ReferenceState:
    """The reference's state at ``hours``: ``depth`` D (m), ``surface`` hs (m), A-grid
    eastward/northward winds ``u``, ``v`` (m/s), relative ``vorticity`` (1/s, cell mean of
    the D-grid circulation; ``None`` at t = 0, which the files do not hold)."""

    hours: float
    depth: np.ndarray
    surface: np.ndarray
    u: np.ndarray
    v: np.ndarray
    vorticity: np.ndarray | None = None

    @property
    def height(self) -> np.ndarray:
        """Free-surface height H = D + hs (m)."""
        return self.depth + self.surface

    def fields(self, f0: np.ndarray | None = None) -> ShallowWaterFields:
        """As :class:`~fv3core.validation.norms.ShallowWaterFields` (with the absolute
        vorticity ``vorticity + f0`` when both are known)."""
        if self.vorticity is not None and f0 is not None:
            return ShallowWaterFields.from_relative_vorticity(self.depth, self.surface, self.u,
                                                              self.v, self.vorticity, f0)  # fmt: skip
        return ShallowWaterFields(self.depth, self.surface, self.u, self.v)


@dataclass(frozen=True)
class NormTable:
    """The printed SWNORMS/SWINV lines of a run: ``hours`` (one per printed time) and one
    float64 array per quantity of :data:`~fv3core.validation.norms.ALL_NAMES` (``h_l1`` ...
    ``enstr_n``, ``Hmin``, ``Hmax``, ``mass``, ``energy``, ``enstrophy``); ``lines`` holds the
    printed text per time (SWNORMS and SWINV line) for digit-exact comparisons."""

    hours: np.ndarray
    values: dict[str, np.ndarray]
    source: Path
    lines: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"{self.source}: no quantity {name!r}; there are {list(self.values)}"
                           ) from None  # fmt: skip

    def __len__(self) -> int:
        return len(self.hours)

    def index(self, hours: float) -> int:
        hits = np.flatnonzero(np.isclose(self.hours, hours, rtol=0.0, atol=1e-6))
        if not hits.size:
            raise FV3ReferenceError(f"{self.source}: no norms printed at {hours:g} h; printed "
                                    f"at {[float(h) for h in self.hours]} h")  # fmt: skip
        return int(hits[0])

    def at(self, hours: float) -> dict[str, float]:
        """The printed values at ``hours``."""
        i = self.index(hours)
        return {name: float(a[i]) for name, a in self.values.items()}

    def printed(self, hours: float) -> dict[str, str]:
        """The printed text of each value at ``hours`` (16 significant digits)."""
        i = self.index(hours)
        return {**_fields(self.lines[i][0]), **_fields(self.lines[i][1])}

    def rows(self) -> Iterator[tuple[float, dict[str, float]]]:
        for h in self.hours:
            yield float(h), self.at(float(h))


class FV3Reference:
    """One reference run folder (e.g. ``tc2_C24_d1``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise FV3ReferenceError(f"reference run folder {self.path} does not exist")
        self.name = self.path.name

    def __repr__(self) -> str:
        return f"FV3Reference({str(self.path)!r})"

    # -- namelist -------------------------------------------------------------------------------
    @cached_property
    def namelist_text(self) -> str:
        """The run's ``input.nml``, unparsed."""
        return self._file("input.nml").read_text()

    @cached_property
    def namelist(self) -> dict[str, dict[str, Any]]:
        """The few scalar settings of ``input.nml`` as ``{group: {key: value}}`` (a minimal
        reader for this module's needs: numbers, logicals, strings; arrays as tuples);
        ``fv3core.namelist`` is the full reader."""
        return read_namelist_values(self.namelist_text, source=self.path / "input.nml")

    def setting(self, group: str, key: str) -> Any:
        """``input.nml``'s ``key`` of ``&group`` (case-insensitive)."""
        try:
            return self.namelist[group.lower()][key.lower()]
        except KeyError:
            raise FV3ReferenceError(
                f"{self.path / 'input.nml'}: no {key} in &{group}") from None  # fmt: skip

    @property
    def resolution(self) -> int:
        """C<N>: ``npx - 1``."""
        return int(self.setting("fv_core_nml", "npx")) - 1

    @property
    def run_hours(self) -> float:
        """Length of the run: ``days``, ``hours``, ``minutes``, ``seconds`` of ``&main_nml``."""
        main = self.namelist.get("main_nml", {})
        return (24.0 * float(main.get("days", 0)) + float(main.get("hours", 0))
                + float(main.get("minutes", 0)) / 60.0 + float(main.get("seconds", 0)) / 3600.0)

    # -- netCDF ---------------------------------------------------------------------------------
    def files(self) -> list[Path]:
        """Every input file this reader uses (namelist, norms, the netCDF tiles)."""
        names = ["input.nml", "norms.txt"] + [f"{k}.tile{t}.nc" for k in KINDS
                                              for t in range(1, TILES + 1)]  # fmt: skip
        return [self._file(n) for n in names]

    def grid(self) -> ReferenceGrid:
        """Corners, centres and areas of the cells (``grid_spec``)."""
        return self._grid

    @cached_property
    def _grid(self) -> ReferenceGrid:
        g = self._read("grid_spec", ("grid_lon", "grid_lat", "grid_lont", "grid_latt", "area"))
        return ReferenceGrid(g["grid_lon"], g["grid_lat"], g["grid_lont"], g["grid_latt"],
                             g["area"])  # fmt: skip

    def initial(self) -> ReferenceState:
        """The state at t = 0 (``atmos_static``: ``ps_ic`` = depth D0, ``zsurf``, ``ua_ic``,
        ``va_ic``)."""
        return self._initial

    @cached_property
    def _initial(self) -> ReferenceState:
        s = self._read("atmos_static", ("zsurf", "ps_ic", "ua_ic", "va_ic"))
        return ReferenceState(0.0, s["ps_ic"], s["zsurf"], s["ua_ic"], s["va_ic"])

    def output_times(self) -> tuple[float, ...]:
        """Model times of the ``atmos_out`` records in hours (the first is one output interval
        after t = 0; t = 0 is :meth:`initial`)."""
        return tuple(float(t) for t in self._out[0])

    def output(self, hours: float) -> ReferenceState:
        """The state at ``hours`` from ``atmos_out``: ``ps`` is the depth D = delp/g in m
        (despite its "Pa" attribute), ``ucomp``/``vcomp`` the A-grid winds, ``vort`` the
        relative vorticity."""
        times, data = self._out
        hits = np.flatnonzero(np.isclose(times, hours, rtol=0.0, atol=1e-6))
        if not hits.size:
            raise FV3ReferenceError(
                f"{self._file('atmos_out.tile1.nc')}: no output at {hours:g} h; the file has "
                f"{[float(t) for t in times]} h"
            )
        k = int(hits[0])
        return ReferenceState(float(times[k]), data["ps"][k], self.initial().surface,
                              data["ucomp"][k], data["vcomp"][k], data["vort"][k])  # fmt: skip

    def printed_norms(self) -> NormTable:
        """``norms.txt`` as a table (times in hours)."""
        return parse_norms(self._file("norms.txt"))

    # -- internals ------------------------------------------------------------------------------
    def _file(self, name: str) -> Path:
        path = self.path / name
        if not path.is_file():
            raise FV3ReferenceError(
                f"{path} is missing: a reference run folder holds input.nml, norms.txt and "
                f"grid_spec/atmos_static/atmos_out.tile1..6.nc (see the reference README)"
            )
        return path

    @cached_property
    def _out(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        names = ("ps", "ucomp", "vcomp", "vort")
        times = None
        data: dict[str, list[np.ndarray]] = {n: [] for n in names}
        for t in range(1, TILES + 1):
            path = self._file(f"atmos_out.tile{t}.nc")
            tile_times, arrays = _read_tile(path, names, timed=True)
            if times is None:
                times = tile_times
            elif not np.array_equal(times, tile_times):
                raise FV3ReferenceError(f"{path}: times {tile_times} differ from tile 1's {times}")
            for n in names:
                data[n].append(arrays[n])
        assert times is not None
        # days -> hours; fields (6, time, i, j) -> (time, 6, i, j)
        return times * 24.0, {n: np.stack(a, axis=1) for n, a in data.items()}

    def _read(self, kind: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        tiles = [_read_tile(self._file(f"{kind}.tile{t}.nc"), names)[1]
                 for t in range(1, TILES + 1)]  # fmt: skip
        return {n: np.stack([tile[n] for tile in tiles]) for n in names}


def _read_tile(path: Path, names: tuple[str, ...], timed: bool = False
               ) -> tuple[np.ndarray, dict[str, np.ndarray]]:  # fmt: skip
    """``names`` of one tile file as float64 ``[i, j]`` arrays (``[time, i, j]`` if ``timed``),
    values exactly as stored (no masking or scaling); the times in days."""
    import xarray as xr

    try:
        ds = xr.open_dataset(path, decode_times=False, mask_and_scale=False)
    except (OSError, ValueError) as exc:
        raise FV3ReferenceError(f"cannot read {path} as netCDF: {exc}") from exc
    with ds:
        out: dict[str, np.ndarray] = {}
        for name in names:
            if name not in ds.variables:
                raise FV3ReferenceError(
                    f"{path}: no variable {name!r}; it has {sorted(map(str, ds.data_vars))}"
                )
            var = ds[name]
            dims = [d for d in var.dims if not (d in ("pfull", "phalf") and var.sizes[d] == 1)]
            horizontal = tuple(dims[-2:])
            if horizontal not in (("grid_yt", "grid_xt"), ("grid_y", "grid_x")):
                raise FV3ReferenceError(
                    f"{path}: variable {name!r} has dims {var.dims}, expected (..., grid_yt, "
                    f"grid_xt) or (..., grid_y, grid_x)"
                )
            if timed and dims[0] != "time":
                raise FV3ReferenceError(f"{path}: variable {name!r} has no time axis: {var.dims}")
            a = np.asarray(var.values, dtype=np.float64).reshape([var.sizes[d] for d in dims])
            fill = var.attrs.get("_FillValue", var.attrs.get("missing_value"))
            if fill is not None and np.any(a == fill):
                raise FV3ReferenceError(f"{path}: variable {name!r} has missing values ({fill})")
            if not np.all(np.isfinite(a)):
                raise FV3ReferenceError(f"{path}: variable {name!r} has non-finite values")
            out[name] = np.swapaxes(a, -1, -2).copy()  # (j, i) -> [i, j]
        times = np.asarray(ds["time"].values, dtype=np.float64) if timed else np.zeros(0)
    return times, out


_FIELD = re.compile(r"(\w+)=\s*(\S+)")


def _fields(line: str) -> dict[str, str]:
    return dict(_FIELD.findall(line))


def parse_norms(path: str | Path) -> NormTable:
    """Parse a ``norms.txt``: per printed time a ``SWNORMS day= ... h_l1= ... enstr_n=`` line
    followed by a ``SWINV day= ... Hmin= ... enstrophy=`` line (Fortran ``ES`` numbers)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise FV3ReferenceError(f"cannot read {path}: {exc}") from exc
    expect = {"SWNORMS": ("day",) + NORM_NAMES, "SWINV": ("day",) + INVARIANT_NAMES}
    rows: dict[float, dict[str, float]] = {}
    lines: dict[float, dict[str, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words:
            continue
        kind = words[0]
        where = f"{path}, line {number}"
        if kind not in expect:
            raise FV3ReferenceError(f"{where}: expected a SWNORMS or SWINV line, got {line!r}")
        values = _fields(line)
        if tuple(values) != expect[kind]:
            raise FV3ReferenceError(
                f"{where}: a {kind} line has the fields {list(expect[kind])}, this one "
                f"{list(values)}"
            )
        try:
            numbers = {k: float(v.replace("D", "E")) for k, v in values.items()}
        except ValueError as exc:
            raise FV3ReferenceError(f"{where}: not a number: {exc}") from exc
        hours = numbers.pop("day") * 24.0
        key = round(hours, 6)
        if key in rows and kind in lines[key]:
            raise FV3ReferenceError(f"{where}: a second {kind} line for day {values['day']}")
        rows.setdefault(key, {}).update(numbers)
        lines.setdefault(key, {})[kind] = line
    incomplete = [h for h, r in rows.items() if set(r) != set(ALL_NAMES)]
    if incomplete:
        raise FV3ReferenceError(f"{path}: the times {incomplete} h lack their SWNORMS or "
                                f"SWINV line")  # fmt: skip
    if not rows:
        raise FV3ReferenceError(f"{path} holds no SWNORMS/SWINV lines")
    hours = np.array(sorted(rows))
    values = {n: np.array([rows[h][n] for h in hours]) for n in ALL_NAMES}
    texts = tuple((lines[h]["SWNORMS"], lines[h]["SWINV"]) for h in hours)
    return NormTable(hours, values, path, texts)


_VALUE_LOGICAL = re.compile(r"^\.?(t|true|f|false)\.?$", re.IGNORECASE)


def read_namelist_values(text: str, source: str | Path = "namelist") -> dict[str, dict[str, Any]]:
    """A minimal Fortran namelist reader: ``&group`` ... ``/`` blocks of ``key = value`` lines
    (``!`` comments; integers, reals, logicals, quoted strings; comma lists as tuples)."""
    groups: dict[str, dict[str, Any]] = {}
    group: dict[str, Any] | None = None
    key: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).strip()
        if not line:
            continue
        if line.startswith("&"):
            group = groups.setdefault(line[1:].split()[0].lower(), {})
            key = None
            continue
        if line.startswith("/"):
            group, key = None, None
            continue
        if group is None:
            raise FV3ReferenceError(f"{source}, line {number}: {raw.strip()!r} outside a "
                                    f"&group ... / block")  # fmt: skip
        if "=" in line:
            name, _, value = line.partition("=")
            key = name.strip().lower()
            group[key] = _parse_values(value)
        elif key is not None:  # continuation of a list
            prev = group[key] if isinstance(group[key], tuple) else (group[key],)
            group[key] = prev + tuple(_as_tuple(_parse_values(line)))
    return groups


def _strip_comment(line: str) -> str:
    out, quote = [], None
    for ch in line:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "!":
            break
        out.append(ch)
    return "".join(out)


def _as_tuple(v: Any) -> tuple[Any, ...]:
    return v if isinstance(v, tuple) else (v,)


def _parse_values(text: str) -> Any:
    items, item, quote = [], [], None
    for ch in text.strip():
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            items.append("".join(item).strip())
            item = []
            continue
        item.append(ch)
    items = [s for s in [*items, "".join(item).strip()] if s]
    values = tuple(_parse_scalar(s) for s in items)
    return values[0] if len(values) == 1 else values


def _parse_scalar(s: str) -> Any:
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    if _VALUE_LOGICAL.match(s):
        return s.strip(".").lower().startswith("t")
    try:
        return int(s)
    except ValueError:
        pass
    try:
        return float(s.lower().replace("d", "e"))
    except ValueError:
        return s
