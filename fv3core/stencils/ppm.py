"""Piecewise-parabolic (PPM) interface values along one direction: FV3's ``xppm``/``yppm``.

Written once for both directions (offsets and tile-edge regions come from
:mod:`fv3core.stencils.directions`).  ``hord`` (FV3 ``iord``) 5: unlimited fourth-order PPM
with the 2-delta-x smoothness filter (upwind where the sub-grid profile is not smooth); 6: the
same with FV3's stricter ``smt5`` switch (``3 |bl + br| < |bl - br|``; ``bl * br < 0`` on the
two cells at each tile edge); 8: the monotone limiter of Lin (2004); 10: Lin's modification of
Huynh's second constraint (FV3's ``iord = 10``).  At cubed-sphere tile edges the interface
values use FV3's one-sided, non-uniform-grid (``dxa``-weighted) formulas.  FV3's expressions,
in FV3's order of operations.

References: Colella & Woodward (1984); Lin & Rood (1996); Lin (2004), Mon. Wea. Rev. 132;
Putman & Lin (2007), J. Comput. Phys. 227.
"""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, horizontal, interval, region

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

P1 = 7.0 / 12.0
P2 = -1.0 / 12.0
C1 = -2.0 / 14.0
C2 = 11.0 / 14.0
C3 = 5.0 / 14.0
S11 = 11.0 / 14.0
S14 = 4.0 / 7.0
S15 = 3.0 / 14.0
R3 = 1.0 / 3.0
NEAR_ZERO = 1.0e-25



@gtscript.function
def sign(a, b):
    """|a| with the sign of b (Fortran SIGN, b = 0 counts as positive)."""
    return abs(a) if b >= 0.0 else -abs(a)


# The helpers below take the neighbouring cell values along the direction as arguments
# (``qm2`` = two cells upstream, ``qm1``, ``q``, ``qp1``, ``qp2``) instead of reading ``q`` at
# offsets: GTScript (gt4py 1.1.12, ``visit_With`` of the frontend) forbids reading a variable at
# an offset inside a horizontal region once the stencil writes it anywhere, and q, the slopes
# ``dm`` and the interface values ``al`` are variables of the fused transport passes.  Copies
# made outside the regions are exact, so the results are bit for bit those of offset reads.


@gtscript.function
def edge_value(qm2, qm1, q, qp1, dxa):
    """Tile-edge interface value (left face of this cell): mean of the two one-sided
    second-order extrapolations on the non-uniform grid."""
    from __externals__ import DI, DI2, DJ, DJ2

    return 0.5 * (
        ((2.0 * dxa[-DI, -DJ] + dxa[-DI2, -DJ2]) * qm1 - dxa[-DI, -DJ] * qm2)
        / (dxa[-DI2, -DJ2] + dxa[-DI, -DJ])
        + ((2.0 * dxa + dxa[DI, DJ]) * q - dxa * qp1) / (dxa + dxa[DI, DJ])
    )


@gtscript.function
def edge_value_clamped(qm2, qm1, q, qp1, dxa):
    """:func:`edge_value` bounded by the four neighbouring cell means (FV3 ``xt_minmax``)."""
    xt = edge_value(qm2, qm1, q, qp1, dxa)
    qmin = min(min(min(qm2, qm1), q), qp1)
    qmax = max(max(max(qm2, qm1), q), qp1)
    return min(max(xt, qmin), qmax)


@gtscript.function
def edge_value_right(qm1, q, qp1, qp2, dxa):
    """:func:`edge_value_clamped` of the right face of this cell."""
    from __externals__ import DI, DI2, DJ, DJ2

    xt = 0.5 * (
        ((2.0 * dxa + dxa[-DI, -DJ]) * q - dxa * qm1) / (dxa[-DI, -DJ] + dxa)
        + ((2.0 * dxa[DI, DJ] + dxa[DI2, DJ2]) * qp1 - dxa[DI, DJ] * qp2)
        / (dxa[DI, DJ] + dxa[DI2, DJ2])
    )
    qmin = min(min(min(qm1, q), qp1), qp2)
    qmax = max(max(max(qm1, q), qp1), qp2)
    return min(max(xt, qmin), qmax)


