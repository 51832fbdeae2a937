# GTScript: assignments to field parameters are the stencils' outputs (pyflakes: F841)
# ruff: noqa: F841
"""FV3's vertical remapping of the Lagrangian layers back to the hybrid sigma-pressure levels, in
GTScript: :class:`RemapProfile` (``cs_profile`` / ``scalar_profile`` with ``cs_limiters``),
:class:`MapSingle` (``map1_ppm`` / ``map_scalar`` / ``map1_q2``), :class:`FillZ` (``fillz``),
:class:`MapNTracer` (``mapn_tracer``) and :class:`LagrangianToEulerian` (the hydrostatic,
adiabatic, dry path of ``fv_mapz.F90``'s ``Lagrangian_to_Eulerian``).  Ported from GFDL's
``fv_operators.F90``, ``fv_fill.F90``, ``fv_mapz.F90``; the NumPy transliteration
:mod:`tests.fv3core.transliteration.mapz` is the reference.

Vertical layout: level 0 is the model top; interface fields (``pe``, ``pk``, ``peln``) live on
``Z_INTERFACE_DIM`` (``nz + 1`` levels), layer fields on ``Z_DIM``.

Everything is GTScript.  The data-dependent search over the source layers of FV3's mapping loop
(``do l = k0, km`` with ``goto``) is a ``while`` loop inside ``computation(FORWARD)`` reading the
source at a variable vertical offset (``pe1[0, 0, lev - kk]``), with the search position
``lev`` and the absolute level ``kk`` carried between levels in 2-D integer fields.  Two
properties of gt4py 1.1.12 shape that code: its ``numpy`` backend evaluates every statement of a
``while`` body for all columns (masked), re-reading the loop variable after each assignment, so
the loop flag is assigned last and every variable offset stays inside the column even for columns
whose search has ended; and ``with interval`` blocks of one computation must not overlap.

``kord`` (FV3 ``kord_mt``, ``kord_tm``, ``kord_tr``): the cubic-spline profiles of ``kord > 7``,
``abs(kord)`` in :data:`SUPPORTED_KORD` (8: Huynh's second constraint everywhere; 9, 10:
FV3's 2-delta-z filters with Huynh's constraint in smooth regions; 11, 12: the ``ext5``/``ext6``
variants; 13: no sub-grid limiter; 14: strictly monotone (``cs_limiters`` standard); 15:
monotone (``cs_limiters`` iv=1); 17: the unlimited "perfectly linear" spline).  ``kord <= 7``
(FV3's ``ppm_profile``) and 16 are refused.  ``iv``: -1 winds, 0 positive-definite scalars,
1 others, 2 (the top layer constant), -2 (the non-hydrostatic ``w``, its bottom value given:
FV3's ``kord_wz > 0``); -3 (``kord_wz < 0``) is refused: FV3's branch reads an unset ``gam(km)``.

Deviations from FV3 (none for valid input): FV3's callers always give target interfaces with
the source's top and bottom; the search here never leaves the column (the last source layer is
the end of any search), where FV3 would, for a target interface outside the source column,
keep the previous layer's partial sum or read past the column.  ``exp``/``log`` (``pn2``,
``pk2``): the numpy backend evaluates NumPy's, as the transliteration does (bit for bit); the
C++ backends the C library's, which can differ in the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    __INLINED,
    BACKWARD,
    FORWARD,
    PARALLEL,
    computation,
    exp,
    interval,
    log,
)

from fv3core.errors import FV3ConfigError
from stencils.dims import (
    CELL_DIMS,
    X_DIM,
    Y_DIM,
    Z_DIM,
    Z_INTERFACE_DIM,
    Dims,
    face_dims,
)
from stencils.directions import X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import from_numpy, zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]
FloatFieldK = gtscript.Field[gtscript.K, np.float64]
IntFieldIJ = gtscript.Field[gtscript.IJ, np.int64]

R3, R23, R12 = 1.0 / 3.0, 2.0 / 3.0, 1.0 / 12.0
#: FV3 ``fv_mapz``'s ``t_min`` (K): ``map_scalar``'s stricter constraint for colder layers
T_MIN = 184.0
#: ``abs(kord)`` of the cubic-spline profiles ported here
SUPPORTED_KORD = (8, 9, 10, 11, 12, 13, 14, 15, 17)
#: ``iv`` of the profiles ported here
SUPPORTED_IV = (-2, -1, 0, 1, 2)
#: fewest layers the profiles work on (top two and bottom two layers are special)
MIN_LEVELS = 5


def check_kord(kord: int, key: str = "kord", iv: int = 1, *, signed: bool = False) -> None:
    """Raise :class:`FV3ConfigError` naming ``key`` unless ``kord``/``iv`` are ported here
    (``signed``: the sign of ``kord`` selects something else, ``abs(kord)`` is the order)."""
    k = abs(kord) if signed else kord
    if k <= 7 or k not in SUPPORTED_KORD:
        raise FV3ConfigError(
            f"{key} = {kord}: only FV3's cubic-spline remapping is ported (kord in "
            f"{SUPPORTED_KORD}); FV3's ppm_profile (kord <= 7) and kord 16 are not: use e.g. "
            f"{key} = 9 or 10"
        )
    if iv == -3:
        raise FV3ConfigError(f"{key} = {kord} with iv = -3 (FV3's kord_wz < 0): FV3's cs_profile reads "
                             "gam(km), which its iv = -3 branch never sets; use kord_wz > 0 (iv = -2)")  # fmt: skip
    if iv not in SUPPORTED_IV:
        raise FV3ConfigError(f"iv = {iv}: only iv in {SUPPORTED_IV} is ported")


# ----------------------------------------------------------------------------------------------
# cs_limiters


@gtscript.function
def limiter_positive(a1, a2, a3, a4):
    """``cs_limiters(iv = 0)``: no negative values inside the layer."""
    n2, n3, n4 = a2, a3, a4
    if a1 <= 0.0:
        n2 = a1
        n3 = a1
        n4 = 0.0
    elif abs(a3 - a2) < -a4:
        if (a1 + 0.25 * ((a3 - a2) * (a3 - a2)) / a4 + a4 * R12) < 0.0:
            if a1 < a3 and a1 < a2:
                n3 = a1
                n2 = a1
                n4 = 0.0
            elif a3 > a2:
                n4 = 3.0 * (a2 - a1)
                n3 = a2 - n4
            else:
                n4 = 3.0 * (a3 - a1)
                n2 = a3 - n4
    return n2, n3, n4


@gtscript.function
def limiter_overshoot(a1, a2, a3, a4, flat):
    """``cs_limiters`` iv = 1 (``flat``: the layer mean outside the edge values) and the
    standard PPM constraint (``flat`` = ``extm``)."""
    n2, n3, n4 = a2, a3, a4
    if flat:
        n2 = a1
        n3 = a1
        n4 = 0.0
    else:
        da1 = a3 - a2
        da2 = da1 * da1
        a6da = a4 * da1
        if a6da < -da2:
            n4 = 3.0 * (a2 - a1)
            n3 = a2 - n4
        elif a6da > da2:
            n4 = 3.0 * (a3 - a1)
            n2 = a3 - n4
    return n2, n3, n4


@gtscript.function
def limiter_monotone(a1, a2, a3, a4):
    """``cs_limiters(iv = 1)``."""
    flat = (a1 - a2) * (a1 - a3) >= 0.0
    n2, n3, n4 = limiter_overshoot(a1, a2, a3, a4, flat)
    return n2, n3, n4


@gtscript.function
def a6_of(a1, a2, a3):
    """FV3's ``3.*(2.*a4(1) - (a4(2)+a4(3)))``."""
    return 3.0 * (2.0 * a1 - (a2 + a3))


