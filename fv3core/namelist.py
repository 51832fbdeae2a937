"""FV3's Fortran namelist (``input.nml``) as a frozen dataclass: :class:`FV3Namelist`.

:func:`read_namelist` parses a namelist file with ``f90nml`` and reads the groups of GFDL's solo
shallow-water core: ``fv_core_nml`` (model/fv_control.F90 ``read_namelist_fv_core_nml``),
``test_case_nml`` (tools/test_cases.F90 ``read_namelist_test_case_nml``), ``main_nml`` (the solo
driver, atmos_drivers solo/atmos_model.F90) and ``fv_grid_nml`` / ``fv_nest_nml``.
Key names, defaults and meanings are FV3's, from GFDL_atmos_cubed_sphere at commit
:data:`FV3_COMMIT` (``fv_arrays.F90`` lines cited per field) built with ``SW_DYNAMICS`` (the
solo shallow-water configuration of the reference runs), whose defaults differ from the 3-D
build for ``n_sponge``, ``d_ext``, ``nwat``, ``warm_start``, ``inline_q`` and ``adiabatic``
(``fv_arrays.F90`` lines 415-479).

Every key has a role (``KeyRole``):

* ``used``: fv3core reads it (:meth:`fv3core.config.FV3Config.from_namelist`);
* ``checked``: fv3core implements one value of it (FV3's default, or what a shallow-water run
  needs); any other value is refused by name;
* ``ignored``: it does not change the shallow-water numerics (I/O, diagnostics, tracers, which
  are passive here, vertical remapping, which a one-layer core does not do); any value FV3
  accepts is accepted.

The other keys of these groups (:data:`DEFAULT_ONLY`, features fv3core does not implement) are
accepted at FV3's default and refused otherwise; :data:`IGNORED_KEYS` are accepted whatever their
value; groups of other FMS/FV3 modules that do not act on an adiabatic shallow-water run are
ignored (:data:`IGNORED_GROUPS`). An unknown key or group, a value outside FV3's range, or a file
that does not parse is an :class:`~fv3core.errors.FV3ConfigError` naming the file, group, key
and value.
"""

from __future__ import annotations

import contextlib
import difflib
import enum
import io
import logging
import math
import re
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any

from fv3core.errors import FV3ConfigError
from fv3core.scheme_limits import SUPPORTED_HORD
from fv3core.vertical.eta import SUPPORTED_NPZ
from stencils.errors import InputFileError
from stencils.textfile import read_text

log = logging.getLogger(__name__)

#: the GFDL_atmos_cubed_sphere commit whose keys, defaults and meanings are transcribed here
FV3_COMMIT = "73e286963e7f453a6317bbcc2b891b310d8218a8"

#: FV3's valid horizontal advection schemes (model/tp_core.F90 line 78, tp_valid_schemes)
FV3_VALID_HORD = (-5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)

#: FV3's cubed-sphere test_case numbers (tools/test_cases.F90 lines 64-73) and their meaning
FV3_TEST_CASE_NAMES: dict[int, str] = {
    -1: "divergence conservation test",
    0: "idealized non-linear deformational flow",
    1: "cosine bell advection",
    2: "zonal geostrophically balanced flow",
    3: "non-rotating potential flow",
    4: "tropical cyclones (merger of Rankine vortices)",
    5: "zonal geostrophically balanced flow over an isolated mountain",
    6: "Rossby-Haurwitz wave number 4",
    7: "barotropic instability (Galewsky et al. 2004 jet)",
    8: "soliton propagation",
    9: "Bates and Li (1997) polar vortex",
    11: "cold start with USGS terrain (3-D)",
    12: "Jablonowski & Williamson steady state (3-D)",
    13: "Jablonowski & Williamson baroclinic wave (3-D)",
}
#: FV3 test_case number -> fv3core case name (``fv3core.config.CASES`` says which ones run)
FV3_TEST_CASES: dict[int, str] = {
    1: "williamson1",
    2: "williamson2",
    5: "williamson5",
    6: "williamson6",
    7: "galewsky",
}
#: FV3's 3-D test_case numbers fv3core runs (tools/test_cases.F90 lines 80-81)
FV3_3D_TEST_CASES: dict[int, str] = {12: "baroclinic_steady", 13: "baroclinic"}
#: the layer counts of the 3-D core: FV3's set_eta levels fv3core has, npz > 4 (FV3 remaps then)
NPZ_3D = tuple(n for n in SUPPORTED_NPZ if n > 4)
#: the keys whose defaults differ in FV3's 3-D build (fv_arrays.F90 lines 415-479, without
#: SW_DYNAMICS); :meth:`FV3Namelist.from_groups` takes them when npz > 1
THREE_D_BUILD_DEFAULTS: dict[str, Any] = {
    "n_sponge": 1, "d_ext": 0.02, "nwat": 3, "warm_start": True, "inline_q": False,
    "adiabatic": False,
}
TRACER_DAMPING = "tracer damping (nord_tr, trdm2) is not implemented"


class KeyRole(enum.Enum):
    """What fv3core does with a namelist key (see the module docstring)."""

    USED = "used"
    CHECKED = "checked"
    IGNORED = "ignored"


def _key(
    group: str,
    role: KeyRole,
    source: str,
    meaning: str,
    default: Any = MISSING,
    *,
    supported: tuple[Any, ...] = (),
    why: str = "",
    three_d: tuple[KeyRole, tuple[Any, ...], str] | None = None,
) -> Any:
    """A field of :class:`FV3Namelist`: FV3's default (MISSING: FV3 says "must be set"), the
    namelist group, what fv3core does with it, FV3's meaning, the Fortran line of the default
    and, for ``checked`` keys, the values fv3core implements and why only those.
    ``three_d``: (role, supported, why) in the 3-D build (npz > 1) where they differ."""
    meta = {"group": group, "role": role, "source": source, "meaning": meaning,
            "supported": supported, "why": why,
            "three_d": three_d or (role, supported, why)}  # fmt: skip
    return field(metadata=meta) if default is MISSING else field(default=default, metadata=meta)


