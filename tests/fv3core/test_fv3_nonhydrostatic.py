"""FV3's non-hydrostatic 3-D core, one large time step of ``fv_dynamics`` in GTScript
(fv3core.dycore.fv_dynamics.DynamicalCore with ``nonhydrostatic``: pkz of the gas law from
delz, the non-hydrostatic dyn_core, tracer_2d, Lagrangian_to_Eulerian with w and delz,
k_split = 2) against the composition of the NumPy transliterations of FV3's routines
(tests.fv3core.transliteration.fv_dynamics.HydrostaticDynamics with ``nonhydrostatic``), bit for
bit; and what FV3's scheme guarantees, against exact sums: dry mass and tracer mass to
round-off, the layers' heights summing to the column's (delz's sum equals the remapped
thickness of the Lagrangian column, checked through the hydrostatic balance it starts from).

State: the non-hydrostatic dyn_core test's (tests/fv3core/test_fv3_dyn_core_nonhydrostatic.py:
C12, 6 ranks, 6 layers, FV3's start delz = -rdgas/grav T dlog(p), a smooth w) with FV3's p_var
pressures, pt the temperature as fv_dynamics receives it, and two tracers."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.constants import constants_by_name
from fv3core.dycore.fv_dynamics import DynamicalCore, DynamicsOptions
from fv3core.dycore.options import NonHydrostaticOptions
from fv3core.errors import FV3ConfigError
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere
from stencils.factory import StencilFactory
from tests.fv3core.test_fv3_dyn_core import (
    AKAP,
    CP_AIR,
    NPZ,
    OMEGA,
    OPTIONS,
    RADIUS,
    RESOLUTION,
    _levels,
)
from tests.fv3core.test_fv3_dyn_core_nonhydrostatic import _nonhydrostatic_states
from tests.fv3core.test_fv3_hydrostatic import _model_states as hydrostatic_model_states
from tests.fv3core.transliteration.dyn_core_nonhydrostatic import NonHydrostaticTileFields
from tests.fv3core.transliteration.fv_dynamics import HydrostaticDynamics
from tests.fv3core.transliteration.setup import grid_from_metric

DT_ATMOS = 1800.0
H, N = 3, RESOLUTION
UFS = constants_by_name("ufs")
NAMES = ("delp", "pt", "u", "v", "w", "delz", "pe", "peln", "pk", "pkz")


def _model_states(cube, ranks):
    return hydrostatic_model_states(cube, ranks, _nonhydrostatic_states)


OPTIONS_NH = DynamicsOptions(OPTIONS, k_split=2, hord_tr=8, kord_mt=8, kord_tm=-8, kord_tr=8,
                             nonhydrostatic=NonHydrostaticOptions())  # fmt: skip


@pytest.fixture(scope="module")
def runs():
    """One large step of both, from the same state."""
    cube = CubedSphere.build(RESOLUTION, radius=RADIUS, omega=OMEGA)
    ranks = decompose(RESOLUTION, 1).ranks
    states, tracers, (ak, bk) = _model_states(cube, ranks)
    metrics = {r.rank: cube.metric_terms(r.spec) for r in ranks}
    ours = DynamicalCore(StencilFactory("numpy"), metrics, states, tracers, OPTIONS_NH, DT_ATMOS,
                         decompose(RESOLUTION, 1).communicator, ak=ak, bk=bk, akap=AKAP, cp_air=CP_AIR,
                         constants=UFS)  # fmt: skip
    grids = {r: grid_from_metric(m) for r, m in metrics.items()}
    fields, ref_tracers, ref_ps = {}, {}, {}
    for r, g in grids.items():
        f = fields[r] = NonHydrostaticTileFields.allocate(g, NPZ)
        for name in NAMES:
            getattr(f, name).data[...] = states[r][name]
        f.phis.data[...] = states[r]["phis"]
        ref_tracers[r] = [np.array(q) for q in tracers[r].values()]
        ref_ps[r] = np.array(states[r]["ps"])
    reference = HydrostaticDynamics(grids, fields, ref_tracers, ref_ps, OPTIONS_NH, DT_ATMOS, ak=ak, bk=bk,
                                    akap=AKAP, cp_air=CP_AIR, communicator=decompose(RESOLUTION, 1).communicator,
                                    constants=UFS)  # fmt: skip
    before = {r: {k: np.array(v) for k, v in ours.ranks[r].arrays().items()} for r in ours.ranks}
    ours.step()
    reference.step()
    return ours, (fields, ref_tracers, ref_ps), metrics, before


def test_step_equals_transliteration(runs) -> None:
    """delp, pt (the temperature again), u, v, w, delz, ps, pe, peln, pk, pkz and both tracers
    after one large step: bitwise over the compute points; w and delz moved."""
    ours, (fields, tracers, ps), _, before = runs
    cells = np.s_[H : H + N, H : H + N]
    where = {"u": np.s_[H : H + N, H : H + N + 1], "v": np.s_[H : H + N + 1, H : H + N]}
    for r, rank in ours.ranks.items():
        got = rank.arrays()
        for name in NAMES:
            np.testing.assert_array_equal(got[name][where.get(name, cells)],
                                          getattr(fields[r], name).data[where.get(name, cells)],
                                          err_msg=f"rank {r} {name}")  # fmt: skip
        np.testing.assert_array_equal(got["ps"][cells], ps[r][cells], err_msg=f"rank {r} ps")
        for name, q in zip(("wave", "constant"), tracers[r]):
            np.testing.assert_array_equal(got[name][cells], q[cells], err_msg=f"rank {r} {name}")
        for name in ("w", "delz"):
            assert np.abs(got[name] - before[r][name])[cells].max() > 1e-3, name


def test_conservation(runs) -> None:
    """Over the cube: dry mass sum(delp area) and tracer mass sum(q delp area) after the step
    equal their initial values to 1e-14 relative; the constant tracer stays 2e-3 to 1e-15; ps is
    the column sum of delp plus ptop; delz stays negative (layers of positive thickness)."""
    ours, _, metrics, before = runs
    totals = {"mass": [0.0, 0.0], "wave": [0.0, 0.0]}
    for r, rank in ours.ranks.items():
        area = metrics[r].area[H : H + N, H : H + N, None]
        for k, state in enumerate((before[r], rank.arrays())):
            delp = state["delp"][H : H + N, H : H + N]
            totals["mass"][k] += float((delp * area).sum())
            totals["wave"][k] += float((state["wave"][H : H + N, H : H + N] * delp * area).sum())
        after = rank.arrays()
        np.testing.assert_allclose(after["constant"][H : H + N, H : H + N], 2.0e-3, rtol=1e-15)
        column = ours.ak[0] + after["delp"][H : H + N, H : H + N].sum(axis=2)
        np.testing.assert_allclose(column, after["ps"][H : H + N, H : H + N], rtol=1e-14)
        assert (after["delz"][H : H + N, H : H + N] < 0.0).all()
    for name, (start, end) in totals.items():
        assert abs(end - start) <= 1e-14 * abs(start), (name, start, end)


def test_refuses_what_is_not_ported() -> None:
    """The non-hydrostatic energy fixer and a core without the run's constants: refused by name."""
    with pytest.raises(FV3ConfigError, match="consv_te"):
        DynamicsOptions(OPTIONS, consv_te=1.0, nonhydrostatic=NonHydrostaticOptions())
    ak, bk, _ = _levels(NPZ)
    with pytest.raises(FV3ConfigError, match="constants"):
        DynamicalCore(StencilFactory("numpy"), {}, {}, {}, OPTIONS_NH, 1800.0, None, ak=ak, bk=bk, akap=AKAP,
                      cp_air=CP_AIR)  # fmt: skip
