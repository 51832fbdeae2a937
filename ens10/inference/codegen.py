"""Generate GTScript stencil definitions from unrolled per-point expressions.

Without channel loops a layer (``out_n = act(b_n + sum_c W_nc * in_c)``) is written out term
by term. Sums are emitted as balanced trees (depth log2 of the number of
terms) so GT4Py's recursive IR passes stay far below Python's recursion limit even for the
2448-term convolutions of LeNet. In the ``fields`` layout weights are GTScript externals
(compile-time constants): one build per checkpoint, and the C++ compiler folds them into the
code; the ``stacked`` layout (:mod:`ens10.inference.stacked`) uses the same generator with
data-dimension fields, ``GlobalTable`` weights and ``while`` loops instead.

The generated source is registered in :mod:`linecache` so that GT4Py (which reads a
definition's source with :func:`inspect.getsource`) can parse it like a hand-written stencil.
"""

from __future__ import annotations

import hashlib
import linecache
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Offset = tuple[int, int]


def field_ref(name: str, offset: Offset = (0, 0)) -> str:
    """``name`` at horizontal ``offset`` in GTScript syntax (centre: just the name)."""
    if offset == (0, 0):
        return name
    return f"{name}[{offset[0]}, {offset[1]}, 0]"


def tree_sum(terms: Sequence[str]) -> str:
    """``t0 + t1 + ...`` as a balanced tree of parenthesised sums."""
    if not terms:
        return "0.0"
    level = list(terms)
    while len(level) > 1:
        nxt = [f"({level[k]} + {level[k + 1]})" for k in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


class Externals:
    """Collects named compile-time constants (weights) for one generated stencil."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.values: dict[str, float] = {}

    def add(self, value: float, *index: int | str) -> str:
        name = "_".join([self.prefix, *(str(i) for i in index)])
        self.values[name] = float(value)
        return name


def linear_terms(weights: np.ndarray, bias: float | None, inputs: Sequence[str], consts: Externals,
                 row: int) -> str:
    """``bias + sum_c weights[c] * inputs[c]`` with the weights as externals named by ``row``."""
    terms = [f"{consts.add(w, row, c)} * {x}" for c, (w, x) in enumerate(zip(weights, inputs))]
    if bias is not None:
        terms.insert(0, consts.add(bias, row, "b"))
    return tree_sum(terms)


@dataclass(frozen=True)
class GeneratedStencil:
    """A generated GTScript definition and its externals (for ``StencilProgram.add``)."""

    definition: Callable[..., None]
    externals: Mapping[str, float]
    source: str
    params: tuple[str, ...] = ()


def generate(
    name: str,
    inputs: Sequence[str],
    outputs: Sequence[str],
    statements: Sequence[tuple[str, str] | str],
    externals: Mapping[str, float] | None = None,
    types: Mapping[str, str] | None = None,
) -> GeneratedStencil:
    """A GTScript definition ``name(inputs..., outputs...)`` running ``target = expr`` statements
    (in order, in one ``computation(PARALLEL), interval(...)``). Names assigned that are not
    parameters become stencil temporaries. A statement given as a plain string is one source
    line (its own indentation relative to the computation block, e.g. a ``while`` loop).
    ``types`` maps parameters to annotations other than ``Field[np.float64]`` (data-dimension
    fields, ``GlobalTable`` weights)."""
    from gt4py.cartesian import gtscript

    externals = dict(externals or {})
    types = dict(types or {})
    params = ", ".join(f"{p}: {types.get(p, 'Field[np.float64]')}" for p in (*inputs, *outputs))
    lines = [f"def {name}({params}):"]
    if externals:
        lines.append(f"    from __externals__ import {', '.join(externals)}")
    lines.append("    with computation(PARALLEL), interval(...):")
    lines += [f"        {st}" if isinstance(st, str) else f"        {st[0]} = {st[1]}" for st in statements]
    source = "\n".join(lines) + "\n"
    digest = hashlib.sha1(source.encode()).hexdigest()[:12]
    filename = f"<stratoflow-ens10-inference {name} {digest}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {
        "np": np,
        "Field": gtscript.Field,
        "GlobalTable": gtscript.GlobalTable,
        "PARALLEL": gtscript.PARALLEL,
        "computation": gtscript.computation,
        "interval": gtscript.interval,
        **{f: getattr(gtscript, f) for f in ("sqrt", "exp", "log", "max", "min", "isnan", "isfinite")},
        "__name__": "ens10.inference.generated",
    }
    exec(compile(source, filename, "exec", dont_inherit=True), namespace)  # noqa: S102  (our own generated code)
    definition = namespace[name]
    definition.__module__ = "ens10.inference.generated"
    return GeneratedStencil(definition, externals, source, (*inputs, *outputs))
