"""The ensemble Transformer baseline as a stacked stencil program: attention across the members
at each grid point.

Everything in :class:`ens10.baselines.models.EnsembleTransformer` is pointwise in space, so the
whole network after the ensemble statistics is one fused stencil whose fields carry the
per-point arrays as data dimensions (M members, d model width, h heads of width d/h):

``tokens``     ``tok[m, :] = [(x_m - loc) / s, (x_m - mean) / (std + 1e-3 s), location]`` and
               the raw members ``xm[m]`` (location: the standardised location predictors)
``embed``      ``e[m, :] = Linear(tok[m, :])``
``layer{l}``   one ``TransformerEncoderLayer`` (post-norm, ReLU, as PyTorch's default):
               ``qkv[m, 0..2, head, t]`` = in-projection; ``p[head, m, m']`` = softmax over m'
               of q.k / sqrt(d/h) (the row maximum subtracted first, as PyTorch does);
               ``att[m, head, t] = sum_m' p v``; ``x = LayerNorm(e + out_proj(att))``;
               ``e = LayerNorm(x + W2 ReLU(W1 x))``
``output``     ``c[m] = x_m + s member_out(e[m])``; ``mu = mean_m c``,
               ``sigma = (std_m c + 1e-3 s) softplus(spread_out(mean_m e[m]) + log(e - 1))``

Weights are ``GlobalTable`` parameters (in-projection reshaped to (3, h, d/h, d), out-projection
to (d, h, d/h)); with ``loops`` every sum is a GTScript ``while`` loop, else unrolled with
constant indices (numpy backend: keep d and M small, the unrolled source grows as M^2 d + M d^2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ens10.baselines.data import LOCATION_INPUTS
from ens10.baselines.models import SOFTPLUS_ONE, EnsembleTransformer
from ens10.inference.builders import as_float64
from ens10.inference.codegen import tree_sum
from ens10.inference.errors import ExportError
from ens10.inference.stacked import (
    SOFTPLUS_THRESHOLD,
    Index,
    StackedLayers,
    Stage,
    ref,
    stack_type,
    table_type,
    while_loop,
)

Ranges = Sequence[tuple[str, int]]



def for_all(ranges: Ranges, body: Callable[..., list[str]], loops: bool) -> list[str]:
    """``body(*indices)`` for every index combination of ``ranges`` ((counter, bound), outer
    first): nested ``while`` loops over the counters, or unrolled with constant indices."""
    if loops:
        lines = body(*(v for v, _ in ranges))
        for var, n in reversed(ranges):
            lines = while_loop(var, n, lines)
        return lines
    return [line for idx in itertools.product(*(range(n) for _, n in ranges)) for line in body(*idx)]


def reduce_sum(target: str, init: str, ranges: Ranges, term: Callable[..., str], loops: bool,
               post: Callable[[str], str] = lambda acc: acc) -> list[str]:
    """``target = post(init + sum over ranges of term(*indices))`` (loops accumulate in ``acc``)."""
    if loops:
        return ["acc = " + init, *for_all(ranges, lambda *i: [f"acc = acc + {term(*i)}"], True),
                f"{target} = {post('acc')}"]
    terms = [term(*idx) for idx in itertools.product(*(range(n) for _, n in ranges))]
    return [f"{target} = {post(tree_sum([init, *terms]))}"]


class _Stages:
    """Accumulates the statements of the fused Transformer stencil."""

    def __init__(self, b: StackedLayers, members: int) -> None:
        self.b, self.m, self.loops = b, members, b.loops

    def field(self, name: str, shape: Sequence[int]) -> str:
        self.b.data_dims[name] = tuple(shape)
        return self.b.temps([name])[0]

    def add(self, label: str, body: list[str], reads: Sequence[str], writes: Sequence[str],
            shapes: dict[str, Sequence[int]], **tables: np.ndarray) -> None:
        types = {f: stack_type(s) for f, s in shapes.items()}
        types.update({f"{label}_{k}": table_type(np.shape(v)) for k, v in tables.items()})
        self.b.stage(Stage(label, list(body), (*reads, *(f"{label}_{k}" for k in tables)), tuple(writes), types),
                     **tables)

    def linear(self, label: str, x: str, y: str, w: np.ndarray, bias: np.ndarray, relu: bool = False) -> None:
        """``y[m, o...] = act(b[o...] + sum_i w[o..., i...] x[m, i...])``: a Linear over the
        trailing data dimensions of ``x`` (``w``: outputs first, then ``x``'s channel shape)."""
        in_shape, out_shape = self.b.data_dims[x][1:], bias.shape
        outs = [(f"r{k}", n) for k, n in enumerate(out_shape)]
        ins = [(f"n{k}", n) for k, n in enumerate(in_shape)]
        act = (lambda a: f"max({a}, 0.0)") if relu else (lambda a: a)

        def body(m: Index, *o: Index) -> list[str]:
            return reduce_sum(ref(y, (m, *o)), f"{label}_b.A[{', '.join(map(str, o))}]", ins,
                              lambda *i: f"{label}_w.A[{', '.join(map(str, (*o, *i)))}] * {ref(x, (m, *i))}",
                              self.loops, act)

        self.add(label, for_all([("m", self.m), *outs], body, self.loops), [x], [y],
                 {x: self.b.data_dims[x], y: self.b.data_dims[y]}, w=w, b=bias)

    def output(self, h: str, xm: str, net: EnsembleTransformer, scale: float) -> None:
        """Corrected members, their mean and spread, the pooled spread factor: ``mu``, ``sigma``."""
        m, d, lp = self.m, self.b.data_dims[h][-1], self.loops
        c = self.field("corrected", (m,))
        body = for_all([("m", m)], lambda k: reduce_sum(
            ref(c, k), "output_bm.A[0]", [("n", d)], lambda n: f"output_wm.A[{n}] * {ref(h, (k, n))}", lp,
            lambda a: f"{ref(xm, k)} + output_sc.A[0] * ({a})"), lp)
        body += reduce_sum("mu", "0.0", [("m", m)], lambda k: ref(c, k), lp, lambda a: f"{a} / {float(m)!r}")
        body += reduce_sum("var", "0.0", [("m", m)], lambda k: f"({ref(c, k)} - mu) * ({ref(c, k)} - mu)", lp,
                           lambda a: f"{a} / {float(m)!r}")
        body.append("so = output_bs.A[0]")
        body += for_all([("n", d)], lambda n: [
            *reduce_sum("pool", "0.0", [("m", m)], lambda k: ref(h, (k, n)), lp, lambda a: f"{a} / {float(m)!r}"),
            f"so = so + output_ws.A[{n}] * pool"], lp)
        body += [
            "spread = sqrt(var) + output_sc.A[1]",
            f"y = so + {SOFTPLUS_ONE!r}",
            f"sp = y if y > {SOFTPLUS_THRESHOLD!r} else log(1.0 + exp(y))",
            "sigma = spread * sp",
        ]
        self.add("output", body, [h, xm], ["mu", "sigma", c], {h: (m, d), xm: (m,), c: (m,)},
                 wm=as_float64(net.member_out.weight)[0], bm=as_float64(net.member_out.bias),
                 ws=as_float64(net.spread_out.weight)[0], bs=as_float64(net.spread_out.bias), sc=np.array([scale, 1e-3 * scale]))

    def add_norm(self, label: str, a: str, r: str, y: str, norm: nn.LayerNorm) -> None:
        """``y[m, :] = LayerNorm(a[m, :] + r[m, :])`` (biased variance, ``norm.eps``)."""
        d = self.b.data_dims[a][-1]
        s = f"{label}_sum"

        def body(m: Index) -> list[str]:
            lines = for_all([("n", d)], lambda n: [f"{ref(s, (m, n))} = {ref(a, (m, n))} + {ref(r, (m, n))}"], self.loops)
            lines += reduce_sum("mean", "0.0", [("n", d)], lambda n: ref(s, (m, n)), self.loops, lambda t: f"{t} / {float(d)!r}")
            lines += reduce_sum("var", "0.0", [("n", d)], lambda n: f"({ref(s, (m, n))} - mean) * ({ref(s, (m, n))} - mean)",
                                self.loops, lambda t: f"{t} / {float(d)!r}")
            lines.append(f"rstd = 1.0 / sqrt(var + {float(norm.eps)!r})")
            lines += for_all([("n", d)], lambda n: [
                f"{ref(y, (m, n))} = ({ref(s, (m, n))} - mean) * rstd * {label}_g.A[{n}] + {label}_beta.A[{n}]"],
                self.loops)
            return lines

        self.field(s, (self.m, d))
        self.add(label, for_all([("m", self.m)], body, self.loops), [a, r], [y, s],
                 {a: (self.m, d), r: (self.m, d), y: (self.m, d), s: (self.m, d)},
                 g=as_float64(norm.weight), beta=as_float64(norm.bias))

    def attention(self, label: str, qkv: str, p: str, att: str, heads: int, dh: int) -> None:
        """Per head and query m: scores q.k / sqrt(dh) over the keys, softmax (max first), and
        ``att[m, head, t] = sum_m' p[head, m, m'] v[m', head, t]``."""
        m_, lp = self.m, self.loops
        scale = 1.0 / math.sqrt(dh)

        def scores(hd: Index, m: Index) -> list[str]:
            pr = lambda k: ref(p, (hd, m, k))  # noqa: E731
            lines = for_all([("k", m_)], lambda k: reduce_sum(
                pr(k), "0.0", [("t", dh)], lambda t: f"{ref(qkv, (m, 0, hd, t))} * {ref(qkv, (k, 1, hd, t))}", lp,
                lambda a: f"{a} * {scale!r}"), lp)
            lines.append(f"mx = {pr(0)}")
            lines += for_all([("k", m_)], lambda k: [f"mx = max(mx, {pr(k)})"], lp)
            lines += for_all([("k", m_)], lambda k: [f"{pr(k)} = exp({pr(k)} - mx)"], lp)
            lines += reduce_sum("den", "0.0", [("k", m_)], pr, lp)
            lines += for_all([("k", m_)], lambda k: [f"{pr(k)} = {pr(k)} / den"], lp)
            lines += for_all([("t", dh)], lambda t: reduce_sum(
                ref(att, (m, hd, t)), "0.0", [("k", m_)], lambda k: f"{pr(k)} * {ref(qkv, (k, 2, hd, t))}", lp), lp)
            return lines

        self.add(label, for_all([("hd", heads), ("m", m_)], scores, lp), [qkv], [p, att],
                 {qkv: (m_, 3, heads, dh), p: (heads, m_, m_), att: (m_, heads, dh)})


def _check(model: str, net: EnsembleTransformer) -> None:
    for k, layer in enumerate(net.encoder.layers):
        attn = layer.self_attn
        ok = (not layer.norm_first and layer.activation is torch.nn.functional.relu and attn.batch_first
              and attn._qkv_same_embed_dim and attn.bias_k is None and not attn.add_zero_attn
              and attn.in_proj_bias is not None and layer.linear1.bias is not None)
        if not ok:
            raise ExportError(
                f"model {model!r}: encoder layer {k} is not a post-norm ReLU TransformerEncoderLayer with "
                "batch_first, biases and one embedding width; the exporter supports only that")
    if net.encoder.norm is not None:
        raise ExportError(f"model {model!r}: a final encoder norm is not supported")


def export_transformer(b: StackedLayers, model: str, net: EnsembleTransformer, inputs: Sequence[str],
                       cmean: Sequence[float], cstd: Sequence[float]) -> None:
    """Add the Transformer's fused stage to the stacked builder ``b`` (after the statistics of
    the target's members)."""
    _check(model, net)
    nl = net.n_location
    loc_names = list(inputs[-nl:]) if nl else []
    if any(n not in LOCATION_INPUTS for n in loc_names):
        raise ExportError(f"model {model!r}: the last {nl} predictors {loc_names} are not location features")
    m, tv = b.members, b.tvar
    d = net.embed.out_features
    heads = net.encoder.layers[0].self_attn.num_heads
    dh = d // heads
    scale, loc = float(net.scale), float(net.loc)
    st = _Stages(b, m)
    tok, xm = st.field("tok", (m, 2 + nl)), st.field("xm", (m,))
    members = [f"{tv}_m{k}" for k in range(m)]
    body = [f"sd = {tv}_std + tokens_c.A[2]"]
    body += [f"lz{c} = ({name} - tokens_cm.A[{c}]) / tokens_cs.A[{c}]" for c, name in enumerate(loc_names)]
    for k, mem in enumerate(members):
        body += [f"{ref(xm, k)} = {mem}", f"{ref(tok, (k, 0))} = ({mem} - tokens_c.A[0]) / tokens_c.A[1]",
                 f"{ref(tok, (k, 1))} = ({mem} - {tv}_mean) / sd"]
        body += [f"{ref(tok, (k, 2 + c))} = lz{c}" for c in range(nl)]
    c0 = len(inputs) - nl
    st.add("tokens", body, [*members, f"{tv}_mean", f"{tv}_std", *loc_names], [tok, xm],
           {tok: (m, 2 + nl), xm: (m,)}, c=np.array([loc, scale, 1e-3 * scale]),
           cm=np.asarray(cmean[c0:], np.float64), cs=np.asarray(cstd[c0:], np.float64))
    h = st.field("emb", (m, d))
    st.linear("embed", tok, h, as_float64(net.embed.weight), as_float64(net.embed.bias))
    for k, layer in enumerate(net.encoder.layers):
        pre = f"layer{k}"
        attn = layer.self_attn
        qkv = st.field(f"{pre}_qkv", (m, 3, heads, dh))
        st.linear(f"{pre}_inproj", h, qkv, as_float64(attn.in_proj_weight).reshape(3, heads, dh, d),
                  as_float64(attn.in_proj_bias).reshape(3, heads, dh))
        p, att = st.field(f"{pre}_p", (heads, m, m)), st.field(f"{pre}_att", (m, heads, dh))
        st.attention(f"{pre}_attention", qkv, p, att, heads, dh)
        o = st.field(f"{pre}_o", (m, d))
        st.linear(f"{pre}_outproj", att, o, as_float64(attn.out_proj.weight).reshape(d, heads, dh), as_float64(attn.out_proj.bias))
        x1 = st.field(f"{pre}_x1", (m, d))
        st.add_norm(f"{pre}_norm1", h, o, x1, layer.norm1)
        f1 = st.field(f"{pre}_ff1", (m, layer.linear1.out_features))
        st.linear(f"{pre}_linear1", x1, f1, as_float64(layer.linear1.weight), as_float64(layer.linear1.bias), relu=True)
        f2 = st.field(f"{pre}_ff2", (m, d))
        st.linear(f"{pre}_linear2", f1, f2, as_float64(layer.linear2.weight), as_float64(layer.linear2.bias))
        h = st.field(f"{pre}_out", (m, d))
        st.add_norm(f"{pre}_norm2", x1, f2, h, layer.norm2)
    st.output(h, xm, net, scale)
    b.flush()
