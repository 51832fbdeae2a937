"""``stratoflow bench fv3-jw06``: a short C8 wave run is saved, analysed and rendered (JSON,
the page's generated block, the PNGs); the comparison with GFDL's Fortran FV3 against the
committed C24 extract itself (a run equal to it differs by 0; a perturbation of one cell gives
the hand-computed max and area-weighted l2); the self-convergence l2 of a known offset between
C12 and C24 (analytic: the offset, up to the interpolation error of a smooth field)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import benchmarks.fv3_jw06 as jw06
from benchmarks.fv3_jw06 import (
    PRINTED,
    SavedRun,
    compare_with_fortran,
    self_convergence,
    weighted_l2,
)
from fv3core.grid.metric_terms import CubedSphere
from fv3core.validation.extract import load_3d_run_extract
from workflows.cli import main

JW_C24 = Path(__file__).parent.parent / "fv3core" / "data" / "fortran" / "jw_C24_L26"


def _save(path: Path, hours, fields: dict[str, np.ndarray], lon, lat, area, series=None,
          series_hours=(), resolution: int = 24, case: str = "baroclinic",
          levels: int = 26) -> SavedRun:  # fmt: skip
    series = series or {}
    names = sorted(series)
    meta = {"config": {"case": case, "resolution": resolution, "nz": levels,
                       "backend": "numpy"}, "steps": 1, "dt": 3600.0, "wall_seconds": 1.0,
            "seconds_per_step": 1.0, "diagnostics": {}, "revision": "test"}  # fmt: skip
    table = np.array([[series[n][k] for n in names] for k in range(len(series_hours))])
    np.savez(path, hours=np.asarray(hours, dtype=float), **fields, lon=lon, lat=lat, area=area,
             printout_hours=np.asarray(series_hours, dtype=float), printout_names=np.array(names),
             printouts=table, metadata=np.array(json.dumps(meta)))  # fmt: skip
    return SavedRun(path)


def test_a_short_wave_run_is_saved_analysed_and_rendered(tmp_path) -> None:
    runs, md, out = tmp_path / "runs", tmp_path / "page.md", tmp_path / "jw.json"
    md.write_text("# JW\n\nhand-written\n")
    assert main(["bench", "fv3-jw06", "--resolutions", "8", "--days", str(2.0 / 24.0),
                 "--every", "1", "--backend", "numpy", "--runs-dir", str(runs), "--json",
                 str(out), "--markdown", str(md), "--plots", str(tmp_path), "--no-progress"]) == 0  # fmt: skip
    (saved,) = runs.glob("*.npz")
    run = SavedRun(saved)
    assert run.name == "baroclinic_C8_L26_numpy" and list(run.series_hours) == [0.0, 1.0, 2.0]
    assert run.arrays["ps"].shape == (1, 6, 8, 8)  # the history: t = 0 only (a run under a day)
    assert 990.0 < run.series["PS_min"][-1] < 1000.0 < run.series["PS_max"][-1] < 1010.0
    data = json.loads(out.read_text())
    r = data["runs"]["baroclinic_C8_L26_numpy"]
    assert r["days_run"] == pytest.approx(2.0 / 24.0) and abs(r["dry_mass_relative_change"]) < 1e-14
    assert data["fortran"] == {} and data["self_convergence"] == {}
    text = md.read_text()
    assert text.startswith("# JW\n\nhand-written\n") and "| baroclinic | C8 L26 | numpy |" in text
    assert (tmp_path / "jw06_baroclinic_C8_L26_numpy_series.png").stat().st_size > 1000
    assert main(["bench", "fv3-jw06", "--render-only", "--runs-dir", str(tmp_path / "none"),
                 "--json", str(out)]) == 1  # fmt: skip


def test_comparison_with_the_fortran_run(tmp_path) -> None:
    """The Fortran C24 extract as the 'run': 0 differences; +100 Pa in one cell at day 1: max
    1 hPa, l2 sqrt(A_cell / A_total) hPa; the printed extrema compared at the saved hours."""
    ref = load_3d_run_extract(JW_C24)
    hours = ref.field_hours["ps"]
    fields = {n: np.stack([ref.at(n, h) for h in hours]) for n in ("ps", "t850", "vort850")}
    fields["ps"][-1, 2, 5, 7] += 100.0
    series_hours = [0.0, 6.0, 24.0]
    rows = [np.flatnonzero(ref.printed_hours == h)[0] for h in series_hours]
    series = {n: [ref.printed[n][k] for k in rows] for n in PRINTED}
    series["PS_min"][1] += 0.25  # hPa, at 6 h
    run = _save(tmp_path / "r.npz", hours, fields, ref.grid["lon"], ref.grid["lat"],
                ref.grid["area"], series, series_hours)  # fmt: skip
    c = compare_with_fortran(run, JW_C24)
    day6, day24 = c["days"]
    assert (day6["day"], day24["day"]) == (0.25, 1.0)
    assert day6["ps_max_abs_hpa"] == 0 and day6["ps_l2_hpa"] == 0 and day6["t850_max_abs_k"] == 0
    assert day6["ps_min_place"] == day6["fortran_ps_min_place"]
    area = ref.grid["area"]
    assert day24["ps_max_abs_hpa"] == pytest.approx(1.0, rel=1e-12)
    assert day24["ps_l2_hpa"] == pytest.approx(np.sqrt(area[2, 5, 7] / area.sum()), rel=1e-9)
    assert [p["hours"] for p in c["printed"]] == [6.0, 24.0]
    assert c["printed"][0]["PS_min"] - c["printed"][0]["fortran_PS_min"] == pytest.approx(0.25)
    assert all(p[n] == p[f"fortran_{n}"] for p in c["printed"][1:] for n in PRINTED)


def test_self_convergence_of_a_known_offset(tmp_path) -> None:
    """ps = 1000 hPa + 10 hPa cos(lat) cos(lon) on C12 and the same + 0.5 hPa on C24: the l2 of
    the difference on the 1-degree grid is 0.5 hPa up to the linear interpolation error of the
    smooth field on C12 (< 0.05 hPa here); the lat-lon l2 of a constant is that constant."""
    runs = []
    for n, offset in ((12, 0.0), (24, 50.0)):
        cube = CubedSphere.build(n, radius=6.3712e6, omega=7.2921e-5)
        h = cube.n_halo
        agrid = np.rad2deg(cube.fields["agrid"][:, h : h + n, h : h + n])
        lon, lat = agrid[..., 0], agrid[..., 1]
        ps = 1.0e5 + 1.0e3 * np.cos(np.deg2rad(lat)) * np.cos(np.deg2rad(lon)) + offset
        hist = {"ps": np.stack([ps, ps])}
        runs.append(_save(tmp_path / f"c{n}.npz", [0.0, 24.0], hist, lon, lat, np.ones_like(lon),
                          resolution=n))  # fmt: skip
    (row,) = self_convergence(*runs)
    assert row["day"] == 1.0 and row["ps_l2_hpa"] == pytest.approx(0.5, abs=0.05)
    lat = np.linspace(-89.5, 89.5, 180)
    cos_lat = np.cos(np.deg2rad(lat))[:, None]
    assert weighted_l2(np.full((180, 360), 3.0), np.zeros((180, 360)), cos_lat) == pytest.approx(3.0)


class _SteadyExtract:
    """A Fortran steady-state extract: ``ucomp`` = u0 + offset(t), ``ps`` with a known minimum."""

    def __init__(self, u0: np.ndarray, offsets: dict[float, float], ps_min: dict[float, float]):
        self.u0, self.offsets, self.ps_min = u0, offsets, ps_min
        self.field_hours = {"ucomp": [0.0, *offsets], "ps": list(ps_min)}

    def at(self, name: str, hours: float) -> np.ndarray:
        if name == "ucomp":
            return self.u0 + (self.offsets[hours] if hours else 0.0)
        ps = np.full(self.u0.shape[:3], 1.0e5)
        ps[1, 2, 3] = 100.0 * self.ps_min[hours]
        return ps


def test_steady_state_against_the_fortran_run(tmp_path, monkeypatch) -> None:
    """The Fortran run's l2 of the zonal-mean wind change of a uniform offset c is c (the
    1-degree regridding reproduces a constant; JW06's l2 of a constant change is that constant),
    next to the run's own l2 and minimum ps at the days both have, on C12 L30."""
    cube = CubedSphere.build(12, radius=6.3712e6, omega=7.2921e-5)
    h = cube.n_halo
    agrid = np.rad2deg(cube.fields["agrid"][:, h : h + 12, h : h + 12])
    lon, lat = agrid[..., 0], agrid[..., 1]
    u0 = 30.0 * np.cos(np.deg2rad(lat))[..., None] * np.linspace(0.2, 1.0, 30)
    fortran = _SteadyExtract(u0, {240.0: 0.5, 360.0: 2.0}, {240.0: 998.0, 360.0: 960.0, 480.0: 950.0})
    monkeypatch.setattr(jw06, "fortran_extract", lambda folder: fortran)
    series = {"u_zonal_mean_l2": [0.0, 0.4, 1.5, 9.0], "PS_min": [1000.0, 997.0, 961.0, 951.0]}
    run = _save(tmp_path / "s.npz", [0.0], {"ps": np.full((1, 6, 12, 12), 1.0e5)}, lon, lat,
                np.ones_like(lon), series, [0.0, 240.0, 360.0, 480.0], resolution=12,
                case="baroclinic_steady", levels=30)  # fmt: skip
    c = compare_with_fortran(run, tmp_path)
    assert c["days"] == [] and [r["day"] for r in c["steady"]] == [10.0, 15.0]
    ten, fifteen = c["steady"]
    assert ten["fortran_l2"] == pytest.approx(0.5, rel=1e-12)
    assert fifteen["fortran_l2"] == pytest.approx(2.0, rel=1e-12)
    assert (ten["l2"], fifteen["l2"]) == (0.4, 1.5)
    assert (ten["ps_min_hpa"], ten["fortran_ps_min_hpa"]) == (997.0, pytest.approx(998.0))
    assert fifteen["fortran_ps_min_hpa"] == pytest.approx(960.0)


def test_non_hydrostatic_runs_pair_with_the_non_hydrostatic_fortran_run() -> None:
    """--non-hydrostatic: its own run name, the committed jwnh_ extract (FV3's own namelist,
    hydrostatic = .false.) as the run's configuration and its comparison; the hydrostatic run
    keeps jw_."""
    assert jw06.run_name("baroclinic", 24, 26, "numpy", hydrostatic=False) == "baroclinic_nonhydrostatic_C24_L26_numpy"
    assert jw06.fortran_run("baroclinic", 24, 26, hydrostatic=False).name == "jwnh_C24_L26"
    assert jw06.fortran_run("baroclinic", 24, 26).name == "jw_C24_L26"
    assert jw06.fortran_run("baroclinic_steady", 24, 30, hydrostatic=False) is None
    cfg = jw06.config_for("baroclinic", 24, 26, 1.0, "numpy", 6, hydrostatic=False)
    assert not cfg.hydrostatic and cfg.a_imp == 0.75
    assert not jw06.config_for("baroclinic", 8, 26, 1.0, "numpy", 6, hydrostatic=False).hydrostatic