FV = "fv_core_nml"
TC = "test_case_nml"
MAIN = "main_nml"
GRID = "fv_grid_nml"
NEST = "fv_nest_nml"
U, C, I = KeyRole.USED, KeyRole.CHECKED, KeyRole.IGNORED
_A = "fv_arrays.F90:"
_M = "atmos_drivers solo/atmos_model.F90:"


@dataclass(frozen=True, kw_only=True)
class FV3Namelist:
    """The FV3 namelist keys of a solo shallow-water run, with FV3's names and defaults.

    Each field's metadata holds its group, role, Fortran source line (default), FV3's meaning
    and, for checked keys, the supported values: :func:`key_table` lists them. Construction
    checks FV3's own ranges; :meth:`unsupported` lists what fv3core cannot run.
    """

    # --- fv_core_nml: domain ---------------------------------------------------------------
    npx: int = _key(FV, U, _A + "590", "grid corners along x of one tile: one more than the "
                    "cells across a cube face (C(npx-1)); must be set")  # fmt: skip
    npy: int = _key(FV, U, _A + "593", "grid corners along y of one tile; equal to npx on the "
                    "cubed sphere; must be set")  # fmt: skip
    npz: int = _key(FV, C, _A + "596", "number of vertical layers; must be set",
                    supported=(1,), why="the shallow-water core has one layer",
                    three_d=(U, NPZ_3D, "FV3's set_eta levels fv3core has, npz > 4"))  # fmt: skip
    ntiles: int = _key(FV, C, _A + "622", "number of tiles: 6 for the cubed sphere", 1,
                       supported=(6,), why="fv3core runs the 6-tile cubed sphere")  # fmt: skip
    layout: tuple[int, int] = _key(FV, U, _A + "1355", "ranks along x and y of each tile "
                                   "(6 * layout(1) * layout(2) ranks); must be set")  # fmt: skip
    io_layout: tuple[int, int] = _key(FV, I, _A + "1355", "output files per tile along x, y; "
                                      "each entry divides layout", (1, 1))  # fmt: skip
    grid_type: int = _key(FV, C, _A + "226", "grid: 0 equal-distance gnomonic (true), 1 "
                          "traditional equal-distance, 2 equal-angle gnomonic, 4-7 Cartesian "
                          "or regional", 0, supported=(0,),
                          why="fv3core builds FV3's default grid, the equal-distance gnomonic "
                          "cubed sphere")  # fmt: skip
    do_schmidt: bool = _key(FV, C, _A + "492", "stretch and rotate the grid (Schmidt "
                            "transformation, stretch_fac, target_lat/lon)", False,
                            supported=(False,), why="no grid stretching")  # fmt: skip
    hydrostatic: bool = _key(FV, C, _A + "840", "hydrostatic (true) or nonhydrostatic solver",
                             True, supported=(True,),
                             why="the shallow-water core is hydrostatic",
                             three_d=(U, (), ""))  # fmt: skip
    # --- fv_core_nml: the nonhydrostatic solver (hydrostatic = .false.) -------------------------
    a_imp: float = _key(FV, I, _A + "534", "the vertical solver of the nonhydrostatic core: > 0.999 "
                        "SIM1, 0.5-0.999 SIM (off-centred by a_imp), < -0.5 SIM3, < -0.999 SIM3p0, "
                        "-0.5..0.5 RIM_2D (nh_utils.F90)", 0.75,
                        three_d=(U, (), ""))  # fmt: skip
    p_fac: float = _key(FV, I, _A + "525", "safety factor of the nonhydrostatic pressure: the full "
                        "pressure is at least p_fac times the hydrostatic one", 0.05,
                        three_d=(U, (), ""))  # fmt: skip
    use_logp: bool = _key(FV, I, _A + "552", "the nonhydrostatic pressure gradient in log(p) (Lin "
                          "1997 variant)", False, three_d=(U, (), ""))  # fmt: skip
    d2bg_zq: float = _key(FV, I, _A + "286", "implicit vertical diffusion of w (nonhydrostatic)",
                          0.0, three_d=(U, (), ""))  # fmt: skip
    fast_tau_w_sec: float = _key(FV, I, _A + "702", "time scale (s) of the Rayleigh damping of w "
                                 "in the vertical solvers, above rf_cutoff (0: none)", 0.0,
                                 three_d=(U, (), ""))  # fmt: skip
    rf_cutoff: float = _key(FV, I, _A + "699", "pressure (Pa) below which no Rayleigh damping is "
                            "applied", 30.0e2, three_d=(U, (), ""))  # fmt: skip
    # --- fv_core_nml: time stepping ----------------------------------------------------------
    n_split: int = _key(FV, U, _A + "544", "acoustic (small) time steps per remapping step; 0: "
                        "FV3 chooses from resolution, dt_atmos and k_split "
                        "(fv_control.F90:983-1025)", 0)  # fmt: skip
    k_split: int = _key(FV, C, _A + "549", "vertical remappings per dt_atmos", 1,
                        supported=(1,), why="a one-layer core does not remap; set the acoustic "
                        "steps with n_split", three_d=(U, (), ""))  # fmt: skip
    na_init: int = _key(FV, C, _A + "638", "forward-backward dynamics steps that initialise "
                        "the model", 0, supported=(0,),
                        why="no initialisation steps are implemented")  # fmt: skip
    beta: float = _key(FV, U, _A + "403", "fraction of time off-centring of the pressure "
                       "gradient force (0: fully backward, proper range 0-0.45; hydrostatic "
                       "beta > 0: grad1_p_update, dyn_core.F90:1018)", 0.0)  # fmt: skip
    # --- fv_core_nml: advection ----------------------------------------------------------------
    hord_mt: int = _key(FV, U, _A + "237", "horizontal advection scheme of the momentum "
                        "(kinetic-energy) fluxes: 5/6 unlimited PPM, 8 Lin 2004 monotone, 10 "
                        "Lin's modification of Huynh's constraint (tp_core.F90)", 10)  # fmt: skip
    hord_vt: int = _key(FV, U, _A + "262", "horizontal advection scheme of absolute vorticity "
                        "(and w)", 10)  # fmt: skip
    hord_tm: int = _key(FV, I, _A + "266", "horizontal advection scheme of potential "
                        "temperature (the 3-D core; not used with SW_DYNAMICS)", 10,
                        three_d=(U, (), ""))  # fmt: skip
    hord_dp: int = _key(FV, U, _A + "268", "horizontal advection scheme of mass (delp, the "
                        "shallow-water depth)", 10)  # fmt: skip
    hord_tr: int = _key(FV, I, _A + "277", "horizontal advection scheme of tracers (the 3-D "
                        "core; the shallow-water core carries none)", 8,
                        three_d=(U, (), ""))  # fmt: skip
    kord_mt: int = _key(FV, I, _A + "253", "vertical remapping scheme of the winds (the 3-D "
                        "core; none with npz = 1)", 8, three_d=(U, (), ""))  # fmt: skip
    kord_wz: int = _key(FV, I, _A + "257", "vertical remapping scheme of w (nonhydrostatic "
                        "runs only)", 8, three_d=(U, (), ""))  # fmt: skip
    kord_tm: int = _key(FV, I, _A + "271", "vertical remapping scheme of temperature (< 0) or "
                        "potential temperature (the 3-D core; none with npz = 1)", -8,
                        three_d=(U, (), ""))  # fmt: skip
    kord_tr: int = _key(FV, I, _A + "283", "vertical remapping scheme of tracers (the 3-D "
                        "core; none with npz = 1)", 8, three_d=(U, (), ""))  # fmt: skip
    remap_te: bool = _key(FV, I, _A + "399", "remap total energy instead of temperature "
                          "(developmental; the 3-D core)", False,
                          three_d=(C, (False,), "fv3core remaps temperature or potential "
                                   "temperature (kord_tm)"))  # fmt: skip
    npz_type: str = _key(FV, I, _A + "602", "variant of set_eta's levels for npz (the 3-D "
                         "core)", "", three_d=(C, ("",), "fv3core ports set_eta's default "
                                              "levels"))  # fmt: skip
    # --- fv_core_nml: damping ------------------------------------------------------------------
    nord: int = _key(FV, U, _A + "289", "order of divergence damping: 0 del2, 1 del4, 2 del6, "
                     "3 del8", 1)  # fmt: skip
    dddmp: float = _key(FV, U, _A + "296", "dimensionless coefficient of the second-order "
                        "Smagorinsky-type divergence damping (0.2 if ICs are noisy)",
                        0.0)  # fmt: skip
    d2_bg: float = _key(FV, U, _A + "300", "coefficient of the background (constant) "
                        "second-order divergence damping, active whatever nord (0-0.02)",
                        0.0)  # fmt: skip
    d4_bg: float = _key(FV, U, _A + "304", "dimensionless coefficient of the higher-order "
                        "(nord >= 1) divergence damping, 0.1-0.16", 0.16)  # fmt: skip
    d_ext: float = _key(FV, C, _A + "419", "coefficient of external (barotropic) mode damping "
                        "(0-0.02)", 0.0, supported=(0.0,),
                        why="external-mode damping is not implemented")  # fmt: skip
    do_vort_damp: bool = _key(FV, U, _A + "387", "apply the vtdm4 flux damping to the fluxes of "
                              "vorticity and mass (del-(2 nord_v + 2), nord_v = min(2, nord); "
                              "dyn_core.F90:679-685)", False)  # fmt: skip
    vtdm4: float = _key(FV, U, _A + "309", "dimensionless coefficient of the flux damping, "
                        "(vtdm4 * da_min) ** (nord_v + 1); less than d4_bg; only with "
                        "do_vort_damp = .true.", 0.0)  # fmt: skip
    nord_tr: int = _key(FV, I, _A + "293", "order of tracer damping (the 3-D core's tracers)",
                        0, three_d=(C, (0,), TRACER_DAMPING))  # fmt: skip
    trdm2: float = _key(FV, I, _A + "315", "coefficient of del-2 tracer damping (the 3-D "
                        "core)", 0.0, three_d=(C, (0.0,), TRACER_DAMPING))  # fmt: skip
    n_sponge: int = _key(FV, I, _A + "416", "layers with the top sponge's 2dx filter (the 3-D "
                         "core; none with npz = 1); the 3-D build's default is 1", 0,
                         three_d=(U, (), ""))  # fmt: skip
    d2_bg_k1: float = _key(FV, I, _A + "316", "del2 damping coefficient of the top sponge "
                           "layer (the 3-D core)", 4.0, three_d=(U, (), ""))  # fmt: skip
    d2_bg_k2: float = _key(FV, I, _A + "325", "del2 damping coefficient of the second sponge "
                           "layer (the 3-D core)", 2.0, three_d=(U, (), ""))  # fmt: skip
    # --- fv_core_nml: initialisation and physics ---------------------------------------------
    adiabatic: bool = _key(FV, C, _A + "446", "skip all physics", True, supported=(True,),
                           why="fv3core runs no physics")  # fmt: skip
    warm_start: bool = _key(FV, C, _A + "439", "start from restart files instead of a cold "
                            "start", False, supported=(False,),
                            why="fv3core cold-starts from test_case (no restart files)")  # fmt: skip
    external_ic: bool = _key(FV, C, _A + "814", "initialise from an external data set "
                             "(res_latlon_dynamics)", False, supported=(False,),
                             why="fv3core cold-starts from test_case")  # fmt: skip
    is_ideal_case: bool = _key(FV, I, _A + "825", "an idealised test case (changes only the "
                               "top sponge of the 3-D core)", False,
                               three_d=(U, (), ""))  # fmt: skip
    mountain: bool = _key(FV, I, _A + "757", "take topography into account at start-up; the "
                          "shallow-water test cases set their own (TC5's cone) whatever it is",
                          True)  # fmt: skip
    adjust_dry_mass: bool = _key(FV, C, _A + "747", "adjust the global dry-air mass to dry_mass "
                                 "at start-up", False, supported=(False,),
                                 why="no mass fixer is implemented")  # fmt: skip
    nwat: int = _key(FV, I, _A + "424", "water species in condensate loading (none in the "
                     "shallow-water core); the 3-D build's default is 3", 0,
                     three_d=(C, (0,), "the adiabatic 3-D core has no condensate loading"))  # fmt: skip
    ncnst: int = _key(FV, I, _A + "609", "tracers advected by the dynamical core (from the "
                      "field_table; passive here)", 0)  # fmt: skip
    dnats: int = _key(FV, I, _A + "618", "tracers not advected by the dynamical core", 0)
    inline_q: bool = _key(FV, I, _A + "442", "advect tracers inside the acoustic loop; the "
                          "3-D build's default is .false.", True,
                          three_d=(C, (False,), "the 3-D core sub-cycles its tracers after "
                                   "the acoustic loop (tracer_2d)"))  # fmt: skip
    q_split: int = _key(FV, I, _A + "572", "sub-cycles of tracer advection (0: from the "
                        "Courant number; the 3-D core)", 0,
                        three_d=(C, (0,), "the tracer sub-cycles follow the Courant number"))  # fmt: skip
    z_tracer: bool = _key(FV, I, _A + "771", "transport tracers layer by layer, each with its "
                          "own sub-cycles (tracer_2d_1L; the 3-D core)", False,
                          three_d=(U, (), ""))  # fmt: skip
    fill: bool = _key(FV, I, _A + "721", "fill negative tracer values from the cells above "
                      "and below after remapping (fillz; the 3-D core)", False,
                      three_d=(U, (), ""))  # fmt: skip
    consv_te: float = _key(FV, I, _A + "681", "fraction of the total energy lost over a step "
                           "restored by a uniform heating (> 0.001; < -0.001: a prescribed "
                           "flux in W/m^2; the 3-D core)", 0.0, three_d=(U, (), ""))  # fmt: skip
    # --- fv_core_nml: diagnostics ---------------------------------------------------------
    print_freq: int = _key(FV, U, _A + "577", "hours between printouts of the diagnostics; 0 "
                           "never, -n every n dt_atmos steps (fv_diagnostics.F90:1668-1690)",
                           0)  # fmt: skip
    fv_debug: bool = _key(FV, I, _A + "754", "extra diagnostic printout in fv_dynamics", False)
    # --- test_case_nml --------------------------------------------------------------------------
    test_case: int = _key(TC, U, "test_cases.F90:125,6164", "the initial condition: 1 cosine "
                          "bell, 2 zonal geostrophic flow, 5 flow over a mountain, 6 "
                          "Rossby-Haurwitz wave, 7 barotropic instability, ... (test_cases.F90 "
                          "lines 62-105); 11 (default) is the 3-D USGS-terrain cold start; 12 "
                          "and 13 the 3-D Jablonowski-Williamson steady state and baroclinic "
                          "wave", 11)  # fmt: skip
    checker_tr: bool = _key(TC, I, "test_cases.F90:135,6154", "set every tracer to a checkerboard "
                            "(the 3-D core's test cases)", False,
                            three_d=(U, (), ""))  # fmt: skip
    alpha: float = _key(TC, U, "test_cases.F90:132,6162", "angle (rad) of the solid-body flow to "
                        "the polar axis, test cases 1 and 2", 0.0)  # fmt: skip
    # --- main_nml (solo driver) -----------------------------------------------------------------
    dt_atmos: int = _key(MAIN, U, _M + "74", "the large (physics) time step in s; must be set "
                         "(0 is fatal)")  # fmt: skip
    days: int = _key(MAIN, U, _M + "70", "run length: days", 0)
    hours: int = _key(MAIN, U, _M + "71", "run length: hours", 0)
    minutes: int = _key(MAIN, U, _M + "72", "run length: minutes", 0)
    seconds: int = _key(MAIN, U, _M + "73", "run length: seconds", 0)
    years: int = _key(MAIN, C, _M + "68", "run length: years (calendar runs only)", 0,
                      supported=(0,), why="give the run length in days, hours, minutes, "
                      "seconds")  # fmt: skip
    months: int = _key(MAIN, C, _M + "69", "run length: months (calendar runs only)", 0,
                       supported=(0,), why="give the run length in days, hours, minutes, "
                       "seconds")  # fmt: skip
    calendar: str = _key(MAIN, I, _M + "63", "calendar of the model clock", "no_calendar")
    current_time: tuple[int, int, int, int] = _key(MAIN, I, _M + "67", "start time (days, "
                                                   "hours, minutes, seconds)", (0, 0, 0, 0))  # fmt: skip
    # --- fv_grid_nml ------------------------------------------------------------------------
    grid_file: str = _key(GRID, C, _A + "225", "grid from a file, or 'Inline' (computed)",
                          "Inline", supported=("Inline",),
                          why="fv3core computes the grid")  # fmt: skip
    grid_name: str = _key(GRID, I, _A + "224", "name of the grid", "Gnomonic")
    # --- fv_nest_nml ------------------------------------------------------------------------------
    p_split: int = _key(NEST, C, "solo/atmosphere.F90:77", "fv_dynamics calls per dt_atmos "
                        "(nested runs)", 1, supported=(1,), why="fv3core calls the dynamics "
                        "once per dt_atmos")  # fmt: skip

    def __post_init__(self) -> None:
        problems = _range_problems(self)
        if problems:
            raise FV3ConfigError("; ".join(problems))

    # --- derived ------------------------------------------------------------------------------

    @property
    def resolution(self) -> int:
        """Cells along a cube face: C<npx - 1>."""
        return self.npx - 1

    @property
    def run_seconds(self) -> int:
        """The run length (main_nml days, hours, minutes, seconds), in s."""
        return ((self.days * 24 + self.hours) * 60 + self.minutes) * 60 + self.seconds

    @property
    def case(self) -> str | None:
        """fv3core's name of ``test_case`` (:data:`FV3_TEST_CASES`, :data:`FV3_3D_TEST_CASES`
        for npz > 1), None if it has none."""
        return (FV3_3D_TEST_CASES if self.is_3d else FV3_TEST_CASES).get(self.test_case)

    @property
    def acoustic_steps(self) -> int:
        """``n_split``, or FV3's own choice when it is 0 (:func:`fv3_default_n_split`)."""
        if self.n_split > 0:
            return self.n_split
        return fv3_default_n_split(self.npx, self.npy, self.ntiles, self.dt_atmos,
                                   k_split=self.k_split, hydrostatic=self.hydrostatic)  # fmt: skip

    @property
    def is_3d(self) -> bool:
        """FV3's 3-D build (npz > 1) rather than the shallow-water one (SW_DYNAMICS, npz = 1)."""
        return self.npz > 1

    @property
    def core(self) -> str:
        """Which of fv3core's cores runs the namelist, for messages."""
        if not self.is_3d:
            return "shallow-water core"
        return "hydrostatic 3-D core" if self.hydrostatic else "non-hydrostatic 3-D core"

    def role(self, key: str) -> tuple[KeyRole, tuple[Any, ...], str]:
        """``key``'s role, supported values and why, in this namelist's build."""
        meta = _field(key).metadata
        return meta["three_d"] if self.is_3d else (meta["role"], meta["supported"], meta["why"])

    def unsupported(self) -> list[str]:
        """One message per key whose value fv3core's core for this build cannot run."""
        out: list[str] = []
        for f in fields(self):
            _, supported, why = self.role(f.name)
            value = getattr(self, f.name)
            if supported and value not in supported:
                must = ("one of " if len(supported) > 4 else "") + _values(supported)
                out.append(f"{self._not_supported(f.name, value)} ({f.name} must be {must}: "
                           f"{why})")  # fmt: skip
        if self.npx != self.npy:
            out.append(f"{self._not_supported('npy', self.npy)} (npy must equal npx = {self.npx}: "
                       "fv3core's tiles are square)")  # fmt: skip
        if 0 in self.layout:
            out.append(f"{self._not_supported('layout', self.layout)} (layout 0 lets FV3 choose from "
                       "the number of ranks; give the layout, n,n)")
        elif self.layout[0] != self.layout[1]:
            out.append(f"{self._not_supported('layout', self.layout)} (layout must be square, "
                       "n,n: fv3core splits each tile into n x n ranks)")  # fmt: skip
        hords = ("hord_mt", "hord_vt", "hord_dp") + (("hord_tm", "hord_tr") if self.is_3d else ())
        for key in hords:
            value = getattr(self, key)
            if value not in SUPPORTED_HORD:
                must = ", ".join(map(str, SUPPORTED_HORD))
                out.append(f"{self._not_supported(key, value)} (fv3core's PPM implements hord "
                           f"{must})")  # fmt: skip
        cases = FV3_3D_TEST_CASES if self.is_3d else FV3_TEST_CASES
        if self.test_case not in cases:
            what = FV3_TEST_CASE_NAMES.get(self.test_case, "not a cubed-sphere test case")
            runs = ", ".join(f"{n} ({name})" for n, name in cases.items())
            other = (f"; with npz = 1 the shallow-water cases {', '.join(map(str, FV3_TEST_CASES))}"
                     if self.is_3d else "; with npz > 4 the 3-D cases "
                     f"{', '.join(map(str, FV3_3D_TEST_CASES))}")  # fmt: skip
            out.append(f"{self._not_supported('test_case', self.test_case)} ({what}; the FV3 "
                       f"test cases fv3core's {self.core} knows: {runs}{other})")  # fmt: skip
        if self.run_seconds <= 0:
            out.append("main_nml: the run length days/hours/minutes/seconds is 0: give a "
                       "positive run length")  # fmt: skip
        return out

    def _not_supported(self, key: str, value: Any) -> str:
        return (f"{_field(key).metadata['group']}: {key} = {fortran(value)} is not supported by "
                f"fv3core's {self.core}")

    def check_supported(self, source: str = "namelist") -> FV3Namelist:
        """``self``, or an FV3ConfigError listing every unsupported key of ``source``."""
        problems = self.unsupported()
        if problems:
            raise FV3ConfigError(f"{source}: " + "\n  ".join(["cannot run:", *problems]))
        return self

    # --- reading --------------------------------------------------------------------------------

    @classmethod
    def from_groups(cls, groups: Mapping[str, Mapping[str, Any]], source: str = "namelist"
                    ) -> FV3Namelist:  # fmt: skip
        """From parsed groups (``{group: {key: value}}``, keys lower case). Keys FV3 does not
        know, values of the wrong type or outside FV3's range are refused; unsupported values
        are not (see :meth:`check_supported`)."""
        problems: list[str] = []
        values: dict[str, Any] = {}
        fields_by_key = {(f.metadata["group"], f.name): f for f in fields(cls)}
        hints = _hints()
        for group, keys in groups.items():
            if group in IGNORED_GROUPS:
                log.debug("%s: &%s ignored (%s)", source, group, IGNORED_GROUPS[group])
                continue
            if group not in READ_GROUPS:
                problems.append(
                    f"&{group} is not a namelist group of FV3's solo shallow-water core; fv3core "
                    f"reads {', '.join(READ_GROUPS)} and ignores {', '.join(IGNORED_GROUPS)}"
                )
                continue
            for key, value in keys.items():
                f = fields_by_key.get((group, key))
                if f is not None:
                    try:
                        values[key] = _convert(value, hints[key])
                    except ValueError as exc:
                        problems.append(f"{group}: {key} = {fortran(value)}: {exc}")
                elif key in IGNORED_KEYS.get(group, ()):
                    log.debug("%s: %s: %s ignored (no effect on fv3core's dynamics)",
                              source, group, key)  # fmt: skip
                elif key in REFUSED_KEYS.get(group, {}):
                    problems.append(f"{group}: {key} = {fortran(value)} is not supported by "
                                    f"fv3core ({REFUSED_KEYS[group][key]})")
                elif key in DEFAULT_ONLY.get(group, {}):
                    default = DEFAULT_ONLY[group][key]
                    if not _same(value, default):
                        problems.append(
                            f"{group}: {key} = {fortran(value)} is not supported by fv3core: "
                            f"it implements FV3's default "
                            f"{key} = {fortran(default)} only; remove the key"
                        )
                else:
                    problems.append(_unknown_key(group, key))
        if isinstance(values.get("npz"), int) and values["npz"] > 1:  # FV3's 3-D build
            values = {**THREE_D_BUILD_DEFAULTS, **values}
        for f in fields(cls):
            if f.default is MISSING and f.name not in values:
                problems.append(f"{f.metadata['group']}: {f.name} must be set (FV3 has no "
                                f"default: {f.metadata['source']})")  # fmt: skip
        if problems:
            raise FV3ConfigError(f"{source}: " + "\n  ".join(["invalid namelist:", *problems]))
        try:
            return cls(**values)
        except FV3ConfigError as exc:
            raise FV3ConfigError(f"{source}: {exc}") from None

    @classmethod
    def from_text(cls, text: str, source: str = "<namelist>") -> FV3Namelist:
        """Parse Fortran namelist text (see :func:`read_namelist`)."""
        return cls.from_groups(_parse(text, source), source)


