"""The ``stacked`` layout: channels as data dimensions, weights as ``GlobalTable`` parameters.

The ``fields`` layout (one program field per channel, weights as externals, every layer
unrolled term by term) makes the generated code grow with the layer size: LeNet's
convolutions are ~7000 terms over ~50 field parameters, and GT4Py's passes cost (IR size) x
(number of fields), so building the default MLP took minutes even on the numpy backend. Here a
layer is one stencil over three or four parameters whatever its width:

``x: Field[(np.float64, (C,))]``   the C input channels at each point (a data dimension)
``w: GlobalTable[(np.float64, (N, C))]``, ``b: GlobalTable[(np.float64, (N,))]``  the weights
``y: Field[(np.float64, (N,))]``   the N output channels

With ``loops=True`` the layer is two nested GTScript ``while`` loops over output and input
channels (3x3 taps unrolled inside): the source has a fixed size and depends only on the
layer shape, so every checkpoint of one architecture shares one build per backend. The numpy
backend cannot index a data dimension with a per-point loop counter ("Data indices must be
scalars"), so for it ``loops=False`` unrolls the channels with constant indices (still few
parameters, so still quick to build).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ens10.inference.codegen import GeneratedStencil, generate, tree_sum
from stencils.program import StencilProgram
from stencils.storage import Domain, from_numpy

SOFTPLUS_THRESHOLD = 20.0  # torch.nn.functional.softplus: x above it is returned unchanged
Taps = tuple[int, int, int]
MAX_LABEL = 64
# GT4Py's debug backend drops the parentheses around a ternary inside a larger expression
# (``a * (b if c else d)`` runs as ``a * b if c else d``): ternaries are always assigned to a
# temporary of their own.
SEA_MASK = ("sea", "1.0 if isfinite(sst_mean) else 0.0")


def stack_type(n: int | Sequence[int]) -> str:
    """Annotation of a field with ``n`` channels (or a channel array of shape ``n``: data
    dimensions) at every point."""
    shape = (n,) if isinstance(n, int) else tuple(n)
    return f"Field[(np.float64, ({', '.join(str(s) for s in shape)},))]"


def table_type(shape: Sequence[int]) -> str:
    """Annotation of a weight table (no spatial dimension)."""
    return f"GlobalTable[(np.float64, ({', '.join(str(s) for s in shape)},))]"


def loops_supported(backend: str) -> bool:
    """True if ``backend`` can index data dimensions with loop counters (all but numpy)."""
    return backend != "numpy"


Geometry = Callable[[Domain], Mapping[str, np.ndarray]]


class TableProgram(StencilProgram):
    """A :class:`~stencils.program.StencilProgram` whose fields may carry data dimensions
    (``data_dims``: field -> channel shape) and whose weights are ``GlobalTable`` parameters
    (``tables``: name -> array, owned by the program, declared as inputs so calls can bind
    them). ``geometry`` (optional) computes the program's static (i, j) fields from the domain
    of a run (interior size and halo), e.g. masks of the model's zero padding; its fields
    (``geometry_fields``) are inputs too. :meth:`run` takes only the spatial inputs; tables and
    geometry come from the program."""

    def __init__(
        self,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        temporaries: Sequence[str] = (),
        data_dims: Mapping[str, tuple[int, ...]] | None = None,
        tables: Mapping[str, np.ndarray] | None = None,
        geometry: Geometry | None = None,
        geometry_fields: Sequence[str] = (),
    ) -> None:
        self.tables = {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in (tables or {}).items()}
        self.data_dims = {k: tuple(v) for k, v in (data_dims or {}).items()}
        self.geometry = geometry
        self.geometry_fields = tuple(geometry_fields)
        super().__init__(name, inputs=[*inputs, *self.tables, *self.geometry_fields], outputs=outputs,
                         temporaries=temporaries)

    @property
    def field_inputs(self) -> tuple[str, ...]:
        """Inputs that are spatial fields given to :meth:`run` (not tables, not geometry)."""
        own = set(self.tables) | set(self.geometry_fields)
        return tuple(f for f in self.inputs if f not in own)

    def required_halo(self) -> dict[str, int]:
        own = set(self.tables) | set(self.geometry_fields)
        return {f: h for f, h in super().required_halo().items() if f not in own}

    def _allocate(
        self, inputs: Mapping[str, np.ndarray], shape: tuple[int, ...], domain: Domain, backend: str
    ) -> dict[str, Any]:
        """As :meth:`StencilProgram._allocate`; temporaries and outputs get their data
        dimensions, the tables are passed from the program and the geometry fields computed
        for ``domain``."""
        storages: dict[str, Any] = {
            f: from_numpy(np.asarray(inputs[f], dtype=np.float64), backend, domain.origin)
            for f in self.field_inputs
        }
        storages.update({t: _table_storage(a, backend) for t, a in self.tables.items()})
        if self.geometry_fields:
            geo = self.geometry(domain)
            storages.update({g: from_numpy(np.asarray(geo[g], np.float64).reshape(shape), backend, domain.origin)
                             for g in self.geometry_fields})
        for f in self.temporaries + self.outputs:
            dd = self.data_dims.get(f, ())
            storages[f] = from_numpy(np.zeros(shape + dd), backend, domain.origin + (0,) * len(dd))
        return storages


Body = list[tuple[str, str] | str]


@dataclass(frozen=True)
class Stage:
    """The statements of one layer over named parameters (program fields and weight tables:
    the names are the program's, so stages fuse into one stencil without renaming).

    ``types``: annotation of every non-plain parameter; ``reads``/``writes``: the parameters
    read and written; ``offset_reads``: fields read at a horizontal offset, which GT4Py does not
    allow in the same stencil as their producer (a new stencil starts there)."""

    label: str
    body: Body
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    types: Mapping[str, str] = field(default_factory=dict)
    offset_reads: tuple[str, ...] = ()


class StackedLayers(Protocol):
    """What the model-specific exporters (U-Net, Transformer) need of the stacked builder
    (:class:`ens10.inference.builders.StackedBuilder`)."""

    loops: bool
    members: int
    tvar: str
    data_dims: dict[str, tuple[int, ...]]
    geometry: Geometry | None
    geometry_fields: tuple[str, ...]

    def stage(self, st: Stage, **tables: Any) -> None: ...
    def flush(self) -> None: ...
    def stacked(self, name: str, channels: int) -> str: ...
    def temps(self, names: Sequence[str]) -> list[str]: ...
    def predictors(self, names: Sequence[str], cmean: Sequence[float], cstd: Sequence[float]) -> str: ...
    def head_arrays(self, w: np.ndarray, b: np.ndarray, inputs: str, scale: float) -> None: ...


def fused_label(stages: Sequence[Stage]) -> str:
    """The labels of ``stages`` joined by ``__``, or first ``__to__`` last when that is long
    (the label names the stencil's build folder and module)."""
    label = "__".join(st.label for st in stages)
    return label if len(label) <= MAX_LABEL else f"{stages[0].label}__to__{stages[-1].label}"


def fuse(stages: Sequence[Stage]) -> tuple[str, GeneratedStencil]:
    """One stencil running ``stages`` in order: (:func:`fused_label`, generated stencil). Its
    parameters are the fields and tables the stages read and write, named as in the program."""
    label = fused_label(stages)
    writes = [w for st in stages for w in st.writes]
    reads = [r for st in stages for r in st.reads if r not in writes]
    inputs = list(dict.fromkeys(reads))
    outputs = list(dict.fromkeys(writes))
    types = {k: v for st in stages for k, v in st.types.items()}
    body = [line for st in stages for line in st.body]
    return label, generate(label, inputs, outputs, body, types=types)


def _table_storage(array: np.ndarray, backend: str) -> Any:
    """A weight table laid out for ``backend`` as a GlobalTable (data dimensions only)."""
    import gt4py.storage as gt_storage

    return gt_storage.from_array(array, array.dtype, backend=backend, aligned_index=(0,) * array.ndim,
                                 dimensions=[str(d) for d in range(array.ndim)])


Index = str | int


def ref(name: str, index: Index | Sequence[Index], offset: tuple[int, int] = (0, 0)) -> str:
    """Channel ``index`` (one data index or a tuple of them) of stacked field ``name`` at ``offset``."""
    idx = ", ".join(str(i) for i in index) if isinstance(index, (tuple, list)) else index
    return f"{name}[{offset[0]}, {offset[1]}, 0][{idx}]"


def while_loop(var: str, bound: int, body: Sequence[str]) -> list[str]:
    """GTScript lines of ``for var in range(bound): body`` (a ``while`` loop)."""
    return [f"{var} = 0", f"while {var} < {bound}:", *(f"    {line}" for line in body), f"    {var} = {var} + 1"]


Window = Callable[[str | int, str | int], list[str]]


@dataclass(frozen=True)
class Part:
    """One stacked input of a weighted layer: field ``x`` with ``n_in`` channels, weight table
    ``w`` of ``w_shape`` and the terms ``window(o, c)`` of input channel ``c`` for output ``o``."""

    x: str
    n_in: int
    w: str
    w_shape: tuple[int, ...]
    window: Window


def _activate(acc: str, relu: bool, mask: str | None) -> str:
    value = f"max({acc}, 0.0)" if relu else acc
    return f"{mask} * {value}" if mask else value


def weighted_stage(
    label: str, parts: Sequence[Part], y: str, n_out: int, loops: bool, relu: bool = True,
    mask: str | None = None, prologue: Body = (), reads: Sequence[str] = (),
    offset_reads: tuple[str, ...] = (),
) -> Stage:
    """``y[o] = mask * act(b[o] + sum_parts sum_c sum(window(o, c)))`` over stacked channels
    (bias table ``{label}_b``; ``act``: ReLU or identity; ``mask``: a 0/1 field or none).
    ``prologue``: statements before the layer (per-point weights the windows use), reading the
    fields ``reads``. Dense layers, convolutions and transposed convolutions are this stage."""
    b = f"{label}_b"
    types = {b: table_type((n_out,)), y: stack_type(n_out)}
    for p in parts:
        types.update({p.x: stack_type(p.n_in), p.w: table_type(p.w_shape)})
    if loops:
        inner = [line for p in parts for line in while_loop("c", p.n_in, [f"acc = acc + {tree_sum(p.window('o', 'c'))}"])]
        body: Body = [*prologue, *while_loop("o", n_out, [f"acc = {b}.A[o]", *inner, f"{ref(y, 'o')} = {_activate('acc', relu, mask)}"])]
    else:
        body = [*prologue, *((ref(y, o), _activate(tree_sum(
            [f"{b}.A[{o}]", *(t for p in parts for c in range(p.n_in) for t in p.window(o, c))]), relu, mask))
            for o in range(n_out))]
    field_reads = (*(p.x for p in parts), *reads, *((mask,) if mask else ()))
    return Stage(label, body, (*field_reads, *(p.w for p in parts), b), (y,), types, offset_reads=offset_reads)


def dense_part(x: str, w: str, n_out: int, n_in: int) -> Part:
    """``w[n, c] x[c]`` at the centre (a Linear layer)."""
    return Part(x, n_in, w, (n_out, n_in), lambda o, c: [f"{w}.A[{o}, {c}] * {ref(x, c)}"])


def conv_part(x: str, w: str, n_out: int, n_in: int, taps: Taps) -> Part:
    """3x3 convolution taps ``w[o, c, a, b] x[c]`` at (taps[a], taps[b])."""

    def window(o: str | int, c: str | int) -> list[str]:
        return [f"{w}.A[{o}, {c}, {a}, {bb}] * {ref(x, c, (da, db))}"
                for a, da in enumerate(taps) for bb, db in enumerate(taps)]

    return Part(x, n_in, w, (n_out, n_in, 3, 3), window)


def dense_stage(label: str, x: str, y: str, n_out: int, n_in: int, loops: bool, relu: bool = True) -> Stage:
    """``y[n] = max(b[n] + sum_c w[n, c] x[c], 0)`` over stacked channels (tables
    ``{label}_w``, ``{label}_b``; ``relu=False``: no ReLU)."""
    return weighted_stage(label, [dense_part(x, f"{label}_w", n_out, n_in)], y, n_out, loops, relu)


def conv_stage(label: str, x: str, y: str, n_out: int, n_in: int, taps: Taps, loops: bool,
               mask: str | None = None) -> Stage:
    """3x3 convolution + ReLU over stacked channels: ``y[o] = max(b[o] + sum_{c,a,b}
    w[o, c, a, b] x[c] at (taps[a], taps[b]), 0)`` (``taps`` are the lat/lon offsets), times
    ``mask`` if given."""
    return weighted_stage(label, [conv_part(x, f"{label}_w", n_out, n_in, taps)], y, n_out, loops,
                          mask=mask, offset_reads=(x,))


def upsample_part(x: str, w: str, n_out: int, n_in: int, step: int, weights: Sequence[Sequence[str]]) -> Part:
    """Transposed 2x2 convolution of stride 2 from level spacing ``2 step`` to ``step``: the
    output takes ``w[c, o, a, b] x[c]`` at (-a step, -b step) where its parity is (a, b);
    ``weights[a][b]`` is the per-point 0/1 indicator of that parity."""

    def window(o: str | int, c: str | int) -> list[str]:
        return [f"{weights[a][bb]} * {w}.A[{c}, {o}, {a}, {bb}] * {ref(x, c, (-a * step, -bb * step))}"
                for a in (0, 1) for bb in (0, 1)]

    return Part(x, n_in, w, (n_in, n_out, 2, 2), window)


def channelwise_stage(label: str, x: str, y: str, n: int, loops: bool, value: Callable[[str | int], str],
                      reads: Sequence[str] = (), offset: bool = False) -> Stage:
    """``y[c] = value(c)`` for every channel ``c`` of ``x`` (pools, shifts, selections);
    ``reads``: other fields ``value`` uses; ``offset``: ``value`` reads ``x`` at an offset."""
    body: Body = while_loop("c", n, [f"{ref(y, 'c')} = {value('c')}"]) if loops else [(ref(y, c), value(c)) for c in range(n)]
    return Stage(label, body, (x, *reads), (y,), {x: stack_type(n), y: stack_type(n)},
                 offset_reads=(x,) if offset else ())


def maxpool_stage(label: str, x: str, y: str, n: int, loops: bool, step: int = 1, mask: str | None = None) -> Stage:
    """2x2 max pool of every channel, evaluated at every point (taps 0, ``step``), times ``mask``."""

    def pool(c: str | int) -> str:
        value = (f"max(max({ref(x, c)}, {ref(x, c, (step, 0))}), "
                 f"max({ref(x, c, (0, step))}, {ref(x, c, (step, step))}))")
        return f"{mask} * {value}" if mask else value

    return channelwise_stage(label, x, y, n, loops, pool, (mask,) if mask else (), offset=True)


def gather_stage(label: str, x: str, y: str, n: int, loops: bool, taps: Sequence[tuple[str, tuple[int, int]]]) -> Stage:
    """``y[c] = sum_k weight_k x[c] at offset_k`` for ``taps`` (weight field, offset): copies
    with per-point 0/1 weights, e.g. a replicate padding."""

    def value(c: str | int) -> str:
        return tree_sum([f"{wf} * {ref(x, c, off)}" for wf, off in taps])

    return channelwise_stage(label, x, y, n, loops, value, [wf for wf, _ in taps], offset=True)


def select_stage(label: str, x: str, y: str, n: int, loops: bool, valid: str) -> Stage:
    """``y[c] = x[c]`` where the 0/1 field ``valid`` is 1, else 0 (whatever ``x`` holds there, NaN too)."""
    return channelwise_stage(label, x, y, n, loops, lambda c: f"{ref(x, c)} if {valid} > 0.5 else 0.0", (valid,))


def predictors_stage(sources: Mapping[str, str], values: Sequence[str], nan_guard: bool, x: str) -> Stage:
    """Standardised channels ``x[c] = (value_c - m[c]) / s[c]`` (NaN -> 0 with ``nan_guard``)
    from the per-channel source fields (``sources``: expression name -> program field, renamed
    to the program's names here); ``values`` are the raw channel expressions."""
    n = len(values)
    m, s = "predictors_m", "predictors_s"
    body: Body = [(SEA_MASK[0], SEA_MASK[1].replace("sst_mean", sources["sst_mean"]))] if "sst_mean" in sources else []
    for c, value in enumerate(values):
        z = f"({sources.get(value, value)} - {m}.A[{c}]) / {s}.A[{c}]"
        if nan_guard:
            body += [(f"z{c}", z), (ref(x, c), f"0.0 if isnan(z{c}) else z{c}")]
        else:
            body.append((ref(x, c), z))
    return Stage("predictors", body, (*sources.values(), m, s), (x,),
                 {m: table_type((n,)), s: table_type((n,)), x: stack_type(n)})


def head_stage(h: str, n_in: int, mean: str, std: str, softplus_one: float, loops: bool) -> Stage:
    """Last Linear (2 outputs) and the Gaussian head: ``mu = mean + scale o0``, ``sigma = (std
    + 1e-3 scale) softplus(o1 + softplus_one)``; ``head_sc = [scale, 1e-3 scale]`` is a table."""
    w, b, sc = "head_w", "head_b", "head_sc"
    types = {h: stack_type(n_in), w: table_type((2, n_in)), b: table_type((2,)), sc: table_type((2,))}
    if loops:
        body: Body = [f"o0 = {b}.A[0]", f"o1 = {b}.A[1]", *while_loop("n", n_in, [
            f"o0 = o0 + {w}.A[0, n] * {ref(h, 'n')}", f"o1 = o1 + {w}.A[1, n] * {ref(h, 'n')}"])]
    else:
        body = [(f"o{r}", tree_sum([f"{b}.A[{r}]", *(f"{w}.A[{r}, {c}] * {ref(h, c)}" for c in range(n_in))]))
                for r in (0, 1)]
    body += [
        ("y", f"o1 + {softplus_one!r}"),
        ("mu", f"{mean} + {sc}.A[0] * o0"),
        ("sp", f"y if y > {SOFTPLUS_THRESHOLD!r} else log(1.0 + exp(y))"),
        ("sigma", f"({std} + {sc}.A[1]) * sp"),
    ]
    return Stage("head", body, (h, w, b, sc, mean, std), ("mu", "sigma"), types)


__all__ = [
    "Part", "Stage", "StackedLayers", "TableProgram", "channelwise_stage", "conv_part", "conv_stage", "dense_part",
    "dense_stage", "fuse", "fused_label", "gather_stage", "head_stage", "loops_supported", "maxpool_stage",
    "predictors_stage", "ref", "select_stage", "stack_type", "table_type", "upsample_part",
    "weighted_stage", "while_loop",
]
