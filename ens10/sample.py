"""Sample ENS-10 data with the real schema and a known truth.

For each initialisation and target (z500, t850, t2m) the generator draws a predictable anomaly
``m``, a true predictive std ``sigma`` (smooth random fields) and the ERA5 'truth', and ten 48 h
members. Two truth processes (``SampleConfig.truth``):

``flow`` (default): the answer is not built into any baseline family.
    * a weather regime ``rho`` in [-1, 1] (a large-scale smooth field per initialisation), seen by
      the models only through the U (and U10M) ensemble mean, which it shifts;
    * the ensemble sees a blurred anomaly ``S(m)`` (a damped, smoothed forecast: the missing
      detail ``m - S(m)`` is recoverable only from a neighbourhood, by spatial models);
    * flow-dependent true spread ``sigma = sigma_base (0.6 + 0.4 |grad S(m)| / mean) (1 + 0.25 rho)
      exp(0.3 xi)`` and bias ``bias(s) + 0.5 A rho``;
    * a skewed truth ``y = clim + m + sigma e``: ``e`` is a standardised two-piece normal whose
      right/left scale ratio depends on the target and the regime, spatially correlated (its
      uniform scores come from a smooth Gaussian field);
    * member-dependent spread errors ``x_k = clim + bias + S(m) + r(s) (1 - 0.2 rho) sigma
      lambda_k z_k`` with fixed ``lambda_k`` from 0.6 to 1.4 and ``z_k`` standardised over the
      members, so the ensemble std is a noisy, regime-biased estimate of ``sigma``.
    The oracle is the true predictive distribution: the two-piece normal with mean ``clim + m``,
    std ``sigma`` and the scale ratio (``SAMPLE_{target}_oracle.nc`` holds ``mu``, ``sigma``,
    ``loc``, ``scale_left``, ``scale_right``); its expected CRPS is that distribution's.
``local-emos``: ``y = clim + m + sigma e`` with Gaussian ``e`` and
    ``x_k = clim + bias(s) + m + r(s) sigma z_k``: the ensemble mean is exactly ``clim + bias + m``
    and its std exactly ``r sigma``, so the oracle ``N(mean - bias, (std / r)^2)`` is a member of
    the per-grid-point EMOS family (a check that training reaches a known optimum), expected
    CRPS ``sigma / sqrt(pi)``.

In both, the raw ensemble is biased by ``bias(s)`` and under-dispersive by ``r(s)`` in [0.5, 0.8],
smooth functions of location. Other variables are climatology plus smooth noise carrying no
information about the truth (under ``flow`` U and U10M also carry the regime). SST is NaN over
an analytic land mask.

``make_sample`` writes both layouts from the same deterministic generator:
``OUT/grib/output.{pl,sfc}.2018MMDD`` (GRIB1 via ecCodes templates, as distributed) and
``OUT/netcdf/`` (the preprocessed layout, ERA5 targets, member and EFI files).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr
from scipy.ndimage import gaussian_filter
from scipy.special import erf
from tqdm import tqdm

from ens10 import schema
from ens10.errors import ENS10DataError
from ens10.grid import FINEST_GRID, check_grid, grid_axes
from ens10.io.atomic import check_output_dir, write_netcdf
from ens10.io.layout import compute_efi, time_coord, variable_attrs, write_efi, write_members
from ens10.metrics.two_piece import TwoPieceNormal

log = logging.getLogger(__name__)

G = 9.80665


@dataclass(frozen=True)
class TargetTruth:
    """Generator parameters of one target (physical units)."""

    anomaly_std: float  # std of the predictable anomaly m
    sigma0: float  # typical true predictive std
    bias_amplitude: float
    phase: float  # shifts the spatial patterns between targets
    skew: float  # sign and size of the truth's skewness under the 'flow' process


#: truth processes of the generator (see the module docstring)
TRUTH_PROCESSES = ("flow", "local-emos")
#: member spread factors lambda_k of the 'flow' process
SPREAD_FACTORS = np.linspace(0.6, 1.4, schema.MEMBERS)
#: how far the regime shifts the U / U10M ensemble mean (m/s) under the 'flow' process
REGIME_WIND = {"u": 8.0, "u10": 5.0}


TRUTH: dict[str, TargetTruth] = {
    "z500": TargetTruth(anomaly_std=700.0, sigma0=220.0, bias_amplitude=250.0, phase=0.0, skew=0.5),
    "t850": TargetTruth(anomaly_std=3.0, sigma0=1.2, bias_amplitude=1.5, phase=1.3, skew=0.8),
    "t2m": TargetTruth(anomaly_std=3.5, sigma0=1.5, bias_amplitude=2.0, phase=2.6, skew=-1.0),
}


@dataclass(frozen=True)
class SampleConfig:
    """What ``make_sample`` writes.

    grid: spacing in degrees (ENS-10 itself: 0.5). years: inclusive range of initialisation
    years. n_dates: calendar dates (of the 105 Mondays/Thursdays) per year, spread over the year.
    grib_dates / grib_years / grib_levels: the part also written as raw GRIB (cfgrib indexing
    costs ~2 ms per message, so the default GRIB part is small; None = everything).
    truth: the truth process, ``flow`` or ``local-emos`` (module docstring).
    """

    grid: float = 5.0
    years: tuple[int, int] = schema.YEARS
    n_dates: int = 20
    seed: int = 2022
    grib_dates: int | None = 2
    grib_years: tuple[int, int] | None = None
    grib_levels: tuple[int, ...] = schema.PRESSURE_LEVELS
    layouts: tuple[str, ...] = ("grib", "netcdf")
    efi_bins: int = 100
    climate_years: tuple[int, int] = schema.SPLITS["train"]
    truth: str = "flow"

    def __post_init__(self) -> None:
        check_grid(self.grid, finest=FINEST_GRID)
        if self.truth not in TRUTH_PROCESSES:
            raise ENS10DataError(f"truth={self.truth!r}: choose one of {', '.join(TRUTH_PROCESSES)}")
        y0, y1 = self.years
        if not (1900 <= y0 <= y1 <= 2100):
            raise ENS10DataError(
                f"years {self.years}: give 'FIRST-LAST' with 1900 <= FIRST <= LAST <= 2100"
            )
        if self.grib_years is not None and not (y0 <= self.grib_years[0] <= self.grib_years[1] <= y1):
            raise ENS10DataError(
                f"grib_years {self.grib_years} must lie within years {self.years}"
            )
        if not 1 <= self.n_dates <= len(schema.calendar_dates()):
            raise ENS10DataError(f"n_dates={self.n_dates}: choose 1..105")
        if self.grib_dates is not None and self.grib_dates < 1:
            raise ENS10DataError(f"grib_dates={self.grib_dates}: choose >= 1, or None for all")
        if self.seed < 0:
            raise ENS10DataError(f"seed={self.seed}: give a whole number >= 0")
        bad = set(self.grib_levels) - set(schema.PRESSURE_LEVELS)
        if bad:
            raise ENS10DataError(f"grib_levels {sorted(bad)} are not ENS-10 levels {schema.PRESSURE_LEVELS}")
        if not self.grib_levels or len(set(self.grib_levels)) != len(self.grib_levels):
            raise ENS10DataError(f"grib_levels {self.grib_levels}: give each level once")
        unknown = set(self.layouts) - {"grib", "netcdf"}
        if unknown or not self.layouts:
            raise ENS10DataError(f"layouts {sorted(unknown)}: choose from grib, netcdf")

    @property
    def dates(self) -> list[str]:
        allowed = schema.calendar_dates()
        idx = np.unique(np.round(np.linspace(0, len(allowed) - 1, self.n_dates)).astype(int))
        return [allowed[i] for i in idx]

    @property
    def year_list(self) -> list[int]:
        return list(range(self.years[0], self.years[1] + 1))


def parse_years(text: str) -> tuple[int, int]:
    """'1998-2017' or '2016' -> (first, last)."""
    try:
        parts = [int(p) for p in str(text).split("-")]
    except ValueError:
        raise ENS10DataError(f"years {text!r}: write FIRST-LAST, e.g. 1998-2017") from None
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or parts[0] > parts[1]:
        raise ENS10DataError(f"years {text!r}: write FIRST-LAST with FIRST <= LAST")
    return parts[0], parts[1]


def init_time(year: int, mmdd: str) -> dt.datetime:
    return dt.datetime(year, int(mmdd[:2]), int(mmdd[2:]))


class SampleGenerator:
    """Deterministic fields of the sample: every value depends only on (seed, what, year, date),
    so the GRIB and netCDF writers can each regenerate exactly the same numbers."""

    def __init__(self, config: SampleConfig) -> None:
        self.config = config
        self.lat, self.lon = grid_axes(config.grid)
        self.lat2 = np.deg2rad(self.lat)[:, None] * np.ones((1, self.lon.size))
        self.lon2 = np.deg2rad(self.lon)[None, :] * np.ones((self.lat.size, 1))
        self.smooth_cells = max(7.5 / config.grid, 0.5)
        la, lo = self.lat2, self.lon2
        self.land = (np.sin(2 * lo) * np.cos(la) + 0.4 * np.sin(3 * la + 0.5)) > 0.45
        self.bias = {}
        self.ratio = {}
        self.sigma_base = {}
        for name, p in TRUTH.items():
            self.bias[name] = p.bias_amplitude * (
                0.7 * np.sin(la + p.phase) * np.cos(lo - p.phase)
                + 0.5 * np.cos(2 * la) * np.sin(2 * lo + p.phase)
            )
            self.ratio[name] = 0.5 + 0.15 * (1.0 + np.sin(2 * la + p.phase) * np.cos(lo + p.phase))
            self.sigma_base[name] = p.sigma0 * (0.7 + 0.6 * np.cos(la) ** 2)

    # -- random streams -------------------------------------------------------------------
    def _rng(self, year: int, mmdd: str, *key: int) -> np.random.Generator:
        return np.random.default_rng([self.config.seed, year, int(mmdd), *key])

    def _smooth(self, rng: np.random.Generator, n: int | None = None, scale: float = 1.0) -> np.ndarray:
        """Standardised smooth random field(s): white noise under a Gaussian filter of
        ``scale`` times the generator's correlation length (periodic in longitude)."""
        shape = (self.lat.size, self.lon.size) if n is None else (n, self.lat.size, self.lon.size)
        return self._standardise(self._blur(rng.standard_normal(shape), scale))

    def _blur(self, field: np.ndarray, scale: float) -> np.ndarray:
        s = scale * self.smooth_cells
        lead = field.ndim - 2
        return gaussian_filter(field, sigma=(0,) * lead + (s, s),
                               mode=("nearest",) * (lead + 1) + ("wrap",))

    @staticmethod
    def _standardise(f: np.ndarray) -> np.ndarray:
        axes = (-2, -1)
        f = f - f.mean(axis=axes, keepdims=True)
        return f / f.std(axis=axes, keepdims=True)

    @staticmethod
    def _standardised(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        z = rng.standard_normal((schema.MEMBERS, *shape))
        z -= z.mean(axis=0)
        return z / z.std(axis=0)

    # -- climatology ----------------------------------------------------------------------
    def climatology(self, var: str, level: int | None, valid: dt.datetime) -> np.ndarray:
        la, lo = self.lat2, self.lon2
        season = np.cos(2 * np.pi * (valid.timetuple().tm_yday - 15) / 365.25) * np.sin(la)
        c2 = np.cos(la) ** 2
        p = float(level or 1000)
        if var == "z":
            return G * 7300.0 * np.log(1013.0 / p) + 3500.0 * (c2 - 0.5) + 600.0 * season
        if var in ("t", "t2m", "skt", "sst"):
            base = 288.0 * (p / 1000.0) ** 0.19 if var == "t" else 288.0
            out = base + 28.0 * (c2 - 0.5) + 9.0 * season + 2.0 * np.cos(lo)
            return out + (1.0 if var == "skt" else 0.0)
        if var == "q":
            return 0.014 * (p / 1000.0) ** 3 * c2 + 1e-6
        if var in ("tcw", "tcwv"):
            return 28.0 * c2 + 2.0
        if var == "u":
            return 15.0 * np.cos(2 * la) * (1000.0 / p) ** 0.3
        if var in ("cp", "tp"):
            return 0.002 * c2
        if var == "msl":
            return 101300.0 - 1500.0 * np.cos(4 * la)
        if var == "tcc":
            return 0.5 + 0.2 * np.cos(2 * la)
        return np.zeros_like(la)  # w, d, v, u10, v10

    _NOISE = {
        "z": 400.0, "t": 2.5, "q": 0.002, "w": 0.3, "d": 2e-5, "u": 5.0, "v": 5.0, "sst": 1.0,
        "tcw": 5.0, "tcwv": 5.0, "cp": 0.001, "msl": 800.0, "tcc": 0.2, "u10": 3.0, "v10": 3.0,
        "t2m": 3.0, "tp": 0.002, "skt": 3.0,
    }

    # -- the target process ---------------------------------------------------------------
    def _target_of(self, var: str, level: int | None) -> str | None:
        for name, t in schema.TARGETS.items():
            if t.variable == var and t.level == level:
                return name
        return None

    def regime(self, year: int, mmdd: str) -> np.ndarray:
        """The weather regime rho in [-1, 1] of one initialisation (a large-scale field)."""
        return np.tanh(1.5 * self._smooth(self._rng(year, mmdd, 3), scale=3.0))

    def state(self, target: str, year: int, mmdd: str) -> dict[str, np.ndarray]:
        """The target process of one initialisation: ``m`` (anomaly), ``sigma`` (true
        predictive std), ``seen`` (the anomaly the ensemble sees), ``bias`` (total mean error),
        ``ratio`` (ensemble std / sigma), ``skew`` (right/left scale ratio of the truth) and
        ``u`` (the truth's uniform scores)."""
        k = list(schema.TARGETS).index(target)
        rng = self._rng(year, mmdd, 1, k)
        p = TRUTH[target]
        m = p.anomaly_std * self._smooth(rng)
        xi = self._smooth(rng)
        if self.config.truth == "local-emos":
            e = rng.standard_normal(m.shape)
            return {"m": m, "sigma": self.sigma_base[target] * np.exp(0.3 * xi), "seen": m,
                    "bias": self.bias[target], "ratio": self.ratio[target],
                    "skew": np.ones_like(m), "u": _norm_cdf(e)}
        rho = self.regime(year, mmdd)
        seen = self._blur(m, 0.6)
        dlat = np.gradient(seen, axis=0)
        dlon = 0.5 * (np.roll(seen, -1, axis=1) - np.roll(seen, 1, axis=1))
        grad = np.hypot(dlat, dlon)
        flow = 0.6 + 0.4 * grad / grad.mean()
        sigma = self.sigma_base[target] * np.exp(0.3 * xi) * flow * (1.0 + 0.25 * rho)
        return {
            "m": m, "sigma": sigma, "seen": seen,
            "bias": self.bias[target] + 0.5 * p.bias_amplitude * rho,
            "ratio": self.ratio[target] * (1.0 - 0.2 * rho),
            "skew": np.exp(p.skew * (0.5 + 0.3 * rho)),
            "u": _norm_cdf(self._smooth(rng, scale=0.5)),
        }

    def _centre(self, target: str, year: int, mmdd: str) -> np.ndarray:
        t = schema.TARGETS[target]
        valid = init_time(year, mmdd) + dt.timedelta(hours=schema.LEAD_TIME_H)
        return self.climatology(t.variable, t.level, valid)

    def oracle(self, target: str, year: int, mmdd: str) -> TwoPieceNormal:
        """The true predictive distribution of the target (Gaussian under ``local-emos``)."""
        s = self.state(target, year, mmdd)
        return TwoPieceNormal.from_moments(self._centre(target, year, mmdd) + s["m"], s["sigma"], s["skew"])

    def truth(self, target: str, year: int, mmdd: str) -> np.ndarray:
        return self.oracle(target, year, mmdd).ppf(self.state(target, year, mmdd)["u"])

    def members(self, var: str, level: int | None, step: int, year: int, mmdd: str) -> np.ndarray:
        """The 10 members (10, nlat, nlon) of a variable at a level (hPa; None: surface)."""
        valid = init_time(year, mmdd) + dt.timedelta(hours=step)
        clim = self.climatology(var, level, valid)
        kind = "sfc" if level is None else "pl"
        vkey = schema.VARIABLES[kind].index(var) + (100 if kind == "sfc" else 0)
        rng = self._rng(year, mmdd, 2, vkey, level or 0, step)
        z = self._standardised(rng, clim.shape)
        target = self._target_of(var, level)
        frac = step / schema.LEAD_TIME_H
        if target is not None:
            s = self.state(target, year, mmdd)
            spread = s["ratio"] * s["sigma"] * z
            if self.config.truth == "flow":
                spread = spread * SPREAD_FACTORS.reshape(-1, 1, 1)
            if step == schema.LEAD_TIME_H:
                out = clim + s["bias"] + s["seen"] + spread
            else:
                out = clim + frac * s["bias"] + (0.5 + 0.5 * frac) * s["seen"] + (0.2 + frac) * spread
        else:
            noise = self._NOISE[var] * ((1000.0 / level) ** 0.5 if var == "z" and level else 1.0)
            out = clim + noise * (self._smooth(rng) + (0.2 + 0.3 * frac) * z)
            if self.config.truth == "flow" and var in REGIME_WIND:
                out = out + REGIME_WIND[var] * self.regime(year, mmdd)
        if var in ("q", "tcw", "tcwv", "cp", "tp"):
            out = np.maximum(out, 0.0)
        elif var == "tcc":
            out = np.clip(out, 0.0, 1.0)
        elif var == "sst":
            out = np.where(self.land[None], np.nan, out)
        return out


def _norm_cdf(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + erf(z / np.sqrt(2.0)))


#: variables of SAMPLE_{target}_oracle.nc that describe the oracle distribution
ORACLE_FIELDS = {"mu": "mean", "sigma": "std", "loc": "mode (two-piece normal loc)",
                 "scale_left": "left scale", "scale_right": "right scale"}


# -- writers ------------------------------------------------------------------------------
def _coords(gen: SampleGenerator) -> dict:
    return {
        "lat": ("lat", gen.lat, {"units": "degrees_north", "standard_name": "latitude", "axis": "Y"}),
        "lon": ("lon", gen.lon, {"units": "degrees_east", "standard_name": "longitude", "axis": "X"}),
    }


def write_netcdf_layout(gen: SampleGenerator, out_dir: Path) -> list[Path]:
    """The preprocessed layout (what ``stratoflow ens10 preprocess`` makes of the raw files),
    the ERA5 targets, 48 h members of the targets, their EFI, and the generator's oracle."""
    cfg = gen.config
    pairs = sorted(((y, d) for y in cfg.year_list for d in cfg.dates), key=lambda p: init_time(*p))
    lead = dt.timedelta(hours=schema.LEAD_TIME_H)
    valid = [init_time(y, d) + lead for y, d in pairs]
    nt, shape = len(pairs), (gen.lat.size, gen.lon.size)
    levels = schema.PREPROCESSED_LEVELS
    stats = {
        (kind, stat, var): np.empty((nt, len(levels), *shape) if kind == "pl" else (nt, *shape), np.float32)
        for kind in ("pl", "sfc") for stat in ("mean", "std") for var in schema.VARIABLES[kind]
    }
    members = {t: np.empty((schema.MEMBERS, nt, *shape), np.float32) for t in schema.TARGETS}
    truth = {t: np.empty((nt, *shape), np.float32) for t in schema.TARGETS}
    oracle = {t: np.empty((5, nt, *shape), np.float32) for t in schema.TARGETS}
    for i, (year, mmdd) in enumerate(tqdm(pairs, desc="sample netCDF", unit="init", leave=False)):
        for kind in ("pl", "sfc"):
            for var in schema.VARIABLES[kind]:
                for j, lev in enumerate(levels if kind == "pl" else (None,)):
                    x = gen.members(var, lev, schema.LEAD_TIME_H, year, mmdd)
                    idx = (i, j) if kind == "pl" else (i,)
                    stats[kind, "mean", var][idx] = x.mean(axis=0)
                    stats[kind, "std", var][idx] = x.std(axis=0)
                    name = gen._target_of(var, lev)
                    if name is not None:
                        members[name][:, i] = x
        for t in schema.TARGETS:
            truth[t][i] = gen.truth(t, year, mmdd)
            o = gen.oracle(t, year, mmdd)
            oracle[t][:, i] = np.stack([o.mean, o.std, o.loc, o.scale_left, o.scale_right])
    written = []
    coords = _coords(gen) | {"time": time_coord(valid)}
    plev = ("plev", np.array(levels, dtype=np.float64) * 100.0,
            {"units": "Pa", "standard_name": "air_pressure", "positive": "down", "axis": "Z"})
    for kind in ("pl", "sfc"):
        dims = ("time", "plev", "lat", "lon") if kind == "pl" else ("time", "lat", "lon")
        for stat in ("mean", "std"):
            data = {
                schema.NETCDF_NAME[v]: (dims, stats[kind, stat, v], variable_attrs(v) | {"cell_methods": f"number: {stat}"})
                for v in schema.VARIABLES[kind]
            }
            ds = xr.Dataset(data, coords=coords | ({"plev": plev} if kind == "pl" else {}))
            ds.attrs = _global_attrs(f"ENS-10 48 h ensemble {stat} ({kind})", cfg)
            written.append(write_netcdf(ds, out_dir / schema.preprocessed_file_name(kind, stat)))
    for name, t in schema.TARGETS.items():
        if t.level is None:
            da = xr.DataArray(truth[name], dims=("time", "lat", "lon"))
        else:
            da = xr.DataArray(truth[name][:, None], dims=("time", "plev", "lat", "lon"),
                              coords={"plev": ("plev", [t.level * 100.0], {"units": "Pa"})})
        ds = xr.Dataset({t.era5_variable: da.assign_attrs(variable_attrs(t.variable))}, coords=coords)
        ds.attrs = _global_attrs(f"ERA5 stand-in for {name} (sample generator truth)", cfg)
        written.append(write_netcdf(ds, out_dir / t.era5_file))
        written.append(write_members(members[name], valid, gen.lat, gen.lon, name, out_dir, cfg))
        efi = compute_efi(members[name], [p[0] for p in pairs], [p[1] for p in pairs],
                          cfg.climate_years, cfg.efi_bins)
        written.append(write_efi(efi, valid, gen.lat, gen.lon, name, out_dir, cfg))
        ods = xr.Dataset(
            {
                **{key: (("time", "lat", "lon"), oracle[name][j], {"long_name": f"oracle predictive {what}"})
                   for j, (key, what) in enumerate(ORACLE_FIELDS.items())},
                "bias": (("lat", "lon"), gen.bias[name].astype(np.float32),
                         {"long_name": "bias of the raw 48 h ensemble (its static part under the flow truth)"}),
                "dispersion_ratio": (("lat", "lon"), gen.ratio[name].astype(np.float32),
                                     {"long_name": "raw ensemble std / true predictive std (static part)"}),
            },
            coords=coords,
        )
        ods.attrs = _global_attrs(f"sample generator oracle for {name}", cfg) | {
            "truth_process": cfg.truth,
            "distribution": "two-piece normal (mode loc, scales scale_left/scale_right; "
                            "Gaussian where they are equal)",
        }
        written.append(write_netcdf(ods, out_dir / schema.oracle_file_name(name)))
    return written


def _global_attrs(title: str, cfg: SampleConfig) -> dict:
    return {
        "title": title,
        "Conventions": "CF-1.8",
        "source": f"stratoflow ens10 make-sample (grid {cfg.grid} deg, seed {cfg.seed}, truth {cfg.truth})",
    }


def make_sample(
    out_dir: Path | str,
    grid: float = 5.0,
    years: tuple[int, int] | str = schema.YEARS,
    n_dates: int = 20,
    seed: int = 2022,
    grib_dates: int | None = 2,
    grib_years: tuple[int, int] | str | None = None,
    grib_levels: Sequence[int] = schema.PRESSURE_LEVELS,
    layouts: Sequence[str] = ("grib", "netcdf"),
    truth: str = "flow",
) -> Path:
    """Write a sample dataset to ``out_dir`` (``grib/`` and/or ``netcdf/``); returns ``out_dir``."""
    from ens10.io.grib_writer import write_grib_layout

    if isinstance(years, str):
        years = parse_years(years)
    if isinstance(grib_years, str):
        grib_years = parse_years(grib_years)
    cfg = SampleConfig(grid=grid, years=tuple(years), n_dates=n_dates, seed=seed,
                       grib_dates=grib_dates, grib_years=grib_years,
                       grib_levels=tuple(grib_levels), layouts=tuple(layouts), truth=truth)
    out = Path(out_dir)
    check_output_dir(out, "sample output folder")
    gen = SampleGenerator(cfg)
    if "grib" in cfg.layouts:
        files = write_grib_layout(gen, out / "grib")
        log.info("wrote %d GRIB files to %s", len(files), out / "grib")
    if "netcdf" in cfg.layouts:
        files = write_netcdf_layout(gen, out / "netcdf")
        log.info("wrote %d netCDF files to %s", len(files), out / "netcdf")
    return out
