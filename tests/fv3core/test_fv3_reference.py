"""The Fortran FV3 reference runs (../shared/fv3-reference) read in fv3core's order, their
printed SWNORMS/SWINV norms recomputed from the netCDF output with fv3core.validation.norms,
and the committed CI extract (tests/fv3core/data/fv3_tc2_c24_6h.npz).

How closely the printed norms can be recomputed from the files (measured over all five runs
and every output time; the printed values have 16 significant digits):

* h_linf, v_linf, Hmin, Hmax: all 16 printed digits (max/min are exact);
* v_l1, v_l2, mass, energy, enstrophy: within 1e-15 relative (a few float64 ulps: FV3's
  summation order is reproduced, not its last-bit rounding everywhere);
* h_l1, h_l2: within 5e-14 relative.  The file's depth ``ps`` is FV3's ``delp * (1/g)`` while
  the diagnostic uses ``delp / g``; the two differ in the last bit in about a third of the
  cells, and H - H0 (~0.1 m of ~2000 m) magnifies that 1e4-fold;
* mass_n, energy_n, enstr_n: within 5e-16 absolute (the invariants to ~2 ulps; mass_n itself
  is round-off, +-k * 2.1e-16);
* enstrophy needs FV3's D-grid winds, which the files lack: it is recomputed from the files'
  ``vort`` (FV3's get_vorticity: the same D-grid circulation per cell) plus f0, and enstr_n
  against the printed t = 0 enstrophy (no vorticity is written at t = 0).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fv3core.errors import FV3ReferenceError
from fv3core.validation import (
    ALL_NAMES,
    FV3Reference,
    Invariants,
    ShallowWaterFields,
    agreeing_digits,
    coriolis,
    dgrid_vorticity,
    global_sum,
    invariants,
    parse_norms,
    reference_root,
    reference_runs,
    sw_norms,
)
from fv3core.validation.extract import extract, load_extract, write_extract

ROOT = reference_root()
HAVE_REFERENCE = (ROOT / "tc2_C24_d1" / "norms.txt").is_file()
needs_reference = pytest.mark.skipif(
    not HAVE_REFERENCE,
    reason=f"the Fortran FV3 reference runs are not on this machine ({ROOT}; set "
    "STRATOFLOW_FV3_REFERENCE): the committed extract is tested instead",
)
EXTRACT = Path(__file__).parent / "data" / "fv3_tc2_c24_6h.npz"
RUNS = ("tc2_C24_d1", "tc2_C24_d5", "tc2_C48_d1", "tc2_C48_d5", "tc2_C96_d5")
R_EARTH = 6.3712e6

EXACT = ("h_linf", "v_linf", "Hmin", "Hmax")  # all 16 printed digits
SUMS = ("v_l1", "v_l2", "mass", "energy", "enstrophy")  # relative 1e-15
DEPTH_ERRORS = ("h_l1", "h_l2")  # relative 5e-14
CHANGES = ("mass_n", "energy_n", "enstr_n")  # absolute 5e-16


def check_against_printed(ours: dict[str, float], printed: dict[str, float],
                          where: str) -> None:  # fmt: skip
    """The tolerance policy of the module docstring, per quantity."""
    bad = []
    for name in ALL_NAMES:
        a, b = ours[name], printed[name]
        if name in EXACT:
            ok = f"{a:.15E}" == f"{b:.15E}"
        elif name in SUMS:
            ok = abs(a - b) <= 1e-15 * abs(b)
        elif name in DEPTH_ERRORS:
            ok = abs(a - b) <= 5e-14 * abs(b)
        else:
            ok = abs(a - b) <= 5e-16
        if not ok:
            bad.append(f"{name}: ours {a:.15E}, printed {b:.15E}")
    assert not bad, f"{where}: " + "; ".join(bad)


def recomputed(ref: FV3Reference) -> list[tuple[float, dict[str, float], dict[str, float]]]:
    """(hours, our norms from the files, printed norms) at t = 0 and every output time."""
    grid, table = ref.grid(), ref.printed_norms()
    f0 = coriolis(grid.lon, grid.lat)
    start = ref.initial().fields()
    computed0 = invariants(start, grid.area)
    printed0 = table.at(0.0)
    # enstrophy at t = 0 needs the t = 0 vorticity, which the files lack: FV3's printed value
    initial = Invariants(computed0.Hmin, computed0.Hmax, computed0.mass, computed0.energy,
                         printed0["enstrophy"])  # fmt: skip
    rows = [(0.0, {**sw_norms(start, start, grid.area), **initial.as_dict(),
                   "enstrophy": printed0["enstrophy"], "enstr_n": 0.0}, printed0)]  # fmt: skip
    for hours in ref.output_times():
        ours = sw_norms(ref.output(hours).fields(f0), start, grid.area,
                        initial_invariants=initial)  # fmt: skip
        rows.append((hours, ours, table.at(hours)))
    return rows


# -- the reader -----------------------------------------------------------------------------


@needs_reference
def test_runs_and_shapes() -> None:
    refs = {r.name: r for r in reference_runs(ROOT)}
    assert set(RUNS) <= set(refs)
    for name in RUNS:
        ref = refs[name]
        n = int(name.split("_")[1][1:])
        assert ref.resolution == n
        assert ref.run_hours == 24.0 * int(name.split("_d")[1])
        grid = ref.grid()
        assert grid.corner_lon.shape == grid.corner_lat.shape == (6, n + 1, n + 1)
        assert grid.lon.shape == grid.lat.shape == grid.area.shape == (6, n, n)
        assert grid.area.dtype == np.float64
        # the whole sphere: 4 pi R^2 with FV3's radius, and the GLOBAL AREA FV3 printed
        assert grid.area.sum() == pytest.approx(4 * math.pi * R_EARTH**2, rel=2e-12)
        stdout = (ref.path / "stdout.txt").read_text()
        printed_area = float(stdout.split("GLOBAL AREA (m*m):")[1].split()[0])
        assert grid.area.sum() == pytest.approx(printed_area, rel=4e-14)  # 14 digits printed
        step = 6.0 if name.endswith("_d1") else 24.0
        assert ref.output_times() == tuple(step * k for k in range(1, round(ref.run_hours / step) + 1))
        for state in (ref.initial(), ref.output(ref.output_times()[-1])):
            for a in (state.depth, state.surface, state.u, state.v):
                assert a.shape == (6, n, n)
        assert ref.initial().vorticity is None
        assert ref.output(step).vorticity.shape == (6, n, n)


@needs_reference
def test_orientation_of_tile_1() -> None:
    """The files are (grid_yt, grid_xt) = (j, i), tile1 = fv3core's tile 0: the reader's
    [tile, i, j] cells are fv3core's."""
    grid = FV3Reference(ROOT / "tc2_C24_d1").grid()
    # the first corner of tile 1 is a cube vertex: 350 - 45 degrees east, -asin(1/sqrt 3)
    assert grid.corner_lon[0, 0, 0] == 305.0
    assert grid.corner_lat[0, 0, 0] == pytest.approx(-math.degrees(math.asin(3**-0.5)), abs=1e-12)
    # its first cell, and the next one along i (eastwards, lat falling: FV3's gnomonic_ed tile)
    assert grid.lon[0, 0, 0] == pytest.approx(306.5737166448136, abs=1e-11)
    assert grid.lat[0, 0, 0] == pytest.approx(-34.50543918541466, abs=1e-11)
    assert grid.lon[0, 1, 0] == pytest.approx(309.805666817034, abs=1e-11)
    assert grid.lat[0, 1, 0] == pytest.approx(-35.8654519742016, abs=1e-11)
    assert grid.lon[0, 0, 1] == pytest.approx(306.5756819452742, abs=1e-11)


