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
    FV3's ``nord_k`` and ``d2_divg``; non-hydrostatic, the del2 damping of ``w`` (FV3's
    ``damp_w`` with ``nord_w = 0``) of the sponge layers, 0 elsewhere."""

    start: int
    stop: int
    nord: int
    d2_bg: float
    damp_w: float = 0.0


def layer_damping(options: DynCoreOptions, npz: int, *,
                  nonhydrostatic: bool = False) -> list[LayerDamping]:  # fmt: skip
    """FV3 ``dyn_core``'s per-layer ``nord_k`` and ``d2_divg`` (its k-loop before ``d_sw``),
    grouped into runs of equal values, top down: one layer or ``n_sponge < 0``: ``nord`` and
    ``d2_bg`` everywhere; else ``nord`` and ``min(0.20, d2_bg)`` below the sponge, and del2
    (``nord_k = 0``) with ``max(0.01, d2_bg, d2_bg_k1)`` (``is_ideal_case``: without the 0.01)
    in the top layer, ``max(d2_bg, d2_bg_k2)`` in the second when ``d2_bg_k2 > 0.01`` and
    ``max(d2_bg, 0.2 d2_bg_k2)`` in the third when ``d2_bg_k2 > 0.05``.  ``nonhydrostatic``:
    the sponge layers also damp ``w`` (``nord_w = 0``, ``damp_w = d2_divg``); elsewhere ``w``
    gets the vorticity damping's ``damp_vt``, 0 without ``do_vort_damp``."""
    o = options.effective()
    per_layer = []
    for k in range(1, npz + 1):  # FV3's k
        nord_k, d2_divg, sponge = o.nord, min(0.20, o.d2_bg), True
        if npz == 1 or o.n_sponge < 0:
            d2_divg, sponge = o.d2_bg, False
        elif k == 1:
            nord_k = 0
            d2_divg = (max(o.d2_bg, o.d2_bg_k1) if o.is_ideal_case
                       else max(0.01, o.d2_bg, o.d2_bg_k1))  # fmt: skip
        elif k == 2 and o.d2_bg_k2 > 0.01:
            nord_k, d2_divg = 0, max(o.d2_bg, o.d2_bg_k2)
        elif k == 3 and o.d2_bg_k2 > 0.05:
            nord_k, d2_divg = 0, max(o.d2_bg, 0.2 * o.d2_bg_k2)
        else:
            sponge = False
        per_layer.append((nord_k, d2_divg, d2_divg if nonhydrostatic and sponge else 0.0))
    groups: list[LayerDamping] = []
    for k, key in enumerate(per_layer):
        if groups and (groups[-1].nord, groups[-1].d2_bg, groups[-1].damp_w) == key:
            groups[-1] = LayerDamping(groups[-1].start, k + 1, *key)
        else:
            groups.append(LayerDamping(k, k + 1, *key))
    return groups


@dataclass(frozen=True)
class NonHydrostaticOptions:
    """The keys FV3's non-hydrostatic core (``hydrostatic = .false.``) reads besides the
    hydrostatic core's, under FV3's names and with FV3's defaults (``fv_arrays.F90``): ``a_imp``
    selects the vertical solver (:meth:`fv3core.stencils.sim_solver.SolverChoice.from_a_imp`),
    ``p_fac`` the floor of the non-hydrostatic pressure, ``use_logp`` the pressure gradient in
    ``log(p)``, ``d2bg_zq`` the implicit vertical diffusion of ``w``, ``fast_tau_w_sec`` and
    ``rf_cutoff`` the solvers' Rayleigh damping of ``w``, ``kord_wz`` the remapping of ``w``.
    ``d_con`` (the heating from the kinetic energy the damping removes) is FV3's default 0 only:
    its ``del2_cubed`` of the heat source is not ported."""

    a_imp: float = 0.75
    p_fac: float = 0.05
    use_logp: bool = False
    d2bg_zq: float = 0.0
    fast_tau_w_sec: float = 0.0
    rf_cutoff: float = 30.0e2
    kord_wz: int = 8
    d_con: float = 0.0

    def __post_init__(self) -> None:
        from fv3core.stencils.sim_solver import SolverChoice
        from fv3core.vertical.remapping import SUPPORTED_KORD

        SolverChoice.from_a_imp(self.a_imp)
        SolverChoice.from_a_imp(self.a_imp, cgrid=True)
        if not 0.0 <= self.p_fac < 1.0:
            raise FV3ConfigError(f"p_fac={self.p_fac}: FV3's floor fraction of the pressure is in [0, 1)")
        if self.kord_wz not in SUPPORTED_KORD:
            raise FV3ConfigError(f"kord_wz={self.kord_wz}: fv3core remaps w with FV3's cubic-spline "
                                 f"profiles kord_wz in {SUPPORTED_KORD}")  # fmt: skip
        if self.fast_tau_w_sec < 0.0 or self.rf_cutoff <= 0.0:
            raise FV3ConfigError(f"fast_tau_w_sec={self.fast_tau_w_sec}, rf_cutoff={self.rf_cutoff}: "
                                 "use a time scale >= 0 s and a cut-off pressure > 0 Pa")  # fmt: skip
        if self.d_con > 1.0e-5:
            raise FV3ConfigError(
                f"d_con={self.d_con}: the non-hydrostatic heating from the dissipated kinetic "
                "energy (del2_cubed of heat_source) is not ported; use d_con = 0 (FV3's default)")
