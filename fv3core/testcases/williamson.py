"""Williamson et al. (1992) shallow-water test cases on the sphere: analytic fields.

Williamson, Drake, Hack, Jakob, Swarztrauber (1992), "A standard test set for numerical
approximations to the shallow water equations in spherical geometry", J. Comput. Phys. 102.
All angles in radians; ``a`` the sphere radius (m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

A_EARTH = 6.37122e6  # m (Williamson et al. 1992)
OMEGA = 7.292e-5  # 1/s
GRAVITY = 9.80616  # m/s^2
DAY = 86400.0


@dataclass(frozen=True)
class SolidBodyFlow:
    """Solid-body rotation at angle ``alpha`` to the polar axis; one revolution in 12 days."""

    alpha: float = 0.0
    radius: float = A_EARTH

    @property
    def u0(self) -> float:
        return 2.0 * np.pi * self.radius / (12.0 * DAY)

    def wind(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Zonal and meridional wind (m/s)."""
        a = self.alpha
        u = self.u0 * (np.cos(lat) * np.cos(a) + np.sin(lat) * np.cos(lon) * np.sin(a))
        v = -self.u0 * np.sin(lon) * np.sin(a)
        return u, v


@dataclass(frozen=True)
class CosineBell:
    """Williamson test case 1: cosine bell of height h0 and radius a/3 centred at (3 pi/2, 0)."""

    flow: SolidBodyFlow
    h0: float = 1000.0
    lon_c: float = 1.5 * np.pi
    lat_c: float = 0.0

    def height(self, lon: np.ndarray, lat: np.ndarray, t: float = 0.0) -> np.ndarray:
        """The exact solution at time t (s): the bell rotated by the solid-body flow."""
        lon_c, lat_c = self.centre(t)
        r = np.arccos(
            np.clip(
                np.sin(lat_c) * np.sin(lat) + np.cos(lat_c) * np.cos(lat) * np.cos(lon - lon_c),
                -1.0,
                1.0,
            )
        )
        big_r = 1.0 / 3.0
        return np.where(r < big_r, 0.5 * self.h0 * (1.0 + np.cos(np.pi * r / big_r)), 0.0)

    def centre(self, t: float) -> tuple[float, float]:
        """Bell centre after time t: rotate about the flow's axis by angle u0 t / a."""
        angle = self.flow.u0 * t / self.flow.radius
        a = self.flow.alpha
        axis = np.array([-np.sin(a), 0.0, np.cos(a)])  # rotation axis of the solid-body flow
        p = np.array(
            [np.cos(self.lat_c) * np.cos(self.lon_c), np.cos(self.lat_c) * np.sin(self.lon_c),
             np.sin(self.lat_c)]
        )  # fmt: skip
        # Rodrigues' rotation
        p = (
            p * np.cos(angle)
            + np.cross(axis, p) * np.sin(angle)
            + axis * np.dot(axis, p) * (1.0 - np.cos(angle))
        )
        return float(np.arctan2(p[1], p[0])), float(np.arcsin(np.clip(p[2], -1.0, 1.0)))


def normalized_errors(h: np.ndarray, h_true: np.ndarray, area: np.ndarray) -> dict[str, float]:
    """Williamson et al. (1992) normalised l1, l2 and l_inf errors (eqs. 82-84)."""
    diff = h - h_true
    return {
        "l1": float(np.sum(np.abs(diff) * area) / np.sum(np.abs(h_true) * area)),
        "l2": float(np.sqrt(np.sum(diff**2 * area)) / np.sqrt(np.sum(h_true**2 * area))),
        "linf": float(np.max(np.abs(diff)) / np.max(np.abs(h_true))),
    }


def _sphere_to_xyz(lon: np.ndarray, lat: np.ndarray, ue: np.ndarray, vn: np.ndarray) -> np.ndarray:
    """3-D Cartesian wind vector from eastward/northward components."""
    east = np.stack([-np.sin(lon), np.cos(lon), np.zeros_like(lon)], axis=-1)
    north = np.stack([-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)], -1)
    return ue[..., None] * east + vn[..., None] * north


