"""Buffer, latency and delay-buffer analysis, performance model and halo accumulation.

Streaming model (one token = ``vectorization`` consecutive points, row-major, one token per
cycle): stencil ``s`` runs steps ``t = -S .. T-1``; at step ``t`` it reads token ``t + m_f`` of
each input ``f`` (when that token exists) into the input's shift register and emits output token
``t`` (when ``t >= 0``). ``m_f`` is the look-ahead of input ``f`` (the window's furthest point
ahead, rounded up to tokens), ``S = max_f m_f``.

Delay buffers are a difference-constraints problem: with ``W(v)`` the cycle at which node ``v``
writes its token 0, every channel ``f -> s`` with latency ``l`` requires
``W(s) - W(f) >= m_f + l``. The least solution is the longest path from the inputs (computed
exactly over all reconvergent and cross-dependent paths at once). A channel then holds exactly
``W(s) - W(f) - m_f`` tokens in flight in the steady state, so its capacity is that plus one
(the slot written while the oldest is read). Any smaller capacity stalls its writer, and the
stall propagates (see the property tests).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import (
    OperationLatencies,
    carried_latency,
    count_operations,
    pipeline_latency,
)
from mapping.spatial.model import Program


def sink_name(output: str) -> str:
    """The node that writes output ``output`` back to off-chip memory."""
    return f"write:{output}"


@dataclass(frozen=True)
class Target:
    """Hardware parameters of the performance model."""

    clock_mhz: float = 300.0
    latencies: OperationLatencies = field(default_factory=OperationLatencies)
    memory_latency: int = 1  # cycles from an input reader's stream to its consumers

    def __post_init__(self) -> None:
        c = self.clock_mhz
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c <= 0:
            raise StencilFlowError(f"target clock_mhz must be a positive finite number of MHz, got {c!r}")
        m = self.memory_latency
        if isinstance(m, bool) or not isinstance(m, int) or m < 0:
            raise StencilFlowError(f"target memory_latency must be a non-negative integer (cycles), got {m!r}")


@dataclass(frozen=True)
class Window:
    """The access window of one input of one stencil, in points and tokens of the stream.

    The shift register holds the last ``reuse_tokens`` tokens; stage ``R - 1`` is the newest,
    stage ``R - 1 - lookahead`` the centre token. ``taps`` are the stages some access reads
    (every lane, every clamped position of a ``copy`` boundary). Stages older than the oldest
    tap are never read and are not kept: ``reuse_bytes`` counts stages ``taps[0] .. R - 1``,
    which is what the HLS code declares (tap registers plus delay lines).
    """

    field: str
    lo: int  # furthest point behind the centre (linear, <= 0)
    hi: int  # furthest point ahead of the centre (linear, >= 0)
    lookahead: int  # m: tokens read ahead of the output token
    reuse_tokens: int  # shift-register length in tokens
    reuse_bytes: int  # bytes of the kept stages (taps[0] .. reuse_tokens - 1)
    extent: tuple[tuple[int, int], ...]  # (min, max) offset per dimension
    taps: tuple[int, ...] = ()  # stages read by some access, ascending

    @property
    def kept_tokens(self) -> int:
        """Tokens the reuse buffer keeps (from the oldest tap to the newest stage)."""
        return self.reuse_tokens - (self.taps[0] if self.taps else 0)


@dataclass(frozen=True)
class Channel:
    src: str
    dst: str
    lookahead: int
    latency: int
    capacity: int  # tokens: delay buffer + latency + 1
    token_bytes: int

    @property
    def delay(self) -> int:
        """The delay-buffer part of the capacity (tokens beyond latency and the handshake slot)."""
        return self.capacity - self.latency - 1

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"


@dataclass(frozen=True)
class StencilInfo:
    name: str
    latency: int
    operations: int  # per point
    windows: Mapping[str, Window]
    start: int  # W: cycle of the first output token
    reuse_bytes: int
    delay_bytes: int  # capacities of the incoming channels
    #: a recurrence's loop-carried path (cycles from its own previous level to its result);
    #: above 1 the stream's neighbouring levels need that many columns interleaved in hardware
    carried_latency: int = 0

    @property
    def onchip_bytes(self) -> int:
        return self.reuse_bytes + self.delay_bytes


@dataclass(frozen=True)
class PerformanceModel:
    points: int
    vector_width: int
    tokens: int
    operations_per_point: int
    pipeline_depth: int  # cycles until the last output's first token
    cycles: int
    clock_mhz: float
    gops: float
    offchip_bytes: int
    onchip_bytes: int

    @property
    def seconds(self) -> float:
        return self.cycles / (self.clock_mhz * 1e6)


@dataclass(frozen=True)
class Analysis:
    program: Program
    target: Target
    stencils: Mapping[str, StencilInfo]
    channels: tuple[Channel, ...]
    start: Mapping[str, int]
    model: PerformanceModel
    halos: Mapping[str, Mapping[str, tuple[tuple[int, int], ...]]]

    def channel(self, src: str, dst: str) -> Channel:
        for c in self.channels:
            if c.src == src and c.dst == dst:
                return c
        raise KeyError(f"{src}->{dst}")

    def input_halos(self) -> dict[str, tuple[int, ...]]:
        """Per input: the halo depth per dimension that all outputs together need (for
        ``mapping/cluster``: how deep each input's halo exchange must be)."""
        ndim = len(self.program.shape)
        out: dict[str, list[int]] = {}
        for ext in self.halos.values():
            for f, e in ext.items():
                cur = out.setdefault(f, [0] * ndim)
                for c in range(ndim):
                    cur[c] = max(cur[c], -e[c][0], e[c][1])
        return {f: tuple(v) for f, v in out.items()}

    def halo_width(self, output: str) -> tuple[int, ...]:
        """Accumulated halo depth per dimension that ``output`` needs from the inputs."""
        ext = self.halos[output].values()
        ndim = len(self.program.shape)
        return tuple(max([max(-e[c][0], e[c][1]) for e in ext], default=0) for c in range(ndim))


def strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(np.prod(shape[c + 1:])) for c in range(len(shape)))


