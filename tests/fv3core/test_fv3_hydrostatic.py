"""FV3's hydrostatic 3-D core, one large time step of ``fv_dynamics`` in GTScript
(fv3core.dycore.fv_dynamics.DynamicalCore: dyn_core, tracer_2d (FV3's default z_tracer =
.false.), Lagrangian_to_Eulerian,
k_split = 2) against the composition of the NumPy transliterations of FV3's routines
(tests.fv3core.transliteration.fv_dynamics.HydrostaticDynamics), bit for bit; and the conservation
FV3's scheme guarantees, against exact sums: dry mass to round-off, tracer mass to round-off,
a constant tracer stays constant.

State: the C12 6-rank state of tests/fv3core/test_fv3_dyn_core.py (6 layers of FV3's hybrid
levels, FV3's TC2 winds per layer, a stratified temperature with a horizontal wave, pt the
temperature as ``fv_dynamics`` receives it) with FV3's p_var pressures and two tracers: a
checkerboard-like smooth field and a constant."""

from __future__ import annotations

import numpy as np
import pytest

from fv3core.dycore.fv_dynamics import DynamicalCore, DynamicsOptions
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
    _states,
)
from tests.fv3core.transliteration.dyn_core_hydrostatic import HydrostaticTileFields
from tests.fv3core.transliteration.fv_dynamics import HydrostaticDynamics
from tests.fv3core.transliteration.setup import grid_from_metric

DT_ATMOS = 1800.0
H, N = 3, RESOLUTION


def _model_states(cube, ranks, states_of=_states):
    """``states_of(cube, ranks)`` (default the dyn_core test's) with FV3's p_var pressures, pt
    the temperature, ps, and two tracers."""
    ak, bk, ptop = _levels(NPZ)
    states = states_of(cube, ranks)
    tracers = {}
    for r in ranks:
        s, m = states[r.rank], cube.metric_terms(r.spec)
        delp = s["delp"]
        pe = ptop + np.concatenate([np.zeros(delp.shape[:2] + (1,)), np.cumsum(delp, axis=2)], axis=2)
        s["pe"], s["peln"], s["pk"] = pe, np.log(pe), np.exp(AKAP * np.log(pe))
        s["pkz"] = np.diff(s["pk"], axis=2) / (AKAP * np.diff(s["peln"], axis=2))
        s["pt"] = s["pt"] * s["pkz"]  # the temperature: fv_dynamics divides by pkz on entry
        s["ps"] = pe[:, :, -1]
        lon, lat = m.agrid[..., 0], m.agrid[..., 1]
        wave = 1.0 + 0.5 * np.sin(3.0 * lon) * np.cos(lat) ** 2
        tracers[r.rank] = {"wave": np.repeat(wave[:, :, None], NPZ, axis=2) * 1e-3,
                           "constant": np.full(delp.shape, 2.0e-3)}  # fmt: skip
    return states, tracers, (ak, bk)


@pytest.fixture(scope="module")
def runs():
    """One large step of both, from the same state."""
    options = DynamicsOptions(OPTIONS, k_split=2, hord_tr=8, kord_mt=8, kord_tm=-8, kord_tr=8)
    cube = CubedSphere.build(RESOLUTION, radius=RADIUS, omega=OMEGA)
    ranks = decompose(RESOLUTION, 1).ranks
    states, tracers, (ak, bk) = _model_states(cube, ranks)
    metrics = {r.rank: cube.metric_terms(r.spec) for r in ranks}
    ours = DynamicalCore(StencilFactory("numpy"), metrics, states, tracers, options,
                                  DT_ATMOS, decompose(RESOLUTION, 1).communicator,
                                  ak=ak, bk=bk, akap=AKAP, cp_air=CP_AIR)  # fmt: skip
    grids = {r: grid_from_metric(m) for r, m in metrics.items()}
    fields, ref_tracers, ref_ps = {}, {}, {}
    for r, g in grids.items():
        f = fields[r] = HydrostaticTileFields.allocate(g, NPZ)
        for name in ("delp", "pt", "u", "v", "pe", "peln", "pk", "pkz"):
            getattr(f, name).data[...] = states[r][name]
        f.phis.data[...] = states[r]["phis"]
        ref_tracers[r] = [np.array(q) for q in tracers[r].values()]
        ref_ps[r] = np.array(states[r]["ps"])
    reference = HydrostaticDynamics(grids, fields, ref_tracers, ref_ps, options, DT_ATMOS, ak=ak,
                                    bk=bk, akap=AKAP, cp_air=CP_AIR,
                                    communicator=decompose(RESOLUTION, 1).communicator)  # fmt: skip
    before = {r: {k: np.array(v) for k, v in ours.ranks[r].arrays().items()} for r in ours.ranks}
    ours.step()
    reference.step()
    return ours, (fields, ref_tracers, ref_ps), metrics, before


