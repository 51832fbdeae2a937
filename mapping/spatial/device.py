"""Named FPGA device descriptions and a resource model on them: DSP blocks from a program's
floating-point operations, on-chip memory, the vertical recurrence and (when known) off-chip
bandwidth, each as a bound on the points a device streams per cycle.

Where each number comes from is part of the description (:attr:`FPGAModel.sources`): the
StencilFlow paper (de Fine Licht et al., "StencilFlow: Mapping Large Stencil Programs to
Distributed Spatial Computing Systems", CGO 2021, arXiv:2010.15218), Intel's device documentation
(labelled as the vendor's), or this project's own assumption.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mapping.spatial.analysis import Analysis
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import Access, Binary, Call, Unary, children, walk
from mapping.spatial.model import Program

#: operation kinds of :func:`value_operations`
KINDS = ("add", "mul", "div", "pow", "neg", "func")
_BINARY_KIND = {"+": "add", "-": "add", "*": "mul", "/": "div", "//": "div", "%": "div", "**": "pow"}


def _on_values(node) -> bool:
    return any(isinstance(n, Access) for n in walk(node))


def value_operations(prog: Program) -> Counter[tuple[str, str]]:
    """Floating-point operations per point on field values, counted by ``(data type, kind)``.

    Kinds: ``add`` (``+``, ``-``), ``mul``, ``div`` (``/``, ``//``, ``%``), ``pow``, ``neg``
    (unary minus) and ``func`` (math functions, min/max, abs). An operation counts when one of
    its operands reads a field; the integer index arithmetic, comparisons and selects of
    region, interval and compute-domain predicates do not (the model's operators count them).
    The data type is the stencil's.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for st in prog.stencils.values():
        for stmt in st.computation.statements:
            for node in walk(stmt.value):
                if isinstance(node, Binary):
                    kind = _BINARY_KIND[node.op]
                elif isinstance(node, Call):
                    kind = "func"
                elif isinstance(node, Unary) and node.op == "-":
                    kind = "neg"
                else:
                    continue
                if any(_on_values(c) for c in children(node)):
                    counts[(st.dtype.name, kind)] += 1
    return counts


@dataclass(frozen=True)
class FPGAModel:
    """One FPGA's resources for the throughput model.

    ``dsp_per_operation[(data type, kind)]`` is the DSP blocks one pipelined operation of that
    kind occupies; a kind not listed uses no DSP block (it is built in logic, which this model
    does not count). ``offchip_gbs`` is ``None`` when no figure is known, and bandwidth is then
    not checked. ``sources`` says where each field's value comes from.
    """

    name: str
    clock_mhz: float
    dsp_blocks: int
    onchip_bytes: int
    dsp_per_operation: Mapping[tuple[str, str], int]
    sources: Mapping[str, str]
    offchip_gbs: float | None = None

    def __post_init__(self) -> None:
        for what in ("dsp_blocks", "onchip_bytes"):
            v = getattr(self, what)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise StencilFlowError(f"device {self.name}: {what} must be a positive integer, got {v!r}")
        for what in ("clock_mhz", "offchip_gbs"):
            v = getattr(self, what)
            if v is None and what == "offchip_gbs":
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise StencilFlowError(f"device {self.name}: {what} must be a positive finite number, got {v!r}")
        object.__setattr__(self, "dsp_per_operation", MappingProxyType(dict(self.dsp_per_operation)))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))


#: Intel's Stratix 10 GX 2800, the device family of StencilFlow's evaluation.
#:
#: The paper (arXiv:2010.15218v2, abstract) states a "Stratix 10 FPGA testbed" yielding 1.31 TOp/s
#: on one device and 4.18 TOp/s on several. Its evaluation section (device model, the frequency
#: each benchmark reached, DSP and memory use) could not be read here, so no number below is
#: taken from it:
#:
#: * DSP blocks and M20K blocks are Intel's figures for the GX 2800 (vendor data: 5,760 variable
#:   precision DSP blocks; 11,721 M20K blocks of 20 Kbit, 234,420 Kbit = 30,005,760 bytes);
#: * the DSP rule is Intel's "Variable Precision DSP Block Configurations" table (Stratix 10
#:   device overview, "Variable Precision DSP Block"): in floating-point mode one block has one
#:   single-precision adder and one multiplier; a double-precision multiplication (54x54) takes 4
#:   blocks; a double-precision adder has no DSP configuration (logic). Each single-precision add
#:   and multiply is counted as one block, without pairing a multiply with an add in one block
#:   (an upper bound);
#: * the clock is this project's default (300 MHz), not a published figure;
#: * off-chip bandwidth: none (no figure read), so it is not checked.
STRATIX10_GX2800 = FPGAModel(
    name="Stratix 10 GX 2800",
    clock_mhz=300.0,
    dsp_blocks=5760,
    onchip_bytes=11721 * 20 * 1024 // 8,
    dsp_per_operation={("float32", "add"): 1, ("float32", "mul"): 1, ("float64", "mul"): 4},
    sources={
        "dsp_blocks": "vendor (Intel Stratix 10 GX 2800: 5,760 variable precision DSP blocks)",
        "onchip_bytes": "vendor (Intel Stratix 10 GX 2800: 11,721 M20K blocks of 20 Kbit)",
        "dsp_per_operation": "vendor (Intel Stratix 10 device overview, Variable Precision DSP Block "
                             "Configurations: SP add/mul 1 block, DP multiply 4 blocks, DP add in logic)",
        "clock_mhz": "project assumption (300 MHz); the paper's achieved frequencies were not read",
        "offchip_gbs": "not known (not checked)",
        "paper_single_device_tops": "paper (arXiv:2010.15218, abstract: 1.31 TOp/s on one Stratix 10)",
    },
)

