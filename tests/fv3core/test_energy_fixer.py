"""FV3's total-energy fixer ``consv_te`` (fv3core.vertical.energy_fixer, in
DynamicalCore) against the NumPy transliteration of FV3's loops
(tests.fv3core.transliteration.energy_fixer, in the transliterated fv_dynamics): one large step bit
for bit; and against the energy budget it is built to close, with the total energy computed by
an independent diagnostic (fv3core.validation.baroclinic_norms.total_energy): consv_te = 1
conserves the total energy to round-off, 0.5 restores half the loss, a negative value adds
its prescribed flux (W/m^2 times the sphere's area and the step) exactly.

State: tests/fv3core/test_fv3_hydrostatic.py's C12 6-rank state (6 layers, two tracers)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fv3core.constants import UFS
from fv3core.dycore.fv_dynamics import DynamicalCore, DynamicsOptions
from fv3core.grid.decomposition import decompose
from fv3core.grid.metric_terms import CubedSphere
from fv3core.validation.baroclinic_norms import column_total_energy, dgrid_kinetic_energy
from stencils.factory import StencilFactory
from tests.fv3core.test_fv3_dyn_core import AKAP, CP_AIR, NPZ, OMEGA, OPTIONS, RADIUS, RESOLUTION
from tests.fv3core.test_fv3_hydrostatic import DT_ATMOS, H, N, _model_states
from tests.fv3core.transliteration import energy_fixer as reference
from tests.fv3core.transliteration.dyn_core_hydrostatic import HydrostaticTileFields
from tests.fv3core.transliteration.fv_dynamics import HydrostaticDynamics
from tests.fv3core.transliteration.setup import grid_from_metric

CELLS = np.s_[H : H + N, H : H + N]


def _options(consv_te: float) -> DynamicsOptions:
    return DynamicsOptions(OPTIONS, k_split=2, hord_tr=8, kord_mt=8, kord_tm=-8, kord_tr=8,
                              consv_te=consv_te)  # fmt: skip


@pytest.fixture(scope="module")
def setup():
    cube = CubedSphere.build(RESOLUTION, radius=RADIUS, omega=OMEGA)
    ranks = decompose(RESOLUTION, 1).ranks
    metrics = {r.rank: cube.metric_terms(r.spec) for r in ranks}
    return cube, ranks, metrics


def _model(setup, consv_te: float):
    cube, ranks, metrics = setup
    states, tracers, (ak, bk) = _model_states(cube, ranks)
    model = DynamicalCore(StencilFactory("numpy"), metrics, states, tracers,
                                   _options(consv_te), DT_ATMOS,
                                   decompose(RESOLUTION, 1).communicator, ak=ak,
                                   bk=bk, akap=AKAP, cp_air=CP_AIR, constants=UFS)  # fmt: skip
    return model, states


def _energy(model, states, metrics) -> float:
    """The global total energy (J) of the model's state, by the diagnostic's own formula."""
    total = []
    for r, rank in model.ranks.items():
        a, m = rank.arrays(), metrics[r]
        ke = dgrid_kinetic_energy(a["u"][None, H : H + N, H : H + N + 1],
                                  a["v"][None, H : H + N + 1, H : H + N],
                                  m.rsin2[CELLS][None], m.cosa_s[CELLS][None])[0]  # fmt: skip
        te = column_total_energy(a["pt"][CELLS], a["delp"][CELLS], a["pe"][CELLS],
                                 a["peln"][CELLS], states[r]["phis"][CELLS], ke, constants=UFS)  # fmt: skip
        total.append(te * m.area[CELLS] / UFS.grav)
    return math.fsum(np.concatenate([t.reshape(-1) for t in total]))


@pytest.fixture(scope="module")
def energy_changes(setup):
    """consv_te -> (initial energy, energy after one step, the fixer's deficit)."""
    _, _, metrics = setup
    out = {}
    for consv in (0.0, 1.0, 0.5, -2.0):
        model, states = _model(setup, consv)
        e0 = _energy(model, states, metrics)
        model.step()
        deficit = model.energy_fixer.energy_deficit if model.energy_fixer else None
        out[consv] = (e0, _energy(model, states, metrics), deficit)
    return out


def test_step_with_fixer_equals_transliteration(setup) -> None:
    """consv_te = 1: pt (the temperature) after one large step and FV3's E_Flux, bit for bit;
    the other fields are the fixer-free step's (test_fv3_hydrostatic)."""
    cube, ranks, metrics = setup
    model, states = _model(setup, 1.0)
    _, tracers, (ak, bk) = _model_states(cube, ranks)
    grids = {r: grid_from_metric(m) for r, m in metrics.items()}
    fields = {}
    for r, g in grids.items():
        f = fields[r] = HydrostaticTileFields.allocate(g, NPZ)
        for name in ("delp", "pt", "u", "v", "pe", "peln", "pk", "pkz"):
            getattr(f, name).data[...] = states[r][name]
        f.phis.data[...] = states[r]["phis"]
    translit = HydrostaticDynamics(
        grids, fields, {r: [np.array(q) for q in tracers[r].values()] for r in grids},
        {r: np.array(states[r]["ps"]) for r in grids}, _options(1.0), DT_ATMOS, ak=ak, bk=bk,
        akap=AKAP, cp_air=CP_AIR, communicator=decompose(RESOLUTION, 1).communicator,
        constants=UFS)  # fmt: skip
    model.step()
    translit.step()
    assert model.energy_fixer.energy_deficit == translit.energy_deficit != 0.0
    for r, rank in model.ranks.items():
        np.testing.assert_array_equal(rank.arrays()["pt"][CELLS], fields[r].pt.data[CELLS],
                                      err_msg=f"rank {r}")  # fmt: skip


def test_consv_te_one_conserves_total_energy(energy_changes) -> None:
    """Without the fixer one step loses 1.6e-6 of the total energy (measured; the test asks
    > 1e-7); with consv_te = 1 the change is round-off (measured 1.9e-16; tolerance 1e-14)."""
    e0, e1, _ = energy_changes[0.0]
    assert (e0 - e1) / e0 > 1e-7
    e0, e1, deficit = energy_changes[1.0]
    assert abs(e1 - e0) <= 1e-14 * e0
    assert deficit > 0.0


def test_consv_te_half_restores_half(energy_changes) -> None:
    """consv_te = 0.5: the dynamics before the fix is the same as without it, so the change is
    half the fixer-free loss (measured ratio 0.5 to 1e-10; tolerance 1e-8), and E_Flux half of
    consv_te = 1's (FV3 rounds it to single precision: rtol 1e-7)."""
    e0, e_free, _ = energy_changes[0.0]
    _, e_half, d_half = energy_changes[0.5]
    np.testing.assert_allclose((e_half - e0) / (e_free - e0), 0.5, rtol=1e-8)
    np.testing.assert_allclose(d_half, 0.5 * energy_changes[1.0][2], rtol=1e-7)


def test_negative_consv_te_adds_its_flux(energy_changes) -> None:
    """consv_te = -2: the energy changes by the fixer-free loss plus -2 W/m^2 over the sphere
    (4 pi a^2) for dt_atmos, analytically (rtol 1e-8 of that flux's energy)."""
    e0, e_free, _ = energy_changes[0.0]
    _, e_flux, deficit = energy_changes[-2.0]
    assert deficit == -2.0
    want = -2.0 * 4.0 * math.pi * UFS.radius**2 * DT_ATMOS
    np.testing.assert_allclose(e_flux - e_free, want, rtol=1e-8)


def test_column_energy_equals_independent_formula(setup) -> None:
    """The transliterated compute_total_energy equals the diagnostic column energy
    (baroclinic_norms.column_total_energy, vectorised over columns) to 1e-14 relative on the
    initial state."""
    cube, ranks, metrics = setup
    states, _, _ = _model_states(cube, ranks)
    for r, s in states.items():
        m = metrics[r]
        u, v = s["u"][H : H + N, H : H + N + 1], s["v"][H : H + N + 1, H : H + N]
        got = reference.compute_total_energy(s["pt"][CELLS], s["delp"][CELLS], s["pe"][CELLS],
                                             s["peln"][CELLS], s["phis"][CELLS], u, v,
                                             m.rsin2[CELLS], m.cosa_s[CELLS], rg=UFS.rdgas,
                                             cp=CP_AIR)  # fmt: skip
        ke = dgrid_kinetic_energy(u[None], v[None], m.rsin2[CELLS][None], m.cosa_s[CELLS][None])[0]
        want = column_total_energy(s["pt"][CELLS], s["delp"][CELLS], s["pe"][CELLS],
                                   s["peln"][CELLS], s["phis"][CELLS], ke, constants=UFS)  # fmt: skip
        np.testing.assert_allclose(got, want, rtol=1e-14)