@dataclass(frozen=True)
class ShallowWaterCase:
    """A Williamson shallow-water initial state: winds, surface height and bottom topography.

    ``height`` is the free-surface height h + h_s (m); the prognostic fluid depth is
    ``height - surface``.
    """

    name: str
    radius: float = A_EARTH
    omega: float = OMEGA
    gravity: float = GRAVITY
    alpha: float = 0.0

    def wind(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def height(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def surface(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        return np.zeros_like(lon)

    def wind_xyz(self, xyz: np.ndarray) -> np.ndarray:
        """3-D wind vectors at unit-sphere points ``xyz`` (..., 3)."""
        lon = np.arctan2(xyz[..., 1], xyz[..., 0])
        lat = np.arcsin(np.clip(xyz[..., 2] / np.linalg.norm(xyz, axis=-1), -1.0, 1.0))
        return _sphere_to_xyz(lon, lat, *self.wind(lon, lat))


@dataclass(frozen=True)
class SteadyGeostrophic(ShallowWaterCase):
    """Williamson TC2: global steady-state nonlinear zonal geostrophic flow (exact solution)."""

    name: str = "williamson2"
    gh0: float = 2.94e4

    @property
    def u0(self) -> float:
        return 2.0 * np.pi * self.radius / (12.0 * DAY)

    def wind(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return SolidBodyFlow(self.alpha, self.radius).wind(lon, lat)

    def height(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        a, u0, al = self.radius, self.u0, self.alpha
        s = -np.cos(lon) * np.cos(lat) * np.sin(al) + np.sin(lat) * np.cos(al)
        return (self.gh0 - (a * self.omega * u0 + 0.5 * u0**2) * s**2) / self.gravity


@dataclass(frozen=True)
class IsolatedMountain(ShallowWaterCase):
    """Williamson TC5: zonal flow over an isolated conical mountain (2000 m, radius pi/9)."""

    name: str = "williamson5"
    u0: float = 20.0
    h0: float = 5960.0
    hs0: float = 2000.0
    mountain_radius: float = np.pi / 9.0
    lon_c: float = 1.5 * np.pi
    lat_c: float = np.pi / 6.0

    def wind(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.u0 * np.cos(lat), np.zeros_like(lat)

    def height(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        coef = self.radius * self.omega * self.u0 + 0.5 * self.u0**2
        return self.h0 - coef * np.sin(lat) ** 2 / self.gravity

    def surface(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        dlon = np.mod(lon - self.lon_c + np.pi, 2.0 * np.pi) - np.pi
        r = np.sqrt(np.minimum(self.mountain_radius**2, dlon**2 + (lat - self.lat_c) ** 2))
        return self.hs0 * (1.0 - r / self.mountain_radius)


@dataclass(frozen=True)
class RossbyHaurwitz(ShallowWaterCase):
    """Williamson TC6: Rossby-Haurwitz wave of wavenumber 4."""

    name: str = "williamson6"
    w: float = 7.848e-6
    k: float = 7.848e-6
    r: int = 4
    h0: float = 8000.0

    def wind(self, lon: np.ndarray, lat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, w, k, r = self.radius, self.w, self.k, self.r
        c = np.cos(lat)
        u = a * w * c + a * k * c ** (r - 1) * (r * np.sin(lat) ** 2 - c**2) * np.cos(r * lon)
        v = -a * k * r * c ** (r - 1) * np.sin(lat) * np.sin(r * lon)
        return u, v

    def height(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        a, w, k, r, om = self.radius, self.w, self.k, self.r, self.omega
        c2 = np.cos(lat) ** 2
        a_ = 0.5 * w * (2 * om + w) * c2 + 0.25 * k**2 * c2**r * (
            (r + 1) * c2 + (2 * r * r - r - 2) - 2 * r * r / c2
        )
        b_ = 2 * (om + w) * k / ((r + 1) * (r + 2)) * c2 ** (r / 2) * (
            (r * r + 2 * r + 2) - (r + 1) ** 2 * c2
        )
        c_ = 0.25 * k**2 * c2**r * ((r + 1) * c2 - (r + 2))
        gh = self.gravity * self.h0 + a * a * (a_ + b_ * np.cos(r * lon) + c_ * np.cos(2 * r * lon))
        return gh / self.gravity


def vector_errors(
    wind: np.ndarray, wind_true: np.ndarray, area: np.ndarray
) -> dict[str, float]:
    """Williamson et al. (1992) normalised l1, l2, l_inf errors of a vector field (..., 3)."""
    diff = np.linalg.norm(wind - wind_true, axis=-1)
    mag = np.linalg.norm(wind_true, axis=-1)
    return {
        "l1": float(np.sum(diff * area) / np.sum(mag * area)),
        "l2": float(np.sqrt(np.sum(diff**2 * area)) / np.sqrt(np.sum(mag**2 * area))),
        "linf": float(diff.max() / mag.max()),
    }
