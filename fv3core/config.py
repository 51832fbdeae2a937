"""Run configuration of the FV3 core: a frozen dataclass, loaded from YAML, CLI arguments or
an FV3 Fortran namelist (:meth:`FV3Config.from_namelist`, see fv3core.namelist)."""

from __future__ import annotations

import logging
import math
import types
import typing
from dataclasses import asdict, dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any

from fv3core.constants import Constants, constants_by_name
from fv3core.errors import FV3ConfigError
from fv3core.namelist import (
    FV3_3D_TEST_CASES,
    FV3_TEST_CASES,
    FV3Namelist,
    key_table,
    read_namelist,
)
from fv3core.scheme_limits import MAX_D4_BG, SUPPORTED_HORD

log = logging.getLogger(__name__)

#: FV3's hydrostatic 3-D core's cases: the Jablonowski-Williamson baroclinic wave (FV3's
#: test_case 13) and its balanced steady state (test_case 12: the same without the perturbation)
BAROCLINIC_CASES = ("baroclinic", "baroclinic_steady")
#: FV3's shallow-water cases (FV3's SW_DYNAMICS build): TC1 (advection of delp by prescribed
#: winds), TC2, TC5, TC6 and the Galewsky jet (FV3's test_case 1, 2, 5, 6, 7)
SHALLOW_WATER_CASES = ("williamson1", "williamson2", "williamson5", "williamson6", "galewsky")
#: cases this build can run
CASES = (*SHALLOW_WATER_CASES, *BAROCLINIC_CASES)
#: the length of each case's standard run when ``days`` is not given: TC1 one revolution
#: (Williamson et al. 1992), TC2 the reference runs' 5 days, TC5 15, TC6 14 (Williamson et al.
#: 1992), the Galewsky jet 6 (Galewsky et al. 2004), the baroclinic wave 10 (JW06)
CASE_DAYS: dict[str, float] = {"williamson1": 12.0, "williamson2": 5.0, "williamson5": 15.0,
                               "williamson6": 14.0, "galewsky": 6.0, "baroclinic": 10.0,
                               "baroclinic_steady": 10.0}  # fmt: skip
#: the highest Courant number accepted by the CFL estimate
MAX_COURANT = 1.0
#: FV3's divergence damping orders (nord: 0 del2, 1 del4, 2 del6, 3 del8)
NORD = (0, 1, 2, 3)
#: keys of earlier configurations and what replaced them, for the message that refuses them
RETIRED_KEYS: dict[str, str] = {
    "dynamics": "fv3core runs FV3's scheme only (c_sw/d_sw on FV3's grid): remove the key",
    "fv3_dddmp": "FV3's dddmp is the key dddmp: rename fv3_dddmp to dddmp",
}
#: the keys of the 3-D cases that :meth:`FV3Config.from_dict` fills when they are not given:
#: FV3's hydrostatic JW options (the Fortran reference runs' namelists, benchmarks/fortran_fv3)
BAROCLINIC_DEFAULTS: dict[str, Any] = {
    "nz": 26, "resolution": 48, "dt": 1800.0, "n_split": 4, "k_split": 2, "nord": 1,
    "d4_bg": 0.12, "dddmp": 0.0, "d2_bg": 0.0, "hord": 10, "hord_tr": 8, "kord_mt": 8,
    "kord_tm": -8, "kord_tr": 8, "n_sponge": 1, "d2_bg_k1": 0.15, "d2_bg_k2": 0.02,
    "is_ideal_case": True,
}
#: the 3-D core's keys and their values in the shallow-water configuration (FV3's defaults of
#: the SW_DYNAMICS build, which a shallow-water run must keep)
THREE_D_KEYS: dict[str, Any] = {
    "k_split": 1, "hord_tr": 8, "kord_mt": 8, "kord_tm": -8, "kord_tr": 8, "n_sponge": 0,
    "d2_bg_k1": 4.0, "d2_bg_k2": 2.0, "is_ideal_case": False, "checker_tr": False,
    "z_tracer": False, "fill": False, "consv_te": 0.0, "hydrostatic": True, "a_imp": 0.75,
    "p_fac": 0.05, "use_logp": False, "d2bg_zq": 0.0, "fast_tau_w_sec": 0.0, "rf_cutoff": 30.0e2,
    "kord_wz": 8,
}