@gtscript.function
def a6_alt(a1, a2, a3):
    """FV3's ``6.*a4(1) - 3.*(a4(2)+a4(3))`` (``kord`` 9 of ``cs_profile``, 10)."""
    return 6.0 * a1 - 3.0 * (a2 + a3)


@gtscript.function
def huynh(a1, a2, a3, dqm1, dq0, dqp1, dqp2):
    """Huynh's second constraint on both edges (``pmp_1``/``lac_1``, ``pmp_2``/``lac_2``);
    ``dq*`` = FV3's ``gam(k-1)``, ``gam(k)``, ``gam(k+1)``, ``gam(k+2)``."""
    pmp_1 = a1 - 2.0 * dqp1
    lac_1 = pmp_1 + 1.5 * dqp2
    n2 = min(max(a2, min(min(a1, pmp_1), lac_1)), max(max(a1, pmp_1), lac_1))
    pmp_2 = a1 + 2.0 * dq0
    lac_2 = pmp_2 - 1.5 * dqm1
    n3 = min(max(a3, min(min(a1, pmp_2), lac_2)), max(max(a1, pmp_2), lac_2))
    return n2, n3


@gtscript.function
def clip_between(q, a, b):
    """``q`` limited to the range of the two neighbouring layer means."""
    q = min(q, max(a, b))
    return max(q, min(a, b))


# ----------------------------------------------------------------------------------------------
# stencils


def profile_setup(q: FloatField, pe1: FloatField, a4_1: FloatField, dp1: FloatField):
    """FV3's ``dp1(i,k) = pe1(i,k+1) - pe1(i,k)``, ``q4(1,i,k) = q1(i,j,k)``."""
    with computation(PARALLEL), interval(...):
        dp1 = pe1[0, 0, 1] - pe1
        a4_1 = q


@gtscript.function
def spline_row(a4_1, dp1, qi, gam):
    """One interior row of the spline's forward elimination: the interface value and FV3's
    ``gam`` from the row above."""
    d4 = dp1[0, 0, -1] / dp1
    bet = 2.0 + d4 + d4 - gam[0, 0, -1]
    return (3.0 * (a4_1[0, 0, -1] + d4 * a4_1) - qi[0, 0, -1]) / bet, d4 / bet


