"""From a :class:`stencils.program.StencilProgram` (GTScript stencils) to a StencilFlow program.

Every call's GTIR is translated statement by statement: each assignment to a program field
or to a temporary that is read at a non-zero offset becomes a stencil node (program fields
written several times get versioned nodes ``F__1``, ``F__2``, ..., the last one keeps the
name ``F``); temporaries read only at the centre are inlined into their readers. Scalar
parameters become constants. Only ``computation(PARALLEL)`` without horizontal regions, if-statements or variable k offsets
maps onto a stream; a partial ``interval(a, b)`` becomes a select on ``k`` (outside it the
field keeps its previous value, or 0 for a fresh field, as GT4Py leaves it). Anything else
raises :class:`StencilFlowError` naming the call and the construct.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import (
    FUNCTIONS,
    Access,
    Binary,
    Call,
    Compare,
    Const,
    Expr,
    Index,
    Logical,
    Ternary,
    Unary,
    to_source,
)
from mapping.spatial.model import BoundaryCondition, Program, program_from_dict

ITERS = ("i", "j", "k")
_FUNC_NAMES = {"abs": "fabs", "arctan": "atan"}


def _shift(e: Expr, by: tuple[int, ...]) -> Expr:
    if isinstance(e, Access):
        return Access(e.field, tuple(a + b for a, b in zip(e.offset, by)))
    if isinstance(e, Unary):
        return Unary(e.op, _shift(e.operand, by))
    if isinstance(e, (Binary, Compare, Logical)):
        return dataclasses.replace(e, left=_shift(e.left, by), right=_shift(e.right, by))
    if isinstance(e, Ternary):
        return Ternary(_shift(e.cond, by), _shift(e.then, by), _shift(e.other, by))
    if isinstance(e, Call):
        return Call(e.func, tuple(_shift(a, by) for a in e.args))
    return e


class _CallTranslator:
    def __init__(self, bridge: StencilProgramBridge, call: Any) -> None:
        self.bridge = bridge
        self.call = call
        self.where = f"call '{call.label}' ({call.stencil_name})"
        self.inline: dict[str, Expr] = {}
        self.temp_node: dict[str, str] = {}

    def fail(self, what: str) -> StencilFlowError:
        return StencilFlowError(f"StencilProgram bridge, {self.where}: {what}")

    def run(self) -> None:
        from stencils.gt4py_internals import common, gtir

        g = self.call.gtir
        temps = {str(t.name) for vl in g.vertical_loops for t in vl.temporaries}
        nk = self.bridge.shape[2]
        stmts: list[tuple[Any, Expr | None]] = []
        for vl in g.vertical_loops:
            if vl.loop_order != common.LoopOrder.PARALLEL:
                raise self.fail(f"computation({vl.loop_order.name}) carries a vertical dependency; "
                                "only PARALLEL computations stream through StencilFlow")
            iv = vl.interval

            def level(b: Any) -> int:
                return b.offset if b.level == common.LevelMarker.START else nk + b.offset

            lo, hi = level(iv.start), level(iv.end)
            if not 0 <= lo < hi <= nk:
                raise self.fail(f"interval [{lo}, {hi}) is empty or outside the {nk} vertical levels")
            cond = None
            if (lo, hi) != (0, nk):  # a partial interval: computed where lo <= k < hi
                cond = Logical("and", Compare(">=", Index("k"), Const(lo)), Compare("<", Index("k"), Const(hi)))
            for st in vl.body:
                if not isinstance(st, gtir.ParAssignStmt):
                    raise self.fail(f"contains a {type(st).__name__} (if-statements and horizontal regions are not supported)")
                stmts.append((st, cond))
        # temporaries read at a non-zero offset, or assigned more than once, become nodes
        reads: dict[str, set[tuple[int, int, int]]] = {}
        writes: dict[str, int] = {}
        for st, _ in stmts:
            writes[str(st.left.name)] = writes.get(str(st.left.name), 0) + 1
            for fa in st.right.walk_values().if_isinstance(gtir.FieldAccess):
                off = fa.offset
                reads.setdefault(str(fa.name), set()).add((getattr(off, "i", 0), getattr(off, "j", 0), getattr(off, "k", 0)))
        for st, cond in stmts:
            target = str(st.left.name)
            value = self.expr(st.right)
            if cond is not None:  # outside the interval the field keeps its previous value (0 if none)
                value = Ternary(cond, value, self.previous(target, temps))
            if target in temps:
                if writes[target] == 1 and reads.get(target, set()) <= {(0, 0, 0)}:
                    self.inline[target] = value
                else:
                    self.temp_node[target] = self.bridge.new_node(f"{self.call.label}__{target}", value)
            else:
                field = self.call.bindings.get(target)
                if field is None:
                    raise self.fail(f"assigns to {target!r}, which is neither a field parameter nor a temporary")
                self.bridge.write_field(field, value)

    def previous(self, target: str, temps: set[str]) -> Expr:
        if target in temps:
            if target in self.temp_node:
                return Access(self.temp_node[target], (0, 0, 0))
            return self.inline.get(target, Const(0.0))
        field = self.call.bindings.get(target)
        if field is not None and field in self.bridge._version:
            return Access(self.bridge.current(field), (0, 0, 0))
        return Const(0.0)

    def expr(self, node: Any) -> Expr:
        from stencils.gt4py_internals import gtir

        if isinstance(node, gtir.Literal):
            v = str(node.value)
            return Const(v == "True") if v in ("True", "False") else Const(float(v))
        if isinstance(node, gtir.ScalarAccess):
            name = str(node.name)
            if name not in self.call.scalars:
                raise self.fail(f"scalar {name!r} has no value")
            return Const(float(self.call.scalars[name]))
        if isinstance(node, gtir.FieldAccess):
            off = node.offset
            if isinstance(off, gtir.VariableKOffset) or node.data_index:
                raise self.fail(f"access to {node.name} uses a variable k offset or data dimensions")
            by = (off.i, off.j, off.k)
            name = str(node.name)
            if name in self.inline:
                return _shift(self.inline[name], by)
            if name in self.temp_node:
                return Access(self.temp_node[name], by)
            field = self.call.bindings.get(name)
            if field is None:
                raise self.fail(f"reads {name!r} before it is assigned")
            return Access(self.bridge.current(field), by)
        if isinstance(node, gtir.BinaryOp):
            op = node.op.value
            left, right = self.expr(node.left), self.expr(node.right)
            if op in ("and", "or"):
                return Logical(op, left, right)
            if op in ("<", "<=", ">", ">=", "==", "!="):
                return Compare(op, left, right)
            if op in ("+", "-", "*", "/", "**", "%"):
                return Binary(op, left, right)
            raise self.fail(f"operator {op!r} is not supported")
        if isinstance(node, gtir.UnaryOp):
            return Unary(node.op.value, self.expr(node.expr))
        if isinstance(node, gtir.TernaryOp):
            return Ternary(self.expr(node.cond), self.expr(node.true_expr), self.expr(node.false_expr))
        if isinstance(node, gtir.NativeFuncCall):
            name = _FUNC_NAMES.get(node.func.value, node.func.value)
            if name not in FUNCTIONS:
                raise self.fail(f"function {node.func.value!r} has no StencilFlow equivalent")
            return Call(name, tuple(self.expr(a) for a in node.args))
        if isinstance(node, gtir.Cast):
            return self.expr(node.expr)
        raise self.fail(f"expression {type(node).__name__} is not supported")


class StencilProgramBridge:
    """``StencilProgramBridge(program, shape)()`` -> a validated StencilFlow :class:`Program`."""

    def __init__(self, program: Any, shape: tuple[int, int, int],
                 boundary: BoundaryCondition = BoundaryCondition("constant", 0.0)) -> None:
        if len(shape) != 3:
            raise StencilFlowError(f"StencilProgram bridge: shape must be (ni, nj, nk), got {shape}")
        self.program = program
        self.shape = tuple(int(n) for n in shape)
        self.boundary = boundary

    def __call__(self) -> Program:
        prog = self.program
        accesses = prog.accesses()
        self._total = {}
        for acc in accesses:
            for st in acc.gtir.vertical_loops:
                for s in st.body:
                    f = acc.bindings.get(str(getattr(getattr(s, "left", None), "name", "")))
                    if f is not None:
                        self._total[f] = self._total.get(f, 0) + 1
        self._count: dict[str, int] = {}
        self._version: dict[str, str] = {f: f for f in prog.inputs}
        self._nodes: dict[str, Expr] = {}
        for acc in accesses:
            _CallTranslator(self, acc).run()
        spec: dict[str, Any] = {
            "name": prog.name,
            "inputs": {f: {"data_type": "float64"} for f in prog.inputs},
            "outputs": [self._version[o] for o in prog.outputs],
            "dimensions": list(self.shape),
            "program": {},
        }
        bc = {"type": self.boundary.kind, "value": self.boundary.value}
        for name, e in self._nodes.items():
            fields = sorted({a.field for a in _accesses(e)})
            spec["program"][name] = {
                "computation_string": f"res = {to_source(e, ITERS)}",
                "data_type": "float64",
                "boundary_conditions": {f: dict(bc) for f in fields},
            }
        return program_from_dict(spec, prog.name, base=Path.cwd())

    def new_node(self, name: str, e: Expr) -> str:
        base, k = name, 1
        while name in self._nodes or name in self.program.inputs:
            k += 1
            name = f"{base}__{k}"
        self._nodes[name] = e
        return name

    def write_field(self, field: str, e: Expr) -> None:
        n = self._count.get(field, 0) + 1
        self._count[field] = n
        name = field if n == self._total[field] else f"{field}__{n}"
        self._nodes[name] = e
        self._version[field] = name

    def current(self, field: str) -> str:
        if field not in self._version:
            raise StencilFlowError(f"StencilProgram bridge: field {field!r} is read before it is written")
        return self._version[field]


def _accesses(e: Expr):
    from mapping.spatial.expr import walk

    return [n for n in walk(e) if isinstance(n, Access)]


def from_stencil_program(program: Any, shape: tuple[int, int, int],
                         boundary: BoundaryCondition | Mapping[str, Any] | None = None) -> Program:
    """Convenience wrapper of :class:`StencilProgramBridge`."""
    if isinstance(boundary, Mapping):
        boundary = BoundaryCondition(boundary.get("type", "constant"), float(boundary.get("value", 0.0)))
    return StencilProgramBridge(program, shape, boundary or BoundaryCondition("constant", 0.0))()
