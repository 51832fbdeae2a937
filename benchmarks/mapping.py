"""StencilFlow mapping: analysis + partitioning time vs DAG size, simulator throughput, model vs
simulated cycles of the examples. STREAM triad measured in the same run."""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path

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

NAME = "map"
DOCS = Path(__file__).resolve().parent.parent / "docs"
FV3_ROUTINES = ("fv_tp_2d", "c_sw", "d_sw", "geopk")
HELP = "StencilFlow: analysis/partitioning scaling (10-1000 stencils), simulator throughput, model vs simulation"
log = logging.getLogger(__name__)
EXAMPLES = Path(__file__).resolve().parent.parent / "mapping" / "spatial" / "examples"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", type=Path, default=None, help="write the results as JSON to this file")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000], help="DAG sizes (stencils)")
    parser.add_argument("--devices", type=int, default=4, help="devices for the partitioning step")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats (median)")
    parser.add_argument("--markdown", type=Path, default=DOCS_BENCH / "mapping.md", help="Markdown table output")
    parser.add_argument("--fv3", nargs="*", default=None, metavar="ROUTINE",
                        help=f"also model FV3's routines (fv3:ROUTINE at C12; no names: {' '.join(FV3_ROUTINES)}) and "
                             "write the generated block of --fv3-page")
    parser.add_argument("--fv3-only", action="store_true", help="only the FV3 part (with --fv3)")
    parser.add_argument("--fv3-page", type=Path, default=DOCS / "stencilflow.md",
                        help="page whose 'fv3-model' block is rewritten (default docs/stencilflow.md)")


def _scaling(sizes: list[int], devices: int, repeats: int) -> list[dict]:
    from mapping.spatial.analysis import analyse
    from mapping.spatial.generator import synthetic
    from mapping.spatial.model import load_program
    from mapping.spatial.partition import Device, Partitioner, stencil_bytes

    rows = []
    for kind in ("chain", "diamond"):
        for n in sizes:
            spec = synthetic(kind, n, (64, 64, 64), seed=1)
            prog = load_program(spec)
            an = analyse(prog)
            # each device holds a bit more than its share of the stencils (and the largest one),
            # with headroom for the FIFOs of the cut channels, so the memory forces cuts
            mem = list(stencil_bytes(an).values())
            share = max(max(mem), math.ceil(sum(mem) / (devices - 0.5)))
            dev = Device(memory_bytes=math.ceil(1.25 * share), operators=10**9)
            reps = repeats if n <= 100 else 1
            t_an = time_call(lambda prog=prog: analyse(prog), repeats=reps, warmup=0 if n > 100 else 1)
            t_pa = time_call(lambda prog=prog, an=an, dev=dev: Partitioner([dev] * devices)(prog, an),
                             repeats=reps, warmup=0 if n > 100 else 1)
            part = Partitioner([dev] * devices)(prog, an)
            rows.append({"kind": kind, "stencils": n, "channels": len(an.channels),
                         "analysis_s": t_an.median_s, "partition_s": t_pa.median_s,
                         "total_s": t_an.median_s + t_pa.median_s, "cut_channels": len(part.cut_channels),
                         "devices_used": sum(1 for u in part.devices if u.stencils)})
            log.info("%s %d: analysis %.3f s, partition %.3f s", kind, n, t_an.median_s, t_pa.median_s)
    return rows


