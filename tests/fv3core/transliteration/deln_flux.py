"""FV3's del-n diffusive fluxes, transliterated: ``deln_flux`` (``tp_core.F90``, the form
``fv_tp_2d`` calls without ``mass`` and ``damp_Km``: the damping of ``delp`` in ``d_sw``) and
``del6_vt_flux`` (``sw_core.F90``, without ``damp_Km``: the damping of the relative vorticity
``wk`` in ``d_sw``), cubed sphere (not a bounded domain), FV3 built without ``USE_SG`` (the
``del6_u``/``del6_v`` weights).

``nord`` 0, 1, 2: del2, del4, del6 (``nord = 3`` needs more halo than FV3 has).  ``damp`` is the
coefficient FV3 passes in, ``(damp_c * da_min) ** (nord + 1)`` (:func:`damping_coefficient`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.fv3core.transliteration.farray import FArray, R
from tests.fv3core.transliteration.tp_core import copy_corners

#: fv_tp_2d applies deln_flux when damp_c exceeds this
DELN_FLUX_THRESHOLD = 1.0e-4
#: d_sw applies del6_vt_flux when damp_v exceeds this
DEL6_VT_FLUX_THRESHOLD = 1.0e-5


def damping_coefficient(damp_c: float, da: float, nord: int) -> float:
    """FV3's ``(damp_c * da) ** (nord + 1)``: Fortran's integer power, by repeated
    multiplication (for ``nord + 1 <= 3`` the same bits as libgcc's ``__powidf2``)."""
    base = damp_c * da
    out = base
    for _ in range(nord):
        out = out * base
    return out


def _diffusive_fluxes(nord: int, npx: int, npy: int, d2: FArray, fx2: FArray, fy2: FArray,
                      g: Any) -> None:  # fmt: skip
    """The part ``deln_flux`` and ``del6_vt_flux`` share, from ``d2 = damp * q`` (set on
    ``is-1-nord:ie+1+nord, js-1-nord:je+1+nord``): the del-(2 nord + 2) fluxes ``fx2``
    (``is:ie+1, js:je``) and ``fy2`` (``is:ie, js:je+1``), ``d2`` as a work array."""
    b = g.bd
    is_, ie, js, je = b.is_, b.ie, b.js, b.je
    if nord > 0:
        copy_corners(d2, npx, npy, 1, b.ng, g)
    I, J = R(is_ - nord, ie + nord + 1), R(js - nord, je + nord)
    fx2[I, J] = g.del6_v[I, J] * (d2[I - 1, J] - d2[I, J])
    if nord > 0:
        copy_corners(d2, npx, npy, 2, b.ng, g)
    I, J = R(is_ - nord, ie + nord), R(js - nord, je + nord + 1)
    fy2[I, J] = g.del6_u[I, J] * (d2[I, J - 1] - d2[I, J])
    for n in range(1, nord + 1):
        nt = nord - n
        I, J = R(is_ - nt - 1, ie + nt + 1), R(js - nt - 1, je + nt + 1)
        d2[I, J] = (fx2[I, J] - fx2[I + 1, J] + fy2[I, J] - fy2[I, J + 1]) * g.rarea[I, J]
        copy_corners(d2, npx, npy, 1, b.ng, g)
        I, J = R(is_ - nt, ie + nt + 1), R(js - nt, je + nt)
        fx2[I, J] = g.del6_v[I, J] * (d2[I, J] - d2[I - 1, J])
        copy_corners(d2, npx, npy, 2, b.ng, g)
        I, J = R(is_ - nt, ie + nt), R(js - nt, je + nt + 1)
        fy2[I, J] = g.del6_u[I, J] * (d2[I, J] - d2[I, J - 1])


def _scaled(nord: int, damp: float, q: FArray, d2: FArray, g: Any) -> None:
    """``d2 = damp * q`` on ``is-1-nord:ie+1+nord, js-1-nord:je+1+nord``."""
    b = g.bd
    I, J = R(b.is_ - 1 - nord, b.ie + 1 + nord), R(b.js - 1 - nord, b.je + 1 + nord)
    d2[I, J] = damp * q[I, J]


def _work(g: Any) -> tuple[FArray, FArray, FArray]:
    """FV3's local ``d2(isd:ied, jsd:jed)``, ``fx2(isd:ied+1, jsd:jed)``,
    ``fy2(isd:ied, jsd:jed+1)``, NaN where FV3 leaves them undefined."""
    b = g.bd
    return (FArray.full((b.isd, b.jsd), (b.ied, b.jed), np.nan),
            FArray.full((b.isd, b.jsd), (b.ied + 1, b.jed), np.nan),
            FArray.full((b.isd, b.jsd), (b.ied, b.jed + 1), np.nan))  # fmt: skip


def deln_flux(nord: int, is_: int, ie: int, js: int, je: int, npx: int, npy: int, damp: float,
              q: FArray, fx: FArray, fy: FArray, g: Any) -> None:  # fmt: skip
    """FV3 ``deln_flux`` without ``mass`` and ``damp_Km``: adds the del-(2 nord + 2) diffusive
    fluxes of ``q`` (ghosted) to ``fx`` (``is:ie+1, js:je``) and ``fy`` (``is:ie, js:je+1``), in
    place.  ``is_`` ... ``je`` must be the rank's compute domain ``g.bd`` (as FV3 passes it)."""
    b = g.bd
    if (is_, ie, js, je) != (b.is_, b.ie, b.js, b.je):
        raise ValueError(f"deln_flux on {is_}:{ie}, {js}:{je}: FV3 passes the compute domain")
    d2, fx2, fy2 = _work(g)
    _scaled(nord, damp, q, d2, g)
    _diffusive_fluxes(nord, npx, npy, d2, fx2, fy2, g)
    I, J = R(is_, ie + 1), R(js, je)
    fx[I, J] = fx[I, J] + fx2[I, J]
    I, J = R(is_, ie), R(js, je + 1)
    fy[I, J] = fy[I, J] + fy2[I, J]


def del6_vt_flux(nord: int, npx: int, npy: int, damp: float, q: FArray, d2: FArray, fx2: FArray,
                 fy2: FArray, g: Any) -> None:  # fmt: skip
    """FV3 ``del6_vt_flux`` without ``damp_Km``: the del-(2 nord + 2) diffusive fluxes of ``q``
    (ghosted) into ``fx2`` (``isd:ied+1, jsd:jed``; set on ``is:ie+1, js:je``) and ``fy2``
    (``isd:ied, jsd:jed+1``; set on ``is:ie, js:je+1``); ``d2`` (``isd:ied, jsd:jed``) is a work
    array (``d_sw`` passes ``vort``, ``ut``, ``vt``)."""
    _scaled(nord, damp, q, d2, g)
    _diffusive_fluxes(nord, npx, npy, d2, fx2, fy2, g)