def read_namelist(path: str | Path, *, check_supported: bool = True) -> FV3Namelist:
    """The :class:`FV3Namelist` of the namelist file ``path`` (FV3's ``input.nml``).

    ``check_supported``: also refuse values fv3core's shallow-water core cannot run
    (:meth:`FV3Namelist.unsupported`). Every problem is an FV3ConfigError naming ``path``."""
    path = Path(path)
    try:
        text = read_text(path, "a Fortran namelist (input.nml, &fv_core_nml ... /)", what="namelist")
    except InputFileError as exc:
        raise FV3ConfigError(f"cannot read namelist {path}: it {exc.reason or exc}") from None
    nml = FV3Namelist.from_text(text, str(path))
    return nml.check_supported(str(path)) if check_supported else nml


def fv3_default_n_split(npx: int, npy: int, ntiles: int, dt_atmos: float, *, k_split: int = 1,
                        hydrostatic: bool = True, p_split: int = 1, stretch_fac: float = 1.0
                        ) -> int:  # fmt: skip
    """FV3's ``n_split`` when the namelist gives 0 (fv_control.F90 lines 983-1025, grid_type < 4):
    ``n0split = nint(ns0 * |dt_atmos| * dimx / (1800 * 180) + 0.49)`` with ``dimx = 4 (npx - 1)``
    on the cubed sphere and ``ns0`` 5 (hydrostatic, 6 from npx >= 120; nonhydrostatic 6/7/8),
    then ``n_split = nint(n0split / (k_split |p_split|) * stretch_fac + 0.5)``."""
    ns0 = 5.0
    if ntiles == 6:
        dimx = 4.0 * (npx - 1)
        if hydrostatic:
            ns0 = 6.0 if npx >= 120 else ns0
        else:
            ns0 = 6.0 if npx <= 45 else 7.0 if npx <= 90 else 8.0
    else:
        dimx = float(max(npx, 2 * (npy - 1)))
    n0split = max(1, _nint(ns0 * abs(dt_atmos) * dimx / (1800.0 * 180.0) + 0.49))
    return _nint(n0split / (k_split * abs(p_split)) * stretch_fac + 0.5)


