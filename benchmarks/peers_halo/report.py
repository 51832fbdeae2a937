"""The halo benchmark's results: passes and pace-util combined per case, ratios with bootstrap
intervals, the weak-scaling rows, and the Markdown page -- all from plain result dicts."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.common import markdown_table

#: the packings timed per pass (``auto`` is the one its one-time measurement chose)
PACKINGS = ("slicing", "datatypes", "shared")
RESAMPLES = 2000
WEAK_SCALING_COMMANDS = (
    "mpiexec -n 6 stratoflow bench halo",
    "mpiexec -n 24 stratoflow bench halo --layout 2 --cases 96 --weak-scaling",
)


def quartiles(samples: Sequence[float]) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of ``samples`` (linear interpolation)."""
    q1, q2, q3 = np.percentile(np.asarray(samples, dtype=float), [25, 50, 75])
    return float(q1), float(q2), float(q3)


def ratio_interval(
    a: Sequence[float], b: Sequence[float], resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, float]:
    """median(a) / median(b) and the 95 % percentile-bootstrap interval of that ratio (``a``
    and ``b`` resampled independently, ``resamples`` times)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    ma = np.median(rng.choice(xa, (resamples, xa.size)), axis=1)
    mb = np.median(rng.choice(xb, (resamples, xb.size)), axis=1)
    lo, hi = np.percentile(ma / mb, [2.5, 97.5])
    return {"median": float(np.median(xa) / np.median(xb)), "ci95_low": float(lo),
            "ci95_high": float(hi)}  # fmt: skip


def _spread(samples: Sequence[float]) -> dict[str, float]:
    q1, med, q3 = quartiles(samples)
    return {"median_ms": med, "q1_ms": q1, "q3_ms": q3}


def combine_case(
    passes: Sequence[dict[str, Any]], pace_row: dict[str, Any] | None, triad_gbs: float | None
) -> dict[str, Any]:
    """One case's summary: the stratoflow passes' samples pooled (each pass keeps its median),
    raw MPI pooled, pace-util's samples, and the ratios with their intervals."""
    first = passes[0]
    auto = [s for p in passes for s in p["samples_ms"][p["packing"]]]
    raw = [s for p in passes for s in p["samples_ms"]["raw"]]
    row: dict[str, Any] = {k: first[k] for k in ("case", "ranks", "layout", "levels", "halo",
                                                 "cells_per_rank", "packing")}  # fmt: skip
    row["stratoflow"] = {**_spread(auto),
                         "pass_median_ms": [statistics.median(p["samples_ms"][p["packing"]])
                                            for p in passes]}  # fmt: skip
    row["raw_mpi"] = _spread(raw)
    row["packings_median_ms"] = {
        k: statistics.median([s for p in passes for s in p["samples_ms"][k]]) for k in PACKINGS
    }
    row["ratio_to_raw"] = ratio_interval(auto, raw)
    row["bytes_sent_per_rank"] = first["bytes_sent_per_rank"]
    row["bytes_sent_all_ranks"] = first["bytes_sent_all_ranks"]
    row["one_time_measurement_ms"] = first["one_time_measurement_ms"]
    row["phases_ms"] = first["phases_ms"]
    gbs = row["bytes_sent_all_ranks"] / (row["stratoflow"]["median_ms"] * 1e-3) / 1e9
    row["halo_GBs"] = gbs
    row["fraction_of_triad"] = gbs / triad_gbs if triad_gbs else None
    if pace_row is not None:
        row["pace_util"] = {**_spread(pace_row["samples_ms"]),
                            "bytes_sent_per_rank": pace_row["bytes_sent_per_rank"]}  # fmt: skip
        row["ratio_to_pace"] = ratio_interval(auto, pace_row["samples_ms"])
    return row