def cs_profile(a4_1: FloatField, a4_2: FloatField, a4_3: FloatField, a4_4: FloatField,
               dp1: FloatField, qs: FloatFieldIJ, qmin: float):  # fmt: skip
    """``cs_profile`` / ``scalar_profile`` (external ``scalar``): the interface values of the
    cubic spline, their large-scale constraints, then each layer's sub-grid constraints.
    Computed on ``nz + 1`` levels (the spline's interfaces); layer ``k`` is level ``k``.
    ``iv = -2`` (the non-hydrostatic ``w``): FV3's spline with the bottom value ``qs`` and
    ``1.5 a4_1`` at the top (``gam`` then holds FV3's ``gam(k)`` of interface ``k``)."""
    from __externals__ import iv, kord, scalar

    # the spline's tridiagonal system (interface values q_i, FV3's q and gam)
    with computation(FORWARD):
        with interval(0, 1):
            if __INLINED(iv == -2):
                qi = 1.5 * a4_1
            else:
                grat = dp1[0, 0, 1] / dp1
                bet = grat * (grat + 0.5)
                qi = ((grat + grat) * (grat + 1.0) * a4_1 + a4_1[0, 0, 1]) / bet
                gam = (1.0 + grat * (grat + 1.5)) / bet
        with interval(1, 2):
            if __INLINED(iv == -2):
                gam = 0.5
                grat = dp1[0, 0, -1] / dp1
                bet = 2.0 + grat + grat - gam
                qi = (3.0 * (a4_1[0, 0, -1] + a4_1) - qi[0, 0, -1]) / bet
            else:
                qi, gam = spline_row(a4_1, dp1, qi, gam)
        with interval(2, -2):
            if __INLINED(iv == -2):
                gam = grat[0, 0, -1] / bet[0, 0, -1]
                grat = dp1[0, 0, -1] / dp1
                bet = 2.0 + grat + grat - gam
                qi = (3.0 * (a4_1[0, 0, -1] + a4_1) - qi[0, 0, -1]) / bet
            else:
                qi, gam = spline_row(a4_1, dp1, qi, gam)
        with interval(-2, -1):
            if __INLINED(iv == -2):
                gam = grat[0, 0, -1] / bet[0, 0, -1]
                grat = dp1[0, 0, -1] / dp1
                qi = (3.0 * (a4_1[0, 0, -1] + a4_1) - grat * qs - qi[0, 0, -1]) / (2.0 + grat + grat - gam)
            else:
                qi, gam = spline_row(a4_1, dp1, qi, gam)
        with interval(-1, None):
            if __INLINED(iv == -2):
                qi = qs
            else:
                d4 = dp1[0, 0, -2] / dp1[0, 0, -1]
                a_bot = 1.0 + d4 * (d4 + 1.5)
                qi = (2.0 * d4 * (d4 + 1.0) * a4_1[0, 0, -1] + a4_1[0, 0, -2] - a_bot * qi[0, 0, -1]
                      ) / (d4 * (d4 + 0.5) - a_bot * gam[0, 0, -1])  # fmt: skip
    with computation(BACKWARD):
        with interval(-2, -1):
            if __INLINED(iv != -2):
                qi = qi - gam * qi[0, 0, 1]
        with interval(0, -2):
            if __INLINED(iv == -2):
                qi = qi - gam[0, 0, 1] * qi[0, 0, 1]
            else:
                qi = qi - gam * qi[0, 0, 1]

    # dq: FV3's gam(k) = a4(1,k) - a4(1,k-1), the jump of the means across interface k
    with computation(PARALLEL), interval(1, -1):
        dq = a4_1 - a4_1[0, 0, -1]

    # large-scale constraints on the interface values
    with computation(PARALLEL):
        with interval(1, 2):
            if __INLINED(kord != 17):
                qi = clip_between(qi, a4_1[0, 0, -1], a4_1)
        with interval(2, -2):
            if __INLINED(kord != 17):
                if __INLINED(kord >= 14):
                    qi = clip_between(qi, a4_1[0, 0, -1], a4_1)
                else:
                    if dq[0, 0, -1] * dq[0, 0, 1] > 0.0:
                        qi = clip_between(qi, a4_1[0, 0, -1], a4_1)
                    elif dq[0, 0, -1] > 0.0:
                        qi = max(qi, min(a4_1[0, 0, -1], a4_1))
                    else:
                        qi = min(qi, max(a4_1[0, 0, -1], a4_1))
                        if __INLINED(iv == 0):
                            qi = max(0.0, qi)
        with interval(-2, -1):
            if __INLINED(kord != 17):
                qi = clip_between(qi, a4_1[0, 0, -1], a4_1)

    with computation(PARALLEL), interval(0, -1):
        a4_2 = qi
        a4_3 = qi[0, 0, 1]
        if __INLINED(kord == 17):
            a4_4 = a6_of(a4_1, a4_2, a4_3)

    # extremum flags from the first-guess edge values
    with computation(PARALLEL):
        with interval(0, 1):
            extm = (a4_2 - a4_1) * (a4_3 - a4_1) > 0.0
        with interval(1, -2):
            extm = dq * dq[0, 0, 1] < 0.0
        with interval(-2, -1):
            extm = (a4_2 - a4_1) * (a4_3 - a4_1) > 0.0
    with computation(PARALLEL), interval(0, -1):
        if __INLINED(kord > 9 and kord != 17):
            x0 = 2.0 * a4_1 - (a4_2 + a4_3)
            x1 = abs(a4_2 - a4_3)
            a4_4 = 3.0 * x0
            ext5 = abs(x0) > x1
            ext6 = abs(a4_4) > x1

    # sub-grid constraints: top two, interior, bottom two layers
    with computation(PARALLEL):
        with interval(0, 1):
            if __INLINED(kord != 17):
                if __INLINED(iv == 0):
                    a4_2 = max(0.0, a4_2)
                elif __INLINED(iv == -1):
                    if a4_2 * a4_1 <= 0.0:
                        a4_2 = 0.0
                elif __INLINED(iv == 2):
                    a4_2 = a4_1
                    a4_3 = a4_1
                    a4_4 = 0.0
                if __INLINED(iv != 2):
                    a4_4 = a6_of(a4_1, a4_2, a4_3)
                    a4_2, a4_3, a4_4 = limiter_monotone(a4_1, a4_2, a4_3, a4_4)
        with interval(1, 2):
            if __INLINED(kord != 17):
                a4_4 = a6_of(a4_1, a4_2, a4_3)
                a4_2, a4_3, a4_4 = limiter_overshoot(a4_1, a4_2, a4_3, a4_4, extm)
        with interval(2, -3):
            if __INLINED(kord == 8):
                a4_2, a4_3 = huynh(a4_1, a4_2, a4_3, dq[0, 0, -1], dq, dq[0, 0, 1], dq[0, 0, 2])
                a4_4 = a6_of(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 9):
                flat9 = (extm and extm[0, 0, -1]) or (extm and extm[0, 0, 1])
                if __INLINED(scalar):
                    flat9 = flat9 or (extm and a4_1 < qmin)
                if flat9:
                    a4_2 = a4_1
                    a4_3 = a4_1
                    a4_4 = 0.0
                else:
                    if __INLINED(scalar):
                        a4_4 = a6_of(a4_1, a4_2, a4_3)
                    else:
                        a4_4 = a6_alt(a4_1, a4_2, a4_3)
                    if abs(a4_4) > abs(a4_2 - a4_3):
                        a4_2, a4_3 = huynh(a4_1, a4_2, a4_3, dq[0, 0, -1], dq, dq[0, 0, 1],
                                           dq[0, 0, 2])  # fmt: skip
                        if __INLINED(scalar):
                            a4_4 = a6_of(a4_1, a4_2, a4_3)
                        else:
                            a4_4 = a6_alt(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 10):
                if extm:
                    noisy = extm[0, 0, -1] or extm[0, 0, 1]
                    if __INLINED(scalar):
                        noisy = a4_1 < qmin or noisy
                    if noisy:
                        a4_2 = a4_1
                        a4_3 = a4_1
                        a4_4 = 0.0
                    else:
                        a4_4 = a6_alt(a4_1, a4_2, a4_3)
                else:
                    a4_4 = a6_alt(a4_1, a4_2, a4_3)
                    if abs(a4_4) > abs(a4_2 - a4_3):
                        a4_2, a4_3 = huynh(a4_1, a4_2, a4_3, dq[0, 0, -1], dq, dq[0, 0, 1],
                                           dq[0, 0, 2])  # fmt: skip
                        a4_4 = a6_alt(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 11):
                noisy5 = ext5[0, 0, -1] or ext5[0, 0, 1]
                if __INLINED(scalar):
                    noisy5 = noisy5 or a4_1 < qmin
                if ext5 and noisy5:
                    a4_2 = a4_1
                    a4_3 = a4_1
                    a4_4 = 0.0
                else:
                    a4_4 = a6_of(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 12):
                n5 = ext5[0, 0, -1] or ext5[0, 0, 1]
                n6 = ext6[0, 0, -1] or ext6[0, 0, 1]
                if ext5 and n5:
                    a4_2 = a4_1
                    a4_3 = a4_1
                elif (ext5 and n6) or (not ext5 and ext6 and n5):
                    a4_2, a4_3 = huynh(a4_1, a4_2, a4_3, dq[0, 0, -1], dq, dq[0, 0, 1],
                                       dq[0, 0, 2])  # fmt: skip
                a4_4 = a6_of(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 13):
                a4_4 = a6_of(a4_1, a4_2, a4_3)
            elif __INLINED(kord == 14):
                a4_2, a4_3, a4_4 = limiter_overshoot(a4_1, a4_2, a4_3, a4_4, extm)
            elif __INLINED(kord == 15):
                a4_2, a4_3, a4_4 = limiter_monotone(a4_1, a4_2, a4_3, a4_4)
            if __INLINED(iv == 0 and kord <= 13):
                a4_2, a4_3, a4_4 = limiter_positive(a4_1, a4_2, a4_3, a4_4)
        with interval(-3, -2):
            if __INLINED(kord != 17):
                a4_4 = a6_of(a4_1, a4_2, a4_3)
                a4_2, a4_3, a4_4 = limiter_overshoot(a4_1, a4_2, a4_3, a4_4, extm)
        with interval(-2, -1):
            if __INLINED(kord != 17):
                if __INLINED(iv == 0):
                    a4_3 = max(0.0, a4_3)
                elif __INLINED(iv == -1):
                    if a4_3 * a4_1 <= 0.0:
                        a4_3 = 0.0
                a4_4 = a6_of(a4_1, a4_2, a4_3)
                a4_2, a4_3, a4_4 = limiter_monotone(a4_1, a4_2, a4_3, a4_4)


