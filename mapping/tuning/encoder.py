"""A learned performance embedding: a linear encoder fit so that distances predict schedule transfer.

After Trümper, Ben-Nun et al. (ICS 2023), who train an encoder on a tuning database so that
stencils close in the embedding are tuned alike. Here the encoder is linear,
``e(x) = W z(x)`` with ``z`` the z-scored features of :mod:`mapping.tuning.features` (static
IR features, numpy-run timings, hardware counters where present). ``W`` (``dims`` x features) is
fit with L-BFGS (scipy) so that ``||e(a) - e(b)||`` matches the *profile distance* of every
pair of tuned stencils (:func:`profile_distance`), with a small ridge penalty. A database of a
few dozen stencils carries a few hundred pairs, enough for a linear map and not for a deep one.

The encoder is a JSON file (:meth:`LearnedEncoder.save`), written atomically.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mapping.tuning.errors import TuningError
from mapping.tuning.features import FEATURES, Embedding, Standardiser
from mapping.tuning.measure import Evaluation

#: Format tag of the encoder file.
FORMAT = "stratoflow-tuning-encoder-1"


def log_profile(evaluations: Mapping[str, Evaluation]) -> dict[str, float]:
    """Schedule key -> log(runtime / the stencil's best runtime), over its valid evaluations."""
    ok = {k: float(e.median_s) for k, e in evaluations.items() if e.ok and e.median_s}  # type: ignore[arg-type]
    if not ok:
        return {}
    best = min(ok.values())
    return {k: math.log(t / best) for k, t in ok.items()}


def profile_distance(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """RMS difference of two log profiles over the union of their schedules; a schedule missing
    or invalid on one stencil counts as that stencil's slowest valid one."""
    if not a or not b:
        raise TuningError("profile_distance: a stencil without valid evaluations has no profile")
    wa, wb = max(a.values()), max(b.values())
    keys = sorted(set(a) | set(b))
    d = np.array([a.get(k, wa) - b.get(k, wb) for k in keys])
    return float(np.sqrt(np.mean(d * d)))


@dataclass(frozen=True)
class LearnedEncoder:
    """``e(x) = weights @ ((x - mean) / std)`` over the named features."""

    names: tuple[str, ...]
    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray  # (dims, len(names))
    trained_on: tuple[str, ...] = ()
    fit_rms: float = float("nan")  # RMS error of the fitted distances over the training pairs

    @classmethod
    def fit(
        cls,
        embeddings: Sequence[Embedding],
        profiles: Mapping[str, Mapping[str, float]],
        dims: int = 4,
        ridge: float = 1e-3,
        restarts: int = 4,
        seed: int = 0,
        names: Sequence[str] = FEATURES,
    ) -> LearnedEncoder:
        """Fit on the stencils of ``embeddings`` that have a profile (:func:`log_profile`)."""
        embs = [e for e in embeddings if profiles.get(e.stencil)]
        if len(embs) < 3:
            raise TuningError(
                f"the learned encoder needs at least 3 tuned stencils, the database has {len(embs)}: "
                "run 'stratoflow tune search' on more stencils first"
            )
        std = Standardiser(embs, names)
        z = np.array([std(e) for e in embs])
        target = np.array([
            [profile_distance(profiles[a.stencil], profiles[b.stencil]) for b in embs] for a in embs
        ])  # fmt: skip
        weights, rms = fit_metric(z, target, dims, ridge, restarts, seed)
        return cls(std.names, std.mean, std.std, weights, tuple(e.stencil for e in embs), rms)

    def encode(self, embedding: Embedding) -> np.ndarray:
        v = embedding.vector(self.names)
        v = np.where(np.isnan(v), self.mean, v)
        return self.weights @ ((v - self.mean) / self.std)

    # -- file -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "names": list(self.names), "mean": self.mean.tolist(),
            "std": self.std.tolist(), "weights": self.weights.tolist(),
            "trained_on": list(self.trained_on), "fit_rms": self.fit_rms,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "encoder") -> LearnedEncoder:
        if d.get("format") != FORMAT:
            raise TuningError(f"{source}: not a stratoflow tuning encoder (format {d.get('format')!r}, "
                              f"expected {FORMAT!r}); rebuild it with 'stratoflow tune encoder'")  # fmt: skip
        try:
            names = tuple(str(n) for n in d["names"])
            mean, std = np.asarray(d["mean"], float), np.asarray(d["std"], float)
            weights = np.asarray(d["weights"], float)
        except (KeyError, TypeError, ValueError) as exc:
            raise TuningError(f"{source}: damaged encoder ({exc}); rebuild it with 'stratoflow tune encoder'") from None
        shape = (len(names),)
        if weights.ndim != 2 or weights.shape[1] != len(names) or mean.shape != shape or std.shape != shape:
            raise TuningError(f"{source}: encoder arrays do not match its {len(names)} feature names; rebuild it")
        return cls(names, mean, std, weights, tuple(d.get("trained_on", ())), float(d.get("fit_rms", "nan")))

    def save(self, path: Path) -> None:
        from stencils.atomic import atomic_write_text

        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: Path) -> LearnedEncoder:
        from stencils.errors import InputFileError
        from stencils.textfile import read_json

        try:
            data = read_json(path, "a learned encoder JSON of 'stratoflow tune encoder'",
                             what="encoder file")  # fmt: skip
        except InputFileError as exc:
            raise TuningError(f"{exc}; rebuild the encoder with 'stratoflow tune encoder'") from None
        return cls.from_dict(data, str(path))


def fit_metric(
    z: np.ndarray, target: np.ndarray, dims: int, ridge: float = 1e-3, restarts: int = 4, seed: int = 0
) -> tuple[np.ndarray, float]:
    """``W`` minimising mean over pairs i<j of (||W (z_i - z_j)|| - target_ij)^2 + ridge ||W||^2;
    the best of ``restarts`` L-BFGS runs from random starts. Returns (W, RMS distance error)."""
    from scipy.optimize import minimize

    n, p = z.shape
    if dims < 1:
        raise TuningError(f"encoder dims must be >= 1, got {dims}")
    i, j = np.triu_indices(n, 1)
    delta = z[i] - z[j]  # (pairs, p)
    t = target[i, j]
    scale = float(np.mean(t)) or 1.0  # starts sized to the targets

    def loss(w_flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = w_flat.reshape(dims, p)
        proj = delta @ w.T  # (pairs, dims)
        r = np.sqrt((proj * proj).sum(axis=1) + 1e-12)
        res = r - t
        value = float(np.mean(res * res) + ridge * np.sum(w * w))
        coef = (2.0 * res / r / res.size)[:, None] * proj  # d loss / d proj
        grad = coef.T @ delta + 2.0 * ridge * w
        return value, grad.ravel()

    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray] | None = None
    for _ in range(max(1, restarts)):
        w0 = rng.normal(scale=scale / math.sqrt(p * dims) + 1e-3, size=dims * p)
        res = minimize(loss, w0, jac=True, method="L-BFGS-B", options={"maxiter": 2000})
        if best is None or res.fun < best[0]:
            best = (float(res.fun), res.x)
    assert best is not None
    w = best[1].reshape(dims, p)
    r = np.linalg.norm(delta @ w.T, axis=1)
    return w, float(np.sqrt(np.mean((r - t) ** 2)))
