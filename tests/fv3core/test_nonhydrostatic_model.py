"""The JW06 baroclinic wave on FV3's non-hydrostatic core (``hydrostatic = .false.``) through
fv3core.experiments.driver: its budgets against exact sums (dry-air mass is conserved to
round-off), w and delz in the output and the netCDF file; slow: GFDL's Fortran FV3 built from
the same sources and run non-hydrostatic on the same case (tests/fv3core/data/fortran/
jwnh_C24_L26, benchmarks/fortran_fv3/jw_cases.sh jwnh_C24_L26, FV3's own namelist), the
compiled backend against numpy, and 6 against 24 ranks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from fv3core.output.netcdf import write_netcdf
from fv3core.validation.extract import load_3d_run_extract

JWNH_C24 = Path(__file__).parent / "data" / "fortran" / "jwnh_C24_L26"


def _config(**changes) -> FV3Config:
    return FV3Config.from_dict({"case": "baroclinic", "resolution": 12, "dt": 3600.0, "days": 2.0 / 24.0,
                                "hydrostatic": False, **changes}, source="test")  # fmt: skip


@pytest.fixture(scope="module")
def two_hours():
    return run(_config(), progress=False)


def test_budgets_and_fields(two_hours, tmp_path) -> None:
    """Two hours at C12 L26: the dry-air mass changes by < 1e-14 relative; ps stays within 2 hPa
    of 1000 hPa; w (m/s) is small but not zero (the wave starts from w = 0 and hydrostatic
    balance: measured |w| < 5e-3 m/s after 2 h), delz negative, the column's heights sum to
    within 0.5 % of the hydrostatic thickness rdgas/grav T dlog(p) (the gas law of the
    Lagrangian layers); the netCDF holds w and delz on the model layers with their units."""
    d = two_hours.diagnostics
    assert abs(d["dry_mass_relative_change"]) < 1e-14
    assert 99800.0 < d["ps_min"] <= d["ps_max"] < 100200.0
    assert 1e-6 < max(abs(d["w_min"]), abs(d["w_max"])) < 5e-2
    f = two_hours.fields
    assert f["w"].shape == f["delz"].shape == (6, 12, 12, 26)
    assert (f["delz"] < 0.0).all() and all(np.isfinite(a).all() for a in f.values())
    path = write_netcdf(two_hours, tmp_path / "jwnh.nc")
    with xr.open_dataset(path) as ds:
        assert ds["w"].dims == ("time", "layer", "tile", "y", "x") and ds["w"].attrs["units"] == "m s-1"
        assert ds["delz"].attrs["units"] == "m" and list(ds["layer"].values) == list(range(1, 27))
        np.testing.assert_array_equal(ds["w"].values[0], f["w"].transpose(3, 0, 2, 1))


@pytest.mark.slow  # ~8 min on numpy: C24 L26, 6 large steps of the non-hydrostatic core
def test_c24_six_hours_equals_fortran_fv3() -> None:
    """numpy, C24 L26, dt_atmos 3600 s, read from the Fortran run's input.nml (hydrostatic =
    .false., a_imp 0.75: SIM on the D grid, SIM1 on the C grid; k_split 2, n_split 4, hord 10,
    kord 8/-8/8, kord_wz 8): every hour FV3's printed extrema (PS, UA, VA, TA and W) equal the
    Fortran run's prints to their printed precision (8 digits: rtol 1e-7; W 1e-6); after 6 h
    ps, the 850 hPa fields, w and delz equal the Fortran model's netCDF output: the largest
    difference over the field's largest magnitude, measured ps 2.2e-12, t850 9.7e-14, u850
    1.2e-11, v850 1.2e-9, vort850 2.2e-11, w 5.5e-8 (w, O(1e-3) m/s, is the small residual of
    the solver's pressure terms: round-off grown over 48 acoustic steps, and libm's exp/log
    against NumPy's); tolerances below."""
    ref = load_3d_run_extract(JWNH_C24)
    cfg = FV3Config.from_namelist(JWNH_C24 / "input.nml", days=0.25, print_freq=1)
    assert not cfg.hydrostatic
    result = run(cfg, progress=False, history_every_s=6 * 3600.0)
    for seconds, printout in result.printouts[1:]:
        (row,) = np.flatnonzero(ref.printed_hours == seconds / 3600.0)
        for name in ("PS", "UA", "VA", "TA"):
            for stat in ("max", "min", "mean"):
                key = f"{name}_{stat}"
                np.testing.assert_allclose(printout[key], ref.printed[key][row], rtol=1e-7, atol=1e-8,
                                           err_msg=f"{key} at {seconds / 3600.0} h")  # fmt: skip
        for stat in ("max", "min", "mean"):  # w is O(1e-2) m/s, its bottom-layer mean O(1e-7)
            np.testing.assert_allclose(printout[f"W_{stat}"], ref.printed[f"W_{stat}"][row], rtol=1e-6, atol=1e-14,
                                       err_msg=f"W_{stat} at {seconds / 3600.0} h")  # fmt: skip
    hours, fields = result.history[-1]
    assert hours == 6 * 3600.0
    # the largest difference over the field's largest magnitude, and its tolerance
    tolerances = {"ps": 1e-11, "t850": 1e-9, "u850": 1e-8, "v850": 1e-8, "vort850": 1e-8, "delz": 1e-11,
                  "w": 1e-6}  # fmt: skip
    measured = {name: float(np.abs(fields[name] - ref.at(name, 6.0)).max() / np.abs(ref.at(name, 6.0)).max())
                for name in tolerances}  # fmt: skip
    assert all(measured[n] <= tol for n, tol in tolerances.items()), measured


@pytest.mark.slow  # the non-hydrostatic core's C++ builds (about 50 min on 2 cores, cold cache)
def test_gt_cpu_ifirst_equals_numpy() -> None:
    """Every output field after 2 h on gt:cpu_ifirst equals numpy's to 1e-7 of the field's
    largest magnitude (glibc's exp/log/pow against NumPy's differ in the last bit, as for the
    hydrostatic core: tests/fv3core/test_baroclinic_compiled.py)."""
    fields = ("ps", "t850", "u850", "v850", "ua", "va", "temperature", "delp", "pe", "w", "delz")

    def output(backend: str) -> dict[str, np.ndarray]:
        return run(_config(backend=backend), progress=False, history_every_s=7200.0,
                   history_fields=list(fields)).history[-1][1]  # fmt: skip

    ref, got = output("numpy"), output("gt:cpu_ifirst")
    for name in fields:
        scale = np.abs(ref[name]).max()
        np.testing.assert_allclose(got[name], ref[name], rtol=0, atol=1e-7 * scale, err_msg=name)


@pytest.mark.slow  # ~5 min on numpy: two decompositions' builds
def test_one_process_6_and_24_ranks_bitwise() -> None:
    """Two large steps at C12 L26 on 6 ranks (layout 1) and on 24 ranks (layout 2, in this
    process): every gathered output field, w and delz included, bit for bit."""
    results = [run(_config(layout=layout), progress=False, history_every_s=7200.0).history[-1][1]
               for layout in (1, 2)]  # fmt: skip
    assert "w" in results[0]
    for name, a in results[0].items():
        np.testing.assert_array_equal(a, results[1][name], err_msg=name)
