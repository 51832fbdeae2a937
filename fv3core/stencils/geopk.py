"""FV3's ``geopk`` (``dyn_core.F90``, hydrostatic, no ``q_con``) in GTScript: :class:`Geopotential`,
``pk`` (pressure to the kappa) and the geopotential ``gz`` on the interfaces, and on the D grid
FV3's ``pe``, ``peln`` and ``pkz``.

FV3 built with ``SW_DYNAMICS`` runs it on one layer with ``akap = 1``, ``ptop = 0`` and
``pt = 1``: ``pk = exp(akap log(ptop + delp))`` at the layer bottom (``pk`` at the top is
``ptk = ptop ** akap = 0``), the geopotential ``gz`` at the bottom is the surface ``phis``, at the
top ``gz_bottom + pt (pk_bottom - pk_top)``.  The stencils are written for ``nz`` layers, as
FV3's loops.

``exp`` and ``log``: the NumPy backend evaluates NumPy's (SIMD) ``exp``/``log``, as the
transliteration does, so it reproduces it bit for bit; the C++ backends call the C library's,
which differ from NumPy's in the last bit for some arguments (measured in
``tests/fv3core/test_fv3_pressure_gradient.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, PARALLEL, computation, exp, interval, log

from stencils.dims import X_DIM, Y_DIM, Z_DIM, Z_INTERFACE_DIM
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]

#: FV3's shallow-water values (SW_DYNAMICS): kappa, model-top pressure
AKAP_SW, PTOP_SW = 1.0, 0.0


def geopotential(
    delp: FloatField,
    pt: FloatField,
    phis: FloatFieldIJ,
    pk: FloatField,
    gz: FloatField,
    akap: float,
    ptop: float,
    ptk: float,
    cp: float,
):
    """FV3 ``geopk`` (hydrostatic, no ``q_con``): pressure to the kappa ``pk`` on the
    interfaces, top down from ``ptop`` (``p1d``: the interface pressure, ``log``/``exp`` as FV3),
    then the geopotential ``gz`` bottom up from the surface ``phis``, ``cp`` times ``pt`` times
    the layer's ``pk`` difference (``SW_DYNAMICS``: ``cp = 1``, FV3's formula without
    ``cp_air``)."""
    with computation(FORWARD):
        with interval(0, 1):
            p1d = ptop
            pk = ptk
        with interval(1, None):
            p1d = p1d[0, 0, -1] + delp[0, 0, -1]
            pk = exp(akap * log(p1d))
    with computation(BACKWARD):
        with interval(-1, None):
            gz = phis
        with interval(0, -1):
            gz = gz[0, 0, 1] + cp * pt * (pk[0, 0, 1] - pk)


def interface_pressure(delp: FloatField, pe: FloatField, peln: FloatField, ptop: float):
    """FV3 ``geopk``'s interface pressure ``pe`` (``ptop`` plus the layers above, the sums of
    ``p1d``) and its logarithm ``peln`` (``peln1 = log(ptop)`` at the top)."""
    with computation(FORWARD):
        with interval(0, 1):
            pe = ptop
            peln = log(ptop)
        with interval(1, None):
            pe = pe[0, 0, -1] + delp[0, 0, -1]
            peln = log(pe)


def layer_mean_pk(pk: FloatField, peln: FloatField, pkz: FloatField, akap: float):
    """FV3 ``geopk``'s hydrostatic ``pkz``, the layer mean of p to the kappa:
    ``(pk(k+1) - pk(k)) / (akap (peln(k+1) - peln(k)))``."""
    with computation(PARALLEL), interval(...):
        pkz = (pk[0, 0, 1] - pk) / (akap * (peln[0, 0, 1] - peln))


class Geopotential:
    """Equivalent of FV3 subroutine ``geopk`` (``dyn_core.F90``, hydrostatic, no ``q_con``):
    ``pk`` and ``gz`` on the interfaces from ``delp`` (``SW_DYNAMICS``: FV3's ``delp`` = g times
    the depth), ``pt`` (the 3-D core: virtual potential temperature, K / Pa**akap; 1 in the
    shallow-water core) and ``phis``, over FV3's ranges ``is-1..ie+1, js-1..je+1``
    (``cgrid=True``, FV3's ``CG``: after ``c_sw``, on ``delpc``, ``ptc``) or ``is-2..ie+2,
    js-2..je+2`` (D grid: after ``d_sw``).  ``akap``, ``ptop``, ``cp``: FV3's kappa, model-top
    pressure (Pa) and ``cp_air`` (J/kg/K) (shallow water: 1, 0 and 1, FV3's ``SW_DYNAMICS``
    formula).  One launch; on the D grid with ``pressure`` (:meth:`bind`) FV3's ``pe``,
    ``peln`` and ``pkz`` as well: three."""

    def __init__(self, factory: GridStencilFactory, *, cgrid: bool, akap: float = AKAP_SW,
                 ptop: float = PTOP_SW, cp: float = 1.0) -> None:  # fmt: skip
        self.akap, self.ptop, self.cp, self.cgrid = float(akap), float(ptop), float(cp), cgrid
        self.ptk = self.ptop**self.akap
        halo = 1 if cgrid else 2
        interfaces = (X_DIM, Y_DIM, Z_INTERFACE_DIM)
        self._stencil = factory.from_dims(geopotential, interfaces, halo)
        self._pe = factory.from_dims(interface_pressure, interfaces, 1)
        self._pkz = factory.from_dims(layer_mean_pk, (X_DIM, Y_DIM, Z_DIM), 0)

    def bind(self, delp: Any, pt: Any, phis: Any, pk: Any, gz: Any,
             pressure: tuple[Any, Any, Any] | None = None) -> list[Launch]:  # fmt: skip
        """``delp``, ``pt``: cells, ``nz`` layers; ``phis``: cells, 2-D (FV3's ``phis``);
        ``pk``, ``gz``: cells, ``nz + 1`` interfaces, written over the range.  ``pressure``:
        ``(pe, peln, pkz)`` (interfaces, interfaces, cells), written after the D-grid call only:
        ``pe`` and ``peln`` on ``is-1..ie+1, js-1..je+1`` (FV3's ``peln`` covers the compute
        cells; the ring around them is ``log(pe)`` as well), ``pkz`` on the compute cells."""
        launches = [self._stencil.bind(delp=delp, pt=pt, phis=phis, pk=pk, gz=gz,
                                       akap=self.akap, ptop=self.ptop, ptk=self.ptk,
                                       cp=self.cp)]  # fmt: skip
        if pressure is None:
            return launches
        pe, peln, pkz = pressure
        # FV3 writes pe and peln in both calls and keeps the D grid's: the C-grid call's are
        # read by nothing in between, so only the D-grid call writes them here
        if self.cgrid:
            return launches
        return [*launches, self._pe.bind(delp=delp, pe=pe, peln=peln, ptop=self.ptop),
                self._pkz.bind(pk=pk, peln=peln, pkz=pkz, akap=self.akap)]  # fmt: skip