def combine(
    passes: Sequence[Sequence[dict[str, Any]]], pace: dict[str, Any], triad_gbs: float | None
) -> list[dict[str, Any]]:
    """Per case (in the order of the first pass): :func:`combine_case`."""
    pace_rows = {r["case"]: r for r in pace.get("results", [])} if pace.get("status") == "ok" else {}
    return [
        combine_case([p[i] for p in passes], pace_rows.get(case["case"]), triad_gbs)
        for i, case in enumerate(passes[0])
    ]


def weak_scaling_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The base run's cases with the weak-scaling run's cells per rank, then that run's cases;
    efficiency = base time / time (1 = perfect weak scaling)."""
    ws = payload.get("weak_scaling")
    if not ws:
        return []
    per_rank = {r["cells_per_rank"] for r in ws["results"]}
    runs = [(payload, r) for r in payload["results"] if r["cells_per_rank"] in per_rank]
    runs += [(ws, r) for r in ws["results"]]
    base: dict[int, dict[str, Any]] = {}
    rows = []
    for run, r in runs:
        b = base.setdefault(r["cells_per_rank"], r)
        pace, pace_b = r.get("pace_util"), b.get("pace_util")
        rows.append({
            "ranks": r["ranks"], "case": r["case"], "cells_per_rank": r["cells_per_rank"],
            "stratoflow_ms": r["stratoflow"]["median_ms"], "raw_mpi_ms": r["raw_mpi"]["median_ms"],
            "pace_util_ms": pace["median_ms"] if pace else None,
            "ratio_to_pace": r.get("ratio_to_pace"), "ratio_to_raw": r["ratio_to_raw"],
            "efficiency": b["stratoflow"]["median_ms"] / r["stratoflow"]["median_ms"],
            "pace_efficiency": pace_b["median_ms"] / pace["median_ms"] if pace and pace_b else None,
            "peak_rss_MB_per_rank": run.get("peak_rss_MB_per_rank"),
            "pace_peak_rss_MB_per_rank": (run.get("pace") or {}).get("peak_rss_MB_per_rank"),
            "oversubscribed": (run["machine"].get("cores") or 0) < r["ranks"],
        })  # fmt: skip
    return rows


def _ratio(r: dict[str, float] | None) -> str:
    if not r:
        return "n/a"
    return f"{r['median']:.3g} [{r['ci95_low']:.3g}, {r['ci95_high']:.3g}]"


def _na(value: Any, fmt: str = ".3g") -> str:
    return "n/a" if value is None else format(value, fmt)


def _pace_line(pace: dict[str, Any]) -> str:
    status = pace.get("status")
    if status == "ok":
        setup = pace.get("venv_setup_s") or 0.0
        return (f"pace-util {pace.get('pace_util_version')} (numpy {pace.get('numpy_version')}) "
                f"in its own venv{f', created in {setup:.0f} s' if setup else ''}; its job took "
                f"{pace.get('wall_s', 0):.1f} s.")  # fmt: skip
    if status == "disabled":
        return "pace-util not measured (--no-pace)."
    return f"**{pace.get('reason', 'pace-util not measured')}**"


def _kilobytes(r: dict[str, Any]) -> str:
    pace = r.get("pace_util")
    return f"{r['bytes_sent_per_rank'] / 1e3:.1f} / " + (
        f"{pace['bytes_sent_per_rank'] / 1e3:.1f}" if pace else "n/a"
    )


def _main_table(results: Sequence[dict[str, Any]]) -> str:
    return markdown_table(
        ["case", "ranks", "packing", "stratoflow ms (run 1 / run 2)", "pace-util ms", "raw MPI ms",
         "stratoflow / pace-util [95% CI]", "stratoflow / raw [95% CI]",
         "kB sent/rank (stratoflow / pace-util)", "halo GB/s", "of triad"],
        [[r["case"], r["ranks"], r["packing"],
          " / ".join(f"{m:.3g}" for m in r["stratoflow"]["pass_median_ms"]),
          _na((r.get("pace_util") or {}).get("median_ms")), r["raw_mpi"]["median_ms"],
          _ratio(r.get("ratio_to_pace")), _ratio(r["ratio_to_raw"]),
          _kilobytes(r),
          r["halo_GBs"], _na(r["fraction_of_triad"])]
         for r in results],
    )  # fmt: skip


def _spread_table(results: Sequence[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        for name, key in (("stratoflow", "stratoflow"), ("pace-util", "pace_util"),
                          ("raw MPI", "raw_mpi")):  # fmt: skip
            s = r.get(key)
            if s:
                rows.append([r["case"], name, s["q1_ms"], s["median_ms"], s["q3_ms"]])
    return markdown_table(["case", "exchange", "q1 ms", "median ms", "q3 ms"], rows)


def _weak_table(rows: Sequence[dict[str, Any]]) -> str:
    return markdown_table(
        ["ranks", "case", "cells/rank", "stratoflow ms", "raw MPI ms", "pace-util ms",
         "stratoflow / pace-util [95% CI]", "stratoflow / raw [95% CI]",
         "efficiency (stratoflow / pace-util)", "peak RSS MB/rank (stratoflow / pace-util)",
         "oversubscribed"],
        [[r["ranks"], r["case"], f"{r['cells_per_rank']}x{r['cells_per_rank']}", r["stratoflow_ms"],
          r["raw_mpi_ms"], _na(r["pace_util_ms"]), _ratio(r["ratio_to_pace"]),
          _ratio(r["ratio_to_raw"]),
          f"{r['efficiency']:.3g} / {_na(r['pace_efficiency'])}",
          f"{_na(r['peak_rss_MB_per_rank'], '.0f')} / {_na(r['pace_peak_rss_MB_per_rank'], '.0f')}",
          "yes" if r["oversubscribed"] else "no"]
         for r in rows],
    )  # fmt: skip


METHOD = """\
## How the figures are made

