"""The committed extracts of the Fortran FV3 Jablonowski-Williamson runs (test_case = 13,
hydrostatic, benchmarks/fortran_fv3/jw_cases.sh) load and are self-consistent.

These test the data, not fv3core: the vertical coordinate is FV3's 26-level JW set_eta table,
the layer masses add up to the surface pressure, the t = 0 state is what FV3's init_case sets
(ps = 1000 hPa everywhere, delp from ak/bk, every tracer zero), dry mass is conserved, and the
arrays have the shapes the namelist implies.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fv3core.validation.extract import (
    DGRID,
    FIELDS_2D,
    FIELDS_3D,
    Run3DExtract,
    load_3d_run_extract,
)
from fv3core.validation.reference import read_namelist_values

DATA = Path(__file__).parent / "data" / "fortran"
#: FMS's GFS constants (CONSTANTS=GFS build)
GRAV = 9.80665
#: fv_eta.h's a26/b26 (Jablonowski & Williamson 26 levels), top first
A26 = (219.4067, 489.5209, 988.2418, 1805.2010, 2983.7240, 4462.3340, 6160.5870, 7851.2430,
       7731.2710, 7590.1310, 7424.0860, 7228.7440, 6998.9330, 6728.5740, 6410.5090, 6036.3220,
       5596.1110, 5078.2250, 4468.9600, 3752.1910, 2908.9490, 2084.739, 1334.443, 708.499,
       252.1360, 0.0, 0.0)  # fmt: skip
B26 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.01505309, 0.03276228, 0.05359622, 0.07810627,
       0.1069411, 0.1408637, 0.1807720, 0.2277220, 0.2829562, 0.3479364, 0.4243822, 0.5143168,
       0.6201202, 0.7235355, 0.8176768, 0.8962153, 0.9534761, 0.9851122, 1.0)  # fmt: skip
RUNS = ("jw_C24_L26", "jw_C48_L26")


def _runs() -> list[str]:
    return [r for r in RUNS if (DATA / r / "extract.npz").is_file()]


@pytest.fixture(scope="module", params=_runs())
def extract(request: pytest.FixtureRequest) -> Run3DExtract:
    return load_3d_run_extract(DATA / request.param)


def _dims(e: Run3DExtract) -> tuple[int, int]:
    core = read_namelist_values(e.namelist)["fv_core_nml"]
    return int(core["npx"]) - 1, int(core["npz"])


def test_the_c24_extract_is_committed() -> None:
    assert "jw_C24_L26" in _runs()


def test_namelist_is_fv3s_jw_baroclinic_wave(extract: Run3DExtract) -> None:
    nml = read_namelist_values(extract.namelist)
    assert nml["test_case_nml"]["test_case"] == 13
    core = nml["fv_core_nml"]
    assert core["hydrostatic"] is True and core["adiabatic"] is True
    assert core["npz"] == 26 and core["tau"] == 0.0
    assert extract.metadata["fortran"]["run"]["dycore"] == "hydrostatic"


def test_vertical_coordinate_is_fv3s_26_level_jw_table(extract: Run3DExtract) -> None:
    n, npz = _dims(extract)
    assert extract.ak.shape == extract.bk.shape == (npz + 1,)
    np.testing.assert_allclose(extract.ak, A26, rtol=1e-15, atol=0.0)
    np.testing.assert_allclose(extract.bk, B26, rtol=1e-15, atol=0.0)
    assert extract.ptop == extract.ak[0]
    assert extract.bk[0] == 0.0 and extract.bk[-1] == 1.0 and extract.ak[-1] == 0.0


def test_shapes_follow_the_namelist(extract: Run3DExtract) -> None:
    n, npz = _dims(extract)
    for name, a in extract.fields.items():
        times = len(extract.field_hours[name])
        if name in FIELDS_3D:
            assert a.shape == (times, 6, n, n, npz), name
        elif name in FIELDS_2D:
            assert a.shape == (times, 6, n, n), name
        else:
            assert name in DGRID
            shape = (n, n + 1) if name == "u_dgrid" else (n + 1, n)
            assert a.shape == (times, 6, *shape, npz), name
        assert np.all(np.isfinite(a)), name
    for name in ("area", "lon", "lat", "zsurf", "phis"):
        shape = extract.grid[name].shape if name in extract.grid else getattr(extract, name).shape
        assert shape == (6, n, n), name
    assert extract.grid["corner_lon"].shape == (6, n + 1, n + 1)


def test_layer_masses_add_up_to_the_surface_pressure(extract: Run3DExtract) -> None:
    if "delp" not in extract.fields:
        pytest.skip(f"{extract.run} holds no delp")
    for h in extract.field_hours["delp"]:
        ps = extract.at("ps", h)
        total = extract.at("delp", h).sum(axis=-1) + extract.ptop
        np.testing.assert_allclose(total, ps, rtol=1e-15, atol=0.0, err_msg=f"{h} h")


def test_initial_state_is_init_cases(extract: Run3DExtract) -> None:
    """test_case 13: ps = 1e5 Pa everywhere, delp = da + ps db, every tracer 0, phis = g zsurf,
    temperatures within JW's 200-310 K."""
    if 0.0 not in extract.field_hours.get("ps", ()):
        pytest.skip(f"{extract.run} holds no t = 0 state")
    assert np.all(extract.at("ps", 0.0) == 1.0e5)
    expected = np.diff(extract.ak) + 1.0e5 * np.diff(extract.bk)
    np.testing.assert_allclose(extract.at("delp", 0.0), np.broadcast_to(expected, (6, *
                               extract.at("delp", 0.0).shape[1:])), rtol=1e-15, atol=0.0)  # fmt: skip
    assert np.all(extract.at("sphum", 0.0) == 0.0)
    temp = extract.at("temp", 0.0)
    assert 200.0 < temp.min() < temp.max() < 310.0
    np.testing.assert_allclose(extract.phis / GRAV, extract.zsurf, rtol=0.0, atol=1e-12)


