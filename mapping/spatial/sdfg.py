"""A DaCe SDFG (CPU) for a StencilFlow program: one state with one parallel map per stencil.

Each stencil is a mapped tasklet over the whole domain; its field accesses read clamped
indices of the source arrays and apply the boundary condition inside the tasklet (constant
value, copy = clamped index, shrink = 0 where the window leaves the domain). Intermediate
fields are transients; outputs are arguments of the compiled program.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import (
    Access,
    Binary,
    Call,
    Compare,
    Const,
    Expr,
    Index,
    Local,
    Logical,
    Ternary,
    Unary,
)
from mapping.spatial.model import Program

log = logging.getLogger(__name__)

_PY_FUNCS = {"fabs": "abs", "abs": "abs", "min": "min", "max": "max", "sqrt": "sqrt", "exp": "exp",
             "log": "log", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "pow": "pow",
             "floor": "floor", "ceil": "ceil", "atan": "atan"}


def _py(node: Expr, name: Callable[[Access], str]) -> str:
    if isinstance(node, Const):
        return repr(node.value)
    if isinstance(node, Access):
        return name(node)
    if isinstance(node, Local):
        return f"l_{node.name}"
    if isinstance(node, Index):
        return node.name
    if isinstance(node, Unary):
        return f"(not {_py(node.operand, name)})" if node.op == "not" else f"({node.op}{_py(node.operand, name)})"
    if isinstance(node, (Binary, Compare, Logical)):
        return f"({_py(node.left, name)} {node.op} {_py(node.right, name)})"
    if isinstance(node, Ternary):
        return f"({_py(node.then, name)} if {_py(node.cond, name)} else {_py(node.other, name)})"
    if isinstance(node, Call):
        return f"{_PY_FUNCS[node.func]}({', '.join(_py(a, name) for a in node.args)})"
    raise StencilFlowError(f"internal: unknown expression node {node!r}")


class SDFGBuilder:
    """``SDFGBuilder(program).sdfg`` is the SDFG; ``compile()`` returns a :class:`CompiledSDFG`."""

    def __init__(self, prog: Program) -> None:
        import dace

        self.program = prog
        self._dace = dace
        for st in prog.stencils.values():
            if st.recurrence:
                raise StencilFlowError(f"SDFG: stencil '{st.name}' is a vertical recurrence; it has no SDFG form yet")
        types = {"float32": dace.float32, "float64": dace.float64, "int8": dace.int8,
                 "int16": dace.int16, "int32": dace.int32, "int64": dace.int64}
        sdfg = dace.SDFG(f"stencilflow_{''.join(c if c.isalnum() else '_' for c in prog.name)}")
        shape = list(prog.shape)
        for n, inp in prog.inputs.items():
            sdfg.add_array(n, [prog.shape[prog.iterators.index(d)] for d in inp.dims], types[inp.dtype.name])
        for n, st in prog.stencils.items():
            sdfg.add_array(n, shape, types[st.dtype.name], transient=n not in prog.outputs)
        state = sdfg.add_state("stencils")
        its = prog.iterators
        nodes: dict[str, object] = {}
        for n, st in prog.stencils.items():
            lines = ["valid = True"]
            names: dict[Access, str] = {}
            for f, offs in sorted(st.accesses.items()):
                dims = prog.inputs[f].dims if f in prog.inputs else its
                bc = st.boundary[f]
                for k, off in enumerate(sorted(offs)):
                    var = f"v_{f}_{k}"
                    names[Access(f, off)] = var
                    tgt = {it: f"({it} + {d})" for it, d in zip(its, off)}
                    size = dict(zip(its, prog.shape))
                    idx = ", ".join(f"min(max({tgt[d]}, 0), {size[d] - 1})" for d in dims)
                    inside = " and ".join(f"{tgt[d]} >= 0 and {tgt[d]} < {size[d]}" for d in its if off[its.index(d)]) or "True"
                    read = f"in_{f}[{idx}]"
                    if bc.kind == "copy":
                        lines.append(f"{var} = {read}")
                    elif bc.kind == "shrink":
                        lines.append(f"{var} = {read}")
                        lines.append(f"valid = valid and ({inside})")
                    else:
                        lines.append(f"{var} = {read} if ({inside}) else {bc.value!r}")
            for s in st.computation.statements[:-1]:
                lines.append(f"l_{s.target} = {_py(s.value, names.__getitem__)}")
            lines.append(f"res = {_py(st.computation.result, names.__getitem__)} if valid else 0")
            inputs = {}
            for f in st.accesses:
                arr = sdfg.arrays[f]
                inputs[f"in_{f}"] = dace.Memlet(f"{f}[{', '.join(f'0:{s}' for s in arr.shape)}]")
            rng = {it: f"0:{n_}" for it, n_ in zip(its, prog.shape)}
            out_access = state.add_write(n)
            in_access = {}
            for f in st.accesses:
                in_access[f] = nodes[f] if f in nodes else state.add_read(f)
            _, entry, exit_ = state.add_mapped_tasklet(
                f"stencil_{n}", rng, inputs, "\n".join(lines), {"res": dace.Memlet(f"{n}[{', '.join(its)}]")},
                input_nodes=in_access, output_nodes={n: out_access}, external_edges=True,
            )
            nodes[n] = out_access
        self.sdfg = sdfg

    def compile(self, build_dir: str | Path | None = None) -> CompiledStencilProgram:
        dace = self._dace
        folder = Path(build_dir or tempfile.mkdtemp(prefix="stratoflow-sdfg-"))
        with dace.config.set_temporary("default_build_folder", value=str(folder)):
            try:
                compiled = self.sdfg.compile()
            except Exception as exc:  # dace raises many types; report the program
                raise StencilFlowError(f"compiling the SDFG of '{self.program.name}' failed: {exc}") from exc
        return CompiledStencilProgram(self.program, compiled)


class CompiledStencilProgram:
    """Runs the compiled SDFG: ``__call__(inputs) -> {output: array}``."""

    def __init__(self, prog: Program, compiled) -> None:
        self.program = prog
        self.compiled = compiled

    def __call__(self, inputs: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        prog = self.program
        raw = prog.load_inputs() if inputs is None else inputs
        args = {n: np.ascontiguousarray(raw[n], dtype=inp.dtype.numpy) for n, inp in prog.inputs.items()}
        outs = {o: np.zeros(prog.shape, dtype=prog.stencils[o].dtype.numpy) for o in prog.outputs}
        self.compiled(**args, **outs)
        return outs
