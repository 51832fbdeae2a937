"""2D (horizontal 5-point) and 3D (7-point) Laplacians with unit grid spacing."""


import numpy as np
from gt4py.cartesian import gtscript
from gt4py.cartesian.gtscript import PARALLEL, Field, computation, interval

from stencils.library.base import LibraryStencil, shifted, smooth_input


@gtscript.function
def lap_ij(f):
    """Horizontal 5-point Laplacian."""
    return f[1, 0, 0] + f[-1, 0, 0] + f[0, 1, 0] + f[0, -1, 0] - 4.0 * f[0, 0, 0]


def laplacian_2d(in_field: Field[np.float64], out_field: Field[np.float64]):
    with computation(PARALLEL), interval(...):
        out_field = lap_ij(in_field)


def laplacian_3d(in_field: Field[np.float64], out_field: Field[np.float64]):
    with computation(PARALLEL), interval(1, -1):
        out_field = lap_ij(in_field) + in_field[0, 0, 1] + in_field[0, 0, -1] - 2.0 * in_field


def _ref_2d(in_field: np.ndarray, out_field: np.ndarray, halo: int = 1) -> dict[str, np.ndarray]:
    s = lambda di, dj: shifted(in_field, halo, di, dj)  # noqa: E731
    return {"out_field": s(1, 0) + s(-1, 0) + s(0, 1) + s(0, -1) - 4.0 * s(0, 0)}


def _ref_3d(in_field: np.ndarray, out_field: np.ndarray, halo: int = 1) -> dict[str, np.ndarray]:
    c = shifted(in_field, halo, 0, 0)
    lap = _ref_2d(in_field, out_field, halo)["out_field"]
    full = lap + np.roll(c, -1, axis=2) + np.roll(c, 1, axis=2) - 2.0 * c
    return {"out_field": full[:, :, 1:-1]}


LAPLACIAN_2D = LibraryStencil(
    name="laplacian_2d",
    definition=laplacian_2d,
    reference=_ref_2d,
    inputs=("in_field",),
    outputs=("out_field",),
    halo=1,
    make_inputs=smooth_input,
    description="horizontal 5-point Laplacian, every level",
)
LAPLACIAN_3D = LibraryStencil(
    name="laplacian_3d",
    definition=laplacian_3d,
    reference=_ref_3d,
    inputs=("in_field",),
    outputs=("out_field",),
    halo=1,
    make_inputs=smooth_input,
    levels=slice(1, -1),
    description="7-point Laplacian on levels 1..nz-2",
)
