"""The builders that accumulate an exported program's stages: :class:`FieldsBuilder` (one
field per channel, weights as externals, what StencilFlow maps) and :class:`StackedBuilder`
(channels as data dimensions, weights as ``GlobalTable`` parameters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from ens10 import schema
from ens10.baselines.data import LOCATION_INPUTS
from ens10.baselines.models import SOFTPLUS_ONE
from ens10.inference.codegen import Externals, field_ref, generate, linear_terms, tree_sum
from ens10.inference.errors import ExportError
from ens10.inference.stacked import (
    SEA_MASK,
    SOFTPLUS_THRESHOLD,
    Geometry,
    Stage,
    TableProgram,
    conv_stage,
    dense_stage,
    fuse,
    head_stage,
    maxpool_stage,
    predictors_stage,
)
from stencils.program import StencilProgram


def member_field(var: str, k: int) -> str:
    return f"{var}_m{k}"


class FieldsBuilder:
    """Accumulates the stages of one exported program in the ``fields`` layout (the ensemble
    statistics stage is shared by both layouts)."""

    def __init__(self, name: str, target: str, variables: Sequence[str], members: int, stats: str,
                 static: Mapping[str, np.ndarray]) -> None:
        self.target = schema.target(target)
        self.tvar = self.target.netcdf_variable
        self.variables = tuple(variables)
        self.members = members
        self.stats = stats
        self.static = dict(static)
        self.calls: list[tuple[Any, dict[str, Any], str]] = []
        self.temporaries: list[str] = []
        self.sources: dict[str, str] = {}
        if stats == "members":
            inputs = [member_field(v, k) for v in self.variables for k in range(members)]
            self.temporaries += [f"{v}_{s}" for v in self.variables for s in ("mean", "std")]
            self._stats_stage()
        else:
            inputs = [f"{v}_{s}" for v in self.variables for s in ("mean", "std")]
        self.inputs = inputs + list(self.static)
        self.name = name

    def add(self, gen, label: str, **bindings: Any) -> None:
        self.calls.append((gen, bindings, label))
        self.sources[label] = gen.source

    def temps(self, names: Sequence[str]) -> list[str]:
        self.temporaries += list(names)
        return list(names)

    def _stats_stage(self) -> None:
        m = self.members
        ms = [f"m{k}" for k in range(m)]
        stmts = [
            ("mn", f"{tree_sum(ms)} / {float(m)!r}"),
            ("sd", f"sqrt({tree_sum([f'(m{k} - mn) * (m{k} - mn)' for k in range(m)])} / {float(m)!r})"),
        ]
        gen = generate(f"ensemble_stats_{m}", ms, ["mn", "sd"], stmts)
        for v in self.variables:
            self.add(gen, f"ensemble_stats_{v}", mn=f"{v}_mean", sd=f"{v}_std",
                     **{f"m{k}": member_field(v, k) for k in range(m)})

    def channels(self, names: Sequence[str]) -> tuple[dict[str, str], list[str], bool]:
        """For predictor channels ``names``: (stencil parameter -> program field, the raw value
        expression of each channel, whether NaN -> 0 is needed (surface targets))."""
        sources: dict[str, str] = {}
        values = []
        for name in names:
            if name == "sea_mask":  # a temporary set by SEA_MASK (a ternary inside an expression is
                sources["sst_mean"] = "SSTK_mean"  # mis-parenthesised by GT4Py's debug backend)
                values.append("sea")
                continue
            if name not in LOCATION_INPUTS:
                var, _, stat = name.rpartition("_")
                if var not in self.variables or stat not in ("mean", "std"):
                    raise ExportError(f"predictor channel {name!r} is not known to the exporter")
            sources[name] = name
            values.append(name)
        return sources, values, "sea_mask" in names

    def predictors(self, names: Sequence[str], cmean: Sequence[float], cstd: Sequence[float]) -> list[str]:
        consts = Externals("NRM")
        sources, values, nan_guard = self.channels(names)
        stmts = [SEA_MASK] if "sst_mean" in sources else []
        outs = [f"x{c}" for c in range(len(names))]
        for c, value in enumerate(values):
            z = f"({value} - {consts.add(cmean[c], c, 'm')}) / {consts.add(cstd[c], c, 's')}"
            if nan_guard:
                stmts.append((f"z{c}", z))
                stmts.append((outs[c], f"0.0 if isnan(z{c}) else z{c}"))
            else:
                stmts.append((outs[c], z))
        params = list(sources)
        gen = generate("predictors", params, outs, stmts, consts.values)
        self.add(gen, "predictors", **sources, **{o: o for o in outs})
        return self.temps(outs)

    def dense(self, label: str, layer: nn.Linear, inputs: Sequence[str], prefix: str) -> list[str]:
        w, b = as_float64(layer.weight), as_float64(layer.bias)
        consts = Externals(f"W{label}")
        ins = [f"i{c}" for c in range(len(inputs))]
        outs = [f"o{n}" for n in range(w.shape[0])]
        stmts = [(outs[n], f"max({linear_terms(w[n], b[n], ins, consts, n)}, 0.0)") for n in range(w.shape[0])]
        gen = generate(label, ins, outs, stmts, consts.values)
        targets = self.temps([f"{prefix}_{n}" for n in range(w.shape[0])])
        self.add(gen, label, **dict(zip(ins, inputs)), **dict(zip(outs, targets)))
        return targets

    def conv(self, label: str, conv: nn.Conv2d, inputs: Sequence[str], prefix: str,
             taps: tuple[int, int, int]) -> list[str]:
        """3x3 Conv2d + ReLU with lat/lon tap offsets ``taps``: 9 taps per input channel."""
        w, bias = as_float64(conv.weight), as_float64(conv.bias)
        consts = Externals(f"W{label}")
        ins = [f"i{c}" for c in range(len(inputs))]
        outs = [f"o{n}" for n in range(w.shape[0])]
        stmts = []
        for o in range(w.shape[0]):
            terms = [consts.add(bias[o], o, "b")]
            for c in range(w.shape[1]):
                for a, da in enumerate(taps):
                    for bb, db in enumerate(taps):
                        terms.append(f"{consts.add(w[o, c, a, bb], o, c, a, bb)} * {field_ref(ins[c], (da, db))}")
            stmts.append((outs[o], f"max({tree_sum(terms)}, 0.0)"))
        gen = generate(label, ins, outs, stmts, consts.values)
        targets = self.temps([f"{prefix}_{o}" for o in range(w.shape[0])])
        self.add(gen, label, **dict(zip(ins, inputs)), **dict(zip(outs, targets)))
        return targets

    def maxpool(self, inputs: Sequence[str], prefix: str) -> list[str]:
        """2x2 max pool of every channel at every point (one shared stencil per channel)."""
        gen = generate("maxpool2", ["inp"], ["out"], [(
            "out", "max(max(inp, inp[1, 0, 0]), max(inp[0, 1, 0], inp[1, 1, 0]))")])
        targets = self.temps([f"{prefix}_{o}" for o in range(len(inputs))])
        for src, dst in zip(inputs, targets):
            self.add(gen, f"maxpool_{dst}", inp=src, out=dst)
        return targets

    def head(self, layer: nn.Linear, inputs: Sequence[str], scale: float) -> None:
        w, b = as_float64(layer.weight), as_float64(layer.bias)
        if w.shape[0] != 2:
            raise ExportError(f"the last Linear layer has {w.shape[0]} outputs; the Gaussian head needs 2")
        consts = Externals("WH")
        ins = [f"i{c}" for c in range(len(inputs))]
        consts.values.update({"SCALE": float(scale), "SCALE_EPS": 1e-3 * float(scale),
                              "SOFTPLUS_ONE": SOFTPLUS_ONE})
        stmts = [
            ("o0", linear_terms(w[0], b[0], ins, consts, 0)),
            ("o1", linear_terms(w[1], b[1], ins, consts, 1)),
            ("y", "o1 + SOFTPLUS_ONE"),
            ("mu", "mn + SCALE * o0"),
            ("sp", f"y if y > {SOFTPLUS_THRESHOLD!r} else log(1.0 + exp(y))"),
            ("sigma", "(sd + SCALE_EPS) * sp"),
        ]
        gen = generate("head", [*ins, "mn", "sd"], ["mu", "sigma"], stmts, consts.values)
        self.add(gen, "head", **dict(zip(ins, inputs)), mn=f"{self.tvar}_mean",
                 sd=f"{self.tvar}_std", mu="mu", sigma="sigma")

    def program(self) -> StencilProgram:
        prog = StencilProgram(self.name, inputs=self.inputs, outputs=["mu", "sigma"],
                              temporaries=self.temporaries)
        for gen, bindings, label in self.calls:
            prog.add(gen.definition, label=label, externals=gen.externals, **bindings)
        return prog


class StackedBuilder(FieldsBuilder):
    """The ``stacked`` layout (:mod:`ens10.inference.stacked`): layers over channel-stacked
    fields with the weights as ``GlobalTable`` parameters (``loops``: channel loops in GTScript,
    else unrolled with constant indices for the numpy backend). Consecutive layers are fused into
    one stencil until a layer reads a field of the current stencil at an offset (GT4Py computes
    such a field in an earlier stencil): the MLP is one stencil after the ensemble statistics,
    LeNet four (predictors, conv1, max pool, conv2 + dense + head)."""

    def __init__(self, *args: Any, loops: bool = True, **kw: Any) -> None:
        self.loops = loops
        self.tables: dict[str, np.ndarray] = {}
        self.data_dims: dict[str, tuple[int, ...]] = {}
        self.pending: list[Stage] = []
        self.geometry: Geometry | None = None
        self.geometry_fields: tuple[str, ...] = ()
        super().__init__(*args, **kw)

    def stage(self, st: Stage, **tables: Any) -> None:
        written = {w for p in self.pending for w in p.writes}
        if written & set(st.offset_reads):
            self.flush()
        self.tables.update({f"{st.label}_{k}": np.asarray(v, dtype=np.float64) for k, v in tables.items()})
        self.pending.append(st)

    def flush(self) -> None:
        if self.pending:
            label, gen = fuse(self.pending)
            self.add(gen, label, **{p: p for p in gen.params})
            self.pending = []

    def stacked(self, name: str, channels: int) -> str:
        self.data_dims[name] = (channels,)
        return self.temps([name])[0]

    def predictors(self, names: Sequence[str], cmean: Sequence[float], cstd: Sequence[float]) -> str:
        sources, values, nan_guard = self.channels(names)
        x = self.stacked("x", len(names))
        self.stage(predictors_stage(sources, values, nan_guard, x), m=cmean, s=cstd)
        return x

    def dense(self, label: str, layer: nn.Linear, inputs: str, prefix: str) -> str:
        w, b = as_float64(layer.weight), as_float64(layer.bias)
        y = self.stacked(prefix, w.shape[0])
        self.stage(dense_stage(label, inputs, y, w.shape[0], w.shape[1], self.loops), w=w, b=b)
        return y

    def conv(self, label: str, conv: nn.Conv2d, inputs: str, prefix: str, taps: tuple[int, int, int]) -> str:
        w, b = as_float64(conv.weight), as_float64(conv.bias)
        y = self.stacked(prefix, w.shape[0])
        self.stage(conv_stage(label, inputs, y, w.shape[0], w.shape[1], taps, self.loops), w=w, b=b)
        return y

    def maxpool(self, inputs: str, prefix: str) -> str:
        n = self.data_dims[inputs][0]
        y = self.stacked(prefix, n)
        self.stage(maxpool_stage("maxpool", inputs, y, n, self.loops))
        return y

    def head(self, layer: nn.Linear, inputs: str, scale: float) -> None:
        self.head_arrays(as_float64(layer.weight), as_float64(layer.bias), inputs, scale)

    def head_arrays(self, w: np.ndarray, b: np.ndarray, inputs: str, scale: float) -> None:
        """The Gaussian head after a last linear map with weights ``w`` (2, C) and bias ``b``."""
        if w.shape[0] != 2:
            raise ExportError(f"the last Linear layer has {w.shape[0]} outputs; the Gaussian head needs 2")
        st = head_stage(inputs, w.shape[1], f"{self.tvar}_mean", f"{self.tvar}_std", SOFTPLUS_ONE, self.loops)
        self.stage(st, w=w, b=b, sc=[float(scale), 1e-3 * float(scale)])
        self.flush()

    def program(self) -> TableProgram:
        self.flush()
        prog = TableProgram(self.name, inputs=self.inputs, outputs=["mu", "sigma"],
                            temporaries=self.temporaries, data_dims=self.data_dims, tables=self.tables,
                            geometry=self.geometry, geometry_fields=self.geometry_fields)
        for gen, bindings, label in self.calls:
            prog.add(gen.definition, label=label, externals=gen.externals, **bindings)
        return prog


def as_float64(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64).cpu().numpy()