def test_step_equals_transliteration(runs) -> None:
    """delp, pt (the temperature again), u, v, ps, pe, peln, pk, pkz and both tracers after
    one large step: bitwise over the compute points."""
    ours, (fields, tracers, ps), _, _ = runs
    cells = np.s_[H : H + N, H : H + N]
    where = {"u": np.s_[H : H + N, H : H + N + 1], "v": np.s_[H : H + N + 1, H : H + N]}
    for r, rank in ours.ranks.items():
        got = rank.arrays()
        for name in ("delp", "pt", "u", "v", "pe", "peln", "pk", "pkz"):
            np.testing.assert_array_equal(got[name][where.get(name, cells)],
                                          getattr(fields[r], name).data[where.get(name, cells)],
                                          err_msg=f"rank {r} {name}")  # fmt: skip
        np.testing.assert_array_equal(got["ps"][cells], ps[r][cells], err_msg=f"rank {r} ps")
        for name, q in zip(("wave", "constant"), tracers[r]):
            np.testing.assert_array_equal(got[name][cells], q[cells], err_msg=f"rank {r} {name}")


def test_conservation(runs) -> None:
    """Over the cube: dry mass sum(delp area) and tracer mass sum(q delp area) after the step
    equal their initial values to 1e-14 relative; the constant tracer stays 2e-3 to 1e-15; ps
    is the column sum of delp plus ptop; the levels are FV3's ak + bk ps again."""
    ours, _, metrics, before = runs
    ak, bk = ours.ak, ours.bk
    totals = {"mass": [0.0, 0.0], "wave": [0.0, 0.0]}
    for r, rank in ours.ranks.items():
        area = metrics[r].area[H : H + N, H : H + N, None]
        for k, state in enumerate((before[r], rank.arrays())):
            delp = state["delp"][H : H + N, H : H + N]
            totals["mass"][k] += float((delp * area).sum())
            totals["wave"][k] += float((state["wave"][H : H + N, H : H + N] * delp * area).sum())
        after = rank.arrays()
        np.testing.assert_allclose(after["constant"][H : H + N, H : H + N], 2.0e-3, rtol=1e-15)
        ps = after["ps"][H : H + N, H : H + N]
        column = ak[0] + after["delp"][H : H + N, H : H + N].sum(axis=2)
        np.testing.assert_allclose(column, ps, rtol=1e-14)
        np.testing.assert_allclose(after["delp"][H : H + N, H : H + N],
                                   np.diff(ak + bk * ps[:, :, None], axis=2), rtol=1e-12)  # fmt: skip
    for name, (start, end) in totals.items():
        assert abs(end - start) <= 1e-14 * abs(start), (name, start, end)


def test_refuses_too_few_layers() -> None:
    """FV3 remaps only with npz > 4: fewer layers are refused by name."""
    with pytest.raises(FV3ConfigError, match="npz=3"):
        DynamicalCore(StencilFactory("numpy"), {}, {}, {}, DynamicsOptions(OPTIONS),
                               1800.0, None, ak=np.zeros(4), bk=np.zeros(4), akap=AKAP,
                               cp_air=CP_AIR)  # fmt: skip
