"""NumPy peers: each library stencil written with array slicing, no GT4Py.

Kernels follow the package convention ``kernel(*inputs, *outputs, halo, *params)`` and write the
outputs on the interior columns and the stencil's vertical interval.
"""

from __future__ import annotations

import numpy as np

from benchmarks.peers import PEER_STENCILS

Index = tuple[slice, slice, slice]


def _box(a: np.ndarray, h: int, di: int = 0, dj: int = 0, levels: slice = slice(None)) -> Index:
    """Index of the interior of ``a`` (halo ``h``) shifted by (di, dj)."""
    ni, nj, _ = a.shape
    return (slice(h + di, ni - h + di), slice(h + dj, nj - h + dj), levels)


def _neighbour_sum(f: np.ndarray, h: int, levels: slice = slice(None)) -> np.ndarray:
    """f[i+1] + f[i-1] + f[j+1] + f[j-1] on the interior (GTScript's order of terms)."""
    return (f[_box(f, h, 1, 0, levels)] + f[_box(f, h, -1, 0, levels)]
            + f[_box(f, h, 0, 1, levels)] + f[_box(f, h, 0, -1, levels)])  # fmt: skip


def laplacian_2d(in_field: np.ndarray, out_field: np.ndarray, halo: int) -> None:
    out_field[_box(in_field, halo)] = _neighbour_sum(in_field, halo) - 4.0 * in_field[_box(in_field, halo)]


def laplacian_3d(in_field: np.ndarray, out_field: np.ndarray, halo: int) -> None:
    nz = in_field.shape[2]
    mid, up, down = slice(1, nz - 1), slice(2, nz), slice(0, nz - 2)
    c = in_field[_box(in_field, halo, levels=mid)]
    out_field[_box(in_field, halo, levels=mid)] = (
        _neighbour_sum(in_field, halo, mid) - 4.0 * c
        + in_field[_box(in_field, halo, levels=up)] + in_field[_box(in_field, halo, levels=down)]
        - 2.0 * c
    )


def jacobi_2d(in_field: np.ndarray, out_field: np.ndarray, halo: int) -> None:
    out_field[_box(in_field, halo)] = 0.25 * _neighbour_sum(in_field, halo)


def jacobi_3d(in_field: np.ndarray, out_field: np.ndarray, halo: int) -> None:
    nz = in_field.shape[2]
    mid, up, down = slice(1, nz - 1), slice(2, nz), slice(0, nz - 2)
    out_field[_box(in_field, halo, levels=mid)] = (
        _neighbour_sum(in_field, halo, mid)
        + in_field[_box(in_field, halo, levels=up)] + in_field[_box(in_field, halo, levels=down)]
    ) / 6.0


def _upwind_increment(phi: np.ndarray, courant: np.ndarray, h: int, axis: int) -> np.ndarray:
    """courant * (one-sided difference on the upwind side) along ``axis`` on the interior."""
    step = [(1, 0), (0, 1)][axis]
    c = phi[_box(phi, h)]
    minus = phi[_box(phi, h, -step[0], -step[1])]
    plus = phi[_box(phi, h, *step)]
    u = courant[_box(phi, h)]
    return np.where(u > 0.0, u * (c - minus), u * (plus - c))


def upwind(phi: np.ndarray, cx: np.ndarray, cy: np.ndarray, phi_new: np.ndarray, halo: int) -> None:
    phi_new[_box(phi, halo)] = (
        phi[_box(phi, halo)] - _upwind_increment(phi, cx, halo, 0) - _upwind_increment(phi, cy, halo, 1)
    )


def _flux_divergence(lap: np.ndarray, f: np.ndarray, axis: int) -> np.ndarray:
    """flux - flux[-1] along ``axis`` of the limited Laplacian flux, on the interior; ``lap`` and
    ``f`` cover the interior plus one cell on each side in i and j."""
    flux = np.diff(lap, axis=axis)
    flux = np.where(flux * np.diff(f, axis=axis) > 0.0, 0.0, flux)
    inner: list[slice] = [slice(None)] * 3
    inner[1 - axis] = slice(1, -1)
    return np.diff(flux[tuple(inner)], axis=axis)


def hdiff(in_field: np.ndarray, coeff: np.ndarray, out_field: np.ndarray, halo: int) -> None:
    f = in_field
    ring = _box(f, halo - 1)  # interior plus one cell: where the fluxes need the Laplacian
    lap = 4.0 * f[ring] - _neighbour_sum(f, halo - 1)
    div = _flux_divergence(lap, f[ring], 0) + _flux_divergence(lap, f[ring], 1)
    out_field[_box(f, halo)] = f[_box(f, halo)] - coeff[_box(f, halo)] * div


def vadv(phi: np.ndarray, w: np.ndarray, phi_new: np.ndarray, halo: int, dt_dz: float) -> None:
    """Thomas algorithm on all columns at once, level by level (k-major copies, so each level
    is a contiguous plane)."""
    box = _box(phi, halo)
    rhs = np.ascontiguousarray(np.moveaxis(phi[box], 2, 0))
    c = np.ascontiguousarray(np.moveaxis(0.5 * w[box] * dt_dz, 2, 0))
    cp, dp = np.empty_like(c), np.empty_like(c)
    cp[0], dp[0] = c[0], rhs[0]
    for k in range(1, c.shape[0]):
        denom = 1.0 + c[k] * cp[k - 1]
        cp[k] = c[k] / denom
        dp[k] = (rhs[k] + c[k] * dp[k - 1]) / denom
    for k in range(c.shape[0] - 2, -1, -1):
        dp[k] -= cp[k] * dp[k + 1]
    phi_new[box] = np.moveaxis(dp, 0, 2)


KERNELS = {name: globals()[name] for name in PEER_STENCILS}
