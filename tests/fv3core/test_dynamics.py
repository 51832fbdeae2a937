"""Shallow-water dynamics (c_sw/d_sw): stencils against NumPy references, Williamson TC2
against its analytic steady state, conservation, and decomposition-independent results."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.config import FV3Config
from fv3core.decomposition import decompose
from fv3core.driver import run
from fv3core.dynamics import DynamicsConfig, Halo, Phase, ShallowWaterDynamics
from fv3core.errors import FV3ConfigError
from fv3core.grid.metric import MetricTerms, SubdomainSpec
from fv3core.grid.shallow_water_geometry import agrid_winds_numpy, corner_weights, dual_faces
from fv3core.testcases.williamson import A_EARTH, shallow_water_case
from stencils.directions import X, Y
from stencils.factory import StencilFactory

TC2_SHORT = {"case": "williamson2", "resolution": 12, "days": 0.125}
TC2_TINY = {"case": "williamson2", "resolution": 12, "days": 0.05}


def _model(n: int = 12, layout: int = 1, dt: float = 900.0, case: str = "williamson2"):
    sw = shallow_water_case(case)
    return sw, ShallowWaterDynamics(StencilFactory("numpy"), decompose(n, layout, radius=A_EARTH),
                                    DynamicsConfig(dt=dt), sw)


def test_dgrid_to_agrid_stencil_matches_numpy_and_analytic_winds() -> None:
    """The d2a2c stencil equals its NumPy reference (agrid_winds_numpy) to round-off, and the
    A-grid winds of TC2's D-grid initial state match the analytic wind to 2nd order (error
    shrinks >= 3.5x from C12 to C24, halos included where cells exist)."""
    errors = []
    for n in (12, 24):
        sw, model = _model(n)
        model.exchange(Halo.WIND)
        r = model.ranks[0]
        r.run(Phase.C_GRID_NORMAL_WINDS)
        ref = agrid_winds_numpy(r.rank.metric, np.asarray(r.state.u)[..., 0],
                                np.asarray(r.state.v)[..., 0])  # fmt: skip
        got = np.stack([np.asarray(w)[..., 0] for w in r.c_sw.w], -1)
        h = r.spec.n_halo
        inner = (slice(h - 2, -h + 2), slice(h, -h))  # west/east halos, interior rows
        np.testing.assert_allclose(got[inner], ref[inner], rtol=0, atol=1e-12)
        exact = sw.wind_xyz(r.rank.metric.xyz_agrid)
        errors.append(np.abs(got[inner] - exact[inner]).max())
    assert errors[0] / errors[1] > 3.5, errors


def test_corner_weights_interpolate_at_second_order_across_tile_edges() -> None:
    """Corner interpolation weights (FV3 ``a2b`` role) sum to 1 and interpolate a smooth field
    (linear in 3-D position; NumPy reference: its value at the corner point) at second order,
    tile-edge and cube-vertex corners included: the max error falls >= 3.5x from C12 to C24."""
    coef = np.array([0.3, -1.2, 0.7])
    errors = []
    for n in (12, 24):
        m = MetricTerms.build(SubdomainSpec(resolution=n, tile=1, i0=0, i1=n, j0=0, j1=n))
        w = corner_weights(m)
        f = m.xyz_agrid @ coef
        interp = (w[0, 1:-1, 1:-1] * f[:-1, :-1] + w[1, 1:-1, 1:-1] * f[1:, :-1]
                  + w[2, 1:-1, 1:-1] * f[:-1, 1:] + w[3, 1:-1, 1:-1] * f[1:, 1:])  # fmt: skip
        h = 3
        inner = slice(h - 1, -h + 1)  # all corners of the tile, edges and vertices included
        errors.append(np.abs(interp - (m.xyz @ coef)[1:-1, 1:-1])[inner, inner].max())
        np.testing.assert_allclose(w.sum(0)[h:-h, h:-h], 1.0, atol=1e-12)
        assert w[0, h, h] == 0.0  # the missing cell beyond the south-west cube vertex
    assert errors[0] / errors[1] > 3.5, errors


def test_dual_face_coefficients_reduce_to_lengths_on_orthogonal_faces() -> None:
    """Away from tile edges the dual-cell flux coefficients are (up to the grid's skew) the
    C-grid lengths (FV3 uses dyc * sin for the same flux): checked at the tile centre to 1e-3."""
    m = MetricTerms.build(SubdomainSpec(resolution=24, tile=0, i0=0, i1=24, j0=0, j1=24))
    d = {"du_y": dual_faces(m, Y).tangential, "dv_x": dual_faces(m, X).tangential,
         "dn_y": dual_faces(m, Y).normal}  # fmt: skip
    c = 15
    np.testing.assert_allclose(d["du_y"][c, c], m.dyc[c, c], rtol=1e-3)
    np.testing.assert_allclose(d["dv_x"][c, c], m.dxc[c, c], rtol=1e-3)
    assert abs(d["dn_y"][c, c]) < 1e-3 * m.dyc[c, c]


def test_tc2_short_run_stays_near_steady_state_and_conserves_mass() -> None:
    """Williamson TC2 (analytic steady state) for 3 h at C12: normalised l2 errors of h below
    2e-3 and of the wind below 2e-2 (measured 1.0e-3 / 1.3e-2 at C12, falling at 2nd order, see
    docs/fv3core/williamson.md); total mass conserved to round-off (1e-14 relative)."""
    result = run(FV3Config(**TC2_SHORT), progress=False)
    d = result.diagnostics
    assert d["l2"] < 2e-3 and d["wind_l2"] < 2e-2, d
    assert abs(d["mass_relative_change"]) < 1e-14
    assert result.fields["h"].shape == (6, 12, 12)


def test_layouts_give_bitwise_identical_dynamics() -> None:
    """TC2 on 6 ranks (layout 1) and 24 ranks (layout 2), in-process, gives bit-for-bit the
    same h and winds (owner-computes halo/edge sync makes every point decomposition-free)."""
    a = run(FV3Config(layout=1, **TC2_TINY), progress=False)
    b = run(FV3Config(layout=2, **TC2_TINY), progress=False)
    for name in ("h", "u", "v"):
        np.testing.assert_array_equal(a.fields[name], b.fields[name])


def test_stencil_major_step_is_bitwise_the_rank_by_rank_step() -> None:
    """Reference: the same model run rank by rank inside each phase (every call of rank 0,
    then rank 1, ...); ShallowWaterDynamics.step runs the phases stencil-major
    (stencils.launch.stencil_major).  Three TC2 steps, tolerance 0."""
    _, ref = _model()
    _, model = _model()
    ref._phases = {phase: [call for r in ref.ranks for call in r.launches(phase)]
                   for phase in Phase}  # fmt: skip
    assert [len(v) for v in ref._phases.values()] == [len(v) for v in model._phases.values()]
    assert ref._phases != model._phases or len(model.ranks) == 1
    for _ in range(3):
        ref.step()
        model.step()
    for a, b in zip(ref.ranks, model.ranks):
        for name in ("h", "u", "v"):
            np.testing.assert_array_equal(np.asarray(getattr(a.state, name)),
                                          np.asarray(getattr(b.state, name)))  # fmt: skip
    with pytest.raises(ValueError, match="unknown phase 'nope'"):
        model.ranks[0].launches("nope")


def test_config_accepts_dynamics_and_rejects_bad_values() -> None:
    """Shallow-water cases are accepted; bad n_split / dddmp and an unstable dt raise
    FV3ConfigError naming the key."""
    assert FV3Config(case="williamson6").is_dynamics
    with pytest.raises(FV3ConfigError, match="n_split=0"):
        FV3Config(case="williamson2", n_split=0)
    with pytest.raises(FV3ConfigError, match="dddmp=0.5"):
        FV3Config(case="williamson2", dddmp=0.5)
    with pytest.raises(FV3ConfigError, match="unstable"):
        run(FV3Config(case="williamson2", resolution=12, dt=20000.0, days=1), progress=False)


@pytest.mark.parallel(nprocs=6)
def test_mpi_6_ranks_dynamics_bitwise_equal_to_in_process() -> None:
    """TC2 under mpiexec -n 6 (MPIComm) gives bit-for-bit the in-process result."""
    cfg = FV3Config(**TC2_TINY)
    mpi_result = run(cfg, mpi=True, progress=False)
    if mpi_result.is_root:
        local = run(cfg, mpi=False, progress=False)
        for name in ("h", "u", "v"):
            np.testing.assert_array_equal(mpi_result.fields[name], local.fields[name])