# --- the keys that are not fields ------------------------------------------------------------

#: the namelist groups read into FV3Namelist
READ_GROUPS = (FV, TC, MAIN, GRID, NEST)

#: groups of other FMS/FV3 modules: none acts on an adiabatic shallow-water run
IGNORED_GROUPS: dict[str, str] = {
    "diag_manager_nml": "diagnostic output (FMS)",
    "fms_nml": "FMS run-time settings",
    "fms_io_nml": "FMS I/O",
    "fms2_io_nml": "FMS I/O",
    "mpp_io_nml": "FMS I/O",
    "fms_affinity_nml": "thread affinity",
    "fv_diag_column_nml": "column diagnostics",
    "fv_diag_plevs_nml": "pressure-level diagnostics",
    "coarse_graining_nml": "coarse-grained output",
    "nest_nml": "empty (deprecated)",
    "integ_phys_nml": "physics inside the dynamics (adiabatic = .true.)",
    "gfdl_mp_nml": "GFDL microphysics (adiabatic = .true.)",
    "fv_thermo_nml": "moist thermodynamics (adiabatic = .true.)",
    "sim_phys_nml": "solo simple physics (adiabatic = .true.)",
    "gfdl_sim_phys_nml": "solo simple physics (adiabatic = .true.)",
    "kessler_sim_phys_nml": "solo simple physics (adiabatic = .true.)",
    "reed_sim_phys_nml": "solo simple physics (adiabatic = .true.)",
    "ocean_rough_nml": "solo simple physics (adiabatic = .true.)",
    "external_ic_nml": "external initial conditions (external_ic = .false.)",
    "fv_nwp_nudge_nml": "nudging (nudge = .false.)",
    "surf_map_nml": "topography from a file (3-D cold starts)",
}

