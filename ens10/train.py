"""Training of the baselines: deterministic seeds, per-epoch checkpoints, resume, early stopping
on the validation years (never the test years).

Exported checkpoint ``{out_dir}/{model}_{target}.pt`` (``torch.load(path, weights_only=True)``):

    {"model": "mlp", "target": "t850", "config": {...TrainConfig...},
     "state_dict": {...best-validation weights...},
     "normalisation": {"channel_mean": [...], "channel_std": [...], "target_loc": float,
                       "target_scale": float, "emos_loc": Tensor(H, W),
                       "emos_spread": Tensor(H, W), "n_location": 3},
     "inputs": ["Z_mean", "Z_std", ..., "loc_cos_lat_cos_lon"],
     "grid": {"lat": [...], "lon": [...]}, "history": [{"epoch", "train_crps", "val_crps"}...]}

Predictor channel k is ``(value - channel_mean[k]) / channel_std[k]`` (NaN -> 0); see
:mod:`ens10.baselines.models` for what each model computes from them.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from ens10 import schema
from ens10.baselines.data import FieldTensors, fit_normalisation, load_split
from ens10.baselines.models import MODELS, build_model
from ens10.errors import ENS10DataError
from ens10.io.atomic import atomic_output
from ens10.metrics.diagnostics import latitude_weights
from ens10.metrics.torch import GaussianCRPSLoss

log = logging.getLogger(__name__)

DEFAULT_LR = {"emos": 1.0, "emos_global": 1.0, "mlp": 3e-3, "lenet": 3e-3, "unet": 2e-3,
              "transformer": 3e-3}


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of one training run (saved in the checkpoint)."""

    model: str
    target: str
    epochs: int = 30
    batch_size: int = 8  # initialisations (whole fields) per step
    lr: float | None = None  # default per model (DEFAULT_LR)
    seed: int = 0
    patience: int = 5  # epochs without validation improvement before stopping
    hidden: int = 32

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ENS10DataError(f"unknown model {self.model!r}: choose one of {', '.join(MODELS)}")
        schema.target(self.target)
        if self.epochs < 1 or self.batch_size < 1:
            raise ENS10DataError("epochs and batch_size must be >= 1")

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else DEFAULT_LR[self.model]

    def model_kwargs(self) -> dict:
        if self.model in ("mlp", "lenet"):
            return {"hidden": self.hidden}
        return {}


def save_atomic(obj, path: Path) -> Path:
    with atomic_output(path) as tmp:
        torch.save(obj, tmp)
    return path


def load_checkpoint(path: Path | str) -> dict:
    path = Path(path)
    if not path.is_file():
        raise ENS10DataError(f"checkpoint {path} does not exist: train first ('stratoflow ens10 train')")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ENS10DataError(f"cannot read checkpoint {path}: {exc}") from exc


def model_from_checkpoint(ckpt: dict) -> torch.nn.Module:
    norm = ckpt["normalisation"]
    grid = ckpt["grid"]
    cfg = TrainConfig(**ckpt["config"])
    model = build_model(ckpt["model"], len(ckpt["inputs"]), (len(grid["lat"]), len(grid["lon"])),
                        norm, **cfg.model_kwargs())
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    return model


def predict(model: torch.nn.Module, data: FieldTensors, batch_size: int = 8):
    """(mu, sigma) numpy arrays (T, H, W) of ``model`` on ``data``."""
    mus, sigmas = [], []
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            idx = torch.arange(start, min(start + batch_size, len(data)))
            x, mean, std, _, mem = data.batch(idx)
            mu, sigma = model(x, mean, std, mem)
            mus.append(mu.numpy())
            sigmas.append(sigma.numpy())
    return np.concatenate(mus), np.concatenate(sigmas)


def _evaluate_loss(model, data: FieldTensors, loss_fn, batch_size: int) -> float:
    total, n = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            idx = torch.arange(start, min(start + batch_size, len(data)))
            x, mean, std, obs, mem = data.batch(idx)
            mu, sigma = model(x, mean, std, mem)
            total += float(loss_fn(mu, sigma, obs)) * len(idx)
            n += len(idx)
    return total / n


