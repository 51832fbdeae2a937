"""The U-Net baseline as a stacked stencil program, its coarse levels held "a trous".

:class:`ens10.baselines.models.UNet` pads the (H, W) field to H' x W' (multiples of 4) by
replicating the last row and column, runs two 3x3 convolutions (zero padding 1) per level at
three levels (full, 1/2, 1/4 resolution), max-pools between them, and goes back up with 2x2
stride-2 transposed convolutions whose outputs are concatenated with the skip connections.

On the stencil grid every level is evaluated at every fine point g; the level-L value of
coarse cell c lives at g = 2^L c (the other points hold values no later stage reads):

- ``MaxPool2d(2)`` at level L -> max over the offsets {0, 2^L}^2;
- ``Conv2d(3, padding=1)`` at level L -> a dilated 3x3 stencil with taps at {-2^L, 0, 2^L};
  the zero padding is the ``unet_inside`` mask (g in [0, H') x [0, W'), the same for every
  level because H', W' are multiples of 4) multiplied into every layer output;
- ``ConvTranspose2d(2, stride=2)`` from level L+1 to L -> at g of parity
  p = (g // 2^L) mod 2 (per axis) the term ``W[:, :, p]`` times the level-(L+1) value at
  g - 2^L p: four terms weighted by the parity indicators ``unet_par{L}_{i,j}``;
- ``torch.cat`` of a skip connection -> one more input part of the next convolution;
- the replicate padding -> two gathers (rows, then columns) with weights ``unet_rep_{i,j}{d}``
  = 1 where the point copies the value d rows (columns) before it (d = 0 inside the field).

The predictors are set to 0 outside the field (``unet_valid``) before that, so whatever the
halo holds (NaN too) never reaches the outputs. The masks are geometry fields of the program
(:class:`UNetGeometry`), computed from each run's domain, so one export runs on any grid
(the run's field must be the whole grid: a block of a decomposed field would get the zero
padding at its own edges). The accumulated halo is 26 = 3 (replicate) + 2 + 4 + 8 (the two
convolutions of each level on the way down) + 2 (``up2``) + 4 + 1 (``up1``) + 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import nn

from ens10.baselines.models import UNet
from ens10.inference.builders import as_float64
from ens10.inference.errors import ExportError
from ens10.inference.stacked import (
    StackedLayers,
    conv_part,
    gather_stage,
    maxpool_stage,
    select_stage,
    upsample_part,
    weighted_stage,
)
from stencils.storage import Domain

MULTIPLE = 4  # UNet.forward pads H and W to multiples of 4 (two poolings)
MAX_PAD = MULTIPLE - 1
INSIDE, VALID = "unet_inside", "unet_valid"
AXES = ("i", "j")
# accumulated halo: replicate padding + the reach of the convolutions, pools and upsamplings
HALO = MAX_PAD + 2 + 4 + 8 + 2 + 4 + 1 + 2


def rep_field(axis: str, d: int) -> str:
    return f"unet_rep_{axis}{d}"


def par_field(level: int, axis: str) -> str:
    return f"unet_par{level}_{axis}"


@dataclass(frozen=True)
class UNetGeometry:
    """The U-Net's static fields for a run's domain (interior H x W plus halo): ``unet_valid``
    (the field), ``unet_inside`` (the padded field H' x W'), the replicate-padding weights and
    the parity indicators of levels 0 and 1."""

    levels: int = 2

    @property
    def fields(self) -> tuple[str, ...]:
        reps = [rep_field(a, d) for a in AXES for d in range(MAX_PAD + 1)]
        pars = [par_field(level, a) for level in range(self.levels) for a in AXES]
        return (VALID, INSIDE, *reps, *pars)

    def __call__(self, domain: Domain) -> dict[str, np.ndarray]:
        h = domain.halo
        factors = {a: self._axis(a, np.arange(n + 2 * h) - h, n) for a, n in zip(AXES, (domain.nx, domain.ny))}
        return {name: np.outer(factors["i"].get(name, 1.0) * np.ones(domain.nx + 2 * h),
                               factors["j"].get(name, 1.0) * np.ones(domain.ny + 2 * h))
                for name in self.fields}

    def _axis(self, axis: str, g: np.ndarray, n: int) -> dict[str, np.ndarray]:
        """1-D factors along ``axis`` (``g``: indices relative to the interior, ``n``: its
        size); fields missing here do not vary along it."""
        npad = n + (-n) % MULTIPLE
        inside = (g >= 0) & (g < npad)
        shift = g - np.minimum(g, n - 1)  # rows (columns) n .. npad-1 copy row (column) n-1
        out = {VALID: (g >= 0) & (g < n), INSIDE: inside}
        out.update({rep_field(axis, d): inside & (shift == d) for d in range(MAX_PAD + 1)})
        out.update({par_field(level, axis): (g // 2**level) % 2 == 1 for level in range(self.levels)})
        return {k: v.astype(np.float64) for k, v in out.items()}



def _check(model: str, net: UNet) -> None:
    """The exporter handles exactly the layer shapes of :class:`UNet`."""
    convs = [(f"{blk}[{k}]", getattr(net, blk)[k]) for blk in ("enc1", "enc2", "mid", "dec2", "dec1") for k in (0, 2)]
    for label, conv in convs:
        if not (isinstance(conv, nn.Conv2d) and conv.kernel_size == (3, 3) and conv.padding == (1, 1)
                and conv.stride == (1, 1) and conv.dilation == (1, 1) and conv.groups == 1
                and conv.bias is not None and conv.padding_mode == "zeros"):
            raise ExportError(f"model {model!r}: {label} is {conv}; the U-Net exporter supports "
                              "Conv2d(kernel_size=3, padding=1, stride=1, bias=True) only")
    for label in ("up2", "up1"):
        up = getattr(net, label)
        if not (up.kernel_size == (2, 2) and up.stride == (2, 2) and up.padding == (0, 0)
                and up.output_padding == (0, 0) and up.groups == 1 and up.bias is not None):
            raise ExportError(f"model {model!r}: {label} is {up}; only ConvTranspose2d(2, stride=2) is supported")
    if net.out.kernel_size != (1, 1) or net.out.out_channels != 2:
        raise ExportError(f"model {model!r}: out is {net.out}; the Gaussian head needs Conv2d(width, 2, 1)")


def export_unet(b: StackedLayers, model: str, net: UNet, inputs: Sequence[str],
                cmean: Sequence[float], cstd: Sequence[float]) -> None:
    """Add the U-Net's stages to the stacked builder ``b`` (after its ensemble statistics)."""
    _check(model, net)
    geo = UNetGeometry()
    b.geometry, b.geometry_fields = geo, geo.fields
    loops = b.loops
    x = b.predictors(inputs, cmean, cstd)
    n = b.data_dims[x][0]
    xs = b.stacked("x_valid", n)
    b.stage(select_stage("valid", x, xs, n, loops, VALID))
    for axis, offset in (("i", lambda d: (-d, 0)), ("j", lambda d: (0, -d))):
        xr = b.stacked(f"x_rep_{axis}", n)
        taps = [(rep_field(axis, d), offset(d)) for d in range(MAX_PAD + 1)]
        b.stage(gather_stage(f"replicate_{axis}", xs, xr, n, loops, taps))
        xs = xr

    # layer outputs are fields "{label}_y": a field named as its own stencil breaks the gt:* bindings
    def conv(label: str, parts: Sequence[str], conv: nn.Conv2d, level: int) -> str:
        w, bias = as_float64(conv.weight), as_float64(conv.bias)
        taps = (-(2**level), 0, 2**level)
        y = b.stacked(f"{label}_y", w.shape[0])
        split = np.cumsum([0, *(b.data_dims[p][0] for p in parts)])
        tables = {f"w{k}": w[:, split[k]:split[k + 1]] for k in range(len(parts))}
        ps = [conv_part(p, f"{label}_w{k}", w.shape[0], b.data_dims[p][0], taps) for k, p in enumerate(parts)]
        b.stage(weighted_stage(label, ps, y, w.shape[0], loops, mask=INSIDE, offset_reads=tuple(parts)),
                b=bias, **tables)
        return y

    def block(label: str, parts: Sequence[str], blk: nn.Sequential, level: int) -> str:
        return conv(label, [conv(f"{label}a", parts, blk[0], level)], blk[2], level)

    def pool(label: str, src: str, level: int) -> str:
        c = b.data_dims[src][0]
        y = b.stacked(f"{label}_y", c)
        b.stage(maxpool_stage(label, src, y, c, loops, step=2**level, mask=INSIDE))
        return y

    def up(label: str, src: str, layer: nn.ConvTranspose2d, level: int) -> str:
        w, bias = as_float64(layer.weight), as_float64(layer.bias)  # (in, out, 2, 2)
        y = b.stacked(f"{label}_y", w.shape[1])
        pi, pj = par_field(level, "i"), par_field(level, "j")
        q = [[f"{label}_q{a}{bb}" for bb in (0, 1)] for a in (0, 1)]
        factor = {0: "(1.0 - {p})", 1: "{p}"}
        prologue = [(q[a][bb], f"{factor[a].format(p=pi)} * {factor[bb].format(p=pj)}") for a in (0, 1) for bb in (0, 1)]
        part = upsample_part(src, f"{label}_w", w.shape[1], w.shape[0], 2**level, q)
        b.stage(weighted_stage(label, [part], y, w.shape[1], loops, relu=False, mask=INSIDE, prologue=prologue,
                               reads=(pi, pj), offset_reads=(src,)), w=w, b=bias)
        return y

    e1 = block("enc1", [xs], net.enc1, 0)
    e2 = block("enc2", [pool("pool0", e1, 0)], net.enc2, 1)
    m = block("mid", [pool("pool1", e2, 1)], net.mid, 2)
    d2 = block("dec2", [up("up2", m, net.up2, 1), e2], net.dec2, 1)
    d1 = block("dec1", [up("up1", d2, net.up1, 0), e1], net.dec1, 0)
    b.head_arrays(as_float64(net.out.weight)[:, :, 0, 0], as_float64(net.out.bias), d1, float(net.head.scale))
