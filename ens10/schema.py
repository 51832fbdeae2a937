"""The ENS-10 schema: variables, levels, steps, file names and splits (Ashkboos et al. 2022).

Raw layout (as distributed): GRIB1 files ``output.pl.2018MMDD`` / ``output.sfc.2018MMDD``, one
per calendar date of the 2018 hindcast schedule (Mondays and Thursdays), each holding the 20
years 1998-2017 of that calendar date, steps 0/24/48 h and the 10 perturbed members.
Preprocessed layout (reference baselines): ``ENS10_{pl,sfc}_{mean,std}.nc`` (48 h ensemble mean
and population std at valid time, pressure levels 500/850 hPa as ``plev`` in Pa) and the ERA5
targets ``ERA5_z500.nc`` (``Z``), ``ERA5_t850.nc`` (``T``), ``ERA5_sfc_t2m.nc`` (``T2M``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

PRESSURE_LEVELS: tuple[int, ...] = (10, 50, 100, 200, 300, 400, 500, 700, 850, 925, 1000)
PREPROCESSED_LEVELS: tuple[int, ...] = (500, 850)
PL_VARIABLES: tuple[str, ...] = ("z", "t", "q", "w", "d", "u", "v")
SFC_VARIABLES: tuple[str, ...] = (
    "sst", "tcw", "tcwv", "cp", "msl", "tcc", "u10", "v10", "t2m", "tp", "skt",
)
VARIABLES: dict[str, tuple[str, ...]] = {"pl": PL_VARIABLES, "sfc": SFC_VARIABLES}
STEPS_H: tuple[int, ...] = (0, 24, 48)
LEAD_TIME_H = 48
MEMBERS = 10
YEARS: tuple[int, int] = (1998, 2017)
FILE_YEAR = 2018  # every raw file name carries the 2018 model-version date

# cfgrib variable name -> GRIB shortName where they differ
GRIB_SHORT_NAME: dict[str, str] = {"u10": "10u", "v10": "10v", "t2m": "2t"}
# cfgrib variable name -> name in the preprocessed netCDF files (cdo -t ecmwf)
NETCDF_NAME: dict[str, str] = {
    "z": "Z", "t": "T", "q": "Q", "w": "W", "d": "D", "u": "U", "v": "V",
    "sst": "SSTK", "tcw": "TCW", "tcwv": "TCWV", "cp": "CP", "msl": "MSL", "tcc": "TCC",
    "u10": "U10M", "v10": "V10M", "t2m": "T2M", "tp": "TP", "skt": "SKT",
}
CANONICAL_NAME: dict[str, str] = {v: k for k, v in NETCDF_NAME.items()}

UNITS: dict[str, tuple[str, str]] = {  # name -> (units, long_name)
    "z": ("m**2 s**-2", "Geopotential"), "t": ("K", "Temperature"),
    "q": ("kg kg**-1", "Specific humidity"), "w": ("Pa s**-1", "Vertical velocity"),
    "d": ("s**-1", "Divergence"), "u": ("m s**-1", "U component of wind"),
    "v": ("m s**-1", "V component of wind"), "sst": ("K", "Sea surface temperature"),
    "tcw": ("kg m**-2", "Total column water"), "tcwv": ("kg m**-2", "Total column vertically-integrated water vapour"),
    "cp": ("m", "Convective precipitation"), "msl": ("Pa", "Mean sea level pressure"),
    "tcc": ("(0 - 1)", "Total cloud cover"), "u10": ("m s**-1", "10 metre U wind component"),
    "v10": ("m s**-1", "10 metre V wind component"), "t2m": ("K", "2 metre temperature"),
    "tp": ("m", "Total precipitation"), "skt": ("K", "Skin temperature"),
}


@dataclass(frozen=True)
class Target:
    """A post-processing target: ENS-10 variable at a level, and its ERA5 file."""

    name: str
    kind: str  # "pl" or "sfc"
    variable: str  # cfgrib name
    level: int | None  # hPa, None for surface
    era5_file: str
    era5_variable: str

    @property
    def netcdf_variable(self) -> str:
        return NETCDF_NAME[self.variable]


TARGETS: dict[str, Target] = {
    "z500": Target("z500", "pl", "z", 500, "ERA5_z500.nc", "Z"),
    "t850": Target("t850", "pl", "t", 850, "ERA5_t850.nc", "T"),
    "t2m": Target("t2m", "sfc", "t2m", None, "ERA5_sfc_t2m.nc", "T2M"),
}

# The reference split (ENS-10's baseline code): train 1998-2015, test 2016-2017. Model selection
# uses a validation carve-out inside the training years: a model is fitted on the "fit" years
# with early stopping on the "validation" years, then refitted on all training years for the
# selected number of epochs (ens10.train). Test years are never looked at during training (the
# reference code selected on the test years; we do not).
SPLITS: dict[str, tuple[int, int]] = {
    "train": (1998, 2015),
    "fit": (1998, 2013),
    "validation": (2014, 2015),
    "test": (2016, 2017),
}


def target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        from ens10.errors import ENS10DataError

        raise ENS10DataError(
            f"unknown target {name!r}: choose one of {', '.join(TARGETS)}"
        ) from None


def calendar_dates() -> list[str]:
    """The 'MMDD' of every raw file: Mondays and Thursdays of 2018 (two initialisations a week)."""
    day = dt.date(FILE_YEAR, 1, 1)
    out = []
    while day.year == FILE_YEAR:
        if day.weekday() in (0, 3):
            out.append(day.strftime("%m%d"))
        day += dt.timedelta(days=1)
    return out


def raw_file_name(kind: str, mmdd: str) -> str:
    return f"output.{kind}.{FILE_YEAR}{mmdd}"


def preprocessed_file_name(kind: str, stat: str) -> str:
    return f"ENS10_{kind}_{stat}.nc"


def members_file_name(target_name: str) -> str:
    return f"ENS10_{target_name}_members.nc"


def efi_file_name(target_name: str) -> str:
    return f"ENS10_{target_name}_efi.nc"


def oracle_file_name(target_name: str) -> str:
    return f"SAMPLE_{target_name}_oracle.nc"

#: Baseline model names (ens10.baselines.models builds them).
MODELS = ("emos", "emos_global", "mlp", "lenet", "unet", "transformer")
