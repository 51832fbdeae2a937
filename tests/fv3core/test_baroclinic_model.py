"""The JW06 baroclinic wave on FV3's 3-D core through fv3core.experiments.driver (BaroclinicExperiment):
its diagnostics against exact budgets (dry-air and tracer mass are conserved to round-off by
FV3's flux-form transport and remapping), the output fields and the netCDF file; slow: GFDL's
Fortran FV3 on the same case (tests/fv3core/data/fortran/jw_C24_L26, FV3's own namelist)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from fv3core.config import FV3Config
from fv3core.experiments.driver import run
from fv3core.output.netcdf import write_netcdf
from fv3core.validation.extract import load_3d_run_extract

JW_C24 = Path(__file__).parent / "data" / "fortran" / "jw_C24_L26"
JW_C24_CONSV_TE = Path(__file__).parent / "data" / "fortran" / "jw_C24_L26_consv_te"
JW_C24_CHECKER = Path(__file__).parent / "data" / "fortran" / "jw_C24_L26_checker"


@pytest.fixture(scope="module")
def two_hours():
    cfg = FV3Config.from_dict({"case": "baroclinic", "resolution": 12, "dt": 3600.0,
                               "days": 2.0 / 24.0, "checker_tr": True}, source="test")  # fmt: skip
    return run(cfg, progress=False)


def test_budgets_and_fields(two_hours, tmp_path) -> None:
    """Two hours at C12 L26 (checker_tr: FV3 sets every tracer, sphum too, to its
    checkerboard): dry-air and checker masses change by < 1e-14 relative, sphum's by exactly 0
    (measured); ps stays within 2 hPa of 1000 hPa; every field finite; the netCDF holds
    the tile and lon-lat fields with CF units."""
    d = two_hours.diagnostics
    for key in ("dry_mass_relative_change", "checker_mass_relative_change"):
        assert abs(d[key]) < 1e-14, (key, d[key])
    assert d["sphum_mass_relative_change"] == 0.0
    assert 99800.0 < d["ps_min"] <= d["ps_max"] < 100200.0
    assert abs(d["total_energy_relative_change"]) < 1e-5
    f = two_hours.fields
    assert f["ps"].shape == (6, 12, 12) and f["ps_latlon"].shape == (180, 360)
    assert all(np.isfinite(a).all() for a in f.values())
    assert "w" not in f and "delz" not in f  # the hydrostatic state has neither
    path = write_netcdf(two_hours, tmp_path / "jw.nc")
    with xr.open_dataset(path) as ds:
        assert ds["vort850"].attrs["units"] == "s-1" and ds["ps_latlon"].dims == ("time", "lat_ll", "lon_ll")
        np.testing.assert_array_equal(ds["ps"].values[0], f["ps"].transpose(0, 2, 1))


@pytest.mark.slow  # ~2 min on numpy: C24 L26, 6 large steps (gt:cpu_ifirst: its 3-D core's build)
@pytest.mark.parametrize("backend", ["numpy", "gt:cpu_ifirst"])
def test_c24_six_hours_equals_fortran_fv3(backend: str) -> None:
    """On numpy and on gt:cpu_ifirst, C24 L26, dt_atmos 3600 s, read from the Fortran run's input.nml (k_split 2, n_split 4, hord 10, kord 8/-8/8,
    nord 1, d4_bg 0.12, d2_bg_k1 0.15, d2_bg_k2 0.02): after 6 h, ps and the 850 hPa fields equal
    the Fortran model's netCDF output.  Measured: ps 6e-13, delp 6.5e-13, temperature 7.9e-11
    relative (round-off grown over 48 acoustic steps); tolerances 1e-11 (ps), 1e-9 (t850),
    1e-8 of the field's range (u850, v850, vort850); gt:cpu_ifirst measured ps 6.2e-13, t850
    2.6e-13, v850 7.8e-10 of its range; every hour, FV3's printed extrema
    (fv_diag's PS, UA, VA, TA max/min/mean, printed to 8 digits) equal the Fortran run's prints
    to their printed precision (rtol 1e-7, atol 1e-8)."""
    ref = load_3d_run_extract(JW_C24)
    cfg = FV3Config.from_namelist(JW_C24 / "input.nml", days=0.25, print_freq=1,
                                  backend=backend)  # the Fortran run's own namelist
    result = run(cfg, progress=False, history_every_s=6 * 3600.0)
    assert [t / 3600.0 for t, _ in result.printouts] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    for seconds, printout in result.printouts[1:]:
        (row,) = np.flatnonzero(ref.printed_hours == seconds / 3600.0)
        for name in ("PS", "UA", "VA", "TA"):
            for stat in ("max", "min", "mean"):
                key = f"{name}_{stat}"
                np.testing.assert_allclose(printout[key], ref.printed[key][row], rtol=1e-7,
                                           atol=1e-8, err_msg=f"{key} at {seconds / 3600.0} h")  # fmt: skip
    hours, fields = result.history[-1]
    assert hours == 6 * 3600.0
    np.testing.assert_allclose(fields["ps"], ref.at("ps", 6.0), rtol=1e-11, atol=0)
    np.testing.assert_allclose(fields["t850"], ref.at("t850", 6.0), rtol=1e-9, atol=0)
    for name in ("u850", "v850", "vort850"):
        want = ref.at(name, 6.0)
        scale = np.abs(want).max()
        assert np.abs(fields[name] - want).max() <= 1e-8 * scale, name


@pytest.mark.slow  # ~2 min on numpy: C24 L26, 6 large steps
def test_c24_energy_fixer_equals_fortran_fv3() -> None:
    """consv_te = 1 (FV3's energy fixer), the Fortran run's own input.nml (jw_C24_L26_consv_te,
    otherwise jw_C24_L26's namelist), numpy: FV3's printed Energy_Deficit (W/m^2, a
    single-precision value printed to 8 digits) every hour equals the Fortran run's to rtol
    1e-6 (measured over the 24 hourly prints of a day: 3.4e-8, i.e. the printed digits), and
    after 6 h ps and the 850 hPa fields equal the Fortran model's as closely as without the
    fixer (test above; measured ps 1.3e-12, t850 3.8e-13 relative)."""
    ref = load_3d_run_extract(JW_C24_CONSV_TE)
    cfg = FV3Config.from_namelist(JW_C24_CONSV_TE / "input.nml", days=0.25, print_freq=1)
    assert cfg.consv_te == 1.0
    result = run(cfg, progress=False, history_every_s=6 * 3600.0)
    assert len(result.printouts) == 7
    for seconds, printout in result.printouts[1:]:
        (row,) = np.flatnonzero(ref.printed_hours == seconds / 3600.0)
        want = ref.printed["energy_deficit_w_m2"][row]
        np.testing.assert_allclose(printout["energy_deficit_w_m2"], want, rtol=1e-6,
                                   err_msg=f"Energy_Deficit at {seconds / 3600.0} h")  # fmt: skip
    _, fields = result.history[-1]
    np.testing.assert_allclose(fields["ps"], ref.at("ps", 6.0), rtol=1e-11, atol=0)
    np.testing.assert_allclose(fields["t850"], ref.at("t850", 6.0), rtol=1e-9, atol=0)
    for name in ("u850", "v850", "vort850"):
        want = ref.at(name, 6.0)
        assert np.abs(fields[name] - want).max() <= 1e-8 * np.abs(want).max(), name


@pytest.mark.slow  # ~2 min on gt:cpu_ifirst once its 3-D core is built (numpy: ~12 min)
def test_c24_checker_tracer_equals_fortran_fv3() -> None:
    """FV3's checkerboard tracer (checker_tr: every tracer, here sphum and checker) through
    tracer_2d (hord_tr 8) and the remapping (kord_tr 8) for one day at C24 L26, the Fortran
    run's own input.nml (jw_C24_L26_checker), gt:cpu_ifirst: the 3-D tracer equals the Fortran
    model's to 1e-7 (measured 5.7e-9 at day 1 and 4.0e-9 at day 10), FV3's printed sphum
    max/min every hour equal the Fortran run's to their 8 printed digits (atol 1e-8), and the
    tracer stays within [0, 1 + 1e-8] (measured over 10 days: max 1 + 4.4e-9, the Fortran run
    prints 1.0000000; min 0)."""
    ref = load_3d_run_extract(JW_C24_CHECKER)
    cfg = FV3Config.from_namelist(JW_C24_CHECKER / "input.nml", days=1.0, print_freq=1,
                                  backend="gt:cpu_ifirst")  # fmt: skip
    assert cfg.checker_tr
    result = run(cfg, progress=False, history_every_s=86400.0,
                 history_fields=["sphum", "checker"])  # fmt: skip
    for seconds, printout in result.printouts[1:]:
        (row,) = np.flatnonzero(ref.printed_hours == seconds / 3600.0)
        for stat in ("max", "min"):
            np.testing.assert_allclose(printout[f"sphum_{stat}"], ref.printed[f"sphum_{stat}"][row],
                                       rtol=0, atol=1e-8, err_msg=f"sphum_{stat} at {seconds} s")  # fmt: skip
        assert 0.0 <= printout["sphum_min"] and printout["sphum_max"] <= 1.0 + 1e-8
    _, fields = result.history[-1]
    assert np.abs(fields["sphum"] - ref.at("sphum", 24.0)).max() <= 1e-7
    np.testing.assert_array_equal(fields["checker"], fields["sphum"])


@pytest.mark.slow  # ~5 min on numpy: two decompositions' builds
def test_one_process_6_and_24_ranks_bitwise() -> None:
    """The wave at C12 L26 for two large steps on 6 ranks (layout 1) and on 24 ranks (layout 2,
    in this process), with FV3's energy fixer (consv_te = 1: global sums): every gathered
    output field, the 3-D ones included, bit for bit."""
    results = []
    for layout in (1, 2):
        cfg = FV3Config.from_dict({"case": "baroclinic", "resolution": 12, "layout": layout,
                                   "dt": 3600.0, "days": 2.0 / 24.0, "checker_tr": True,
                                   "consv_te": 1.0}, source="test")  # fmt: skip
        results.append(run(cfg, progress=False, history_every_s=7200.0).history[-1][1])
    for name, a in results[0].items():
        np.testing.assert_array_equal(a, results[1][name], err_msg=name)


@pytest.mark.parallel(nprocs=6)  # not slow: mpi-pytest's child processes deselect slow tests
def test_mpi_6_ranks_bitwise_equal_to_in_process() -> None:
    """mpiexec -n 6 (one rank per process) gives bit for bit the in-process result after one
    large step of the wave at C12 L26 (every halo update of dyn_core, the tracers' and the
    output's, and the energy fixer's global sums: consv_te = 1)."""
    cfg = FV3Config.from_dict({"case": "baroclinic", "resolution": 12, "dt": 3600.0,
                               "days": 1.0 / 24.0, "consv_te": 1.0}, source="test")  # fmt: skip
    mpi_result = run(cfg, mpi=True, progress=False)
    if mpi_result.is_root:
        local = run(cfg, mpi=False, progress=False)
        for name, a in local.fields.items():
            np.testing.assert_array_equal(mpi_result.fields[name], a, err_msg=name)