@gtscript.function
def pert_ppm_standard_constraint(bl, br):
    """FV3 ``pert_ppm`` (iv = 1): remove overshoots of the parabola inside the cell."""
    if bl * br < 0.0:
        da1 = bl - br
        da2 = da1 * da1
        a6da = 3.0 * (bl + br) * da1
        if a6da < -da2:
            br = -2.0 * bl
        elif a6da > da2:
            bl = -2.0 * br
    else:
        bl = 0.0
        br = 0.0
    return bl, br


@gtscript.function
def ppm_slope(qm1, q, qp1):
    """hord >= 8: the monotonised centred slope ``dm`` of each cell (Lin 2004)."""
    xt = 0.25 * (qp1 - qm1)
    dqr = max(max(q, qm1), qp1) - q
    dql = q - min(min(q, qm1), qp1)
    return sign(min(min(abs(xt), dqr), dql), xt)


@gtscript.function
def ppm_interface(qm1, q, dm):
    """hord >= 8: interface value ``al`` on the left face of each cell from the slopes."""
    from __externals__ import DI, DJ

    return 0.5 * (qm1 + q) + R3 * (dm[-DI, -DJ, 0] - dm)


@gtscript.function
def ppm_fourth_order_interface(qm2, qm1, q, qp1, dxa):
    """hord < 8: fourth-order interface value on the left face of each cell, with FV3's
    one-sided (next to the tile edge: non-uniform-grid) values near tile edges."""
    from __externals__ import DI, DJ, ea, eb, ec, ed, sa, sb, sc, sd

    al = P1 * (qm1 + q) + P2 * (qm2 + qp1)
    with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ], region[ea:eb, ec:ed]):
        al = C1 * qm2 + C2 * qm1 + C3 * q
    with horizontal(region[sa:sb, sc:sd], region[ea + DI : eb + DI, ec + DJ : ed + DJ]):
        al = edge_value(qm2, qm1, q, qp1, dxa)
    with horizontal(
        region[sa + DI : sb + DI, sc + DJ : sd + DJ],
        region[ea + DI + DI : eb + DI + DI, ec + DJ + DJ : ed + DJ + DJ],
    ):
        al = C3 * qm1 + C2 * q + C1 * qp1
    return al


@gtscript.function
def huynh_perturbations(qm2, qm1, q, qp1, qp2, al, alp1, dmm1, dm, dmp1):
    """hord 10: ``bl``, ``br`` of the interface values ``al``, ``alp1`` with Lin's modification
    of Huynh's second constraint where the profile is not smooth, zero where the three slopes
    vanish (FV3 ``xppm`` ``iord == 10``; ``dq`` = twice the forward differences)."""
    bl = al - q
    br = alp1 - q
    if abs(dmm1) + abs(dm) + abs(dmp1) < NEAR_ZERO:
        bl = 0.0
        br = 0.0
    elif abs(3.0 * (bl + br)) > abs(bl - br):
        pmp_2 = 2.0 * (q - qm1)
        lac_2 = pmp_2 - 0.75 * (2.0 * (qm1 - qm2))
        br = min(max(max(0.0, pmp_2), lac_2), max(br, min(min(0.0, pmp_2), lac_2)))
        pmp_1 = -(2.0 * (qp1 - q))
        lac_1 = pmp_1 + 0.75 * (2.0 * (qp2 - qp1))
        bl = min(max(max(0.0, pmp_1), lac_1), max(bl, min(min(0.0, pmp_1), lac_1)))
    return bl, br


