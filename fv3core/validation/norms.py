"""The shallow-water norms that GFDL's Fortran FV3 reference prints (``SWNORMS`` / ``SWINV``
lines of ``../shared/fv3-reference/<run>/norms.txt``), as functions of global (6, N, N) arrays
in fv3core's ``[tile, i, j]`` order.

Definitions (the reference README's; A = cell area, sums over all 6 N^2 cells in float64)::

    D = depth (m)   hs = surface height (m)   H = D + hs   (H0, ua0, va0 = the state at t = 0)
    h_l1 = sum|H-H0|A / sum|H0|A     h_l2 = sqrt(sum (H-H0)^2 A) / sqrt(sum H0^2 A)
    h_linf = max|H-H0| / max|H0|
    v_*  = the same with |v-v0| = sqrt((ua-ua0)^2 + (va-va0)^2), ua/va A-grid east/north winds
    mass = sum D A    energy = sum (0.5 D (ua^2+va^2) + 0.5 g ((D+hs)^2 - hs^2)) A
    enstrophy = sum 0.5 (zeta+f0)^2 / D A,   zeta = rarea (u dx - u dx(j+1) + v dy(i+1) - v dy)
    X_n = (X - X0) / X0   (mass_n, energy_n, enstr_n)

Every sum is :func:`global_sum`: the order of FV3's loops on the reference runs (one tile per
rank), so that values recomputed from the reference's netCDF agree with the printed ones to the
last bits the files allow (tests/fv3core/test_fv3_reference.py).

The enstrophy needs the relative vorticity of the D-grid circulation.  It comes either from
D-grid winds (:func:`dgrid_vorticity`, :meth:`ShallowWaterFields.from_dgrid`: fv3core's own
state) or precomputed (:meth:`ShallowWaterFields.from_relative_vorticity`: the reference's
``vort`` output, FV3's ``get_vorticity``, the same circulation per cell; or the driver's
absolute ``vorticity`` output, :meth:`ShallowWaterFields.from_output`).  Without it the
enstrophy and ``enstr_n`` are NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: the reference's physical constants (the GFS/UFS set of its FMS build)
GRAVITY = 9.80665  # m s-2
RADIUS = 6.3712e6  # m
OMEGA = 7.2921e-5  # s-1

#: errors against the state at t = 0 (SWNORMS)
ERROR_NORMS = ("h_l1", "h_l2", "h_linf", "v_l1", "v_l2", "v_linf")
#: relative changes of the invariants (SWNORMS)
CHANGE_NORMS = ("mass_n", "energy_n", "enstr_n")
#: everything on a SWNORMS line, in its order
NORM_NAMES = ERROR_NORMS + CHANGE_NORMS
#: everything on a SWINV line, in its order (Hmin/Hmax: free-surface height H in m)
INVARIANT_NAMES = ("Hmin", "Hmax", "mass", "energy", "enstrophy")
#: the columns of a norms table
ALL_NAMES = NORM_NAMES + INVARIANT_NAMES


def global_sum(x: np.ndarray) -> float:
    """Sum of a (6, N, N) field in FV3's order on the reference runs (layout 1,1): each tile's
    cells in Fortran loop order (``do j; do i``, i fastest) accumulated one by one, then the six
    tile sums in tile order (what ``mpp_sum`` gave on the runs' six ranks)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3 or x.shape[0] != 6:
        raise ValueError(f"global_sum needs a (6, N, N) field, got shape {x.shape}")
    total = 0.0
    for tile in x:
        total += float(np.cumsum(tile.T.ravel())[-1]) if tile.size else 0.0
    return total


def coriolis(lon: np.ndarray, lat: np.ndarray, alpha: float = 0.0, omega: float = OMEGA
             ) -> np.ndarray:  # fmt: skip
    """FV3's cell-centre Coriolis parameter ``f0`` (1/s) of cell centres ``lon``, ``lat`` in
    degrees, for the test cases' rotation ``alpha`` (rad):
    ``2 omega (-cos(lon) cos(lat) sin(alpha) + sin(lat) cos(alpha))``."""
    lam, theta = np.deg2rad(lon), np.deg2rad(lat)
    return 2.0 * omega * (-np.cos(lam) * np.cos(theta) * math.sin(alpha)
                          + np.sin(theta) * math.cos(alpha))  # fmt: skip


def dgrid_vorticity(u: np.ndarray, v: np.ndarray, dx: np.ndarray, dy: np.ndarray,
                    rarea: np.ndarray) -> np.ndarray:  # fmt: skip
    """Relative vorticity (1/s) of each cell from the D-grid circulation:
    ``rarea * (u dx - u dx[j+1] + v dy[i+1] - v dy)``.

    ``u`` (m/s) and ``dx`` (m): the winds along and the lengths of the cells' south and north
    edges, shape (6, N, N+1) (``[tile, i, j]``, j the edge index); ``v``, ``dy``: the west and
    east edges, (6, N+1, N); ``rarea`` (1/m^2): (6, N, N)."""
    u, v, dx, dy, rarea = (np.asarray(a, dtype=np.float64) for a in (u, v, dx, dy, rarea))
    t, n_i, n_j = rarea.shape
    for name, a, shape in (("u", u, (t, n_i, n_j + 1)), ("dx", dx, (t, n_i, n_j + 1)),
                           ("v", v, (t, n_i + 1, n_j)), ("dy", dy, (t, n_i + 1, n_j))):  # fmt: skip
        if a.shape != shape:
            raise ValueError(f"dgrid_vorticity: {name} has shape {a.shape}, expected {shape} "
                             f"for rarea of shape {rarea.shape}")  # fmt: skip
    udx, vdy = u * dx, v * dy
    return rarea * (udx[:, :, :-1] - udx[:, :, 1:] + vdy[:, 1:, :] - vdy[:, :-1, :])


@dataclass(frozen=True)
class ShallowWaterFields:
    """One shallow-water state as global (6, N, N) arrays, ``[tile, i, j]``: ``depth`` D and
    ``surface`` hs (m), A-grid eastward/northward winds ``u``, ``v`` (m/s), and the absolute
    vorticity ``zeta + f0`` (1/s) when known (needed for the enstrophy only)."""

    depth: np.ndarray
    surface: np.ndarray
    u: np.ndarray
    v: np.ndarray
    absolute_vorticity: np.ndarray | None = None

    def __post_init__(self) -> None:
        shape = np.shape(self.depth)
        if len(shape) != 3 or shape[0] != 6:
            raise ValueError(f"depth has shape {shape}: expected (6, N, N)")
        for name in ("surface", "u", "v", "absolute_vorticity"):
            a = getattr(self, name)
            if a is not None and np.shape(a) != shape:
                raise ValueError(f"{name} has shape {np.shape(a)}, depth {shape}: they must agree")

    @property
    def height(self) -> np.ndarray:
        """Free-surface height H = D + hs (m)."""
        return self.depth + self.surface

    @classmethod
    def from_relative_vorticity(cls, depth: np.ndarray, surface: np.ndarray, u: np.ndarray,
                                v: np.ndarray, vorticity: np.ndarray, f0: np.ndarray
                                ) -> ShallowWaterFields:  # fmt: skip
        """With a precomputed relative vorticity (e.g. the reference's ``vort``) and ``f0``."""
        return cls(depth, surface, u, v, np.asarray(vorticity) + np.asarray(f0))

    @classmethod
    def from_dgrid(cls, depth: np.ndarray, surface: np.ndarray, u: np.ndarray, v: np.ndarray,
                   u_d: np.ndarray, v_d: np.ndarray, dx: np.ndarray, dy: np.ndarray,
                   rarea: np.ndarray, f0: np.ndarray) -> ShallowWaterFields:  # fmt: skip
        """With the vorticity of the D-grid winds ``u_d``, ``v_d`` (:func:`dgrid_vorticity`)."""
        return cls.from_relative_vorticity(depth, surface, u, v,
                                           dgrid_vorticity(u_d, v_d, dx, dy, rarea), f0)  # fmt: skip

    @classmethod
    def from_output(cls, fields: Mapping[str, np.ndarray]) -> ShallowWaterFields:
        """From fv3core's gathered output fields (:attr:`fv3core.experiments.driver.RunResult.history`):
        ``depth``, ``surface``, ``u``, ``v`` and the absolute ``vorticity`` if present."""
        missing = [k for k in ("depth", "surface", "u", "v") if k not in fields]
        if missing:
            raise ValueError(f"output fields lack {missing}; they have {sorted(fields)}")
        return cls(fields["depth"], fields["surface"], fields["u"], fields["v"],
                   fields.get("vorticity"))  # fmt: skip


@dataclass(frozen=True)
class Invariants:
    """The SWINV quantities of one state: ``Hmin``, ``Hmax`` (m), ``mass`` (m^3), ``energy``
    (m^5 s-2) and ``enstrophy`` (m^-1 s^-2 m^2 = the reference's units; NaN without vorticity)."""

    Hmin: float
    Hmax: float
    mass: float
    energy: float
    enstrophy: float

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in INVARIANT_NAMES}


