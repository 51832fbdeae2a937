"""FV3 metric terms on one rank's subdomain (plus halos), computed from spherical geometry.

Array conventions follow FV3/pace, indices [i, j] = [x, y], ``n_halo`` points on each side:
cell centres (nx+2h, ny+2h); corners (nx+1+2h, ny+1+2h); x-faces / C-grid u (nx+1+2h, ny+2h);
y-faces / C-grid v (nx+2h, ny+1+2h); D-grid edges dx (nx+2h, ny+1+2h), dy (nx+1+2h, ny+2h).
The halo holds the neighbouring cells' geometry (from the neighbouring tile across a tile
edge), so metric terms are continuous across tile edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from fv3core.errors import FV3ConfigError
from fv3core.grid.cube import fill_tile_halos, tile_corners
from fv3core.grid.spherical import (
    cos_angle,
    great_circle_angle,
    local_east_north,
    midpoint,
    normalize,
    quad_area,
    tangent_direction,
    xyz_to_lonlat,
)
from stencils.directions import Direction

RADIUS = 6.3712e6  # m, FV3 constants_mod (GFS)
OMEGA = 7.292e-5  # 1/s


@dataclass(frozen=True)
class SubdomainSpec:
    """Which part of which tile a rank owns: global interior index range [i0, i1) x [j0, j1)."""

    resolution: int
    tile: int
    i0: int
    i1: int
    j0: int
    j1: int
    n_halo: int = 3

    def __post_init__(self) -> None:
        n = self.resolution
        if not (0 <= self.i0 < self.i1 <= n and 0 <= self.j0 < self.j1 <= n):
            raise FV3ConfigError(
                f"subdomain [{self.i0}:{self.i1}, {self.j0}:{self.j1}] lies outside tile C{n}"
            )
        if not 0 <= self.tile < 6:
            raise FV3ConfigError(f"tile={self.tile} is not a cubed-sphere tile (0..5)")

    @property
    def nx(self) -> int:
        return self.i1 - self.i0

    @property
    def ny(self) -> int:
        return self.j1 - self.j0

    @property
    def on_west(self) -> bool:
        return self.i0 == 0

    @property
    def on_east(self) -> bool:
        return self.i1 == self.resolution

    @property
    def on_south(self) -> bool:
        return self.j0 == 0

    @property
    def on_north(self) -> bool:
        return self.j1 == self.resolution

    def cells(self, d: Direction) -> int:
        """Compute cells along ``d`` (``nx`` or ``ny``)."""
        return self.nx if d.axis == 0 else self.ny

    def on_edges(self, d: Direction) -> tuple[bool, bool]:
        """Whether the subdomain touches the tile edge at the start and at the end along ``d``
        (west/east for x, south/north for y)."""
        return (self.on_west, self.on_east) if d.axis == 0 else (self.on_south, self.on_north)


def _sin_from_cos(c: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(0.0, 1.0 - c * c))


@dataclass(frozen=True, eq=False)
class MetricTerms:
    """Grid and metric terms of one subdomain; see the module docstring for array shapes.

    Lengths in metres, areas in m^2, angles in radians.  ``xyz`` is the corner points
    (unit vectors) with halo; everything else derives from it.
    """

    spec: SubdomainSpec
    xyz: np.ndarray = field(repr=False)
    radius: float = RADIUS
    omega: float = OMEGA
    alpha: float = 0.0  # rotation of the Coriolis axis (Williamson et al. 1992)

    @classmethod
    def build(
        cls,
        spec: SubdomainSpec,
        radius: float = RADIUS,
        omega: float = OMEGA,
        alpha: float = 0.0,
        grid_type: str = "equal_distance",
    ) -> MetricTerms:
        h = spec.n_halo
        full = fill_tile_halos(tile_corners(spec.resolution, grid_type), h, "corner")[spec.tile]
        xyz = full[spec.i0 : spec.i1 + 1 + 2 * h, spec.j0 : spec.j1 + 1 + 2 * h]
        return cls(spec=spec, xyz=np.ascontiguousarray(xyz), radius=radius, omega=omega, alpha=alpha)

    # ---- positions --------------------------------------------------------------------------
    @cached_property
    def xyz_agrid(self) -> np.ndarray:
        """Cell centres: normalised mean of the four corners."""
        p = self.xyz
        return midpoint(p[:-1, :-1], p[1:, :-1], p[1:, 1:], p[:-1, 1:])

    @cached_property
    def lonlat(self) -> tuple[np.ndarray, np.ndarray]:
        """Corner (lon, lat), radians."""
        return xyz_to_lonlat(self.xyz)

    @cached_property
    def lonlat_agrid(self) -> tuple[np.ndarray, np.ndarray]:
        """Cell-centre (lon, lat), radians."""
        return xyz_to_lonlat(self.xyz_agrid)

    @cached_property
    def xyz_xface(self) -> np.ndarray:
        """Midpoints of the x-faces (edges between corners (i, j) and (i, j+1))."""
        return midpoint(self.xyz[:, :-1], self.xyz[:, 1:])

    @cached_property
    def xyz_yface(self) -> np.ndarray:
        """Midpoints of the y-faces (edges between corners (i, j) and (i+1, j))."""
        return midpoint(self.xyz[:-1, :], self.xyz[1:, :])

    # ---- lengths ----------------------------------------------------------------------------
    @cached_property
    def dx(self) -> np.ndarray:
        """D-grid x-edge length, (nx+2h, ny+1+2h)."""
        return self.radius * great_circle_angle(self.xyz[:-1, :], self.xyz[1:, :])

    @cached_property
    def dy(self) -> np.ndarray:
        """D-grid y-edge length, (nx+1+2h, ny+2h)."""
        return self.radius * great_circle_angle(self.xyz[:, :-1], self.xyz[:, 1:])

    @cached_property
    def dxa(self) -> np.ndarray:
        """A-grid x-length: west-edge midpoint to east-edge midpoint, (nx+2h, ny+2h)."""
        m = self.xyz_xface
        return self.radius * great_circle_angle(m[:-1], m[1:])

    @cached_property
    def dya(self) -> np.ndarray:
        """A-grid y-length: south-edge midpoint to north-edge midpoint, (nx+2h, ny+2h)."""
        m = self.xyz_yface
        return self.radius * great_circle_angle(m[:, :-1], m[:, 1:])

    @cached_property
    def dxc(self) -> np.ndarray:
        """C-grid x-length: centre (i-1, j) to centre (i, j), on x-faces (nx+1+2h, ny+2h).

        The outermost faces (no centre beyond) use twice the centre-to-face distance."""
        a, m = self.xyz_agrid, self.xyz_xface
        out = np.empty(m.shape[:2])
        out[1:-1] = great_circle_angle(a[:-1], a[1:])
        out[0] = 2.0 * great_circle_angle(a[0], m[0])
        out[-1] = 2.0 * great_circle_angle(a[-1], m[-1])
        return self.radius * out

    @cached_property
    def dyc(self) -> np.ndarray:
        """C-grid y-length: centre (i, j-1) to centre (i, j), on y-faces (nx+2h, ny+1+2h)."""
        a, m = self.xyz_agrid, self.xyz_yface
        out = np.empty(m.shape[:2])
        out[:, 1:-1] = great_circle_angle(a[:, :-1], a[:, 1:])
        out[:, 0] = 2.0 * great_circle_angle(a[:, 0], m[:, 0])
        out[:, -1] = 2.0 * great_circle_angle(a[:, -1], m[:, -1])
        return self.radius * out

    # ---- areas ------------------------------------------------------------------------------
    @cached_property
    def area(self) -> np.ndarray:
        """Cell area from spherical geometry (two spherical triangles), (nx+2h, ny+2h)."""
        p = self.xyz
        return self.radius**2 * quad_area(p[:-1, :-1], p[1:, :-1], p[1:, 1:], p[:-1, 1:])

    @cached_property
    def rarea(self) -> np.ndarray:
        return 1.0 / self.area

    @cached_property
    def interior_area(self) -> np.ndarray:
        h = self.spec.n_halo
        return self.area[h:-h, h:-h]

    # ---- grid angles ------------------------------------------------------------------------
    @cached_property
    def cos_sg(self) -> np.ndarray:
        """Cosine of the angle between the local x- and y-grid directions, (5, nx+2h, ny+2h).

        Points as in FV3: 1 west-edge, 2 south-edge, 3 east-edge, 4 north-edge midpoint,
        5 cell centre.  0 on an orthogonal grid."""
        p, c = self.xyz, self.xyz_agrid
        mw, me = self.xyz_xface[:-1], self.xyz_xface[1:]
        ms, mn = self.xyz_yface[:, :-1], self.xyz_yface[:, 1:]
        p10, p11, p01 = p[1:, :-1], p[1:, 1:], p[:-1, 1:]
        out = np.empty((5,) + c.shape[:2])
        out[0] = cos_angle(mw, c, p01)  # x toward the centre, y along the west edge
        out[1] = cos_angle(ms, p10, c)  # x along the south edge, y toward the centre
        out[2] = -cos_angle(me, c, p11)  # x away from the centre
        out[3] = -cos_angle(mn, p11, c)  # y away from the centre
        out[4] = cos_angle(c, me, mn)
        return out

    @cached_property
    def sin_sg(self) -> np.ndarray:
        return _sin_from_cos(self.cos_sg)

    # ---- unit vectors -----------------------------------------------------------------------
    @cached_property
    def ec1(self) -> np.ndarray:
        """Unit vector along the local x-grid direction at cell centres, (nx+2h, ny+2h, 3)."""
        return tangent_direction(self.xyz_agrid, self.xyz_xface[1:])

    @cached_property
    def ec2(self) -> np.ndarray:
        """Unit vector along the local y-grid direction at cell centres, (nx+2h, ny+2h, 3)."""
        return tangent_direction(self.xyz_agrid, self.xyz_yface[:, 1:])

    @cached_property
    def east_north_agrid(self) -> tuple[np.ndarray, np.ndarray]:
        """Local east and north unit vectors at cell centres (for wind transforms)."""
        return local_east_north(self.xyz_agrid)

    def xface_normal(self) -> np.ndarray:
        """Unit normal of each x-face at its midpoint, pointing toward increasing i.

        Oriented by the face's own direction (toward +j) in the right-handed local frame, so it
        is also right next to the missing halo cells beyond a cube vertex."""
        t = self.xyz[:, 1:] - self.xyz[:, :-1]
        return normalize(np.cross(t, self.xyz_xface))

    def yface_normal(self) -> np.ndarray:
        """Unit normal of each y-face at its midpoint, pointing toward increasing j."""
        t = self.xyz[1:, :] - self.xyz[:-1, :]
        return normalize(np.cross(self.xyz_yface, t))

    # ---- by direction: the faces a direction's flow crosses ----------------------------------
    def face_midpoints(self, d: Direction) -> np.ndarray:
        """Midpoints of the faces crossed by flow along ``d`` (x: x-faces, y: y-faces)."""
        return self.xyz_xface if d.axis == 0 else self.xyz_yface

    def face_normal(self, d: Direction) -> np.ndarray:
        """Unit normals of the faces crossed by flow along ``d``, pointing along ``d``."""
        return self.xface_normal() if d.axis == 0 else self.yface_normal()

    def face_length(self, d: Direction) -> np.ndarray:
        """Lengths of the faces crossed by flow along ``d`` (x-faces: ``dy``, y-faces: ``dx``)."""
        return self.dy if d.axis == 0 else self.dx

    def centre_distance(self, d: Direction) -> np.ndarray:
        """Centre-to-centre distances across the faces crossed along ``d`` (``dxc``, ``dyc``)."""
        return self.dxc if d.axis == 0 else self.dyc

    # ---- Coriolis ---------------------------------------------------------------------------
    def _coriolis(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        a = self.alpha
        return 2.0 * self.omega * (
            -np.cos(lon) * np.cos(lat) * np.sin(a) + np.sin(lat) * np.cos(a)
        )

    @cached_property
    def fC(self) -> np.ndarray:
        """Coriolis parameter on cell corners (D-grid vorticity points)."""
        return self._coriolis(*self.lonlat)

    @cached_property
    def f0(self) -> np.ndarray:
        """Coriolis parameter on cell centres."""
        return self._coriolis(*self.lonlat_agrid)
