"""Piecewise-parabolic (PPM) interface values along one direction: FV3's ``xppm``/``yppm``.

Written once for both directions (offsets and tile-edge regions come from
:mod:`fv3core.stencils.directions`).  ``hord`` (FV3 ``iord``) 5: unlimited fourth-order PPM
with the 2-delta-x smoothness filter (upwind where the sub-grid profile is not smooth);
``hord`` 8: the monotone limiter of Lin (2004).  At cubed-sphere tile edges the interface
values use FV3's one-sided, non-uniform-grid (``dxa``-weighted) formulas.

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

SUPPORTED_HORD = (5, 8)


@gtscript.function
def sign(a, b):
    """|a| with the sign of b (Fortran SIGN, b = 0 counts as positive)."""
    return abs(a) if b >= 0.0 else -abs(a)


@gtscript.function
def edge_value(q, dxa):
    """Tile-edge interface value (left face of this cell): mean of the two one-sided
    second-order extrapolations on the non-uniform grid."""
    from __externals__ import DI, DI2, DJ, DJ2

    return 0.5 * (
        ((2.0 * dxa[-DI, -DJ] + dxa[-DI2, -DJ2]) * q[-DI, -DJ, 0] - dxa[-DI, -DJ] * q[-DI2, -DJ2, 0])
        / (dxa[-DI2, -DJ2] + dxa[-DI, -DJ])
        + ((2.0 * dxa + dxa[DI, DJ]) * q - dxa * q[DI, DJ, 0]) / (dxa + dxa[DI, DJ])
    )


@gtscript.function
def edge_value_clamped(q, dxa):
    """:func:`edge_value` bounded by the four neighbouring cell means (FV3 ``xt_minmax``)."""
    from __externals__ import DI, DI2, DJ, DJ2

    xt = edge_value(q, dxa)
    qmin = min(min(min(q[-DI2, -DJ2, 0], q[-DI, -DJ, 0]), q), q[DI, DJ, 0])
    qmax = max(max(max(q[-DI2, -DJ2, 0], q[-DI, -DJ, 0]), q), q[DI, DJ, 0])
    return min(max(xt, qmin), qmax)


@gtscript.function
def edge_value_right(q, dxa):
    """:func:`edge_value_clamped` of the right face of this cell."""
    from __externals__ import DI, DI2, DJ, DJ2

    xt = 0.5 * (
        ((2.0 * dxa + dxa[-DI, -DJ]) * q - dxa * q[-DI, -DJ, 0]) / (dxa[-DI, -DJ] + dxa)
        + ((2.0 * dxa[DI, DJ] + dxa[DI2, DJ2]) * q[DI, DJ, 0] - dxa[DI, DJ] * q[DI2, DJ2, 0])
        / (dxa[DI, DJ] + dxa[DI2, DJ2])
    )
    qmin = min(min(min(q[-DI, -DJ, 0], q), q[DI, DJ, 0]), q[DI2, DJ2, 0])
    qmax = max(max(max(q[-DI, -DJ, 0], q), q[DI, DJ, 0]), q[DI2, DJ2, 0])
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


def ppm_slope_stencil(q: FloatField, dm: FloatField):
    """hord >= 8, first pass: the monotonised centred slope ``dm`` of each cell (Lin 2004)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        xt = 0.25 * (q[DI, DJ, 0] - q[-DI, -DJ, 0])
        dqr = max(max(q, q[-DI, -DJ, 0]), q[DI, DJ, 0]) - q
        dql = q - min(min(q, q[-DI, -DJ, 0]), q[DI, DJ, 0])
        dm = sign(min(min(abs(xt), dqr), dql), xt)


