"""Trained ENS-10 baselines -> :class:`stencils.program.StencilProgram`.

The exported program takes the raw ensemble members of every predictor variable (program
fields ``{VAR}_m{k}``, e.g. ``T_m0``..``T_m9``) or, with ``stats="given"``, their ensemble mean
and standard deviation (``{VAR}_mean``, ``{VAR}_std``), and writes the Gaussian prediction
``mu`` and ``sigma``. Fields are 2-D lat-lon fields stored as (i=lat, j=lon, k=1).

Stages (in the ``stacked`` layout, :mod:`ens10.inference.stacked`, channels are data dimensions,
weights ``GlobalTable`` parameters and consecutive pointwise stages one fused stencil; in the
``fields`` layout, :mod:`ens10.inference.codegen`, each stage is a stencil over one field per
channel with the weights as externals):

``ensemble_stats``  mean and population std (ddof=0) over the members, per variable
``predictors``      standardised predictor channels ``x{c}`` (NaN -> 0, sea mask) [MLP, LeNet, U-Net]
``dense_{l}``       Linear + ReLU over the channels at each point                   [MLP, LeNet]
``conv1``           3x3 convolution + ReLU (9 taps per input channel)               [LeNet]
``maxpool``         2x2 max pool, evaluated at every point                           [LeNet]
``conv2``           3x3 convolution of the pooled field = dilated 3x3 stencil with
                    taps at offsets {-3, -1, +1} in lat and lon                      [LeNet]
``head``            last Linear + Gaussian head (mu = mean + s o0,
                    sigma = (std + 1e-3 s) softplus(o1 + log(e - 1)))        [MLP, LeNet, U-Net]
``emos``            EMOS with per-point (parameter fields) or global (externals) coefficients
U-Net stages        :mod:`ens10.inference.unet_export` (levels "a trous", padding as masks)
Transformer stages  :mod:`ens10.inference.transformer_export` (one fused pointwise stencil)

Supported: ``EMOS`` (local and global), ``MLP`` (any number of Linear+ReLU layers), ``LeNet``
(Conv3-ReLU-MaxPool2-Conv3-ReLU-Linear-ReLU-Linear on 9x9 patches), ``UNet`` and
``EnsembleTransformer`` (any widths, any number of post-norm encoder layers; written for the
stacked layout, their ``fields`` layout is the unrolled stacked program rewritten one field per
channel by :mod:`ens10.inference.unstacked`). Anything else (other layers, activations or architectures) raises :class:`ExportError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ens10 import schema
from ens10.baselines.data import LOCATION_INPUTS
from ens10.baselines.models import EMOS, MLP, SOFTPLUS_ONE, EnsembleTransformer, LeNet, UNet
from ens10.grid import location_features
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
from ens10.inference.transformer_export import export_transformer
from ens10.inference.unet_export import HALO as UNET_HALO
from ens10.inference.unet_export import export_unet
from stencils.program import StencilProgram

log = logging.getLogger(__name__)

SUPPORTED_MODELS = ("emos", "emos_global", "mlp", "lenet", "unet", "transformer")
STATS = ("members", "given")
LAYOUTS = ("stacked", "fields")



@dataclass
class ExportedModel:
    """A baseline as a stencil program plus what it needs besides the forecast.

    ``variables``: netCDF names of the predictor variables whose members (or mean/std) are
    inputs; ``static``: per-grid-point parameter fields (lat, lon) that are program inputs too
    (location features, local EMOS coefficients); ``halo``: the accumulated halo width;
    ``layout``: ``stacked`` (channels as data dimensions, weights as tables: quick builds) or
    ``fields`` (one field per channel, weights as externals: what StencilFlow maps);
    ``loops``: channel loops in GTScript (stacked layout on every backend but numpy);
    ``decomposable``: whether a block of the field with its halo gives the whole-field values
    (False for the U-Net, whose zero padding sits at the edges of the whole field).
    """

    model: str
    target: str
    program: StencilProgram
    variables: tuple[str, ...]
    members: int
    stats: str
    static: dict[str, np.ndarray]
    lat: np.ndarray
    lon: np.ndarray
    halo: int = 0
    sources: dict[str, str] = field(default_factory=dict, repr=False)
    layout: str = "stacked"
    loops: bool = True
    decomposable: bool = True

    @property
    def field_inputs(self) -> tuple[str, ...]:
        """Program inputs that are (lat, lon) fields: forecast and static (not weight tables, not
        the program's own geometry fields)."""
        return self.program.field_inputs

    @property
    def forecast_inputs(self) -> tuple[str, ...]:
        """Program inputs taken from the forecast (not static, not weight tables)."""
        return tuple(f for f in self.field_inputs if f not in self.static)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.lat), len(self.lon))


