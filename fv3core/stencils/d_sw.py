"""FV3 ``d_sw``: the D-grid step of the shallow-water C-D grid scheme (Lin & Rood 1997,
Lin 2004, Putman & Lin 2007), one class (:class:`DGridShallowWater`) and its stencils.

With the half-step C-grid winds of :class:`~fv3core.stencils.c_sw.CGridShallowWater`: the
Courant numbers and swept areas (``fxadv``), the ``fvtp2d`` fluxes of the depth (flux-form
depth update) and of the absolute vorticity, the potential K + g (h + h_s) at the corners with
del2 (and, ``nord`` = 1, del4) divergence damping, and the D-grid wind update.

Difference to FV3, second order: the kinetic energy is taken at cell centres from the
half-step C-grid winds and interpolated to the corners (FV3: upwind ``xtp_u``/``ytp_v`` corner
values).
"""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

from fv3core.grid.metric import MetricTerms
from fv3core.grid.shallow_water_geometry import CubeVertex
from fv3core.grid.storages import DynamicsGrid
from fv3core.state import Allocate, ShallowWaterState
from fv3core.stencils.c_sw import CGridShallowWater
from fv3core.stencils.divergence_damping import Del4DivergenceDamping
from fv3core.stencils.flux_divergence import apply_flux_divergence
from fv3core.stencils.transport import FiniteVolumeTransport, courant_and_area_flux, courant_halo
from stencils.dims import CELL_DIMS, CORNER_DIMS, face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


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


def del2_coefficient(dddmp: float, resolution: int, radius: float, dt: float) -> float:
    """nu = dddmp * mean cell area / dt (m^2/s) of the del2 divergence damping, from the
    sphere's mean cell area: the same on every rank, so results do not depend on the
    decomposition."""
    return dddmp * 4.0 * np.pi * radius**2 / (6 * resolution * resolution) / dt


