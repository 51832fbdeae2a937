"""Readable summary, JSON report and DOT text or drawing (PNG, SVG, PDF) of a mapped program."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapping.spatial.analysis import Analysis
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.files import atomic_write_bytes, atomic_write_text
from mapping.spatial.partition import Partition
from mapping.spatial.simulator import SimulationResult


@dataclass(frozen=True)
class MappingResult:
    """Everything ``stratoflow map`` found out about a program."""

    analysis: Analysis
    partition: Partition | None = None
    simulation: SimulationResult | None = None
    max_abs_error: float | None = None  # simulation vs NumPy reference
    hls_source: Path | None = None
    csim_max_abs_error: float | None = None
    sdfg_max_abs_error: float | None = None  # compiled DaCe SDFG vs NumPy reference

    @property
    def placed(self) -> Analysis:
        return self.partition.analysis if self.partition else self.analysis


def to_dict(res: MappingResult) -> dict[str, Any]:
    an = res.placed
    prog = an.program
    place = res.partition.placement if res.partition else dict.fromkeys(prog.stencils, 0)
    m = an.model
    out: dict[str, Any] = {
        "program": {"name": prog.name, "dimensions": list(prog.shape), "vectorization": prog.vectorization,
                    "inputs": list(prog.inputs), "outputs": list(prog.outputs), "stencils": len(prog.stencils)},
        "stencils": {
            n: {
                "device": place[n],
                "latency_cycles": s.latency,
                "operations_per_point": s.operations,
                "start_cycle": s.start,
                "reuse_buffers": {f: {"tokens": w.reuse_tokens, "bytes": w.reuse_bytes, "window": [w.lo, w.hi]}
                                  for f, w in s.windows.items()},
                "onchip_bytes": s.onchip_bytes,
            }
            for n, s in an.stencils.items()
        },
        "channels": [
            {"src": c.src, "dst": c.dst, "capacity_tokens": c.capacity, "delay_tokens": c.delay,
             "latency_cycles": c.latency, "lookahead_tokens": c.lookahead, "bytes": c.capacity * c.token_bytes}
            for c in an.channels
        ],
        "model": {"points": m.points, "cycles": m.cycles, "pipeline_depth": m.pipeline_depth,
                  "operations_per_point": m.operations_per_point, "clock_mhz": m.clock_mhz, "gops": m.gops,
                  "seconds": m.seconds, "offchip_bytes": m.offchip_bytes, "onchip_bytes": m.onchip_bytes},
        "halos": {o: {"per_input": {f: [list(e) for e in ext] for f, ext in an.halos[o].items()},
                      "width": list(an.halo_width(o))} for o in prog.outputs},
    }
    if res.partition:
        p = res.partition
        out["partition"] = {
            "devices": [{"device": u.device, "stencils": list(u.stencils), "onchip_bytes": u.memory_bytes,
                         "operators": u.operators} for u in p.devices],
            "cut_channels": [{"src": s, "dst": d, "hops": h} for s, d, h in p.cut_channels],
            "link_bytes_per_cycle": list(p.link_bytes_per_cycle),
            "link_gbs": list(p.link_gbs_used),
        }
    if res.simulation:
        s = res.simulation
        out["simulation"] = {"cycles": s.cycles, "model_cycles": s.model_cycles,
                             "model_over_simulated": s.model_cycles / s.cycles,
                             "backpressure_cycles": s.backpressure_cycles,
                             "max_abs_error_vs_reference": res.max_abs_error,
                             "channels": [{"name": c.name, "capacity": c.capacity, "peak": c.peak} for c in s.channels]}
    if res.sdfg_max_abs_error is not None:
        out["sdfg"] = {"max_abs_error_vs_reference": res.sdfg_max_abs_error}
    if res.hls_source:
        out["hls"] = {"source": str(res.hls_source), "csim_max_abs_error_vs_reference": res.csim_max_abs_error}
    return out


def write_json(res: MappingResult, path: str | Path) -> Path:
    return atomic_write_text(path, json.dumps(to_dict(res), indent=2) + "\n")


def _kib(n: int) -> str:
    return f"{n / 1024:.1f}"


def summary(res: MappingResult) -> str:
    """A plain-text summary for the terminal."""
    an = res.placed
    prog = an.program
    place = res.partition.placement if res.partition else dict.fromkeys(prog.stencils, 0)
    lines = [f"program {prog.name}: {'x'.join(map(str, prog.shape))} points, {len(prog.stencils)} stencils, "
             f"vector width {prog.vectorization}", ""]
    head = ("stencil", "dev", "latency", "ops/pt", "start", "reuse tokens", "on-chip KiB")
    rows = [(n, str(place[n]), str(s.latency), str(s.operations), str(s.start),
             ", ".join(f"{f}:{w.reuse_tokens}" for f, w in s.windows.items()), _kib(s.onchip_bytes))
            for n, s in an.stencils.items()]
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)) for r in rows]
    delayed = [c for c in an.channels if c.delay > 0]
    lines += ["", f"delay buffers ({len(delayed)} of {len(an.channels)} channels):"]
    lines += [f"  {c.name}: {c.delay} tokens (capacity {c.capacity}, latency {c.latency})" for c in delayed[:30]]
    if len(delayed) > 30:
        lines.append(f"  ... {len(delayed) - 30} more in the JSON report")
    m = an.model
    lines += ["", f"model: {m.cycles} cycles ({m.pipeline_depth} pipeline depth), {m.operations_per_point} ops/point, "
                  f"{m.gops:.1f} GOp/s at {m.clock_mhz:.0f} MHz, off-chip {_kib(m.offchip_bytes)} KiB, "
                  f"on-chip {_kib(m.onchip_bytes)} KiB"]
    for o in prog.outputs:
        lines.append(f"halo of {o}: {list(an.halo_width(o))} (per dimension, accumulated over all paths)")
    if res.partition:
        p = res.partition
        lines += ["", f"placement on {len(p.devices)} device(s), {len(p.cut_channels)} cut channel(s), "
                      f"{p.traffic_bytes_per_cycle} B/cycle over links:"]
        for u in p.devices:
            lines.append(f"  device {u.device}: {len(u.stencils)} stencils, {_kib(u.memory_bytes)} KiB on-chip, "
                         f"{u.operators} operators")
        for s, d, h in p.cut_channels:
            lines.append(f"  cut {s}->{d} ({h} hop{'s' if h > 1 else ''})")
    if res.simulation:
        s = res.simulation
        lines += ["", f"simulated: {s.cycles} cycles (model {s.model_cycles}, ratio {s.model_cycles / s.cycles:.3f}), "
                      f"back-pressure {s.backpressure_cycles} cycles, max |error| vs reference {res.max_abs_error:.3g}"]
    if res.hls_source:
        extra = "" if res.csim_max_abs_error is None else f", C-simulation max |error| {res.csim_max_abs_error:.3g}"
        lines.append(f"HLS C++: {res.hls_source}{extra}")
    if res.sdfg_max_abs_error is not None:
        lines.append(f"DaCe SDFG (CPU): max |error| vs reference {res.sdfg_max_abs_error:.3g}")
    return "\n".join(lines) + "\n"


def to_dot(res: MappingResult) -> str:
    an = res.placed
    prog = an.program
    place = res.partition.placement if res.partition else dict.fromkeys(prog.stencils, 0)
    lines = [f'digraph "{prog.name}" {{', "  rankdir=LR;", "  node [fontname=Helvetica];"]
    for n in prog.inputs:
        lines.append(f'  "{n}" [shape=ellipse, style=filled, fillcolor="#dde8f5"];')
    for d in sorted(set(place.values())):
        lines.append(f'  subgraph "cluster_dev{d}" {{ label="device {d}"; style=dashed;')
        for n in prog.stencils:
            if place[n] == d:
                s = an.stencils[n]
                lines.append(f'    "{n}" [shape=box, label="{n}\\nL={s.latency} ops={s.operations}"];')
        lines.append("  }")
    for c in an.channels:
        if c.dst.startswith("write:"):
            o = c.dst.split(":", 1)[1]
            lines.append(f'  "{c.dst}" [shape=ellipse, label="{o} (out)", style=filled, fillcolor="#f5e6dd"];')
        style = ', color=red, penwidth=2' if res.partition and c.src in place and c.dst in place and place[c.src] != place[c.dst] else ""
        lines.append(f'  "{c.src}" -> "{c.dst}" [label="{c.capacity}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"


DOT_SUFFIXES = (".dot", ".gv")  # Graphviz text
DRAWING_SUFFIXES = (".png", ".svg", ".pdf")  # drawn with matplotlib


def graph_format(path: str | Path) -> str:
    """``dot``, ``png``, ``svg`` or ``pdf`` from the file's extension; StencilFlowError otherwise."""
    suffix = Path(path).suffix.lower()
    if suffix in DOT_SUFFIXES:
        return "dot"
    if suffix in DRAWING_SUFFIXES:
        return suffix[1:]
    raise StencilFlowError(
        f"--dot {path}: unsupported extension {suffix or '(none)'!r}; use {', '.join(DOT_SUFFIXES)} for Graphviz "
        f"DOT text or {', '.join(DRAWING_SUFFIXES)} for a drawing"
    )


