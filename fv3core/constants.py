"""Physical constants of an FV3 run: named sets, one frozen dataclass each.

FV3 takes its constants from FMS (``constants_mod``), which is compiled with one of its sets:
``GFS_CONSTANTS`` (the GFS/UFS set, used by SHiELD and UFS builds, and by the Fortran reference
runs in ``shared/fv3-reference``) or ``GFDL_CONSTANTS`` (FMS's default). fv3core's Williamson
test cases use the values of Williamson et al. (1992). Comparing fv3core with a Fortran FV3 run
is like for like only with the set that run was built with (``UFS`` for the reference runs).

Sources (read, values transcribed):

* FMS 2026.01, ``constants/gfs_constants.fh`` (unchanged in 2026.02-alpha3) -> :data:`UFS`
* FMS 2026.01, ``constants/gfdl_constants.fh`` -> :data:`GFDL`
* Williamson, Drake, Hack, Jakob, Swarztrauber (1992), J. Comput. Phys. 102, 211-224, sect. 2
  (a, Omega, g) -> :data:`WILLIAMSON`
"""

from __future__ import annotations

from dataclasses import dataclass

from fv3core.errors import FV3ConfigError


@dataclass(frozen=True)
class Constants:
    """A set of physical constants (SI units), as FMS's ``constants_mod`` provides them.

    ``kappa`` is a field, not a property, because FMS derives it differently per set: GFS
    computes ``kappa = rdgas / cp_air``, GFDL defines ``kappa = 2/7`` and derives ``cp_air``;
    each set below reproduces its FMS expression bit for bit.
    """

    name: str
    radius: float  #: radius of the Earth, m
    omega: float  #: rotation rate of the Earth, 1/s
    grav: float  #: acceleration due to gravity, m/s^2
    rdgas: float  #: gas constant of dry air, J/kg/K
    rvgas: float  #: gas constant of water vapour, J/kg/K
    cp_air: float  #: specific heat capacity of dry air at constant pressure, J/kg/K
    kappa: float  #: rdgas / cp_air, dimensionless
    hlv: float  #: latent heat of evaporation, J/kg
    hlf: float  #: latent heat of fusion, J/kg
    source: str  #: where the values come from

    def __post_init__(self) -> None:
        if abs(self.kappa - self.rdgas / self.cp_air) > 1e-14:
            raise FV3ConfigError(
                f"constants {self.name!r}: kappa={self.kappa} is not rdgas/cp_air="
                f"{self.rdgas / self.cp_air}"
            )

    @property
    def cp_vapor(self) -> float:
        """Specific heat capacity of water vapour, J/kg/K (FMS: ``4 * RVGAS``)."""
        return 4.0 * self.rvgas

    @property
    def zvir(self) -> float:
        """Virtual-temperature factor ``rvgas / rdgas - 1`` (FV3's ``zvir``)."""
        return self.rvgas / self.rdgas - 1.0


#: FMS GFS_CONSTANTS (gfs_constants.fh lines 35-51, 58): what SHiELD/UFS and the reference runs use
UFS = Constants(
    name="ufs",
    radius=6.3712e6,  # RADIUS = 6.3712E+6
    omega=7.2921e-5,  # OMEGA = 7.2921E-5
    grav=9.80665,  # GRAV_8 = 9.80665
    rdgas=287.05,  # RDGAS = 287.05
    rvgas=461.50,  # RVGAS = 461.50
    cp_air=1004.6,  # CP_AIR = 1004.6
    kappa=287.05 / 1004.6,  # KAPPA = RDGAS/CP_AIR
    hlv=2.500e6,  # HLV = 2.500E6
    hlf=3.3358e5,  # HLF = 3.3358e5
    source="FMS 2026.01 constants/gfs_constants.fh (GFS_CONSTANTS)",
)

#: FMS GFDL_CONSTANTS (gfdl_constants.fh lines 35-50), FMS's default set
GFDL = Constants(
    name="gfdl",
    radius=6371.0e3,  # RADIUS = 6371.0E+3
    omega=7.292e-5,  # OMEGA = 7.292E-5
    grav=9.80,  # GRAV = 9.80
    rdgas=287.04,  # RDGAS = 287.04
    rvgas=461.50,  # RVGAS = 461.50
    cp_air=287.04 / (2.0 / 7.0),  # CP_AIR = RDGAS/KAPPA
    kappa=2.0 / 7.0,  # KAPPA = 2.0/7.0
    hlv=2.500e6,  # HLV = 2.500E6
    hlf=3.34e5,  # HLF = 3.34E5
    source="FMS 2026.01 constants/gfdl_constants.fh (GFDL_CONSTANTS, FMS's default)",
)

#: Williamson et al. (1992) sect. 2: a, Omega, g; W92 defines no thermodynamic constants, so
#: rdgas ... hlf are GFDL's (the shallow-water equations do not use them)
WILLIAMSON = Constants(
    name="williamson",
    radius=6.37122e6,  # a = 6.37122 x 10^6 m
    omega=7.292e-5,  # Omega = 7.292 x 10^-5 s^-1
    grav=9.80616,  # g = 9.80616 m s^-2
    rdgas=GFDL.rdgas,
    rvgas=GFDL.rvgas,
    cp_air=GFDL.cp_air,
    kappa=GFDL.kappa,
    hlv=GFDL.hlv,
    hlf=GFDL.hlf,
    source="Williamson et al. (1992) J. Comput. Phys. 102 (a, Omega, g); the rest FMS GFDL",
)

#: every named set, by name
CONSTANTS: dict[str, Constants] = {c.name: c for c in (UFS, GFDL, WILLIAMSON)}


def constants_by_name(name: str) -> Constants:
    """The set called ``name`` (case-insensitive: ``ufs``, ``gfdl``, ``williamson``)."""
    try:
        return CONSTANTS[name.lower()]
    except KeyError:
        raise FV3ConfigError(
            f"constants={name!r} is unknown: use one of {', '.join(CONSTANTS)} (ufs: the GFS/UFS "
            "set of the Fortran FV3 reference runs; gfdl: FMS's default; williamson: W92)"
        ) from None
