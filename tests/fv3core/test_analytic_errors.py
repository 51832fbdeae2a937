"""TC2's errors against its analytic solution on FV3's scheme: the steady state of Williamson et
al. (1992, eqs. 90-95) at FV3's cell centres is FV3's initial height (FV3 sets it there as a point
value), so the analytic errors of the height equal FV3's SWNORMS (errors against t = 0); the
wind's analytic errors include c2l_ord4's interpolation of the D-grid winds."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.experiments.driver import run


@pytest.mark.parametrize("alpha", [0.0, np.pi / 4])
def test_tc2_analytic_errors(alpha: float) -> None:
    """C12, 6 hours. Reference: the analytic steady state (h_exact) equals FV3's initial height
    to 1e-9 m; the height's analytic l1/l2/linf equal the SWNORMS ones to 1e-6 relative; the
    wind's analytic errors are below 1% (the C12 interpolation error) and above the SWNORMS
    ones' 1e-12 (the analytic wind is not FV3's discrete initial wind)."""
    cfg = FV3Config.from_dict({"case": "williamson2", "resolution": 12, "days": 0.25,
                               "alpha": alpha}, source="test")  # fmt: skip
    result = run(cfg, progress=False)
    f, d = result.fields, result.diagnostics
    assert np.abs(f["h_exact"] - f["h_initial"]).max() < 1e-9
    for norm in ("l1", "l2", "linf"):
        assert d[f"exact_{norm}"] == pytest.approx(d[norm], rel=1e-6)
        assert d[f"exact_wind_{norm}"] == pytest.approx(d[f"wind_{norm}"], rel=0.1)
        assert d[f"exact_wind_{norm}"] != d[f"wind_{norm}"]
    assert d["exact_l2"] > 0.0
