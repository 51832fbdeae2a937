"""Plain NumPy reference of FV3's xppm (1D along axis 0, loops over the cell index), written
from the Fortran description (fv_tp_2d.F90: xppm, pert_ppm) independently of the stencils."""

from __future__ import annotations

import numpy as np

P1, P2 = 7.0 / 12.0, -1.0 / 12.0
C1, C2, C3 = -2.0 / 14.0, 11.0 / 14.0, 5.0 / 14.0
S11, S14, S15 = 11.0 / 14.0, 4.0 / 7.0, 3.0 / 14.0


def _sign(a, b):
    return np.where(b >= 0.0, np.abs(a), -np.abs(a))


def _edge(q, dxa, i):
    """Interface value between cells i-1 and i at a tile edge (two one-sided extrapolations)."""
    return 0.5 * (
        ((2 * dxa[i - 1] + dxa[i - 2]) * q[i - 1] - dxa[i - 1] * q[i - 2]) / (dxa[i - 2] + dxa[i - 1])
        + ((2 * dxa[i] + dxa[i + 1]) * q[i] - dxa[i] * q[i + 1]) / (dxa[i] + dxa[i + 1])
    )


def _pert_ppm(bl, br):
    bl, br = bl.copy(), br.copy()
    opposite = bl * br < 0.0
    da1 = bl - br
    a6da = 3.0 * (bl + br) * da1
    fix_r = opposite & (a6da < -(da1**2))
    fix_l = opposite & ~fix_r & (a6da > da1**2)
    br_new = np.where(fix_r, -2.0 * bl, br)
    bl_new = np.where(fix_l, -2.0 * br, bl)
    return np.where(opposite, bl_new, 0.0), np.where(opposite, br_new, 0.0)


def ppm_flux_1d(q, c, dxa, first, last, hord, faces, edges=(True, True)):
    """Flux (face value of q) on faces ``faces`` (face i lies between cells i-1 and i).

    q, dxa: cell arrays along axis 0; c: Courant numbers on faces; first/last: indices of the
    tile's first/last interior cell; ``edges``: whether those tile edges get the FV3 treatment.
    """
    n = q.shape[0]
    bl = np.zeros_like(q)
    br = np.zeros_like(q)
    smooth = np.ones_like(q)
    if hord < 8:
        al = np.zeros_like(q)
        for i in range(2, n - 1):
            al[i] = P1 * (q[i - 1] + q[i]) + P2 * (q[i - 2] + q[i + 1])
        if edges[0]:
            s = first
            al[s - 1] = C1 * q[s - 3] + C2 * q[s - 2] + C3 * q[s - 1]
            al[s] = _edge(q, dxa, s)
            al[s + 1] = C3 * q[s] + C2 * q[s + 1] + C1 * q[s + 2]
        if edges[1]:
            e = last
            al[e] = C1 * q[e - 2] + C2 * q[e - 1] + C3 * q[e]
            al[e + 1] = _edge(q, dxa, e + 1)
            al[e + 2] = C3 * q[e + 1] + C2 * q[e + 2] + C1 * q[e + 3]
        for i in range(2, n - 2):
            bl[i] = al[i] - q[i]
            br[i] = al[i + 1] - q[i]
        smooth = (bl * br < 0.0).astype(float) if hord == 5 else (
            3 * np.abs(bl + br) < np.abs(bl - br)).astype(float)
    else:
        dm = np.zeros_like(q)
        for i in range(1, n - 1):
            xt = 0.25 * (q[i + 1] - q[i - 1])
            hi = np.maximum(np.maximum(q[i - 1], q[i]), q[i + 1]) - q[i]
            lo = q[i] - np.minimum(np.minimum(q[i - 1], q[i]), q[i + 1])
            dm[i] = _sign(np.minimum(np.minimum(np.abs(xt), hi), lo), xt)
        al = np.zeros_like(q)
        for i in range(2, n - 1):
            al[i] = 0.5 * (q[i - 1] + q[i]) + (dm[i - 1] - dm[i]) / 3.0
        for i in range(2, n - 2):
            xt = 2.0 * dm[i]
            bl[i] = -_sign(np.minimum(np.abs(xt), np.abs(al[i] - q[i])), xt)
            br[i] = _sign(np.minimum(np.abs(xt), np.abs(al[i + 1] - q[i])), xt)

        def clamped_edge(i):
            xt = _edge(q, dxa, i)
            lo = np.minimum(np.minimum(q[i - 2], q[i - 1]), np.minimum(q[i], q[i + 1]))
            hi = np.maximum(np.maximum(q[i - 2], q[i - 1]), np.maximum(q[i], q[i + 1]))
            return np.minimum(np.maximum(xt, lo), hi)

        if edges[0]:
            s = first  # FV3: cells 0, 1, 2 are s-1, s, s+1
            bl[s - 1] = S14 * dm[s - 2] + S11 * (q[s - 2] - q[s - 1])
            xt = clamped_edge(s)
            br[s - 1] = xt - q[s - 1]
            bl[s] = xt - q[s]
            xt = S15 * q[s] + S11 * q[s + 1] - S14 * dm[s + 1]
            br[s] = xt - q[s]
            bl[s + 1] = xt - q[s + 1]
            br[s + 1] = al[s + 2] - q[s + 1]
            for i in (s - 1, s, s + 1):
                bl[i], br[i] = _pert_ppm(bl[i], br[i])
        if edges[1]:
            e = last  # FV3: cells npx-2, npx-1, npx are e-1, e, e+1
            bl[e - 1] = al[e - 1] - q[e - 1]
            xt = S15 * q[e] + S11 * q[e - 1] + S14 * dm[e - 1]
            br[e - 1] = S15 * q[e] + S11 * q[e - 1] + S14 * dm[e - 1] - q[e - 1]
            bl[e] = xt - q[e]
            xt = clamped_edge(e + 1)
            br[e] = xt - q[e]
            bl[e + 1] = xt - q[e + 1]
            br[e + 1] = S11 * (q[e + 2] - q[e + 1]) - S14 * dm[e + 2]
            for i in (e - 1, e, e + 1):
                bl[i], br[i] = _pert_ppm(bl[i], br[i])
    b0 = bl + br
    out = {}
    for i in faces:
        mask = np.maximum(smooth[i - 1], smooth[i])
        up = q[i - 1] + (1 - c[i]) * (br[i - 1] - c[i] * b0[i - 1]) * mask
        down = q[i] + (1 + c[i]) * (bl[i] + c[i] * b0[i]) * mask
        out[i] = np.where(c[i] > 0.0, up, down)
    return out