def access_window(prog: Program, stencil: str, fname: str) -> Window:
    st = prog.stencils[stencil]
    offs = st.accesses[fname]
    sd = strides(prog.shape)
    w = prog.vectorization
    if st.boundary[fname].kind == "copy":
        # clamping moves an access towards the centre: the window must cover the whole box
        lo = min(sum(min(0, d) * s for d, s in zip(o, sd)) for o in offs)
        hi = max(sum(max(0, d) * s for d, s in zip(o, sd)) for o in offs)
    else:
        lin = [sum(d * s for d, s in zip(o, sd)) for o in offs]
        lo, hi = min(0, min(lin)), max(0, max(lin))
    if st.recurrence > 0:  # a BACKWARD recurrence starts a column once all of it has arrived
        hi += (prog.shape[-1] - 1) * sd[-1]
    m = -(-hi // w)
    lo_tok = lo // w
    reuse = m - lo_tok + 1
    nb = prog.dtype_of(fname).bytes
    extent = tuple((min(o[c] for o in offs), max(o[c] for o in offs)) for c in range(len(prog.shape)))
    centre = (reuse - 1 - m) * w  # flat register index of lane 0's point
    taps = sorted({(centre + c + l) // w for c in window_points(prog, stencil, fname) for l in (0, w - 1)})
    return Window(fname, lo, hi, m, reuse, (reuse - taps[0]) * w * nb, extent, tuple(taps))


def window_points(prog: Program, stencil: str, fname: str) -> list[int]:
    """Linear offsets (points, relative to the centre) that the accesses to ``fname`` can read.

    A ``copy`` boundary clamps each coordinate towards the centre, so an access at offset
    ``d`` can read any offset between 0 and ``d`` per dimension; other boundaries read ``d``.
    """
    st = prog.stencils[stencil]
    sd = strides(prog.shape)
    offs = st.accesses[fname]
    if st.boundary[fname].kind != "copy":
        out = {sum(d * s for d, s in zip(o, sd)) for o in offs}
    else:
        out = set()
        for o in offs:
            boxes = [range(min(0, d), max(0, d) + 1) for d in o]
            out.update(sum(d * s for d, s in zip(delta, sd)) for delta in itertools.product(*boxes))
    if st.recurrence > 0:  # a BACKWARD recurrence reads the whole column from its first level
        out = {x + kk * sd[-1] for x in out for kk in range(prog.shape[-1])}
    return sorted(out)


def analyse(
    prog: Program,
    target: Target | None = None,
    link_latency: Mapping[tuple[str, str], int] | None = None,
    timed: bool = True,
) -> Analysis:
    """Analyse ``prog``. ``link_latency`` adds cycles to cut channels (multi-device);
    ``timed=False`` gives the untimed (Kahn/C-simulation) capacities with zero latencies."""
    target = target or Target()
    link_latency = link_latency or {}
    w = prog.vectorization
    latency = {n: pipeline_latency(s.computation, target.latencies) for n, s in prog.stencils.items()}
    windows = {n: {f: access_window(prog, n, f) for f in s.inputs} for n, s in prog.stencils.items()}

    def chan_latency(src: str, dst: str) -> int:
        if not timed:
            return 0
        base = latency[src] if src in latency else target.memory_latency
        return base + int(link_latency.get((src, dst), 0))

    tokens = prog.points // w
    start: dict[str, int] = dict.fromkeys(prog.inputs, 0)
    channels: list[Channel] = []
    for n, s in prog.stencils.items():
        ready = {f: start[f] + windows[n][f].lookahead + chan_latency(f, n) for f in s.inputs}
        start[n] = max(ready.values(), default=0)
        look = {f: windows[n][f].lookahead for f in s.inputs}
        for f in s.inputs:
            cap = channel_capacity(start[f], look[f], look, ready, tokens)
            channels.append(Channel(f, n, look[f], chan_latency(f, n), cap, w * prog.dtype_of(f).bytes))
    for o in prog.outputs:
        sink = sink_name(o)
        lat = chan_latency(o, sink)
        start[sink] = start[o] + lat
        cap = channel_capacity(start[o], 0, {o: 0}, {o: start[sink]}, tokens)
        channels.append(Channel(o, sink, 0, lat, cap, w * prog.dtype_of(o).bytes))

    incoming: dict[str, int] = {}
    for c in channels:
        incoming[c.dst] = incoming.get(c.dst, 0) + c.capacity * c.token_bytes
    infos: dict[str, StencilInfo] = {}
    for n, s in prog.stencils.items():
        reuse = sum(win.reuse_bytes for win in windows[n].values()) + recurrence_bytes(prog, n)
        delay = incoming.get(n, 0)
        carried = carried_latency(s.computation, n, target.latencies) if s.recurrence else 0
        infos[n] = StencilInfo(n, latency[n], count_operations(s.computation), windows[n], start[n], reuse, delay,
                               carried)

    depth = max(start[sink_name(o)] for o in prog.outputs)
    cycles = tokens + depth
    ops = sum(i.operations for i in infos.values())
    offchip = sum(
        int(np.prod([prog.shape[prog.iterators.index(d)] for d in inp.dims])) * inp.dtype.bytes
        for n, inp in prog.inputs.items()
        if any(c.src == n for c in channels)
    ) + sum(prog.points * prog.dtype_of(o).bytes for o in prog.outputs)
    onchip = sum(i.onchip_bytes for i in infos.values()) + sum(
        c.capacity * c.token_bytes for c in channels if c.dst.startswith("write:")
    )
    gops = ops * prog.points / (cycles / (target.clock_mhz * 1e6)) / 1e9
    model = PerformanceModel(prog.points, w, tokens, ops, depth, cycles, target.clock_mhz, gops, offchip, onchip)
    return Analysis(prog, target, infos, tuple(channels), start, model, accumulate_halos(prog))


def channel_capacity(
    write_start: int, lookahead: int, lookaheads: Mapping[str, int], ready: Mapping[str, int], tokens: int
) -> int:
    """Least capacity of a channel so that its writer is never back-pressured.

    The writer emits token ``q`` at ``write_start + q``. The reader's step ``t`` fires at
    ``t + C(t)`` with ``C(t) = max{ready_g : lookahead_g >= -t}`` (before step 0 the reader
    runs ahead on the inputs it already reads, then it is paced by the latest one), and reads
    token ``q`` of this channel at step ``q - lookahead``. The occupancy seen by the write of
    token ``q`` is ``q`` minus the reads before that cycle; it is piecewise linear in ``q``, so
    its maximum is found at the segment starts and at the last token.
    """
    cuts = sorted({0} | {lookahead - m for m in lookaheads.values() if 0 < lookahead - m < tokens})
    segments = []
    for a, b in zip(cuts, cuts[1:] + [tokens]):
        active = [ready[g] for g, m in lookaheads.items() if m >= lookahead - a]
        delta = max(active) - lookahead - write_start  # read of token q' at write_start + q' + delta
        segments.append((a, b, delta))
    best = 0
    for q in {min(tokens - 1, a + d) for a, _, d in segments} | {tokens - 1}:
        reads = sum(min(max(q - d - a, 0), b - a) for a, b, d in segments)
        best = max(best, q - reads)
    return best + 1


def recurrence_bytes(prog: Program, stencil: str) -> int:
    """On-chip bytes a recurrence keeps of its own output: the last ``d`` levels it reads back
    (FORWARD), or the whole column it computes backwards before streaming it out (BACKWARD)."""
    st = prog.stencils[stencil]
    if not st.recurrence:
        return 0
    levels = prog.shape[-1] if st.recurrence > 0 else max(-o[-1] for o in st.accesses[stencil])
    return levels * st.dtype.bytes


def accumulate_halos(prog: Program) -> dict[str, dict[str, tuple[tuple[int, int], ...]]]:
    """For each output: input -> per-dimension (min, max) offset accumulated along all paths.

    A consumer of the output on a distributed domain needs halos of these depths of the
    inputs to compute the output locally (``mapping/cluster``).
    """
    ndim = len(prog.shape)
    ext: dict[str, dict[str, tuple[tuple[int, int], ...]]] = {n: {n: ((0, 0),) * ndim} for n in prog.inputs}
    for n, s in prog.stencils.items():
        acc: dict[str, list[list[int]]] = {}
        for f, offs in s.accesses.items():
            if f == n:  # a recurrence's own levels: no halo of any input
                continue
            own = [(min(o[c] for o in offs), max(o[c] for o in offs)) for c in range(ndim)]
            for src, e in ext[f].items():
                cur = acc.setdefault(src, [[math.inf, -math.inf] for _ in range(ndim)])
                for c in range(ndim):
                    cur[c][0] = min(cur[c][0], e[c][0] + own[c][0])
                    cur[c][1] = max(cur[c][1], e[c][1] + own[c][1])
        ext[n] = {src: tuple((int(a), int(b)) for a, b in v) for src, v in acc.items()}
    return {o: ext[o] for o in prog.outputs}
