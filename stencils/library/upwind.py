"""First-order upwind advection of a scalar by a horizontal velocity (Courant numbers)."""


import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

from stencils.library.base import LibraryStencil, shifted, smooth_field
from stencils.storage import Domain


@gtscript.function
def upwind_increment(phi_minus, phi, phi_plus, courant):
    """c * (one-sided difference taken on the upwind side) along one axis, written without a
    branch (equal for finite values to ``c (phi - phi_minus) if c > 0 else c (phi_plus - phi)``)
    so that compilers vectorise it instead of a data-dependent jump per point."""
    return max(courant, 0.0) * (phi - phi_minus) + min(courant, 0.0) * (phi_plus - phi)


def upwind_advection(
    phi: Field[np.float64],
    cx: Field[np.float64],
    cy: Field[np.float64],
    phi_new: Field[np.float64],
):
    with computation(PARALLEL), interval(...):
        phi_new = (
            phi
            - upwind_increment(phi[-1, 0, 0], phi, phi[1, 0, 0], cx)
            - upwind_increment(phi[0, -1, 0], phi, phi[0, 1, 0], cy)
        )


def _reference(
    phi: np.ndarray, cx: np.ndarray, cy: np.ndarray, phi_new: np.ndarray, halo: int = 1
) -> dict[str, np.ndarray]:
    s = lambda di, dj: shifted(phi, halo, di, dj)  # noqa: E731
    c = s(0, 0)
    ux, uy = shifted(cx, halo, 0, 0), shifted(cy, halo, 0, 0)
    dx = np.where(ux > 0.0, ux * (c - s(-1, 0)), ux * (s(1, 0) - c))
    dy = np.where(uy > 0.0, uy * (c - s(0, -1)), uy * (s(0, 1) - c))
    return {"phi_new": c - dx - dy}


def _inputs(domain: Domain, rng: np.random.Generator) -> dict[str, np.ndarray]:
    # Courant numbers of both signs with |cx| + |cy| <= 0.8 (stable, positivity preserving).
    return {
        "phi": smooth_field(domain, rng),
        "cx": rng.uniform(-0.4, 0.4, domain.shape),
        "cy": rng.uniform(-0.4, 0.4, domain.shape),
    }


UPWIND = LibraryStencil(
    name="upwind",
    definition=upwind_advection,
    reference=_reference,
    inputs=("phi", "cx", "cy"),
    outputs=("phi_new",),
    halo=1,
    make_inputs=_inputs,
    description="first-order upwind advection, Courant numbers cx, cy at cell centres",
)