@needs_reference
def test_cell_centres_are_fv3cores() -> None:
    """The Fortran run's cell centres equal fv3core's ``agrid`` to 1e-11 degrees."""
    from fv3core.grid.metric_terms import CubedSphere

    n = 24
    grid = FV3Reference(ROOT / "tc2_C24_d1").grid()
    cube = CubedSphere.build(n, radius=6.3712e6, omega=7.2921e-5)
    h = cube.n_halo
    for tile in range(6):
        agrid = cube.fields["agrid"][tile, h : h + n, h : h + n]
        lon, lat = np.rad2deg(agrid[..., 0]), np.rad2deg(agrid[..., 1])
        assert np.abs((lon - grid.lon[tile] + 180.0) % 360.0 - 180.0).max() < 1e-11
        assert np.abs(lat - grid.lat[tile]).max() < 1e-11


@needs_reference
def test_printed_norms_table() -> None:
    table = FV3Reference(ROOT / "tc2_C24_d1").printed_norms()
    assert list(table.hours) == [0.0, 6.0, 12.0, 18.0, 24.0]
    assert set(table.values) == set(ALL_NAMES)
    assert table["h_l2"][4] == 2.754353371583118e-04
    assert table["enstr_n"][1] == -2.455815013596058e-05
    assert table["Hmin"][0] == 1.097759716498899e03
    assert table["energy"][4] == 1.543380848490873e22
    assert table.printed(24.0)["v_linf"] == "1.050101026550575E-02"
    assert all(table[n][0] == 0.0 for n in ("h_l1", "v_l2", "mass_n", "enstr_n"))
    five_days = FV3Reference(ROOT / "tc2_C96_d5").printed_norms()
    assert len(five_days) == 21 and five_days.hours[-1] == 120.0
    # every printed value survives the float round trip at 16 digits
    for name in ALL_NAMES:
        for k, h in enumerate(table.hours):
            assert f"{table[name][k]:.15E}" == table.printed(float(h))[name]


