"""FV3's scheme in fv3core (numpy backend) against GFDL's Fortran FV3 on the
cases and namelist options that ``../shared/fv3-reference`` (TC2 only) does not cover.

Reference: ``tests/fv3core/data/fortran/<run>/`` -- ``input.nml``, the run's exact namelist
(tc2_C24_d1's with only the keys the run's name says changed: ``test_case`` 1/5/6/7; all five
``hord_*`` 10/6/5; ``do_vort_damp = .true.`` with ``vtdm4 = 0.06``; ``nord = 1, dddmp = 0.2,
d2_bg = 0.005``; ``beta = 0.3``), and ``extract.npz``: FV3's depth and A-grid winds at 6 h and 24 h and the
SWNORMS/SWINV quantities at 0, 6, 12, 18 and 24 h computed offline from FV3's netCDF output
(fv3core.validation.extract.offline_norms, which reproduces the printed norms of the reference
run tc2_C24_d1 to 14-16 digits).  The runs were made with ``benchmarks/fortran_fv3`` (build.sh,
cases.sh: FMS 2026.01 + GFDL_atmos_cubed_sphere 73e28696 + atmos_drivers 945f7b15, built as the
reference runs; its tc2_C24_d1 output equals the reference's bit for bit) and extracted by
``python -m fv3core.validation.extract --run``; each extract's metadata hold the commands, the
build provenance and the SHA-256 of every source file.

Tolerances (fv3core runs each namelist as it is, 6 h = 18 steps of 1200 s):

* depth within 1e-10 of max |D| and A-grid winds within 1e-10 of max |V| (each field's maximum
  error over all cells, relative to the field's maximum);
* the SWNORMS/SWINV quantities, recomputed from fv3core's fields with the same code, within 1e-3
  relative (3 significant digits); ``mass_n`` (round-off, ~1e-16) within 1e-13 absolute;
  quantities FV3 leaves undefined (the enstrophy of test_case 1: zero depth outside the bell)
  must be undefined in both.

A case that fv3core refuses (``FV3Config.from_namelist`` raises FV3ConfigError, e.g. a hord or
test case not implemented yet) is skipped with fv3core's message, so its test turns on by itself
once the capability lands.

Measured (numpy backend): every case within 1.6e-14 (depth 3e-15, winds 1.6e-14 in TC5) at
6 h and 24 h, test_case 1 bit for bit; the norms to 9-16 significant digits (the fewest in
energy_n/enstr_n, changes of ~1e-5 of sums of ~1e22), mass_n within 2e-16.

Runtime: a 6-h C24 run takes ~14 s on numpy on a 2-core machine (~3 s for test_case 1, whose
winds are prescribed), so the default suite (~45 s) runs 6 h of the cases in ``DEFAULT`` (one
per distinct code path: advection only, orography, unlimited PPM, Smagorinsky + del2
divergence damping, off-centred pressure gradient); the other 6-h comparisons and every 1-day comparison (one 1-day run per
case, 45-60 s each, serving its 6-h tests too) are ``slow``.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.errors import FV3ConfigError
from fv3core.experiments.driver import RunResult, run
from fv3core.validation import ALL_NAMES, ShallowWaterFields, sw_norms
from fv3core.validation.extract import RunExtract, load_run_extract

DATA = Path(__file__).parent / "data" / "fortran"
RUNS = ("tc1_C24_d1", "tc5_C24_d1", "tc6_C24_d1", "tc7_C24_d1", "tc2_C24_d1_hord10",
        "tc2_C24_d1_hord6", "tc2_C24_d1_hord5", "tc2_C24_d1_vort_damp",
        "tc2_C24_d1_nord1_smag", "tc2_C24_d1_beta")  # fmt: skip
#: 6-h comparisons in the default suite (the module docstring says why these)
DEFAULT = ("tc1_C24_d1", "tc5_C24_d1", "tc2_C24_d1_hord5", "tc2_C24_d1_nord1_smag",
           "tc2_C24_d1_beta")
FIELD_TOLERANCE = 1e-10
NORM_TOLERANCE = 1e-3
ROUND_OFF = ("mass_n",)
SIX_HOURS = 6 * 3600.0

#: fv3core runs, one per (run, days): the 1-day run serves the slow 6-h tests as well
_RUNS: dict[tuple[str, float], RunResult] = {}


def six_hour_params() -> list:
    return [pytest.param(r, id=r) if r in DEFAULT else pytest.param(r, id=r,
            marks=pytest.mark.slow) for r in RUNS]  # fmt: skip


def extract_of(run_name: str) -> RunExtract:
    return load_run_extract(DATA / run_name)


def fv3core_run(run_name: str, days: float) -> RunResult:
    """fv3core on the run's namelist for ``days`` (1 for a case outside :data:`DEFAULT`), with
    its fields every 6 h; a skip when fv3core refuses the namelist."""
    if run_name not in DEFAULT:  # slow anyway: one 1-day run serves its 6-h tests too
        days = 1.0
    key = (run_name, days)
    if key not in _RUNS:
        try:
            config = FV3Config.from_namelist(DATA / run_name / "input.nml", days=days,
                                             backend="numpy")  # fmt: skip
        except FV3ConfigError as exc:
            pytest.skip(f"fv3core refuses {run_name}'s namelist: {exc}")
        _RUNS[key] = run(config, progress=False, history_every_s=SIX_HOURS)
    return _RUNS[key]


def state_at(result: RunResult, hours: float) -> dict[str, np.ndarray]:
    (fields,) = [f for t, f in result.history if t == hours * 3600.0]
    return fields


def norms_of(result: RunResult, hours: float) -> dict[str, float]:
    """FV3's SWNORMS/SWINV of fv3core's state at ``hours`` against its t = 0 state."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return sw_norms(ShallowWaterFields.from_output(state_at(result, hours)),
                        ShallowWaterFields.from_output(state_at(result, 0.0)), result.area)  # fmt: skip