def _simulations(triad_gbs: float) -> list[dict]:
    from mapping.spatial.analysis import analyse
    from mapping.spatial.generator import jacobi_chain
    from mapping.spatial.model import load_program
    from mapping.spatial.reference import ReferenceExecutor
    from mapping.spatial.simulator import StreamingSimulator

    progs = [load_program(EXAMPLES / f"{n}.json") for n in ("jacobi2d_chain", "jacobi3d_chain", "hdiff", "forkjoin")]
    progs.append(load_program(jacobi_chain(8, (64, 64, 64)), "jacobi3d_64cube_x8"))
    rows = []
    for prog in progs:
        an = analyse(prog)
        inputs = prog.load_inputs()
        sim = StreamingSimulator(an)
        t = time_call(lambda sim=sim, inputs=inputs: sim(inputs), repeats=3, warmup=1)
        res = sim(inputs)
        ref = ReferenceExecutor(prog)(inputs)
        exact = all((res.outputs[o] == ref[o]).all() for o in prog.outputs)
        if not exact:
            raise BenchmarkError(f"simulation of {prog.name} differs from the reference")
        # bytes the simulated streams carry (every channel token) per second of simulation
        stream_bytes = sum(c.token_bytes for c in an.channels) * an.model.tokens
        rows.append({"program": prog.name, "points": prog.points, "stencils": len(prog.stencils),
                     "model_cycles": an.model.cycles, "simulated_cycles": res.cycles,
                     "model_over_simulated": an.model.cycles / res.cycles, "sim_s": t.median_s,
                     "points_per_s": prog.points / t.median_s,
                     "stencil_points_per_s": prog.points * len(prog.stencils) / t.median_s,
                     "stream_gbs": stream_bytes / t.median_s / 1e9,
                     "stream_over_triad": stream_bytes / t.median_s / 1e9 / triad_gbs,
                     "model_gops": an.model.gops, "exact": exact})
        log.info("%s: %d cycles (model %d) in %.3f s", prog.name, res.cycles, an.model.cycles, t.median_s)
    return rows


def _arithmetic_operations(prog) -> int:
    """Floating-point operations per point of a program: arithmetic and math functions on field
    values, not the integer index arithmetic, comparisons and selects of region and domain
    predicates (counted by the model's operators)."""
    from mapping.spatial.device import value_operations

    return sum(value_operations(prog).values())


