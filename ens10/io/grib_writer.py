"""Write the raw ENS-10 layout as GRIB1 from ecCodes sample templates.

One file per calendar date and level type (``output.pl.2018MMDD``, ``output.sfc.2018MMDD``),
holding every year, step (0/24/48 h) and perturbed member (1-10) of that date, as in the ECMWF
hindcast archive: ``dataDate`` is the initialisation date (YYYYMMDD), ``dataTime`` 0000, type pf,
stream enfh, 16-bit simple packing, latitude 90 -> -90. SST is masked over land with a bitmap
(cfgrib reads it as NaN).
"""

from __future__ import annotations

import logging
from pathlib import Path

import eccodes
import numpy as np
from tqdm import tqdm

from ens10 import schema
from ens10.io.atomic import atomic_output

log = logging.getLogger(__name__)

MISSING = 9999.0


class GribTemplates:
    """One prepared GRIB1 handle per (variable, level); cloned once, then only date, step,
    member and values change per message."""

    def __init__(self, lat: np.ndarray, lon: np.ndarray) -> None:
        self.lat, self.lon = lat, lon
        self._handles: dict[tuple[str, int | None], int] = {}

    def _base(self, kind: str) -> int:
        sample = "regular_ll_pl_grib1" if kind == "pl" else "regular_ll_sfc_grib1"
        h = eccodes.codes_grib_new_from_samples(sample)
        grid = float(self.lon[1] - self.lon[0])
        keys = {
            "marsType": "pf", "marsStream": "enfh", "numberOfForecastsInEnsemble": schema.MEMBERS,
            "Ni": self.lon.size, "Nj": self.lat.size,
            "latitudeOfFirstGridPointInDegrees": float(self.lat[0]),
            "latitudeOfLastGridPointInDegrees": float(self.lat[-1]),
            "longitudeOfFirstGridPointInDegrees": float(self.lon[0]),
            "longitudeOfLastGridPointInDegrees": float(self.lon[-1]),
            "iDirectionIncrementInDegrees": grid, "jDirectionIncrementInDegrees": grid,
            "dataTime": 0, "bitsPerValue": 16,
        }
        for k, v in keys.items():
            eccodes.codes_set(h, k, v)
        return h

    def handle(self, var: str, level: int | None) -> int:
        key = (var, level)
        if key not in self._handles:
            h = self._base("sfc" if level is None else "pl")
            eccodes.codes_set(h, "shortName", schema.GRIB_SHORT_NAME.get(var, var))
            if level is not None:
                eccodes.codes_set(h, "level", level)
            if var == "sst":
                eccodes.codes_set(h, "bitmapPresent", 1)
                eccodes.codes_set(h, "missingValue", MISSING)
            self._handles[key] = h
        return self._handles[key]

    def write(self, fh, var: str, level: int | None, year: int, mmdd: str, step: int,
              number: int, values: np.ndarray) -> None:
        h = self.handle(var, level)
        eccodes.codes_set_long(h, "dataDate", year * 10000 + int(mmdd))
        eccodes.codes_set_long(h, "step", step)
        eccodes.codes_set_long(h, "number", number)
        flat = np.asarray(values, dtype=np.float64).ravel()
        if var == "sst":
            flat = np.where(np.isfinite(flat), flat, MISSING)
        eccodes.codes_set_values(h, flat)
        eccodes.codes_write(h, fh)

    def close(self) -> None:
        for h in self._handles.values():
            eccodes.codes_release(h)
        self._handles.clear()


def write_grib_layout(gen, out_dir: Path) -> list[Path]:
    """Raw GRIB files for the generator's GRIB dates/years/levels; returns the paths."""
    cfg = gen.config
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dates = cfg.dates if cfg.grib_dates is None else cfg.dates[: cfg.grib_dates]
    years = cfg.year_list
    if cfg.grib_years is not None:
        years = [y for y in years if cfg.grib_years[0] <= y <= cfg.grib_years[1]]
    templates = GribTemplates(gen.lat, gen.lon)
    written = []
    try:
        jobs = [(kind, d) for d in dates for kind in ("pl", "sfc")]
        for kind, mmdd in tqdm(jobs, desc="sample GRIB", unit="file", leave=False):
            path = out_dir / schema.raw_file_name(kind, mmdd)
            levels = cfg.grib_levels if kind == "pl" else (None,)
            with atomic_output(path) as tmp, open(tmp, "wb") as fh:
                for year in years:
                    for step in schema.STEPS_H:
                        for var in schema.VARIABLES[kind]:
                            for level in levels:
                                x = gen.members(var, level, step, year, mmdd)
                                for k in range(schema.MEMBERS):
                                    templates.write(fh, var, level, year, mmdd, step, k + 1, x[k])
            written.append(path)
    finally:
        templates.close()
    return written
