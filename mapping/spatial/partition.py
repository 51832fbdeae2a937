"""Automatic multi-device partitioning of a stencil DAG onto a chain of devices.

Devices are connected in a chain (device ``d`` <-> ``d+1``) by network links of a given
bandwidth and latency; every device reads the inputs it needs from its own memory. A placement
assigns each stencil to a device so that the stencils of a device form a contiguous range of a
topological order. Among all such placements (exactly, by dynamic programming over two
topological orders) it picks one that

1. respects each device's on-chip memory and operators per cycle,
2. keeps every link's streams within its bandwidth,
3. minimises the traffic over the links (bytes per cycle, summed over links), and
4. among those, balances the operators over the devices (each device's pipeline kept busy).

The result is validated by re-analysing the program with the link latency on every cut
channel (latency times hops), which the streaming simulator then executes. The latency grows
delay buffers; when that pushes a device over its memory, the placement is searched again with
the grown sizes, and a placement that still does not fit raises :class:`CapacityError`.
:func:`check_fits` applies the same capacities to a program on one device.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mapping.spatial.analysis import Analysis, Target, analyse, sink_name
from mapping.spatial.errors import CapacityError, StencilFlowError
from mapping.spatial.model import Program

log = logging.getLogger(__name__)

MAX_ROUNDS = 8  # placement searches with latency-grown buffers before giving up


def _positive_int(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise StencilFlowError(f"{what} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Device:
    """Capacities of one device (defaults: roughly one Stratix 10 GX 2800)."""

    memory_bytes: int = 28 * 2**20
    operators: int = 4000  # arithmetic operators that can be instantiated (per cycle)

    def __post_init__(self) -> None:
        _positive_int(self.memory_bytes, "device memory_bytes")
        _positive_int(self.operators, "device operators")


@dataclass(frozen=True)
class Network:
    link_gbs: float = 40.0  # bandwidth per direction between neighbouring devices, GB/s
    link_latency: int = 200  # cycles per hop

    def __post_init__(self) -> None:
        g = self.link_gbs
        if isinstance(g, bool) or not isinstance(g, (int, float)) or not math.isfinite(g) or g <= 0:
            raise StencilFlowError(f"network link_gbs must be a positive finite number of GB/s, got {g!r}")
        lat = self.link_latency
        if isinstance(lat, bool) or not isinstance(lat, (int, np.integer)) or lat < 0:
            raise StencilFlowError(f"network link_latency must be a non-negative integer (cycles), got {lat!r}")


def size_text(n: int) -> str:
    """``29360128 bytes (28.0 MiB)``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n} bytes ({n / scale:.1f} {unit})"
    return f"{n} bytes"


def stencil_bytes(an: Analysis) -> dict[str, int]:
    """On-chip bytes per stencil: reuse buffers, incoming channels and, for an output, the
    channel to its writer (everything the model counts, assigned to the stencil's device)."""
    out = {n: s.onchip_bytes for n, s in an.stencils.items()}
    for o in an.program.outputs:
        c = an.channel(o, sink_name(o))
        out[o] += c.capacity * c.token_bytes
    return out


def check_fits(an: Analysis, device: Device, index: int = 0) -> None:
    """Raise :class:`CapacityError` when the analysed program does not fit on ``device``
    (its on-chip memory and operators), naming the device, its capacity and the need."""
    prog = an.program
    mem = stencil_bytes(an)
    ops = {n: s.operations * prog.vectorization for n, s in an.stencils.items()}
    need_mem, need_ops = sum(mem.values()), sum(ops.values())
    big = max(mem, key=mem.__getitem__)
    if need_mem > device.memory_bytes:
        if mem[big] > device.memory_bytes:
            todo = (f"stencil '{big}' alone needs {size_text(mem[big])}, so more devices do not help: use a "
                    f"smaller domain (reuse buffers grow with the plane of the two inner dimensions) or a device "
                    f"with more memory (--device-memory)")
        else:
            todo = ("use more devices (--devices N), a smaller domain or a device with more memory "
                    "(--device-memory)")
        raise CapacityError(
            f"program '{prog.name}' does not fit on device {index}: it needs {size_text(need_mem)} of on-chip "
            f"memory (reuse and delay buffers; largest stencil '{big}' {size_text(mem[big])}), the device has "
            f"{size_text(device.memory_bytes)}; {todo}"
        )
    if need_ops > device.operators:
        busy = max(ops, key=ops.__getitem__)
        raise CapacityError(
            f"program '{prog.name}' does not fit on device {index}: it needs {need_ops} operators "
            f"(largest stencil '{busy}' {ops[busy]}), the device has {device.operators}; use more devices "
            f"(--devices N), a smaller vectorization (--vector-width) or a device with more operators "
            f"(--device-operators)"
        )