class DGridShallowWater:
    """Equivalent of FV3 subroutine ``d_sw`` (with ``fxadv`` and the divergence damping) for
    one rank.

    Owns the depth and vorticity fluxes of each direction's faces (``flux[d]``,
    ``vort_flux[d]``), the Courant numbers and swept areas, the corner potential ``phib`` and
    divergence ``div``.  Four launch sequences, with FV3's halo updates and the cube-vertex fixes
    between them: :attr:`depth_fluxes`, :attr:`depth_update_and_vorticity_fluxes` (after the
    face sync of ``flux``), :attr:`corner_potential` (after the depth's halo update) and
    :attr:`wind_update` (after the corner divergence's halo ring, with del4)."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: DynamicsGrid,
        metric: MetricTerms,
        vertices: list[CubeVertex],
        state: ShallowWaterState,
        cgrid: CGridShallowWater,
        allocate: Allocate,
        *,
        gravity: float,
        dt: float,
        hord: int,
        dddmp: float,
        nord: int,
        d4_bg: float,
    ) -> None:
        """``dt``: the acoustic time step (s); ``hord``: FV3's PPM variant of the depth and
        vorticity fluxes; ``dddmp``: dimensionless del2 damping (see :func:`del2_coefficient`);
        ``nord`` 1 adds del4 damping with ``d4_bg`` (:class:`Del4DivergenceDamping`)."""
        spec = metric.spec
        self.flux = {d: allocate(f"f_{d.name}", face_dims(d)) for d in DIRECTIONS}
        self.vort_flux = {d: allocate(f"fw_{d.name}", face_dims(d)) for d in DIRECTIONS}
        self.courant = {d: allocate(f"cr_{d.name}", CORNER_DIMS) for d in DIRECTIONS}
        self.area_flux = {d: allocate(f"af_{d.name}", CORNER_DIMS) for d in DIRECTIONS}
        self.phib, self.div = allocate("phib", CORNER_DIMS), allocate("div", CORNER_DIMS)
        self.nu = del2_coefficient(dddmp, spec.resolution, metric.radius, dt)
        tg = grid.transport
        transport = FiniteVolumeTransport(factory, tg, spec, hord)
        fluxes = (self.courant[X], self.courant[Y], self.area_flux[X], self.area_flux[Y])
        depth_transport = transport.bind(state.h, *fluxes, self.flux[X], self.flux[Y])
        vort_transport = transport.bind(cgrid.vort, *fluxes, self.vort_flux[X], self.vort_flux[Y])
        flux_div = factory.from_dims(apply_flux_divergence, CELL_DIMS).bind(
            q=state.h, fx=self.flux[X], fy=self.flux[Y], rarea=tg.rarea)
        cell_phi = factory.from_dims(cell_potential, CELL_DIMS, 1).bind(
            h=state.h, hs=grid.hs, vnx=cgrid.vn[X], vny=cgrid.vn[Y], cosa=grid.cosa,
            rsina=grid.rsina, gravity=gravity, phi=cgrid.phi,
        )  # fmt: skip
        b_sw, b_se, b_nw, b_ne = grid.corner_w
        corner_phi = factory.from_dims(corner_potential, CORNER_DIMS).bind(
            phi=cgrid.phi, b_sw=b_sw, b_se=b_se, b_nw=b_nw, b_ne=b_ne, u=state.u, v=state.v,
            vn_x=cgrid.vn[X], vn_y=cgrid.vn[Y], du_y=grid.faces[Y].dual_tangential,
            dn_y=grid.faces[Y].dual_normal, dv_x=grid.faces[X].dual_tangential,
            dn_x=grid.faces[X].dual_normal, rarea_c=grid.rarea_c, nu=self.nu, phib=self.phib,
            div=self.div,
        )  # fmt: skip
        self.del4 = (
            Del4DivergenceDamping(factory, metric, vertices, d4_bg, dt, self.div, self.phib,
                                  grid.rarea_c)
            if nord == 1 else None
        )  # fmt: skip
        #: Courant numbers from the half-step C-grid winds, fvtp2d of the depth
        self.depth_fluxes: list[Launch] = [
            *(self._courant(factory, grid, cgrid, d, dt) for d in DIRECTIONS),
            *depth_transport.steps,
        ]
        #: flux-form depth update, fvtp2d of the absolute vorticity
        self.depth_update_and_vorticity_fluxes: list[Launch] = [flux_div, *vort_transport.steps]
        #: corner potential K + g h - nu div and the corner divergence
        self.corner_potential: list[Launch] = [cell_phi, corner_phi]
        #: del4 damping (nord = 1) and the D-grid wind update
        self.wind_update: list[Launch] = [
            *([self.del4.launch] if self.del4 is not None else []),
            *(self._wind_update(factory, grid, state, d, dt) for d in DIRECTIONS),
        ]

    def _courant(self, factory: GridStencilFactory, grid: DynamicsGrid,
                 cgrid: CGridShallowWater, d: Direction, dt: float) -> Launch:  # fmt: skip
        tg, f = grid.transport, grid.faces[d]
        stencil = factory.from_dims(
            courant_and_area_flux, face_dims(d), courant_halo(d, factory.indexing.n_halo),
            externals={**d.offsets(), "normal_wind": True}, name=f"fxadv_vn_{d.name}",
        )  # fmt: skip
        return stencil.bind(ut=cgrid.vn[d], rdxa=tg.rcell_length(d), face_length=tg.face_length(d),
                            sin_near=f.sin_near, sin_far=f.sin_far, crx=self.courant[d],
                            xfx=self.area_flux[d], dt=dt)  # fmt: skip

    def _wind_update(self, factory: GridStencilFactory, grid: DynamicsGrid,
                     state: ShallowWaterState, d: Direction, dt: float) -> Launch:  # fmt: skip
        # x-faces carry v, whose vorticity flux enters with sign -1; y-faces carry u (+1)
        sign = -1.0 if d.axis == 0 else 1.0
        stencil = factory.from_dims(dgrid_wind_update, face_dims(d),
                                    externals={**d.offsets(), "SIGN": sign},
                                    name=f"d_sw_wind_{d.name}")  # fmt: skip
        return stencil.bind(wind=state.face_wind(d), vort_flux=self.vort_flux[d], phib=self.phib,
                            rlength=grid.faces[d].rlength, dt=dt)  # fmt: skip
