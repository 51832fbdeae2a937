"""FV3's ``d_sw`` (GFDL_atmos_cubed_sphere ``model/sw_core.F90``) in GTScript, for the
shallow-water configuration FV3 compiles with ``SW_DYNAMICS`` (hydrostatic, ``test_case > 1``,
no dissipation heating ``d_con = 0``), with FV3's order of floating-point operations:
:class:`DGridShallowWaterLagrangianDynamics` and its stencils.

What ``d_sw`` does, in order (each step is FV3's, over FV3's index ranges):

1. the contravariant C-grid winds ``ut``, ``vt`` from the covariant ``uc``, ``vc``: the interior
   formula, the one-sided values on the tile edges (``uc / sin_sg``), the cross-edge rows next to
   the edges, and the 2x2 systems at the cube vertices
   (:func:`contravariant_interior`, :func:`contravariant_edges`);
2. ``fxadv``: Courant numbers ``crx``/``cry`` and swept areas ``xfx``/``yfx`` (in
   :func:`contravariant_edges`);
3. ``fv_tp_2d`` of ``delp`` (:class:`fv3core.stencils.fv_tp_2d.FiniteVolumeTransport`, which
   computes FV3's ``ra_x``/``ra_y`` = ``area + xfx - xfx(i+1)`` inline), with the vorticity
   damping (``damp_v > 1e-4``) its ``deln_flux`` of ``delp`` added to the fluxes
   (:class:`fv3core.stencils.deln_flux.DelnFlux`), and the ``delp`` update;
4. the kinetic energy at the corners from the B-grid winds ``vb``, ``ub`` (:func:`b_grid_wind`,
   with FV3's tile-edge extrapolations) and the upwind corner winds of ``ytp_v``, ``xtp_u``
   (:class:`fv3core.stencils.xtp_u.WindCornerFlux`), with FV3's values at the four cube
   vertices (:func:`kinetic_energy`);
5. the relative vorticity ``wk`` and the absolute vorticity ``wk + f0`` (:func:`relative_vorticity`;
   FV3 adds ``f0`` after the damping, which reads ``wk`` and does not write it: the same values);
6. the divergence damping: an object with ``bind(u, v, ua, va, uc, vc, divg_d, ke, wk)`` that
   adds its term to ``ke`` (FV3's ``nord = 0`` and ``nord > 0`` blocks; ``uc``, ``vc`` and
   ``divg_d`` are its work arrays, as in FV3), e.g.
   :class:`fv3core.stencils.divergence_damping.DivergenceDamping`;
7. ``fv_tp_2d`` of the absolute vorticity (``hord_vt``) and the D-grid wind update
   (:func:`dgrid_wind_update`); ``u``, ``v`` leave multiplied by ``dx``, ``dy``, as FV3 leaves
   them for ``one_grad_p``;
8. with the vorticity damping (``damp_v > 1e-5``) FV3's ``del6_vt_flux`` of ``wk``
   (:class:`~fv3core.stencils.deln_flux.DelnFlux`, computed before step 7: it reads only
   ``wk``) added to ``u`` and subtracted from ``v`` in the wind update of step 7
   (:func:`damped_dgrid_wind_update`, FV3's ``u = u + vt``, ``v = v - ut`` after it).

Ranges: the final ``ut`` (:attr:`DGridShallowWaterLagrangianDynamics.contra` ``[X]``) and ``crx``, ``xfx`` are
computed on FV3's ``is:ie+1, jsd:jed``, ``vt``, ``cry``, ``yfx`` on ``isd:ied, js:je+1`` (every
point FV3 defines and ``d_sw`` reads); the first stage (:attr:`DGridShallowWaterLagrangianDynamics.contra0`) on
one more face row along the direction (``is-1:ie+2``; FV3 ``vt``: ``js-1:je+2``), which the vertex
systems read.  There it also holds the interior formula on the cross-edge rows where FV3 leaves
``ut`` unset and never reads it (``i = is-1, ie+2`` of the rows ``j = 0, 1, npy-1, npy``).  The
B-grid winds, ``ke`` and the corner winds are computed on ``is:ie+1, js:je+1``, ``wk`` and the
absolute vorticity on ``isd:ied, jsd:jed``, ``delp`` on ``is:ie, js:je``, ``u`` on
``is:ie, js:je+1``, ``v`` on ``is:ie+1, js:je``, as in FV3.

x and y are written once (:class:`stencils.directions.Direction`) wherever FV3 writes one as the
mirror image of the other; the sums FV3 writes in a different order for ``ut`` than for ``vt``
keep their order (external ``ALONG_X``).  The single points at the cube vertices are GTScript
regions: no step needs a NumPy fix-up (each vertex's 2x2 system reads only values the steps
before it produced, and ``copy_corners`` of ``fv_tp_2d`` is
:class:`~fv3core.stencils.fv_tp_2d.CornerCopy`, a gather/scatter of halo points).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import __INLINED, PARALLEL, computation, horizontal, interval, region

from fv3core.errors import FV3ConfigError
from fv3core.grid.subdomain import SubdomainSpec
from fv3core.stencils.d_sw_vertical import DGridVerticalWind
from fv3core.stencils.deln_flux import (
    DEL6_VT_FLUX_THRESHOLD,
    DELN_FLUX_THRESHOLD,
    DelnFlux,
    damping_coefficient,
)
from fv3core.stencils.flux_divergence import (
    accumulate,
    apply_flux_divergence,
    apply_mass_weighted_flux_divergence,
)
from fv3core.stencils.fv_tp_2d import FiniteVolumeTransport
from fv3core.stencils.xtp_u import DirectionalEdges, WindCornerFlux, at, between
from stencils.dims import CELL_DIMS, CORNER_DIMS, Dims, face_dims
from stencils.directions import DIRECTIONS, Direction, X, Y
from stencils.factory import GridStencilFactory
from stencils.launch import FrozenStencil, Launch
from stencils.storage import zeros

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


class DivergenceDampingStep(Protocol):
    """What :class:`DGridShallowWaterLagrangianDynamics` needs of the divergence damping (FV3's ``nord``
    blocks of ``d_sw``, e.g. ``fv3core.stencils.divergence_damping.DivergenceDamping``)."""

    def bind(self, u: Any, v: Any, ua: Any, va: Any, uc: Any, vc: Any, divg_d: Any, ke: Any,
             wk: Any) -> list[Launch]: ...  # fmt: skip


# --------------------------------------------------------------------------------------------
# 1-2. contravariant winds, Courant numbers and swept areas
# --------------------------------------------------------------------------------------------
@gtscript.function
def cross_sum(w):
    """The sum of the four values of the other wind around a face, in FV3's order: for ``ut``
    ``vc(i-1,j) + vc(i,j) + vc(i-1,j+1) + vc(i,j+1)``, for ``vt``
    ``uc(i,j-1) + uc(i+1,j-1) + uc(i,j) + uc(i+1,j)`` (not the mirror order)."""
    from __externals__ import AI, AJ, ALONG_X, BAI, BAJ, DI, DJ

    if __INLINED(ALONG_X):
        s = w[-DI, -DJ, 0] + w + w[BAI, BAJ, 0] + w[AI, AJ, 0]
    else:
        s = w[-DI, -DJ, 0] + w[BAI, BAJ, 0] + w + w[AI, AJ, 0]
    return s


@gtscript.function
def vertex_solve(pc, cp, co, o1, o2, o3, oc, p1, p2, p3):
    """One unknown of FV3's 2x2 system at a cube vertex: ``(pc - cp/4 (o1 + o2 + o3 + oc -
    co/4 (p1 + p2 + p3))) / (1 - cu cv / 16)`` (``cu``/``cv``: ``cosa_u``/``cosa_v``, in FV3's
    order)."""
    from __externals__ import ALONG_X

    if __INLINED(ALONG_X):
        damp = 1.0 / (1.0 - 0.0625 * cp * co)
    else:
        damp = 1.0 / (1.0 - 0.0625 * co * cp)
    return (pc - 0.25 * cp * (o1 + o2 + o3 + oc - 0.25 * co * (p1 + p2 + p3))) * damp


def contravariant_interior(
    pc: FloatField,
    oc: FloatField,
    cosa: FloatFieldIJ,
    rsin: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    p0: FloatField,
    dt: float,
):
    """``d_sw``'s contravariant wind ``p0`` (``ut`` along x, ``vt`` along y) from the covariant
    C-grid wind ``pc`` and the other one ``oc``: ``(pc - cosa/4 * cross_sum(oc)) * rsin``, and on
    the tile-edge faces (regions ``os``, ``oe``: FV3's ``i == 1``/``npx``) ``pc / sin_sg`` of
    the upwind cell (``sin_far`` of the cell behind the face, ``sin_near`` of the one ahead)."""
    from __externals__ import DI, DJ, oea, oeb, oec, oed, osa, osb, osc, osd

    with computation(PARALLEL), interval(...):
        p0 = (pc - 0.25 * cosa * cross_sum(oc)) * rsin
        with horizontal(region[osa:osb, osc:osd], region[oea:oeb, oec:oed]):
            if pc * dt > 0.0:
                p0 = pc / sin_far[-DI, -DJ]
            else:
                p0 = pc / sin_near


def contravariant_edges(
    pc: FloatField,
    oc: FloatField,
    cosa_p: FloatFieldIJ,
    cosa_o: FloatFieldIJ,
    p0: FloatField,
    o0: FloatField,
    rdxa: FloatFieldIJ,
    face_length: FloatFieldIJ,
    sin_near: FloatFieldIJ,
    sin_far: FloatFieldIJ,
    p: FloatField,
    cr: FloatField,
    af: FloatField,
    dt: float,
):
    """The contravariant wind ``p`` = ``p0`` (:func:`contravariant_interior`) with FV3's values
    on the two rows next to each tile edge across the direction (regions ``ls``, ``le``, from
    the other direction's ``o0``, without ``rsin``), and at the cube vertices the two unknowns of
    each 2x2 system on this direction's faces (regions ``va1``/``va2`` ... ``vd1``/``vd2``: the four
    reflections of FV3's south-west formulas); then FV3's ``fxadv``: the Courant number ``cr``
    and swept area ``af`` of each face."""
    from __externals__ import (
        AI,
        AJ,
        BAI,
        BAJ,
        BMI,
        BMJ,
        DI,
        DJ,
        lea,
        leb,
        lec,
        led,
        lsa,
        lsb,
        lsc,
        lsd,
        va1a,
        va1b,
        va1c,
        va1d,
        va2a,
        va2b,
        va2c,
        va2d,
        vb1a,
        vb1b,
        vb1c,
        vb1d,
        vb2a,
        vb2b,
        vb2c,
        vb2d,
        vc1a,
        vc1b,
        vc1c,
        vc1d,
        vc2a,
        vc2b,
        vc2c,
        vc2d,
        vd1a,
        vd1b,
        vd1c,
        vd1d,
        vd2a,
        vd2b,
        vd2c,
        vd2d,
    )  # fmt: skip

    with computation(PARALLEL), interval(...):
        p = p0
        with horizontal(region[lsa:lsb, lsc:lsd], region[lea:leb, lec:led]):
            p = pc - 0.25 * cosa_p * cross_sum(o0)
        # the start of the direction: FV3's ut(2,0) and ut(2,npy-1) ...
        with horizontal(region[va1a:va1b, va1c:va1d], region[va2a:va2b, va2c:va2d]):
            p = vertex_solve(pc, cosa_p, cosa_o[-DI, -DJ], o0[BAI, BAJ, 0], o0[AI, AJ, 0], o0,
                             oc[-DI, -DJ, 0], p0[-DI, -DJ, 0], p0[BMI, BMJ, 0], p0[-AI, -AJ, 0])  # fmt: skip
        # ... ut(2,1) and ut(2,npy)
        with horizontal(region[vb1a:vb1b, vb1c:vb1d], region[vb2a:vb2b, vb2c:vb2d]):
            p = vertex_solve(pc, cosa_p, cosa_o[BAI, BAJ], o0[-DI, -DJ, 0], o0, o0[AI, AJ, 0],
                             oc[BAI, BAJ, 0], p0[-DI, -DJ, 0], p0[BAI, BAJ, 0], p0[AI, AJ, 0])  # fmt: skip
        # the end of the direction: ut(npx-1,0) and ut(npx-1,npy-1) ...
        with horizontal(region[vc1a:vc1b, vc1c:vc1d], region[vc2a:vc2b, vc2c:vc2d]):
            p = vertex_solve(pc, cosa_p, cosa_o, o0[AI, AJ, 0], o0[BAI, BAJ, 0], o0[-DI, -DJ, 0],
                             oc, p0[DI, DJ, 0], p0[-BAI, -BAJ, 0], p0[-AI, -AJ, 0])  # fmt: skip
        # ... ut(npx-1,1) and ut(npx-1,npy)
        with horizontal(region[vd1a:vd1b, vd1c:vd1d], region[vd2a:vd2b, vd2c:vd2d]):
            p = vertex_solve(pc, cosa_p, cosa_o[AI, AJ], o0, o0[-DI, -DJ, 0], o0[BAI, BAJ, 0],
                             oc[AI, AJ, 0], p0[DI, DJ, 0], p0[-BMI, -BMJ, 0], p0[AI, AJ, 0])  # fmt: skip
        af = dt * p
        if af > 0.0:
            cr = af * rdxa[-DI, -DJ]
            af = face_length * af * sin_far[-DI, -DJ]
        else:
            cr = af * rdxa
            af = face_length * af * sin_near


# --------------------------------------------------------------------------------------------
# 4. kinetic energy
# --------------------------------------------------------------------------------------------
def b_grid_wind(
    pt: FloatField,
    pc: FloatField,
    oc: FloatField,
    cosa: FloatFieldIJ,
    rsina: FloatFieldIJ,
    cr: FloatField,
    dt4: float,
    dt5: float,
):
    """``d_sw``'s B-grid wind times ``dt`` at the corners, FV3's ``vb`` (along y) or ``ub``
    (along x): ``dt/2 (pc(-across) + pc - (oc(-along) + oc) cosa) rsina`` from the covariant C-grid
    winds, on the tile-edge lines across the direction (regions ``xs``, ``xe``) FV3's 4-point
    extrapolation of the contravariant ``pt`` along them, and on the lines along it (``ys``,
    ``ye``, taking precedence at the vertices) the mean of the two ``pt`` beside the corner."""
    from __externals__ import (
        AI,
        AI2,
        AJ,
        AJ2,
        DI,
        DJ,
        xea,
        xeb,
        xec,
        xed,
        xsa,
        xsb,
        xsc,
        xsd,
        yea,
        yeb,
        yec,
        yed,
        ysa,
        ysb,
        ysc,
        ysd,
    )

    with computation(PARALLEL), interval(...):
        cr = dt5 * (pc[-AI, -AJ, 0] + pc - (oc[-DI, -DJ, 0] + oc) * cosa) * rsina
        with horizontal(region[xsa:xsb, xsc:xsd], region[xea:xeb, xec:xed]):
            cr = dt4 * (-pt[-AI2, -AJ2, 0] + 3.0 * (pt[-AI, -AJ, 0] + pt) - pt[AI, AJ, 0])
        with horizontal(region[ysa:ysb, ysc:ysd], region[yea:yeb, yec:yed]):
            cr = dt5 * (pt[-AI, -AJ, 0] + pt)


def kinetic_energy(
    ub: FloatField,
    vb: FloatField,
    u_corner: FloatField,
    v_corner: FloatField,
    ut: FloatField,
    vt: FloatField,
    u: FloatField,
    v: FloatField,
    ke: FloatField,
    dt6: float,
):
    """``d_sw``'s kinetic energy (times ``dt``) at the corners: ``vb`` times ``ytp_v``'s upwind
    ``v``, then the mean with ``ub`` times ``xtp_u``'s upwind ``u`` (FV3's statements and order),
    and FV3's values at the cube vertices (regions ``ksw``, ``kse``, ``kne``, ``knw``) from the
    contravariant ``ut``, ``vt`` and the D-grid winds around the vertex."""
    from __externals__ import (
        knea,
        kneb,
        knec,
        kned,
        knwa,
        knwb,
        knwc,
        knwd,
        ksea,
        kseb,
        ksec,
        ksed,
        kswa,
        kswb,
        kswc,
        kswd,
    )

    with computation(PARALLEL), interval(...):
        ke = vb * v_corner
        ke = 0.5 * (ke + ub * u_corner)
        with horizontal(region[kswa:kswb, kswc:kswd]):
            ke = dt6 * ((ut + ut[0, -1, 0]) * u + (vt + vt[-1, 0, 0]) * v
                        + (ut + vt) * u[-1, 0, 0])  # fmt: skip
        with horizontal(region[ksea:kseb, ksec:ksed]):
            ke = dt6 * ((ut + ut[0, -1, 0]) * u[-1, 0, 0] + (vt + vt[-1, 0, 0]) * v
                        + (ut - vt[-1, 0, 0]) * u)  # fmt: skip
        with horizontal(region[knea:kneb, knec:kned]):
            ke = dt6 * ((ut + ut[0, -1, 0]) * u[-1, 0, 0] + (vt + vt[-1, 0, 0]) * v[0, -1, 0]
                        + (ut[0, -1, 0] + vt[-1, 0, 0]) * u)  # fmt: skip
        with horizontal(region[knwa:knwb, knwc:knwd]):
            ke = dt6 * ((ut + ut[0, -1, 0]) * u + (vt + vt[-1, 0, 0]) * v[0, -1, 0]
                        + (ut[0, -1, 0] - vt) * u[-1, 0, 0])


# --------------------------------------------------------------------------------------------
# 5, 7. vorticity and the wind update
# --------------------------------------------------------------------------------------------
def relative_vorticity(
    u: FloatField,
    v: FloatField,
    dx: FloatFieldIJ,
    dy: FloatFieldIJ,
    rarea: FloatFieldIJ,
    f0: FloatFieldIJ,
    wk: FloatField,
    vort: FloatField,
):
    """``d_sw``'s cell vorticity ``wk`` (the D-grid circulation ``u dx``, ``v dy`` around the
    cell over its area) and the absolute vorticity ``vort = wk + f0`` it transports."""
    with computation(PARALLEL), interval(...):
        wk = rarea * (u * dx - u[0, 1, 0] * dx[0, 1] - v * dy + v[1, 0, 0] * dy[1, 0])
        vort = wk + f0


@gtscript.function
def updated_wind(wind, length, ke, vort_flux):
    """``wind * length`` plus the kinetic-energy difference along the face plus (``SIGN`` +1,
    ``u``) or minus (-1, ``v``) the absolute-vorticity flux through it."""
    from __externals__ import AI, AJ, SIGN

    return wind * length + ke - ke[AI, AJ, 0] + SIGN * vort_flux


def dgrid_wind_update(wind: FloatField, length: FloatFieldIJ, ke: FloatField,
                      vort_flux: FloatField):  # fmt: skip
    """``d_sw``'s last step on the faces crossed along the direction, :func:`updated_wind`; the
    wind leaves multiplied by its face length."""
    with computation(PARALLEL), interval(...):
        wind = updated_wind(wind, length, ke, vort_flux)


def damped_dgrid_wind_update(wind: FloatField, length: FloatFieldIJ, ke: FloatField,
                             vort_flux: FloatField, damp_flux: FloatField):  # fmt: skip
    """:func:`dgrid_wind_update`, then FV3's vorticity damping of the wind: plus (``u``) or minus
    (``v``) ``del6_vt_flux``'s diffusive flux of ``wk`` through the face (FV3's ``vt``, ``ut``)."""
    from __externals__ import SIGN

    with computation(PARALLEL), interval(...):
        wind = updated_wind(wind, length, ke, vort_flux)
        wind = wind + SIGN * damp_flux


# --------------------------------------------------------------------------------------------
# the routine
# --------------------------------------------------------------------------------------------
def _externals(d: Direction) -> dict[str, Any]:
    ext = d.face_offsets()
    return {**ext, "AI2": 2 * ext["AI"], "AJ2": 2 * ext["AJ"], "ALONG_X": d.axis == 0}


class DGridShallowWaterLagrangianDynamics:
    """Equivalent of FV3 subroutine ``d_sw`` (``SW_DYNAMICS``, hydrostatic, ``test_case > 1``,
    ``d_con = 0``) for one rank: the D-grid step of the C-D grid shallow-water scheme (Lin & Rood
    1997, Lin 2004).

    Namelist keys (``fv_core_nml``): ``hord_dp`` (PPM variant of the ``delp`` fluxes,
    :class:`~fv3core.stencils.fv_tp_2d.FiniteVolumeTransport`: 5, 6, 8 or 10), ``hord_mt`` (of
    the kinetic-energy winds, ``xtp_u``/``ytp_v``: 5, 6, 8 or 10), ``hord_vt`` (of the vorticity
    fluxes: 5, 6, 8 or 10); ``nord``, ``dddmp``, ``d2_bg``, ``d4_bg`` are the ``damping`` object's
    (:class:`DivergenceDampingStep`; None: no damping, which equals FV3's ``nord = 0`` with
    ``dddmp = d2_bg = 0``); ``nord_v``, ``damp_v``: FV3's vorticity damping (``dyn_core`` passes
    ``min(2, nord)`` and ``vtdm4`` when ``do_vort_damp``, else 0), the ``deln_flux`` of ``delp``
    when ``damp_v > 1e-4`` and the ``del6_vt_flux`` of the vorticity when ``damp_v > 1e-5``
    (:class:`~fv3core.stencils.deln_flux.DelnFlux`; below both: not a launch more).
    Each hord is FV3's bit for bit (the transliteration's ``fv_tp_2d`` and ``xtp_u``/``ytp_v``:
    tests/fv3core/test_fv3_tp_core.py, test_fv3_xtp.py, test_fv3_d_sw.py).

    ``grid``: the rank's :class:`fv3core.grid.storages.GridStorages`; ``dt``: the acoustic
    time step (FV3's ``dt`` of ``d_sw``, ``bdt / n_split``).  Work arrays and the outputs
    :attr:`crx`, :attr:`cry`, :attr:`xfx`, :attr:`yfx` (FV3's ``crx_adv`` ... for tracer
    transport) and :attr:`fx`, :attr:`fy` (the ``delp`` fluxes, FV3's ``xflux``/``yflux``
    contribution) are allocated once here."""

    def __init__(
        self,
        factory: GridStencilFactory,
        grid: Any,
        spec: SubdomainSpec,
        dt: float,
        hord_dp: int,
        hord_mt: int,
        hord_vt: int,
        damping: DivergenceDampingStep | None,
        *,
        nord_v: int = 0,
        damp_v: float = 0.0,
        sw_dynamics: bool = True,
        hord_tm: int | None = None,
        vertical_wind: DGridVerticalWind | None = None,
        courant: tuple[Any, Any, Any, Any] | None = None,
    ) -> None:
        if spec.n_halo != 3:
            raise FV3ConfigError(f"n_halo={spec.n_halo}: FV3's d_sw needs n_halo = 3")
        if not sw_dynamics and damp_v > DELN_FLUX_THRESHOLD:
            raise FV3ConfigError(
                f"d_sw: do_vort_damp with vtdm4={damp_v} in the 3-D core needs deln_flux's mass-"
                "weighted form for pt, which fv3core does not have: set do_vort_damp = .false."
            )
        if not dt > 0.0:
            raise FV3ConfigError(f"d_sw dt={dt}: the acoustic time step must be positive")
        self._factory, self._grid, self._spec = factory, grid, spec
        self.dt, self.damping = float(dt), damping
        indexing = factory.indexing

        def alloc(dims: Dims) -> Any:
            return zeros(indexing.domain_of(dims), factory.backend)

        g = grid
        #: stage-1 contravariant winds and the final ``ut`` (x-faces), ``vt`` (y-faces)
        self.contra0 = {d: alloc(face_dims(d)) for d in DIRECTIONS}
        self.contra = {d: alloc(face_dims(d)) for d in DIRECTIONS}
        #: FV3's crx_adv/cry_adv (Courant numbers) and xfx_adv/yfx_adv (swept areas, m^2):
        #: ``courant``'s storages where given (the non-hydrostatic core's ``update_dz_d`` reads
        #: them on all layers)
        self.crx, self.cry, self.xfx, self.yfx = courant or (
            alloc(face_dims(X)), alloc(face_dims(Y)), alloc(face_dims(X)), alloc(face_dims(Y)))
        #: the fv_tp_2d fluxes of delp (delp times swept area) through x- and y-faces
        self.fx, self.fy = alloc(face_dims(X)), alloc(face_dims(Y))
        #: FV3's B-grid winds ``ub``, ``vb`` (times dt) and the upwind corner winds of
        #: ``xtp_u`` (FV3 calls it ``vb``), ``ytp_v`` (``ub``)
        self.ub, self.vb = alloc(CORNER_DIMS), alloc(CORNER_DIMS)
        self.u_corner, self.v_corner = alloc(CORNER_DIMS), alloc(CORNER_DIMS)
        #: kinetic energy at the corners (times dt, with the damping's term), FV3's ``ke``
        self.ke = alloc(CORNER_DIMS)
        #: relative vorticity (FV3's ``wk``) and absolute vorticity (``vort``) at cell centres
        self.wk, self.vort = alloc(CELL_DIMS), alloc(CELL_DIMS)
        #: fv_tp_2d fluxes of the absolute vorticity
        self.vort_fx, self.vort_fy = alloc(face_dims(X)), alloc(face_dims(Y))

        self._interior = {d: self._stencil(contravariant_interior, face_dims(d),
                                           (1, 3) if d.axis == 0 else (3, 1), d,
                                           self._interior_regions)
                          for d in DIRECTIONS}  # fmt: skip
        self._edges = {d: self._stencil(contravariant_edges, face_dims(d),
                                        d.halo_across(3), d,
                                        self._edge_regions)
                       for d in DIRECTIONS}  # fmt: skip
        self._b_wind = {d: self._stencil(b_grid_wind, CORNER_DIMS, 0, d, self._b_wind_regions)
                        for d in DIRECTIONS}  # fmt: skip
        #: FV3's xtp_u (x) and ytp_v (y)
        self.corner_flux = {d: WindCornerFlux(factory, grid, spec, d, hord_mt)
                            for d in DIRECTIONS}  # fmt: skip
        self._ke = self._stencil(kinetic_energy, CORNER_DIMS, 0, X, self._vertex_regions)
        self._vorticity = factory.from_dims(relative_vorticity, CELL_DIMS, 3,
                                            name="fv3_d_sw_vorticity")  # fmt: skip
        self._delp_update = factory.from_dims(apply_flux_divergence, CELL_DIMS,
                                              name="fv3_d_sw_delp")  # fmt: skip
        #: fv_tp_2d's deln_flux of delp (FV3's nord=nord_v, damp_c=damp_v), None when off
        self.delp_damping = (
            DelnFlux(factory, g, spec, nord_v,
                        damping_coefficient(damp_v, g.da_min, nord_v), add=True)
            if damp_v > DELN_FLUX_THRESHOLD else None)  # fmt: skip
        #: del6_vt_flux of wk, None when off, and its fluxes (FV3's ut, vt at the end of d_sw)
        self.vorticity_damping = (
            DelnFlux(factory, g, spec, nord_v,
                        damping_coefficient(damp_v, g.da_min_c, nord_v), add=False)
            if damp_v > DEL6_VT_FLUX_THRESHOLD else None)  # fmt: skip
        damped = self.vorticity_damping is not None
        if damped:
            self.damp_fx, self.damp_fy = alloc(face_dims(X)), alloc(face_dims(Y))
        self._wind_update = {
            d: factory.from_dims(damped_dgrid_wind_update if damped else dgrid_wind_update,
                                 face_dims(d),
                                 externals={**d.face_offsets(), "SIGN": -1.0 if d.axis == 0 else 1.0},
                                 name=f"fv3_d_sw_{'damped_' if damped else ''}wind_{d.name}")
            for d in DIRECTIONS
        }  # fmt: skip
        self._transport_dp = FiniteVolumeTransport(factory, g, spec, hord_dp)
        self._transport_vt = (self._transport_dp if hord_vt == hord_dp
                              else FiniteVolumeTransport(factory, g, spec, hord_vt))  # fmt: skip
        #: the 3-D core (FV3 without SW_DYNAMICS): pt's fluxes (pt times the delp fluxes, FV3's
        #: gx, gy), its transport with hord_tm and the mass-weighted update of pt and delp
        self.sw_dynamics = bool(sw_dynamics)
        #: the non-hydrostatic w terms (:class:`~fv3core.stencils.d_sw_vertical.DGridVerticalWind`)
        self.vertical_wind = vertical_wind
        if vertical_wind is not None and self.sw_dynamics:
            raise FV3ConfigError("d_sw: the shallow-water core (SW_DYNAMICS) has no w")
        if not self.sw_dynamics:
            hord_tm = hord_dp if hord_tm is None else hord_tm
            self.pt_fx, self.pt_fy = alloc(face_dims(X)), alloc(face_dims(Y))
            self._transport_tm = (
                self._transport_dp if hord_tm == hord_dp
                else self._transport_vt if hord_tm == hord_vt
                else FiniteVolumeTransport(factory, g, spec, hord_tm))  # fmt: skip
            self._pt_update = factory.from_dims(apply_mass_weighted_flux_divergence, CELL_DIMS,
                                                name="fv3_d_sw_pt_delp")  # fmt: skip
            # FV3's ranges: cx on is:ie+1, jsd:jed; cy on isd:ied, js:je+1; mfx, mfy compute
            self._accumulate = {
                "cx": factory.from_dims(accumulate, face_dims(X), (0, 3), name="fv3_d_sw_cx"),
                "cy": factory.from_dims(accumulate, face_dims(Y), (3, 0), name="fv3_d_sw_cy"),
                "mfx": factory.from_dims(accumulate, face_dims(X), name="fv3_d_sw_mfx"),
                "mfy": factory.from_dims(accumulate, face_dims(Y), name="fv3_d_sw_mfy"),
            }  # fmt: skip

    # -- stencil builds ------------------------------------------------------------------------
    def _stencil(self, definition: Callable[..., None], dims: Dims, halo: int | tuple[int, int],
                 d: Direction, regions: Callable[[DirectionalEdges], dict[str, Any]]) -> FrozenStencil:  # fmt: skip
        origin, domain = self._factory.indexing.bounds(dims, halo)
        edges = DirectionalEdges.of(self._spec, origin, domain, d)
        return self._factory.from_dims(definition, dims, halo,
                                       externals={**_externals(d), **regions(edges)},
                                       name=f"fv3_d_sw_{definition.__name__}_{d.name}")  # fmt: skip

    @staticmethod
    def _interior_regions(e: DirectionalEdges) -> dict[str, Any]:
        return {**e.region("os", along=at(e.along_start)), **e.region("oe", along=at(e.along_end, 1))}

    @staticmethod
    def _edge_regions(e: DirectionalEdges) -> dict[str, Any]:
        along = between(None if e.along_start is None else e.along_start + 2, e.along_end)
        lines = {**e.region("ls", along=along, across=at(e.across_start, -1, 2)),
                 **e.region("le", along=along, across=at(e.across_end, 0, 2))}  # fmt: skip
        start = None if e.along_start is None else e.along_start + 1
        end = e.along_end
        # vertex points (along, across) of the four reflections of FV3's south-west formulas
        points = {
            "va1": (start, at(e.across_start, -1)), "va2": (start, at(e.across_end)),
            "vb1": (start, at(e.across_start)), "vb2": (start, at(e.across_end, 1)),
            "vc1": (end, at(e.across_start, -1)), "vc2": (end, at(e.across_end)),
            "vd1": (end, at(e.across_start)), "vd2": (end, at(e.across_end, 1)),
        }  # fmt: skip
        for name, (along_at, across) in points.items():
            lines.update(e.region(name, along=at(along_at), across=across))
        return lines

    @staticmethod
    def _b_wind_regions(e: DirectionalEdges) -> dict[str, Any]:
        return {**e.region("xs", across=at(e.across_start)),
                **e.region("xe", across=at(e.across_end, 1)),
                **e.region("ys", along=at(e.along_start)),
                **e.region("ye", along=at(e.along_end, 1))}  # fmt: skip

    @staticmethod
    def _vertex_regions(e: DirectionalEdges) -> dict[str, Any]:
        # along x: FV3's corners (1, 1), (npx, 1), (npx, npy), (1, npy)
        west, east = at(e.along_start), at(e.along_end, 1)
        south, north = at(e.across_start), at(e.across_end, 1)
        return {**e.region("ksw", along=west, across=south), **e.region("kse", along=east, across=south),
                **e.region("kne", along=east, across=north), **e.region("knw", along=west, across=north)}  # fmt: skip

    # -- binding -------------------------------------------------------------------------------
    def bind(self, delp: Any, u: Any, v: Any, uc: Any, vc: Any, ua: Any, va: Any,
             divg_d: Any, pt: Any = None,
             accumulators: tuple[Any, Any, Any, Any] | None = None,
             vertical: tuple[Any, Any, Any] | None = None) -> list[Launch]:  # fmt: skip
        """FV3's ``d_sw`` of these storages as launches, in order (fields are held, not copied).

        In/out, FV3's shapes with the rank's 3-point halo (``nx``, ``ny`` compute cells, ``nz``
        levels): ``delp`` (cells, (nx+6, ny+6, nz); updated on the compute cells, its cube-corner
        halo cells overwritten by ``copy_corners``), ``u`` (y-faces, (nx+6, ny+7, nz); leaves as
        ``u * dx`` updated on ``is:ie, js:je+1``), ``v`` (x-faces, (nx+7, ny+6, nz); ``v * dy`` on
        ``is:ie+1, js:je``).  In: ``uc`` (x-faces) and ``vc`` (y-faces), the C-grid winds after
        ``c_sw`` and the C-grid halo update, ``ua``, ``va`` (cells), ``divg_d`` (corners,
        (nx+7, ny+7, nz)); ``uc``, ``vc``, ``divg_d`` are the damping's work arrays, as in FV3.
        Out (attributes): ``crx``, ``xfx`` on ``is:ie+1, jsd:jed``, ``cry``, ``yfx`` on
        ``isd:ied, js:je+1``, ``fx``, ``fy`` on the compute faces, ``ke`` and ``wk``.

        The 3-D core (``sw_dynamics=False``): ``pt`` (cells, in/out: virtual potential
        temperature, its cube-corner halo cells overwritten) is transported with ``hord_tm`` and
        the ``delp`` fluxes and updated with ``delp`` (``pt = (pt delp + div) / delp_new``);
        ``accumulators`` = FV3's ``(mfx, mfy, cx, cy)`` (x-, y-, x-, y-faces) get this step's
        ``fx``, ``fy`` (compute faces), ``crx`` (``is:ie+1, jsd:jed``) and ``cry`` (``isd:ied,
        js:je+1``) added.  Non-hydrostatic (``vertical_wind``): ``vertical`` = ``(w, heat_source,
        diss_est)`` (cells): ``w`` in/out, FV3's heating of the damping of ``w`` out."""
        if (self.vertical_wind is None) != (vertical is None):
            raise FV3ConfigError("d_sw: pass vertical=(w, heat_source, diss_est) exactly when it has vertical_wind")
        if not self.sw_dynamics and pt is None:
            raise FV3ConfigError("d_sw: the 3-D core transports pt; pass its storage")
        g, X_, Y_ = self._grid, X, Y
        c0, c = self.contra0, self.contra
        sin_near = {X_: g.sin_sg1, Y_: g.sin_sg2}
        sin_far = {X_: g.sin_sg3, Y_: g.sin_sg4}
        cosa = {X_: g.cosa_u, Y_: g.cosa_v}
        rsin = {X_: g.rsin_u, Y_: g.rsin_v}
        covariant = {X_: uc, Y_: vc}
        wind = {X_: u, Y_: v}
        rcell = {X_: g.rdxa, Y_: g.rdya}
        face_length = {X_: g.dy, Y_: g.dx}
        courant = {X_: self.crx, Y_: self.cry}
        area_flux = {X_: self.xfx, Y_: self.yfx}
        launches: list[Launch] = []
        for d in DIRECTIONS:
            o = d.across
            launches.append(self._interior[d].bind(
                pc=covariant[d], oc=covariant[o], cosa=cosa[d], rsin=rsin[d],
                sin_near=sin_near[d], sin_far=sin_far[d], p0=c0[d], dt=self.dt))  # fmt: skip
        for d in DIRECTIONS:
            o = d.across
            launches.append(self._edges[d].bind(
                pc=covariant[d], oc=covariant[o], cosa_p=cosa[d], cosa_o=cosa[o], p0=c0[d],
                o0=c0[o], rdxa=rcell[d], face_length=face_length[d], sin_near=sin_near[d],
                sin_far=sin_far[d], p=c[d], cr=courant[d], af=area_flux[d], dt=self.dt))  # fmt: skip
        fluxes = (self.crx, self.cry, self.xfx, self.yfx)
        launches += self._transport_dp.bind(delp, *fluxes, self.fx, self.fy).steps
        if self.delp_damping is not None:
            launches += self.delp_damping.bind(delp, self.fx, self.fy)
        if self.sw_dynamics:
            launches.append(self._delp_update.bind(q=delp, fx=self.fx, fy=self.fy, rarea=g.rarea))
        else:
            if accumulators is not None:
                increments = dict(zip(("mfx", "mfy", "cx", "cy"), (self.fx, self.fy, self.crx, self.cry)))
                launches += [self._accumulate[name].bind(total=total, increment=increments[name])
                             for name, total in zip(("mfx", "mfy", "cx", "cy"), accumulators)]  # fmt: skip
            if vertical is not None:
                w, heat_source, diss_est = vertical
                launches += self.vertical_wind.bind_transport(w, delp, fluxes, (self.fx, self.fy), heat_source,
                                                              diss_est)  # fmt: skip
            launches += self._transport_tm.bind(pt, *fluxes, self.pt_fx, self.pt_fy,
                                                mass_fluxes=(self.fx, self.fy)).steps  # fmt: skip
            launches.append(self._pt_update.bind(q=pt, delp=delp, qx=self.pt_fx, qy=self.pt_fy,
                                                 fx=self.fx, fy=self.fy, rarea=g.rarea))  # fmt: skip
            if vertical is not None:
                launches += self.vertical_wind.bind_finish(vertical[0], delp)
        dt = self.dt
        b_wind = {X_: self.ub, Y_: self.vb}
        corner_wind = {X_: self.u_corner, Y_: self.v_corner}
        for d in (Y, X):  # FV3: vb and ytp_v, then ub and xtp_u
            o = d.across
            launches.append(self._b_wind[d].bind(
                pt=c[d], pc=covariant[d], oc=covariant[o], cosa=g.cosa, rsina=g.rsina,
                cr=b_wind[d], dt4=0.25 * dt, dt5=0.5 * dt))  # fmt: skip
            launches.append(self.corner_flux[d].bind(b_wind[d], wind[d], corner_wind[d]))
        launches.append(self._ke.bind(ub=self.ub, vb=self.vb, u_corner=self.u_corner,
                                      v_corner=self.v_corner, ut=c[X], vt=c[Y], u=u, v=v,
                                      ke=self.ke, dt6=dt / 6.0))  # fmt: skip
        launches.append(self._vorticity.bind(u=u, v=v, dx=g.dx, dy=g.dy, rarea=g.rarea, f0=g.f0,
                                             wk=self.wk, vort=self.vort))  # fmt: skip
        if self.damping is not None:
            launches += self.damping.bind(u, v, ua, va, uc, vc, divg_d, self.ke, self.wk)
        launches += self._transport_vt.bind(self.vort, *fluxes, self.vort_fx, self.vort_fy).steps
        vort_flux = {X_: self.vort_fx, Y_: self.vort_fy}
        damp_flux = {}
        if self.vorticity_damping is not None:
            launches += self.vorticity_damping.bind(self.wk, self.damp_fx, self.damp_fy)
            damp_flux = {X_: {"damp_flux": self.damp_fx}, Y_: {"damp_flux": self.damp_fy}}
        for d in DIRECTIONS:  # the faces crossed along d carry the other wind
            o = d.across
            launches.append(self._wind_update[d].bind(wind=wind[o], length=face_length[d],
                                                      ke=self.ke, vort_flux=vort_flux[d],
                                                      **damp_flux.get(d, {})))  # fmt: skip
        return launches