def test_tracers_stay_zero_and_dry_mass_is_conserved(extract: Run3DExtract) -> None:
    if "sphum" in extract.fields:
        assert np.all(extract.fields["sphum"] == 0.0)
    area = extract.grid["area"]
    hours = extract.field_hours["ps"]
    mean = [float((extract.at("ps", h) * area).sum() / area.sum()) for h in hours]
    if 0.0 in hours:
        assert mean[0] == pytest.approx(1.0e5, rel=1e-15)
    np.testing.assert_allclose(mean, mean[0], rtol=1e-13, atol=0.0)


def test_dgrid_winds_at_t0_are_jw_zonal_jet(extract: Run3DExtract) -> None:
    """JW's jet peaks near 35 m/s (the perturbation adds 1 m/s); no vertical wind exists."""
    if 0.0 not in extract.field_hours.get("u_dgrid", ()):
        pytest.skip(f"{extract.run} holds no t = 0 D-grid winds")
    speed = max(np.abs(extract.at("u_dgrid", 0.0)).max(), np.abs(extract.at("v_dgrid", 0.0)).max())
    assert 30.0 < speed < 36.5


def test_printed_mass_check_is_the_output_mean_surface_pressure(extract: Run3DExtract) -> None:
    """FV3's printed "Total surface pressure (mb)" each step is the area mean of ps: constant
    (dry mass conserved) and equal to the netCDF ps's at the output times."""
    total = extract.printed["total_ps_mb"]
    assert len(total) == extract.metadata["steps"] + 1
    np.testing.assert_allclose(total, 1000.0, rtol=1e-13, atol=0.0)
    area = extract.grid["area"]
    for h in extract.field_hours["ps"]:
        (k,) = np.flatnonzero(np.isclose(extract.printed_hours, h))
        mean = (extract.at("ps", h) * area).sum() / area.sum() / 100.0
        assert total[k] == pytest.approx(mean, rel=1e-14), f"{h} h"