#: keys accepted whatever their value: I/O, diagnostics, restarts, tracers (passive here),
#: vertical levels and remapping (npz = 1), nonhydrostatic-only, physics-only and nesting/
#: regional-only settings, thread counts
IGNORED_KEYS: dict[str, frozenset[str]] = {
    FV: frozenset({
        "fv_eta_file", "npz_rst", "external_eta", "reset_eta", "remap_t",
        "write_3d_diags", "range_warn", "check_negative", "fv_land", "agrid_vel_rst",
        "write_coarse_restart_files", "write_coarse_diagnostics",
        "write_only_coarse_intermediate_restarts", "write_coarse_agrid_vel_rst",
        "write_coarse_dgrid_vel_rst", "write_optional_dgrid_vel_rst", "write_restart_with_bcs",
        "ignore_rst_cksum", "restart_from_agrid_winds", "res_latlon_dynamics",
        "res_latlon_tracers", "ncep_ic", "nggps_ic", "hrrrv3_ic", "ecmwf_ic", "use_gfso3",
        "fv_diag_ic", "halo_update_type", "reproduce_sum", "use_old_omega", "nf_omega",
        "pnats", "dnrts", "m_split", "fill_wz",
        "make_hybrid_z",
        "phys_hydrostatic", "use_hydro_pressure", "do_uni_zfull", "gfs_phil", "fill_gfs",
        "filter_phys", "dwind_2d", "tau_h2o", "delt_max", "prevent_diss_cooling",
        "pass_full_omega_to_physics_in_non_hydrostatic_mode", "nudge_qv", "nudge_dz",
        "dry_mass", "sg_cutoff", "fv_sg_adj_weak",
        "nord_zs_filter", "target_lat", "target_lon", "p_ref",
        "dx_const", "dy_const", "umax", "deglat", "domain_deg", "deglon_start", "deglon_stop",
        "deglat_start", "deglat_stop", "twowaynest", "nestbctype", "nestupdate", "nsponge",
        "s_weight", "update_blend", "bc_update_interval", "nrows_blend",
        "regional_bcs_from_gsi",
    }),  # fmt: skip
    TC: frozenset({"w_forcing"}),
    MAIN: frozenset({"memuse_interval", "atmos_nthreads", "use_hyper_thread"}),
}

