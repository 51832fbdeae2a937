"""The NumPy transliteration of FV3's shallow-water routines against GFDL's Fortran FV3.

Reference: the Fortran model's own output (TC2 at C24 with the reference run's namelist:
n_split 2, dt_atmos 1200 s, nord 2, d4_bg 0.12, dddmp 0, hord 8), committed to the repo as
tests/fv3core/data/fv3_tc2_c24_6h.npz by ``python -m fv3core.validation.extract`` from
../shared/fv3-reference/tc2_C24_d1, so CI checks the fidelity on every commit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fv3core.validation.extract import load_extract
from tests.fv3core.transliteration.dyn_core import SWNamelist
from tests.fv3core.transliteration.setup import TransliteratedRun

EXTRACT = Path(__file__).parent / "data" / "fv3_tc2_c24_6h.npz"


@pytest.fixture(scope="module")
def tc2_c24_6h() -> tuple[TransliteratedRun, object]:
    ref = load_extract(EXTRACT)
    run = TransliteratedRun(24, 2, SWNamelist(n_split=2, dt_atmos=1200.0, nord=2, d4_bg=0.12))
    initial = run.global_fields()
    while run.time < 6 * 3600.0 - 1.0:
        run.step()
    return run, ref, initial


def test_initial_state_is_fv3s_bit_for_bit(tc2_c24_6h) -> None:
    """Step 0: depth and A-grid winds equal FV3's atmos_static (ps_ic, ua_ic, va_ic) exactly."""
    _, ref, initial = tc2_c24_6h
    np.testing.assert_array_equal(initial["depth"], ref.initial.depth)
    np.testing.assert_array_equal(initial["ua"], ref.initial.u)
    np.testing.assert_array_equal(initial["va"], ref.initial.v)


def test_tc2_c24_after_6_hours_equals_fortran_fv3(tc2_c24_6h) -> None:
    """After 6 h (18 large steps of 2 acoustic steps, all of c_sw, geopk, p_grad_c, d_sw with
    hord 8 and del6 divergence damping, one_grad_p and FV3's halo updates): depth within 1e-13
    relative and A-grid winds within 1e-11 m/s of FV3's (measured 1.2e-15 relative and
    1.9e-13 m/s: round-off of different libm calls and summation orders)."""
    run, ref, _ = tc2_c24_6h
    got = run.global_fields()
    out = ref.output
    depth_err = np.abs(got["depth"] - out.depth).max() / np.abs(out.depth).max()
    assert depth_err < 1e-13, depth_err
    for ours, fv3 in ((got["ua"], out.u), (got["va"], out.v)):
        assert np.abs(ours - fv3).max() < 1e-11, np.abs(ours - fv3).max()