- **stratoflow**: `HaloExchange` (mapping/cluster) over all five arrays at once (one message per
  neighbour), every packing forced, and `auto` = the packing its one-time measurement at
  construction chose. Each repeat: barrier, `update()`, the slowest rank's time (allreduce max);
  the packings and raw MPI are interleaved in 3 rounds.
- **raw MPI**: Isend/Irecv of contiguous buffers with stratoflow's byte counts between the same
  rank pairs -- the limit for these bytes.
- **pace-util**: `benchmarks/peers_halo/pace_worker.py` in a venv of its own (pace-util 0.9.0
  needs numpy<2; `.stratoflow_cache/pace-venv`, or `--pace-venv DIR`), an MPI job of its own
  started by rank 0 with that venv's `mpiexec` while the benchmark's other ranks sleep in a
  polling barrier. Same cells, levels, halo and float64 arrays of the same shapes (`Quantity`
  with origin (h, h, 0), u on (`x`, `y_interface`, `z`), v on (`x_interface`, `y`, `z`)); a
  scalar `HaloUpdater` for the 3 scalars and a vector one for (u, v), both built once from a
  `CubedSphereCommunicator` over `pace.util.MPIComm`; each repeat: barrier, both `start()`, both
  `wait()`, the slowest rank's time. Its bytes are pace's own boundary send slices: pace leaves
  the shared u/v interface points to a separate `synchronize_vector_interfaces`, which
  stratoflow's exchange includes (`sync_edges`), so stratoflow moves a little more.
- The limit: stratoflow's `shared` packing copies each halo byte twice (gathered into the
  node-shared segment, scattered out of the peer's), as MPICH's shared-memory transport copies a
  contiguous message twice through its cells (its single-copy CMA path is off by default); the
  gathers and scatters are strided (rotated halo rectangles, rows of `levels` values), MPI's
  copies contiguous.
- Processes cannot interleave, so the run goes stratoflow, pace-util, stratoflow (the same
  exchanges both times); both stratoflow medians are shown and the ratios pool both runs.
  *[95% CI]*: percentile bootstrap of the ratio of medians (2000 resamples).