@dataclass(frozen=True)
class FV3Config:
    """One FV3 run.

    The defaults are the namelist of the Fortran reference runs of FV3's shallow-water core
    (SHiELD's CI shallow-water tests at C48, ``../shared/fv3-reference/tc2_C48_d5``): the UFS
    physical constants, ``dt_atmos`` 1200 s in ``n_split`` 4 acoustic steps, ``nord`` 2 with
    ``d4_bg`` 0.12, ``hord`` 8; ``days`` the case's standard length (:data:`CASE_DAYS`). The 3-D
    cases fill what is not given from :data:`BAROCLINIC_DEFAULTS` (:meth:`from_dict`).

    ``dt`` is the large step (FV3's ``dt_atmos``; 0 picks the largest step with Courant number
    <= ``courant``), split into ``n_split`` acoustic steps; the Courant number is that of the
    acoustic step for the fastest gravity wave plus wind (|V| + sqrt(g h)). FV3's keys under
    FV3's names: ``nord`` 0-3 (the divergence damping order), ``d2_bg``, ``d4_bg``, ``dddmp``
    (the Smagorinsky coefficient), ``hord_mt``/``hord_vt``/``hord_dp`` (``hord`` sets all
    three), ``do_vort_damp`` and ``vtdm4`` (FV3's vorticity damping: del-(2 min(2, nord) + 2)
    flux damping of ``delp`` and the vorticity with coefficient ``vtdm4``, only when
    ``do_vort_damp``; ``vtdm4`` alone does nothing, as in FV3), ``beta`` (FV3's off-centring of
    the D-grid pressure gradient, ``grad1_p_update``; 0 <= beta < 1, 0 = fully backward).
    ``constants`` names the physical constants (fv3core.constants). ``print_freq``: FV3's,
    hours between diagnostic printouts (0 none, -n every n steps).
    """

    case: str = "williamson1"
    resolution: int = 48
    layout: int = 1
    days: float = 12.0
    dt: float = 1200.0
    courant: float = 0.5
    n_split: int = 4
    hord: int = 8
    alpha: float = 0.0
    backend: str = "numpy"
    nz: int = 1
    nord: int = 2
    d4_bg: float = 0.12
    constants: str = "ufs"
    dddmp: float = 0.0
    d2_bg: float = 0.0
    do_vort_damp: bool = False
    vtdm4: float = 0.0
    beta: float = 0.0
    hord_mt: int | None = None  # None: hord (set in __post_init__)
    hord_vt: int | None = None
    hord_dp: int | None = None
    hord_tm: int | None = None
    print_freq: int = 0
    k_split: int = 1
    hord_tr: int = 8
    kord_mt: int = 8
    kord_tm: int = -8
    kord_tr: int = 8
    n_sponge: int = 0
    d2_bg_k1: float = 4.0
    d2_bg_k2: float = 2.0
    is_ideal_case: bool = False
    checker_tr: bool = False
    z_tracer: bool = False
    fill: bool = False
    consv_te: float = 0.0
    hydrostatic: bool = True
    a_imp: float = 0.75
    p_fac: float = 0.05
    use_logp: bool = False
    d2bg_zq: float = 0.0
    fast_tau_w_sec: float = 0.0
    rf_cutoff: float = 30.0e2
    kord_wz: int = 8

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise FV3ConfigError(f"{f.name}={value}: must be a finite number")
        for key in ("hord_mt", "hord_vt", "hord_dp", "hord_tm"):
            if getattr(self, key) is None:
                object.__setattr__(self, key, self.hord)
        constants_by_name(self.constants)
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
        for key in ("hord", "hord_mt", "hord_vt", "hord_dp", "hord_tm", "hord_tr"):
            if getattr(self, key) not in SUPPORTED_HORD:
                raise FV3ConfigError(f"{key}={getattr(self, key)}: use one of {SUPPORTED_HORD}")
        if not self.days > 0:
            raise FV3ConfigError(f"days={self.days}: must be positive")
        if self.dt < 0 or not 0 < self.courant <= MAX_COURANT:
            raise FV3ConfigError(
                f"dt={self.dt}, courant={self.courant}: dt must be >= 0 (0 = automatic) and "
                f"0 < courant <= {MAX_COURANT}"
            )
        if self.n_split < 1:
            raise FV3ConfigError(f"n_split={self.n_split}: use a positive integer")
        if self.nord not in NORD:
            raise FV3ConfigError(
                f"nord={self.nord}: FV3's divergence damping order is 0 (del2), 1 (del4), "
                "2 (del6) or 3 (del8)"
            )
        if not isinstance(self.do_vort_damp, bool):
            raise FV3ConfigError(f"do_vort_damp={self.do_vort_damp!r}: use true or false")
        for key in ("d4_bg", "dddmp", "d2_bg", "vtdm4"):
            if not (math.isfinite(getattr(self, key)) and getattr(self, key) >= 0.0):
                raise FV3ConfigError(f"{key}={getattr(self, key)}: use a coefficient >= 0")
        if self.d4_bg > MAX_D4_BG:
            raise FV3ConfigError(
                f"d4_bg={self.d4_bg}: FV3's higher-order divergence damping is stable for "
                f"0 <= d4_bg <= {MAX_D4_BG} (FV3 uses 0.12-0.16)"
            )
        if not (math.isfinite(self.beta) and 0.0 <= self.beta < 1.0):
            raise FV3ConfigError(f"beta={self.beta}: the off-centring of the pressure gradient "
                                 "must be 0 <= beta < 1 (FV3's proper range 0-0.45)")  # fmt: skip
        if self.is_3d:
            self._check_3d()
        else:
            self._check_shallow_water()

    def _check_shallow_water(self) -> None:
        """The shallow-water cases: one layer, the 3-D core's keys at their defaults."""
        if self.nz != 1:
            raise FV3ConfigError(
                f"nz={self.nz}: the shallow-water case {self.case!r} has nz = 1; FV3's 3-D core "
                f"runs the cases {', '.join(BAROCLINIC_CASES)}"
            )
        for key, default in THREE_D_KEYS.items():
            if getattr(self, key) != default:
                raise FV3ConfigError(
                    f"{key}={getattr(self, key)!r} is read by FV3's 3-D core only (cases "
                    f"{', '.join(BAROCLINIC_CASES)}); the shallow-water case {self.case!r} "
                    f"needs {key}={default!r}"
                )
        if self.hord_tm != self.hord:
            raise FV3ConfigError(f"hord_tm={self.hord_tm} is read by FV3's 3-D core only; the "
                                 f"shallow-water case {self.case!r} needs hord_tm = hord")  # fmt: skip

    def _check_3d(self) -> None:
        """FV3's hydrostatic 3-D core: FV3's scheme, levels of set_eta, what the core ports."""
        from fv3core.vertical.eta import SUPPORTED_NPZ
        from fv3core.vertical.remapping import SUPPORTED_KORD

        if self.nz < 5 or self.nz not in SUPPORTED_NPZ:
            levels = ", ".join(str(n) for n in SUPPORTED_NPZ if n >= 5)
            raise FV3ConfigError(
                f"nz={self.nz}: FV3's 3-D core needs npz > 4 layers (it remaps only then) "
                f"and FV3's set_eta levels for npz; fv3core has {levels}"
            )
        if self.k_split < 1:
            raise FV3ConfigError(f"k_split={self.k_split}: use a positive integer")
        for key in ("kord_mt", "kord_tm", "kord_tr"):
            if abs(getattr(self, key)) not in SUPPORTED_KORD or (
                    key != "kord_tm" and getattr(self, key) < 0):  # fmt: skip
                raise FV3ConfigError(
                    f"{key}={getattr(self, key)}: fv3core's remapping implements FV3's "
                    f"cubic-spline profiles |kord| in {SUPPORTED_KORD} (negative only for "
                    "kord_tm: remap the temperature)"
                )
        if self.do_vort_damp:
            raise FV3ConfigError(
                "do_vort_damp=True: the 3-D core's vorticity damping needs deln_flux's mass-"
                "weighted form for pt, which fv3core does not have: set do_vort_damp=False"
            )
        for key in ("d2_bg_k1", "d2_bg_k2"):
            if not (math.isfinite(getattr(self, key)) and getattr(self, key) >= 0.0):
                raise FV3ConfigError(f"{key}={getattr(self, key)}: use a coefficient >= 0")
        if self.alpha != 0.0:
            raise FV3ConfigError(f"alpha={self.alpha}: FV3's test_case 13 has alpha = 0")
        if not self.hydrostatic:  # the non-hydrostatic core's keys, each refused by name
            self.dynamics_options()
        if self.consv_te > 1.0:
            raise FV3ConfigError(
                f"consv_te={self.consv_te}: FV3's energy fixer restores the fraction consv_te "
                "(0..1, 1: all) of the energy lost over each step, or adds a prescribed flux of "
                "consv_te W/m^2 when negative; use a value <= 1"
            )

    @property
    def is_3d(self) -> bool:
        """The case runs FV3's hydrostatic 3-D core."""
        return self.case in BAROCLINIC_CASES

    def dyn_core_options(self) -> Any:
        """The keys FV3's 3-D ``dyn_core`` reads (:class:`fv3core.dycore.options.DynCoreOptions`)."""
        from fv3core.dycore.options import DynCoreOptions

        return DynCoreOptions(n_split=self.n_split, nord=self.nord, dddmp=self.dddmp,
                              d2_bg=self.d2_bg, d4_bg=self.d4_bg, hord_mt=self.hord_mt,
                              hord_vt=self.hord_vt, hord_tm=self.hord_tm, hord_dp=self.hord_dp,
                              n_sponge=self.n_sponge, d2_bg_k1=self.d2_bg_k1,
                              d2_bg_k2=self.d2_bg_k2, is_ideal_case=self.is_ideal_case,
                              beta=self.beta)  # fmt: skip

    def nonhydrostatic_options(self) -> Any:
        """``hydrostatic = False``: the keys FV3's non-hydrostatic core reads
        (:class:`fv3core.dycore.options.NonHydrostaticOptions`); None when hydrostatic."""
        from fv3core.dycore.options import NonHydrostaticOptions

        if self.hydrostatic:
            return None
        keys = {f.name for f in fields(NonHydrostaticOptions)} & {f.name for f in fields(self)}
        return NonHydrostaticOptions(**{k: getattr(self, k) for k in keys})

    def dynamics_options(self) -> Any:
        """The keys FV3's 3-D ``fv_dynamics`` reads
        (:class:`fv3core.dycore.fv_dynamics.DynamicsOptions`)."""
        from fv3core.dycore.fv_dynamics import DynamicsOptions

        return DynamicsOptions(self.dyn_core_options(), k_split=self.k_split,
                               hord_tr=self.hord_tr, kord_mt=self.kord_mt,
                               kord_tm=self.kord_tm, kord_tr=self.kord_tr,
                               fill=self.fill, z_tracer=self.z_tracer,
                               consv_te=self.consv_te,
                               nonhydrostatic=self.nonhydrostatic_options())  # fmt: skip

    @property
    def physical_constants(self) -> Constants:
        """The :class:`~fv3core.constants.Constants` set named by ``constants``."""
        return constants_by_name(self.constants)

    @property
    def ranks(self) -> int:
        return 6 * self.layout**2

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> FV3Config:
        """The config of ``data`` (key -> value; ``source`` names it in errors).  For the 3-D
        cases (:data:`BAROCLINIC_CASES`) the keys not given are :data:`BAROCLINIC_DEFAULTS`
        (FV3's hydrostatic JW options); ``days`` not given is the case's :data:`CASE_DAYS`."""
        retired = sorted(set(data) & set(RETIRED_KEYS))
        if retired:
            raise FV3ConfigError(f"{source}: key {retired[0]!r}: {RETIRED_KEYS[retired[0]]}")
        if data.get("case") in BAROCLINIC_CASES:
            data = {**BAROCLINIC_DEFAULTS, **data}
        if data.get("case") in CASE_DAYS and "days" not in data:
            data = {**data, "days": CASE_DAYS[data["case"]]}
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise FV3ConfigError(
                f"{source}: unknown key(s) {unknown}; allowed keys are {sorted(known)}"
            )
        clean: dict[str, Any] = {}
        for key, value in data.items():
            typ = _field_types()[key]
            optional = typing.get_origin(typ) in (typing.Union, types.UnionType)
            if optional:
                if value is None:
                    clean[key] = None
                    continue
                typ = next(t for t in typing.get_args(typ) if t is not type(None))
            try:
                if typ is int and isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                if typ is bool and not isinstance(value, bool):
                    raise ValueError(value)
                if typ in (int, float) and isinstance(value, bool):  # YAML's yes/true
                    raise ValueError(value)
                clean[key] = typ(value)
            except (TypeError, ValueError) as exc:
                raise FV3ConfigError(
                    f"{source}: key {key!r} must be {typ.__name__}, got {value!r}"
                ) from exc
        try:
            return cls(**clean)
        except FV3ConfigError as exc:
            raise FV3ConfigError(f"{source}: {exc}") from None

    @classmethod
    def from_namelist(cls, path: str | Path, **overrides: Any) -> FV3Config:
        """The run an FV3 namelist file describes (fv3core.namelist), ``overrides`` (FV3Config
        keys, e.g. ``backend``, ``days``) on top.

        From the namelist: case (test_case), resolution (npx - 1), layout, days (main_nml
        days/hours/minutes/seconds), dt (dt_atmos), n_split (FV3's own choice when 0), nord,
        d4_bg, d2_bg, dddmp, do_vort_damp, vtdm4, beta, hord (hord_dp) and hord_mt/vt/dp,
        alpha, nz (npz), print_freq; with npz > 1 (FV3's 3-D build) also k_split, hord_tm,
        hord_tr, kord_mt/tm/tr, n_sponge, d2_bg_k1/k2, is_ideal_case, checker_tr, z_tracer and
        fill; constants 'ufs' unless overridden. An
        override of ``hord`` sets hord_mt/vt/dp too (unless they are overridden themselves)."""
        path = Path(path)
        nml = read_namelist(path)
        values = namelist_values(nml)
        namelist_alone = dict(values)
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise FV3ConfigError(
                f"overrides of {path}: unknown key(s) {unknown}; allowed keys are {sorted(known)}"
            )
        if nml.n_split == 0 and "n_split" not in overrides:
            log.info("%s: n_split = 0: FV3's choice for C%d, dt_atmos %d s is n_split = %d",
                     path, nml.resolution, nml.dt_atmos, values["n_split"])  # fmt: skip
        if "hord" in overrides:  # one PPM scheme given: it replaces the namelist's hord_*
            values.update({k: overrides["hord"] for k in ("hord_mt", "hord_vt", "hord_dp")})
        try:
            return cls.from_dict({**values, **overrides}, source=str(path))
        except FV3ConfigError:
            if not overrides:
                raise
            cls.from_dict(namelist_alone, source=str(path))  # the namelist alone: its own error
        # the namelist is fine: an option given over it is at fault, and is named so
        given = ", ".join(sorted(overrides))
        return cls.from_dict({**values, **overrides},
                             source=f"the options ({given}) given over the namelist {path}")

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
                    f"{MAX_COURANT}; use dt <= {MAX_COURANT / max_speed_over_dx:.0f} s, more "
                    "acoustic steps per step (n_split), or dt 0 (the largest stable step)"
                )
            if total < 0.5 * dt:
                raise FV3ConfigError(
                    f"days={self.days:g} ({total:g} s) is shorter than half a time step (dt = "
                    f"{dt:g} s): ask for at least {dt / 86400.0:.6g} days, or a smaller dt"
                )
            steps = max(1, round(total / dt))
            if abs(steps * dt - total) > 1e-9 * total:
                log.warning("days=%g is not a whole number of %g s steps: %d steps run, %g days",
                            self.days, dt, steps, steps * dt / 86400.0)  # fmt: skip
            return steps, dt
        steps = max(1, math.ceil(total * max_speed_over_dx / self.courant))
        return steps, total / steps