#: features fv3core does not implement: accepted at FV3's default (fv_arrays.F90,
#: tools/test_cases.F90 lines 126-139 and 6150-6170, fv_control.F90 lines 108-123)
DEFAULT_ONLY: dict[str, dict[str, Any]] = {
    FV: {
        "do_cube_transform": False, "shift_fac": 18.0, "stretch_fac": 1.0, "nudge": False,
        "nudge_ic": False, "do_f3d": False, "read_increment": False, "do_diss_est": False,
        "lim_fac": 1.0, "smag2d": 0.0, "non_ortho": True, "d_con": 0.0, "ke_bg": 0.0,
        "convert_ke": False, "do_held_suarez": False, "fill_dp": False,
        "consv_am": False, "rf_fast": False, "no_dycore": False, "tau": 0.0,
        "fv_sg_adj": -1, "breed_vortex_inline": False,
        "hybrid_z": False, "make_nh": False, "n_zs_filter": 0, "full_zs_filter": False,
        "add_noise": -1.0, "nested": False, "regional": False, "adj_mass_vmr": 0,
    },  # fmt: skip
    TC: {
        "bubble_do": False, "nsolitons": 2, "soliton_umax": 50.0, "soliton_size": 750.0e3,
        "no_wind": False, "gaussian_dt": False, "dt_amp": 2.1, "dt_rad": 2000.0,
        "do_marine_sounding": False, "small_earth_scale": 1.0, "umean": 0.0, "vmean": 0.0,
        "dp_tc": 1115.0, "rp_tc": 100000.0, "ts_tc": 300.0,
    },  # fmt: skip
}

