"""The Jablonowski & Williamson (2006) acceptance runs of fv3core's 3-D core: the baroclinic
wave (FV3's ``test_case = 13``) and its balanced steady state (``test_case = 12``), set next to
GFDL's Fortran FV3 run on the same namelist and to themselves across resolutions.

    stratoflow bench fv3-jw06 --resolutions 48 --days 10 --backend gt:cpu_ifirst
    stratoflow bench fv3-jw06 --case baroclinic_steady --resolutions 48 --levels 30 --days 30
    python -m benchmarks.fv3_jw06 --render-only      # the page and plots from the saved runs

Each run is saved (``--runs-dir``, default ``.stratoflow_cache/jw06``) as an ``.npz`` with the
2-D fields (``ps``, ``t850``, ``u850``, ``v850``, ``vort850``) every model day and the
diagnostics every ``--every`` hours (ps min/max and where, FV3's printed extrema ``PS_max``,
``UA_min``, ..., JW06's l2 of the zonal-mean wind change, the dry-air-mass and total-energy
changes); the analysis reads the saved runs, so a page can be rebuilt without running again.

Where ``tests/fv3core/data/fortran/jw_C<N>_L<levels>`` holds a Fortran run of the wave, the run
takes that run's own ``input.nml`` (FV3's hydrostatic JW options) and is compared with it: ps,
t850 and vort850 at days 7, 9 and 10 (max and area-weighted l2 differences, the ps minimum and
its place) and FV3's printed extrema at every saved time.  Two resolutions N and 2N of one case
give the JW06 self-convergence: the l2 difference of ps on the 1-degree lon-lat grid.

Writes ``docs/fv3core/jw06.json``, the generated ``jw06`` block of docs/fv3core/baroclinic.md
and PNGs ``docs/fv3core/jw06_<run>_days.png`` (ps and vort850 at days 7, 9, 10, JW06's layout),
``jw06_<run>_fortran_days.png`` and ``jw06_<run>_series.png`` (ps minimum or the steady-state
l2 norm against day).  A fidelity measurement: it times the runs but is not a benchmark of speed
(``stratoflow bench fv3 --case baroclinic`` is).
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import BenchmarkError, git_revision, machine_info, shown_path, write_json
from benchmarks.common import markdown_table as _table
from fv3core.validation.baroclinic_norms import extrema, zonal_mean_wind_l2
from stencils.atomic import atomic_output, atomic_update_block

NAME = "fv3-jw06"
HELP = ("JW06 acceptance runs of FV3's 3-D core: the wave's ps at days 7/9/10 vs GFDL's Fortran "
        "FV3 and across resolutions, the steady state's zonal-wind l2, the budgets")  # fmt: skip
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "fv3core"
FORTRAN_DATA = ROOT / "tests" / "fv3core" / "data" / "fortran"
#: the 2-D fields saved every model day
HISTORY_FIELDS = ("ps", "t850", "u850", "v850", "vort850")
#: FV3's printed extrema compared with the Fortran run's prints
PRINTED = ("PS_max", "PS_min", "UA_max", "UA_min", "VA_max", "VA_min", "TA_max", "TA_min")
#: the days of JW06's figures
DAYS = (7.0, 9.0, 10.0)
log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--case", choices=("baroclinic", "baroclinic_steady"), default="baroclinic",
                   help="the wave (FV3's test_case 13, default) or the steady state (12)")
    p.add_argument("--resolutions", type=int, nargs="+", default=[48],
                   help="cubed-sphere C<N> of each run (default 48); N and 2N give the "
                   "self-convergence")  # fmt: skip
    p.add_argument("--levels", type=int, default=26, help="FV3's npz (default 26: FV3's JW levels)")
    p.add_argument("--days", type=float, default=None,
                   help="simulated days (default 10 for the wave, 30 for the steady state)")
    p.add_argument("--backend", default="gt:cpu_ifirst", help="GT4Py backend (default gt:cpu_ifirst)")
    p.add_argument("--n-split", type=int, default=None,
                   help="acoustic steps per remapping (default: FV3's C48 JW value 4, scaled "
                   "with the resolution to keep its acoustic Courant number: 8 at C96; runs "
                   "with a Fortran namelist take the namelist's)")  # fmt: skip
    p.add_argument("--non-hydrostatic", dest="hydrostatic", action="store_false",
                   help="run FV3's non-hydrostatic core (hydrostatic = .false.); compared with "
                   "the Fortran non-hydrostatic run jwnh_C<N>_L<levels> where one is committed")
    p.add_argument("--checker-tr", action="store_true",
                   help="carry FV3's checkerboard tracer (test_case_nml checker_tr): its mass "
                   "change and range over the run are reported")  # fmt: skip
    p.add_argument("--every", type=int, default=6, help="hours between saved diagnostics (default 6)")
    p.add_argument("--runs-dir", type=Path, default=ROOT / ".stratoflow_cache" / "jw06",
                   help="where the runs are saved (default .stratoflow_cache/jw06)")
    p.add_argument("--json", type=Path, default=DOCS / "jw06.json")
    p.add_argument("--markdown", type=Path, default=DOCS / "baroclinic.md",
                   help="the page whose generated 'jw06' block is rewritten")
    p.add_argument("--plots", type=Path, default=DOCS, help="folder of the PNGs (default docs/fv3core)")
    p.add_argument("--render-only", action="store_true",
                   help="run nothing: analyse every run saved in --runs-dir")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def run_name(case: str, resolution: int, levels: int, backend: str, hydrostatic: bool = True) -> str:
    core = "" if hydrostatic else "_nonhydrostatic"
    return f"{case}{core}_C{resolution}_L{levels}_{backend.replace(':', '-')}"


#: the folder prefix of the committed Fortran extracts of each case (and core)
FORTRAN_PREFIX = {("baroclinic", True): "jw", ("baroclinic_steady", True): "jws",
                  ("baroclinic", False): "jwnh"}  # fmt: skip


def fortran_run(case: str, resolution: int, levels: int, hydrostatic: bool = True) -> Path | None:
    """The committed Fortran extract of this run (the wave: ``jw_C<N>_L<levels>``, on the
    non-hydrostatic core ``jwnh_C<N>_L<levels>``; the steady state: ``jws_C<N>_L<levels>``), if
    there is one."""
    prefix = FORTRAN_PREFIX.get((case, hydrostatic))
    folder = FORTRAN_DATA / f"{prefix}_C{resolution}_L{levels}"
    return folder if prefix and (folder / "extract.npz").is_file() else None


def default_n_split(resolution: int) -> int:
    """FV3's C48 JW ``n_split`` (4 acoustic steps per 900 s remapping interval) scaled with the
    resolution, so that the acoustic Courant number stays that of C48 (and at least 4)."""
    return max(4, math.ceil(4 * resolution / 48))


def config_for(case: str, resolution: int, levels: int, days: float, backend: str, every: int,
               n_split: int | None = None, checker_tr: bool = False, hydrostatic: bool = True):  # fmt: skip
    """The run's FV3Config: the Fortran run's own namelist where there is one, else FV3's JW
    options (fv3core.config.BAROCLINIC_DEFAULTS) with ``n_split`` (default
    :func:`default_n_split`)."""
    from fv3core.config import FV3Config

    fortran = fortran_run(case, resolution, levels, hydrostatic)
    if fortran is not None:
        return FV3Config.from_namelist(fortran / "input.nml", backend=backend, days=days,
                                       print_freq=every, checker_tr=checker_tr)  # fmt: skip
    return FV3Config.from_dict({"case": case, "resolution": resolution, "nz": levels,
                                "days": days, "backend": backend, "print_freq": every,
                                "n_split": n_split or default_n_split(resolution),
                                "checker_tr": checker_tr, "hydrostatic": hydrostatic},
                               source=NAME)  # fmt: skip


def save_run(cfg, path: Path, progress: bool) -> Path:
    """Run ``cfg`` and save its daily 2-D fields, diagnostics and metadata to ``path`` (.npz)."""
    from fv3core.experiments.driver import run

    t0 = time.perf_counter()
    result = run(cfg, progress=progress, history_every_s=86400.0, history_fields=HISTORY_FIELDS)
    wall = time.perf_counter() - t0
    names = sorted({k for _, d in result.printouts for k, v in d.items() if np.isscalar(v)})
    arrays: dict[str, Any] = {
        "hours": np.array([t / 3600.0 for t, _ in result.history]),
        **{n: np.stack([f[n] for _, f in result.history]) for n in HISTORY_FIELDS},
        "printout_hours": np.array([t / 3600.0 for t, _ in result.printouts]),
        "printout_names": np.array(names),
        "printouts": np.array([[float(d.get(n, np.nan)) for n in names]
                               for _, d in result.printouts]),  # fmt: skip
        "lon": result.lon, "lat": result.lat, "area": result.area,
    }
    meta = {"config": cfg.to_dict(), "steps": result.steps, "dt": result.dt,
            "model_seconds": result.seconds, "wall_seconds": wall,
            "seconds_per_step": result.seconds / max(result.steps, 1),
            "diagnostics": {k: float(v) for k, v in result.diagnostics.items()},
            "revision": git_revision(), "machine": machine_info(),
            "command": shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])}  # fmt: skip
    arrays["metadata"] = np.array(json.dumps(meta))
    with atomic_output(path) as tmp, tmp.open("wb") as f:
        np.savez_compressed(f, **arrays)
    log.info("saved %s (%.0f s, %.2f s/step)", path, wall, meta["seconds_per_step"])
    return path


class SavedRun:
    """A run saved by :func:`save_run`."""

    def __init__(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as d:
            self.arrays = {k: d[k] for k in d.files}
        self.name = path.stem
        self.meta = json.loads(str(self.arrays.pop("metadata")))
        cfg = self.meta["config"]
        self.case, self.resolution, self.levels = cfg["case"], int(cfg["resolution"]), int(cfg["nz"])
        self.backend = cfg["backend"]
        self.hydrostatic = bool(cfg.get("hydrostatic", True))
        self.hours = self.arrays["hours"]
        names = [str(n) for n in self.arrays["printout_names"]]
        table = self.arrays["printouts"].reshape(len(self.arrays["printout_hours"]), len(names))
        self.series = {n: table[:, k] for k, n in enumerate(names)}
        self.series_hours = self.arrays["printout_hours"]

    def at(self, name: str, day: float) -> np.ndarray | None:
        hits = np.flatnonzero(np.abs(self.hours - 24.0 * day) < 1e-6)
        return self.arrays[name][hits[0]] if hits.size else None

    @functools.cached_property
    def regridder(self):
        """The 1-degree lon-lat regridder of the run's cell centres (built once)."""
        from fv3core.grid.latlon_regrid import LatLonRegridder

        return LatLonRegridder.build(self.arrays["lon"], self.arrays["lat"])