def namelist_values(nml: FV3Namelist) -> dict[str, Any]:
    """The FV3Config keys an FV3 namelist sets (see :meth:`FV3Config.from_namelist`); with
    npz > 1 also the 3-D core's (:data:`THREE_D_KEYS`, ``hord_tm``)."""
    three_d = {key: getattr(nml, key) for key in (*THREE_D_KEYS, "hord_tm")} if nml.is_3d else {}
    return {**three_d,
        "case": nml.case,
        "resolution": nml.resolution,
        "layout": nml.layout[0],
        "days": nml.run_seconds / 86400.0,
        "dt": float(nml.dt_atmos),
        "n_split": nml.acoustic_steps,
        "nz": nml.npz,
        "nord": nml.nord,
        "d4_bg": nml.d4_bg,
        "d2_bg": nml.d2_bg,
        "dddmp": nml.dddmp,
        "do_vort_damp": nml.do_vort_damp,
        "vtdm4": nml.vtdm4,
        "beta": nml.beta,
        "hord": nml.hord_dp,
        "hord_mt": nml.hord_mt,
        "hord_vt": nml.hord_vt,
        "hord_dp": nml.hord_dp,
        "alpha": nml.alpha,
        "print_freq": nml.print_freq,
        "constants": "ufs",
    }


