"""Scoring of trained baselines on the test years: a scores table (Markdown + CSV), PNG maps of
the CRPS improvement over the raw ensemble per grid point, and reliability figures (rank histogram
of the raw members, PIT histograms of the forecasts).

Rows per target: the raw ensemble (Gaussian N(mean, std) from the preprocessed files, plus the
member CRPS when the members file exists), every checkpoint, and the generator's oracle when the
data is a sample (``SAMPLE_{target}_oracle.nc``). Scores are area-weighted (cos latitude, mean 1)
means over grid points and test initialisations; EECRPS weights each CRPS by |EFI|.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ens10 import schema  # noqa: E402
from ens10.baselines.data import FieldTensors, load_split  # noqa: E402
from ens10.errors import ENS10DataError  # noqa: E402
from ens10.io.atomic import atomic_output, check_output_dir, write_text  # noqa: E402
from ens10.io.preprocessed import check_data_dir, open_efi, open_oracle  # noqa: E402
from ens10.metrics.crps import crps_ensemble, crps_gaussian  # noqa: E402
from ens10.metrics.diagnostics import (  # noqa: E402
    latitude_weights,
    pit_gaussian,
    rank_histogram,
    reliability_curve,
    spread_skill_ratio,
)
from ens10.metrics.threshold import ThresholdWeightedCRPS  # noqa: E402
from ens10.metrics.two_piece import TwoPieceNormal  # noqa: E402
from ens10.metrics.uncertainty import BlockBootstrap  # noqa: E402
from ens10.train import (  # noqa: E402
    check_compatible,
    load_checkpoint,
    model_from_checkpoint,
    predict,
)

log = logging.getLogger(__name__)

COLUMNS = ["target", "model", "crps", "crps_low", "crps_high", "crpss_vs_raw", "p_vs_raw",
           "eecrps", "twcrps_q90", "rmse", "spread_skill", "crps_members_fair", "n_init"]
PAIR_COLUMNS = ["target", "model_a", "model_b", "crps_a_minus_b", "low", "high", "p_value",
                "significant"]


@dataclass
class Forecast:
    """A predictive distribution per initialisation and grid point: Gaussian ``N(mu, sigma^2)``,
    or ``dist`` (the generator's two-piece normal oracle) with mean ``mu`` and std ``sigma``."""

    name: str
    mu: np.ndarray  # (T, H, W)
    sigma: np.ndarray
    dist: TwoPieceNormal | None = None

    def crps(self, obs: np.ndarray) -> np.ndarray:
        return crps_gaussian(self.mu, self.sigma, obs) if self.dist is None else self.dist.crps(obs)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        return pit_gaussian(self.mu, self.sigma, x) if self.dist is None else self.dist.cdf(x)

    def twcrps_upper(self, obs: np.ndarray, threshold: np.ndarray) -> np.ndarray:
        if self.dist is None:
            return ThresholdWeightedCRPS("upper")(self.mu, self.sigma, obs, threshold)
        return self.dist.twcrps_upper(obs, threshold)


def _wmean(field: np.ndarray, w: np.ndarray) -> float:
    """Area-weighted mean over (..., H, W) with latitude weights w (H,), NaN skipped."""
    full = np.broadcast_to(w[:, None], field.shape[-2:])
    full = np.broadcast_to(full, field.shape)
    ok = np.isfinite(field)
    return float((np.where(ok, field, 0.0) * full).sum() / (full * ok).sum())


def _wmean_per_time(field: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Area-weighted mean over (H, W) of each initialisation of ``field`` (T, H, W)."""
    return np.array([_wmean(f, w) for f in field])


def _oracle(data_dir: Path, target: str, times: np.ndarray) -> Forecast | None:
    ds = open_oracle(data_dir, target)
    if ds is None:
        return None
    ds = ds.sel(time=times)
    dist = TwoPieceNormal(ds["loc"].values.astype(np.float64), ds["scale_left"].values.astype(np.float64),
                          ds["scale_right"].values.astype(np.float64))
    return Forecast("oracle (generator truth)", ds["mu"].values, ds["sigma"].values, dist)


def _efi(data_dir: Path, target: str, split: str, times: np.ndarray) -> np.ndarray | None:
    if not (data_dir / schema.efi_file_name(target)).is_file():
        return None
    efi = open_efi(data_dir, target, years=schema.SPLITS[split]).sel(time=times)
    return efi.values


def score_target(data_dir: Path, target: str, ckpts: Sequence[tuple[Path, dict]], split: str,
                 out_dir: Path) -> tuple[list[dict], list[dict]]:
    """Score rows of the raw ensemble, each ``(path, checkpoint)`` and the oracle for ``target``
    on ``split``, and the paired CRPS differences of every two of them (block bootstrap over
    initialisations, :class:`~ens10.metrics.uncertainty.BlockBootstrap`); writes its maps and
    reliability figures to ``out_dir``."""
    members_ok = (data_dir / schema.members_file_name(target)).is_file()
    arrays = load_split(data_dir, target, split, members=members_ok)
    w = latitude_weights(arrays.lat)
    obs = arrays.obs
    efi = _efi(data_dir, target, split, arrays.times)
    forecasts = [Forecast("raw ensemble", arrays.mean, arrays.std)]
    for path, ck in ckpts:
        if ck["model"] == "transformer" and not members_ok:
            raise ENS10DataError(f"the transformer needs {schema.members_file_name(target)} in {data_dir}")
        check_compatible(ck, arrays.inputs, arrays.lat, arrays.lon, path, data_dir)
        data = FieldTensors(arrays, ck["normalisation"])
        mu, sigma = predict(model_from_checkpoint(ck, path), data)
        forecasts.append(Forecast(ck["model"], mu, sigma))
    oracle = _oracle(data_dir, target, arrays.times)
    out_dir.mkdir(parents=True, exist_ok=True)
    if oracle is not None:
        forecasts.append(oracle)
    rows, maps, skill_maps, series = [], {}, {}, {}
    # the tail the threshold-weighted CRPS scores: above each grid point's 90th percentile of
    # the observations of the split
    q90 = np.nanpercentile(obs, 90.0, axis=0)
    boot = BlockBootstrap(obs.shape[0]) if obs.shape[0] >= 2 else None
    raw_crps = None
    for fc in forecasts:
        crps = fc.crps(obs)
        mean_crps = _wmean(crps, w)
        series[fc.name] = _wmean_per_time(crps, w)
        if raw_crps is None:
            raw_crps = mean_crps
            raw_map = np.nanmean(crps, axis=0)
        else:
            maps[fc.name] = raw_map - np.nanmean(crps, axis=0)
            skill_maps[fc.name] = 1.0 - np.nanmean(crps, axis=0) / raw_map
        row = {
            "target": target, "model": fc.name, "crps": mean_crps,
            "crpss_vs_raw": 1.0 - mean_crps / raw_crps,
            "eecrps": _wmean(np.abs(efi) * crps, w) if efi is not None else float("nan"),
            "twcrps_q90": _wmean(fc.twcrps_upper(obs, q90), w),
            "rmse": float(np.sqrt(_wmean((fc.mu - obs) ** 2, w))),
            "spread_skill": spread_skill_ratio(fc.sigma**2, (fc.mu - obs) ** 2),
            "crps_members_fair": float("nan"),
            "n_init": int(obs.shape[0]),
            "crps_low": float("nan"), "crps_high": float("nan"), "p_vs_raw": float("nan"),
        }
        if boot is not None:
            iv = boot.interval(series[fc.name])
            row["crps_low"], row["crps_high"] = iv.low, iv.high
            if fc.name != "raw ensemble":
                row["p_vs_raw"] = boot.paired(series[fc.name], series["raw ensemble"]).p_value
        if fc.name == "raw ensemble" and arrays.members is not None:
            row["crps_members_fair"] = _wmean(crps_ensemble(arrays.members, obs, axis=1, fair=True), w)
        rows.append(row)
    pairs = []
    names = list(series) if boot is not None else []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            res = boot.paired(series[a], series[b])
            pairs.append({"target": target, "model_a": a, "model_b": b,
                          "crps_a_minus_b": res.difference.mean, "low": res.difference.low,
                          "high": res.difference.high, "p_value": res.p_value,
                          "significant": "yes" if res.significant else "no"})  # fmt: skip
    _plot_maps(maps, arrays.lat, arrays.lon,
               f"{target}: ΔCRPS = CRPS(raw) - CRPS(model), time mean (blue = better)", "ΔCRPS",
               out_dir / f"crps_improvement_{target}.png")
    _plot_maps(skill_maps, arrays.lat, arrays.lon,
               f"{target}: CRPSS = 1 - CRPS(model) / CRPS(raw), time means (blue = better)",
               "CRPSS", out_dir / f"crpss_{target}.png")  # fmt: skip
    _plot_reliability(forecasts, arrays, target, out_dir / f"reliability_{target}.png")
    _plot_exceedance_reliability(forecasts, obs, q90, target,
                                 out_dir / f"reliability_q90_{target}.png")  # fmt: skip
    return rows, pairs


def _save_fig(fig, path: Path) -> None:
    try:
        with atomic_output(path) as tmp:
            fig.savefig(tmp, dpi=110, format="png", bbox_inches="tight")
    finally:
        plt.close(fig)


def _plot_maps(maps: dict, lat, lon, title: str, label: str, path: Path) -> None:
    """One diverging map per model (blue = better than the raw ensemble)."""
    n = max(len(maps), 1)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.8 * cols, 2.9 * rows), squeeze=False,
                             layout="constrained")
    vmax = max((np.nanmax(np.abs(m)) for m in maps.values()), default=1.0)
    for ax, (name, m) in zip(axes.flat, maps.items()):
        im = ax.pcolormesh(lon, lat, m, cmap="RdBu", vmin=-vmax, vmax=vmax, shading="nearest")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("longitude")
        ax.set_ylabel("latitude")
        fig.colorbar(im, ax=ax, shrink=0.8, label=label)
    for ax in list(axes.flat)[len(maps):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    _save_fig(fig, path)


def _plot_reliability(forecasts: Sequence[Forecast], arrays, target: str, path: Path) -> None:
    panels = len(forecasts) + (1 if arrays.members is not None else 0)
    cols = min(panels, 4)
    rows = (panels + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.6 * rows), squeeze=False)
    flat = list(axes.flat)
    k = 0
    if arrays.members is not None:
        hist = rank_histogram(arrays.members, arrays.obs, axis=1)
        m = arrays.members.shape[1]
        flat[0].bar(np.arange(m + 1), hist / hist.sum(), color="tab:gray")
        flat[0].axhline(1.0 / (m + 1), color="k", ls="--", lw=1)
        flat[0].set_title("raw members: rank histogram", fontsize=9)
        flat[0].set_xlabel("rank of ERA5 among members")
        k = 1
    for fc in forecasts:
        pit = fc.cdf(arrays.obs)
        pit = pit[np.isfinite(pit)]
        ax = flat[k]
        ax.hist(pit, bins=10, range=(0, 1), density=True, color="tab:blue")
        ax.axhline(1.0, color="k", ls="--", lw=1)
        ax.set_title(f"{fc.name}: PIT", fontsize=9)
        ax.set_xlabel("PIT")
        k += 1
    for ax in flat[k:]:
        ax.set_visible(False)
    fig.suptitle(f"{target}: reliability on the test years (flat = calibrated)", fontsize=10)
    fig.tight_layout()
    _save_fig(fig, path)


def _plot_exceedance_reliability(forecasts: Sequence[Forecast], obs: np.ndarray,
                                 threshold: np.ndarray, target: str, path: Path) -> None:  # fmt: skip
    """Reliability diagram of each forecast's probability of exceeding ``threshold``, with the
    number of forecasts per bin below."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.2, 6.0), height_ratios=(3, 1),
                                      sharex=True, layout="constrained")  # fmt: skip
    top.plot([0, 1], [0, 1], color="k", ls="--", lw=1, label="calibrated")
    event = np.where(np.isfinite(obs), (obs > threshold).astype(np.float64), np.nan)
    for fc in forecasts:
        prob = 1.0 - fc.cdf(np.broadcast_to(threshold, fc.mu.shape))
        curve = reliability_curve(prob, event)
        centres = 0.5 * (curve.edges[1:] + curve.edges[:-1])
        top.plot(curve.forecast, curve.observed, marker="o", ms=3, lw=1, label=fc.name)
        bottom.step(centres, np.maximum(curve.counts, 1), where="mid", lw=1)
    top.set_ylabel("observed frequency")
    top.set_title(f"{target}: P(value > 90th percentile of the observations)", fontsize=9)
    top.legend(fontsize=7)
    bottom.set_yscale("log")
    bottom.set_xlabel("forecast probability")
    bottom.set_ylabel("forecasts")
    _save_fig(fig, path)


def _markdown(df: pd.DataFrame) -> str:
    def fmt(v):
        if isinstance(v, float):
            return "–" if not np.isfinite(v) else f"{v:.4g}"
        return str(v)

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def evaluate(
    data_dir: Path | str,
    checkpoints: Sequence[Path | str],
    out_dir: Path | str,
    split: str = "test",
) -> Path:
    """Score ``checkpoints`` on ``split`` of ``data_dir``; writes ``scores.md``, ``scores.csv``,
    ``differences.csv``, ``crps_improvement_{target}.png``, ``crpss_{target}.png``,
    ``reliability_q90_{target}.png`` and ``reliability_{target}.png`` to ``out_dir`` and returns
    the path of ``scores.md``."""
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    if split not in schema.SPLITS:
        raise ENS10DataError(f"unknown split {split!r}: use {', '.join(schema.SPLITS)}")
    if not checkpoints:
        raise ENS10DataError("no checkpoints given: train one with 'stratoflow ens10 train'")
    check_data_dir(data_dir)
    check_output_dir(out_dir, "evaluation output folder")
    by_target: dict[str, list[tuple[Path, dict]]] = {}
    for path in checkpoints:
        ck = load_checkpoint(path)
        by_target.setdefault(ck["target"], []).append((Path(path), ck))
    rows, pairs = [], []
    for target, cks in by_target.items():
        log.info("scoring %d model(s) for %s on the %s years", len(cks), target, split)
        target_rows, target_pairs = score_target(data_dir, target, cks, split, out_dir)
        rows += target_rows
        pairs += target_pairs
    df = pd.DataFrame(rows, columns=COLUMNS)
    write_text(out_dir / "scores.csv", df.to_csv(index=False, float_format="%.6g"))
    diffs = pd.DataFrame(pairs, columns=PAIR_COLUMNS)
    write_text(out_dir / "differences.csv", diffs.to_csv(index=False, float_format="%.6g"))
    y0, y1 = schema.SPLITS[split]
    md = (
        f"# ENS-10 scores ({split} years {y0}-{y1})\n\n"
        f"Data: `{data_dir}`. Area-weighted (cos latitude) means over grid points and "
        "initialisations; CRPS of the Gaussian forecast (the oracle's: of its two-piece normal) in the target's units; crpss_vs_raw = "
        "1 - CRPS / CRPS(raw ensemble); EECRPS = mean |EFI| x CRPS; twcrps_q90 = CRPS weighted "
        "to outcomes above each grid point's 90th percentile of the observations; spread_skill = "
        "sqrt(mean sigma^2) / RMSE; crps_members_fair = fair CRPS of the 10 raw members. "
        "crps_low/crps_high: 95% moving-block bootstrap interval over initialisations (blocks "
        "of n^(1/3) consecutive ones); p_vs_raw: paired bootstrap p-value of the CRPS "
        "difference to the raw ensemble (floored at 1/2000, the number of resamples).\n\n"
        + _markdown(df)
        + "\n## Paired CRPS differences\n\nMean CRPS(a) - CRPS(b) over the same initialisations, "
        "95% block-bootstrap interval and two-sided p-value; significant when the interval "
        "excludes 0.\n\n"
        + _markdown(diffs)
    )
    return write_text(out_dir / "scores.md", md)
