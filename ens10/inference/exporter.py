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
channel by :mod:`ens10.inference.unstacked`). Anything else (other layers, activations or
architectures) raises :class:`ExportError`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from torch import nn

from ens10 import schema
from ens10.baselines.data import LOCATION_INPUTS
from ens10.baselines.models import EMOS, MLP, EnsembleTransformer, LeNet, UNet
from ens10.grid import location_features
from ens10.inference.builders import FieldsBuilder, StackedBuilder, as_float64
from ens10.inference.codegen import Externals, generate
from ens10.inference.errors import ExportError
from ens10.inference.transformer_export import export_transformer
from ens10.inference.unet_export import HALO as UNET_HALO
from ens10.inference.unet_export import export_unet
from ens10.inference.unstacked import UnstackedBuilder
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

    def builder(variables: Sequence[str], static: Mapping[str, np.ndarray]) -> FieldsBuilder:
        if layout == "fields":
            return FieldsBuilder(pname, target, variables, members, stats, static)
        return StackedBuilder(pname, target, variables, members, stats, static, loops=loops)

    def stacked_only(variables: Sequence[str], static: Mapping[str, np.ndarray]) -> StackedBuilder:
        """Models written for the stacked layout only: in the fields layout their unrolled
        stages are rewritten to one field per channel (:mod:`ens10.inference.unstacked`)."""
        if layout == "fields":
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
        b = FieldsBuilder(pname, target, [tvar], members, stats, {})
        params = {k: as_float64(getattr(net, k)) for k in ("loc", "spread", "a", "b", "c", "d")}
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
                         halo, b.sources, layout, isinstance(b, StackedBuilder) and b.loops,
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