#: the FV3Config key each used namelist key sets (namelist_values), for the docs
NAMELIST_TO_CONFIG: dict[str, str] = {
    "npx": "resolution = npx - 1", "npy": "(must equal npx)", "layout": "layout = layout(1)",
    "n_split": "n_split (FV3's choice when 0)", "hord_mt": "hord_mt", "hord_vt": "hord_vt",
    "hord_dp": "hord, hord_dp", "nord": "nord",
    "dddmp": "dddmp", "d2_bg": "d2_bg", "d4_bg": "d4_bg", "print_freq": "print_freq",
    "do_vort_damp": "do_vort_damp", "vtdm4": "vtdm4", "beta": "beta (>= 0)",
    "test_case": "case: " + "; ".join(
        f"{n} {c}" for n, c in {**FV3_TEST_CASES, **FV3_3D_TEST_CASES}.items()),
    "alpha": "alpha",
    "dt_atmos": "dt", "days": "days", "hours": "days (/ 24)", "minutes": "days (/ 1440)",
    "seconds": "days (/ 86400)", "npz": "nz",
    **{key: key for key in (*THREE_D_KEYS, "hord_tm")},
}  # fmt: skip


def namelist_table_markdown() -> str:
    """The namelist keys as the Markdown table of docs/fv3core/README.md (a test keeps the
    page equal to it): group, key, FV3's default, what fv3core does with it, FV3's meaning."""
    lines = ["| group | key | FV3 default | fv3core, npz = 1 (shallow water) | FV3 default, "
             "npz > 1 | fv3core, npz > 1 (3-D core) | FV3's meaning (default from) |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    hords = {"npz = 1": ("hord_mt", "hord_vt", "hord_dp"),
             "npz > 1": ("hord_mt", "hord_vt", "hord_dp", "hord_tm", "hord_tr")}  # fmt: skip

    def role(row: dict[str, str], build: str) -> str:
        three_d = build == "npz > 1"
        text = row["role_3d" if three_d else "role"]
        supported = row["supported_3d" if three_d else "supported"]
        if text == "used" and row["key"] in NAMELIST_TO_CONFIG:
            text = f"sets {NAMELIST_TO_CONFIG[row['key']]}"
        if row["key"] in hords[build]:
            text += f" ({', '.join(map(str, SUPPORTED_HORD))}: fv3core's PPM)"
        if supported:
            text = f"{supported} only" if text == "checked" else f"{text}; {supported} only"
        return text

    def shown(default: str) -> str:
        return default if default == "must be set" else f"`{default}`"

    for row in key_table():
        lines.append(f"| {row['group']} | `{row['key']}` | {shown(row['default'])} | "
                     f"{role(row, 'npz = 1')} | {shown(row['default_3d'])} | "
                     f"{role(row, 'npz > 1')} | {row['meaning']} ({row['source']}) |")  # fmt: skip
    return "\n".join(lines)


@cache
def _field_types() -> dict[str, Any]:
    return typing.get_type_hints(FV3Config)
