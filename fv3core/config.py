"""Run configuration of the FV3 core: a frozen dataclass, loaded from YAML or CLI arguments."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from fv3core.errors import FV3ConfigError
from fv3core.stencils.divergence_damping import MAX_D4_BG
from fv3core.stencils.ppm import SUPPORTED_HORD

#: cases this build can run: tracer advection (TC1) and the shallow-water cases
CASES = ("williamson1", "williamson2", "williamson5", "williamson6")
DYNAMICS_CASES = ("williamson2", "williamson5", "williamson6")
#: the highest Courant number accepted by the CFL estimate
MAX_COURANT = 1.0


@dataclass(frozen=True)
class FV3Config:
    """One FV3 run.  ``dt`` 0 picks the largest step with Courant number <= ``courant``.

    Shallow-water cases: ``dt`` is the large step, split into ``n_split`` acoustic steps; the
    Courant number is that of the acoustic step for the fastest gravity wave plus wind
    (|V| + sqrt(g h)); ``dddmp`` is the del2 divergence-damping coefficient (dimensionless);
    ``nord`` 1 adds FV3's del4 divergence damping with coefficient ``d4_bg``.
    """

    case: str = "williamson1"
    resolution: int = 48
    layout: int = 1
    days: float = 12.0
    dt: float = 0.0
    courant: float = 0.5
    n_split: int = 1
    hord: int = 8
    alpha: float = 0.0
    backend: str = "numpy"
    nz: int = 1
    dddmp: float = 0.02
    nord: int = 0
    d4_bg: float = 0.12

    def __post_init__(self) -> None:
        if self.case not in CASES:
            raise FV3ConfigError(f"case={self.case!r} is unknown: use one of {CASES}")
        if self.resolution < 4:
            raise FV3ConfigError(f"resolution={self.resolution}: use at least C4")
        if self.layout < 1:
            raise FV3ConfigError(f"layout={self.layout}: use a positive integer")
        if self.resolution % self.layout:
            raise FV3ConfigError(
                f"resolution C{self.resolution} is not divisible by layout {self.layout}: "
                f"each rank needs an equal square of the tile"
            )
        if self.resolution // self.layout < 3:
            raise FV3ConfigError(
                f"resolution C{self.resolution} with layout {self.layout} leaves "
                f"{self.resolution // self.layout} cells per rank: FV3 needs at least 3 (the halo)"
            )
        if self.hord not in SUPPORTED_HORD:
            raise FV3ConfigError(f"hord={self.hord}: use one of {SUPPORTED_HORD}")
        if not self.days > 0:
            raise FV3ConfigError(f"days={self.days}: must be positive")
        if self.dt < 0 or not 0 < self.courant <= MAX_COURANT:
            raise FV3ConfigError(
                f"dt={self.dt}, courant={self.courant}: dt must be >= 0 (0 = automatic) and "
                f"0 < courant <= {MAX_COURANT}"
            )
        if self.n_split < 1:
            raise FV3ConfigError(f"n_split={self.n_split}: use a positive integer")
        if not 0.0 <= self.dddmp <= 0.2:
            raise FV3ConfigError(
                f"dddmp={self.dddmp}: the del2 divergence damping is stable for 0 <= dddmp <= 0.2"
            )
        if self.nord not in (0, 1):
            raise FV3ConfigError(
                f"nord={self.nord}: use 0 (del2 divergence damping) or 1 (plus del4)"
            )
        if not 0.0 <= self.d4_bg <= MAX_D4_BG:
            raise FV3ConfigError(
                f"d4_bg={self.d4_bg}: the del4 divergence damping is stable for "
                f"0 <= d4_bg <= {MAX_D4_BG} (FV3 uses 0.12-0.16)"
            )
        if self.nz != 1:
            raise FV3ConfigError(f"nz={self.nz}: the shallow-water configuration has nz = 1")

    @property
    def is_dynamics(self) -> bool:
        return self.case in DYNAMICS_CASES

    @property
    def ranks(self) -> int:
        return 6 * self.layout**2

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> FV3Config:
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise FV3ConfigError(
                f"{source}: unknown key(s) {unknown}; allowed keys are {sorted(known)}"
            )
        clean: dict[str, Any] = {}
        for key, value in data.items():
            typ = type(getattr(cls(), key))
            try:
                clean[key] = typ(value)
            except (TypeError, ValueError) as exc:
                raise FV3ConfigError(
                    f"{source}: key {key!r} must be {typ.__name__}, got {value!r}"
                ) from exc
        return cls(**clean)

    @classmethod
    def from_yaml(cls, path: str | Path) -> FV3Config:
        import yaml

        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError) as exc:
            raise FV3ConfigError(f"cannot read config file {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise FV3ConfigError(f"{path}: expected a mapping of keys to values")
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def steps_for(self, max_speed_over_dx: float) -> tuple[int, float]:
        """Number of steps and dt for ``days``; checks the CFL estimate.

        ``max_speed_over_dx``: max |u| / dx over the grid (1/s)."""
        total = self.days * 86400.0
        if self.dt > 0:
            dt = self.dt
            courant = dt * max_speed_over_dx
            if courant > MAX_COURANT:
                raise FV3ConfigError(
                    f"dt={dt} s is unstable at C{self.resolution}: CFL estimate {courant:.2f} > "
                    f"{MAX_COURANT}; use dt <= {MAX_COURANT / max_speed_over_dx:.0f} s or dt: 0"
                )
            return max(1, round(total / dt)), dt
        steps = max(1, math.ceil(total * max_speed_over_dx / self.courant))
        return steps, total / steps