def train(
    model: str,
    target: str,
    data_dir: Path | str,
    out_dir: Path | str,
    epochs: int = 30,
    resume: bool = True,
    **overrides,
) -> Path:
    """Train ``model`` for ``target`` on ``data_dir`` (preprocessed layout); returns the exported
    checkpoint ``out_dir/{model}_{target}.pt``. Resumes from ``out_dir/{model}_{target}.last.pt``
    when its config matches (except ``epochs``, so a finished run can be extended)."""
    cfg = TrainConfig(model=model, target=target, epochs=epochs, **overrides)
    out_dir = Path(out_dir)
    final = out_dir / f"{model}_{target}.pt"
    last_path = out_dir / f"{model}_{target}.last.pt"
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    needs_members = model == "transformer"
    t0 = time.perf_counter()
    train_arr = load_split(data_dir, target, "train", members=needs_members)
    val_arr = load_split(data_dir, target, "validation", members=needs_members)
    norm = fit_normalisation(train_arr)
    train_data, val_data = FieldTensors(train_arr, norm), FieldTensors(val_arr, norm)
    log.info("%s/%s: %d train and %d validation fields loaded in %.1f s", model, target,
             len(train_data), len(val_data), time.perf_counter() - t0)
    shape = train_arr.obs.shape[1:]
    net = build_model(model, len(train_arr.inputs), shape, norm, **cfg.model_kwargs())
    loss_fn = GaussianCRPSLoss(torch.from_numpy(latitude_weights(train_arr.lat).astype(np.float32)))
    full_batch = getattr(net, "full_batch", False)
    if full_batch:
        opt = torch.optim.LBFGS(net.parameters(), lr=cfg.learning_rate, max_iter=40,
                                history_size=20, line_search_fn="strong_wolfe")
    else:
        opt = torch.optim.Adam(net.parameters(), lr=cfg.learning_rate)
    state = {"epoch": 0, "best_val": float("inf"), "best_state": None, "history": [], "bad": 0}
    if resume and last_path.is_file():
        last = load_checkpoint(last_path)
        same = {k: v for k, v in last["config"].items() if k != "epochs"}
        if same == {k: v for k, v in dataclasses.asdict(cfg).items() if k != "epochs"}:
            net.load_state_dict(last["state_dict"])
            opt.load_state_dict(last["optimizer"])
            state = last["state"]
            log.info("resuming %s from epoch %d", last_path, state["epoch"])
        else:
            log.warning("ignoring %s: it was trained with a different config", last_path)
    progress = tqdm(range(state["epoch"], cfg.epochs), desc=f"train {model}/{target}", unit="epoch",
                    leave=False)
    for epoch in progress:
        if state["bad"] >= cfg.patience:
            break
        net.train()
        te = time.perf_counter()
        if full_batch:
            def closure():
                opt.zero_grad()
                x, mean, std, obs, mem = train_data.batch(slice(None))
                loss = loss_fn(*net(x, mean, std, mem), obs)
                loss.backward()
                return loss

            train_loss = float(opt.step(closure).detach())
        else:
            g = torch.Generator().manual_seed(cfg.seed * 100003 + epoch)
            order = torch.randperm(len(train_data), generator=g)
            tot = 0.0
            for start in range(0, len(order), cfg.batch_size):
                idx = order[start:start + cfg.batch_size]
                x, mean, std, obs, mem = train_data.batch(idx)
                opt.zero_grad()
                loss = loss_fn(*net(x, mean, std, mem), obs)
                loss.backward()
                opt.step()
                tot += float(loss.detach()) * len(idx)
            train_loss = tot / len(order)
        net.eval()
        val = _evaluate_loss(net, val_data, loss_fn, cfg.batch_size)
        state["history"].append({"epoch": epoch + 1, "train_crps": train_loss, "val_crps": val,
                                 "seconds": time.perf_counter() - te})
        if not np.isfinite(state["best_val"]) or val < state["best_val"] - 1e-6 * abs(state["best_val"]):
            state["best_val"], state["bad"] = val, 0
            state["best_state"] = {k: v.detach().clone() for k, v in net.state_dict().items()}
        else:
            state["bad"] += 1
        state["epoch"] = epoch + 1
        progress.set_postfix(train=f"{train_loss:.4g}", val=f"{val:.4g}")
        save_atomic({"config": dataclasses.asdict(cfg), "state_dict": net.state_dict(),
                     "optimizer": opt.state_dict(), "state": state}, last_path)
    ckpt = {
        "model": model,
        "target": target,
        "config": dataclasses.asdict(cfg),
        "state_dict": state["best_state"] or net.state_dict(),
        "normalisation": norm,
        "inputs": list(train_arr.inputs),
        "grid": {"lat": train_arr.lat.tolist(), "lon": train_arr.lon.tolist()},
        "history": state["history"],
    }
    save_atomic(ckpt, final)
    log.info("%s/%s: best validation CRPS %.4g after %d epochs -> %s", model, target,
             state["best_val"], state["epoch"], final)
    return final