def _fv3(routines: list[str], triad_gbs: float) -> list[dict]:
    """Per FV3 routine at C12 (one rank): the bridged program's performance model (operations,
    on-chip bytes, link traffic on the fewest default devices that hold it, modelled throughput)
    next to fv3core's measured numpy-backend time of the same launch sequence."""
    import fv3core.stencilflow as fv3_programs
    from mapping.spatial.analysis import Target, analyse
    from mapping.spatial.device import PAPER_SINGLE_DEVICE_TOPS, STRATIX10_GX2800, estimate
    from mapping.spatial.errors import CapacityError
    from mapping.spatial.partition import Device, Network, Partitioner, check_fits

    target, dev = Target(), Device()
    rows = []
    for routine in routines:
        if routine not in fv3_programs.ROUTINES:
            raise BenchmarkError(f"--fv3 {routine}: not an FV3 program; use one of {sorted(fv3_programs.ROUTINES)}")
        rec = fv3_programs.build(routine, 12)
        prog = rec.program
        an = analyse(prog, target)
        devices, traffic, link_gbs = None, 0, None
        for network in (Network(), Network(link_gbs=1e6)):  # the defaults, then links without a limit
            for n in range(1, 17):
                try:
                    if n == 1:
                        check_fits(an, dev)
                    else:
                        part = Partitioner([dev] * n, network, target)(prog, an)
                        traffic = part.traffic_bytes_per_cycle
                        link_gbs = max(part.link_bytes_per_cycle) * target.clock_mhz * 1e6 / 1e9
                except CapacityError:
                    continue
                devices = n
                break
            if devices is not None:
                break
        ops = an.model.operations_per_point
        recurrences = [i.carried_latency for n_, i in an.stencils.items() if prog.stencils[n_].recurrence]
        t_cpu = time_call(lambda rec=rec: [f() for f in rec.launches], repeats=3, warmup=1).median_s
        need_ops = sum(i.operations for i in an.stencils.values())
        limits = []
        if need_ops > dev.operators:
            limits.append(f"operators ({need_ops} > {dev.operators} per device)")
        if an.model.onchip_bytes > dev.memory_bytes:
            limits.append("on-chip memory")
        if link_gbs is not None and link_gbs > Network().link_gbs:
            limits.append(f"links ({link_gbs:.0f} GB/s on the busiest of {devices} devices' links > {Network().link_gbs:.0f})")
        if recurrences and max(recurrences) > 1:
            limits.append(f"recurrence (carried path {max(recurrences)} cycles per level: that many columns "
                          "interleaved, or one level per that many cycles)")
        rows.append({
            "routine": routine, "stencils": len(prog.stencils), "points": prog.points,
            "ops_per_point": ops, "ops_per_cycle": ops * prog.vectorization,
            "flops_per_point": _arithmetic_operations(prog),
            "onchip_bytes": an.model.onchip_bytes, "offchip_bytes_per_point": an.model.offchip_bytes / prog.points,
            "devices": devices, "link_bytes_per_cycle": traffic,
            "steady_gops": ops * prog.vectorization * target.clock_mhz * 1e6 / 1e9,
            "steady_gflops": _arithmetic_operations(prog) * prog.vectorization * target.clock_mhz * 1e6 / 1e9,
            "model_cycles": an.model.cycles, "model_s": an.model.seconds, "model_gops": an.model.gops,
            "offchip_gbs": an.model.offchip_bytes / prog.points * prog.vectorization * target.clock_mhz * 1e6 / 1e9,
            "cpu_numpy_s": t_cpu, "cpu_over_model": t_cpu / an.model.seconds,
            "recurrences": len(recurrences), "limits": "; ".join(limits) or "none at this size",
        })
        est = estimate(an, STRATIX10_GX2800)
        s10_cycles = an.model.cycles - an.model.tokens + prog.points / est.points_per_cycle
        s10_s = s10_cycles / (STRATIX10_GX2800.clock_mhz * 1e6)
        rows[-1].update({
            "s10_device": STRATIX10_GX2800.name, "s10_dsps": est.dsps,
            "s10_dsp_share": est.dsps / STRATIX10_GX2800.dsp_blocks,
            "s10_onchip_share": est.onchip_bytes / STRATIX10_GX2800.onchip_bytes,
            "s10_logic_ops_per_point": est.unmapped_per_point, "s10_carried_latency": est.carried_latency,
            "s10_bounds": dict(est.bounds), "s10_points_per_cycle": est.points_per_cycle, "s10_limit": est.limit,
            "s10_gflops": est.gflops, "s10_over_paper": est.gflops / (PAPER_SINGLE_DEVICE_TOPS * 1e3),
            "s10_model_s": s10_s, "cpu_over_s10": t_cpu / s10_s,
        })
        log.info("fv3:%s: %d stencils, %d ops/point, %d devices, numpy %.4f s", routine, len(prog.stencils), ops,
                 devices or -1, t_cpu)
    return rows


