"""ENS-10: data-loading throughput (raw GRIB via cfgrib, preprocessed netCDF), training time per
epoch of every baseline, and the test-year scores table, on a generated sample with the real
schema. The STREAM triad is measured in the same run; loading throughput is reported as a
fraction of it."""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    DOCS_BENCH,
    BenchmarkError,
    machine_info,
    markdown_table,
    stream_triad,
    write_json,
    write_markdown,
)

NAME = "ens10"
HELP = "ENS-10 loading throughput (GRIB, netCDF), training time per epoch, scores table"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    parser.add_argument("--grid", type=float, default=5.0, help="sample grid spacing in degrees")
    parser.add_argument("--dates", type=int, default=12, help="calendar dates per year")
    parser.add_argument("--epochs", type=int, default=3, help="training epochs per model")
    parser.add_argument("--target", default="t850", choices=("z500", "t850", "t2m"))
    parser.add_argument("--models", default="emos,emos_global,mlp,lenet,unet,transformer",
                        help="comma-separated baselines to train")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the sample and checkpoints here")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--truth", choices=("flow", "local-emos"), default="flow",
                        help="the sample's truth process (default flow: outside every baseline family)")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/benchmarks/ens10.md")


ORACLE = "oracle (generator truth)"
TRUTH_NOTE = {
    "flow": ("Truth process `flow`: flow- and regime-dependent errors, a blurred forecast anomaly, "
             "a skewed (two-piece normal) truth and member-dependent spread errors, so the "
             "oracle lies outside every baseline family (docs/ens10.md)."),
    "local-emos": ("Truth process `local-emos`: the oracle is a per-grid-point EMOS, so EMOS "
                   "reaching it checks the training, not the model."),
}


def oracle_gaps(scores_csv: Path, differences_csv: Path) -> list[list]:
    """Per model: CRPS, its 95% interval, CRPS / oracle CRPS - 1, and whether the paired
    difference to the oracle is significant (rows of ``evaluate``'s CSV files)."""
    import pandas as pd

    scores = pd.read_csv(scores_csv).set_index("model")
    pairs = pd.read_csv(differences_csv)
    if ORACLE not in scores.index:
        return []
    best = scores.loc[ORACLE, "crps"]
    rows = []
    for model, r in scores.drop(index=ORACLE).sort_values("crps").iterrows():
        vs = pairs[(pairs["model_a"] == model) & (pairs["model_b"] == ORACLE)]
        sig = vs["significant"].item() if len(vs) == 1 else "–"
        rows.append([model, f"{r['crps']:.4g}", f"[{r['crps_low']:.4g}, {r['crps_high']:.4g}]",
                     f"{100 * (r['crps'] / best - 1):+.1f}%", sig])
    return rows


def _grib_throughput(root: Path) -> dict:
    import ens10

    t0 = time.perf_counter()
    pl = ens10.open_dataset(root, "pl", levels=[500, 850], steps=[48]).load()
    sfc = ens10.open_dataset(root, "sfc", steps=[48]).load()
    dt = time.perf_counter() - t0
    n = pl.sizes["time"]
    nbytes = pl.nbytes + sfc.nbytes
    return {"initialisations": n, "seconds": dt, "samples_per_s": n / dt, "gb_per_s": nbytes / dt / 1e9}


def _netcdf_throughput(root: Path, target: str) -> dict:
    from ens10.baselines.data import load_split

    t0 = time.perf_counter()
    arr = load_split(root, target, "train", members=True)
    dt = time.perf_counter() - t0
    n = arr.predictors.shape[0]
    nbytes = arr.predictors.nbytes + arr.members.nbytes + 3 * arr.obs.nbytes
    return {"initialisations": n, "seconds": dt, "samples_per_s": n / dt, "gb_per_s": nbytes / dt / 1e9}