def ppm_interface_stencil(q: FloatField, dm: FloatField, al: FloatField):
    """hord >= 8, second pass: interface value ``al`` on the left face of each cell.

    Separate stencils so that the tile-edge regions of :func:`ppm_flux_stencil` may read
    ``dm``/``al`` at offsets: gt4py 1.1.12's frontend rejects reading a variable at an offset
    inside a horizontal region once the stencil writes it anywhere, in any ``with computation``
    block.  Computing them inside the flux stencil (neighbour values copied outside the regions)
    is exact and saves launches, but gt4py's ``OnTheFlyMerging`` pass then recomputes the
    temporaries at every offset they are read at: slower than three launches on numpy and no
    faster on gt:cpu_ifirst (measured, see docs/fv3core/README.md)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        al = 0.5 * (q[-DI, -DJ, 0] + q) + R3 * (dm[-DI, -DJ, 0] - dm)


def ppm_flux_stencil(
    q: FloatField,
    courant: FloatField,
    dxa: FloatFieldIJ,
    dm: FloatField,
    al_in: FloatField,
    flux: FloatField,
):
    """``flux`` (on the faces between cell i-1 and i): mean of q over the upwind part of the
    PPM profile swept through the face in one step, given the face Courant number.
    ``dm``/``al_in`` come from :func:`ppm_slopes_stencil` (hord >= 8; unused otherwise)."""
    from __externals__ import DI, DI2, DJ, DJ2, ea, eb, ec, ed, iord, sa, sb, sc, sd

    with computation(PARALLEL), interval(...):
        if __INLINED(iord < 8):
            al = P1 * (q[-DI, -DJ, 0] + q) + P2 * (q[-DI2, -DJ2, 0] + q[DI, DJ, 0])
            with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ], region[ea:eb, ec:ed]):
                al = C1 * q[-DI2, -DJ2, 0] + C2 * q[-DI, -DJ, 0] + C3 * q
            with horizontal(
                region[sa:sb, sc:sd], region[ea + DI : eb + DI, ec + DJ : ed + DJ]
            ):
                al = edge_value(q, dxa)
            with horizontal(
                region[sa + DI : sb + DI, sc + DJ : sd + DJ],
                region[ea + DI + DI : eb + DI + DI, ec + DJ + DJ : ed + DJ + DJ],
            ):
                al = C3 * q[-DI, -DJ, 0] + C2 * q + C1 * q[DI, DJ, 0]
    with computation(PARALLEL), interval(...):
        if __INLINED(iord < 8):
            bl = al - q
            br = al[DI, DJ, 0] - q
            if __INLINED(iord == 5):
                smooth = 1.0 if bl * br < 0.0 else 0.0
            else:
                smooth = 1.0 if 3.0 * abs(bl + br) < abs(bl - br) else 0.0
        else:
            bl = -sign(min(abs(2.0 * dm), abs(al_in - q)), 2.0 * dm)
            br = sign(min(abs(2.0 * dm), abs(al_in[DI, DJ, 0] - q)), 2.0 * dm)
            with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ]):
                bl = S14 * dm[-DI, -DJ, 0] + S11 * (q[-DI, -DJ, 0] - q)
                br = edge_value_right(q, dxa) - q
            with horizontal(region[sa:sb, sc:sd]):
                bl = edge_value_clamped(q, dxa) - q
                br = S15 * q + S11 * q[DI, DJ, 0] - S14 * dm[DI, DJ, 0] - q
            with horizontal(region[sa + DI : sb + DI, sc + DJ : sd + DJ]):
                bl = S15 * q[-DI, -DJ, 0] + S11 * q - S14 * dm - q
                br = al_in[DI, DJ, 0] - q
            with horizontal(region[ea - DI : eb - DI, ec - DJ : ed - DJ]):
                bl = al_in - q
                br = S15 * q[DI, DJ, 0] + S11 * q + S14 * dm - q
            with horizontal(region[ea:eb, ec:ed]):
                bl = S15 * q + S11 * q[-DI, -DJ, 0] + S14 * dm[-DI, -DJ, 0] - q
                br = edge_value_right(q, dxa) - q
            with horizontal(region[ea + DI : eb + DI, ec + DJ : ed + DJ]):
                bl = edge_value_clamped(q, dxa) - q
                br = S11 * (q[DI, DJ, 0] - q) - S14 * dm[DI, DJ, 0]
            with horizontal(
                region[sa - DI : sb + DI, sc - DJ : sd + DJ],
                region[ea - DI : eb + DI, ec - DJ : ed + DJ],
            ):
                bl, br = pert_ppm_standard_constraint(bl, br)
            smooth = 1.0
    with computation(PARALLEL), interval(...):
        b0 = bl + br
        if courant > 0.0:
            flux = q[-DI, -DJ, 0] + (1.0 - courant) * (
                br[-DI, -DJ, 0] - courant * b0[-DI, -DJ, 0]
            ) * max(smooth[-DI, -DJ, 0], smooth)
        else:
            flux = q + (1.0 + courant) * (bl + courant * b0) * max(smooth[-DI, -DJ, 0], smooth)