#: keys of features fv3core refuses at any value, with the reason
REFUSED_KEYS: dict[str, dict[str, str]] = {
    NEST: {key: "fv3core runs one global grid without nests" for key in (
        "grid_pes", "num_tile_top", "tile_coarse", "nest_refine", "nest_ioffsets",
        "nest_joffsets")},
}


def key_table() -> list[dict[str, str]]:
    """One row per FV3Namelist field: group, key, role, FV3 default, source, meaning, and
    role, default and supported values in FV3's 3-D build (npz > 1)."""
    rows = []
    for f in fields(FV3Namelist):
        default = "must be set" if f.default is MISSING else fortran(f.default)
        supported = f.metadata["supported"]
        role_3d, supported_3d, _ = f.metadata["three_d"]
        rows.append({
            "group": f.metadata["group"], "key": f.name, "role": f.metadata["role"].value,
            "default": default, "source": f.metadata["source"], "meaning": f.metadata["meaning"],
            "supported": _values(supported),
            "role_3d": role_3d.value,
            "default_3d": fortran(THREE_D_BUILD_DEFAULTS.get(f.name, f.default))
            if f.default is not MISSING else default,
            "supported_3d": _values(supported_3d),
        })  # fmt: skip
    return rows


def _values(supported: tuple[Any, ...]) -> str:
    if len(supported) > 4:
        return f"{', '.join(map(str, supported))}"
    return " or ".join(fortran(v) for v in supported)


def fortran(value: Any) -> str:
    """A value as a namelist writes it: ``.true.``, ``1,1``, ``'Inline'``, ``0.12``."""
    if isinstance(value, bool):
        return ".true." if value else ".false."
    if isinstance(value, list | tuple):
        return ",".join(fortran(v) for v in value)
    if isinstance(value, str):
        return repr(value)
    return str(value)


# --- helpers ---------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]*$")
_GROUP_START = re.compile(r"^[ \t]*[&$]([A-Za-z]\w*)", re.MULTILINE)


def _parse(text: str, source: str) -> dict[str, dict[str, Any]]:
    """Groups of a namelist text with f90nml; a text that does not parse, a repeated group, a
    key that is not a Fortran name or has no value, or an array set by index is refused."""
    import f90nml

    try:
        with contextlib.redirect_stdout(io.StringIO()):  # f90nml's scanner prints on errors
            nml = f90nml.reads(text)
    except Exception as exc:  # f90nml raises ValueError, AssertionError, StopIteration, ...
        detail = str(exc) or type(exc).__name__
        raise FV3ConfigError(
            f"{source}: not a valid Fortran namelist ({detail}); check for an unterminated "
            "string, a missing '/' at the end of a group or a stray '='"
        ) from None
    if not nml:
        raise FV3ConfigError(f"{source}: no namelist group found (expected &fv_core_nml ... /)")
    groups: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    parsed = {name.lower() for name in nml}
    for name in _GROUP_START.findall(text):
        if name.lower() not in parsed | {"end"}:  # f90nml drops a group that starts inside another one
            problems.append(f"&{name.lower()} starts before the group above it ends: end that "
                            "group with '/'")  # fmt: skip
    for group, key, count in _repeated_keys(text):  # a warning: files written by appending
        log.warning("%s: %s: %s is set %d times; the last value counts (as in Fortran): set it "
                    "once", source, group, key, count)  # fmt: skip
    names = [name.lower() for name in nml.keys()]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"&{name} appears {names.count(name)} times; give each group once")
    for name, group in nml.items():
        name = name.lower()
        if names.count(name) > 1:
            continue
        starts = getattr(group, "start_index", {}) or {}
        keys: dict[str, Any] = {}
        for key, value in group.items():
            key = key.lower()
            if not _IDENTIFIER.match(key):
                problems.append(f"{name}: {key!r} is not a Fortran name (a stray '=' or ',')")
            elif value is None or (isinstance(value, list) and None in value):
                problems.append(f"{name}: {key} has no value")
            elif any(s not in (None, 1) for s in starts.get(key, [None])):
                problems.append(f"{name}: {key} is set by index ({key}({starts[key][0]}) = ...); "
                                f"give all its values: {key} = ...")  # fmt: skip
            else:
                keys[key] = value
        groups[name] = keys
    if problems:
        raise FV3ConfigError(f"{source}: " + "\n  ".join(["invalid namelist:", *problems]))
    return groups