#: StencilFlow's single-device figure on a Stratix 10 (paper abstract), in TOp/s
PAPER_SINGLE_DEVICE_TOPS = 1.31
#: and on several devices (paper abstract)
PAPER_MULTI_DEVICE_TOPS = 4.18


@dataclass(frozen=True)
class DeviceEstimate:
    """A program streamed on one :class:`FPGAModel`.

    ``points_per_cycle`` is the least of the bounds in ``bounds`` (each: the resource's capacity
    over the program's need, so a program needing twice the DSPs streams at half rate on one
    device, or needs two); ``limit`` names the bound that sets it, or ``"none"`` when the
    program's vector width does.
    """

    device: FPGAModel
    flops_per_point: int
    unmapped_per_point: int  # value operations that use no DSP block (logic)
    dsps: int
    onchip_bytes: int
    offchip_bytes_per_point: float
    carried_latency: int
    bounds: Mapping[str, float] = field(default_factory=dict)

    @property
    def points_per_cycle(self) -> float:
        return min(self.bounds.values())

    @property
    def limit(self) -> str:
        best = self.points_per_cycle
        names = [k for k, v in self.bounds.items() if v == best and k != "vector width"]
        return ", ".join(names) if names else "none"

    @property
    def gflops(self) -> float:
        return self.flops_per_point * self.points_per_cycle * self.device.clock_mhz * 1e6 / 1e9


def estimate(an: Analysis, device: FPGAModel = STRATIX10_GX2800) -> DeviceEstimate:
    """The throughput of ``an``'s program streamed on ``device``, with what limits it:

    * ``DSPs``: ``device.dsp_blocks / dsps`` with ``dsps`` from :func:`value_operations` and
      ``device.dsp_per_operation``;
    * ``on-chip memory``: ``device.onchip_bytes`` over the model's on-chip bytes;
    * ``recurrence``: ``1 / carried latency`` of the slowest recurrence node (one level per that
      many cycles, as the emitted code runs it, without interleaving columns);
    * ``bandwidth``: ``offchip_gbs`` over the off-chip bytes per point at the clock (if known);
    * ``vector width``: the program's ``W`` points per cycle.
    """
    prog = an.program
    ops = value_operations(prog)
    dsps = sum(n * device.dsp_per_operation.get(key, 0) for key, n in ops.items())
    unmapped = sum(n for key, n in ops.items() if device.dsp_per_operation.get(key, 0) == 0)
    carried = max((an.stencils[n].carried_latency for n, st in prog.stencils.items() if st.recurrence), default=0)
    offchip = an.model.offchip_bytes / prog.points
    bounds: dict[str, float] = {"vector width": float(prog.vectorization)}
    if dsps:
        bounds["DSPs"] = device.dsp_blocks / dsps
    if an.model.onchip_bytes:
        bounds["on-chip memory"] = device.onchip_bytes / an.model.onchip_bytes
    if carried > 1:
        bounds["recurrence"] = 1 / carried
    if device.offchip_gbs is not None and offchip > 0:
        bounds["bandwidth"] = device.offchip_gbs * 1e9 / (offchip * device.clock_mhz * 1e6)
    return DeviceEstimate(device=device, flops_per_point=sum(ops.values()), unmapped_per_point=unmapped,
                          dsps=dsps, onchip_bytes=an.model.onchip_bytes, offchip_bytes_per_point=offchip,
                          carried_latency=carried, bounds=MappingProxyType(bounds))