@dataclass(frozen=True)
class DeviceUse:
    device: int
    stencils: tuple[str, ...]
    memory_bytes: int
    operators: int


@dataclass(frozen=True)
class Partition:
    placement: Mapping[str, int]
    devices: tuple[DeviceUse, ...]
    cut_channels: tuple[tuple[str, str, int], ...]  # (src, dst, hops)
    link_bytes_per_cycle: tuple[int, ...]  # per link d <-> d+1
    link_gbs_used: tuple[float, ...]
    analysis: Analysis  # of the placed program (link latencies included)

    @property
    def traffic_bytes_per_cycle(self) -> int:
        return sum(self.link_bytes_per_cycle)


class Partitioner:
    """``Partitioner(devices, network)(program) -> Partition``."""

    def __init__(self, devices: Sequence[Device], network: Network | None = None, target: Target | None = None) -> None:
        if not devices:
            raise StencilFlowError("partitioning needs at least one device")
        self.devices = tuple(devices)
        self.network = network or Network()
        self.target = target or Target()

    def __call__(self, prog: Program, analysis: Analysis | None = None) -> Partition:
        an = analysis or analyse(prog, self.target)
        names = list(prog.stencils)
        base = stencil_bytes(an)
        ops = {n: an.stencils[n].operations * prog.vectorization for n in names}
        max_mem = max(d.memory_bytes for d in self.devices)
        max_ops = max(d.operators for d in self.devices)
        for n in names:
            if base[n] > max_mem or ops[n] > max_ops:
                raise CapacityError(
                    f"stencil '{n}' needs {size_text(base[n])} of on-chip memory and {ops[n]} operators; the "
                    f"largest device has {size_text(max_mem)} and {max_ops} operators, so more devices do not "
                    f"help: use a smaller domain, a smaller vectorization or larger devices"
                )
        stream_bytes = {n: prog.vectorization * prog.stencils[n].dtype.bytes for n in names}
        extra = dict.fromkeys(names, 0)  # delay-buffer growth from the link latency, per stencil
        for _ in range(MAX_ROUNDS):
            mem = {n: base[n] + extra[n] for n in names}
            placement = self._search(prog, mem, ops, stream_bytes, grown=any(extra.values()))
            part = self._report(prog, placement, stream_bytes)
            placed = stencil_bytes(part.analysis)
            over = [(u, d) for u, d in zip(part.devices, self.devices) if u.memory_bytes > d.memory_bytes]
            if not over:
                return part
            grown = {n: max(extra[n], placed[n] - base[n]) for n in names}
            if grown == extra:
                break
            extra = grown
        u, dev = over[0]
        raise CapacityError(
            f"device {u.device}: the link latency ({self.network.link_latency} cycles per hop) grows its delay "
            f"buffers to {size_text(u.memory_bytes)}, above its {size_text(dev.memory_bytes)}; lower the link "
            f"latency (--link-latency), give the devices more memory (--device-memory) or use more devices"
        )

    def _search(self, prog: Program, mem, ops, stream_bytes, grown: bool) -> dict[str, int]:
        """The best placement over both topological orders (CapacityError when none fits)."""
        best = None
        for order in self._orders(prog):
            found = self._place(order, prog, mem, ops, stream_bytes)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        if best is None:
            mems = sorted({d.memory_bytes for d in self.devices})
            opss = sorted({d.operators for d in self.devices})
            each = f"{size_text(mems[0])} and {opss[0]} operators" if len(mems) == len(opss) == 1 else (
                f"{size_text(mems[0])}-{size_text(mems[-1])} and {opss[0]}-{opss[-1]} operators")
            if self._fits_without_link_limit(prog, mem, ops, stream_bytes):
                why = (f"every placement needs more than the {self.network.link_gbs} GB/s of a link between "
                       f"neighbours; raise the link bandwidth (--link-gbs) or use larger devices")
            else:
                why = ("add devices (--devices N), give them more memory (--device-memory) or operators "
                       "(--device-operators), or use a smaller domain")
            raise CapacityError(
                f"program '{prog.name}' does not fit on {len(self.devices)} device(s) of {each} each: it needs "
                f"{size_text(sum(mem.values()))} on-chip"
                f"{' (delay buffers grown by the link latency)' if grown else ''} and {sum(ops.values())} "
                f"operators in total; {why}"
            )
        _, placement = best
        if len(set(self.devices)) == 1:  # identical devices: use the first ones of the chain
            low = min(placement.values(), default=0)
            placement = {s: d - low for s, d in placement.items()}
        return placement

    def _fits_without_link_limit(self, prog: Program, mem, ops, stream_bytes) -> bool:
        relaxed = Partitioner(self.devices, Network(1e30, self.network.link_latency), self.target)
        return any(relaxed._place(o, prog, mem, ops, stream_bytes) is not None for o in self._orders(prog))

    # ------------------------------------------------------------------
    @staticmethod
    def _orders(prog: Program) -> list[list[str]]:
        """Kahn order (breadth first) and a depth-first topological order (keeps chains)."""
        bfs = list(prog.stencils)
        cons = prog.consumers()
        seen: set[str] = set()
        post: list[str] = []
        for root in reversed(bfs):
            if root in seen:
                continue
            stack = [(root, iter(cons[root]))]
            seen.add(root)
            while stack:
                node, it = stack[-1]
                nxt = next((c for c in it if c not in seen), None)
                if nxt is None:
                    post.append(node)
                    stack.pop()
                else:
                    seen.add(nxt)
                    stack.append((nxt, iter(cons[nxt])))
        dfs = post[::-1]
        return [bfs, dfs] if dfs != bfs else [bfs]

    def _place(self, order: list[str], prog: Program, mem, ops, stream_bytes) -> tuple[float, dict[str, int]] | None:
        n, ndev = len(order), len(self.devices)
        pos = {s: k for k, s in enumerate(order)}
        cons = prog.consumers()
        cross = np.zeros(n + 1, dtype=np.int64)  # bytes/cycle crossing the boundary before position b
        for s in order:
            last = max((pos[c] for c in cons[s] if c in pos), default=pos[s])
            if last > pos[s]:
                cross[pos[s] + 1:last + 1] += stream_bytes[s]
        link_cap = self.network.link_gbs * 1e9 / (self.target.clock_mhz * 1e6)  # bytes per cycle
        pmem = np.concatenate([[0], np.cumsum([mem[s] for s in order])])
        pops = np.concatenate([[0], np.cumsum([ops[s] for s in order])])
        total_ops = max(int(pops[-1]), 1)
        inf = np.inf
        dp = np.full((ndev + 1, n + 1), inf)
        arg = np.zeros((ndev + 1, n + 1), dtype=np.int64)
        dp[0, 0] = 0.0
        boundary_cost = np.where(cross <= link_cap, cross.astype(float), inf)
        for d in range(1, ndev + 1):
            dev = self.devices[d - 1]
            link = boundary_cost if d > 1 else np.where(np.arange(n + 1) == 0, 0.0, inf)
            prev = dp[d - 1] + link
            i = np.arange(n + 1)
            for j0 in range(0, n + 1, 256):  # rows j0..j1-1 of the (j, i) candidate matrix at once
                j = np.arange(j0, min(j0 + 256, n + 1))[:, None]
                seg_ops = pops[j] - pops[i]
                ok = (i <= j) & (pmem[j] - pmem[i] <= dev.memory_bytes) & (seg_ops <= dev.operators)
                cand = np.where(ok, prev[None, :] + 0.5 * (seg_ops / total_ops) ** 2 / ndev, inf)
                k = np.argmin(cand, axis=1)
                dp[d, j[:, 0]] = cand[np.arange(len(k)), k]
                arg[d, j[:, 0]] = k
        if not np.isfinite(dp[ndev, n]):
            return None
        placement: dict[str, int] = {}
        j = n
        for d in range(ndev, 0, -1):
            i = int(arg[d, j])
            for s in order[i:j]:
                placement[s] = d - 1
            j = i
        return float(dp[ndev, n]), placement

    def _report(self, prog: Program, placement: dict[str, int], stream_bytes) -> Partition:
        ndev = len(self.devices)
        cuts, link_latency = [], {}
        links = np.zeros(max(ndev - 1, 0), dtype=np.int64)
        for s, st in prog.stencils.items():
            for f in st.inputs:
                if f in placement and placement[f] != placement[s]:
                    hops = abs(placement[s] - placement[f])
                    cuts.append((f, s, hops))
                    link_latency[(f, s)] = hops * self.network.link_latency
        cons = prog.consumers()
        for s in prog.stencils:
            far = max((placement[c] for c in cons[s] if c in placement), default=placement[s])
            links[placement[s]:far] += stream_bytes[s]
        an = analyse(prog, self.target, link_latency=link_latency)
        uses = []
        mem = stencil_bytes(an)
        for d in range(ndev):
            mine = tuple(s for s in prog.stencils if placement[s] == d)
            uses.append(DeviceUse(d, mine, sum(mem[s] for s in mine),
                                  sum(an.stencils[s].operations * prog.vectorization for s in mine)))
        gbs = tuple(float(b) * self.target.clock_mhz * 1e6 / 1e9 for b in links)
        return Partition(dict(placement), tuple(uses), tuple(cuts), tuple(int(b) for b in links), gbs, an)
