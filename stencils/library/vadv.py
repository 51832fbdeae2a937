"""Implicit vertical advection: a tridiagonal (Thomas) solve per column, FORWARD then BACKWARD.

Backward-Euler in time, centred in space: for each column
``-c_k/2 * phi_{k-1} + phi_k + c_k/2 * phi_{k+1} = phi^n_k`` with the vertical Courant number
``c_k = w_k * dt / dz``; the equation is truncated at the bottom and top levels.
"""


import numpy as np
from gt4py.cartesian.gtscript import BACKWARD, FORWARD, Field, computation, interval
from scipy.linalg import solve_banded

from stencils.library.base import LibraryStencil, shifted, smooth_field
from stencils.storage import Domain


def vertical_advection(
    phi: Field[np.float64],
    w: Field[np.float64],
    phi_new: Field[np.float64],
    *,
    dt_dz: float,
):
    with computation(FORWARD):
        with interval(0, 1):
            cp = 0.5 * w * dt_dz
            dp = phi
        with interval(1, -1):
            a = -0.5 * w * dt_dz
            denom = 1.0 - a * cp[0, 0, -1]
            cp = 0.5 * w * dt_dz / denom
            dp = (phi - a * dp[0, 0, -1]) / denom
        with interval(-1, None):
            a = -0.5 * w * dt_dz
            denom = 1.0 - a * cp[0, 0, -1]
            cp = 0.0
            dp = (phi - a * dp[0, 0, -1]) / denom
    with computation(BACKWARD):
        with interval(-1, None):
            phi_new = dp
        with interval(0, -1):
            phi_new = dp - cp * phi_new[0, 0, 1]


def _reference(
    phi: np.ndarray, w: np.ndarray, phi_new: np.ndarray, dt_dz: float, halo: int = 0
) -> dict[str, np.ndarray]:
    """Each column solved by LAPACK's banded solver (scipy.linalg.solve_banded), not Thomas."""
    rhs = shifted(phi, halo, 0, 0)
    c = 0.5 * shifted(w, halo, 0, 0) * dt_dz
    nx, ny, nz = rhs.shape
    out = np.empty_like(rhs)
    for i in range(nx):
        for j in range(ny):
            bands = np.zeros((3, nz))
            bands[0, 1:] = c[i, j, :-1]  # super-diagonal: +c_k/2 in row k
            bands[1, :] = 1.0
            bands[2, :-1] = -c[i, j, 1:]  # sub-diagonal: -c_k/2 in row k
            out[i, j] = solve_banded((1, 1), bands, rhs[i, j])
    return {"phi_new": out}


def _inputs(domain: Domain, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"phi": smooth_field(domain, rng), "w": rng.uniform(-1.0, 1.0, domain.shape)}


VADV = LibraryStencil(
    name="vadv",
    definition=vertical_advection,
    reference=_reference,
    inputs=("phi", "w"),
    outputs=("phi_new",),
    halo=0,
    make_inputs=_inputs,
    params={"dt_dz": 0.8},
    description="implicit vertical advection, Thomas algorithm (FORWARD/BACKWARD)",
)
