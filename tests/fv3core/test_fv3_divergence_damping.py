"""fv3core.stencils.divergence_damping (the divergence damping of FV3's ``d_sw``) against the
transliteration's ``_del2_divergence_damping`` (nord 0) and ``_high_order_divergence_damping``
(nord 1-3) on the same inputs: FV3's TC2 state of each rank through the transliteration's
``c_sw`` (C-grid winds, A-grid winds, corner divergence), perturbed on every point, plus random
corner ``ke`` and cell vorticity ``wk``; C12 and C24 on all 6 tiles (one rank per tile), C24 on
2x2 ranks per tile (tiles 1, 3, 5) and on 3x3 (tile 2: ranks touching 2, 1, 0 tile edges).  Outputs: ``ke`` and FV3's work arrays ``uc``,
``vc``, ``divg_d``, compared over their whole arrays, bitwise.

Coefficients (all at C12, the first elsewhere): (dddmp, d2_bg) = (0.2, 1.2e-3): the
Smagorinsky part and the background both win at some corners; (20, 0): the 0.2 cap is reached;
(0, 0.01): no Smagorinsky part (FV3's ``dddmp < 1e-5``), the background only (checked by
:func:`test_coefficients_reach_every_branch`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from fv3core.errors import FV3ConfigError
from fv3core.stencils.divergence_damping import CornerFill, DivergenceDamping
from stencils.directions import X, Y
from tests.fv3core.fv3_stencil_reference import (
    RankCase,
    assert_equal_where_written,
    numpy_of,
    rank_case,
    rank_specs,
    run,
    shared_factory,
    tc2_cgrid_state,
)
from tests.fv3core.transliteration import corners
from tests.fv3core.transliteration.sw_core import (
    _del2_divergence_damping,
    _high_order_divergence_damping,
)

DT = 600.0
D4_BG = 0.12
COEFFICIENTS = [(0.2, 1.2e-3), (20.0, 0.0), (0.0, 0.01)]
#: (resolution, layout, tiles, coefficient sets): all three sets at C12, the first elsewhere
DAMPING_CASES = [(12, 1, tuple(range(6)), COEFFICIENTS), (24, 1, tuple(range(6)), COEFFICIENTS[:1]),
                 (24, 2, (0, 2, 4), COEFFICIENTS[:1]), (24, 3, (1,), COEFFICIENTS[:1])]  # fmt: skip
NAMES = ("u", "v", "ua", "va", "uc", "vc", "divg_d")


@lru_cache(maxsize=64)
def _case(spec) -> tuple[RankCase, dict[str, np.ndarray]]:
    case = rank_case(spec, shared_factory())
    state = tc2_cgrid_state(case, DT, seed=spec.tile + 7 * spec.i0 + 13 * spec.j0)
    rng = np.random.default_rng(spec.tile)
    state["ke"] = 1.0e3 * rng.standard_normal(case.shape("corner"))
    state["wk"] = 1.0e-5 * rng.standard_normal(case.shape("cell"))
    return case, state


def _reference(case: RankCase, state: dict, nord: int, dddmp: float, d2_bg: float) -> dict:
    r = {k: case.fa(state[k]) for k in (*NAMES, "ke", "wk")}
    if nord == 0:
        _del2_divergence_damping(r["u"], r["v"], r["ua"], r["va"], r["uc"], r["vc"], r["ke"],
                                 DT, dddmp, d2_bg, case.g)  # fmt: skip
    else:
        _high_order_divergence_damping(r["divg_d"], r["uc"], r["vc"], r["ke"], r["wk"], DT,
                                       nord, dddmp, d2_bg, D4_BG, case.g)  # fmt: skip
    return {k: v.data for k, v in r.items()}


def _ours(case: RankCase, state: dict, nord: int, dddmp: float, d2_bg: float
          ) -> tuple[dict, int]:  # fmt: skip
    s = {k: case.storage(state[k]) for k in (*NAMES, "ke", "wk")}
    damping = DivergenceDamping(case.factory, case.grid, case.spec, nord, dddmp, d2_bg, D4_BG,
                                   DT)  # fmt: skip
    launches = damping.bind(*(s[k] for k in NAMES), s["ke"], s["wk"])
    run(launches)
    return {k: numpy_of(v) for k, v in s.items()}, len(launches)


@pytest.mark.parametrize("nord", [0, 1, 2, 3])
@pytest.mark.parametrize("resolution,layout,tiles,coefficients", DAMPING_CASES,
                         ids=[f"C{n}-L{m}" for n, m, _, _ in DAMPING_CASES])  # fmt: skip
def test_damping_equals_transliteration(resolution: int, layout: int, tiles: tuple,
                                        coefficients: list, nord: int) -> None:  # fmt: skip
    for spec in rank_specs(resolution, layout, tiles):
        case, state = _case(spec)
        for dddmp, d2_bg in coefficients:
            ref = _reference(case, state, nord, dddmp, d2_bg)
            ours, n_launches = _ours(case, state, nord, dddmp, d2_bg)
            for name in ("ke", "uc", "vc", "divg_d", "u", "v", "ua", "va", "wk"):
                assert_equal_where_written(ours[name], ref[name],
                                           f"{name} nord={nord} dddmp={dddmp} {spec}")  # fmt: skip
            vertex = (spec.on_west or spec.on_east) and (spec.on_south or spec.on_north)
            fills = 3 * (nord - 1) if vertex and nord > 1 else 0
            expected = 1 if nord == 0 else 2 + 3 * nord + fills + (3 if dddmp >= 1e-5 else 0)
            assert n_launches == expected


def test_coefficients_reach_every_branch() -> None:
    """With the test's inputs (C24, tile 1), the nord = 0 Smagorinsky factor dddmp |D dt|
    exceeds d2_bg at 20-80% of the corners for (0.2, 1.2e-3) and the 0.2 cap at some for
    (20, 0); D from a run with dddmp = 0, d2_bg = 1 (then ke gains da_min_c D)."""
    case, state = _case(rank_specs(24, 1)[0])
    ke = _reference(case, state, 0, 0.0, 1.0)["ke"] - state["ke"]
    d = (ke / case.g.da_min_c)[3:-3, 3:-3]
    above = np.mean(0.2 * np.abs(d * DT) > 1.2e-3)
    assert 0.2 < above < 0.8, above
    assert np.mean(20.0 * np.abs(d * DT) > 0.2) > 0.02


@pytest.mark.parametrize("resolution,layout", [(12, 1), (24, 2)])
def test_corner_fills_equal_fv3s(resolution: int, layout: int) -> None:
    """CornerFill (B-grid x and y, D-grid vector) equals the transliteration's
    ``fill_corners_bgrid``/``fill_corners_dgrid`` on random fields with 2 levels, every point."""
    rng = np.random.default_rng(5)
    for spec in rank_specs(resolution, layout, (0, 5)):
        case = rank_case(spec, shared_factory(), nz=2)
        g, b = case.g, case.g.bd
        npx = npy = resolution + 1
        for d, fill in ((X, corners.XDIR), (Y, corners.YDIR)):
            q = rng.standard_normal(case.shape("corner") + (2,))
            ours = case.storage(q)
            run([CornerFill.bgrid(d, spec).bind(ours)])
            for k in range(2):
                ref = case.fa(q[:, :, k])
                corners.fill_corners_bgrid(ref, fill, npx, npy, b.ng, g)
                np.testing.assert_array_equal(np.asarray(ours)[:, :, k], ref.data)
        x = rng.standard_normal(case.shape("u") + (2,))
        y = rng.standard_normal(case.shape("v") + (2,))
        sx, sy = case.storage(x), case.storage(y)
        run([CornerFill.dgrid_vector(spec).bind(sx, sy)])
        for k in range(2):
            rx, ry = case.fa(x[:, :, k]), case.fa(y[:, :, k])
            corners.fill_corners_dgrid(rx, ry, npx, npy, b.ng, -1.0, g)
            np.testing.assert_array_equal(np.asarray(sx)[:, :, k], rx.data)
            np.testing.assert_array_equal(np.asarray(sy)[:, :, k], ry.data)


def test_refuses_an_unknown_nord() -> None:
    case, _ = _case(rank_specs(12, 1)[0])
    with pytest.raises(FV3ConfigError, match="nord=4"):
        DivergenceDamping(case.factory, case.grid, case.spec, 4, 0.0, 0.0, D4_BG, DT)
