"""ENS-10 (Ashkboos et al., NeurIPS 2022 Datasets and Benchmarks): loaders for the raw GRIB and
the preprocessed netCDF layouts, a sample-data generator with a known truth, verification metrics
(CRPS, EECRPS, EFI, ...) and the post-processing baselines (EMOS, MLP, LeNet, U-Net, ensemble
Transformer). Depends on neither ``stencils`` nor ``mapping``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import xarray as xr

from ens10.errors import ENS10DataError
from ens10.io.preprocessed import open_efi, open_members, open_preprocessed, open_target
from ens10.io.raw import open_raw

KINDS = ("pl", "sfc", "pl_mean", "pl_std", "sfc_mean", "sfc_std")


def open_dataset(
    root: Path | str,
    kind: str = "pl",
    variables: Sequence[str] | None = None,
    levels: Sequence[int] | None = None,
    years=None,
    **kwargs,
) -> xr.Dataset:
    """Open ENS-10 data lazily (dask), latitude increasing.

    kind 'pl' / 'sfc': the raw GRIB members in ``root`` (extra keywords: dates, steps, chunks).
    kind 'pl_mean', 'pl_std', 'sfc_mean', 'sfc_std': the preprocessed netCDF files in ``root``.
    years: (first, last) inclusive or a list of years.
    """
    if kind in ("pl", "sfc"):
        return open_raw(root, kind, variables=variables, levels=levels, years=years, **kwargs)
    if kind in KINDS:
        level_type, stat = kind.split("_")
        return open_preprocessed(root, level_type, stat, variables=variables, levels=levels,
                                 years=years, **kwargs)
    raise ENS10DataError(f"unknown kind {kind!r}: choose one of {', '.join(KINDS)}")


__all__ = [
    "ENS10DataError",
    "open_dataset",
    "open_efi",
    "open_members",
    "open_preprocessed",
    "open_raw",
    "open_target",
]
