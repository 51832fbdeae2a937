"""The whole-run comparison of FV3's scheme with the NumPy transliteration of FV3's
``dyn_core`` (tests.fv3core.transliteration, which reproduces GFDL's Fortran to round-off on the TC2
reference runs), shared by the tests of each namelist option."""

from __future__ import annotations

import numpy as np

from fv3core.config import FV3Config
from fv3core.experiments.driver import RunResult, run
from fv3core.experiments.shallow_water import FV3_TEST_CASES
from tests.fv3core.transliteration.dyn_core import SWNamelist
from tests.fv3core.transliteration.setup import TransliteratedRun


def namelist_of(cfg: FV3Config) -> SWNamelist:
    """The transliteration's ``fv_core_nml`` keys of ``cfg``."""
    return SWNamelist(n_split=cfg.n_split, dt_atmos=cfg.dt, nord=cfg.nord, d4_bg=cfg.d4_bg,
                      d2_bg=cfg.d2_bg, dddmp=cfg.dddmp, hord_mt=cfg.hord_mt,
                      hord_vt=cfg.hord_vt, hord_dp=cfg.hord_dp, do_vort_damp=cfg.do_vort_damp,
                      vtdm4=cfg.vtdm4, beta=cfg.beta)  # fmt: skip


def assert_run_equals_transliteration(cfg: FV3Config) -> RunResult:
    """Run ``cfg`` (its ``days``) and the transliteration: A-grid winds bit for bit, depth to
    1e-15 relative (fv3core's ``h`` is depth + surface, one rounding), mass conserved to
    1e-14 relative."""
    ours = run(cfg, progress=False)
    ref = TransliteratedRun(cfg.resolution, FV3_TEST_CASES[cfg.case], namelist_of(cfg))
    while ref.time < cfg.days * 86400.0 - 1.0:
        ref.step()
    expected = ref.global_fields()
    np.testing.assert_array_equal(ours.fields["u"], expected["ua"])
    np.testing.assert_array_equal(ours.fields["v"], expected["va"])
    depth = ours.fields["h"] - ours.fields["surface"]
    np.testing.assert_allclose(depth, expected["depth"], rtol=1e-15, atol=0)
    assert abs(ours.diagnostics["mass_relative_change"]) < 1e-14
    return ours
