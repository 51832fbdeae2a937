"""FV3's ``pe_halo``, ``pk3_halo`` and ``pln_halo`` (``dyn_core.F90``) in GTScript:
:class:`HaloPressure`, the pressures of the non-hydrostatic core on a ring of halo cells,
integrated from ``ptop`` down the halo's own ``delp`` (after ``Riem_Solver3``, which writes the
compute columns only, so that ``nh_p_grad``'s ``a2b_ord4`` reads them).

* ``pe_halo``: the interface pressure ``pe`` on the ring one cell wide (``is-1``, ``ie+1`` on
  ``js..je``; ``js-1``, ``je+1`` on ``is-1..ie+1``), the top included;
* ``pk3_halo``: ``pk3 = p ** akap`` on the ring two cells wide (corners included), below the top;
* ``pln_halo`` (``use_logp``): ``pk3 = log(p)`` there.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import (
    __INLINED,
    FORWARD,
    I,
    J,
    computation,
    exp,
    horizontal,
    interval,
    log,
    region,
)

from fv3core.errors import FV3ConfigError
from stencils.dims import X_DIM, Y_DIM, Z_INTERFACE_DIM
from stencils.factory import GridStencilFactory
from stencils.launch import Launch

FloatField = gtscript.Field[np.float64]

#: what a routine writes: the pressure, its power ``akap``, its logarithm
PE, PK, LOG = 0, 1, 2
#: the routines and the ring each writes: FV3's name -> (ring width, what is written)
ROUTINES = {"pe_halo": (1, PE), "pk3_halo": (2, PK), "pln_halo": (2, LOG)}


def halo_pressure(delp: FloatField, q: FloatField, akap: float, ptop: float):
    """The pressure ``pe`` integrated down each column of the domain (the compute columns and a
    ring of ``RING`` cells), written as ``FORM`` (the pressure, ``p ** akap`` or ``log(p)``) on the
    ring only: FV3's ``pe_halo`` (``RING`` 1), ``pk3_halo``/``pln_halo`` (``RING`` 2). ``FORM``:
    :data:`PE`, :data:`PK` or :data:`LOG`."""
    from __externals__ import FORM, RING

    with computation(FORWARD):
        with interval(0, 1):
            pe = ptop
            if __INLINED(FORM == 0):
                with horizontal(region[I[0]:I[0] + RING, J[0] + RING:J[-1] - RING + 1],
                                region[I[-1] - RING + 1:I[-1] + 1, J[0] + RING:J[-1] - RING + 1],
                                region[:, J[0]:J[0] + RING], region[:, J[-1] - RING + 1:J[-1] + 1]):  # fmt: skip
                    q = pe
        with interval(1, None):
            pe = pe[0, 0, -1] + delp[0, 0, -1]
            with horizontal(region[I[0]:I[0] + RING, J[0] + RING:J[-1] - RING + 1],
                            region[I[-1] - RING + 1:I[-1] + 1, J[0] + RING:J[-1] - RING + 1],
                            region[:, J[0]:J[0] + RING], region[:, J[-1] - RING + 1:J[-1] + 1]):  # fmt: skip
                if __INLINED(FORM == 0):
                    q = pe
                elif __INLINED(FORM == 1):
                    q = exp(akap * log(pe))
                else:
                    q = log(pe)


class HaloPressure:
    """Equivalent of FV3's ``pe_halo``, ``pk3_halo`` or ``pln_halo`` (``routine``): ``q`` (FV3's
    ``pe`` or ``pk3``, interfaces) written on the routine's halo ring from ``delp`` (cells, valid
    there) and ``ptop``."""

    def __init__(self, factory: GridStencilFactory, routine: str, *, ptop: float, akap: float = 0.0) -> None:
        if routine not in ROUTINES:
            raise FV3ConfigError(f"{routine!r} is not one of FV3's halo pressures {sorted(ROUTINES)}")
        ring, form = ROUTINES[routine]
        self.routine, self.ptop, self.akap = routine, float(ptop), float(akap)
        self._stencil = factory.from_dims(halo_pressure, (X_DIM, Y_DIM, Z_INTERFACE_DIM), ring,
                                          externals={"RING": ring, "FORM": form}, name=routine)  # fmt: skip

    def bind(self, delp: Any, q: Any) -> Launch:
        return self._stencil.bind(delp=delp, q=q, akap=self.akap, ptop=self.ptop)
