"""Shallow-water dynamics on the cubed sphere: FV3's C-D grid scheme (Lin & Rood 1997,
Lin 2004, Putman & Lin 2007) -- ``d2a2c`` winds, the C-grid half step ``c_sw``, the D-grid
step ``d_sw`` and divergence damping, as GTScript stencils.

Prognostic variables per rank: the fluid depth ``h`` (cell means, the shallow-water ``delp``)
and the D-grid winds ``u`` (on the x-edges = y-faces, component along the edge) and ``v``
(on the y-edges = x-faces), i.e. FV3's covariant D-grid winds.  Differences to FV3, all
second order: A-grid winds come from the two-point average of the D-grid edges (FV3: 4th-order
``d2a2c_vect``), they are kept as 3-D Cartesian vectors so C-grid face winds are exact
face-normal projections also across tile edges (FV3: one-sided edge interpolation), the C-grid
half-step depth flux is first-order upwind (as FV3 ``c_sw``), and the kinetic energy is taken
at cell centres from the half-step C-grid winds and averaged to the corners (FV3: upwind
``xtp_u``/``ytp_v`` corner values).
"""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def dgrid_to_agrid(
    u: FloatField,
    v: FloatField,
    dx: FloatFieldIJ,
    dy: FloatFieldIJ,
    rarea: FloatFieldIJ,
    cs_x: FloatFieldIJ,
    cs_y: FloatFieldIJ,
    cs_z: FloatFieldIJ,
    cn_x: FloatFieldIJ,
    cn_y: FloatFieldIJ,
    cn_z: FloatFieldIJ,
    cw_x: FloatFieldIJ,
    cw_y: FloatFieldIJ,
    cw_z: FloatFieldIJ,
    ce_x: FloatFieldIJ,
    ce_y: FloatFieldIJ,
    ce_z: FloatFieldIJ,
    fcor: FloatFieldIJ,
    wx: FloatField,
    wy: FloatField,
    wz: FloatField,
    vort: FloatField,
):
    """A-grid 3-D wind: the least-squares tangent vector whose components along the cell's
    four edges are the D-grid winds (coefficient vectors c_s, c_n, c_w, c_e per cell), and the
    absolute vorticity (Stokes on the cell: D-grid circulation / area + Coriolis) -- FV3
    ``d2a2c`` and the start of ``d_sw``."""
    with computation(PARALLEL), interval(...):
        wx = u * cs_x + u[0, 1, 0] * cn_x + v * cw_x + v[1, 0, 0] * ce_x
        wy = u * cs_y + u[0, 1, 0] * cn_y + v * cw_y + v[1, 0, 0] * ce_y
        wz = u * cs_z + u[0, 1, 0] * cn_z + v * cw_z + v[1, 0, 0] * ce_z
        vort = fcor + rarea * (u * dx - u[0, 1, 0] * dx[0, 1] - v * dy + v[1, 0, 0] * dy[1, 0])


