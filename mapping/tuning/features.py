"""Performance embeddings: static features from a stencil's GTIR, dynamic ones from one run.

The feature table (also in docs/tuning.md):

=====================  =======  ===================================================================
feature                kind     meaning
=====================  =======  ===================================================================
n_inputs               static   fields read (not written)
n_outputs              static   fields written
n_temporaries          static   stencil-local temporaries assigned
n_statements           static   assignments in the GTIR
reads                  static   distinct (field, offset) reads, composed through temporaries
footprint_max          static   largest number of distinct offsets read from one field
extent_h               static   largest horizontal offset read (halo width)
extent_k               static   largest vertical offset read
flops                  static   arithmetic operations (+ - * / ** and math calls) per point
compares               static   comparisons, logical operators, ternaries and ifs per point
math_calls             static   native math calls (sqrt, exp, ...) per point
intensity              static   flops / (8 bytes x fields touched): arithmetic intensity
parallel               static   1 if every vertical loop is PARALLEL
forward                static   1 if a FORWARD loop exists (vertical dependency)
backward               static   1 if a BACKWARD loop exists
n_vertical_loops       static   computations (vertical loops)
n_intervals            static   vertical intervals over all computations
variable_k             static   1 if a field is read at a run-time vertical offset
fusable_neighbours     static   stencils of its program it can be fused with (0 standalone;
                                programs: calls - 1)
log_ns_per_point       dynamic  log10 of the numpy-backend run time per grid point (ns)
bandwidth_fraction     dynamic  compulsory bytes / run time, as a fraction of STREAM triad
ipc                    dynamic  instructions per cycle of the baseline calls from ``perf stat``
                                (:mod:`mapping.tuning.counters`); where the machine exposes no
                                counters it is NaN (left out of the distance) and the embedding's
                                ``status["ipc"]`` says why
=====================  =======  ===================================================================

A stencil program's embedding is made from its calls' embeddings (:func:`program_features`).
Embeddings are standardised (z-scores over the database) before nearest-neighbour search.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from mapping.tuning.errors import TuningError

if TYPE_CHECKING:  # targets imports GT4Py; the database reads embeddings without it
    from mapping.tuning.targets import TuningTarget

log = logging.getLogger(__name__)

STATIC_FEATURES: tuple[str, ...] = (
    "n_inputs",
    "n_outputs",
    "n_temporaries",
    "n_statements",
    "reads",
    "footprint_max",
    "extent_h",
    "extent_k",
    "flops",
    "compares",
    "math_calls",
    "intensity",
    "parallel",
    "forward",
    "backward",
    "n_vertical_loops",
    "n_intervals",
    "variable_k",
    "fusable_neighbours",
)
DYNAMIC_FEATURES: tuple[str, ...] = ("log_ns_per_point", "bandwidth_fraction", "ipc")
FEATURES: tuple[str, ...] = STATIC_FEATURES + DYNAMIC_FEATURES

_ARITH = {"ADD", "SUB", "MUL", "DIV", "POW", "MOD"}


def static_features(target: TuningTarget, fusable_neighbours: int = 0) -> dict[str, float]:
    """Features of the stencil's GTIR (no compilation)."""
    from mapping.tuning.targets import analyse_definition
    from stencils.gt4py_internals import gtir

    access = analyse_definition(target.definition, target.externals)
    ops: Counter[str] = Counter()
    temporaries: set[str] = set()
    statements = 0
    intervals = 0
    for node in access.gtir.walk_values():
        if isinstance(node, gtir.BinaryOp):
            name = str(node.op.name)
            ops["flops" if name in _ARITH else "compares"] += 1
        elif isinstance(node, gtir.UnaryOp):
            ops["flops"] += 1
        elif isinstance(node, (gtir.TernaryOp, gtir.FieldIfStmt, gtir.ScalarIfStmt)):
            ops["compares"] += 1
        elif isinstance(node, gtir.NativeFuncCall):
            ops["math_calls"] += 1
            ops["flops"] += 1
        elif isinstance(node, gtir.ParAssignStmt):
            statements += 1
            if str(node.left.name) not in access.fields:
                temporaries.add(str(node.left.name))
        elif isinstance(node, gtir.Interval):
            intervals += 1
    offsets = [o for offs in access.reads.values() for o in offs]
    fields_touched = len(set(access.reads) | set(access.writes)) or 1
    return {
        "n_inputs": float(len(set(access.reads) - set(access.writes))),
        "n_outputs": float(len(access.writes)),
        "n_temporaries": float(len(temporaries)),
        "n_statements": float(statements),
        "reads": float(len(offsets)),
        "footprint_max": float(max((len(o) for o in access.reads.values()), default=0)),
        "extent_h": float(max((max(abs(o[0]), abs(o[1])) for o in offsets), default=0)),
        "extent_k": float(max((abs(o[2]) for o in offsets), default=0)),
        "flops": float(ops["flops"]),
        "compares": float(ops["compares"]),
        "math_calls": float(ops["math_calls"]),
        "intensity": float(ops["flops"]) / (8.0 * fields_touched),
        "parallel": float(access.loop_orders == {"parallel"}),
        "forward": float("forward" in access.loop_orders),
        "backward": float("backward" in access.loop_orders),
        "n_vertical_loops": float(len(access.gtir.vertical_loops)),
        "n_intervals": float(intervals),
        "variable_k": float(access.variable_k),
        "fusable_neighbours": float(fusable_neighbours),
    }


