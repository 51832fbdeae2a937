"""Small baselines with random (non-trivial) weights and checkpoints in the training format."""

from __future__ import annotations

import numpy as np
import torch

from ens10 import schema
from ens10.baselines.data import LOCATION_INPUTS
from ens10.baselines.models import build_model
from ens10.grid import grid_axes

PL_INPUTS = [f"{schema.NETCDF_NAME[v]}_{s}" for v in schema.PL_VARIABLES for s in ("mean", "std")]
SFC_INPUTS = [f"{schema.NETCDF_NAME[v]}_{s}" for v in schema.SFC_VARIABLES for s in ("mean", "std")]


def grid(step: float = 10.0) -> tuple[np.ndarray, np.ndarray]:
    lat, lon = grid_axes(step)
    return lat[::-1].copy(), lon  # the loaders return latitude increasing


# small architectures the tests export (halo and channel counts stay quick to build)
# U-Net on a 36-degree grid: 6 x 10 points, padded by the model to 8 x 12 (replicated rows/columns)
UNET_SMALL = {"step": 36.0, "width": 1, "inputs": ["T_mean", "T_std", "Z_mean", *LOCATION_INPUTS]}
TRANSFORMER_SMALL = {"step": 30.0, "d_model": 2, "heads": 2}
TRANSFORMER_MEMBERS = 3

def random_checkpoint(model: str, target: str = "t850", step: float = 10.0, hidden: int = 8,
                      seed: int = 0, inputs: list[str] | None = None, **kw) -> tuple[torch.nn.Module, dict]:
    """(model in eval mode, checkpoint dict) with every weight drawn at random; ``kw`` are the
    architecture's options (``width`` for the U-Net, ``d_model``/``heads`` for the Transformer);
    ``inputs``: the predictor channels (default: every variable's mean/std + location)."""
    lat, lon = grid(step)
    kind = schema.target(target).kind
    if inputs is None:
        inputs = list(PL_INPUTS if kind == "pl" else SFC_INPUTS + ["sea_mask"]) + list(LOCATION_INPUTS)
    rng = np.random.default_rng(seed)
    scale = {"t850": 3.0, "z500": 700.0, "t2m": 4.0}[target]
    norm = {
        "channel_mean": [0.0 if n in LOCATION_INPUTS or n == "sea_mask" else float(rng.normal(0, 3)) for n in inputs],
        "channel_std": [1.0 if n in LOCATION_INPUTS or n == "sea_mask" else float(rng.uniform(0.5, 3)) for n in inputs],
        "target_loc": 270.0, "target_scale": scale,
        "emos_loc": torch.from_numpy(rng.normal(270, 5, (len(lat), len(lon))).astype(np.float32)),
        "emos_spread": torch.from_numpy(rng.uniform(1, 4, (len(lat), len(lon))).astype(np.float32)),
        "n_location": len(LOCATION_INPUTS),
    }
    kwargs = {"hidden": hidden, **kw} if model in ("mlp", "lenet") else dict(kw)
    net = build_model(model, len(inputs), (len(lat), len(lon)), norm, **kwargs)
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn_like(p) * (0.5 if p.ndim > 1 else 0.2) + (1.0 if model.startswith("emos") else 0.0))
    net.eval()
    ckpt = {"model": model, "target": target, "config": {"model": model, "target": target, **kwargs},
            "state_dict": net.state_dict(), "normalisation": norm, "inputs": inputs,
            "grid": {"lat": lat.tolist(), "lon": lon.tolist()}, "history": []}
    return net, ckpt


def random_members(variables, shape, members: int = 10, seed: int = 1, sst_land: bool = False) -> dict:
    """Members (lat, lon) of every variable: smooth-ish random values around typical magnitudes."""
    rng = np.random.default_rng(seed)
    out = {}
    for v in variables:
        base = rng.normal(0, 2, shape) + rng.normal(0, 5)
        for k in range(members):
            f = base + rng.normal(0, 1 + rng.uniform(0, 1), shape)
            if v == "SSTK" and sst_land:
                f[: shape[0] // 3, : shape[1] // 2] = np.nan
            out[f"{v}_m{k}"] = f
    return out


def torch_reference(net: torch.nn.Module, ckpt: dict, fields: dict, members: int = 10):
    """PyTorch inference (float64) on the ensemble statistics of ``fields``' members (and the
    target's members themselves, which the ensemble Transformer reads)."""
    norm = ckpt["normalisation"]
    target = schema.target(ckpt["target"]).netcdf_variable
    lat, lon = np.asarray(ckpt["grid"]["lat"]), np.asarray(ckpt["grid"]["lon"])
    from ens10.grid import location_features

    loc = location_features(lat, lon)

    def stats(var):
        m = np.stack([fields[f"{var}_m{k}"] for k in range(members)])
        return m.mean(0), m.std(0)

    chans = []
    for c, name in enumerate(ckpt["inputs"]):
        unused = ckpt["model"].startswith("emos") or (ckpt["model"] == "transformer" and name not in LOCATION_INPUTS)
        if unused:  # EMOS ignores the predictors, the Transformer all but the location features
            chans.append(np.zeros(loc.shape[1:]))
            continue
        if name in LOCATION_INPUTS:
            v = loc[LOCATION_INPUTS.index(name)]
        elif name == "sea_mask":
            v = np.isfinite(stats("SSTK")[0]).astype(np.float64)
        else:
            var, _, s = name.rpartition("_")
            v = stats(var)[0 if s == "mean" else 1]
        chans.append(np.nan_to_num((v - norm["channel_mean"][c]) / norm["channel_std"][c], nan=0.0))
    x = torch.from_numpy(np.stack(chans)[None])
    mean, std = (torch.from_numpy(a[None]) for a in stats(target))
    mem = torch.from_numpy(np.stack([fields[f"{target}_m{k}"] for k in range(members)])[None])
    net = net.double()
    with torch.no_grad():
        mu, sigma = net(x, mean, std, mem)
    net.float()
    return mu[0].numpy(), sigma[0].numpy()