def weighted_l2(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> float:
    """``sqrt(sum w (a - b)^2 / sum w)``, JW06's l2 of a difference: ``weights`` the cell areas of
    cubed-sphere fields, or ``cos(lat)[:, None]`` of lon-lat fields ``[lat, lon]``."""
    w = np.broadcast_to(weights, np.shape(a))
    return float(np.sqrt(np.sum(w * (a - b) ** 2) / np.sum(w)))


@functools.lru_cache(maxsize=4)
def fortran_extract(folder: Path):
    """The Fortran run extract of ``folder``, read once per process."""
    from fv3core.validation.extract import load_3d_run_extract

    return load_3d_run_extract(folder)


def fortran_steady_l2(run: SavedRun, folder: Path) -> list[dict[str, float]]:
    """The steady state against the Fortran run: JW06's l2 of the zonal-mean zonal-wind change
    of both (the Fortran run's from its A-grid ``ucomp``, regridded as ours) and both minimum
    surface pressures, at the days the Fortran extract holds ``ucomp``."""
    from fv3core.vertical.eta import set_eta

    ref = fortran_extract(folder)
    regrid = run.regridder
    dp = np.diff(set_eta(run.levels).interface_pressure(1.0e5))

    def latlon(u: np.ndarray) -> np.ndarray:
        return np.stack([regrid(u[..., k]) for k in range(u.shape[-1])], axis=-1)

    u0 = latlon(ref.at("ucomp", 0.0))
    rows = []
    for hours in ref.field_hours["ucomp"]:
        k = np.flatnonzero(np.abs(run.series_hours - hours) < 1e-6)
        if hours == 0.0 or not k.size:
            continue
        rows.append({"day": hours / 24.0,
                     "l2": float(run.series["u_zonal_mean_l2"][k[0]]),
                     "fortran_l2": zonal_mean_wind_l2(latlon(ref.at("ucomp", hours)), u0,
                                                      regrid.lat, dp),
                     "ps_min_hpa": float(run.series["PS_min"][k[0]]),
                     "fortran_ps_min_hpa": float(ref.at("ps", hours).min()) / 100.0})  # fmt: skip
    return rows


def compare_with_fortran(run: SavedRun, folder: Path) -> dict[str, Any]:
    """ps (hPa), t850 (K), vort850 against the Fortran run at the days both have, and FV3's
    printed extrema at every saved time the Fortran run printed; the steady state: also
    :func:`fortran_steady_l2`."""
    ref = fortran_extract(folder)
    if run.case == "baroclinic_steady":
        return {"fortran": folder.name, "days": [], "printed": [],
                "steady": fortran_steady_l2(run, folder)}  # fmt: skip
    area = run.arrays["area"]
    days = []
    for day in sorted({h / 24.0 for h in ref.field_hours["ps"]}):
        ours = {n: run.at(n, day) for n in ("ps", "t850", "vort850")}
        if day == 0.0 or any(v is None for v in ours.values()):
            continue
        theirs = {n: ref.at(n, 24.0 * day) for n in ours}
        mine = extrema(ours["ps"], run.arrays["lon"], run.arrays["lat"])
        fort = extrema(theirs["ps"], ref.grid["lon"], ref.grid["lat"])
        days.append({
            "day": day,
            "ps_max_abs_hpa": float(np.abs(ours["ps"] - theirs["ps"]).max()) / 100.0,
            "ps_l2_hpa": weighted_l2(ours["ps"], theirs["ps"], area) / 100.0,
            "t850_max_abs_k": float(np.abs(ours["t850"] - theirs["t850"]).max()),
            "vort850_max_rel": float(np.abs(ours["vort850"] - theirs["vort850"]).max()
                                     / np.abs(theirs["vort850"]).max()),
            "ps_min_hpa": mine["min"] / 100.0, "fortran_ps_min_hpa": fort["min"] / 100.0,
            "ps_min_place": (mine["min_lon"], mine["min_lat"]),
            "fortran_ps_min_place": (fort["min_lon"], fort["min_lat"]),
            "ps_max_hpa": mine["max"] / 100.0, "fortran_ps_max_hpa": fort["max"] / 100.0,
        })  # fmt: skip
    printed = []
    for k, hours in enumerate(run.series_hours):
        hit = np.flatnonzero(np.abs(ref.printed_hours - hours) < 1e-6)
        if hours == 0.0 or not hit.size:
            continue
        row = {"hours": float(hours)}
        for n in PRINTED:
            row[n] = float(run.series[n][k])
            row[f"fortran_{n}"] = float(ref.printed[n][hit[0]])
        printed.append(row)
    return {"fortran": folder.name, "days": days, "printed": printed}


def self_convergence(coarse: SavedRun, fine: SavedRun) -> list[dict[str, float]]:
    """l2 (hPa) of ps(C2N) - ps(CN) on the 1-degree lon-lat grid, every day both reached."""
    weights = np.cos(np.deg2rad(fine.regridder.lat))[:, None]
    rows = []
    for day in sorted({h / 24.0 for h in coarse.hours} & {h / 24.0 for h in fine.hours}):
        if day == 0.0:
            continue
        a, b = coarse.regridder(coarse.at("ps", day)), fine.regridder(fine.at("ps", day))
        rows.append({"day": day, "ps_l2_hpa": weighted_l2(a, b, weights) / 100.0})
    return rows


def summarise(run: SavedRun) -> dict[str, Any]:
    """The run's figures: ps extrema at JW06's days, budgets, steady-state l2, timing."""
    d = run.meta["diagnostics"]
    days = []
    for day in DAYS:
        ps = run.at("ps", day)
        if ps is not None:
            e = extrema(ps, run.arrays["lon"], run.arrays["lat"])
            days.append({"day": day, "ps_min_hpa": e["min"] / 100.0, "ps_max_hpa": e["max"] / 100.0,
                         "ps_min_place": (e["min_lon"], e["min_lat"]),
                         "ps_max_place": (e["max_lon"], e["max_lat"])})  # fmt: skip
    l2 = run.series.get("u_zonal_mean_l2")
    return {"name": run.name, "case": run.case, "resolution": run.resolution,
            "levels": run.levels, "backend": run.backend, "hydrostatic": run.hydrostatic,
            "days_run": run.meta["steps"] * run.meta["dt"] / 86400.0,
            "steps": run.meta["steps"], "dt": run.meta["dt"],
            "seconds_per_step": run.meta["seconds_per_step"],
            "wall_seconds": run.meta["wall_seconds"], "revision": run.meta["revision"],
            "dry_mass_relative_change": d.get("dry_mass_relative_change"),
            "total_energy_relative_change": d.get("total_energy_relative_change"),
            "total_energy_drift_per_day": d.get("total_energy_drift_per_day"),
            "u_zonal_mean_l2_final": d.get("u_zonal_mean_l2"),
            "u_zonal_mean_l2_max": float(np.nanmax(l2)) if l2 is not None and l2.size else None,
            "checker_mass_relative_change": d.get("checker_mass_relative_change"),
            "checker_range": [float(np.min(run.series["checker_min"])),
                              float(np.max(run.series["checker_max"]))]
            if "checker_min" in run.series else None,
            "ps_days": days}  # fmt: skip


def analyse(runs: list[SavedRun]) -> dict[str, Any]:
    payload: dict[str, Any] = {"runs": {}, "fortran": {}, "self_convergence": {}}
    for r in runs:
        payload["runs"][r.name] = summarise(r)
        folder = fortran_run(r.case, r.resolution, r.levels, r.hydrostatic)
        if folder is not None:
            payload["fortran"][r.name] = compare_with_fortran(r, folder)
    for r in runs:
        finer = [f for f in runs if (f.case, f.levels, f.backend, f.hydrostatic, f.resolution)
                 == (r.case, r.levels, r.backend, r.hydrostatic, 2 * r.resolution)]  # fmt: skip
        if finer and r.case == "baroclinic":
            payload["self_convergence"][f"{r.name}+C{finer[0].resolution}"] = self_convergence(r, finer[0])
    return payload


def plot(run: SavedRun, folder: Path) -> list[Path]:
    """ps and vort850 at JW06's days (ours and the Fortran run's) and the run's time series."""
    from fv3core.output.baroclinic_plots import plot_baroclinic_days, plot_time_series

    out = []
    regrid = run.regridder
    label = f"fv3core C{run.resolution} L{run.levels} ({run.backend})"
    panels = [(d, run.at("ps", d), run.at("vort850", d)) for d in DAYS if run.at("ps", d) is not None]
    if panels:
        out.append(plot_baroclinic_days(folder / f"jw06_{run.name}_days.png", panels, days=None,
                                        regridder=regrid, title=label))  # fmt: skip
    fortran = fortran_run(run.case, run.resolution, run.levels, run.hydrostatic)
    series_days = run.series_hours / 24.0
    if run.case == "baroclinic":
        others = []
        if fortran is not None:
            ref = fortran_extract(fortran)
            hours = ref.field_hours["ps"]
            ref_panels = [(h / 24.0, ref.at("ps", h), ref.at("vort850", h)) for h in hours
                          if h / 24.0 in DAYS]  # fmt: skip
            if ref_panels:
                out.append(plot_baroclinic_days(
                    folder / f"jw06_{run.name}_fortran_days.png", ref_panels, days=None,
                    regridder=regrid, title=f"GFDL Fortran FV3 C{run.resolution} L{run.levels}"))
            printed = np.isfinite(ref.printed["PS_min"])  # t = 0 prints the mean ps only
            others.append(("GFDL Fortran FV3 (printed PS_min)", ref.printed_hours[printed] / 24.0,
                           ref.printed["PS_min"][printed]))  # fmt: skip
        out.append(plot_time_series(folder / f"jw06_{run.name}_series.png", series_days,
                                    run.series["PS_min"], label=label, ylabel="minimum ps (hPa)",
                                    log=False, others=others,
                                    title="JW06 baroclinic wave: minimum surface pressure"))  # fmt: skip
    else:
        keep = series_days > 0
        others = []
        if fortran is not None:
            rows = fortran_steady_l2(run, fortran)
            others.append(("GFDL Fortran FV3", np.array([r["day"] for r in rows]),
                           np.array([r["fortran_l2"] for r in rows])))  # fmt: skip
        out.append(plot_time_series(folder / f"jw06_{run.name}_series.png", series_days[keep],
                                    run.series["u_zonal_mean_l2"][keep], label=label,
                                    others=others,
                                    title="JW06 steady state: l2(ubar - ubar0)"))  # fmt: skip
    return out


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    return _table(headers, rows).rstrip("\n")


def _f(x: float | None, fmt: str = ".2f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def _place_text(p: tuple[float, float] | list[float]) -> str:
    return f"{p[0]:.1f}°E {p[1]:.1f}°N"


def markdown(payload: dict[str, Any], source: str = "docs/fv3core/jw06.json") -> str:
    """The generated block: runs, the Fortran comparison, self-convergence; ``source``: the
    JSON file it is generated from, as the page names it."""
    lines = [f"Generated by `stratoflow bench fv3-jw06` from `{source}`.", ""]
    rows = []
    for r in payload["runs"].values():
        core = "" if r.get("hydrostatic", True) else ", non-hydrostatic"
        rows.append([r["case"], f"C{r['resolution']} L{r['levels']}{core}", r["backend"],
                     _f(r["days_run"], ".1f"), _f(r["seconds_per_step"]),
                     _f(r["dry_mass_relative_change"], ".1e"),
                     _f(r["total_energy_drift_per_day"], ".2e"),
                     _f(r["u_zonal_mean_l2_final"], ".3g"),
                     _f(r.get("checker_mass_relative_change"), ".1e"),
                     "—" if not r.get("checker_range") else
                     f"{r['checker_range'][0]:.3g} to {r['checker_range'][1]:.6g}",
                     r["revision"]])  # fmt: skip
    lines += [markdown_table(["case", "grid", "backend", "days", "s/step", "dry-mass change",
                              "energy drift / day", "l2(ubar - ubar0) m/s",
                              "checker mass change", "checker min to max over the run (initially 0 to 1)", "revision"], rows), ""]
    rows = []
    for r in payload["runs"].values():
        for d in r["ps_days"]:
            rows.append([r["name"], _f(d["day"], ".0f"), _f(d["ps_min_hpa"]),
                         _place_text(d["ps_min_place"]), _f(d["ps_max_hpa"]),
                         _place_text(d["ps_max_place"])])  # fmt: skip
    if rows:
        lines += ["Surface pressure at JW06's days:", "",
                  markdown_table(["run", "day", "min ps (hPa)", "where", "max ps (hPa)", "where"],
                                 rows), ""]  # fmt: skip
    for name, c in payload["fortran"].items():
        if c.get("steady"):
            rows = [[_f(d["day"], ".0f"), _f(d["l2"], ".3g"), _f(d["fortran_l2"], ".3g"),
                     _f(d["ps_min_hpa"]), _f(d["fortran_ps_min_hpa"])] for d in c["steady"]]
            lines += [f"{name} against GFDL's Fortran FV3 (`tests/fv3core/data/fortran/{c['fortran']}`,"
                      " its own namelist):", "",
                      markdown_table(["day", "l2(ubar - ubar0) m/s", "Fortran l2", "min ps (hPa)",
                                      "Fortran min ps"], rows), ""]  # fmt: skip
        rows = [[_f(d["day"], ".0f"), _f(d["ps_min_hpa"]), _f(d["fortran_ps_min_hpa"]),
                 _place_text(d["ps_min_place"]), _place_text(d["fortran_ps_min_place"]),
                 _f(d["ps_max_abs_hpa"], ".3g"), _f(d["ps_l2_hpa"], ".3g"),
                 _f(d["t850_max_abs_k"], ".3g"), _f(d["vort850_max_rel"], ".2g")]
                for d in c["days"]]  # fmt: skip
        if rows:
            lines += [f"{name} against GFDL's Fortran FV3 (`tests/fv3core/data/fortran/{c['fortran']}`):",
                      "", markdown_table(["day", "min ps", "Fortran min ps", "where", "Fortran where",
                                          "max abs Δps (hPa)", "l2 Δps (hPa)", "max abs Δt850 (K)",
                                          "max Δvort850 / max"], rows), ""]  # fmt: skip
        if c["printed"]:
            rows = []
            for n in PRINTED:
                diffs = [abs(p[n] - p[f"fortran_{n}"]) for p in c["printed"]]
                worst = c["printed"][int(np.argmax(diffs))]
                rows.append([n, _f(max(diffs), ".3g"), _f(worst["hours"] / 24.0, ".2f"),
                             _f(worst[n], ".6g"), _f(worst[f"fortran_{n}"], ".6g")])  # fmt: skip
            lines += [f"FV3's printed extrema at the {len(c['printed'])} saved times (every "
                      f"{_f(c['printed'][0]['hours'], '.0f')} h), largest difference:", "",
                      markdown_table(["printed", "max abs difference", "at day", "fv3core",
                                      "Fortran"], rows), ""]  # fmt: skip
    for name, rows_ in payload["self_convergence"].items():
        lines += [f"Self-convergence {name}: l2 of ps(C2N) − ps(CN) on the 1° grid:", "",
                  markdown_table(["day", "l2 (hPa)"], [[_f(r["day"], ".0f"), _f(r["ps_l2_hpa"], ".3g")]
                                                       for r in rows_]), ""]  # fmt: skip
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    args.runs_dir.mkdir(parents=True, exist_ok=True)
    if not args.render_only:
        days = args.days if args.days is not None else (10.0 if args.case == "baroclinic" else 30.0)
        for n in args.resolutions:
            cfg = config_for(args.case, n, args.levels, days, args.backend, args.every,
                             args.n_split, args.checker_tr, args.hydrostatic)  # fmt: skip
            name = run_name(args.case, n, args.levels, args.backend, args.hydrostatic)
            save_run(cfg, args.runs_dir / f"{name}.npz", progress=not args.no_progress)
    runs = [SavedRun(p) for p in sorted(args.runs_dir.glob("*.npz"))]
    if not runs:
        raise BenchmarkError(f"no saved runs in {args.runs_dir}: run without --render-only first")
    payload = analyse(runs)
    write_json(args.json, payload)
    for r in runs:
        for png in plot(r, args.plots):
            log.info("wrote %s", png)
    atomic_update_block(args.markdown, "jw06", markdown(payload, shown_path(args.json)))
    log.info("wrote %s and the jw06 block of %s", args.json, args.markdown)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.fv3_jw06", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    add_arguments(p)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return run(p.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