def map_layers(pe1: FloatField, pe2: FloatField, dp1: FloatField, dp2: FloatField,
               a4_1: FloatField, a4_2: FloatField, a4_3: FloatField, a4_4: FloatField,
               q2: FloatField, lev: IntFieldIJ, kk: IntFieldIJ, km: int):  # fmt: skip
    """FV3's mapping loop of ``map1_ppm``/``map_scalar``/``map1_q2``/``mapn_tracer``: the mean
    of the source profile (``a4_*`` on the layers between ``pe1``) over each target layer
    (between ``pe2``).  ``lev``: FV3's ``k0 - 1`` (the source layer the search starts from),
    ``kk`` the target layer; both carried from level to level.  Externals ``factored``
    (``mapn_tracer``'s ``fac1``/``fac2`` arithmetic) and ``by_dp2`` (divide by ``dp2``, not
    ``pe2(k+1) - pe2(k)``)."""
    from __externals__ import by_dp2, factored

    with computation(FORWARD), interval(0, 1):
        lev = 0
        kk = 0
    with computation(FORWARD), interval(...):
        # locate the top edge pe2(k): the first source layer from lev containing it
        searching = True
        while searching:
            inside = pe2 >= pe1[0, 0, lev - kk] and pe2 <= pe1[0, 0, lev - kk + 1]
            step = not inside and lev < km - 1
            if step:
                lev = lev + 1
            searching = step
        p_top = pe1[0, 0, lev - kk]
        p_bot = pe1[0, 0, lev - kk + 1]
        d1 = dp1[0, 0, lev - kk]
        b2 = a4_2[0, 0, lev - kk]
        b3 = a4_3[0, 0, lev - kk]
        b4 = a4_4[0, 0, lev - kk]
        pl = (pe2 - p_top) / d1
        if pe2[0, 0, 1] <= p_bot:
            # the whole target layer inside source layer lev
            pr = (pe2[0, 0, 1] - p_top) / d1
            if __INLINED(factored):
                fac1 = pr + pl
                fac2 = R3 * (pr * fac1 + pl * pl)
                fac1 = 0.5 * fac1
                q2 = b2 + (b4 + b3 - b2) * fac1 - b4 * fac2
            else:
                q2 = b2 + 0.5 * (b4 + b3 - b2) * (pr + pl) - b4 * R3 * (pr * (pr + pl) + pl * pl)
        else:
            # fractional part of layer lev, whole layers, fractional part of the last one
            if __INLINED(factored):
                dpf = p_bot - pe2
                fac1 = 1.0 + pl
                fac2 = R3 * (1.0 + pl * fac1)
                fac1 = 0.5 * fac1
                qsum = dpf * (b2 + (b4 + b3 - b2) * fac1 - b4 * fac2)
            else:
                qsum = (p_bot - pe2) * (b2 + 0.5 * (b4 + b3 - b2) * (1.0 + pl)
                                        - b4 * (R3 * (1.0 + pl * (1.0 + pl))))  # fmt: skip
            going = lev < km - 1
            m = lev
            if going:
                m = lev + 1
            while going:
                whole = pe2[0, 0, 1] > pe1[0, 0, m - kk + 1]
                pm = pe1[0, 0, m - kk]
                dm = dp1[0, 0, m - kk]
                c1 = a4_1[0, 0, m - kk]
                c2 = a4_2[0, 0, m - kk]
                c3 = a4_3[0, 0, m - kk]
                c4 = a4_4[0, 0, m - kk]
                if whole:
                    qsum = qsum + dm * c1
                else:
                    dpp = pe2[0, 0, 1] - pm
                    esl = dpp / dm
                    qsum = qsum + dpp * (c2 + 0.5 * esl * (c3 - c2 + c4 * (1.0 - R23 * esl)))
                    lev = m
                more = whole and m < km - 1
                if more:
                    m = m + 1
                going = more
            if __INLINED(by_dp2):
                q2 = qsum / dp2
            else:
                q2 = qsum / (pe2[0, 0, 1] - pe2)
        kk = kk + 1


def fillz_stencil(q: FloatField, dp: FloatField, zfix: IntFieldIJ, sum0: FloatFieldIJ,
                  sum1: FloatFieldIJ):  # fmt: skip
    """``fillz`` (one tracer): negative layers borrow from the layer above, then below
    (top down), the bottom layer from above, then where any layer was fixed the non-local
    rescaling of layers 2..km.  FV3 changes ``q(k-1)`` and ``q(k+1)`` in its step ``k``; here
    step ``k`` keeps what it takes from above (``dqa``) and gives below (``dqb``) and the next
    levels apply them, the same operations on the same values."""
    with computation(FORWARD):
        with interval(0, 1):
            zfix = 0
            top_neg = q < 0.0
            topadd = 0.0
            qa = q
            if top_neg:
                topadd = q * dp / dp[0, 0, 1]
                qa = 0.0
            has_a = False
            has_b = False
            dqa = 0.0
            dqb = 0.0
        with interval(1, -1):
            qk = q
            if top_neg[0, 0, -1]:
                qk = q + topadd[0, 0, -1]
            elif has_b[0, 0, -1]:
                qk = q - dqb[0, 0, -1] / dp
            top_neg = False
            has_a = False
            has_b = False
            dqa = 0.0
            dqb = 0.0
            if qk < 0.0:
                zfix = 1
                if qa[0, 0, -1] > 0.0:
                    dqa = min(qa[0, 0, -1] * dp[0, 0, -1], -qk * dp)
                    has_a = True
                    qk = qk + dqa / dp
                if qk < 0.0 and q[0, 0, 1] > 0.0:
                    dqb = min(q[0, 0, 1] * dp[0, 0, 1], -qk * dp)
                    has_b = True
                    qk = qk + dqb / dp
            qa = qk
        with interval(-1, None):
            qk = q
            if has_b[0, 0, -1]:
                qk = q - dqb[0, 0, -1] / dp
            top_neg = False
            has_a = False
            has_b = False
            dqa = 0.0
            dqb = 0.0
            if qk < 0.0 and qa[0, 0, -1] > 0.0:
                zfix = 1
                qup = qa[0, 0, -1] * dp[0, 0, -1]
                qly = -qk * dp
                dqa = min(qly, qup)
                has_a = True
                qk = qk + dqa / dp
            qa = qk
    with computation(PARALLEL):
        with interval(0, -1):
            qf = qa
            if has_a[0, 0, 1]:
                qf = qa - dqa[0, 0, 1] / dp
        with interval(-1, None):
            qf = qa
    with computation(FORWARD):
        with interval(0, 1):
            sum0 = 0.0
            sum1 = 0.0
        with interval(1, None):
            dmk = qf * dp
            sum0 = sum0 + dmk
            sum1 = sum1 + max(0.0, dmk)
    with computation(PARALLEL):
        with interval(0, 1):
            q = qf
        with interval(1, None):
            q = qf
            if zfix == 1 and sum0 > 0.0:
                fac = sum0 / sum1
                q = max(0.0, fac * (qf * dp) / dp)


