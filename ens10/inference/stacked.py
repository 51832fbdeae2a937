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
from typing import Any

import numpy as np

from ens10.inference.codegen import GeneratedStencil, generate, tree_sum
from stencils.program import StencilProgram
from stencils.storage import Domain, from_numpy

SOFTPLUS_THRESHOLD = 20.0  # torch.nn.functional.softplus: x above it is returned unchanged
Taps = tuple[int, int, int]
# GT4Py's debug backend drops the parentheses around a ternary inside a larger expression
# (``a * (b if c else d)`` runs as ``a * b if c else d``): ternaries are always assigned to a
# temporary of their own.
SEA_MASK = ("sea", "1.0 if isfinite(sst_mean) else 0.0")


def stack_type(n: int) -> str:
    """Annotation of a field with ``n`` channels (a data dimension) at every point."""
    return f"Field[(np.float64, ({n},))]"


def table_type(shape: Sequence[int]) -> str:
    """Annotation of a weight table (no spatial dimension)."""
    return f"GlobalTable[(np.float64, ({', '.join(str(s) for s in shape)},))]"


def loops_supported(backend: str) -> bool:
    """True if ``backend`` can index data dimensions with loop counters (all but numpy)."""
    return backend != "numpy"


class TableProgram(StencilProgram):
    """A :class:`~stencils.program.StencilProgram` whose fields may carry data dimensions
    (``data_dims``: field -> channel shape) and whose weights are ``GlobalTable`` parameters
    (``tables``: name -> array, owned by the program, declared as inputs so calls can bind
    them). :meth:`run` takes only the spatial inputs; the tables come from the program."""

    def __init__(
        self,
        name: str,
        inputs: Sequence[str],
        outputs: Sequence[str],
        temporaries: Sequence[str] = (),
        data_dims: Mapping[str, tuple[int, ...]] | None = None,
        tables: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.tables = {k: np.ascontiguousarray(v, dtype=np.float64) for k, v in (tables or {}).items()}
        self.data_dims = {k: tuple(v) for k, v in (data_dims or {}).items()}
        super().__init__(name, inputs=[*inputs, *self.tables], outputs=outputs, temporaries=temporaries)

    @property
    def field_inputs(self) -> tuple[str, ...]:
        """Inputs that are spatial fields (everything but the weight tables)."""
        return tuple(f for f in self.inputs if f not in self.tables)

    def required_halo(self) -> dict[str, int]:
        return {f: h for f, h in super().required_halo().items() if f not in self.tables}

    def _allocate(
        self, inputs: Mapping[str, np.ndarray], shape: tuple[int, ...], domain: Domain, backend: str
    ) -> dict[str, Any]:
        """As :meth:`StencilProgram._allocate`; temporaries and outputs get their data
        dimensions, the tables are passed from the program."""
        storages: dict[str, Any] = {
            f: from_numpy(np.asarray(inputs[f], dtype=np.float64), backend, domain.origin)
            for f in self.field_inputs
        }
        storages.update({t: _table_storage(a, backend) for t, a in self.tables.items()})
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


def fuse(stages: Sequence[Stage]) -> tuple[str, GeneratedStencil]:
    """One stencil running ``stages`` in order: (label, generated stencil). Its parameters are
    the fields and tables the stages read and write, named as in the program."""
    label = "__".join(st.label for st in stages)
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


def _ch(name: str, index: str | int, offset: tuple[int, int] = (0, 0)) -> str:
    """Channel ``index`` of stacked field ``name`` at ``offset``."""
    return f"{name}[{offset[0]}, {offset[1]}, 0][{index}]"


def _loop(var: str, bound: int, body: Sequence[str]) -> list[str]:
    return [f"{var} = 0", f"while {var} < {bound}:", *(f"    {line}" for line in body), f"    {var} = {var} + 1"]


def _weighted_relu_stage(
    label: str, x: str, y: str, n_out: int, n_in: int, loops: bool, w_shape: tuple[int, ...],
    window: Callable[[str | int, str | int], list[str]], offset_reads: tuple[str, ...] = (),
) -> Stage:
    """``y[o] = max(b[o] + sum_c sum(window(o, c)), 0)`` over stacked channels (tables
    ``{label}_w`` of ``w_shape`` and ``{label}_b``): the dense and convolution layers."""
    w, b = f"{label}_w", f"{label}_b"
    types = {x: stack_type(n_in), w: table_type(w_shape), b: table_type((n_out,)),
             y: stack_type(n_out)}  # fmt: skip
    if loops:
        body: Body = _loop("o", n_out, [f"acc = {b}.A[o]", *_loop("c", n_in, [
            f"acc = acc + {tree_sum(window('o', 'c'))}"]), f"{_ch(y, 'o')} = max(acc, 0.0)"])
    else:
        body = [(_ch(y, o), f"max({tree_sum([f'{b}.A[{o}]', *(t for c in range(n_in) for t in window(o, c))])}, 0.0)")
                for o in range(n_out)]
    return Stage(label, body, (x, w, b), (y,), types, offset_reads=offset_reads)


def dense_stage(label: str, x: str, y: str, n_out: int, n_in: int, loops: bool) -> Stage:
    """``y[n] = max(b[n] + sum_c w[n, c] x[c], 0)`` over stacked channels (tables
    ``{label}_w``, ``{label}_b``)."""
    w = f"{label}_w"

    def window(o: str | int, c: str | int) -> list[str]:
        return [f"{w}.A[{o}, {c}] * {_ch(x, c)}"]

    return _weighted_relu_stage(label, x, y, n_out, n_in, loops, (n_out, n_in), window)


def conv_stage(label: str, x: str, y: str, n_out: int, n_in: int, taps: Taps, loops: bool) -> Stage:
    """3x3 convolution + ReLU over stacked channels: ``y[o] = max(b[o] + sum_{c,a,b}
    w[o, c, a, b] x[c] at (taps[a], taps[b]), 0)`` (``taps`` are the lat/lon offsets)."""
    w = f"{label}_w"

    def window(o: str | int, c: str | int) -> list[str]:
        return [f"{w}.A[{o}, {c}, {a}, {bb}] * {_ch(x, c, (da, db))}"
                for a, da in enumerate(taps) for bb, db in enumerate(taps)]

    return _weighted_relu_stage(label, x, y, n_out, n_in, loops, (n_out, n_in, 3, 3), window,
                                offset_reads=(x,))  # fmt: skip


def maxpool_stage(label: str, x: str, y: str, n: int, loops: bool) -> Stage:
    """2x2 max pool of every channel, evaluated at every point (taps 0, +1)."""

    def pool(c: str | int) -> str:
        return f"max(max({_ch(x, c)}, {_ch(x, c, (1, 0))}), max({_ch(x, c, (0, 1))}, {_ch(x, c, (1, 1))}))"

    body: Body = _loop("c", n, [f"{_ch(y, 'c')} = {pool('c')}"]) if loops else [(_ch(y, c), pool(c)) for c in range(n)]
    return Stage(label, body, (x,), (y,), {x: stack_type(n), y: stack_type(n)}, offset_reads=(x,))


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
            body += [(f"z{c}", z), (_ch(x, c), f"0.0 if isnan(z{c}) else z{c}")]
        else:
            body.append((_ch(x, c), z))
    return Stage("predictors", body, (*sources.values(), m, s), (x,),
                 {m: table_type((n,)), s: table_type((n,)), x: stack_type(n)})


def head_stage(h: str, n_in: int, mean: str, std: str, softplus_one: float, loops: bool) -> Stage:
    """Last Linear (2 outputs) and the Gaussian head: ``mu = mean + scale o0``, ``sigma = (std
    + 1e-3 scale) softplus(o1 + softplus_one)``; ``head_sc = [scale, 1e-3 scale]`` is a table."""
    w, b, sc = "head_w", "head_b", "head_sc"
    types = {h: stack_type(n_in), w: table_type((2, n_in)), b: table_type((2,)), sc: table_type((2,))}
    if loops:
        body: Body = [f"o0 = {b}.A[0]", f"o1 = {b}.A[1]", *_loop("n", n_in, [
            f"o0 = o0 + {w}.A[0, n] * {_ch(h, 'n')}", f"o1 = o1 + {w}.A[1, n] * {_ch(h, 'n')}"])]
    else:
        body = [(f"o{r}", tree_sum([f"{b}.A[{r}]", *(f"{w}.A[{r}, {c}] * {_ch(h, c)}" for c in range(n_in))]))
                for r in (0, 1)]
    body += [
        ("y", f"o1 + {softplus_one!r}"),
        ("mu", f"{mean} + {sc}.A[0] * o0"),
        ("sp", f"y if y > {SOFTPLUS_THRESHOLD!r} else log(1.0 + exp(y))"),
        ("sigma", f"({std} + {sc}.A[1]) * sp"),
    ]
    return Stage("head", body, (h, w, b, sc, mean, std), ("mu", "sigma"), types)


__all__ = [
    "Stage", "TableProgram", "conv_stage", "dense_stage", "fuse", "head_stage", "loops_supported",
    "maxpool_stage", "predictors_stage", "stack_type", "table_type",
]