def fvtp2d_reference(q, crx, cry, xfx, yfx, area, dxa, dya, spec, hord, corners):
    """FV3 ``fvtp2d`` (fv_tp_2d.F90, Lin & Rood 1996 splitting) on one subdomain, in plain
    NumPy from :func:`ppm_flux_1d`: (fx, fy) on the interior faces, each the average of the
    x-then-y and y-then-x fluxes times the swept area.

    q: cells with halo n_h = spec.n_halo (copied, not modified); crx/xfx, cry/yfx: Courant
    numbers and swept areas on x/y faces; ``corners(direction, q)`` fills q's vertex halo
    corners before a sweep in that direction (FV3 ``copy_corners``)."""
    h, nx, ny = spec.n_halo, spec.nx, spec.ny
    area3 = area[..., None]

    def sweep(f, c, dx, along_x, first_faces, n, edges):
        """Face values of f on faces first..first+n along x (or y), all cells across."""
        if not along_x:
            f, c, dx = f.transpose(1, 0, 2), c.transpose(1, 0, 2), dx.T
        flux = ppm_flux_1d(f, c[:, : f.shape[1]], dx[..., None], h, h + n - 1, hord,
                           range(first_faces, first_faces + n + 1), edges)  # fmt: skip
        out = np.zeros(c.shape[:2] + f.shape[2:])
        for i, v in flux.items():
            out[i, : f.shape[1]] = v
        return out if along_x else out.transpose(1, 0, 2)

    def advect(f, flux, area_flux, along_x, n):
        """One-directional advective update of f on cells h..h+n-1 along x (or y)."""
        t = (lambda a: a) if along_x else (lambda a: a.transpose(1, 0, 2))
        f, flux, area_flux, a = t(f), t(flux), t(area_flux), t(area3)
        m, s, sp = f.shape[1], slice(h, h + n), slice(h + 1, h + n + 1)
        out = np.zeros_like(f)
        out[s] = (f[s] * a[s] + flux[s, :m] * area_flux[s, :m] - flux[sp, :m] * area_flux[sp, :m]
                  ) / (a[s] + area_flux[s, :m] - area_flux[sp, :m])  # fmt: skip
        return t(out)

    x_edges, y_edges = (spec.on_west, spec.on_east), (spec.on_south, spec.on_north)
    qy = q.copy()
    corners("y", qy)
    fy2 = sweep(qy, cry, dya, False, h, ny, y_edges)
    q_i = advect(qy, fy2, yfx, False, ny)
    fx_yx = sweep(q_i, crx, dxa, True, h, nx, x_edges)
    qx = qy.copy()
    corners("x", qx)
    fx2 = sweep(qx, crx, dxa, True, h, nx, x_edges)
    q_j = advect(qx, fx2, xfx, True, nx)
    fy_xy = sweep(q_j, cry, dya, False, h, ny, y_edges)
    fxs = (slice(h, h + nx + 1), slice(h, h + ny))
    fys = (slice(h, h + nx), slice(h, h + ny + 1))
    fx = 0.5 * (fx_yx[fxs] + fx2[fxs]) * xfx[fxs]
    fy = 0.5 * (fy_xy[fys] + fy2[fys]) * yfx[fys]
    return fx, fy