@gtscript.function
def ppm_limited_perturbations(qm2, qm1, q, qp1, qp2, dxa):
    """hord >= 8: left/right face values minus the cell mean (``bl``, ``br``) of the monotone
    PPM profile (8: Lin 2004, 10: :func:`huynh_perturbations`), with FV3's tile-edge values and
    ``pert_ppm`` next to the edges."""
    from __externals__ import DI, DJ, ea, eb, ec, ed, iord, sa, sb, sc, sd

    dm = ppm_slope(qm1, q, qp1)
    al = ppm_interface(qm1, q, dm)
    dmm1 = dm[-DI, -DJ, 0]
    dmp1 = dm[DI, DJ, 0]
    alp1 = al[DI, DJ, 0]
    if __INLINED(iord == 10):
        bl, br = huynh_perturbations(qm2, qm1, q, qp1, qp2, al, alp1, dmm1, dm, dmp1)
    else:
        bl = -sign(min(abs(2.0 * dm), abs(al - q)), 2.0 * dm)
        br = sign(min(abs(2.0 * dm), abs(alp1 - q)), 2.0 * dm)
    with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ]):
        bl = S14 * dmm1 + S11 * (qm1 - q)
        br = edge_value_right(qm1, q, qp1, qp2, dxa) - q
    with horizontal(region[sa:sb, sc:sd]):
        bl = edge_value_clamped(qm2, qm1, q, qp1, dxa) - q
        br = S15 * q + S11 * qp1 - S14 * dmp1 - q
    with horizontal(region[sa + DI : sb + DI, sc + DJ : sd + DJ]):
        bl = S15 * qm1 + S11 * q - S14 * dm - q
        br = alp1 - q
    with horizontal(region[ea - DI : eb - DI, ec - DJ : ed - DJ]):
        bl = al - q
        br = S15 * qp1 + S11 * q + S14 * dm - q
    with horizontal(region[ea:eb, ec:ed]):
        bl = S15 * q + S11 * qm1 + S14 * dmm1 - q
        br = edge_value_right(qm1, q, qp1, qp2, dxa) - q
    with horizontal(region[ea + DI : eb + DI, ec + DJ : ed + DJ]):
        bl = edge_value_clamped(qm2, qm1, q, qp1, dxa) - q
        br = S11 * (qp1 - q) - S14 * dmp1
    with horizontal(
        region[sa - DI : sb + DI, sc - DJ : sd + DJ],
        region[ea - DI : eb + DI, ec - DJ : ed + DJ],
    ):
        bl, br = pert_ppm_standard_constraint(bl, br)
    return bl, br


@gtscript.function
def ppm_face_flux(q, courant, dxa):
    """Mean of q over the upwind part of the PPM profile swept through the left face of each
    cell (between cells i-1 and i along ``DI``/``DJ``) in one step, given the face Courant
    number: FV3 ``xppm``/``yppm`` ``flux``.  Slopes, interface values and the profile are
    variables of the calling stencil (one launch for the whole PPM)."""
    from __externals__ import DI, DI2, DJ, DJ2, ea, eb, ec, ed, iord, sa, sb, sc, sd

    qm2 = q[-DI2, -DJ2, 0]
    qm1 = q[-DI, -DJ, 0]
    qp1 = q[DI, DJ, 0]
    qp2 = q[DI2, DJ2, 0]
    if __INLINED(iord < 8):
        al = ppm_fourth_order_interface(qm2, qm1, q, qp1, dxa)
        bl = al - q
        br = al[DI, DJ, 0] - q
        if __INLINED(iord == 5):
            smooth = 1.0 if bl * br < 0.0 else 0.0
        else:
            smooth = 1.0 if 3.0 * abs(bl + br) < abs(bl - br) else 0.0
            # FV3's "fix edge issues": cells 0, 1 and npx-1, npx
            with horizontal(region[sa - DI : sb, sc - DJ : sd], region[ea:eb + DI, ec:ed + DJ]):
                smooth = 1.0 if bl * br < 0.0 else 0.0
    else:
        bl, br = ppm_limited_perturbations(qm2, qm1, q, qp1, qp2, dxa)
        smooth = 1.0
    b0 = bl + br
    if courant > 0.0:
        flux = qm1 + (1.0 - courant) * (br[-DI, -DJ, 0] - courant * b0[-DI, -DJ, 0]) * max(
            smooth[-DI, -DJ, 0], smooth
        )
    else:
        flux = q + (1.0 + courant) * (bl + courant * b0) * max(smooth[-DI, -DJ, 0], smooth)
    return flux


def ppm_flux_stencil(q: FloatField, courant: FloatField, dxa: FloatFieldIJ, flux: FloatField):
    """``flux`` on the faces between cell i-1 and i (along ``DI``/``DJ``) by
    :func:`ppm_face_flux`, in one launch."""
    with computation(PARALLEL), interval(...):
        flux = ppm_face_flux(q, courant, dxa)
