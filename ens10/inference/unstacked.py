"""A stacked program written out in the ``fields`` layout: one scalar field per channel and the
weights as externals, which is what StencilFlow streams.

The model exporters that only exist for the stacked layout (U-Net, Transformer) describe their
layers as :class:`~ens10.inference.stacked.Stage` statements over channel-stacked fields
(``x[di, dj, 0][c]``) and ``GlobalTable`` weights (``w.A[o, c, a, b]``). Unrolled
(``loops=False``) every index is a constant, so each stage rewrites mechanically:

``x[di, dj, 0][c, ...]``  ->  field ``x_c_...`` at offset (di, dj)
``w.A[o, c, ...]``        ->  external ``w_o_c_...`` holding that table entry

Stages fuse exactly as in the stacked layout (a new stencil where a layer reads a field of the
current stencil at an offset), so the DAG has one node per channel of every layer output.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from ens10.inference.builders import StackedBuilder
from ens10.inference.codegen import generate
from ens10.inference.errors import ExportError
from ens10.inference.stacked import Body, Stage, TableProgram, fused_label

_FIELD = re.compile(r"\b([A-Za-z_]\w*)\[(-?\d+), (-?\d+), 0\]\[(\d+(?:, \d+)*)\]")
_TABLE = re.compile(r"\b([A-Za-z_]\w*)\.A\[(\d+(?:, \d+)*)\]")


def channel_name(name: str, index: Sequence[int] | str) -> str:
    """The scalar field of channel ``index`` of stacked field ``name``: ``name_i_j``."""
    idx = index.replace(", ", "_") if isinstance(index, str) else "_".join(str(i) for i in index)
    return f"{name}_{idx}"


class UnstackedBuilder(StackedBuilder):
    """:class:`~ens10.inference.builders.StackedBuilder` (unrolled) whose stencils are emitted
    in the ``fields`` layout: the program has no data dimensions and no tables, only scalar
    fields (the channels of every stacked temporary), externals and the geometry fields."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        kw["loops"] = False
        super().__init__(*args, **kw)

    def _rewrite(self, text: str, used: set[str], consts: dict[str, float]) -> str:
        def field(m: re.Match) -> str:
            name, di, dj, idx = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
            if name not in self.data_dims:
                raise ExportError(f"program {self.name!r}: {name!r} is indexed as a stacked field but "
                                  "has no channels (a stage reads a field the builder did not declare)")
            scalar = channel_name(name, idx)
            used.add(scalar)
            return scalar if (di, dj) == (0, 0) else f"{scalar}[{di}, {dj}, 0]"

        def table(m: re.Match) -> str:
            name, idx = m.group(1), tuple(int(i) for i in m.group(2).split(", "))
            const = channel_name(name, idx)
            consts[const] = float(self.tables[name][idx])
            return const

        return _TABLE.sub(table, _FIELD.sub(field, text))

    def flush(self) -> None:
        if not self.pending:
            return
        stages: list[Stage] = self.pending
        self.pending = []
        consts: dict[str, float] = {}
        reads: list[str] = []
        writes: list[str] = []
        body: Body = []
        for st in stages:
            used: set[str] = set()
            lines = [self._rewrite(line, used, consts) if isinstance(line, str)
                     else (self._rewrite(line[0], used, consts), self._rewrite(line[1], used, consts))
                     for line in st.body]
            written = {c for w in st.writes for c in self._channels(w, used)}
            writes += sorted(written - set(writes)) + [w for w in st.writes if w not in self.data_dims]
            plain = [r for r in st.reads if r not in self.data_dims and r not in self.tables]
            reads += [r for r in (*sorted(used - written), *plain) if r not in writes]
            body += lines
        label = fused_label(stages)
        inputs, outputs = list(dict.fromkeys(reads)), list(dict.fromkeys(writes))
        gen = generate(label, inputs, outputs, body, consts)
        self.add(gen, label, **{p: p for p in gen.params})

    def _channels(self, name: str, used: set[str]) -> list[str]:
        if name not in self.data_dims:
            return []
        return [c for c in (channel_name(name, idx) for idx in itertools.product(*map(range, self.data_dims[name])))
                if c in used]

    def program(self) -> TableProgram:
        self.flush()
        referenced = {p for gen, _, _ in self.calls for p in gen.params}
        temporaries = [t for t in self.temporaries if t not in self.data_dims]
        temporaries += [c for t in self.temporaries for c in self._channels(t, referenced)]
        prog = TableProgram(self.name, inputs=self.inputs, outputs=["mu", "sigma"], temporaries=temporaries,
                            geometry=self.geometry, geometry_fields=self.geometry_fields)
        for gen, bindings, label in self.calls:
            prog.add(gen.definition, label=label, externals=gen.externals, **bindings)
        return prog