def invariants(fields: ShallowWaterFields, area: np.ndarray, gravity: float = GRAVITY
               ) -> Invariants:  # fmt: skip
    """Hmin, Hmax, total mass, energy and potential enstrophy of ``fields`` on cells of ``area``
    (m^2), as FV3's SWINV line."""
    _check_area(fields, area)
    d, hs, ua, va = fields.depth, fields.surface, fields.u, fields.v
    h = d + hs
    energy = (0.5 * d * (ua**2 + va**2) + 0.5 * gravity * ((d + hs) ** 2 - hs**2)) * area
    if fields.absolute_vorticity is not None:
        enstrophy = global_sum(0.5 * fields.absolute_vorticity**2 / d * area)
    else:
        enstrophy = math.nan
    return Invariants(float(h.min()), float(h.max()), global_sum(d * area), global_sum(energy),
                      enstrophy)  # fmt: skip


def sw_norms(fields: ShallowWaterFields, initial: ShallowWaterFields, area: np.ndarray, *,
             gravity: float = GRAVITY, initial_invariants: Invariants | None = None
             ) -> dict[str, float]:  # fmt: skip
    """The SWNORMS and SWINV values of ``fields`` against ``initial`` (the state at t = 0):
    :data:`ALL_NAMES` -> value.

    ``initial_invariants`` replaces the invariants of ``initial`` (e.g. the printed t = 0
    SWINV line when the t = 0 vorticity is not known); a quantity that cannot be computed
    (enstrophy without vorticity) is NaN."""
    _check_area(initial, area)
    if np.shape(fields.depth) != np.shape(initial.depth):
        raise ValueError(f"state {np.shape(fields.depth)} and initial state "
                         f"{np.shape(initial.depth)} differ in shape")  # fmt: skip
    h, h0 = fields.height, initial.height
    dh = h - h0
    du, dv = fields.u - initial.u, fields.v - initial.v
    dv2, v02 = du**2 + dv**2, initial.u**2 + initial.v**2
    dvel, v0 = np.sqrt(dv2), np.sqrt(v02)
    out = {
        "h_l1": global_sum(np.abs(dh) * area) / global_sum(np.abs(h0) * area),
        "h_l2": math.sqrt(global_sum(dh**2 * area)) / math.sqrt(global_sum(h0**2 * area)),
        "h_linf": float(np.max(np.abs(dh))) / float(np.max(np.abs(h0))),
        "v_l1": _ratio(global_sum(dvel * area), global_sum(v0 * area)),
        "v_l2": _ratio(math.sqrt(global_sum(dv2 * area)), math.sqrt(global_sum(v02 * area))),
        "v_linf": _ratio(float(np.max(dvel)), float(np.max(v0))),
    }
    now = invariants(fields, area, gravity)
    then = initial_invariants if initial_invariants is not None else invariants(initial, area,
                                                                                gravity)
    out["mass_n"] = (now.mass - then.mass) / then.mass
    out["energy_n"] = (now.energy - then.energy) / then.energy
    out["enstr_n"] = (now.enstrophy - then.enstrophy) / then.enstrophy
    out.update(now.as_dict())
    return out


def agreeing_digits(ours: float, reference: float, max_digits: int = 16) -> int:
    """How many significant digits ``ours`` and ``reference`` share when both are rounded to
    that many (``max_digits`` when equal at ``max_digits``, 0 when not even the first agrees
    or either is NaN)."""
    if math.isnan(ours) or math.isnan(reference):
        return 0
    for k in range(max_digits, 0, -1):
        if f"{ours:.{k - 1}e}" == f"{reference:.{k - 1}e}":
            return k
    return 0


def _ratio(a: float, b: float) -> float:
    return a / b if b != 0.0 else (0.0 if a == 0.0 else math.inf)


def _check_area(fields: ShallowWaterFields, area: np.ndarray) -> None:
    if np.shape(area) != np.shape(fields.depth):
        raise ValueError(f"area has shape {np.shape(area)}, the fields "
                         f"{np.shape(fields.depth)}: they must agree")  # fmt: skip
