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
channel (latency times hops), which the streaming simulator then executes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mapping.spatial.analysis import Analysis, Target, analyse
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.model import Program

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Device:
    """Capacities of one device (defaults: roughly one Stratix 10 GX 2800)."""

    memory_bytes: int = 28 * 2**20
    operators: int = 4000  # arithmetic operators that can be instantiated (per cycle)


@dataclass(frozen=True)
class Network:
    link_gbs: float = 40.0  # bandwidth per direction between neighbouring devices, GB/s
    link_latency: int = 200  # cycles per hop


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
        mem = {n: an.stencils[n].onchip_bytes for n in names}
        ops = {n: an.stencils[n].operations * prog.vectorization for n in names}
        for n in names:
            if mem[n] > max(d.memory_bytes for d in self.devices) or ops[n] > max(d.operators for d in self.devices):
                raise StencilFlowError(
                    f"stencil '{n}' needs {mem[n]} bytes of on-chip memory and {ops[n]} operators, more than "
                    f"any device offers; use larger devices or a smaller vectorization"
                )
        stream_bytes = {n: prog.vectorization * prog.stencils[n].dtype.bytes for n in names}
        best = None
        for order in self._orders(prog):
            found = self._place(order, prog, mem, ops, stream_bytes)
            if found is not None and (best is None or found[0] < best[0]):
                best = found
        if best is None:
            raise StencilFlowError(
                f"program '{prog.name}' does not fit on {len(self.devices)} device(s): needs "
                f"{sum(mem.values())} bytes on-chip and {sum(ops.values())} operators in total, or more link "
                f"bandwidth than {self.network.link_gbs} GB/s; add devices or relax the capacities"
            )
        _, placement = best
        if len(set(self.devices)) == 1:  # identical devices: use the first ones of the chain
            low = min(placement.values(), default=0)
            placement = {s: d - low for s, d in placement.items()}
        return self._report(prog, placement, stream_bytes)

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
        for d in range(ndev):
            mine = tuple(s for s in prog.stencils if placement[s] == d)
            uses.append(DeviceUse(d, mine, sum(an.stencils[s].onchip_bytes for s in mine),
                                  sum(an.stencils[s].operations * prog.vectorization for s in mine)))
        for u, dev in zip(uses, self.devices):
            if u.memory_bytes > dev.memory_bytes:
                log.warning(
                    "device %d: the link latency grew the delay buffers to %d bytes, above its %d bytes; "
                    "lower --link-latency or give the devices more memory", u.device, u.memory_bytes, dev.memory_bytes)
        gbs = tuple(float(b) * self.target.clock_mhz * 1e6 / 1e9 for b in links)
        return Partition(dict(placement), tuple(uses), tuple(cuts), tuple(int(b) for b in links), gbs, an)
