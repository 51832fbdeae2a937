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

    def stream_function(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        """psi with u = -(1/a) dpsi/dlat, v = (1/(a cos lat)) dpsi/dlon (m^2/s)."""
        a = self.alpha
        return -self.radius * self.u0 * (
            np.sin(lat) * np.cos(a) - np.cos(lon) * np.cos(lat) * np.sin(a)
        )

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