def field_errors(ours: dict[str, np.ndarray], reference: RunExtract, hours: float
                 ) -> dict[str, float]:  # fmt: skip
    """Max error of depth and winds relative to the field's max."""
    fv3 = reference.states[hours]
    speed = np.hypot(fv3.u, fv3.v).max()
    return {"depth": float(np.abs(ours["depth"] - fv3.depth).max() / np.abs(fv3.depth).max()),
            "u": float(np.abs(ours["u"] - fv3.u).max() / speed),
            "v": float(np.abs(ours["v"] - fv3.v).max() / speed)}  # fmt: skip


def check_fields(run_name: str, result: RunResult, hours: float) -> None:
    reference = extract_of(run_name)
    errors = field_errors(state_at(result, hours), reference, hours)
    bad = {k: e for k, e in errors.items() if not e <= FIELD_TOLERANCE}
    assert not bad, f"{run_name} at {hours:g} h: max error / max field {errors}"


def check_norms(run_name: str, result: RunResult, hours: float) -> None:
    fv3 = extract_of(run_name).norms.at(hours)
    ours = norms_of(result, hours)
    bad = []
    for name in ALL_NAMES:
        a, b = ours[name], fv3[name]
        if math.isnan(b):
            ok = not math.isfinite(a)
        elif name in ROUND_OFF:
            ok = abs(a - b) <= 1e-13
        else:
            ok = abs(a - b) <= NORM_TOLERANCE * abs(b)
        if not ok:
            bad.append(f"{name}: fv3core {a:.6e}, FV3 {b:.6e}")
    assert not bad, f"{run_name} at {hours:g} h: " + "; ".join(bad)


# -- the committed extracts (no fv3core run) --------------------------------------------------


@pytest.mark.parametrize("run_name", RUNS)
def test_extract_is_the_runs_own(run_name: str) -> None:
    """Each extract loads, holds 6 h and 24 h fields and 6-hourly norms, and names its sources:
    the committed input.nml is byte for byte the run's (load_run_extract checks the sha256),
    tc2_C24_d1's with the run's keys changed, and the commands are recorded."""
    e = extract_of(run_name)
    assert e.run == run_name and e.hours == (6.0, 24.0)
    assert list(e.norms.hours) == [0.0, 6.0, 12.0, 18.0, 24.0]
    for state in e.states.values():
        for a in (state.depth, state.u, state.v, state.surface):
            assert a.shape == (6, 24, 24) and a.dtype == np.float64
    assert e.norms.at(0.0)["h_l2"] == 0.0 and e.norms.at(0.0)["v_linf"] == 0.0
    assert e.metadata["command"].startswith("python -m fv3core.validation.extract --run")
    assert e.metadata["fortran"]["run"]["fv3"] == "73e286963e7f453a6317bbcc2b891b310d8218a8"
    names = {s["name"] for s in e.metadata["sources"]}
    assert {"input.nml", "atmos_out.tile6.nc", "t0/input.nml", "t0/atmos_t0.tile1.nc"} <= names
    (nml,) = [s for s in e.metadata["sources"] if s["name"] == "input.nml"]
    data = (DATA / run_name / "input.nml").read_bytes()
    assert hashlib.sha256(data).hexdigest() == nml["sha256"]
    assert "npx      = 25" in e.namelist and "n_split = 2" in e.namelist


def test_extract_refuses_another_namelist(tmp_path: Path) -> None:
    import shutil

    from fv3core.errors import FV3ReferenceError

    folder = tmp_path / "tc5_C24_d1"
    shutil.copytree(DATA / "tc5_C24_d1", folder)
    (folder / "input.nml").write_text((folder / "input.nml").read_text().replace(
        "test_case = 5", "test_case = 6"))  # fmt: skip
    with pytest.raises(FV3ReferenceError, match="not the input.nml"):
        load_run_extract(folder)
    with pytest.raises(FV3ReferenceError, match="does not exist"):
        load_run_extract(tmp_path / "nothing" / "extract.npz")


def test_extracts_are_small() -> None:
    sizes = {r: (DATA / r / "extract.npz").stat().st_size for r in RUNS}
    assert max(sizes.values()) < 200_000, sizes


# -- fv3core against them ---------------------------------------------------------------------


@pytest.mark.parametrize("run_name", six_hour_params())
def test_six_hours_fields_equal_fortran_fv3(run_name: str) -> None:
    """Depth and A-grid winds after 6 h within 1e-10 of FV3's (relative to the field max)."""
    result = fv3core_run(run_name, 0.25)
    check_fields(run_name, result, 6.0)


@pytest.mark.parametrize("run_name", six_hour_params())
def test_six_hours_norms_equal_fortran_fv3(run_name: str) -> None:
    """FV3's SWNORMS/SWINV quantities of fv3core's 6-h state to 3 significant digits."""
    result = fv3core_run(run_name, 0.25)
    check_norms(run_name, result, 6.0)


@pytest.mark.slow
@pytest.mark.parametrize("run_name", RUNS)
def test_one_day_equals_fortran_fv3(run_name: str) -> None:
    """One day: fields at 6 h and 24 h within 1e-10, norms every 6 h to 3 digits."""
    result = fv3core_run(run_name, 1.0)
    for hours in (6.0, 24.0):
        check_fields(run_name, result, hours)
    for hours in (6.0, 12.0, 18.0, 24.0):
        check_norms(run_name, result, hours)
