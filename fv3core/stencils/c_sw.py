"""FV3 ``c_sw`` (``sw_core.F90``; ``SW_DYNAMICS``, hydrostatic, cubed sphere ``grid_type = 0``)
in GTScript: the C-grid half step of FV3's C-D grid shallow-water scheme for one rank
(:class:`CGridShallowWaterDynamics`).

From the D-grid state (``delp``, ``pt``, ``u``, ``v``): ``d2a2c_vect``
(:class:`~fv3core.stencils.d2a2c_vect.DGridToCGridWinds`), ``divergence_corner`` (``nord >
0``), the contravariant C-grid winds times ``dt2`` and the face length, the upwind ``delp``
fluxes and ``delpc`` (with ``fill2_4corners`` of ``delp`` and ``pt`` before each sweep), the
upwind kinetic energy with its tile-edge terms, the absolute vorticity from the C-grid
circulation with the cube-corner terms removed, and the time-centred ``uc``, ``vc``.  The
statements are FV3's, in FV3's order of floating-point operations, on FV3's index ranges;
nothing differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, horizontal, interval, region

from fv3core.errors import FV3ConfigError
from fv3core.grid.storages import GridStorages
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.d2a2c_vect import (
    CornerFills,
    DGridToCGridWinds,
    IndexRegions,
    PointCopy,
    across_offsets,
    check_subdomain,
)
from stencils.dims import CELL_DIMS, CORNER_DIMS, face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


def fill2_4corners_copies(
    spec: SubdomainSpec, d: Direction, names: tuple[str, ...]
) -> list[PointCopy]:
    """FV3 ``fill2_4corners(q1, q2, dir)`` (FV3 indices) of the corners this rank has: the two
    halo cells next to each cube corner that a sweep along ``d`` reads, for each field in
    ``names``."""
    npx = npy = spec.resolution + 1
    corners = {
        "sw": spec.on_west and spec.on_south, "se": spec.on_east and spec.on_south,
        "nw": spec.on_west and spec.on_north, "ne": spec.on_east and spec.on_north,
    }  # fmt: skip
    if d.axis == 0:
        points = {
            "sw": [((-1, 0), (0, 2)), ((0, 0), (0, 1))],
            "se": [((npx + 1, 0), (npx, 2)), ((npx, 0), (npx, 1))],
            "nw": [((0, npy), (0, npy - 1)), ((-1, npy), (0, npy - 2))],
            "ne": [((npx, npy), (npx, npy - 1)), ((npx + 1, npy), (npx, npy - 2))],
        }
    else:
        points = {
            "sw": [((0, 0), (1, 0)), ((0, -1), (2, 0))],
            "se": [((npx, 0), (npx - 1, 0)), ((npx, -1), (npx - 2, 0))],
            "nw": [((0, npy), (1, npy)), ((0, npy + 1), (2, npy))],
            "ne": [((npx, npy), (npx - 1, npy)), ((npx, npy + 1), (npx - 2, npy))],
        }
    return [PointCopy(q, *dst, q, *src) for q in names for c, on in corners.items() if on
            for dst, src in points[c]]  # fmt: skip


@gtscript.function
def dual_edge_flux(w, a_m, a_0, cos_m, cos_0, dc, sin_m, sin_0):
    """FV3 ``divergence_corner``'s flux ``uf``/``vf`` through the dual-cell edge along a
    D-grid face: the covariant D-grid wind ``w`` made normal with the two A-grid winds
    ``a_m``, ``a_0`` across the face, times the dual edge length ``dc`` and the mean sine."""
    return (w - 0.25 * (a_m + a_0) * (cos_m + cos_0)) * dc * 0.5 * (sin_m + sin_0)


@gtscript.function
def dual_edge_flux_on_tile_edge(w, dc, sin_m, sin_0):
    """:func:`dual_edge_flux` on a tile edge, where FV3 takes the D-grid wind as normal."""
    return w * dc * 0.5 * (sin_m + sin_0)


def divergence_corner(
    u: FloatField,
    v: FloatField,
    ua: FloatField,
    va: FloatField,
    dxc: FloatFieldIJ,
    dyc: FloatFieldIJ,
    sin_sg1: FloatFieldIJ,
    sin_sg2: FloatFieldIJ,
    sin_sg3: FloatFieldIJ,
    sin_sg4: FloatFieldIJ,
    cos_sg1: FloatFieldIJ,
    cos_sg2: FloatFieldIJ,
    cos_sg3: FloatFieldIJ,
    cos_sg4: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    divg_d: FloatField,
):
    """FV3 ``divergence_corner`` (cubed sphere): the divergence of the D-grid winds over the
    dual cell of each corner.  ``uf`` on FV3's rows ``j == 1``, ``j == npy`` (bands ``s*``,
    ``e*``) and ``vf`` on a rank with ``is == 1`` / ``ie + 1 == npx`` use the tile-edge form;
    at the cube corners FV3 removes the duplicate ``vf`` term."""
    from __externals__ import ea, eb, ec, ed, i_end, i_start, j_end, j_start, sa, sb, sc, sd

    with computation(PARALLEL), interval(...):
        uf = dual_edge_flux(u, va[0, -1, 0], va, cos_sg4[0, -1], cos_sg2, dyc, sin_sg4[0, -1],
                            sin_sg2)  # fmt: skip
        with horizontal(region[sa:sb, sc:sd], region[ea:eb, ec:ed]):
            uf = dual_edge_flux_on_tile_edge(u, dyc, sin_sg4[0, -1], sin_sg2)
        vf = dual_edge_flux(v, ua[-1, 0, 0], ua, cos_sg3[-1, 0], cos_sg1, dxc, sin_sg3[-1, 0],
                            sin_sg1)  # fmt: skip
        with horizontal(region[i_start, :], region[i_end + 1, :]):
            vf = dual_edge_flux_on_tile_edge(v, dxc, sin_sg3[-1, 0], sin_sg1)
        vf_south = vf[0, -1, 0]
        div = vf_south - vf + uf[-1, 0, 0] - uf
        with horizontal(region[i_start, j_start], region[i_end + 1, j_start]):
            div = div - vf_south
        with horizontal(region[i_end + 1, j_end + 1], region[i_start, j_end + 1]):
            div = div + vf
        divg_d = rarea_c * div


def cgrid_mass_flux(
    ct: FloatField,
    face_length: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    delp: FloatField,
    flux: FloatField,
    pt: FloatField,
    pt_flux: FloatField,
    dt2: float,
):
    """c_sw: the contravariant C-grid wind ``ct`` (``ut``/``vt``) times ``dt2``, the face length
    and the upwind cell's ``sin_sg`` (in place), and the upwind ``delp`` flux through the face
    (``fx1``/``fy1``) along ``DI``/``DJ``; without ``SW_DYNAMICS`` also the upwind ``pt`` times
    that flux (``fx``/``fy``)."""
    from __externals__ import DI, DJ, SW_DYNAMICS

    with computation(PARALLEL), interval(...):
        far = dt2 * ct * face_length * sin_far[-DI, -DJ]
        near = dt2 * ct * face_length * sin_near
        ct = far if ct > 0.0 else near
        flux = ct * (delp[-DI, -DJ, 0] if ct > 0.0 else delp)
        if __INLINED(not SW_DYNAMICS):
            pt_flux = flux * (pt[-DI, -DJ, 0] if ct > 0.0 else pt)


def cgrid_delp(
    delp: FloatField,
    pt: FloatField,
    fx: FloatField,
    fy: FloatField,
    rarea: FloatFieldIJ,
    delpc: FloatField,
    ptc: FloatField,
    pt_fx: FloatField,
    pt_fy: FloatField,
):
    """c_sw: ``delp`` at the half step from the upwind fluxes; ``SW_DYNAMICS``: ``ptc = pt``,
    else ``pt`` at the half step from its upwind fluxes ``pt_fx``, ``pt_fy``."""
    from __externals__ import SW_DYNAMICS

    with computation(PARALLEL), interval(...):
        delpc = delp + (fx - fx[1, 0, 0] + fy - fy[0, 1, 0]) * rarea
        if __INLINED(SW_DYNAMICS):
            ptc = pt
        else:
            ptc = (pt * delp + (pt_fx - pt_fx[1, 0, 0] + pt_fy - pt_fy[0, 1, 0]) * rarea) / delpc


def cgrid_w_flux(ct: FloatField, flux: FloatField, w: FloatField, w_flux: FloatField):
    """c_sw, non-hydrostatic: the upwind ``w`` times the ``delp`` flux ``flux`` through the face
    along ``DI``/``DJ`` (FV3's ``fx2``/``fy2``; ``ct`` already scaled, its sign the wind's)."""
    from __externals__ import DI, DJ

    with computation(PARALLEL), interval(...):
        w_flux = flux * (w[-DI, -DJ, 0] if ct > 0.0 else w)


def cgrid_wc(w: FloatField, delp: FloatField, delpc: FloatField, w_fx: FloatField, w_fy: FloatField,
             rarea: FloatFieldIJ, wc: FloatField):  # fmt: skip
    """c_sw, non-hydrostatic: ``w`` at the half step, ``wc``, from its upwind fluxes."""
    with computation(PARALLEL), interval(...):
        wc = (w * delp + (w_fx - w_fx[1, 0, 0] + w_fy - w_fy[0, 1, 0]) * rarea) / delpc


def cgrid_kinetic_energy(
    a_wind: FloatField,
    c_wind: FloatField,
    d_wind: FloatField,
    sin_near: FloatFieldIJ,
    cos_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    cos_far: FloatFieldIJ,
    a_other: FloatField,
    ke: FloatField,
    dt4: float,
):
    """c_sw's kinetic energy, one direction: the C-grid wind ``c_wind`` (``uc``/``vc``) on the
    cell's face upwind by the A-grid wind ``a_wind`` (``ua``/``va``); where that face is a tile
    edge (FV3's cells 1 and npx, bands ``s*``, ``e*``, for the low face; cells 0 and npx - 1
    for the high face) made the coordinate-parallel covariant wind with the D-grid wind
    ``d_wind`` (``v``/``u``).  ``combine`` false: ``ke`` is that wind (FV3's ``ke``, the x
    part); true: ``ke = dt4 (a_other ke + a_wind k)`` with this direction's ``k`` (FV3's
    ``vort``, the y part)."""
    from __externals__ import DI, DJ, combine, ea, eb, ec, ed, sa, sb, sc, sd

    with computation(PARALLEL), interval(...):
        k = c_wind if a_wind > 0.0 else c_wind[DI, DJ, 0]
        with horizontal(region[sa:sb, sc:sd], region[ea:eb, ec:ed]):
            k = c_wind * sin_near + d_wind * cos_near if a_wind > 0.0 else k
        with horizontal(region[sa - DI : sb - DI, sc - DJ : sd - DJ],
                        region[ea - DI : eb - DI, ec - DJ : ed - DJ]):  # fmt: skip
            k = k if a_wind > 0.0 else c_wind[DI, DJ, 0] * sin_far + d_wind[DI, DJ, 0] * cos_far
        if __INLINED(combine):
            ke = dt4 * (a_other * ke + a_wind * k)
        else:
            ke = k


def cgrid_vorticity(
    uc: FloatField,
    vc: FloatField,
    dxc: FloatFieldIJ,
    dyc: FloatFieldIJ,
    fC: FloatFieldIJ,
    rarea_c: FloatFieldIJ,
    vort: FloatField,
):
    """c_sw: the absolute vorticity at the corners from the circulation of the C-grid winds;
    at the cube corners FV3 removes the extra ``fy`` term."""
    from __externals__ import i_end, i_start, j_end, j_start

    with computation(PARALLEL), interval(...):
        fx = uc * dxc
        fy = vc * dyc
        fy_west = fy[-1, 0, 0]
        circ = fx[0, -1, 0] - fx - fy_west + fy
        with horizontal(region[i_start, j_start], region[i_start, j_end + 1]):
            circ = circ + fy_west
        with horizontal(region[i_end + 1, j_start], region[i_end + 1, j_end + 1]):
            circ = circ - fy
        vort = fC + rarea_c * circ


def cgrid_wind_update(
    c_wind: FloatField,
    d_wind: FloatField,
    cosa: FloatFieldIJ,
    sina: FloatFieldIJ,
    rdc: FloatFieldIJ,
    vort: FloatField,
    ke: FloatField,
    dt2: float,
):
    """c_sw: the time-centred C-grid wind on the faces crossed along ``DI``/``DJ``: the upwind
    absolute-vorticity flux across the face (contravariant D-grid wind along the face, the
    D-grid wind itself on FV3's tile-edge faces: bands ``s*``, ``e*``) and the kinetic-energy
    gradient; ``uc`` gains the vorticity term, ``vc`` loses it."""
    from __externals__ import AI, AJ, DI, DJ, ea, eb, ec, ed, sa, sb, sc, sd

    with computation(PARALLEL), interval(...):
        fl = dt2 * (d_wind - c_wind * cosa) / sina
        with horizontal(region[sa:sb, sc:sd], region[ea:eb, ec:ed]):
            fl = dt2 * d_wind
        w = vort if fl > 0.0 else vort[AI, AJ, 0]
        if __INLINED(DI == 1):
            c_wind = c_wind + fl * w + rdc * (ke[-DI, -DJ, 0] - ke)
        else:
            c_wind = c_wind - fl * w + rdc * (ke[-DI, -DJ, 0] - ke)


class CGridShallowWaterDynamics:
    """Equivalent of FV3 subroutine ``c_sw`` (hydrostatic, cubed sphere) for one rank,
    ``d2a2c_vect`` and ``divergence_corner`` included.

    ``nord``: FV3's order of the divergence damping (``nord > 0``: ``divergence_corner``
    writes ``divg_d``); ``dt2``: FV3's ``dt2``, half the acoustic time step (s);
    ``sw_dynamics``: FV3 built with ``SW_DYNAMICS`` (``ptc = pt``), else the 3-D core's upwind
    transport of ``pt`` into ``ptc``; ``hydrostatic=False`` (the non-hydrostatic 3-D core): FV3's
    ``.not. hydrostatic`` branch, ``w`` corner-filled and transported alike into ``wc``.

    :meth:`bind` returns FV3's sequence as launches; GTScript stencils except FV3's cube-corner
    fills, which copy a point's value (with sign) from a point whose offset differs per filled
    point, in place between sweeps: those are NumPy point copies on flat indices
    (:class:`~fv3core.stencils.d2a2c_vect.CornerFills`; d2a2c_vect's corner blocks and the two
    ``fill2_4corners``).  The cube-corner terms of the circulation and of the corner divergence
    (one point each, fixed offset) are GTScript regions."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: GridStorages,
        spec: SubdomainSpec,
        nord: int,
        dt2: float,
        *,
        sw_dynamics: bool = True,
        hydrostatic: bool = True,
    ) -> None:
        check_subdomain(spec, "c_sw")
        if sw_dynamics and not hydrostatic:
            raise FV3ConfigError("c_sw: the shallow-water core (SW_DYNAMICS) is hydrostatic")
        if nord not in (0, 1, 2, 3):
            raise FV3ConfigError(f"c_sw: nord={nord}; FV3's nord is 0, 1, 2 or 3")
        self.spec, self.grid, self.nord, self.dt2 = spec, grid, nord, float(dt2)
        self.d2a2c = DGridToCGridWinds(factory, grid, spec)
        indexing, backend, npx = factory.indexing, factory.backend, spec.resolution + 1

        def regions(dims: tuple[str, str, str], halo: int) -> IndexRegions:
            return IndexRegions(spec, *indexing.bounds(dims, halo))

        def tile_edge_bands(d: Direction, r: IndexRegions) -> dict[str, Any]:
            return {**r.band(d, 1, 1, "s"), **r.band(d, npx, npx, "e")}

        #: FV3's local ``fx1``, ``fy1`` (upwind delp fluxes), ``ke``, ``vort``
        self.delp_flux = {d: zeros(indexing.domain_of(face_dims(d)), backend) for d in DIRECTIONS}
        #: FV3's local ``fx``, ``fy``: the upwind ``pt`` fluxes (3-D core only)
        self.pt_flux = {d: zeros(indexing.domain_of(face_dims(d)), backend) for d in DIRECTIONS}
        self.sw_dynamics, self.hydrostatic = bool(sw_dynamics), bool(hydrostatic)
        sw = {"SW_DYNAMICS": self.sw_dynamics}
        if not self.hydrostatic:
            #: FV3's local ``fx2``, ``fy2``: the upwind ``w`` fluxes (non-hydrostatic only)
            self.w_flux = {d: zeros(indexing.domain_of(face_dims(d)), backend) for d in DIRECTIONS}
            self._w_flux = {d: factory.from_dims(cgrid_w_flux, face_dims(d), 1, externals=d.offsets(),
                                                 name=f"c_sw_w_flux_{d.name}") for d in DIRECTIONS}  # fmt: skip
            self._wc = factory.from_dims(cgrid_wc, CELL_DIMS, 1, name="c_sw_wc")
        self.ke = zeros(indexing.domain_of(CELL_DIMS), backend)
        self.vort = zeros(indexing.domain_of(CORNER_DIMS), backend)
        r = regions(CORNER_DIMS, 0)
        self._divergence = factory.from_dims(
            divergence_corner, CORNER_DIMS, 0, name="divergence_corner",
            externals={**r.rank_edges(), **tile_edge_bands(Y, r)},
        )  # fmt: skip
        self._mass_flux = {
            d: factory.from_dims(cgrid_mass_flux, face_dims(d), 1, externals={**d.offsets(), **sw},
                                 name=f"c_sw_mass_flux_{d.name}")
            for d in DIRECTIONS
        }  # fmt: skip
        self._delpc = factory.from_dims(cgrid_delp, CELL_DIMS, 1, externals=sw, name="c_sw_delpc")
        self._ke = {
            d: factory.from_dims(
                cgrid_kinetic_energy, CELL_DIMS, 1, name=f"c_sw_ke_{d.name}",
                externals={**d.offsets(), **tile_edge_bands(d, regions(CELL_DIMS, 1)),
                           "combine": d.axis == 1},
            )
            for d in DIRECTIONS
        }  # fmt: skip
        self._vorticity = factory.from_dims(
            cgrid_vorticity, CORNER_DIMS, 0, name="c_sw_vorticity",
            externals=regions(CORNER_DIMS, 0).rank_edges(),
        )  # fmt: skip
        self._update = {
            d: factory.from_dims(
                cgrid_wind_update, face_dims(d), 0, name=f"c_sw_update_{d.name}",
                externals={**d.offsets(), **across_offsets(d),
                           **tile_edge_bands(d, regions(face_dims(d), 0))},
            )
            for d in DIRECTIONS
        }  # fmt: skip
        filled = ("delp", "pt") if self.hydrostatic else ("delp", "pt", "w")
        self._fill = {d: CornerFills(spec, fill2_4corners_copies(spec, d, filled)) for d in DIRECTIONS}

    def bind(
        self,
        delp: Any,
        pt: Any,
        u: Any,
        v: Any,
        uc: Any,
        vc: Any,
        ua: Any,
        va: Any,
        ut: Any,
        vt: Any,
        delpc: Any,
        ptc: Any,
        divg_d: Any = None,
        w: Any = None,
        wc: Any = None,
    ) -> list[Launch]:
        """FV3's ``c_sw`` on these storages (3-D, FV3's staggering with the 3 halo cells:
        ``delp``, ``pt``, ``ua``, ``va``, ``ut``, ``vt``, ``delpc``, ``ptc`` cells; ``u``,
        ``vc`` y-faces; ``v``, ``uc`` x-faces; ``divg_d`` corners, only read with ``nord >
        0``), in order:

        1. d2a2c_vect (6 steps, :class:`~fv3core.stencils.d2a2c_vect.DGridToCGridWinds`):
           ``ua``, ``va`` on the compute cells + 2, ``uc`` on the x-faces + 1, ``vc`` on the
           y-faces + 1;
        2. ``nord > 0``: ``divg_d`` on the compute corners (``divergence_corner``);
        3. ``fill2_4corners(delp, pt, 1)`` (NumPy), ``ut`` times ``dt2 dy sin_sg`` and ``fx1``
           on the x-faces + 1; ``fill2_4corners(delp, pt, 2)``, ``vt`` and ``fy1`` on the
           y-faces + 1;
        4. ``delpc``, ``ptc`` on the compute cells + 1;
        5. the kinetic energy (cells + 1; x then y) and the absolute vorticity (compute corners);
        6. ``uc`` on the compute x-faces, ``vc`` on the compute y-faces.

        ``delp`` and ``pt`` (and ``w``) keep their corner fills, as in FV3; every other point of
        every argument is left as it is.  Non-hydrostatic: ``w`` (cells) in, ``wc`` (cells) out
        with ``delpc``."""
        if self.hydrostatic == (w is not None or wc is not None) or (w is None) != (wc is None):
            need = "no w, wc" if self.hydrostatic else "w and wc"
            raise FV3ConfigError(f"c_sw (hydrostatic={self.hydrostatic}) takes {need}")
        fills = {"delp": delp, "pt": pt} if self.hydrostatic else {"delp": delp, "pt": pt, "w": w}
        if self.nord > 0 and divg_d is None:
            raise FV3ConfigError(f"c_sw: nord={self.nord} writes divg_d; pass its storage")
        g, dt2 = self.grid, self.dt2
        c_wind, ct_wind = {X: uc, Y: vc}, {X: ut, Y: vt}
        a_wind, d_wind = {X: ua, Y: va}, {X: v, Y: u}
        face_length = {X: g.dy, Y: g.dx}
        sin_near, sin_far = {X: g.sin_sg1, Y: g.sin_sg2}, {X: g.sin_sg3, Y: g.sin_sg4}
        cos_near, cos_far = {X: g.cos_sg1, Y: g.cos_sg2}, {X: g.cos_sg3, Y: g.cos_sg4}
        cosa, sina = {X: g.cosa_u, Y: g.cosa_v}, {X: g.sina_u, Y: g.sina_v}
        rdc = {X: g.rdxc, Y: g.rdyc}
        launches = self.d2a2c.bind(u=u, v=v, ua=ua, va=va, uc=uc, vc=vc, ut=ut, vt=vt)
        if self.nord > 0:
            launches.append(self._divergence.bind(
                u=u, v=v, ua=ua, va=va, dxc=g.dxc, dyc=g.dyc, sin_sg1=g.sin_sg1,
                sin_sg2=g.sin_sg2, sin_sg3=g.sin_sg3, sin_sg4=g.sin_sg4, cos_sg1=g.cos_sg1,
                cos_sg2=g.cos_sg2, cos_sg3=g.cos_sg3, cos_sg4=g.cos_sg4, rarea_c=g.rarea_c,
                divg_d=divg_d,
            ))  # fmt: skip
        for d in DIRECTIONS:
            launches.append(self._fill[d].bind(**fills))
            launches.append(self._mass_flux[d].bind(
                ct=ct_wind[d], face_length=face_length[d], sin_near=sin_near[d],
                sin_far=sin_far[d], delp=delp, flux=self.delp_flux[d], pt=pt,
                pt_flux=self.pt_flux[d], dt2=dt2,
            ))  # fmt: skip
            if not self.hydrostatic:
                launches.append(self._w_flux[d].bind(ct=ct_wind[d], flux=self.delp_flux[d], w=w,
                                                     w_flux=self.w_flux[d]))  # fmt: skip
        launches.append(self._delpc.bind(delp=delp, pt=pt, fx=self.delp_flux[X],
                                         fy=self.delp_flux[Y], rarea=g.rarea, delpc=delpc,
                                         ptc=ptc, pt_fx=self.pt_flux[X],
                                         pt_fy=self.pt_flux[Y]))  # fmt: skip
        if not self.hydrostatic:
            launches.append(self._wc.bind(w=w, delp=delp, delpc=delpc, w_fx=self.w_flux[X], w_fy=self.w_flux[Y],
                                          rarea=g.rarea, wc=wc))  # fmt: skip
        launches += [
            self._ke[d].bind(a_wind=a_wind[d], c_wind=c_wind[d], d_wind=d_wind[d],
                             sin_near=sin_near[d], cos_near=cos_near[d], sin_far=sin_far[d],
                             cos_far=cos_far[d], a_other=ua, ke=self.ke, dt4=0.5 * dt2)
            for d in DIRECTIONS
        ]  # fmt: skip
        launches.append(self._vorticity.bind(uc=uc, vc=vc, dxc=g.dxc, dyc=g.dyc, fC=g.fC,
                                             rarea_c=g.rarea_c, vort=self.vort))  # fmt: skip
        launches += [
            self._update[d].bind(c_wind=c_wind[d], d_wind=d_wind[d], cosa=cosa[d], sina=sina[d],
                                 rdc=rdc[d], vort=self.vort, ke=self.ke, dt2=dt2)
            for d in DIRECTIONS
        ]  # fmt: skip
        return launches