def dynamic_features(
    target: TuningTarget,
    domain: tuple[int, int, int],
    baseline_seconds: float,
    stream_gbs: float,
    ipc: float | None = None,
) -> dict[str, float]:
    """Features of one profiled baseline (numpy backend) run of the stencil."""
    if baseline_seconds <= 0:
        raise TuningError(f"stencil {target.name!r}: baseline time must be > 0, got {baseline_seconds}")
    points = domain[0] * domain[1] * domain[2]
    nbytes = 8 * points * (len(target.inputs) + len(target.outputs))
    return {
        "log_ns_per_point": math.log10(1e9 * baseline_seconds / points),
        "bandwidth_fraction": nbytes / baseline_seconds / (stream_gbs * 1e9) if stream_gbs > 0 else float("nan"),
        "ipc": float("nan") if ipc is None else float(ipc),
    }


def program_features(parts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """A stencil program's features from its calls' embeddings (docs/tuning.md).

    Each feature is the mean over the calls weighted by their share of the program's numpy
    time (``10 ** log_ns_per_point``): the calls that dominate the run time dominate the
    embedding, and ``bandwidth_fraction`` becomes the program's total compulsory bytes over its
    total time. ``log_ns_per_point`` is log10 of the summed call times per point and
    ``fusable_neighbours`` the number of calls minus one. A feature NaN in any call is NaN.
    """
    if not parts:
        raise TuningError("a program embedding needs the embeddings of its calls; the program has none")
    times = np.array([10.0 ** float(p.get("log_ns_per_point", float("nan"))) for p in parts])
    if not np.all(np.isfinite(times)):
        raise TuningError("a call embedding has no log_ns_per_point; profile its stencil again")
    weights = times / times.sum()
    out = {
        name: float(sum(w * float(p.get(name, float("nan"))) for w, p in zip(weights, parts)))
        for name in FEATURES
    }
    out["log_ns_per_point"] = math.log10(float(times.sum()))
    out["fusable_neighbours"] = float(len(parts) - 1)
    return out


@dataclass(frozen=True)
class Embedding:
    """A stencil's feature vector (named)."""

    stencil: str
    features: Mapping[str, float]
    status: Mapping[str, str] = field(default_factory=dict)  # dynamic feature -> how it was obtained

    def vector(self, names: Sequence[str] = FEATURES) -> np.ndarray:
        return np.array([float(self.features.get(n, float("nan"))) for n in names])


class Standardiser:
    """Z-scores per feature over a set of embeddings; features that are NaN anywhere or constant
    carry no information and are dropped."""

    def __init__(self, embeddings: Sequence[Embedding], names: Sequence[str] = FEATURES) -> None:
        if not embeddings:
            raise TuningError("cannot standardise features of an empty tuning database")
        matrix = np.array([e.vector(names) for e in embeddings])
        keep = ~np.isnan(matrix).any(axis=0)
        self.names = tuple(n for n, k in zip(names, keep) if k)
        m = matrix[:, keep]
        self.mean = m.mean(axis=0)
        std = m.std(axis=0)
        self.std = np.where(std > 0, std, 1.0)

    def __call__(self, embedding: Embedding) -> np.ndarray:
        v = embedding.vector(self.names)
        v = np.where(np.isnan(v), self.mean, v)
        return (v - self.mean) / self.std