def run(args: argparse.Namespace) -> int:
    import torch

    from ens10.evaluate import evaluate
    from ens10.sample import make_sample
    from ens10.train import load_checkpoint, train

    if args.threads:
        torch.set_num_threads(args.threads)
    models = [m for m in args.models.split(",") if m]
    if not models:
        raise BenchmarkError("--models is empty: name at least one baseline")
    stream = stream_triad()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="stratoflow-ens10-bench-"))
    t0 = time.perf_counter()
    make_sample(work, grid=args.grid, years=(1998, 2017), n_dates=args.dates, grib_dates=1,
                grib_years=(2016, 2017), grib_levels=(500, 850), truth=args.truth)
    make_s = time.perf_counter() - t0
    grib = _grib_throughput(work / "grib")
    nc = _netcdf_throughput(work / "netcdf", args.target)
    training = {}
    ckpts = []
    for model in models:
        ck = train(model, args.target, work / "netcdf", work / "checkpoints", epochs=args.epochs,
                   resume=False, patience=args.epochs)
        hist = load_checkpoint(ck)["history"]
        training[model] = {"epochs": len(hist), "median_epoch_s": statistics.median(h["seconds"] for h in hist),
                           "best_val_crps": min(h["val_crps"] for h in hist)}
        ckpts.append(ck)
    md_path = evaluate(work / "netcdf", ckpts, work / "scores")
    scores_md = md_path.read_text().split("\n\n", 2)[-1]
    result = {
        "benchmark": NAME, "machine": machine_info(), "stream_triad_gbs": stream.triad_gbs,
        "sample": {"grid": args.grid, "dates_per_year": args.dates, "make_sample_s": make_s,
                   "truth": args.truth, "workdir": str(work)},
        "loading": {"grib": grib, "netcdf": nc}, "training": training,
        "scores_csv": (work / "scores" / "scores.csv").read_text(),
        "differences_csv": (work / "scores" / "differences.csv").read_text(),
    }
    gaps = oracle_gaps(work / "scores" / "scores.csv", work / "scores" / "differences.csv")
    if args.json:
        write_json(args.json, result)
    load_rows = [
        [name, d["initialisations"], d["seconds"], d["samples_per_s"], d["gb_per_s"], d["gb_per_s"] / stream.triad_gbs]
        for name, d in (("raw GRIB (cfgrib, 48 h pl 500/850 + sfc)", grib),
                        ("preprocessed netCDF (train split, all predictors + members)", nc))
    ]
    train_rows = [[m, t["epochs"], t["median_epoch_s"], t["best_val_crps"]] for m, t in training.items()]
    m = result["machine"]
    doc = (
        "# ENS-10 benchmark\n\n"
        f"`stratoflow bench ens10 --grid {args.grid} --dates {args.dates} --epochs {args.epochs} "
        f"--target {args.target} --truth {args.truth}{f' --threads {args.threads}' if args.threads else ''}` on {m['cpu']} ({m['cores']} cores, shared and noisy), "
        f"{m['time']}. STREAM triad in the same run: {stream.triad_gbs:.1f} GB/s.\n\n"
        f"Sample: {args.grid} degree grid, 1998-2017, {args.dates} initialisation dates a year "
        f"(generated in {make_s:.0f} s); GRIB part: 1 date, 2016-2017, levels 500/850. "
        + TRUTH_NOTE[args.truth] + "\n\n"
        "## Data loading\n\n"
        "A sample is one initialisation: the 48 h fields of all 10 members (GRIB: z t q w d u v at "
        "500/850 hPa and the 11 surface fields, opened lazily with cfgrib, which indexes every "
        "message first) or all predictor channels, the target members and ERA5 (netCDF, "
        "`load_split` of the training years). GB/s counts the decoded float32 bytes.\n\n"
        + markdown_table(["source", "initialisations", "seconds", "samples/s", "GB/s", "fraction of triad"], load_rows)
        + "\n## Training (CPU, torch)\n\n"
        + markdown_table(["model", "epochs", "median s/epoch", "best validation CRPS"], train_rows)
        + f"\n## Distance to the oracle ({args.target}, test years)\n\n"
        "CRPS with its 95% block-bootstrap interval over initialisations, the gap to the "
        "generator's oracle (the true predictive distribution), and whether the paired "
        "difference to the oracle is significant.\n\n"
        + markdown_table(["model", "CRPS", "95% interval", "vs oracle", "significant"], gaps)
        + f"\n## Scores on the test years ({args.target})\n\n" + scores_md
    )
    if not args.no_doc:
        write_markdown(DOCS_BENCH / "ens10.md", doc)
    print(doc)
    return 0
