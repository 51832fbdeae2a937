"""The shallow-water dynamics step on a compiled GT4Py backend agrees with the numpy backend.

Builds the ~22 dynamics stencils for the backend at C12 (6 ranks in-process, layout 1, so
every rank shares the same stencils): ~15 min on 2 loaded cores with a cold cache, seconds
with a warm one (STRATOFLOW_CACHE_DIR)."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.decomposition import decompose
from fv3core.dynamics import DynamicsConfig, ShallowWaterDynamics
from fv3core.testcases.williamson import A_EARTH, shallow_water_case
from stencils.factory import StencilFactory

STEPS = 12  # 3 h of TC2 at C12 (dt 900 s)


def _run(backend: str) -> dict[str, np.ndarray]:
    case = shallow_water_case("williamson2")
    model = ShallowWaterDynamics(StencilFactory(backend), decompose(12, 1, radius=A_EARTH),
                                 DynamicsConfig(dt=900.0), case)
    for _ in range(STEPS):
        model.step()
    return {k: np.stack([np.asarray(getattr(r.state, k))[3:15, 3:15, 0] for r in model.ranks])
            for k in ("h", "u", "v")}  # fmt: skip


@pytest.mark.slow  # ~22 C++ builds per backend: 10-15 min each with a cold cache (as in CI)
@pytest.mark.parametrize("backend", ["gt:cpu_ifirst", "dace:cpu"])
def test_compiled_dynamics_agree_with_numpy(backend: str) -> None:
    """TC2 at C12, 12 acoustic steps (3 h): depth and D-grid winds of the compiled backend
    equal the numpy backend's (the reference) to 1e-12 relative to their magnitude (depth
    ~3e3 m, winds ~40 m/s; measured: bit for bit for gt:cpu_ifirst)."""
    ref, got = _run("numpy"), _run(backend)
    for k in ("h", "u", "v"):
        scale = np.abs(ref[k]).max()
        np.testing.assert_allclose(got[k], ref[k], rtol=0, atol=1e-12 * scale, err_msg=k)