def eulerian_levels(pe: FloatField, pk: FloatField, peln: FloatField, ak: FloatFieldK,
                    bk: FloatFieldK, pe2: FloatField, pn2: FloatField, pk2: FloatField,
                    ps: FloatFieldIJ, ptop: float, akap: float):  # fmt: skip
    """Step 0 of ``Lagrangian_to_Eulerian`` on the interfaces: ``ps`` = the bottom ``pe``,
    ``pe2 = ak + bk ps`` (``ptop`` at the top, ``pe`` at the bottom), ``pn2 = log(pe2)``,
    ``pk2 = exp(akap pn2)`` (the old ``peln``, ``pk`` at the top and bottom)."""
    with computation(FORWARD), interval(-1, None):
        ps = pe
    with computation(PARALLEL):
        with interval(0, 1):
            pe2 = ptop
            pn2 = peln
            pk2 = pk
        with interval(1, -1):
            pe2 = ak + bk * ps
            pn2 = log(pe2)
            pk2 = exp(akap * pn2)
        with interval(-1, None):
            pe2 = pe
            pn2 = peln
            pk2 = pk


def layer_thickness(pe2: FloatField, delp: FloatField, dp2: FloatField):
    """``dp2 = pe2(k+1) - pe2(k)``; ``delp = dp2``."""
    with computation(PARALLEL), interval(...):
        dp2 = pe2[0, 0, 1] - pe2
        delp = dp2


def virtual_temperature(pt: FloatField, pk: FloatField, peln: FloatField, akap: float):
    """``kord_tm < 0``: FV3's ``pt*(pk(k+1)-pk(k))/(akap*(peln(k+1)-peln(k)))`` (theta_v to
    T_v with the Lagrangian ``pk``, ``peln``)."""
    with computation(PARALLEL), interval(...):
        pt = pt * (pk[0, 0, 1] - pk) / (akap * (peln[0, 0, 1] - peln))


def nonhydrostatic_temperature(pt: FloatField, delp: FloatField, delz: FloatField, rrg: float, k1k: float):
    """Non-hydrostatic, ``kord_tm < 0``: FV3's ``pt exp(k1k log(rrg delp / delz pt))``, the
    virtual potential temperature to the virtual temperature through the gas law's pressure."""
    with computation(PARALLEL), interval(...):
        pt = pt * exp(k1k * log(rrg * delp / delz * pt))


def to_specific_volume(delz: FloatField, delp: FloatField):
    """FV3's ``delz = -delz / delp`` (the specific volume over ``grav``, remapped in place of
    ``delz``)."""
    with computation(PARALLEL), interval(...):
        delz = -delz / delp


def from_specific_volume(delz: FloatField, dp2: FloatField):
    """FV3's ``delz = -delz dp2`` (back from the remapped specific volume)."""
    with computation(PARALLEL), interval(...):
        delz = -delz * dp2


def nonhydrostatic_pkz(pt: FloatField, delp: FloatField, delz: FloatField, pkz: FloatField, power: float,
                       rrg: float):  # fmt: skip
    """Step 3.2 (non-hydrostatic): ``pkz = exp(power log(rrg delp / delz pt))`` (``power``:
    ``akap`` for ``kord_tm < 0``, else ``k1k``, and then ``pt = pt * pkz``)."""
    from __externals__ import potential

    with computation(PARALLEL), interval(...):
        pkz = exp(power * log(rrg * delp / delz * pt))
        if __INLINED(potential):
            pt = pt * pkz


def update_pressure(pk2: FloatField, pn2: FloatField, pk: FloatField, peln: FloatField):
    """Step 3.1: ``pk = pk2``, ``peln = pn2`` on all interfaces."""
    with computation(PARALLEL), interval(...):
        pk = pk2
        peln = pn2


def layer_pkz(pt: FloatField, pk: FloatField, peln: FloatField, pkz: FloatField, akap: float):
    """Step 3.2 (hydrostatic): ``pkz = (pk(k+1)-pk(k))/(akap*(peln(k+1)-peln(k)))``;
    ``kord_tm > 0`` (external ``potential``): ``pt = pt * pkz`` (theta to T)."""
    from __externals__ import potential

    with computation(PARALLEL), interval(...):
        pkz = (pk[0, 0, 1] - pk) / (akap * (peln[0, 0, 1] - peln))
        if __INLINED(potential):
            pt = pt * pkz


def staggered_pressures(pe: FloatField, ak: FloatFieldK, bk: FloatFieldK, pe0: FloatField,
                        pe3: FloatField, psum: FloatFieldIJ):  # fmt: skip
    """Steps 4.1/4.2: the Lagrangian (``pe0``) and Eulerian (``pe3``) interface pressures on the
    wind points between cells ``(-DI, -DJ)`` and ``(0, 0)``: ``pe0`` the mean of ``pe``
    (the top: ``pe`` of this cell), ``pe3 = ak + 0.5 bk (sum of the bottom pe)`` (``u``: also at
    the top; ``v``, external ``top_ak``: ``ak`` there)."""
    from __externals__ import DI, DJ, top_ak

    with computation(FORWARD), interval(-1, None):
        psum = pe[-DI, -DJ, 0] + pe
    with computation(PARALLEL):
        with interval(0, 1):
            pe0 = pe
            if __INLINED(top_ak):
                pe3 = ak
            else:
                pe3 = ak + 0.5 * bk * psum
        with interval(1, None):
            pe0 = 0.5 * (pe[-DI, -DJ, 0] + pe)
            pe3 = ak + 0.5 * bk * psum


def copy_interior_levels(src: FloatField, dst: FloatField):
    """Step 6: ``pe(k) = pe2(k)`` on the interior interfaces (top and bottom unchanged)."""
    with computation(PARALLEL), interval(1, -1):
        dst = src


def to_potential(pt: FloatField, pkz: FloatField):
    """Step 9b (not the last step): ``pt = pt / pkz``."""
    with computation(PARALLEL), interval(...):
        pt = pt / pkz


# ----------------------------------------------------------------------------------------------
# classes


def _interfaces(dims: Dims) -> Dims:
    return (dims[0], dims[1], Z_INTERFACE_DIM)


def _layers(dims: Dims) -> Dims:
    return (dims[0], dims[1], Z_DIM)


def _int_ij(factory: GridStencilFactory, dims: Dims) -> Any:
    import gt4py.storage as gt_storage

    d = factory.indexing.domain_of(dims)
    return gt_storage.zeros(d.shape[:2], np.int64, backend=factory.backend,
                            aligned_index=d.origin[:2])  # fmt: skip


def _float_ij(factory: GridStencilFactory, dims: Dims) -> Any:
    import gt4py.storage as gt_storage

    d = factory.indexing.domain_of(dims)
    return gt_storage.zeros(d.shape[:2], np.float64, backend=factory.backend,
                            aligned_index=d.origin[:2])  # fmt: skip