- *halo GB/s*: bytes sent by all ranks per second of stratoflow's exchange; *of triad*: that
  over the STREAM triad measured in the same run. *Peak RSS*: `ru_maxrss`, max over ranks,
  whole process (the stratoflow CLI's imports included).
"""


def markdown(payload: dict[str, Any]) -> str:
    """The generated block of docs/benchmarks/halo.md for ``payload`` (a run's JSON)."""
    info, results = payload["machine"], payload["results"]
    triad = payload.get("stream_triad_GBs")
    ranks = payload["mpi_ranks"]
    oversubscribed = (
        f" The {ranks} ranks share {info['cores']} cores (oversubscribed): waiting ranks poll, so "
        "times include scheduling and are noisy; ratios measured in the same run are what to "
        "compare." if (info.get("cores") or 0) < ranks else ""
    )  # fmt: skip
    pace = payload.get("pace", {})
    text = (
        "# Halo exchange benchmark\n\n"
        f"Measured with `{payload['command']}` on {info['cpu']} ({info['cores']} cores, {ranks} "
        f"MPI ranks), {info['time']}. STREAM triad in the same run: "
        f"{f'{triad:.1f} GB/s' if triad else 'not measured'}.{oversubscribed} {_pace_line(pace)}\n\n"
        "Reproduce (repository root, `.venv/bin` first on `PATH`): "
        f"`{WEAK_SCALING_COMMANDS[0]}`, then for the weak-scaling table "
        f"`{WEAK_SCALING_COMMANDS[1]}`. Both write `docs/benchmarks/halo.json` (the JSON behind "
        "this page; the second adds its section to the first's) and this page.\n\n"
        f"Each case: 3 cell-centred scalars + one D-grid (u, v) pair, {results[0]['levels'] if results else '?'} "
        f"levels, halo depth {results[0]['halo'] if results else '?'}, float64. Goal: stratoflow "
        "faster than pace-util, and <= 1.1x raw MPI.\n\n"
        + _main_table(results)
        + "\n## Spread (all repeats)\n\n" + _spread_table(results)
        + "\n## Packings (median ms; `auto` = the one-time measurement's choice)\n\n"
        + markdown_table(
            ["case", "auto", *PACKINGS, "one-time measurement ms"],
            [[r["case"], r["packing"], *(r["packings_median_ms"][k] for k in PACKINGS),
              ", ".join(f"{k} {v:.3g}" for k, v in r["one_time_measurement_ms"].items())]
             for r in results],
        )  # fmt: skip
        + "\n## Phases (mean per exchange, rank 0, run 1)\n\n"
        + markdown_table(
            ["case", "packing", "pack ms", "post ms", "wait ms", "unpack ms"],
            [[r["case"], p, *(ph[k] for k in ("pack", "post", "wait", "unpack"))]
             for r in results for p, ph in r["phases_ms"].items()],
        )  # fmt: skip
        + "\n## Memory\n\n"
        f"Peak resident memory per rank (max over ranks): stratoflow "
        f"{_na(payload.get('peak_rss_MB_per_rank'), '.0f')} MB (of which "
        f"{_na(payload.get('rss_growth_MB_per_rank'), '.0f')} MB after the CLI started), pace-util "
        f"worker {_na(pace.get('peak_rss_MB_per_rank'), '.0f')} MB.\n"
    )
    rows = weak_scaling_rows(payload)
    if rows:
        ws = payload["weak_scaling"]
        text += (
            "\n## Weak scaling (same cells per rank)\n\n"
            f"Larger run: `{ws['command']}`, {ws['machine']['time']}. "
            f"{_pace_line(ws.get('pace', {}))} Ranks beyond the cores are oversubscribed: "
            "the times measure this machine's scheduling as much as the exchange.\n\n"
            + _weak_table(rows)
        )
    else:
        text += (
            f"\n## Weak scaling\n\nNot measured yet: run `{WEAK_SCALING_COMMANDS[1]}` after the "
            "6-rank run.\n"
        )
    return text + "\n" + METHOD
