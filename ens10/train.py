"""Training of the baselines on the reference split: deterministic seeds, per-epoch checkpoints,
resume, model selection inside the training years (never the test years).

Selection: the model is fitted on the ``fit`` years (1998-2013) with early stopping on the
``validation`` carve-out (2014-2015). Refit (default): a fresh model with the same seed is then
trained on all ``train`` years (1998-2015, the reference code's training period) for the number
of epochs that was best on the carve-out, with the normalisation of those years; that is the
exported model. ``refit=False`` exports the best-validation weights of the selection run.

Exported checkpoint ``{out_dir}/{model}_{target}.pt`` (``torch.load(path, weights_only=True)``):

    {"model": "mlp", "target": "t850", "config": {...TrainConfig...},
     "state_dict": {...refitted (or best-validation) weights...},
     "normalisation": {"channel_mean": [...], "channel_std": [...], "target_loc": float,
                       "target_scale": float, "emos_loc": Tensor(H, W),
                       "emos_spread": Tensor(H, W), "n_location": 3},
     "inputs": ["Z_mean", "Z_std", ..., "loc_cos_lat_cos_lon"],
     "grid": {"lat": [...], "lon": [...]},
     "history": [{"epoch", "train_crps", "val_crps", "seconds"}...],   # the selection run
     "refit": {"years": [1998, 2015], "epochs": int, "train_crps": [...], "seconds": [...]} | None}

Predictor channel k is ``(value - channel_mean[k]) / channel_std[k]`` (NaN -> 0); see
:mod:`ens10.baselines.models` for what each model computes from them.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import numbers
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
from ens10.io.atomic import atomic_output, check_output_dir
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
    refit: bool = True  # retrain on all training years for the selected number of epochs

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ENS10DataError(f"unknown model {self.model!r}: choose one of {', '.join(MODELS)}")
        schema.target(self.target)
        for name in ("epochs", "batch_size", "patience", "hidden"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ENS10DataError(f"{name}={value!r}: give a whole number >= 1")
        seed_ok = isinstance(self.seed, numbers.Integral) and not isinstance(self.seed, bool)
        if not seed_ok or not 0 <= self.seed < 2**32:
            raise ENS10DataError(f"seed={self.seed!r}: give a whole number in 0 .. 2**32 - 1")
        if self.lr is not None and not (
            isinstance(self.lr, numbers.Real) and not isinstance(self.lr, bool)
            and math.isfinite(self.lr) and self.lr > 0
        ):
            raise ENS10DataError(f"lr={self.lr!r}: the learning rate must be a positive number")
        if not isinstance(self.refit, bool):
            raise ENS10DataError(f"refit={self.refit!r}: give True or False")

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


#: keys of an exported model checkpoint ``{model}_{target}.pt``
MODEL_KEYS = ("model", "target", "config", "state_dict", "normalisation", "inputs", "grid")
#: keys of a training state ``{model}_{target}.last.pt`` (for resuming)
STATE_KEYS = ("config", "state_dict", "optimizer", "state")


def load_checkpoint(path: Path | str, kind: str = "model") -> dict:
    """Read an exported model checkpoint (``kind="model"``, ``{model}_{target}.pt``) or a
    training state (``kind="state"``, ``{model}_{target}.last.pt``); an ENS10DataError names the
    file when it is missing, unreadable or of the other kind."""
    path = Path(path)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise ENS10DataError(f"checkpoint {path} {what}: train first ('stratoflow ens10 train')")
    redo = ("delete it or train with --no-resume" if kind == "state"
            else "train it again ('stratoflow ens10 train')")
    with open(path, "rb") as fh:
        zipped = fh.read(4) == b"PK\x03\x04"  # torch.save writes a zip archive
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for truncated or foreign files
        reason = "damaged or truncated" if zipped else "not a PyTorch checkpoint"
        raise ENS10DataError(
            f"cannot read checkpoint {path} ({reason}: {type(exc).__name__}); it must be a "
            f"checkpoint of 'stratoflow ens10 train': {redo}"
        ) from exc
    keys = MODEL_KEYS if kind == "model" else STATE_KEYS
    if not isinstance(ckpt, dict) or any(k not in ckpt for k in keys):
        if kind == "model" and isinstance(ckpt, dict) and all(k in ckpt for k in STATE_KEYS):
            cfg = ckpt["config"] if isinstance(ckpt["config"], dict) else {}
            final = f"{cfg.get('model', '{model}')}_{cfg.get('target', '{target}')}.pt"
            raise ENS10DataError(
                f"checkpoint {path} is a training state (.last.pt, read by 'ens10 train' to "
                f"resume), not a model: pass the exported model {path.with_name(final)}"
            )
        have = sorted(ckpt) if isinstance(ckpt, dict) else type(ckpt).__name__
        raise ENS10DataError(
            f"checkpoint {path} is not a{'n exported model' if kind == 'model' else ' training state'}"
            f" of 'stratoflow ens10 train' (needs keys {', '.join(keys)}; has {have}); {redo}"
        )
    if kind == "model" and (ckpt["model"] not in MODELS or ckpt["target"] not in schema.TARGETS):
        raise ENS10DataError(
            f"checkpoint {path}: model {ckpt['model']!r} / target {ckpt['target']!r} are not "
            f"baselines of this version ({', '.join(MODELS)} / {', '.join(schema.TARGETS)})"
        )
    return ckpt


def model_from_checkpoint(ckpt: dict, path: Path | str | None = None) -> torch.nn.Module:
    """The model of an exported checkpoint, in eval mode (``path`` names it in errors)."""
    norm = ckpt["normalisation"]
    grid = ckpt["grid"]
    try:
        cfg = TrainConfig(**ckpt["config"])
        model = build_model(ckpt["model"], len(ckpt["inputs"]),
                            (len(grid["lat"]), len(grid["lon"])), norm, **cfg.model_kwargs())
        model.load_state_dict(ckpt["state_dict"])
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ENS10DataError(
            f"checkpoint {path or ckpt['model']}: cannot rebuild its {ckpt['model']} model "
            f"({type(exc).__name__}: {reason}); train it again"
        ) from exc
    model.eval()
    return model


def check_compatible(ckpt: dict, inputs, lat, lon, path: Path | str, data: Path | str) -> None:
    """An ENS10DataError unless the checkpoint was trained on ``data``'s grid and predictors."""
    want_lat = np.asarray(ckpt["grid"]["lat"], dtype=float)
    want_lon = np.asarray(ckpt["grid"]["lon"], dtype=float)
    lat, lon = np.asarray(lat, dtype=float), np.asarray(lon, dtype=float)
    if want_lat.shape != lat.shape or want_lon.shape != lon.shape or not (
        np.allclose(want_lat, lat, atol=1e-6) and np.allclose(want_lon, lon, atol=1e-6)
    ):
        def describe(la, lo):
            return (f"{la.size} x {lo.size} (lat {la.min():g}..{la.max():g}, lon "
                    f"{lo.min():g}..{lo.max():g})") if la.size and lo.size else "empty"

        raise ENS10DataError(
            f"checkpoint {path} was trained on a {describe(want_lat, want_lon)} grid, but the data "
            f"in {data} is on a {describe(lat, lon)} grid: evaluate it on data of its own grid "
            "or train again on this data"
        )
    inputs = list(inputs)
    if list(ckpt["inputs"]) != inputs:
        missing = [n for n in ckpt["inputs"] if n not in inputs]
        extra = [n for n in inputs if n not in ckpt["inputs"]]
        detail = (f"missing {missing}, extra {extra}" if missing or extra
                  else "the same names in another order")
        raise ENS10DataError(
            f"checkpoint {path} expects the inputs {list(ckpt['inputs'])}, but the data in {data} "
            f"gives {inputs} ({detail}): train it again on this data"
        )


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