def write_graph(res: MappingResult, path: str | Path) -> Path:
    """DOT text (``.dot``/``.gv``) or a drawing (``.png``/``.svg``/``.pdf``), by extension."""
    fmt = graph_format(path)
    return write_dot(res, path) if fmt == "dot" else write_png(res, path, fmt)


def write_dot(res: MappingResult, path: str | Path) -> Path:
    return atomic_write_text(path, to_dot(res))


def write_png(res: MappingResult, path: str | Path, fmt: str = "png") -> Path:
    """Draw the placed DAG (layered by depth, coloured by device) with matplotlib, as ``fmt``
    (png, svg or pdf)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    an = res.placed
    prog = an.program
    place = res.partition.placement if res.partition else dict.fromkeys(prog.stencils, 0)
    depth = dict.fromkeys(prog.inputs, 0)
    for n, s in prog.stencils.items():
        depth[n] = 1 + max((depth[f] for f in s.inputs), default=0)
    for o in prog.outputs:
        depth[f"write:{o}"] = depth[o] + 1
    layers: dict[int, list[str]] = {}
    for n, d in depth.items():
        layers.setdefault(d, []).append(n)
    xy = {n: (d, k - (len(ns) - 1) / 2) for d, ns in layers.items() for k, n in enumerate(ns)}
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(layers)), max(3, 0.7 * max(len(v) for v in layers.values()))))
    colours = plt.get_cmap("tab10")
    for c in an.channels:
        (x0, y0), (x1, y1) = xy[c.src], xy[c.dst]
        cut = c.src in place and c.dst in place and place[c.src] != place[c.dst]
        ax.annotate("", (x1, y1), (x0, y0), annotation_clip=False,
                    arrowprops={"arrowstyle": "->", "color": "red" if cut else "grey", "shrinkA": 12, "shrinkB": 12})
        ax.text(0.6 * x0 + 0.4 * x1, 0.6 * y0 + 0.4 * y1, str(c.capacity), fontsize=7, color="dimgrey")
    for n, (x, y) in xy.items():
        colour = colours(place[n] % 10) if n in place else "#dddddd"
        ax.text(x, y, n, ha="center", va="center", fontsize=8,
                bbox={"boxstyle": "round", "facecolor": colour, "alpha": 0.5 if n in place else 1.0})
    ax.set_title(f"{prog.name}: channel capacities in tokens, colour = device, red = cut")
    ax.set_xlim(-0.5, max(layers) + 0.5)
    ax.set_ylim(min(y for _, y in xy.values()) - 0.6, max(y for _, y in xy.values()) + 0.6)
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