_STRING = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_ASSIGNED = re.compile(r"(?:^|[\s,])([A-Za-z]\w*)\s*(?:\([^)]*\))?\s*=")


def _repeated_keys(text: str) -> list[tuple[str, str, int]]:
    """(group, key, times) of every key assigned more than once in a group (case-insensitive,
    strings and ``!`` comments left out; an indexed ``key(i) =`` counts as its key)."""
    out: list[tuple[str, str, int]] = []
    bare = "\n".join(_STRING.sub("''", line).split("!", 1)[0] for line in text.splitlines())
    for match in re.finditer(r"[&$]([A-Za-z]\w*)(.*?)(?:/|(?:^|\s)[&$])", bare, re.S | re.M):
        group, body = match.group(1).lower(), match.group(2)
        if group == "end":
            continue
        keys = [k.lower() for k in _ASSIGNED.findall(body)]
        indexed = {k.lower() for k in re.findall(r"([A-Za-z]\w*)\s*\(", body)}
        for key in sorted({k for k in keys if keys.count(k) > 1 and k not in indexed}):
            out.append((group, key, keys.count(key)))
    return out


@cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(FV3Namelist)


def _convert(value: Any, typ: Any) -> Any:
    """A parsed namelist value as the field's type (Fortran's rules: no real into an integer,
    no number into a logical)."""
    if typing.get_origin(typ) is tuple:
        n = len(typing.get_args(typ))
        items = value if isinstance(value, list) else [value]
        if len(items) != n:
            raise ValueError(f"needs {n} values, got {len(items)}")
        return tuple(_convert(v, int) for v in items)
    if isinstance(value, list):
        raise ValueError(f"needs one value, got {len(value)}")
    if typ is bool:
        if not isinstance(value, bool):
            raise ValueError("must be a logical (.true. or .false.)")
        return value
    if typ is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("must be an integer")
        return value
    if typ is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("must be a real number")
        return float(value)
    if not isinstance(value, str):
        raise ValueError("must be a string")
    return value


def _same(value: Any, default: Any) -> bool:
    if isinstance(default, bool) or isinstance(value, bool):
        return value is default
    if isinstance(default, int | float) and isinstance(value, int | float):
        return float(value) == float(default)
    if isinstance(value, list):
        return all(_same(v, default) for v in value)
    return value == default


def _field(key: str) -> Any:
    return next(f for f in fields(FV3Namelist) if f.name == key)


def _unknown_key(group: str, key: str) -> str:
    known = [f.name for f in fields(FV3Namelist) if f.metadata["group"] == group]
    known += [*IGNORED_KEYS.get(group, ()), *DEFAULT_ONLY.get(group, {}),
              *REFUSED_KEYS.get(group, {})]
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    return f"{group}: {key} is not an FV3 {group} key (FV3 stops on it){hint}"


def _range_problems(nml: FV3Namelist) -> list[str]:
    """Values FV3 itself refuses or documents as invalid (each names group, key and value)."""
    out: list[str] = []

    def bad(key: str, rule: str) -> None:
        group = _field(key).metadata["group"]
        out.append(f"{group}: {key} = {fortran(getattr(nml, key))} is outside FV3's range "
                   f"({rule})")  # fmt: skip

    for key in ("npx", "npy"):
        if getattr(nml, key) < 2:
            bad(key, f"{key} counts grid corners: at least 2")
    for key in ("npz", "ntiles", "k_split", "dt_atmos", "p_split"):
        if getattr(nml, key) < 1:
            bad(key, f"{key} >= 1" + (" ('dt_atmos has not been specified')"
                                       if key == "dt_atmos" else ""))  # fmt: skip
    if any(n < 0 for n in nml.layout):
        bad("layout", "entries >= 0 (0: FV3 picks that entry from the number of ranks)")
    if any(n < 1 for n in nml.io_layout) or any(
        n > 0 and m > 0 and n % m for n, m in zip(nml.layout, nml.io_layout)
    ):
        bad("io_layout", "each entry >= 1 and a divisor of the layout entry")
    if not -1 <= nml.grid_type <= 7:
        bad("grid_type", "-1 (from file) to 7")
    for key in ("hord_mt", "hord_vt", "hord_tm", "hord_dp", "hord_tr"):
        if getattr(nml, key) not in FV3_VALID_HORD:
            bad(key, f"one of tp_core.F90's valid schemes {FV3_VALID_HORD}")
    for key in ("nord", "nord_tr"):
        if not 0 <= getattr(nml, key) <= 3:
            bad(key, "0 (del2) to 3 (del8)")
    for key in ("dddmp", "d2_bg", "d4_bg", "d_ext", "vtdm4"):
        value = getattr(nml, key)
        if not (math.isfinite(value) and value >= 0):
            bad(key, "a damping coefficient >= 0")
    if nml.n_split < 0:
        bad("n_split", "n_split >= 0 (0: FV3 chooses)")
    for key in ("na_init", "nwat", "ncnst", "dnats"):
        if getattr(nml, key) < 0:
            bad(key, f"{key} >= 0")
    for key in ("days", "hours", "minutes", "seconds", "years", "months"):
        if getattr(nml, key) < 0:
            bad(key, "a run length >= 0")
    if not math.isfinite(nml.alpha) or not math.isfinite(nml.beta):
        bad("alpha" if not math.isfinite(nml.alpha) else "beta", "a finite number")
    if nml.dt_atmos >= 1 and nml.run_seconds % nml.dt_atmos:
        out.append(f"main_nml: the run length {nml.run_seconds} s (days/hours/minutes/seconds) "
                   f"is not a multiple of dt_atmos = {nml.dt_atmos} (FV3: 'run length must be "
                   "multiple of atmosphere time step')")  # fmt: skip
    return out


def _nint(x: float) -> int:
    """Fortran's ``nint``: the nearest integer, halves away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))
