"""FV3's off-centred D-grid pressure gradient (``beta > 0``: ``grad1_p_update`` of
``dyn_core.F90``) in FV3's scheme.

References: the NumPy transliteration of ``dyn_core``/``grad1_p_update``
(tests.fv3core.transliteration.dyn_core, which reproduces GFDL's Fortran to round-off for the TC2
reference runs) for the whole GTScript run, bit for bit; FV3's own algebra for the first
acoustic step (``beta_d = 0`` makes ``grad1_p_update`` the same operations as ``one_grad_p``,
bit for bit).  GFDL's Fortran FV3 itself with ``beta = 0.3`` (TC2 C24, 6 h and 1 day):
tests/fv3core/test_fortran_cases.py, run ``tc2_C24_d1_beta``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.errors import FV3ConfigError
from tests.fv3core.transliterated_run import assert_run_equals_transliteration
from tests.fv3core.transliteration.dyn_core import SWNamelist, grad1_p_update, one_grad_p
from tests.fv3core.transliteration.setup import TransliteratedRun

NAMELIST = Path(__file__).parent / "data" / "tc2_C24_d1_input.nml"
BETA = 0.3


def _namelist(tmp_path: Path, beta: float) -> Path:
    path = tmp_path / "input.nml"
    path.write_text(NAMELIST.read_text().replace("beta = 0.", f"beta = {beta}"))
    return path


def test_first_acoustic_step_is_one_grad_p() -> None:
    """``grad1_p_update`` with ``beta_d = 0`` and zero increments equals ``one_grad_p`` bit
    for bit (FV3's first acoustic step), and stores the increment ``du``, ``dv``."""
    run_ = TransliteratedRun(12, 2, SWNamelist(n_split=2, dt_atmos=1200.0))
    core = run_.core
    core.start()
    core.c_grid()
    rank = sorted(core.grids)[0]
    g, f = core.grids[rank], core.fields[rank]
    dt = 600.0
    states = []
    for use_beta in (False, True):
        u, v = f.u.copy(), f.v.copy()
        pkc = [p.copy() for p in f.pkc]
        gz = [z.copy() for z in f.gz]
        du, dv = f.du.copy(), f.dv.copy()
        if use_beta:
            grad1_p_update(u, v, pkc, gz, du, dv, dt, 0.0, g)
        else:
            one_grad_p(u, v, pkc, gz, dt, g)
        states.append((u.data, v.data, du.data, dv.data))
    np.testing.assert_array_equal(states[1][0], states[0][0])
    np.testing.assert_array_equal(states[1][1], states[0][1])
    assert np.abs(states[1][2]).max() > 0.0 and np.abs(states[1][3]).max() > 0.0


@pytest.mark.parametrize(("case", "resolution", "hours"), [
    ("williamson6", 12, 1),
    pytest.param("williamson2", 24, 6, marks=pytest.mark.slow),
])  # fmt: skip
def test_fv3_dynamics_with_beta_equals_transliteration(tmp_path, case, resolution,
                                                       hours) -> None:  # fmt: skip
    """FV3's scheme from the reference namelist with ``beta = 0.3`` (2 acoustic steps per
    1200 s step, so every large step has one off-centred step): TC6 at C12 after 1 h and (slow)
    TC2 at C24 after 6 h equal the transliterated dyn_core bit for bit."""
    cfg = FV3Config.from_namelist(_namelist(tmp_path, BETA), case=case, resolution=resolution,
                                  days=hours / 24)  # fmt: skip
    assert cfg.beta == BETA
    assert_run_equals_transliteration(cfg)


def test_beta_refusals(tmp_path) -> None:
    """A beta outside 0 <= beta < 1 is refused by name."""
    with pytest.raises(FV3ConfigError, match="beta=1.2"):
        FV3Config.from_namelist(_namelist(tmp_path, 1.2))
    with pytest.raises(FV3ConfigError, match="beta=-0.5"):
        FV3Config.from_namelist(_namelist(tmp_path, -0.5))