def member_field(var: str, k: int) -> str:
    return f"{var}_m{k}"


class _Builder:
    """Accumulates the stages of one exported program."""

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
        w, b = _np(layer.weight), _np(layer.bias)
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
        w, bias = _np(conv.weight), _np(conv.bias)
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
        w, b = _np(layer.weight), _np(layer.bias)
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



class StackedBuilder(_Builder):
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
        w, b = _np(layer.weight), _np(layer.bias)
        y = self.stacked(prefix, w.shape[0])
        self.stage(dense_stage(label, inputs, y, w.shape[0], w.shape[1], self.loops), w=w, b=b)
        return y

    def conv(self, label: str, conv: nn.Conv2d, inputs: str, prefix: str, taps: tuple[int, int, int]) -> str:
        w, b = _np(conv.weight), _np(conv.bias)
        y = self.stacked(prefix, w.shape[0])
        self.stage(conv_stage(label, inputs, y, w.shape[0], w.shape[1], taps, self.loops), w=w, b=b)
        return y

    def maxpool(self, inputs: str, prefix: str) -> str:
        n = self.data_dims[inputs][0]
        y = self.stacked(prefix, n)
        self.stage(maxpool_stage("maxpool", inputs, y, n, self.loops))
        return y

    def head(self, layer: nn.Linear, inputs: str, scale: float) -> None:
        self.head_arrays(_np(layer.weight), _np(layer.bias), inputs, scale)

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


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to(torch.float64).cpu().numpy()


def _check_layers(model: str, mods: Sequence[nn.Module], pattern: Sequence[type], where: str) -> None:
    got = [type(m).__name__ for m in mods]
    want = [t.__name__ for t in pattern]
    if got != want:
        raise ExportError(
            f"model {model!r}: {where} has layers {got}; the exporter supports exactly {want} "
            f"(Linear, ReLU, Conv2d 3x3 stride 1 without padding, MaxPool2d 2)"
        )


def _check_conv(model: str, conv: nn.Conv2d, label: str) -> None:
    ok = (conv.kernel_size == (3, 3) and conv.stride == (1, 1) and conv.padding == (0, 0)
          and conv.dilation == (1, 1) and conv.groups == 1 and conv.bias is not None)
    if not ok:
        raise ExportError(
            f"model {model!r}: {label} is {conv}; only Conv2d(kernel_size=3, stride=1, padding=0, "
            "dilation=1, groups=1, bias=True) is supported"
        )


def _predictor_variables(inputs: Sequence[str], tvar: str) -> list[str]:
    out = []
    for name in inputs:
        if name in LOCATION_INPUTS:
            continue
        var = "SSTK" if name == "sea_mask" else name.rpartition("_")[0]
        if var not in out:
            out.append(var)
    if tvar not in out:
        out.insert(0, tvar)
    return out


def _static_location(names: Sequence[str], lat: np.ndarray, lon: np.ndarray) -> dict[str, np.ndarray]:
    loc = location_features(lat, lon)
    return {n: loc[LOCATION_INPUTS.index(n)] for n in names if n in LOCATION_INPUTS}


def required_variables(net: nn.Module, ckpt: Mapping[str, Any]) -> tuple[str, ...]:
    """netCDF names of the variables whose members (or mean/std) the exported program reads."""
    tvar = schema.target(str(ckpt["target"])).netcdf_variable
    if isinstance(net, (EMOS, EnsembleTransformer)):
        return (tvar,)
    return tuple(_predictor_variables(list(ckpt["inputs"]), tvar))