# -- the norms recomputed from the files ----------------------------------------------------


@needs_reference
@pytest.mark.parametrize("run", RUNS)
def test_recomputed_norms_equal_printed(run: str) -> None:
    for hours, ours, printed in recomputed(FV3Reference(ROOT / run)):
        check_against_printed(ours, printed, f"{run} at {hours:g} h")


@needs_reference
def test_agreement_digits_tc2_c24() -> None:
    """All printed digits of the linf norms and Hmin/Hmax, and >= 13 of the l1/l2 norms."""
    for hours, ours, printed in recomputed(FV3Reference(ROOT / "tc2_C24_d1"))[1:]:
        for name in EXACT:
            assert agreeing_digits(ours[name], printed[name]) == 16, (hours, name)
        for name in ("h_l1", "h_l2", "v_l1", "v_l2", "mass", "energy", "enstrophy"):
            assert agreeing_digits(ours[name], printed[name]) >= 13, (hours, name)


# -- norms.py on synthetic fields -----------------------------------------------------------


def _fields(n: int = 4, seed: int = 0) -> tuple[ShallowWaterFields, np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = (6, n, n)
    f = ShallowWaterFields(2000.0 + rng.random(shape), np.zeros(shape), rng.normal(size=shape),
                           rng.normal(size=shape), 1e-4 * rng.normal(size=shape))  # fmt: skip
    return f, 1.0 + rng.random(shape)


def test_norms_of_the_initial_state_are_zero() -> None:
    f, area = _fields()
    norms = sw_norms(f, f, area)
    assert all(norms[k] == 0.0 for k in ("h_l1", "h_l2", "h_linf", "v_l1", "v_l2", "v_linf",
                                         "mass_n", "energy_n", "enstr_n"))  # fmt: skip
    assert norms["mass"] == pytest.approx(np.sum(f.depth * area), rel=1e-14)
    assert norms["Hmin"] == f.height.min()


def test_norm_definitions() -> None:
    f, area = _fields()
    g = f.depth * 0 + 9.80665
    later = ShallowWaterFields(f.depth * 1.01, f.surface, f.u + 1.0, f.v, f.absolute_vorticity)
    norms = sw_norms(later, f, area, gravity=9.80665)
    assert norms["h_l1"] == pytest.approx(0.01, rel=1e-12)
    assert norms["h_linf"] == pytest.approx(0.01, rel=1e-12)
    v0 = np.hypot(f.u, f.v)
    assert norms["v_l1"] == pytest.approx(np.sum(area) / np.sum(v0 * area), rel=1e-12)
    assert norms["v_linf"] == pytest.approx(1.0 / v0.max(), rel=1e-12)
    assert norms["mass_n"] == pytest.approx(0.01, rel=1e-12)
    e = lambda s: np.sum((0.5 * s.depth * (s.u**2 + s.v**2) + 0.5 * g * s.depth**2) * area)  # noqa: E731
    assert norms["energy_n"] == pytest.approx(e(later) / e(f) - 1, rel=1e-10)
    assert norms["enstr_n"] == pytest.approx(1 / 1.01 - 1, rel=1e-10)
    # without vorticity the enstrophy is unknown, the rest is not
    no_vort = sw_norms(ShallowWaterFields(later.depth, later.surface, later.u, later.v), f, area)
    assert math.isnan(no_vort["enstr_n"]) and no_vort["h_l1"] == norms["h_l1"]


def test_global_sum_order() -> None:
    x = np.arange(6 * 3 * 2, dtype=float).reshape(6, 3, 2)
    assert global_sum(x) == x.sum()
    # i fastest within a tile: 1e16 + 1 + (-1e16) + 1 loses the first 1 in that order only
    y = np.zeros((6, 2, 2))
    y[0] = [[1e16, -1e16], [1.0, 1.0]]  # [i, j]: order (0,0), (1,0), (0,1), (1,1)
    assert global_sum(y) == 1.0
    with pytest.raises(ValueError, match="6, N, N"):
        global_sum(np.zeros((5, 2, 2)))


def test_dgrid_vorticity_of_solid_rotation() -> None:
    """u = -W y, v = W x on a unit planar grid: the circulation per cell is 2 W exactly."""
    n, w = 5, 3e-5
    x_edge = np.arange(n + 1.0)
    centre = np.arange(n) + 0.5
    u = -w * np.broadcast_to(x_edge[None, :], (n, n + 1))  # along x, at y = j (south/north edges)
    v = w * np.broadcast_to(x_edge[:, None], (n + 1, n))  # along y, at x = i (west/east edges)
    zeta = dgrid_vorticity(np.stack([u] * 6), np.stack([v] * 6), np.ones((6, n, n + 1)),
                           np.ones((6, n + 1, n)), np.ones((6, n, n)))  # fmt: skip
    np.testing.assert_allclose(zeta, 2 * w, rtol=1e-12)
    assert centre.size == n
    with pytest.raises(ValueError, match="dx has shape"):
        dgrid_vorticity(u[None], v[None], np.ones((1, n, n)), np.ones((1, n + 1, n)),
                        np.ones((1, n, n)))  # fmt: skip


def test_agreeing_digits() -> None:
    assert agreeing_digits(1.2345678, 1.2345678) == 16
    assert agreeing_digits(1.23441, 1.23449) == 4
    assert agreeing_digits(1.0, 2.0) == 0
    assert agreeing_digits(math.nan, 1.0) == 0


# -- errors name the file -------------------------------------------------------------------


def test_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(FV3ReferenceError, match="does not exist"):
        FV3Reference(tmp_path / "nothing")
    run = tmp_path / "tc2_C24_d1"
    run.mkdir()
    ref = FV3Reference(run)
    with pytest.raises(FV3ReferenceError, match=r"input\.nml is missing"):
        _ = ref.namelist_text
    with pytest.raises(FV3ReferenceError, match=r"grid_spec\.tile1\.nc is missing"):
        ref.grid()
    (run / "norms.txt").write_text(
        " SWNORMS day=    0.000000 h_l1=  0.0E+00 h_l2=  0.0E+00\n")
    with pytest.raises(FV3ReferenceError, match=r"norms\.txt, line 1: a SWNORMS line has"):
        ref.printed_norms()
    (run / "norms.txt").write_text("SWINV   day=    0.000000 Hmin=  1.0E+03 Hmax=  2.0E+03 "
                                   "mass=  1.0E+18 energy=  1.0E+22 enstrophy=  x\n")
    with pytest.raises(FV3ReferenceError, match="line 1: not a number"):
        parse_norms(run / "norms.txt")
    (run / "norms.txt").write_text("SWINV   day=    0.000000 Hmin=  1.0E+03 Hmax=  2.0E+03 "
                                   "mass=  1.0E+18 energy=  1.0E+22 enstrophy=  1.0E+03\n")
    with pytest.raises(FV3ReferenceError, match="lack their SWNORMS or SWINV line"):
        parse_norms(run / "norms.txt")
    (run / "input.nml").write_text("&fv_core_nml\n npx = 25 ! comment\n layout = 1,1\n/\n")
    assert ref.resolution == 24 and ref.setting("FV_CORE_NML", "layout") == (1, 1)
    with pytest.raises(FV3ReferenceError, match=r"input\.nml: no n_split in &fv_core_nml"):
        ref.setting("fv_core_nml", "n_split")
    (run / "grid_spec.tile1.nc").write_text("not netCDF")
    with pytest.raises(FV3ReferenceError, match=r"cannot read .*grid_spec\.tile1\.nc"):
        ref.grid()


@needs_reference
def test_missing_output_time_and_variable(tmp_path: Path) -> None:
    ref = FV3Reference(ROOT / "tc2_C24_d1")
    with pytest.raises(FV3ReferenceError, match=r"no output at 7 h; the file has \[6.0, 12.0"):
        ref.output(7.0)
    with pytest.raises(FV3ReferenceError, match="no norms printed at 7 h"):
        ref.printed_norms().at(7.0)


def test_namelist_values() -> None:
    from fv3core.validation.reference import read_namelist_values

    nml = read_namelist_values(
        "&main_nml\n days = 5\n dt_atmos = 1200\n/\n&fv_core_nml\n d4_bg = 0.12\n"
        " fv_debug = .F.\n do_schmidt = .false.\n adiabatic = .true.\n name = 'a, b' \n/\n"
    )
    assert nml["main_nml"] == {"days": 5, "dt_atmos": 1200}
    assert nml["fv_core_nml"] == {"d4_bg": 0.12, "fv_debug": False, "do_schmidt": False,
                                  "adiabatic": True, "name": "a, b"}  # fmt: skip


@needs_reference
def test_namelist_of_a_run() -> None:
    ref = FV3Reference(ROOT / "tc2_C48_d5")
    assert ref.setting("fv_core_nml", "n_split") == 4
    assert ref.setting("main_nml", "dt_atmos") == 1200
    assert ref.setting("test_case_nml", "test_case") == 2
    assert ref.setting("fv_core_nml", "hord_mt") == 8 and ref.setting("fv_core_nml", "nord") == 2
    assert "&fv_core_nml" in ref.namelist_text


# -- the committed extract (CI) -------------------------------------------------------------


def test_committed_extract_reproduces_its_printed_norms() -> None:
    """Runs everywhere (CI too): the committed arrays give the committed 6 h norms."""
    e = load_extract(EXTRACT)
    assert EXTRACT.stat().st_size < 200_000
    assert e.run == "tc2_C24_d1" and e.hours == 6.0
    for a in (e.output.depth, e.output.u, e.output.v, e.initial.depth, e.area, e.lon):
        assert a.shape == (6, 24, 24) and a.dtype == np.float64
    names = {s["name"] for s in e.metadata["sources"]}
    assert {"norms.txt", "input.nml", "atmos_out.tile6.nc", "grid_spec.tile1.nc"} <= names
    assert all(len(s["sha256"]) == 64 for s in e.metadata["sources"])
    assert e.metadata["command"].startswith("python -m fv3core.validation.extract")
    assert e.printed_lines[2].split()[:2] == ["SWNORMS", "day="]
    f0 = coriolis(e.lon, e.lat)
    start = e.initial.fields()
    computed0 = invariants(start, e.area)
    initial = Invariants(computed0.Hmin, computed0.Hmax, computed0.mass, computed0.energy,
                         e.printed_initial["enstrophy"])  # fmt: skip
    ours = sw_norms(e.output.fields(f0), start, e.area, initial_invariants=initial)
    check_against_printed(ours, e.printed, f"{EXTRACT.name} at 6 h")
    assert computed0.energy == pytest.approx(e.printed_initial["energy"], rel=1e-15)


@needs_reference
def test_committed_extract_equals_a_fresh_extraction() -> None:
    fresh = extract(FV3Reference(ROOT / "tc2_C24_d1"), hours=6.0)
    with np.load(EXTRACT, allow_pickle=False) as z:
        committed = {k: z[k] for k in z.files}
    assert set(committed) == set(fresh)
    for key, a in fresh.items():
        if key == "metadata":
            continue
        np.testing.assert_array_equal(committed[key], a, err_msg=key)
    meta, meta_fresh = json.loads(str(committed["metadata"])), json.loads(str(fresh["metadata"]))
    by_name = {s["name"]: s["sha256"] for s in meta["sources"]}
    assert by_name == {s["name"]: s["sha256"] for s in meta_fresh["sources"]}


@needs_reference
def test_extract_refuses_to_overwrite(tmp_path: Path) -> None:
    ref = FV3Reference(ROOT / "tc2_C24_d1")
    out = write_extract(ref, tmp_path / "x.npz", command="test")
    with pytest.raises(FV3ReferenceError, match="exists: pass --force"):
        write_extract(ref, out, command="test")
    write_extract(ref, out, command="again", overwrite=True)
    assert load_extract(out).metadata["command"] == "again"


# -- the validation benchmark's page ----------------------------------------------------------


def _payload() -> dict:
    def rows(scale: float) -> list[dict]:
        return [{"hours": h, **{n: (scale * h if n in ALL_NAMES[:9] else 1000.0 + h)
                                for n in ALL_NAMES}} for h in (0.0, 6.0, 12.0)]  # fmt: skip

    refs = {"tc2_C24_d1": {"resolution": 24, "run_hours": 24.0, "printed": rows(4e-4)},
            "tc2_C48_d1": {"resolution": 48, "run_hours": 24.0, "printed": rows(1e-4)}}  # fmt: skip
    ours = [{"hours": r["hours"], "ours": {**r, "h_l2": 2 * r["h_l2"]}, "fv3": r}
            for r in refs["tc2_C24_d1"]["printed"]]  # fmt: skip
    run = {"run": "tc2_C24_d1", "resolution": 24, "run_hours": 24.0, "scheme": "fv3",
           "backend": "numpy", "config": {"n_split": 2}, "deviations": ["radius 1 m"],
           "gravity": 9.80665, "steps": 72, "dt": 1200.0, "step_seconds": 25.0,
           "wall_seconds": 30.0, "revision": "abc", "rows": ours}  # fmt: skip
    return {"machine": {"cpu": "test"}, "references": refs, "reproduction": {},
            "runs": {"fv3": {"tc2_C24_d1": run}}}  # fmt: skip


def test_validation_page(tmp_path: Path) -> None:
    """The page of a synthetic payload (ours: FV3's printed norms with h_l2 doubled): the
    section, tables, digits and orders."""
    from benchmarks.fv3_validation import plot_case, render

    payload = _payload()
    png = plot_case(payload["runs"]["fv3"]["tc2_C24_d1"], tmp_path / "case.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    text = render(payload, {("fv3", "tc2_C24_d1"): png})
    assert "### FV3's scheme" in text and "geometric" not in text
    assert "Scheme **fv3**" in text and "radius 1 m" in text
    # h_l2 at 6 h: ours twice FV3's
    assert "| 6 | 2.400e-03 / 2.400e-03 (1.00) | 4.800e-03 / 2.400e-03 (2.00) |" in text
    assert "lines: h_l1 16, h_l2 0," in text
    # FV3's C24 -> C48 orders from its printed norms (ratio 4: order 2); ours not run at C48
    assert "| 1 | C24 -> C48 | 2.00 / — |" in text
    assert "(case.png)" in text


@needs_reference
def test_validation_config_from_the_namelist() -> None:
    from benchmarks.fv3_validation import config_for

    cfg = config_for(FV3Reference(ROOT / "tc2_C48_d1"), "numpy")
    assert (cfg.case, cfg.resolution, cfg.days, cfg.dt, cfg.n_split, cfg.hord) == (
        "williamson2", 48, 1.0, 1200.0, 4, 8)
    assert cfg.nord == 2 and cfg.d4_bg == 0.12