class _Trainer:
    """One model being fitted: its network, optimiser and loss on one training split."""

    def __init__(self, cfg: TrainConfig, arrays, norm: dict) -> None:
        torch.manual_seed(cfg.seed)
        self.cfg = cfg
        self.data = FieldTensors(arrays, norm)
        self.net = build_model(cfg.model, len(arrays.inputs), arrays.obs.shape[1:], norm,
                               **cfg.model_kwargs())
        self.loss_fn = GaussianCRPSLoss(torch.from_numpy(latitude_weights(arrays.lat).astype(np.float32)))
        self.full_batch = getattr(self.net, "full_batch", False)
        if self.full_batch:
            self.opt = torch.optim.LBFGS(self.net.parameters(), lr=cfg.learning_rate, max_iter=40,
                                         history_size=20, line_search_fn="strong_wolfe")
        else:
            self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate)

    def epoch(self, epoch: int) -> float:
        """Train one epoch (numbered from 0: it seeds the batch order); the mean training CRPS."""
        net, data, loss_fn, opt, cfg = self.net, self.data, self.loss_fn, self.opt, self.cfg
        net.train()
        if self.full_batch:
            def closure():
                opt.zero_grad()
                x, mean, std, obs, mem = data.batch(slice(None))
                loss = loss_fn(*net(x, mean, std, mem), obs)
                loss.backward()
                return loss

            return float(opt.step(closure).detach())
        g = torch.Generator().manual_seed(cfg.seed * 100003 + epoch)
        order = torch.randperm(len(data), generator=g)
        tot = 0.0
        for start in range(0, len(order), cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            x, mean, std, obs, mem = data.batch(idx)
            opt.zero_grad()
            loss = loss_fn(*net(x, mean, std, mem), obs)
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        return tot / len(order)

    def score(self, data: FieldTensors) -> float:
        self.net.eval()
        return _evaluate_loss(self.net, data, self.loss_fn, self.cfg.batch_size)


def _best_epochs(history: list[dict]) -> int:
    """The epoch count with the lowest validation CRPS (the first of equals)."""
    return min(history, key=lambda h: h["val_crps"])["epoch"]


def train(
    model: str,
    target: str,
    data_dir: Path | str,
    out_dir: Path | str,
    epochs: int = 30,
    resume: bool = True,
    **overrides,
) -> Path:
    """Train ``model`` for ``target`` on ``data_dir`` (preprocessed layout; module docstring for
    the selection and the refit); returns the exported checkpoint ``out_dir/{model}_{target}.pt``.
    The selection run resumes from ``out_dir/{model}_{target}.last.pt`` when its config matches
    (except ``epochs``, so a finished run can be extended)."""
    cfg = TrainConfig(model=model, target=target, epochs=epochs, **overrides)
    out_dir = Path(out_dir)
    check_output_dir(out_dir, "checkpoint folder")
    final = out_dir / f"{model}_{target}.pt"
    last_path = out_dir / f"{model}_{target}.last.pt"
    np.random.seed(cfg.seed)
    needs_members = model == "transformer"
    t0 = time.perf_counter()
    fit_arr = load_split(data_dir, target, "fit", members=needs_members)
    val_arr = load_split(data_dir, target, "validation", members=needs_members)
    norm = fit_normalisation(fit_arr)
    run = _Trainer(cfg, fit_arr, norm)
    val_data = FieldTensors(val_arr, norm)
    log.info("%s/%s: %d fit and %d validation fields loaded in %.1f s", model, target,
             len(run.data), len(val_data), time.perf_counter() - t0)
    state = {"epoch": 0, "best_val": float("inf"), "best_state": None, "history": [], "bad": 0}
    if resume and last_path.is_file():
        last = load_checkpoint(last_path, kind="state")
        same = {k: v for k, v in last["config"].items() if k != "epochs"}
        if same == {k: v for k, v in dataclasses.asdict(cfg).items() if k != "epochs"}:
            run.net.load_state_dict(last["state_dict"])
            run.opt.load_state_dict(last["optimizer"])
            state = last["state"]
            log.info("resuming %s from epoch %d", last_path, state["epoch"])
        else:
            log.warning("ignoring %s: it was trained with a different config", last_path)
    progress = tqdm(range(state["epoch"], cfg.epochs), desc=f"train {model}/{target}", unit="epoch",
                    leave=False)
    for epoch in progress:
        if state["bad"] >= cfg.patience:
            break
        te = time.perf_counter()
        train_loss = run.epoch(epoch)
        val = run.score(val_data)
        state["history"].append({"epoch": epoch + 1, "train_crps": train_loss, "val_crps": val,
                                 "seconds": time.perf_counter() - te})
        if not np.isfinite(state["best_val"]) or val < state["best_val"] - 1e-6 * abs(state["best_val"]):
            state["best_val"], state["bad"] = val, 0
            state["best_state"] = {k: v.detach().clone() for k, v in run.net.state_dict().items()}
        else:
            state["bad"] += 1
        state["epoch"] = epoch + 1
        progress.set_postfix(train=f"{train_loss:.4g}", val=f"{val:.4g}")
        save_atomic({"config": dataclasses.asdict(cfg), "state_dict": run.net.state_dict(),
                     "optimizer": run.opt.state_dict(), "state": state}, last_path)
    weights, arrays, refit = state["best_state"] or run.net.state_dict(), fit_arr, None
    if cfg.refit:
        arrays = load_split(data_dir, target, "train", members=needs_members)
        norm = fit_normalisation(arrays)
        full = _Trainer(cfg, arrays, norm)
        refit = {"years": list(schema.SPLITS["train"]), "epochs": _best_epochs(state["history"]),
                 "train_crps": [], "seconds": []}
        for epoch in tqdm(range(refit["epochs"]), desc=f"refit {model}/{target}", unit="epoch",
                          leave=False):
            te = time.perf_counter()
            refit["train_crps"].append(full.epoch(epoch))
            refit["seconds"].append(time.perf_counter() - te)
        weights = full.net.state_dict()
    ckpt = {
        "model": model,
        "target": target,
        "config": dataclasses.asdict(cfg),
        "state_dict": weights,
        "normalisation": norm,
        "inputs": list(arrays.inputs),
        "grid": {"lat": arrays.lat.tolist(), "lon": arrays.lon.tolist()},
        "history": state["history"],
        "refit": refit,
    }
    save_atomic(ckpt, final)
    log.info("%s/%s: best validation CRPS %.4g after %d epochs%s -> %s", model, target,
             state["best_val"], state["epoch"],
             f", refitted on {len(arrays.obs)} fields for {refit['epochs']} epochs" if refit else "",
             final)
    return final
