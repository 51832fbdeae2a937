"""FV3 ``c_sw`` with ``d2a2c``: the C-grid half step of the shallow-water C-D grid scheme
(Lin & Rood 1997, Putman & Lin 2007), one class (:class:`CGridShallowWater`) and its stencils.

From the D-grid state (depth ``h``, covariant winds ``u``, ``v``): the A-grid winds (kept as
3-D Cartesian vectors, so C-grid face winds are exact face-normal projections also across
tile edges), the absolute vorticity, the C-grid normal winds and upwind depth fluxes, the
depth and the potential K + g (h + h_s) at the half step, and the C-grid wind update.

Differences to FV3, all second order: the A-grid winds are the least-squares fit to the four
D-grid edges (FV3: 4th-order ``d2a2c_vect``), and the face winds interpolate the 3-D vectors
(FV3: one-sided edge interpolation); the half-step depth flux is first-order upwind, as FV3's.
"""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.grid.storages import DynamicsGrid
from fv3core.state import Allocate, ShallowWaterState
from fv3core.stencils.flux_divergence import flux_divergence
from stencils.dims import CELL_DIMS, face_dims
from stencils.directions import DIRECTIONS, Direction
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

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


@gtscript.function
def face_midpoint_value(w, weight, shift_p, shift_m):
    """A cell-centre quantity ``w`` at the midpoint of the face between the cell and its
    upstream neighbour (-DI, -DJ): linear along the line between the two centres (``weight``),
    moved along the face with the differences to the next (``shift_p``) and previous
    (``shift_m``) rows (one-sided next to a cube vertex), because on the skewed grid near tile
    edges that line misses the face midpoint."""
    from __externals__ import AI, AJ, BAI, BAJ, BMI, BMJ, DI, DJ

    a = w[-DI, -DJ, 0] + weight * (w - w[-DI, -DJ, 0])
    return a + 0.5 * (shift_p * (w[BAI, BAJ, 0] + w[AI, AJ, 0] - w[-DI, -DJ, 0] - w)
                      + shift_m * (w[-DI, -DJ, 0] + w - w[BMI, BMJ, 0] - w[-AI, -AJ, 0]))


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
    ``d2a2c`` + ``c_sw``): the 3-D A-grid wind at the face midpoint
    (:func:`face_midpoint_value`, second order everywhere, also across tile edges) projected on
    the face normal."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        ax = face_midpoint_value(wx, weight, shift_p, shift_m)
        ay = face_midpoint_value(wy, weight, shift_p, shift_m)
        az = face_midpoint_value(wz, weight, shift_p, shift_m)
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
        h_half = h + dt2 * rarea * flux_divergence(fx, fy)
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


class CGridShallowWater:
    """Equivalent of FV3 subroutine ``c_sw`` (with ``d2a2c``) for one rank.

    Owns the C-grid quantities the D-grid step reads: the A-grid winds ``w`` (3 components),
    the absolute vorticity ``vort``, the C-grid normal winds ``vn[d]`` and depth fluxes
    ``hflux[d]`` of the faces crossed along each direction, and the potential ``phi``.  Two
    launch sequences, with FV3's halo updates and the cube-vertex face fix between them:
    :attr:`normal_winds` (needs filled halos of h, u, v) and :attr:`update`."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: DynamicsGrid,
        state: ShallowWaterState,
        allocate: Allocate,
        gravity: float,
        dt: float,
    ) -> None:
        """``dt``: the acoustic time step (s), the C grid advances by dt / 2; ``gravity`` in
        m s-2."""
        h = factory.indexing.n_halo
        self.w = [allocate(f"w{k}", CELL_DIMS) for k in range(3)]
        self.vort, self.phi = allocate("vort", CELL_DIMS), allocate("phi", CELL_DIMS)
        self.vn = {d: allocate(f"vn_{d.name}", face_dims(d)) for d in DIRECTIONS}
        self.hflux = {d: allocate(f"hf_{d.name}", face_dims(d)) for d in DIRECTIONS}
        wx, wy, wz = self.w
        cs, cn, cw, ce = grid.agrid
        d2a = factory.from_dims(dgrid_to_agrid, CELL_DIMS, h).bind(
            u=state.u, v=state.v, dx=grid.dx, dy=grid.dy, rarea=grid.rarea,
            cs_x=cs[0], cs_y=cs[1], cs_z=cs[2], cn_x=cn[0], cn_y=cn[1], cn_z=cn[2],
            cw_x=cw[0], cw_y=cw[1], cw_z=cw[2], ce_x=ce[0], ce_y=ce[1], ce_z=ce[2],
            fcor=grid.fcor, wx=wx, wy=wy, wz=wz, vort=self.vort,
        )  # fmt: skip
        half = factory.from_dims(half_step_potential, CELL_DIMS, h - 1).bind(
            h=state.h, hs=grid.hs, fx=self.hflux[DIRECTIONS[0]], fy=self.hflux[DIRECTIONS[1]],
            wx=wx, wy=wy, wz=wz, rarea=grid.rarea, gravity=gravity, dt2=0.5 * dt, phi=self.phi,
        )  # fmt: skip
        #: d2a2c: A-grid winds, vorticity, C-grid normal winds and depth fluxes
        self.normal_winds: list[Launch] = [d2a, *(self._normal_wind(factory, grid, state, d)
                                                  for d in DIRECTIONS)]  # fmt: skip
        #: half-step depth and potential, C-grid wind update
        self.update: list[Launch] = [half, *(self._wind_update(factory, grid, d, dt)
                                             for d in DIRECTIONS)]  # fmt: skip

    def _normal_wind(self, factory: GridStencilFactory, grid: DynamicsGrid,
                     state: ShallowWaterState, d: Direction) -> Launch:  # fmt: skip
        f = grid.faces[d]
        wx, wy, wz = self.w
        stencil = factory.from_dims(cgrid_normal_wind, face_dims(d), factory.indexing.n_halo - 1,
                                    externals=d.face_offsets(), name=f"c_normal_{d.name}")
        return stencil.bind(wx=wx, wy=wy, wz=wz, h=state.h, nx=f.normal[0], ny=f.normal[1],
                            nz=f.normal[2], weight=f.weight, shift_p=f.shift_p, shift_m=f.shift_m,
                            face_length=f.length, vn=self.vn[d], hflux=self.hflux[d])  # fmt: skip

    def _wind_update(self, factory: GridStencilFactory, grid: DynamicsGrid, d: Direction,
                     dt: float) -> Launch:  # fmt: skip
        f = grid.faces[d]
        wx, wy, wz = self.w
        stencil = factory.from_dims(cgrid_wind_update, face_dims(d), factory.indexing.n_halo - 2,
                                    externals=d.face_offsets(), name=f"c_sw_{d.name}")
        return stencil.bind(vn=self.vn[d], vort=self.vort, phi=self.phi, wx=wx, wy=wy, wz=wz,
                            qx=f.q[0], qy=f.q[1], qz=f.q[2], rdc=f.rcentre_distance,
                            tan_p=f.tan[0], tan_0=f.tan[1], tan_m=f.tan[2], gt=f.gt, rgn=f.rgn,
                            dt2=0.5 * dt)  # fmt: skip