def export_model(
    net: nn.Module,
    ckpt: Mapping[str, Any],
    members: int = schema.MEMBERS,
    stats: str = "members",
    layout: str = "stacked",
    loops: bool = True,
) -> ExportedModel:
    """Export the PyTorch baseline ``net`` (built from checkpoint ``ckpt``) as a stencil program.

    ``layout="stacked"`` (default) runs on GT4Py backends with builds whose size does not grow
    with the weights; pass ``loops=False`` for the numpy backend
    (:func:`ens10.inference.stacked.loops_supported`). ``layout="fields"`` is the
    one-field-per-channel program that :class:`ens10.inference.dataflow.DataflowExport` maps to
    StencilFlow (its build time grows with the layer sizes: keep it to small models).
    """
    name, target = str(ckpt["model"]), str(ckpt["target"])
    if stats not in STATS:
        raise ExportError(f"stats={stats!r}: use 'members' (raw members in) or 'given' (mean/std in)")
    if layout not in LAYOUTS:
        raise ExportError(f"layout={layout!r}: use 'stacked' (CPU/GPU runs) or 'fields' (StencilFlow)")

    def builder(variables: Sequence[str], static: Mapping[str, np.ndarray]) -> _Builder:
        if layout == "fields":
            return _Builder(pname, target, variables, members, stats, static)
        return StackedBuilder(pname, target, variables, members, stats, static, loops=loops)

    def stacked_only(variables: Sequence[str], static: Mapping[str, np.ndarray]) -> StackedBuilder:
        """Models written for the stacked layout only: in the fields layout their unrolled
        stages are rewritten to one field per channel (:mod:`ens10.inference.unstacked`)."""
        if layout == "fields":
            from ens10.inference.unstacked import UnstackedBuilder  # it builds on StackedBuilder

            return UnstackedBuilder(pname, target, variables, members, stats, static)
        return StackedBuilder(pname, target, variables, members, stats, static, loops=loops)
    if members < 2:
        raise ExportError(f"members={members}: an ensemble needs at least 2 members")
    lat = np.asarray(ckpt["grid"]["lat"], dtype=np.float64)
    lon = np.asarray(ckpt["grid"]["lon"], dtype=np.float64)
    tvar = schema.target(target).netcdf_variable
    norm = ckpt["normalisation"]
    inputs = list(ckpt["inputs"])
    pname = f"ens10_{name}_{target}"
    if isinstance(net, EMOS):
        b = _Builder(pname, target, [tvar], members, stats, {})
        params = {k: _np(getattr(net, k)) for k in ("loc", "spread", "a", "b", "c", "d")}
        consts = Externals("EMOS")
        per_point = params["a"].shape != (1, 1)
        if per_point:
            b.static = {f"emos_{k}": v for k, v in params.items()}
            b.inputs += list(b.static)
            refs = {k: f"e_{k}" for k in params}
        else:
            refs = {k: consts.add(float(v.reshape(-1)[0]), k) for k, v in params.items()}
        stmts = [
            ("xm", f"(mn - {refs['loc']}) / {refs['spread']}"),
            ("mu", f"{refs['loc']} + {refs['spread']} * ({refs['a']} + {refs['b']} * xm)"),
            ("s", f"sd / {refs['spread']}"),
            ("sigma", f"{refs['spread']} * sqrt({refs['c']} * {refs['c']} + "
                      f"({refs['d']} * s) * ({refs['d']} * s) + 1e-12)"),
        ]
        field_params = [f"e_{k}" for k in params] if per_point else []
        gen = generate("emos" if per_point else "emos_global", ["mn", "sd", *field_params],
                       ["mu", "sigma"], stmts, consts.values)
        b.add(gen, "emos", mn=f"{tvar}_mean", sd=f"{tvar}_std", mu="mu", sigma="sigma",
              **{f: f"emos_{f[2:]}" for f in field_params})
        halo = 0
    elif isinstance(net, MLP):
        mods = list(net.net)
        pattern = [nn.Linear, nn.ReLU] * ((len(mods) - 1) // 2) + [nn.Linear]
        _check_layers(name, mods, pattern, "the MLP")
        b = builder(_predictor_variables(inputs, tvar), _static_location(inputs, lat, lon))
        h = b.predictors(inputs, norm["channel_mean"], norm["channel_std"])
        for layer_no, layer in enumerate(mods[:-1:2]):
            h = b.dense(f"dense_{layer_no}", layer, h, f"h{layer_no}")
        b.head(mods[-1], h, float(net.head.scale))
        halo = 0
    elif isinstance(net, LeNet):
        if net.patch != 9:
            raise ExportError(f"model {name!r}: LeNet patch {net.patch}; the exporter supports 9 x 9")
        feats, cls = list(net.features), list(net.classifier)
        _check_layers(name, feats, [nn.Conv2d, nn.ReLU, nn.MaxPool2d, nn.Conv2d, nn.ReLU], "LeNet.features")
        _check_layers(name, cls, [nn.Linear, nn.ReLU, nn.Linear], "LeNet.classifier")
        _check_conv(name, feats[0], "features[0]")
        _check_conv(name, feats[3], "features[3]")
        pool = feats[2]
        if pool.kernel_size not in (2, (2, 2)) or pool.stride not in (2, (2, 2)) or pool.padding not in (0, (0, 0)):
            raise ExportError(f"model {name!r}: {pool} is not supported; only MaxPool2d(2) is")
        b = builder(_predictor_variables(inputs, tvar), _static_location(inputs, lat, lon))
        x = b.predictors(inputs, norm["channel_mean"], norm["channel_std"])
        # conv1 at every point g of the padded field: patch position p <-> g = centre + p - 3
        c1 = b.conv("conv1", feats[0], x, "c1", taps=(-1, 0, 1))
        # 2x2 max pool at g covers conv1 at g + {0, 1}; pooled (u, v) sits at centre + 2u - 3
        p1 = b.maxpool(c1, "p1")
        c2 = b.conv("conv2", feats[3], p1, "c2", taps=(-3, -1, 1))
        h = b.dense("dense_0", cls[0], c2, "h0")
        b.head(cls[2], h, float(net.head.scale))
        halo = net.patch // 2
    elif isinstance(net, UNet):
        b = stacked_only(_predictor_variables(inputs, tvar), _static_location(inputs, lat, lon))
        export_unet(b, name, net, inputs, norm["channel_mean"], norm["channel_std"])
        halo = UNET_HALO
    elif isinstance(net, EnsembleTransformer):
        if stats != "members":
            raise ExportError(f"model {name!r}: the ensemble Transformer reads the members: use stats='members'")
        b = stacked_only([tvar], _static_location(inputs[len(inputs) - net.n_location:], lat, lon))
        export_transformer(b, name, net, inputs, norm["channel_mean"], norm["channel_std"])
        halo = 0
    else:
        raise ExportError(
            f"model {name!r} ({type(net).__name__}) cannot be exported to a stencil program: "
            f"supported models are {', '.join(SUPPORTED_MODELS)} (other architectures: run them "
            "with PyTorch, 'stratoflow ens10 evaluate')"
        )
    program = b.program()
    got_halo = max(program.required_halo().values(), default=0)
    if got_halo != halo:  # the analysis of the generated code must agree with the model's patch
        raise ExportError(f"model {name!r}: exported program needs halo {got_halo}, expected {halo}")
    log.info("exported %s/%s: %d stencil calls, halo %d", name, target, len(b.calls), halo)
    return ExportedModel(name, target, program, b.variables, members, stats, b.static, lat, lon,
                         halo, b.sources, layout, layout == "stacked" and isinstance(b, StackedBuilder) and b.loops,
                         decomposable=not isinstance(net, UNet))


def load_model(path: Path | str) -> tuple[nn.Module, dict]:
    """(PyTorch model in eval mode, checkpoint dict) of a ``stratoflow ens10 train`` checkpoint."""
    from ens10.train import load_checkpoint, model_from_checkpoint

    ckpt = load_checkpoint(path)
    if ckpt.get("model") not in SUPPORTED_MODELS:
        raise ExportError(
            f"checkpoint {path}: model {ckpt.get('model')!r} cannot be exported to a stencil "
            f"program; supported models are {', '.join(SUPPORTED_MODELS)}"
        )
    return model_from_checkpoint(ckpt), ckpt


def export_checkpoint(path: Path | str, members: int = schema.MEMBERS, stats: str = "members",
                      layout: str = "stacked", loops: bool = True) -> ExportedModel:
    """Export the checkpoint at ``path`` (see :func:`export_model`)."""
    net, ckpt = load_model(path)
    return export_model(net, ckpt, members=members, stats=stats, layout=layout, loops=loops)