def cgrid_normal_wind(
    wx: FloatField,
    wy: FloatField,
    wz: FloatField,
    h: FloatField,
    nx: FloatFieldIJ,
    ny: FloatFieldIJ,
    nz: FloatFieldIJ,
    weight: FloatFieldIJ,
    shift_p: FloatFieldIJ,
    shift_m: FloatFieldIJ,
    face_length: FloatFieldIJ,
    vn: FloatField,
    hflux: FloatField,
):
    """C-grid face-normal wind and the first-order upwind depth flux through the face (FV3
    ``d2a2c`` + ``c_sw``).  The 3-D wind at the face midpoint is interpolated linearly along
    the line between the two cell centres (``weight``) and, because that line misses the face
    midpoint on the skewed grid near tile edges, moved along the face with the differences to
    the next (``shift_p``) and previous (``shift_m``) rows (one-sided next to a cube vertex):
    second order everywhere, also across tile edges."""
    from __externals__ import AI, AJ, BAI, BAJ, BMI, BMJ, DI, DJ

    with computation(PARALLEL), interval(...):
        ax = wx[-DI, -DJ, 0] + weight * (wx - wx[-DI, -DJ, 0])
        ay = wy[-DI, -DJ, 0] + weight * (wy - wy[-DI, -DJ, 0])
        az = wz[-DI, -DJ, 0] + weight * (wz - wz[-DI, -DJ, 0])
        ax = ax + 0.5 * (shift_p * (wx[BAI, BAJ, 0] + wx[AI, AJ, 0] - wx[-DI, -DJ, 0] - wx)
                           + shift_m * (wx[-DI, -DJ, 0] + wx - wx[BMI, BMJ, 0] - wx[-AI, -AJ, 0]))
        ay = ay + 0.5 * (shift_p * (wy[BAI, BAJ, 0] + wy[AI, AJ, 0] - wy[-DI, -DJ, 0] - wy)
                           + shift_m * (wy[-DI, -DJ, 0] + wy - wy[BMI, BMJ, 0] - wy[-AI, -AJ, 0]))
        az = az + 0.5 * (shift_p * (wz[BAI, BAJ, 0] + wz[AI, AJ, 0] - wz[-DI, -DJ, 0] - wz)
                           + shift_m * (wz[-DI, -DJ, 0] + wz - wz[BMI, BMJ, 0] - wz[-AI, -AJ, 0]))
        vn = ax * nx + ay * ny + az * nz
        if vn > 0.0:
            hflux = vn * face_length * h[-DI, -DJ, 0]
        else:
            hflux = vn * face_length * h


def half_step_potential(
    h: FloatField,
    hs: FloatFieldIJ,
    fx: FloatField,
    fy: FloatField,
    wx: FloatField,
    wy: FloatField,
    wz: FloatField,
    rarea: FloatFieldIJ,
    gravity: float,
    dt2: float,
    phi: FloatField,
):
    """Depth at the half step (flux form) and the potential K + g (h + h_s) there."""
    with computation(PARALLEL), interval(...):
        h_half = h + dt2 * rarea * (fx - fx[1, 0, 0] + fy - fy[0, 1, 0])
        phi = 0.5 * (wx * wx + wy * wy + wz * wz) + gravity * (h_half + hs)


def cgrid_wind_update(
    vn: FloatField,
    vort: FloatField,
    phi: FloatField,
    wx: FloatField,
    wy: FloatField,
    wz: FloatField,
    qx: FloatFieldIJ,
    qy: FloatFieldIJ,
    qz: FloatFieldIJ,
    rdc: FloatFieldIJ,
    tan_p: FloatFieldIJ,
    tan_0: FloatFieldIJ,
    tan_m: FloatFieldIJ,
    gt: FloatFieldIJ,
    rgn: FloatFieldIJ,
    dt2: float,
):
    """C-grid half step of the face-normal wind: -(f + zeta) (k x V).n - grad(K + g h).n
    (FV3 ``c_sw`` vorticity/kinetic-energy update plus the C-grid pressure gradient).

    The gradient comes from the difference between the two cell centres (direction g, at
    angle to the face normal n on the skewed grid) and the derivative along the face from the
    neighbouring rows (``tan_*``: centred, one-sided next to a cube vertex):
    grad.n = (d/dg - (g.t) d/dt) / (g.n); q = n x k."""
    from __externals__ import AI, AJ, BAI, BAJ, BMI, BMJ, DI, DJ

    with computation(PARALLEL), interval(...):
        vq = 0.5 * ((wx[-DI, -DJ, 0] + wx) * qx + (wy[-DI, -DJ, 0] + wy) * qy
                    + (wz[-DI, -DJ, 0] + wz) * qz)  # fmt: skip
        dg = (phi - phi[-DI, -DJ, 0]) * rdc
        dt_ = (tan_p * (phi[BAI, BAJ, 0] + phi[AI, AJ, 0]) + tan_0 * (phi[-DI, -DJ, 0] + phi)
               + tan_m * (phi[BMI, BMJ, 0] + phi[-AI, -AJ, 0]))  # fmt: skip
        vn = vn - dt2 * (0.5 * (vort[-DI, -DJ, 0] + vort) * vq + (dg - gt * dt_) * rgn)