def _fv3_block(rows: list[dict], triad_gbs: float, machine: dict) -> str:
    """The generated 'fv3-model' block of docs/stencilflow.md."""
    from mapping.spatial.analysis import Target
    from mapping.spatial.device import PAPER_SINGLE_DEVICE_TOPS
    from mapping.spatial.device import STRATIX10_GX2800 as s10
    from mapping.spatial.partition import Device

    t, d = Target(), Device()
    return "\n".join([
        f"Generated by `stratoflow bench map --fv3` on {machine['cpu']} ({machine['cores']} cores, shared; "
        f"STREAM triad {triad_gbs:.1f} GB/s in the same run). Model: {t.clock_mhz:.0f} MHz, one point per "
        f"cycle, devices of {d.memory_bytes // 2**20} MiB on-chip and {d.operators} operators (the project's "
        "Stratix 10 GX 2800 defaults).",
        "",
        markdown_table(["routine", "stencils", "ops/point", "flops/point", "on-chip KiB", "off-chip B/point",
                        "devices", "link B/cycle", "steady GOp/s", "steady GFlop/s", "model s (C12 rank)", "numpy s",
                        "numpy/model", "limits"],
                       [[r["routine"], r["stencils"], r["ops_per_point"], r["flops_per_point"],
                         r["onchip_bytes"] / 1024, r["offchip_bytes_per_point"], r["devices"] or "> 16",
                         r["link_bytes_per_cycle"], r["steady_gops"], r["steady_gflops"], r["model_s"],
                         r["cpu_numpy_s"], r["cpu_over_model"], r["limits"]] for r in rows]),
        "`ops/point`: the model's operators per point (one point per cycle, so also per cycle), which "
        "include the comparisons and selects of every region, interval and compute-domain predicate; "
        "`flops/point`: only the arithmetic on field values (the paper's kind of operation). "
        "`steady GOp/s`, `steady GFlop/s`: those per point times one point per cycle at the clock, once "
        "the pipeline is full; `model s`: the modelled time of the rank's C12 domain (points plus pipeline depth, which "
        "dominates at this size); `numpy s`: fv3core's GT4Py numpy-backend run of the same launch sequence "
        "(median of 3); `devices`: the fewest default devices the partitioner places the routine on (with "
        "links of unlimited bandwidth when the default links cannot carry any placement: see `limits`).",
        "",
        f"On one {s10.name} (`mapping.spatial.device.STRATIX10_GX2800`): {s10.dsp_blocks} DSP blocks and "
        f"{s10.onchip_bytes / 2**20:.1f} MiB of M20K (Intel's figures), {s10.clock_mhz:.0f} MHz (the project's "
        "clock, not a published one); DSPs per operation from Intel's DSP block table: a float64 multiply "
        "takes 4 blocks, a float64 add or subtract none (logic); divisions and functions use none. "
        f"StencilFlow's paper reports {PAPER_SINGLE_DEVICE_TOPS} TOp/s on one Stratix 10 (abstract; cited, "
        "not measured here).",
        "",
        markdown_table(["routine", "flops/point", "DSPs/point", "DSP share", "on-chip share", "carried cycles",
                        "points/cycle", "limit", "GFlop/s", "of 1.31 TOp/s", "model s (C12 rank)", "numpy/model"],
                       [[r["routine"], r["flops_per_point"], r["s10_dsps"], r["s10_dsp_share"],
                         r["s10_onchip_share"], r["s10_carried_latency"] or "-", r["s10_points_per_cycle"],
                         r["s10_limit"], r["s10_gflops"], r["s10_over_paper"], r["s10_model_s"],
                         r["cpu_over_s10"]] for r in rows]),
        "`DSPs/point`: DSP blocks the routine's pipelines occupy at one point per cycle; `DSP share`, "
        "`on-chip share`: that and the model's on-chip bytes as a fraction of the device's; `carried cycles`: "
        "the longest carried path of a recurrence node (one level per that many cycles: the emitted code does "
        "not interleave columns); `points/cycle`: the least of 1, device DSPs over DSPs needed, device memory over memory "
        "needed and 1 / carried cycles (above 1 of a resource's bound is headroom, not speed: the program "
        "streams one point per cycle); `limit`: the bound that sets it (`none`: one point per cycle, the "
        "pipeline's own rate); `GFlop/s`: flops/point x points/cycle x clock; `of 1.31 TOp/s`: that over the "
        "paper's single-device figure; `numpy/model`: fv3core's numpy time over this device's modelled time.",
    ])


