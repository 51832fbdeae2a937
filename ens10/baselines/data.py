"""Predictor/target tensors of a split, read from the preprocessed layout, and their normalisation.

Predictors at each grid point (the reference MLP's choice): ensemble mean and std of every
variable at the target's level (pl: Z T Q W D U V at 500 or 850 hPa; sfc: the 11 surface
fields), a sea mask for surface targets (SST is NaN over land: standardised predictors are set to
0 there and the mask says so), and the location features sin(lat), cos(lat)sin(lon),
cos(lat)cos(lon). Channels are standardised with training-split statistics.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ens10 import schema
from ens10.errors import ENS10DataError
from ens10.grid import location_features
from ens10.io.preprocessed import open_members, open_preprocessed, target_fields

log = logging.getLogger(__name__)

LOCATION_INPUTS = ("loc_sin_lat", "loc_cos_lat_sin_lon", "loc_cos_lat_cos_lon")


@dataclass
class SplitArrays:
    """Unnormalised arrays of one split: predictors (T, C, H, W), target stats and truth (T, H, W)."""

    predictors: np.ndarray
    inputs: list[str]
    mean: np.ndarray
    std: np.ndarray
    obs: np.ndarray
    members: np.ndarray | None
    times: np.ndarray
    lat: np.ndarray
    lon: np.ndarray


def split_years(split: str) -> tuple[int, int]:
    try:
        return schema.SPLITS[split]
    except KeyError:
        raise ENS10DataError(f"unknown split {split!r}: use {', '.join(schema.SPLITS)}") from None


def load_split(data_dir: Path | str, target: str, split: str, members: bool = False) -> SplitArrays:
    """Read the predictors and targets of ``split`` (a name of :data:`ens10.schema.SPLITS`)."""
    t = schema.target(target)
    years = split_years(split)
    fields = target_fields(data_dir, target, years=years).load()
    arrays, names = [], []
    levels = [t.level] if t.level is not None else None
    for stat in ("mean", "std"):
        ds = open_preprocessed(data_dir, t.kind, stat, levels=levels, years=years)
        for var in schema.VARIABLES[t.kind]:
            name = schema.NETCDF_NAME[var]
            da = ds[name]
            if t.level is not None:
                da = da.isel(plev=0, drop=True)
            arrays.append(da.values.astype(np.float32))
            names.append(f"{name}_{stat}")
    order = [names.index(f"{schema.NETCDF_NAME[v]}_{s}") for v in schema.VARIABLES[t.kind] for s in ("mean", "std")]
    arrays = [arrays[i] for i in order]
    names = [names[i] for i in order]
    lat, lon = fields["lat"].values, fields["lon"].values
    nt = fields.sizes["time"]
    if t.kind == "sfc":
        sea = np.isfinite(arrays[names.index("SSTK_mean")]).astype(np.float32)
        arrays.append(sea)
        names.append("sea_mask")
    loc = location_features(lat, lon).astype(np.float32)
    for k, name in enumerate(LOCATION_INPUTS):
        arrays.append(np.broadcast_to(loc[k], (nt, *loc[k].shape)))
        names.append(name)
    mem = None
    if members:
        mem = open_members(data_dir, target, years=years).transpose("time", "number", "lat", "lon")
        mem = mem.values.astype(np.float32)
    return SplitArrays(
        predictors=np.stack(arrays, axis=1), inputs=names,
        mean=fields["mean"].values.astype(np.float32), std=fields["std"].values.astype(np.float32),
        obs=fields["obs"].values.astype(np.float32), members=mem, times=fields["time"].values,
        lat=lat, lon=lon,
    )


def fit_normalisation(train: SplitArrays) -> dict:
    """Training-split statistics: per-channel mean/std (location and mask channels untouched),
    the target's global mean/std, and per-grid-point mean/std of the ensemble mean (for EMOS)."""
    cm, cs = [], []
    for k, name in enumerate(train.inputs):
        if name in LOCATION_INPUTS or name == "sea_mask":
            cm.append(0.0)
            cs.append(1.0)
            continue
        v = train.predictors[:, k]
        m, s = float(np.nanmean(v)), float(np.nanstd(v))
        cm.append(m)
        cs.append(s if s > 0 else 1.0)
    spread = np.nanstd(train.mean, axis=0)
    spread = np.where(spread > 0, spread, 1.0)
    return {
        "channel_mean": cm,
        "channel_std": cs,
        "target_loc": float(np.nanmean(train.obs)),
        "target_scale": float(np.nanstd(train.obs)),
        "emos_loc": torch.from_numpy(np.nanmean(train.mean, axis=0).astype(np.float32)),
        "emos_spread": torch.from_numpy(spread.astype(np.float32)),
        "n_location": len(LOCATION_INPUTS),
    }


class FieldTensors:
    """Normalised tensors of a split; ``batch(idx)`` gives (x, mean, std, obs, members)."""

    def __init__(self, arrays: SplitArrays, norm: dict) -> None:
        m = np.asarray(norm["channel_mean"], np.float32).reshape(1, -1, 1, 1)
        s = np.asarray(norm["channel_std"], np.float32).reshape(1, -1, 1, 1)
        x = (arrays.predictors - m) / s
        self.x = torch.from_numpy(np.nan_to_num(x, nan=0.0).astype(np.float32))
        self.mean = torch.from_numpy(arrays.mean)
        self.std = torch.from_numpy(arrays.std)
        self.obs = torch.from_numpy(arrays.obs)
        self.members = torch.from_numpy(arrays.members) if arrays.members is not None else None
        self.arrays = arrays

    def __len__(self) -> int:
        return self.x.shape[0]

    def batch(self, idx):
        mem = self.members[idx] if self.members is not None else None
        return self.x[idx], self.mean[idx], self.std[idx], self.obs[idx], mem