def courant_from_normal_wind(
    vn: FloatField,
    rdxa: FloatFieldIJ,
    face_length: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    crx: FloatField,
    xfx: FloatField,
    dt: float,
):
    """Courant number and swept area of a face (FV3 ``fxadv``) from its normal wind: the
    contravariant wind is vn / sin of the upwind cell's grid angle at that face."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        if vn > 0.0:
            crx = dt * vn * rdxa[-DI, -DJ] / sin_far[-DI, -DJ]
        else:
            crx = dt * vn * rdxa / sin_near
        xfx = dt * vn * face_length


def cell_potential(
    h: FloatField,
    hs: FloatFieldIJ,
    vnx: FloatField,
    vny: FloatField,
    cosa: FloatFieldIJ,
    rsina: FloatFieldIJ,
    gravity: float,
    phi: FloatField,
):
    """K + g (h + h_s) at cell centres, K from the time-centred C-grid winds (contravariant
    components = mean normal wind / sin of the grid angle)."""
    with computation(PARALLEL), interval(...):
        a = 0.5 * (vnx + vnx[1, 0, 0]) * rsina
        b = 0.5 * (vny + vny[0, 1, 0]) * rsina
        phi = 0.5 * (a * a + b * b + 2.0 * a * b * cosa) + gravity * (h + hs)


def corner_potential(
    phi: FloatField,
    b_sw: FloatFieldIJ,
    b_se: FloatFieldIJ,
    b_nw: FloatFieldIJ,
    b_ne: FloatFieldIJ,
    u: FloatField,
    v: FloatField,
    vn_x: FloatField,
    vn_y: FloatField,
    du_y: FloatFieldIJ,
    dn_y: FloatFieldIJ,
    dv_x: FloatFieldIJ,
    dn_x: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    nu: float,
    phib: FloatField,
    div: FloatField,
):
    """Potential at cell corners (linear interpolation from the four cells, weights ``b_*``
    exact for linear fields, so also across the kinked grid lines at tile edges; FV3 ``a2b``)
    minus nu times the divergence over the dual cell (FV3 nord = 0 divergence damping,
    ``delpc``).  The flux through the dual face that crosses an edge uses the full wind there,
    the D-grid (tangential) and C-grid (normal) components, projected on the dual face's
    normal (``du_*``, ``dn_*``: projections times the dual face length)."""
    with computation(PARALLEL), interval(...):
        fe = du_y * u + dn_y * vn_y
        fw = du_y[-1, 0] * u[-1, 0, 0] + dn_y[-1, 0] * vn_y[-1, 0, 0]
        fn = dv_x * v + dn_x * vn_x
        fs = dv_x[0, -1] * v[0, -1, 0] + dn_x[0, -1] * vn_x[0, -1, 0]
        div = rarea_c * (fe - fw + fn - fs)
        phib = b_sw * phi[-1, -1, 0] + b_se * phi[0, -1, 0] + b_nw * phi[-1, 0, 0] + b_ne * phi
        phib = phib - nu * div


def dgrid_wind_update(
    wind: FloatField,
    vort_flux: FloatField,
    phib: FloatField,
    rlength: FloatFieldIJ,
    dt: float,
):
    """D-grid wind update on the faces of one direction (FV3 ``d_sw``): the vorticity flux
    through the edge and the potential difference along it.  x-faces carry v (sign -1),
    y-faces carry u (sign +1); the edge runs along the other axis."""
    from __externals__ import DI, DJ, SIGN

    with computation(PARALLEL), interval(...):
        wind = wind + (SIGN * vort_flux + dt * (phib - phib[DJ, DI, 0])) * rlength
