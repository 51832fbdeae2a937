"""Cycle-exact streaming simulator with bounded FIFOs, blocking semantics and deadlock detection.

Semantics (one token = ``vectorization`` points): in every cycle each node fires its next step
if every token it must read is *visible* (written at least ``latency`` cycles ago) and every
output channel has space (occupancy at the start of the cycle below capacity). A firing step
reads one token from each of its active input channels and writes one token into every output
channel. Reads and writes take effect for the next cycle.

Speed: instead of stepping cycle by cycle, the simulator computes how many cycles the current
firing pattern provably stays unchanged (no step boundary, no channel becoming full or empty,
no blocked node getting unblocked) and advances all counters by that many cycles at once. This
is exact: the cycle count and every blocking decision are identical to a cycle-by-cycle run.
Values are computed with NumPy for each batch of tokens from the tokens that went through the
channels, and every access is checked to lie in the stencil's shift register (reuse buffer).

Deadlock (no node can fire and none can become able to without another firing) raises
:class:`StencilFlowError` naming the blocked channels; the simulator never hangs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from mapping.spatial.analysis import Analysis, Channel, sink_name
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import Access, evaluate
from mapping.spatial.reference import broadcast_input

log = logging.getLogger(__name__)

INF = float("inf")


@dataclass(eq=False)
class _Chan:
    info: Channel
    cap: int
    lat: int
    m: int
    writer: _Node = field(repr=False)
    reader: _Node = field(repr=False)
    written: int = 0
    read: int = 0
    peak: int = 0
    full_cycles: int = 0  # cycles the writer was blocked because this channel was full
    runs: list[list[int]] = field(default_factory=list)  # [first element, count, write cycle - element]

    def write_cycle(self, q: int) -> int:
        for first, count, g in self.runs:
            if first <= q < first + count:
                return q + g
        raise StencilFlowError(f"internal: token {q} of {self.info.name} was never written")

    def visible(self, c: int) -> bool:
        return self.read < self.written and self.write_cycle(self.read) + self.lat <= c

    def prune(self) -> None:
        while self.runs and self.runs[0][0] + self.runs[0][1] <= self.read:
            self.runs.pop(0)

    def record_writes(self, c: int, k: int) -> None:
        g = c - self.written
        if self.runs and self.runs[-1][2] == g and self.runs[-1][0] + self.runs[-1][1] == self.written:
            self.runs[-1][1] += k
        else:
            self.runs.append([self.written, k, g])
        self.written += k


@dataclass(eq=False)
class _Node:
    name: str
    kind: str  # "source", "stencil", "sink"
    t: int
    t_end: int
    ins: list[_Chan] = field(default_factory=list)
    outs: list[_Chan] = field(default_factory=list)
    bounds: list[int] = field(default_factory=list)

    def reads(self, t: int, tokens: int) -> list[_Chan]:
        return [e for e in self.ins if 0 <= t + e.m < tokens]

    def writes(self, t: int) -> bool:
        return t >= 0 and bool(self.outs)

    def next_bound(self) -> int:
        return min(b for b in self.bounds if b > self.t)


@dataclass(frozen=True)
class ChannelStats:
    name: str
    capacity: int
    peak: int  # most tokens held at once
    full_cycles: int  # cycles its writer was back-pressured (0 in a stall-free run)


@dataclass(frozen=True)
class SimulationResult:
    outputs: dict[str, np.ndarray]
    cycles: int
    model_cycles: int
    batches: int
    channels: tuple[ChannelStats, ...]

    @property
    def backpressure_cycles(self) -> int:
        """Node-cycles spent blocked on a full channel; 0 when every node ran stall-free."""
        return sum(c.full_cycles for c in self.channels)

    @property
    def stalled(self) -> bool:
        """A writer was ever back-pressured, or the run took longer than the analysis' schedule."""
        return self.backpressure_cycles > 0 or self.cycles > self.model_cycles


