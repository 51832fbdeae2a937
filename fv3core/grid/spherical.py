"""Spherical geometry on the unit sphere: conversions, great-circle distances, areas, angles.

All points are Cartesian unit vectors with the coordinate in the last axis (``[..., 3]``).
"""

from __future__ import annotations

import numpy as np


def normalize(xyz: np.ndarray) -> np.ndarray:
    """Project points onto the unit sphere."""
    return xyz / np.linalg.norm(xyz, axis=-1, keepdims=True)


def lonlat_to_xyz(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """(lon, lat) in radians to unit vectors."""
    return np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=-1)


def xyz_to_lonlat(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors to (lon in [0, 2 pi), lat in [-pi/2, pi/2])."""
    p = normalize(xyz)
    lon = np.where(
        np.abs(p[..., 0]) + np.abs(p[..., 1]) < 1e-10, 0.0, np.arctan2(p[..., 1], p[..., 0])
    )
    lon = np.mod(lon, 2.0 * np.pi)
    return lon, np.arcsin(np.clip(p[..., 2], -1.0, 1.0))


def midpoint(*points: np.ndarray) -> np.ndarray:
    """Normalised mean of points (the great-circle midpoint for two points)."""
    return normalize(sum(points))


def great_circle_angle(p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """Central angle between unit vectors (atan2 form, accurate for tiny and large angles)."""
    cross = np.linalg.norm(np.cross(p1, p2), axis=-1)
    return np.arctan2(cross, np.sum(p1 * p2, axis=-1))


def triangle_area(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Spherical excess of triangle abc (Van Oosterom & Strackee 1983), unit sphere."""
    triple = np.abs(np.sum(a * np.cross(b, c), axis=-1))
    denom = 1.0 + np.sum(a * b, axis=-1) + np.sum(b * c, axis=-1) + np.sum(c * a, axis=-1)
    return 2.0 * np.arctan2(triple, denom)


def quad_area(p00: np.ndarray, p10: np.ndarray, p11: np.ndarray, p01: np.ndarray) -> np.ndarray:
    """Area of the spherical quadrilateral p00-p10-p11-p01 (two triangles), unit sphere."""
    return triangle_area(p00, p10, p11) + triangle_area(p00, p11, p01)


def tangent_direction(at: np.ndarray, toward: np.ndarray) -> np.ndarray:
    """Unit tangent vector at ``at`` pointing along the great circle toward ``toward``."""
    t = toward - np.sum(toward * at, axis=-1, keepdims=True) * at
    return normalize(t)


def cos_angle(vertex: np.ndarray, p1: np.ndarray, p2: np.ndarray) -> np.ndarray:
    """Cosine of the spherical angle at ``vertex`` between the great circles to p1 and p2."""
    return np.sum(tangent_direction(vertex, p1) * tangent_direction(vertex, p2), axis=-1)


def local_east_north(xyz: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors pointing east and north at each point (east = (1,0,0)-ish at the poles)."""
    lon, lat = xyz_to_lonlat(xyz)
    east = np.stack([-np.sin(lon), np.cos(lon), np.zeros_like(lon)], axis=-1)
    north = np.stack(
        [-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)], axis=-1
    )
    return east, north