class RemapProfile:
    """Equivalent of FV3 subroutine ``cs_profile`` (``qmin=None``) or ``scalar_profile``
    (``qmin``: FV3's ``q_min``/``t_min``, below which kord 9/10/11 flatten local extrema), with
    ``cs_limiters``: the limited cubic-spline sub-grid profile ``a4_2``, ``a4_3`` (edge values),
    ``a4_4`` (curvature) of each layer from the layer means ``a4_1`` and thicknesses ``dp1``.
    ``kord``, ``iv``: see the module docstring.  ``dims``: the horizontal staggering; the four
    ``a4`` fields and ``dp1`` are allocated on its interfaces (``nz + 1`` levels)."""

    def __init__(self, factory: GridStencilFactory, kord: int, iv: int,
                 dims: Dims = CELL_DIMS, *, qmin: float | None = None) -> None:  # fmt: skip
        check_kord(kord, "kord", iv)
        if factory.indexing.nz < MIN_LEVELS:
            raise FV3ConfigError(
                f"RemapProfile needs nz >= {MIN_LEVELS}, got {factory.indexing.nz}"
            )
        self.kord, self.iv, self.qmin = int(kord), int(iv), qmin
        #: the bottom value of iv = -2 when none is bound (unread for the other iv)
        self._no_qs = _float_ij(factory, dims)
        origin, domain = factory.indexing.bounds(_interfaces(dims))
        self._stencil = factory.from_origin_domain(
            cs_profile, origin, domain,
            externals={"iv": self.iv, "kord": abs(self.kord), "scalar": qmin is not None},
            name=f"cs_profile_kord{kord}_iv{iv}{'_scalar' if qmin is not None else ''}",
        )  # fmt: skip

    def bind(self, a4: Sequence[Any], dp1: Any, qs: Any = None) -> list[Launch]:
        """``a4``: the four coefficient fields (``a4[0]`` the layer means, in; the others out);
        ``dp1``: layer thicknesses (Pa, or log-pressure for ``map_scalar`` of temperature);
        ``qs`` (2-D): the bottom value, ``iv = -2`` only."""
        if (self.iv == -2) != (qs is not None):
            raise ValueError("RemapProfile: iv = -2 needs the bottom value qs, and only it takes one")
        a1, a2, a3, a4_ = a4
        qmin = 0.0 if self.qmin is None else float(self.qmin)
        return [self._stencil.bind(a4_1=a1, a4_2=a2, a4_3=a3, a4_4=a4_, dp1=dp1,
                                   qs=self._no_qs if qs is None else qs, qmin=qmin)]  # fmt: skip


class MapSingle:
    """Equivalent of FV3 subroutines ``map1_ppm`` (``qmin=None``: ``cs_profile``),
    ``map_scalar`` (``qmin`` given: ``scalar_profile``) and ``map1_q2`` (``qmin`` and
    ``by_dp2=True``), for ``kord > 7``; ``factored=True``: ``mapn_tracer``'s arithmetic of one
    tracer.  Remaps the layer means ``q`` from the source interfaces ``pe1`` to the target
    interfaces ``pe2`` (same top and bottom, as FV3's callers guarantee), in place, on the
    points of staggering ``dims`` (``CELL_DIMS``, ``face_dims(Y)`` for u, ``face_dims(X)`` for
    v) of the compute domain.  Three launches (setup, profile, mapping); the scratch fields are
    this object's, so one ``MapSingle`` can be bound to several fields run one after another."""

    def __init__(self, factory: GridStencilFactory, kord: int, iv: int, dims: Dims = CELL_DIMS,
                 *, qmin: float | None = None, by_dp2: bool = False,
                 factored: bool = False) -> None:  # fmt: skip
        self.profile = RemapProfile(factory, kord, iv, dims, qmin=qmin)
        self.kord, self.iv = kord, iv
        self.by_dp2 = by_dp2
        idx = factory.indexing
        layers = _layers(dims)
        self._setup = factory.from_dims(profile_setup, layers)
        self._map = factory.from_dims(map_layers, layers,
                                      externals={"factored": factored, "by_dp2": by_dp2},
                                      name=f"map_layers{'_factored' if factored else ''}"
                                           f"{'_dp2' if by_dp2 else ''}")  # fmt: skip
        d = idx.domain_of(_interfaces(dims))
        self.a4 = [zeros(d, factory.backend) for _ in range(4)]
        self.dp1 = zeros(d, factory.backend)
        self._lev = _int_ij(factory, dims)
        self._kk = _int_ij(factory, dims)
        self.km = idx.nz

    def bind(self, q: Any, pe1: Any, pe2: Any, dp2: Any = None, qs: Any = None) -> list[Launch]:
        """``q``: layer field on ``dims`` (in/out); ``pe1``, ``pe2``: source and target
        interface coordinates on ``dims`` (Pa; ``log(Pa)`` for ``map_scalar`` of temperature);
        ``dp2``: the target thicknesses (``by_dp2``); ``qs`` (2-D): ``map1_ppm``'s bottom value
        (``iv = -2``: the surface's ``ws`` when remapping ``w``)."""
        if self.by_dp2 and dp2 is None:
            raise ValueError("MapSingle(by_dp2=True).bind: pass dp2")
        a1, a2, a3, a4 = self.a4
        return [
            self._setup.bind(q=q, pe1=pe1, a4_1=a1, dp1=self.dp1),
            *self.profile.bind(self.a4, self.dp1, qs),
            self._map.bind(pe1=pe1, pe2=pe2, dp1=self.dp1, dp2=dp2 if dp2 is not None else self.dp1,
                           a4_1=a1, a4_2=a2, a4_3=a3, a4_4=a4, q2=q, lev=self._lev, kk=self._kk,
                           km=self.km),
        ]  # fmt: skip


class FillZ:
    """Equivalent of FV3 subroutine ``fillz`` (``fv_fill.F90``, without ``DEV_GFS_PHYS``) for
    one tracer: negative mixing ratios filled from the layers above and below, then a
    non-local fix that conserves the column's ``q dp``.  One launch."""

    def __init__(self, factory: GridStencilFactory, dims: Dims = CELL_DIMS) -> None:
        self._stencil = factory.from_dims(fillz_stencil, _layers(dims))
        self._zfix = _int_ij(factory, dims)
        self._sum0 = _float_ij(factory, dims)
        self._sum1 = _float_ij(factory, dims)

    def bind(self, q: Any, dp: Any) -> list[Launch]:
        """``q``: tracer (in/out); ``dp``: layer thicknesses (Pa)."""
        return [self._stencil.bind(q=q, dp=dp, zfix=self._zfix, sum0=self._sum0, sum1=self._sum1)]


