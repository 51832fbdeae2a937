"""The ``fv_core_nml`` keys FV3's hydrostatic 3-D ``dyn_core`` reads, and its per-layer damping
(the sponge layers at the model top), as FV3's ``dyn_core.F90`` k-loop sets them before each
``d_sw`` call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from fv3core.errors import FV3ConfigError


class ShallowWaterKeys(Protocol):
    """The ``fv_core_nml`` keys FV3's shallow-water ``dyn_core`` (``SW_DYNAMICS``) reads, under
    FV3's names (:class:`fv3core.config.FV3Config` has them)."""

    nz: int
    n_split: int
    nord: int
    dddmp: float
    d2_bg: float
    d4_bg: float
    hord_mt: int
    hord_vt: int
    hord_dp: int
    do_vort_damp: bool
    vtdm4: float
    beta: float


@dataclass(frozen=True)
class DynCoreOptions:
    """FV3's keys under FV3's names and meaning (``fv_arrays.F90``; defaults are those of the
    build without ``SW_DYNAMICS`` where FV3 has one, e.g. ``n_sponge = 1``, ``d2_bg_k1 = 4``,
    ``d2_bg_k2 = 2``; FV3's ``fv_control`` resets ``d2_bg_k1`` > 1 to 0.20 and ``d2_bg_k2`` > 1
    to 0.015 when ``n_sponge = 0``, :meth:`effective` does the same).

    ``n_split`` acoustic steps per remapping step; ``nord``, ``dddmp``, ``d2_bg``, ``d4_bg``:
    divergence damping; ``hord_mt``/``hord_vt``/``hord_tm``/``hord_dp``: the PPM variants of
    the winds, vorticity, potential temperature and ``delp``; ``n_sponge`` < 0 (or one layer)
    turns the sponge off; ``d2_bg_k1``, ``d2_bg_k2``: the del2 divergence damping of the top two
    layers; ``is_ideal_case``: FV3's flag for idealised cases (the top layer's floor of 0.01 is
    not applied); ``beta``: the off-centring of the D-grid pressure gradient."""

    n_split: int
    nord: int = 1
    dddmp: float = 0.0
    d2_bg: float = 0.0
    d4_bg: float = 0.16
    hord_mt: int = 9
    hord_vt: int = 9
    hord_tm: int = 9
    hord_dp: int = 9
    n_sponge: int = 1
    d2_bg_k1: float = 4.0
    d2_bg_k2: float = 2.0
    is_ideal_case: bool = False
    beta: float = 0.0

    def __post_init__(self) -> None:
        if self.n_split < 1:
            raise FV3ConfigError(f"n_split={self.n_split}: use a positive integer")
        if self.nord not in (0, 1, 2, 3):
            raise FV3ConfigError(f"nord={self.nord}: FV3's nord is 0, 1, 2 or 3")

    def effective(self) -> DynCoreOptions:
        """The options after ``fv_control``'s reset of the sponge coefficients for
        ``n_sponge = 0``."""
        if self.n_sponge != 0:
            return self
        from dataclasses import replace

        return replace(self, d2_bg_k1=0.20 if self.d2_bg_k1 > 1.0 else self.d2_bg_k1,
                       d2_bg_k2=0.015 if self.d2_bg_k2 > 1.0 else self.d2_bg_k2)  # fmt: skip


@dataclass(frozen=True)
class LayerDamping:
    """The divergence damping ``d_sw`` gets for layers ``start:stop`` (0 = model top):
    FV3's ``nord_k`` and ``d2_divg``."""

    start: int
    stop: int
    nord: int
    d2_bg: float


def layer_damping(options: DynCoreOptions, npz: int) -> list[LayerDamping]:
    """FV3 ``dyn_core``'s per-layer ``nord_k`` and ``d2_divg`` (its k-loop before ``d_sw``),
    grouped into runs of equal values, top down: one layer or ``n_sponge < 0``: ``nord`` and
    ``d2_bg`` everywhere; else ``nord`` and ``min(0.20, d2_bg)`` below the sponge, and del2
    (``nord_k = 0``) with ``max(0.01, d2_bg, d2_bg_k1)`` (``is_ideal_case``: without the 0.01)
    in the top layer, ``max(d2_bg, d2_bg_k2)`` in the second when ``d2_bg_k2 > 0.01`` and
    ``max(d2_bg, 0.2 d2_bg_k2)`` in the third when ``d2_bg_k2 > 0.05``."""
    o = options.effective()
    per_layer = []
    for k in range(1, npz + 1):  # FV3's k
        nord_k, d2_divg = o.nord, min(0.20, o.d2_bg)
        if npz == 1 or o.n_sponge < 0:
            d2_divg = o.d2_bg
        elif k == 1:
            nord_k = 0
            d2_divg = (max(o.d2_bg, o.d2_bg_k1) if o.is_ideal_case
                       else max(0.01, o.d2_bg, o.d2_bg_k1))  # fmt: skip
        elif k == 2 and o.d2_bg_k2 > 0.01:
            nord_k, d2_divg = 0, max(o.d2_bg, o.d2_bg_k2)
        elif k == 3 and o.d2_bg_k2 > 0.05:
            nord_k, d2_divg = 0, max(o.d2_bg, 0.2 * o.d2_bg_k2)
        per_layer.append((nord_k, d2_divg))
    groups: list[LayerDamping] = []
    for k, (nord_k, d2_divg) in enumerate(per_layer):
        if groups and (groups[-1].nord, groups[-1].d2_bg) == (nord_k, d2_divg):
            last = groups[-1]
            groups[-1] = LayerDamping(last.start, k + 1, nord_k, d2_divg)
        else:
            groups.append(LayerDamping(k, k + 1, nord_k, d2_divg))
    return groups
