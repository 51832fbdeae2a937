"""Jacobi relaxation sweeps for the Laplace equation in 2D (per level) and 3D."""


import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

from stencils.library.base import LibraryStencil, shifted, smooth_input


@gtscript.function
def neighbour_sum_ij(f):
    return f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0]


def jacobi_2d(in_field: Field[np.float64], out_field: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out_field = 0.25 * neighbour_sum_ij(in_field)


def jacobi_3d(in_field: Field[np.float64], out_field: Field[np.float64]):
    with computation(PARALLEL), interval(1, -1):
        out_field = (neighbour_sum_ij(in_field) + in_field[0, 0, 1] + in_field[0, 0, -1]) / 6.0


def _ref_2d(in_field: np.ndarray, out_field: np.ndarray, halo: int = 1) -> dict[str, np.ndarray]:
    s = lambda di, dj: shifted(in_field, halo, di, dj)  # noqa: E731
    return {"out_field": 0.25 * (s(1, 0) + s(-1, 0) + s(0, 1) + s(0, -1))}


def _ref_3d(in_field: np.ndarray, out_field: np.ndarray, halo: int = 1) -> dict[str, np.ndarray]:
    s = lambda di, dj: shifted(in_field, halo, di, dj)  # noqa: E731
    c = s(0, 0)
    total = s(1, 0) + s(-1, 0) + s(0, 1) + s(0, -1) + np.roll(c, -1, axis=2) + np.roll(c, 1, axis=2)
    return {"out_field": (total / 6.0)[:, :, 1:-1]}


JACOBI_2D = LibraryStencil(
    name="jacobi_2d",
    definition=jacobi_2d,
    reference=_ref_2d,
    inputs=("in_field",),
    outputs=("out_field",),
    halo=1,
    make_inputs=smooth_input,
    description="one Jacobi sweep of the 2D Laplace equation, every level",
)
JACOBI_3D = LibraryStencil(
    name="jacobi_3d",
    definition=jacobi_3d,
    reference=_ref_3d,
    inputs=("in_field",),
    outputs=("out_field",),
    halo=1,
    make_inputs=smooth_input,
    levels=slice(1, -1),
    description="one Jacobi sweep of the 3D Laplace equation on levels 1..nz-2",
)