class MapNTracer:
    """Equivalent of FV3 subroutine ``mapn_tracer``: each tracer remapped with
    ``scalar_profile(iv = 0, kord(iq), q_min)`` and ``mapn_tracer``'s arithmetic (dividing by
    ``dp2``), then (``fill``) ``fillz``.  ``kords``: FV3's ``kord_tr`` per tracer."""

    def __init__(self, factory: GridStencilFactory, kords: Sequence[int], *, q_min: float = 0.0,
                 fill: bool = True) -> None:  # fmt: skip
        for kord in kords:
            check_kord(kord, "kord_tr", 0)
        self.kords = [int(k) for k in kords]
        self._maps = {k: MapSingle(factory, k, 0, qmin=q_min, by_dp2=True, factored=True)
                      for k in sorted(set(self.kords))}  # fmt: skip
        self._fill = FillZ(factory) if fill else None

    def bind(self, tracers: Sequence[Any], pe1: Any, pe2: Any, dp2: Any) -> list[Launch]:
        """``tracers``: layer fields (in/out), as many as ``kords``; ``pe1``, ``pe2``: source,
        target interface pressures (Pa); ``dp2``: target thicknesses (Pa)."""
        if len(tracers) != len(self.kords):
            raise ValueError(f"MapNTracer: {len(tracers)} tracers for {len(self.kords)} kord_tr")
        launches: list[Launch] = []
        for q, kord in zip(tracers, self.kords):
            launches += self._maps[kord].bind(q, pe1, pe2, dp2)
        if self._fill is not None:
            for q in tracers:
                launches += self._fill.bind(q, dp2)
        return launches


@dataclass(frozen=True)
class NonHydrostaticRemap:
    """What ``Lagrangian_to_Eulerian`` needs of the non-hydrostatic core: ``kord_wz`` (the
    remapping of ``w``; FV3's ``kord_wz < 0`` is refused, see :func:`check_kord`), ``rdgas``,
    ``grav``, ``cp_air`` (FV3's ``rrg = -rdgas / grav`` and ``k1k = rdgas / cv_air``)."""

    kord_wz: int
    rdgas: float
    grav: float
    cp_air: float

    @property
    def rrg(self) -> float:
        return -self.rdgas / self.grav

    @property
    def k1k(self) -> float:
        return self.rdgas / (self.cp_air - self.rdgas)