class StreamingSimulator:
    """Simulates an analysed program; ``capacities`` overrides channel depths by name."""

    def __init__(
        self,
        analysis: Analysis,
        capacities: Mapping[str, int] | None = None,
        max_cycles: int | None = None,
    ) -> None:
        self.analysis = analysis
        prog = analysis.program
        self.tokens = prog.points // prog.vectorization
        caps = dict(capacities or {})
        unknown = set(caps) - {c.name for c in analysis.channels}
        if unknown:
            raise StencilFlowError(f"capacities given for unknown channel(s) {sorted(unknown)}")
        for c in analysis.channels:
            if c.latency < 1:
                raise StencilFlowError(f"channel {c.name}: latency {c.latency} < 1; simulate a timed analysis")
            if caps.get(c.name, c.capacity) < 1:
                raise StencilFlowError(f"channel {c.name}: capacity must be >= 1")
        self.capacities = {c.name: caps.get(c.name, c.capacity) for c in analysis.channels}
        self.max_cycles = max_cycles or 4 * analysis.model.cycles + 10_000

    # ------------------------------------------------------------------ graph
    def _build(self) -> tuple[list[_Node], list[_Chan]]:
        prog = self.analysis.program
        T = self.tokens
        nodes: dict[str, _Node] = {}
        for n in prog.inputs:
            nodes[n] = _Node(n, "source", 0, T)
        for n in prog.stencils:
            S = max([self.analysis.stencils[n].windows[f].lookahead for f in prog.stencils[n].inputs], default=0)
            nodes[n] = _Node(n, "stencil", -S, T)
        for o in prog.outputs:
            nodes[sink_name(o)] = _Node(sink_name(o), "sink", 0, T)
        chans = []
        for c in self.analysis.channels:
            ch = _Chan(c, self.capacities[c.name], c.latency, c.lookahead, nodes[c.src], nodes[c.dst])
            nodes[c.src].outs.append(ch)
            nodes[c.dst].ins.append(ch)
            chans.append(ch)
        for node in nodes.values():
            b = {0, node.t_end}
            for e in node.ins:
                b |= {-e.m, T - e.m}
            node.bounds = sorted(b)
        active = [nd for nd in nodes.values() if nd.outs or nd.ins or nd.kind == "stencil"]
        return active, chans

    # ------------------------------------------------------------------ run
    def __call__(self, inputs: Mapping[str, np.ndarray] | None = None) -> SimulationResult:
        prog = self.analysis.program
        raw = prog.load_inputs() if inputs is None else inputs
        self._values: dict[str, np.ndarray] = {}
        for n, inp in prog.inputs.items():
            arr = np.asarray(raw[n], dtype=inp.dtype.numpy)
            self._values[n] = np.ascontiguousarray(broadcast_input(prog, n, arr)).ravel()
        for n, st in prog.stencils.items():
            self._values[n] = np.zeros(prog.points, dtype=st.dtype.numpy)
        self._outputs = {o: np.zeros(prog.points, dtype=prog.stencils[o].dtype.numpy) for o in prog.outputs}

        nodes, chans = self._build()
        T = self.tokens
        c = 0
        batches = 0
        active = list(nodes)
        max_lat = max([ch.lat for ch in chans], default=1)
        while active:
            firing: dict[int, tuple[list[_Chan], bool]] = {}
            blocked: dict[int, list[tuple[str, _Chan]]] = {}
            for idx, n in enumerate(active):
                rd = n.reads(n.t, T)
                wr = n.writes(n.t)
                reasons = [("empty", e) for e in rd if not e.visible(c)]
                if wr:
                    reasons += [("full", e) for e in n.outs if e.written - e.read >= e.cap]
                if reasons:
                    blocked[idx] = reasons
                else:
                    firing[idx] = (rd, wr)
            fire_nodes = {id(active[i]): v for i, v in firing.items()}
            k = INF
            for idx, (rd, wr) in firing.items():
                n = active[idx]
                k = min(k, n.next_bound() - n.t)
                for e in rd:
                    k = min(k, self._avail_horizon(e, c, fire_nodes))
                if wr:
                    for e in n.outs:
                        rinfo = fire_nodes.get(id(e.reader))
                        if not (rinfo is not None and e in rinfo[0]):
                            k = min(k, e.cap - (e.written - e.read))
            for reasons in blocked.values():
                k = min(k, max(self._blocked_horizon(kind, e, c, fire_nodes) for kind, e in reasons))
            if not firing and (k == INF or k > max_lat + 1):
                raise self._deadlock(c, active, blocked)
            k = int(k)
            for reasons in blocked.values():
                for kind, e in reasons:
                    if kind == "full":
                        e.full_cycles += k
            if not firing:
                c += k
                continue
            if k < 1:
                raise StencilFlowError(f"internal: simulator horizon {k} at cycle {c}")
            batches += 1
            for idx in sorted(firing):  # active is in topological order: producers first
                n = active[idx]
                rd, wr = firing[idx]
                for e in rd:
                    e.read += k
                    e.prune()
                if wr:
                    for e in n.outs:
                        e.record_writes(c, k)
                self._values_for(n, n.t, n.t + k, wr)
                n.t += k
            for idx in firing:
                for e in active[idx].outs:
                    e.peak = max(e.peak, e.written - e.read)
            c += k
            active = [n for n in active if n.t < n.t_end]
            if c > self.max_cycles:
                raise StencilFlowError(
                    f"simulation exceeded {self.max_cycles} cycles (model: {self.analysis.model.cycles}); "
                    f"progress is too slow, check the channel capacities"
                )
        stats = tuple(ChannelStats(ch.info.name, ch.cap, ch.peak, ch.full_cycles) for ch in chans)
        outputs = {o: self._outputs[o].reshape(prog.shape) for o in prog.outputs}
        log.debug("simulated %s: %d cycles in %d batches", prog.name, c, batches)
        return SimulationResult(outputs, c, self.analysis.model.cycles, batches, stats)

    # ------------------------------------------------------------------ horizons
    @staticmethod
    def _avail_horizon(e: _Chan, c: int, firing: Mapping[int, tuple[list[_Chan], bool]]) -> float:
        """Cycles for which the reader of ``e`` (reading one token per cycle) finds data."""
        r = e.read
        thr = c - e.lat - r
        for first, count, g in e.runs:
            if first + count <= r:
                continue
            if g > thr:
                return max(first, r) - r
        winfo = firing.get(id(e.writer))
        if winfo is not None and winfo[1] and c - e.written <= thr:
            return INF
        return e.written - r

    @staticmethod
    def _blocked_horizon(kind: str, e: _Chan, c: int, firing: Mapping[int, tuple[list[_Chan], bool]]) -> float:
        """Cycles for which this blocking reason certainly persists."""
        if kind == "empty":
            if e.read < e.written:
                return e.write_cycle(e.read) + e.lat - c
            winfo = firing.get(id(e.writer))
            if winfo is not None and winfo[1]:
                return (e.read - e.written) + e.lat
            return INF
        rinfo = firing.get(id(e.reader))
        if rinfo is not None and e in rinfo[0]:
            return (e.written - e.read) - e.cap + 1
        return INF

    def _deadlock(self, c: int, active: list[_Node], blocked: Mapping[int, list[tuple[str, _Chan]]]) -> StencilFlowError:
        parts = []
        for idx, reasons in blocked.items():
            n = active[idx]
            for kind, e in reasons:
                if kind == "empty":
                    parts.append(f"{e.info.name} empty ('{n.name}' waits for token {e.read})")
                else:
                    parts.append(f"{e.info.name} full ({e.written - e.read}/{e.cap} tokens, '{n.name}' waits for space)")
        return StencilFlowError(
            f"deadlock at cycle {c}: no node can make progress; blocked channels: {'; '.join(parts)}. "
            f"Use the channel capacities computed by the analysis (or larger)."
        )

    # ------------------------------------------------------------------ values
    def _values_for(self, n: _Node, t0: int, t1: int, writes: bool) -> None:
        prog = self.analysis.program
        w = prog.vectorization
        if n.kind == "sink":
            out = n.name.split(":", 1)[1]
            e = n.ins[0]
            if e.read < t1:
                raise StencilFlowError(f"internal: sink {n.name} wrote tokens it did not read")
            self._outputs[out][t0 * w:t1 * w] = self._values[out][t0 * w:t1 * w]
            return
        if n.kind != "stencil" or not writes:
            return
        st = prog.stencils[n.name]
        pts = np.arange(t0 * w, t1 * w, dtype=np.int64)
        nk = prog.shape[-1]
        if st.recurrence < 0:  # FORWARD: level after level, each reading the ones computed before
            kk = pts % nk
            for level in np.unique(kk):
                self._evaluate(n, pts[kk == level])
        elif st.recurrence > 0:  # BACKWARD: the batch's whole columns (all arrived), top down
            cols = np.unique(pts // nk) * nk
            for level in range(nk - 1, -1, -1):
                self._evaluate(n, cols + level)
        else:
            self._evaluate(n, pts)

    def _evaluate(self, n: _Node, pts: np.ndarray) -> None:
        """Values of stencil ``n`` at the points ``pts`` (ascending) from the tokens it has read."""
        prog = self.analysis.program
        w = prog.vectorization
        st = prog.stencils[n.name]
        info = self.analysis.stencils[n.name]
        npts, nk = prog.points, prog.shape[-1]
        sd = [int(np.prod(prog.shape[c + 1:])) for c in range(len(prog.shape))]
        coords: dict[int, np.ndarray] = {}

        def coord(c: int) -> np.ndarray:
            if c not in coords:
                coords[c] = (pts // sd[c]) % prog.shape[c]
            return coords[c]

        valid = np.ones(len(pts), dtype=bool)
        in_by_src = {e.info.src: e for e in n.ins}

        def read(acc: Access) -> np.ndarray:
            nonlocal valid
            bc = st.boundary[acc.field]
            if acc.field == n.name:  # a recurrence reads its own levels computed before
                x = coord(len(prog.shape) - 1) + acc.offset[-1]
                inside = (x >= 0) & (x < nk)
                vals = self._values[n.name][np.clip(pts + acc.offset[-1], 0, npts - 1)]
                return np.where(inside, vals, np.asarray(bc.value if bc.kind == "constant" else 0, dtype=vals.dtype))
            win = info.windows[acc.field]
            e = in_by_src[acc.field]
            moved = [(c, d) for c, d in enumerate(acc.offset) if d]
            if bc.kind == "copy":
                idx = pts.copy()
                for c, d in moved:
                    x = coord(c)
                    idx += (np.clip(x + d, 0, prog.shape[c] - 1) - x) * sd[c]
                rel = idx - pts
                lo, hi, last = int(rel.min()), int(rel.max()), int(idx.max())
                inside = None
            else:
                lin = sum(d * sd[c] for c, d in moved)
                inside = np.ones(len(pts), dtype=bool)
                for c, d in moved:
                    x = coord(c) + d
                    inside &= (x >= 0) & (x < prog.shape[c])
                idx = np.clip(pts + lin, 0, npts - 1)
                lo = hi = lin
                last = min(int(pts[-1]) + lin, npts - 1)
            # the access must lie in the shift register and among the tokens already read
            if (lo // w < win.lo // w or -(-hi // w) > win.lookahead or last // w >= e.read) and (
                inside is None or inside.any()
            ):
                raise StencilFlowError(
                    f"internal: stencil '{n.name}' access {acc.field}{list(acc.offset)} leaves its "
                    f"shift register (window {win.lo}..{win.hi}) or reads an unread token"
                )
            vals = self._values[acc.field][idx]
            if bc.kind == "constant":
                vals = np.where(inside, vals, np.asarray(bc.value, dtype=vals.dtype))
            elif bc.kind == "shrink":
                valid &= inside
            return vals

        out = evaluate(st.computation, read, st.dtype.numpy, lambda it: coord(prog.iterators.index(it)))
        out = np.array(np.broadcast_to(out, (len(pts),)), dtype=st.dtype.numpy)
        out[~valid] = 0
        self._values[n.name][pts] = out
