"""Physical inputs for tuning fv3core's pressure stencils (``Tunable.inputs``, :mod:`fv3core.tuning.tunable`).

Tuning's generic inputs are smooth random fields around 2, which can be negative; stencils that
take logarithms or powers of pressures then give NaN, and the remapping's search through the
source levels does no work. :func:`hydrostatic_field` gives the fields of a hydrostatic column
instead, by FV3's names and with FV3's levels (interface fields ``nz + 1``): interface pressures
on hybrid levels, ``pe = ak + bk ps`` with ``bk = eta**2`` and ``ak = P0 (eta - eta**2) +
PTOP (1 - eta)`` over ``eta`` from 0 (top) to 1 (surface), a surface pressure varying smoothly
around ``P0`` in i and j; their logarithm and ``pe**kappa``; layer thicknesses as differences of
the interfaces; a temperature rising towards the surface and a surface geopotential. Every
field is a function of the domain only, so the fields of one call describe the same column.
"""

from __future__ import annotations

import numpy as np

from stencils.storage import Domain

#: Reference surface pressure and model top (Pa); R / cp of dry air (FV3's GFS value).
P0 = 1.0e5
PTOP = 300.0
KAPPA = 2.0 / 7.0

#: Scalars of the pressure stencils: the model top, its ``pk`` and ``kappa``.
SCALARS = {"ptop": PTOP, "ptk": PTOP**KAPPA, "akap": KAPPA}

#: FV3 names of interface fields (``nz + 1`` levels) and of layer thicknesses.
INTERFACE = ("pe", "pe1", "pe2", "ak", "bk", "peln", "pn2", "pk", "pk2")
THICKNESS = ("delp", "dp1", "dp2")


def surface_pressure(domain: Domain) -> np.ndarray:
    """``ps`` (Pa) on the horizontal part of ``domain.shape``: ``P0`` plus 2 hPa waves."""
    nx, ny, _ = domain.shape
    x = np.linspace(0.0, 2.0 * np.pi, nx)[:, None]
    y = np.linspace(0.0, 2.0 * np.pi, ny)[None, :]
    return P0 + 200.0 * np.sin(x) * np.cos(2.0 * y)


def hybrid_levels(nz: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ak, bk)`` of ``nz + 1`` interfaces, top first: ``ak + bk ps`` runs from ``PTOP`` to ``ps``."""
    eta = np.linspace(0.0, 1.0, nz + 1)
    bk = eta**2
    return P0 * (eta - bk) + PTOP * (1.0 - eta), bk


def interface_pressure(domain: Domain) -> np.ndarray:
    """``pe`` (Pa) on the ``nz + 1`` interfaces of ``domain``."""
    ak, bk = hybrid_levels(domain.nz)
    return ak[None, None, :] + bk[None, None, :] * surface_pressure(domain)[:, :, None]


def hydrostatic_field(name: str, domain: Domain) -> np.ndarray | float | int | None:
    """On the compute domain ``domain``: the FV3 field ``name`` of a hydrostatic column, the
    value of the scalar ``name`` (``km``: the level count), or None for one this column does
    not define (it stays generic)."""
    if name in SCALARS:
        return SCALARS[name]
    if name == "km":
        return domain.nz
    layers = domain.shape
    if name in THICKNESS:
        return np.diff(interface_pressure(domain), axis=2)
    if name == "pt":
        return np.broadcast_to(220.0 + 70.0 * np.linspace(0.0, 1.0, domain.nz), layers).copy()
    if name in ("ps", "phis"):  # surface fields (as IJ fields: level 0 is taken), phis in m2 s-2
        surface = surface_pressure(domain) if name == "ps" else 5.0 * (surface_pressure(domain) - P0)
        return np.broadcast_to(surface[:, :, None], layers).copy()
    if name not in INTERFACE:
        return None
    interfaces = layers[:2] + (domain.nz + 1,)
    if name in ("ak", "bk"):
        return np.broadcast_to(hybrid_levels(domain.nz)[name == "bk"], interfaces).copy()
    pe = interface_pressure(domain)
    if name in ("pe", "pe1", "pe2"):
        return pe
    if name in ("peln", "pn2"):
        return np.log(pe)
    return pe**KAPPA  # pk, pk2