class LagrangianToEulerian:
    """Equivalent of FV3 subroutine ``Lagrangian_to_Eulerian`` (``fv_mapz.F90``) for the
    hydrostatic, adiabatic, dry core: ``hydrostatic = .true.``, ``remap_te = .false.``,
    ``nwat = 0`` (``r_vir`` times specific humidity = 0), no physics.  FV3's energy fix of the
    last remapping (``consv``) is :class:`fv3core.vertical.energy_fixer.TotalEnergyFixer`,
    which :class:`fv3core.dycore.fv_dynamics.DynamicalCore` runs after this one.

    Namelist keys read (FV3's meaning): ``kord_mt`` (remapping of the winds u, v, ``iv = -1``),
    ``kord_tm`` (temperature: ``< 0`` remaps the virtual temperature ``T_v = pt pkz`` in
    ``log(p)`` with ``map_scalar``, ``t_min`` = 184 K; ``> 0`` remaps the potential temperature
    ``pt`` in ``p`` with ``map1_ppm``), ``kord_tr`` (tracers, one value for all; FV3 remaps
    ``nq > 5`` tracers with ``mapn_tracer``, fewer one by one with ``map1_q2``, then
    ``fillz``), ``fill`` (``fillz`` of the tracers).  ``akap``: kappa.

    Construction: ``LagrangianToEulerian(factory, ak, bk, *, kord_mt, kord_tm, kord_tr,
    nq=0, fill=True, akap)``; ``factory`` on ``GridIndexing(nx, ny, nz,
    n_halo)`` (``n_halo >= 1``); ``ak`` (Pa), ``bk`` (1): NumPy arrays of ``nz + 1`` floats,
    ``ptop = ak[0]``.

    Call: ``__call__(pe, delp, pt, u, v, tracers, ps, pk, peln, pkz, last_step=False)``, all
    storages of that grid (``stencils.storage`` layout, halo ``n_halo``):

    * ``pe`` (Pa, in/out): interfaces ``(X_DIM, Y_DIM, Z_INTERFACE_DIM)``, the Lagrangian
      interface pressures (``ptop`` + cumulative ``delp``) valid on the compute domain and one
      halo cell around it (FV3's ``pe(is-1:ie+1, :, js-1:je+1)``: the winds' pressures are
      means of neighbouring columns); on exit its interior interfaces (levels 1..nz-1) hold
      ``ak + bk ps`` on the compute domain (top and bottom unchanged).
    * ``delp`` (Pa, out): cells; the Eulerian layer thicknesses.
    * ``pt`` (K, in/out): cells; in: FV3's potential temperature (``T / pkz``, ``pkz`` the
      Lagrangian layer mean of ``p**akap``); out: ``T`` on the last step, else the potential
      temperature with the new ``pkz``.
    * ``u`` (m/s, in/out): ``face_dims(Y)`` (``nx`` x ``ny + 1``); ``v``: ``face_dims(X)``.
    * ``tracers`` (in/out): ``nq`` cell fields (mixing ratios, kg/kg).
    * ``ps`` (Pa, out): 2-D cell field ``(X_DIM, Y_DIM)``, the surface pressure (= bottom pe).
    * ``pk`` (``Pa**akap``, in/out), ``peln`` (``log(Pa)``, in/out): interfaces; in: ``pe**akap``
      and ``log(pe)`` of the Lagrangian ``pe``; out: those of the Eulerian levels.
    * ``pkz`` (``Pa**akap``, out): cells, FV3's hydrostatic ``(pk(k+1) - pk(k)) / (akap
      (peln(k+1) - peln(k)))``.
    """

    def __init__(self, factory: GridStencilFactory, ak: np.ndarray, bk: np.ndarray, *,
                 kord_mt: int, kord_tm: int, kord_tr: int | Sequence[int], nq: int = 0,
                 fill: bool = True, akap: float, nonhydrostatic: NonHydrostaticRemap | None = None) -> None:  # fmt: skip
        idx = factory.indexing
        ak, bk = np.asarray(ak, dtype=np.float64), np.asarray(bk, dtype=np.float64)
        if ak.shape != (idx.nz + 1,) or bk.shape != (idx.nz + 1,):
            raise FV3ConfigError(f"ak, bk must have nz + 1 = {idx.nz + 1} values, got "
                                 f"{ak.shape}, {bk.shape}")  # fmt: skip
        if idx.n_halo < 1:
            raise FV3ConfigError("LagrangianToEulerian needs a halo of at least 1 (pe is read "
                                 "one cell around the compute domain)")  # fmt: skip
        check_kord(kord_mt, "kord_mt", -1)
        check_kord(kord_tm, "kord_tm", 1, signed=True)
        kords = [int(kord_tr)] * nq if isinstance(kord_tr, int) else [int(k) for k in kord_tr]
        if len(kords) != nq:
            raise FV3ConfigError(f"kord_tr: {len(kords)} values for nq = {nq} tracers")
        for k in kords:
            check_kord(k, "kord_tr", 0)
        self.nq, self.kord_tm, self.akap = nq, int(kord_tm), float(akap)
        self.nonhydrostatic = nonhydrostatic
        if nonhydrostatic is not None:
            nh = nonhydrostatic
            check_kord(nh.kord_wz, "kord_wz", -2 if nh.kord_wz > 0 else -3)
            self._map_w = MapSingle(factory, nh.kord_wz, -2)
            self._map_delz = MapSingle(factory, abs(self.kord_tm), 1)
            self._nh_temperature = factory.from_dims(nonhydrostatic_temperature, CELL_DIMS)
            self._to_volume = factory.from_dims(to_specific_volume, CELL_DIMS)
            self._from_volume = factory.from_dims(from_specific_volume, CELL_DIMS)
            self._nh_pkz = factory.from_dims(nonhydrostatic_pkz, CELL_DIMS, externals={"potential": self.kord_tm > 0},
                                             name=f"nonhydrostatic_pkz{'_potential' if kord_tm > 0 else ''}")  # fmt: skip
        self.ptop = float(ak[0])
        backend = factory.backend
        self._ak = from_numpy(ak, backend)
        self._bk = from_numpy(bk, backend)
        iface = (X_DIM, Y_DIM, Z_INTERFACE_DIM)
        d_if = idx.domain_of(iface)
        self._pe2, self._pn2, self._pk2 = (zeros(d_if, backend) for _ in range(3))
        self._dp2 = zeros(idx.domain_of(CELL_DIMS), backend)
        self._levels = factory.from_dims(eulerian_levels, iface)
        self._thickness = factory.from_dims(layer_thickness, CELL_DIMS)
        self._tv = factory.from_dims(virtual_temperature, CELL_DIMS)
        self._update = factory.from_dims(update_pressure, iface)
        self._pkz = factory.from_dims(layer_pkz, CELL_DIMS,
                                      externals={"potential": self.kord_tm > 0},
                                      name=f"layer_pkz{'_potential' if kord_tm > 0 else ''}")  # fmt: skip
        self._copy_pe = factory.from_dims(copy_interior_levels, iface)
        self._to_potential = factory.from_dims(to_potential, CELL_DIMS)
        if self.kord_tm < 0:
            self._map_pt = MapSingle(factory, abs(self.kord_tm), 1, qmin=T_MIN)
        else:
            self._map_pt = MapSingle(factory, self.kord_tm, 1)
        if nq > 5:
            self._tracers: Any = MapNTracer(factory, kords, q_min=0.0, fill=fill)
        else:
            self._tracer_maps = {k: MapSingle(factory, k, 0, qmin=0.0, by_dp2=True)
                                 for k in sorted(set(kords))}  # fmt: skip
            self._tracers = None
        self._kords = kords
        self._fill = FillZ(factory) if fill and nq <= 5 else None
        self._winds = {}
        for d, top_ak in ((Y, False), (X, True)):
            dims = face_dims(d)
            wind_if = _interfaces(dims)
            dw = idx.domain_of(wind_if)
            self._winds[d.name] = (
                factory.from_dims(staggered_pressures, wind_if,
                                  externals={**d.offsets(), "top_ak": top_ak},
                                  name=f"staggered_pressures_{d.name}"),
                zeros(dw, backend), zeros(dw, backend), _float_ij(factory, dims),
                MapSingle(factory, kord_mt, -1, dims),
            )  # fmt: skip

    def __call__(self, pe: Any, delp: Any, pt: Any, u: Any, v: Any, tracers: Sequence[Any],
                 ps: Any, pk: Any, peln: Any, pkz: Any, last_step: bool = False,
                 vertical: tuple[Any, Any, Any] | None = None) -> None:  # fmt: skip
        for launch in self.bind(pe, delp, pt, u, v, tracers, ps, pk, peln, pkz, last_step, vertical):
            launch()

    def bind(self, pe: Any, delp: Any, pt: Any, u: Any, v: Any, tracers: Sequence[Any],
             ps: Any, pk: Any, peln: Any, pkz: Any, last_step: bool = False,
             vertical: tuple[Any, Any, Any] | None = None) -> list[Launch]:  # fmt: skip
        """The launches of one remapping (arguments as :meth:`__call__`), in FV3's order.
        Non-hydrostatic: ``vertical = (w, delz, ws)`` (cells, cells, 2-D): ``w``, ``delz``
        in/out."""
        if len(tracers) != self.nq:
            raise ValueError(f"LagrangianToEulerian: {len(tracers)} tracers, built for nq = "
                             f"{self.nq}")  # fmt: skip
        nh = self.nonhydrostatic
        if (nh is None) != (vertical is None):
            raise ValueError("LagrangianToEulerian: pass vertical=(w, delz, ws) exactly when non-hydrostatic")
        pe2, pn2, pk2, dp2 = self._pe2, self._pn2, self._pk2, self._dp2
        out: list[Launch] = [
            self._levels.bind(pe=pe, pk=pk, peln=peln, ak=self._ak, bk=self._bk, pe2=pe2,
                              pn2=pn2, pk2=pk2, ps=ps, ptop=self.ptop, akap=self.akap),
        ]  # fmt: skip
        if nh is not None:  # FV3 converts with the Lagrangian delp, before its update
            w, delz, ws = vertical
            if self.kord_tm < 0:
                out.append(self._nh_temperature.bind(pt=pt, delp=delp, delz=delz, rrg=nh.rrg, k1k=nh.k1k))
            out.append(self._to_volume.bind(delz=delz, delp=delp))
        out.append(self._thickness.bind(pe2=pe2, delp=delp, dp2=dp2))
        if self.kord_tm < 0:
            if nh is None:
                out.append(self._tv.bind(pt=pt, pk=pk, peln=peln, akap=self.akap))
            out += self._map_pt.bind(pt, peln, pn2)
        else:
            out += self._map_pt.bind(pt, pe, pe2)
        if self._tracers is not None:
            out += self._tracers.bind(list(tracers), pe, pe2, dp2)
        else:
            for q, kord in zip(tracers, self._kords):
                out += self._tracer_maps[kord].bind(q, pe, pe2, dp2)
                if self._fill is not None:
                    out += self._fill.bind(q, dp2)
        if nh is not None:
            out += self._map_w.bind(w, pe, pe2, qs=ws)
            out += self._map_delz.bind(delz, pe, pe2)
            out.append(self._from_volume.bind(delz=delz, dp2=dp2))
        out.append(self._update.bind(pk2=pk2, pn2=pn2, pk=pk, peln=peln))
        if nh is None:
            out.append(self._pkz.bind(pt=pt, pk=pk, peln=peln, pkz=pkz, akap=self.akap))
        else:
            power = self.akap if self.kord_tm < 0 else nh.k1k
            out.append(self._nh_pkz.bind(pt=pt, delp=delp, delz=delz, pkz=pkz, power=power, rrg=nh.rrg))
        for wind, name in ((u, "y"), (v, "x")):
            stencil, pe0, pe3, psum, mapping = self._winds[name]
            out.append(stencil.bind(pe=pe, ak=self._ak, bk=self._bk, pe0=pe0, pe3=pe3, psum=psum))
            out += mapping.bind(wind, pe0, pe3)
        out.append(self._copy_pe.bind(src=pe2, dst=pe))
        if not last_step:
            out.append(self._to_potential.bind(pt=pt, pkz=pkz))
        return out
