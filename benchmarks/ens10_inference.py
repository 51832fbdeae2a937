"""ENS-10 post-processing inference: exported stencil programs vs PyTorch CPU on a global field.

One date of a 0.5-degree global field (361 x 720), 10 members per predictor variable. Both
sides do the whole inference from the raw members: ensemble mean/std, standardised predictors,
the network, the Gaussian head (the Transformer: statistics of the target's members and the network
on them). PyTorch runs the checkpoint's model (float32, its training
dtype, and float64); the stencil program (stacked layout: channels as data dimensions, weights
as GlobalTable parameters, channel loops except on numpy) runs in float64 on each requested
GT4Py backend. Build (generation + compile) time per backend is measured too.
Same process, same threads (``--threads`` sets torch and OMP_NUM_THREADS). Weights are random
with the shapes of the default trained models (timings do not depend on their values).
Effective bandwidth = compulsory bytes (members read + mu/sigma written, float64) / time, as a
fraction of the STREAM triad measured in the same run.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    markdown_table,
    stream_triad,
    time_call,
    write_json,
    write_markdown,
)

log = logging.getLogger(__name__)

NAME = "ens10-inference"
HELP = "ENS-10 baselines (EMOS, MLP, LeNet, U-Net, Transformer) as stencil programs vs PyTorch CPU"
MODELS = ("emos", "mlp", "lenet", "unet", "transformer")
# numpy cannot loop over channels: its unrolled U-Net / Transformer at the trained sizes (tens of
# thousands of terms per stencil) take hours to build, so those rows are skipped unless --unrolled
UNROLLED_TOO_LARGE = ("unet", "transformer")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", type=Path, help="write the results as JSON to this file")
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--backends", nargs="+", default=["numpy", "gt:cpu_ifirst"],
                   help="GT4Py backends to time (default numpy gt:cpu_ifirst)")
    p.add_argument("--grid", type=float, default=0.5, help="grid spacing in degrees (default 0.5)")
    p.add_argument("--members", type=int, default=10)
    p.add_argument("--hidden", type=int, default=32, help="MLP/LeNet hidden width (trained default 32)")
    p.add_argument("--channels", type=int, default=16, help="LeNet channels (trained default 16)")
    p.add_argument("--unet-width", type=int, default=16, help="U-Net width (trained default 16)")
    p.add_argument("--d-model", type=int, default=16, help="Transformer d_model (trained default 16)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--unrolled", action="store_true",
                   help="also build the unrolled U-Net/Transformer for numpy (hours at the trained sizes)")
    p.add_argument("--torch-dtypes", nargs="+", default=["float32", "float64"], choices=["float32", "float64"],
                   help="PyTorch dtypes to time (default both; float64 LeNet takes minutes per call on "
                        "2 cores); the error is measured against the last one")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--markdown", type=Path, default=DOCS_BENCH / "ens10-inference.md",
                   help="Markdown output (default docs/benchmarks/ens10-inference.md)")


def _architecture(model: str, args: argparse.Namespace) -> dict:
    """The size options of ``model`` from the command line."""
    return {"mlp": {"hidden": args.hidden}, "lenet": {"hidden": args.hidden, "channels": args.channels},
            "unet": {"width": args.unet_width}, "transformer": {"d_model": args.d_model}}.get(model, {})


def _checkpoint(model: str, grid: float, kw: dict, seed: int = 0):
    import torch

    from ens10 import schema
    from ens10.baselines.data import LOCATION_INPUTS
    from ens10.baselines.models import build_model
    from ens10.grid import grid_axes

    lat, lon = grid_axes(grid)
    lat = lat[::-1].copy()
    inputs = [f"{schema.NETCDF_NAME[v]}_{s}" for v in schema.PL_VARIABLES for s in ("mean", "std")]
    inputs += list(LOCATION_INPUTS)
    rng = np.random.default_rng(seed)
    shape = (len(lat), len(lon))
    norm = {"channel_mean": [float(rng.normal()) for _ in inputs],
            "channel_std": [float(rng.uniform(0.5, 2)) for _ in inputs],
            "target_loc": 270.0, "target_scale": 3.0,
            "emos_loc": torch.from_numpy(rng.normal(270, 5, shape).astype(np.float32)),
            "emos_spread": torch.from_numpy(rng.uniform(1, 4, shape).astype(np.float32)),
            "n_location": len(LOCATION_INPUTS)}
    net = build_model(model, len(inputs), shape, norm, **kw)
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if model == "emos" else 0.0))
    net.eval()
    ckpt = {"model": model, "target": "t850", "normalisation": norm, "inputs": inputs,
            "grid": {"lat": lat.tolist(), "lon": lon.tolist()}}
    return net, ckpt


class TorchPipeline:
    """PyTorch inference from the raw members (stats, standardisation, model), one dtype."""

    def __init__(self, net, ckpt, exported, members: dict[str, np.ndarray], dtype, band_rows: int = 46) -> None:
        import torch

        from ens10.baselines.data import LOCATION_INPUTS
        from ens10.grid import location_features

        self.torch, self.dtype = torch, dtype
        self.net = net.to(dtype)
        self.inputs = list(ckpt["inputs"])
        norm = ckpt["normalisation"]
        self.cm = torch.tensor(norm["channel_mean"], dtype=dtype).view(1, -1, 1, 1)
        self.cs = torch.tensor(norm["channel_std"], dtype=dtype).view(1, -1, 1, 1)
        self.vars = list(exported.variables)
        m = exported.members
        self.members = {v: torch.from_numpy(np.stack([members[f"{v}_m{k}"] for k in range(m)])).to(dtype)
                        for v in self.vars}
        lat, lon = np.asarray(ckpt["grid"]["lat"]), np.asarray(ckpt["grid"]["lon"])
        self.loc = {n: torch.from_numpy(location_features(lat, lon)[i]).to(dtype)
                    for i, n in enumerate(LOCATION_INPUTS)}
        self.tvar = "T"
        self.pointwise_emos = ckpt["model"].startswith("emos")
        self.model = ckpt["model"]
        self.target = self.members[self.tvar][None] if self.model == "transformer" else None
        # LeNet classifies patches: latitude bands give the same outputs; the U-Net's zero padding
        # at the field's edges and the pointwise models need the whole field in one call
        self.halo = exported.halo if self.model == "lenet" else 0
        self.band = band_rows

    def __call__(self):
        torch = self.torch
        with torch.no_grad():
            stats = {}
            for v in (self.vars if not self.pointwise_emos else [self.tvar]):
                mem = self.members[v]
                stats[f"{v}_mean"] = mem.mean(0)
                stats[f"{v}_std"] = mem.std(0, unbiased=False)
            if self.pointwise_emos:
                x = None
            else:
                zero = torch.zeros_like(stats[f"{self.tvar}_mean"])  # the Transformer reads only location
                x = torch.stack([stats.get(n, self.loc.get(n, zero)) for n in self.inputs])[None]
                x = torch.nan_to_num((x - self.cm) / self.cs, nan=0.0)
            mean, std = stats[f"{self.tvar}_mean"][None], stats[f"{self.tvar}_std"][None]
            if self.halo == 0 or x.shape[2] <= self.band:
                return self.net(x, mean, std, self.target)
            return self._bands(x, mean, std)

    def _bands(self, x, mean, std):
        """LeNet in latitude bands (its 9x9 patches of the whole field take ~16 GB in float64):
        each band gets ``halo`` real rows on both sides (the model's own pole padding only
        touches rows that are discarded, except at the poles where it is the model's), so every
        output equals the whole-field call."""
        torch, h, n = self.torch, self.halo, x.shape[2]
        mus, sigmas = [], []
        for i0 in range(0, n, self.band):
            i1 = min(i0 + self.band, n)
            lo, hi = max(i0 - h, 0), min(i1 + h, n)
            mu, sigma = self.net(x[:, :, lo:hi], mean[:, lo:hi], std[:, lo:hi])
            mus.append(mu[:, i0 - lo:i1 - lo])
            sigmas.append(sigma[:, i0 - lo:i1 - lo])
        return torch.cat(mus, 1), torch.cat(sigmas, 1)


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    from ens10.inference import InferenceProgram, export_model
    from ens10.inference.stacked import loops_supported
    from stencils import CPU_BACKENDS

    bad = [b for b in args.backends if b not in CPU_BACKENDS]
    if bad:
        raise BenchmarkError(f"--backends {bad}: choose from {', '.join(CPU_BACKENDS)}")
    torch.set_num_threads(args.threads)
    stream = stream_triad(threads=args.threads)
    load_start = os.getloadavg()
    results = []
    for model in args.models:
        net, ckpt = _checkpoint(model, args.grid, _architecture(model, args))
        ex = export_model(net, ckpt, members=args.members)
        rng = np.random.default_rng(1)
        members = {n: 270.0 + rng.normal(0, 3, ex.shape) for n in ex.forecast_inputs}
        points = ex.shape[0] * ex.shape[1]
        nbytes = 8 * points * (len(ex.forecast_inputs) + 2)
        row = {"model": model, "points": points, "fields_in": len(ex.forecast_inputs),
               "halo": ex.halo, "compulsory_bytes": nbytes, "torch": {}, "stencils": {}}
        ref = None
        for name in args.torch_dtypes:
            pipe = TorchPipeline(net, ckpt, ex, members, getattr(torch, name))
            t = time_call(pipe, repeats=args.repeats, warmup=1)
            row["torch"][name] = {"median_s": t.median_s, "spread": t.spread}
            ref = [a[0].double().numpy() for a in pipe()]
            row["error_reference"] = f"torch {name}"
            log.info("%s torch %s: %.4f s", model, name, t.median_s)
        for backend in args.backends:
            if model in UNROLLED_TOO_LARGE and not loops_supported(backend) and not args.unrolled:
                log.warning("%s on %s: skipped (unrolled build too large; --unrolled to force)", model, backend)
                row["stencils"][backend] = {"error": "skipped: unrolled build (--unrolled)"}
                continue
            t0 = time.perf_counter()
            try:
                runner = InferenceProgram(export_model(net, ckpt, members=args.members,
                                                       loops=loops_supported(backend)), backend)
            except Exception as exc:  # a backend that fails to build is reported, not fatal
                log.warning("%s on %s: build failed: %s", model, backend, exc)
                row["stencils"][backend] = {"error": str(exc)[:300]}
                continue
            build_s = time.perf_counter() - t0
            t = time_call(lambda r=runner, f=members: r(f), repeats=args.repeats, warmup=1)
            mu, sigma = runner(members)
            err = max(float(np.max(np.abs(mu - ref[0]) / np.abs(ref[0]).max())),
                      float(np.max(np.abs(sigma - ref[1]) / np.abs(ref[1]).max())))
            row["stencils"][backend] = {
                "median_s": t.median_s, "spread": t.spread, "build_s": build_s,
                "gbs": nbytes / t.median_s / 1e9, "fraction_of_stream": nbytes / t.median_s / 1e9 / stream.triad_gbs,
                "max_rel_error_vs_torch": err,
            }
            log.info("%s %s: %.4f s (build %.1f s), rel. error %.2e", model, backend, t.median_s, build_s, err)
        timed = {b: r for b, r in row["stencils"].items() if "median_s" in r}
        if timed:
            best = min(timed, key=lambda b: timed[b]["median_s"])
            row["best_backend"] = best
            if "float32" in row["torch"]:
                row["speedup_vs_torch_float32"] = row["torch"]["float32"]["median_s"] / timed[best]["median_s"]
        results.append(row)
    payload = {"benchmark": NAME, "machine": machine_info(), "threads": args.threads,
               "load_avg_start": list(load_start), "load_avg_end": list(os.getloadavg()),
               "stream_triad_gbs": stream.triad_gbs, "grid": args.grid, "members": args.members,
               "hidden": args.hidden, "channels": args.channels, "unet_width": args.unet_width,
               "d_model": args.d_model, "results": results}
    if args.json:
        write_json(args.json, payload)
    write_markdown(args.markdown, _markdown(payload, args))
    print(_table(payload))
    return 0


def _table(payload: dict) -> str:
    rows = []
    for r in payload["results"]:
        for b, s in r["stencils"].items():
            if "median_s" not in s:
                rows.append([r["model"], b, "skipped" if s["error"].startswith("skipped") else "build failed",
                             "", "", "", "", "", ""])
                continue
            f32 = r["torch"].get("float32", {}).get("median_s", float("nan"))
            f64 = r["torch"].get("float64", {}).get("median_s", float("nan"))
            rows.append([r["model"], b, 1e3 * s["median_s"], 1e3 * f32, 1e3 * f64, f32 / s["median_s"], s["gbs"],
                         s["fraction_of_stream"], s["build_s"]])
    return markdown_table(["model", "backend", "stencil ms", "torch f32 ms", "torch f64 ms",
                           "torch f32 / stencil", "eff. GB/s", "of STREAM", "build s"], rows)


def _markdown(payload: dict, args: argparse.Namespace) -> str:
    m = payload["machine"]
    cmd = (f"stratoflow bench {NAME} --models {' '.join(args.models)} --backends "
           f"{' '.join(args.backends)} --threads {args.threads} --repeats {args.repeats} "
           f"--torch-dtypes {' '.join(args.torch_dtypes)} --grid {args.grid} --members {args.members} "
           f"--hidden {args.hidden} --channels {args.channels} --unet-width {args.unet_width} "
           f"--d-model {args.d_model} --json FILE")
    lines = [
        f"# Benchmark: {NAME}",
        "",
        f"Global {args.grid}-degree field ({payload['results'][0]['points'] if payload['results'] else 0} "
        f"points), {args.members} members per predictor variable, one date; whole inference from "
        "the raw members (ensemble mean/std, predictors, network, Gaussian head). Stencil "
        "programs in float64 (stacked layout: channels as data dimensions, weights as GlobalTable "
        "parameters); PyTorch CPU on the same machine, "
        f"same run, {args.threads} threads. MLP hidden={args.hidden}, LeNet channels={args.channels}, "
        f"hidden={args.hidden}, U-Net width={args.unet_width} (levels held at every point: the "
        f"1/2 and 1/4 levels cost 4x and 16x the model's own work), Transformer d_model={args.d_model}. "
        f"STREAM triad in the same run: {payload['stream_triad_gbs']:.1f} GB/s.",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores (shared with other jobs: noisy), {m['time']}; "
        f"load average (1/5/15 min) {'/'.join(f'{x:.1f}' for x in payload['load_avg_start'])} at the "
        f"start, {'/'.join(f'{x:.1f}' for x in payload['load_avg_end'])} at the end.",
        "",
        _table(payload),
        "",
        "Effective bandwidth = compulsory bytes (every member field read once + mu, sigma written, "
        "float64) / median time. `build s`: code generation + compilation of the program's "
        "stencils (only loading them if they were already in the stencil cache). Max relative error vs PyTorch float64 is "
        "in the JSON.",
        "",
        f"Reproduce: `{cmd}`",
        "",
        "",
    ]
    return "\n".join(lines)
