"""FV3's ``fv_grid_bounds_type`` and ``fv_grid_type`` (``gridstruct``) for the transliterated
routines: the index bounds of one rank and its metric terms as :class:`FArray` with FV3's
bounds, under FV3's names."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.fv3core.transliteration.farray import FArray, FVector


@dataclass(frozen=True)
class Bounds:
    """FV3's ``bd``: compute domain ``is:ie, js:je`` (tile-global, 1-based) and the data
    domain with ``ng`` halo points."""

    is_: int
    ie: int
    js: int
    je: int
    ng: int = 3

    @property
    def isd(self) -> int:
        return self.is_ - self.ng

    @property
    def ied(self) -> int:
        return self.ie + self.ng

    @property
    def jsd(self) -> int:
        return self.js - self.ng

    @property
    def jed(self) -> int:
        return self.je + self.ng


@dataclass
class Grid:
    """The ``gridstruct`` arrays the shallow-water routines read (FV3's names), of one rank.

    ``sin_sg[k]``/``cos_sg[k]`` for k = 1..9 (FV3's third index); ``grid``/``agrid`` are the
    (lon, lat) pairs of the corners and centres in radians; ``edge_w``... are FV3's 1-D a2b
    edge weights."""

    bd: Bounds
    npx: int
    npy: int
    dx: FArray
    dy: FArray
    dxa: FArray
    dya: FArray
    dxc: FArray
    dyc: FArray
    rdx: FArray
    rdy: FArray
    rdxa: FArray
    rdya: FArray
    rdxc: FArray
    rdyc: FArray
    area: FArray
    rarea: FArray
    area_c: FArray
    rarea_c: FArray
    sin_sg: dict[int, FArray]
    cos_sg: dict[int, FArray]
    cosa: FArray
    sina: FArray
    cosa_u: FArray
    cosa_v: FArray
    cosa_s: FArray
    sina_u: FArray
    sina_v: FArray
    rsin_u: FArray
    rsin_v: FArray
    rsina: FArray
    rsin2: FArray
    divg_u: FArray
    divg_v: FArray
    del6_u: FArray
    del6_v: FArray
    fC: FArray
    f0: FArray
    grid: tuple[FArray, FArray]
    agrid: tuple[FArray, FArray]
    edge_w: FVector
    edge_e: FVector
    edge_s: FVector
    edge_n: FVector
    da_min: float
    da_min_c: float
    sw_corner: bool = False
    se_corner: bool = False
    ne_corner: bool = False
    nw_corner: bool = False
    extra: dict[str, object] = field(default_factory=dict)