def run(args: argparse.Namespace) -> int:
    if args.fv3_only:
        if args.fv3 is None:
            raise BenchmarkError("--fv3-only needs --fv3")
        triad = stream_triad()
        machine = machine_info()
        rows = _fv3(list(args.fv3) or list(FV3_ROUTINES), triad.triad_gbs)
        if args.json:
            write_json(args.json, {"benchmark": NAME, "machine": machine, "stream_triad_gbs": triad.triad_gbs,
                                   "fv3": rows})
        from stencils.atomic import atomic_update_block

        log.info("wrote %s", atomic_update_block(args.fv3_page, "fv3-model", _fv3_block(rows, triad.triad_gbs, machine)))
        return 0
    if args.devices < 2:
        raise BenchmarkError("--devices must be >= 2 for the partitioning benchmark")
    triad = stream_triad()
    t0 = time.perf_counter()
    scaling = _scaling(args.sizes, args.devices, args.repeats)
    sims = _simulations(triad.triad_gbs)
    growth = {}
    for kind in ("chain", "diamond"):
        pts = [(r["stencils"], r["total_s"]) for r in scaling if r["kind"] == kind]
        if len(pts) >= 2 and pts[0][1] > 0:
            growth[kind] = math.log(pts[-1][1] / pts[0][1]) / math.log(pts[-1][0] / pts[0][0])
    payload = {"benchmark": NAME, "machine": machine_info(), "stream_triad_gbs": triad.triad_gbs,
               "scaling": scaling, "growth_exponent": growth, "simulation": sims,
               "wall_s": time.perf_counter() - t0}
    if args.json:
        write_json(args.json, payload)
    md = [
        "# StencilFlow mapping benchmark",
        "",
        f"Machine: {payload['machine']['cpu']}, {payload['machine']['cores']} cores (shared, noisy). "
        f"STREAM triad in the same run: {triad.triad_gbs:.1f} GB/s. Reproduce: `stratoflow bench map --json map.json`.",
        "",
        "## Analysis + partitioning time vs DAG size",
        "",
        f"Synthetic DAGs on a 64^3 domain, partitioned onto {args.devices} devices whose memory forces cuts. "
        "Median of repeats (1 repeat at 1000 stencils).",
        "",
        markdown_table(["kind", "stencils", "channels", "analysis s", "partition s", "total s", "cuts", "devices used"],
                       [[r["kind"], r["stencils"], r["channels"], r["analysis_s"], r["partition_s"], r["total_s"],
                         r["cut_channels"], r["devices_used"]] for r in scaling]),
        "Growth: total time ~ stencils^" + ", ".join(f"{g:.2f} ({k})" for k, g in growth.items())
        + " between the smallest and largest size.",
        "",
        "## Streaming simulator: throughput and model vs simulated cycles",
        "",
        "Cycle-exact simulation (bounded FIFOs of the computed depths) of the examples and of the "
        "64^3 chain of 8 jacobi stencils; outputs equal the NumPy reference exactly in every row. "
        "`stream/triad`: bytes carried by all simulated channels per second of simulation, as a fraction "
        "of the STREAM triad bandwidth. `model/sim` = 1 means the performance model's cycle count "
        "(tokens + pipeline depth) is exactly what the simulated hardware takes: with the computed "
        "buffers no stream ever stalls. The simulator's cost is per pattern change, not per cycle "
        "(about 35 batches for the 64^3 chain).",
        "",
        markdown_table(["program", "points", "stencils", "model cycles", "simulated cycles", "model/sim",
                        "sim s", "points/s", "stencil-points/s", "stream/triad", "model GOp/s @300MHz"],
                       [[r["program"], r["points"], r["stencils"], r["model_cycles"], r["simulated_cycles"],
                         r["model_over_simulated"], r["sim_s"], r["points_per_s"], r["stencil_points_per_s"],
                         r["stream_over_triad"], r["model_gops"]] for r in sims]),
    ]
    write_markdown(args.markdown, "\n".join(md) + "\n")
    log.info("wrote %s", args.markdown)
    if args.fv3 is not None:
        from stencils.atomic import atomic_update_block

        rows = _fv3(list(args.fv3) or list(FV3_ROUTINES), triad.triad_gbs)
        payload["fv3"] = rows
        if args.json:
            write_json(args.json, payload)
        block = _fv3_block(rows, triad.triad_gbs, payload["machine"])
        log.info("wrote %s", atomic_update_block(args.fv3_page, "fv3-model", block))
    return 0
