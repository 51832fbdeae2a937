"""The finite-volume flux divergence of a cell, written once for every stencil that uses it."""

from __future__ import annotations

import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, computation, interval

FloatField = gtscript.Field[np.float64]
FloatFieldIJ = gtscript.Field[gtscript.IJ, np.float64]


@gtscript.function
def flux_divergence(fx, fy):
    """Net inflow of a cell from its face fluxes (x-faces ``fx`` toward +i, y-faces ``fy``
    toward +j): west in minus east out, plus south in minus north out."""
    return fx - fx[1, 0, 0] + fy - fy[0, 1, 0]


def apply_flux_divergence(q: FloatField, fx: FloatField, fy: FloatField, rarea: FloatFieldIJ):
    """q += (fluxes in - fluxes out) / area (FV3's ``delp`` / tracer update without mass)."""
    with computation(PARALLEL), interval(...):
        q = q + flux_divergence(fx, fy) * rarea


def apply_mass_weighted_flux_divergence(q: FloatField, delp: FloatField, qx: FloatField,
                                        qy: FloatField, fx: FloatField, fy: FloatField,
                                        rarea: FloatFieldIJ):  # fmt: skip
    """FV3 ``d_sw``'s update of a mass-weighted scalar and of ``delp`` (the 3-D core's ``pt``):
    ``q delp`` plus the divergence of its fluxes ``qx``, ``qy`` (q times mass), ``delp`` plus
    the divergence of the mass fluxes ``fx``, ``fy``, then ``q`` divided by the new ``delp``."""
    with computation(PARALLEL), interval(...):
        q = q * delp + flux_divergence(qx, qy) * rarea
        delp = delp + flux_divergence(fx, fy) * rarea
        q = q / delp


def accumulate(total: FloatField, increment: FloatField):
    """``total += increment`` (FV3's "flux capacitor": ``cx``, ``cy``, ``mfx``, ``mfy``)."""
    with computation(PARALLEL), interval(...):
        total = total + increment
