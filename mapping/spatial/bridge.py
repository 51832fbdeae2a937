"""From GTScript stencil calls (a :class:`stencils.program.StencilProgram`, or a recorded launch
sequence of :class:`BridgeCall` and :class:`GatherCopy` steps) to a StencilFlow program.

Every call's GTIR is executed symbolically, statement by statement, in GT4Py's order:

* an assignment under conditions (a partial ``interval``, ``horizontal(region[...])``, an
  ``if``/``else`` on values or scalars, the call's compute domain for field parameters) is a
  select: ``x = cond ? value : x`` (both sides evaluated, as GT4Py's numpy backend does);
* region bounds and compute domains are predicates on the iterators ``i``/``j`` (partial
  intervals on ``k``), with each call's origin and domain as program constants
  (``LABEL__i0``, ``LABEL__ni``, ...), so per-rank externals become constants of the program;
* every write of a program field is a stencil node (versions ``F__1``, ``F__2``, ...; the last
  one keeps the name ``F``, or ``F_out`` when ``F`` is also an input); temporaries are inlined
  into their readers unless read at a non-zero offset or grown large, then they become nodes
  ``LABEL__TEMP``;
* ``computation(FORWARD)``/``(BACKWARD)`` is a vertical recurrence: a variable read at ``k-d``
  (``k+d``) in the sweep's direction becomes a node that reads its own output there (a
  recurrence node, see :mod:`mapping.spatial.model`); reads against the direction see the
  values before the sweep.

A :class:`GatherCopy` (point copies ``dst[di, dj] = sign * src[si, sj]``, FV3's corner fills)
is a select over the destination points. Anything else (``while``, variable k offsets,
data dimensions, a recurrence coupled across variables, horizontal regions of a call without
an origin) raises :class:`StencilFlowError` naming the call, its stencil and the construct.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    Local,
    Logical,
    Ternary,
    Unary,
    to_source,
    walk,
)
from mapping.spatial.model import BoundaryCondition, Program, program_from_dict

log = logging.getLogger(__name__)

ITERS = ("i", "j", "k")
_FUNC_NAMES = {"abs": "fabs", "arctan": "atan"}
#: a temporary whose inlined expression has more nodes than this becomes a stencil node
MAX_INLINE_NODES = 200


@dataclass(frozen=True)
class Placement:
    """Where a call computes: GT4Py's ``origin`` and ``domain`` in the program's array."""

    origin: tuple[int, int, int]
    domain: tuple[int, int, int]


@dataclass(frozen=True)
class BridgeCall:
    """One GTScript launch: its GTIR, parameter -> program field, scalar values, placement."""

    label: str
    stencil_name: str
    gtir: Any
    bindings: Mapping[str, str]
    scalars: Mapping[str, Any]
    placement: Placement | None = None


@dataclass(frozen=True)
class GatherCopy:
    """Point copies ``dst[di, dj] = sign * src[si, sj]`` at every level, all sources read
    before any destination is written (FV3's cube-corner fills)."""

    label: str
    copies: tuple[tuple[str, tuple[int, int], str, tuple[int, int], float], ...]


@dataclass(frozen=True)
class _Pending:
    """Placeholder of a recurrence read of ``var`` whose defining node is not named yet."""

    var: str


def _map(e: Expr, fn: Any) -> Expr:
    """``e`` with every leaf replaced by ``fn(leaf)`` (``fn`` returns the leaf unchanged or a
    new expression)."""
    if isinstance(e, Unary):
        return Unary(e.op, _map(e.operand, fn))
    if isinstance(e, (Binary, Compare, Logical)):
        return dataclasses.replace(e, left=_map(e.left, fn), right=_map(e.right, fn))
    if isinstance(e, Ternary):
        return Ternary(_map(e.cond, fn), _map(e.then, fn), _map(e.other, fn))
    if isinstance(e, Call):
        return Call(e.func, tuple(_map(a, fn) for a in e.args))
    return fn(e)


def _shift(e: Expr, by: tuple[int, int, int]) -> Expr:
    """``e`` evaluated ``by`` points away: accesses moved, iterator values moved."""
    if by == (0, 0, 0):
        return e

    def leaf(n: Expr) -> Expr:
        if isinstance(n, Access):
            return Access(n.field, tuple(a + b for a, b in zip(n.offset, by)))
        if isinstance(n, Index):
            d = by[ITERS.index(n.name)]
            return Binary("+", n, Const(d)) if d else n
        return n

    return _map(e, leaf)


def _identifier(name: str) -> str:
    """``name`` as a Python identifier (a call label may hold any characters)."""
    out = re.sub(r"\W", "_", name)
    return out if out and not out[0].isdigit() else f"_{out}"


def _size(e: Expr) -> int:
    return sum(1 for _ in walk(e))


def _and(a: Expr | None, b: Expr | None) -> Expr | None:
    if a is None:
        return b
    if b is None:
        return a
    return Logical("and", a, b)


def _select(cond: Expr | None, value: Expr, previous: Expr) -> Expr:
    return value if cond is None else Ternary(cond, value, previous)


class _CallTranslator:
    def __init__(self, bridge: _Builder, call: BridgeCall) -> None:
        self.bridge = bridge
        self.call = call
        self.where = f"call '{call.label}' (stencil {call.stencil_name})"
        self.env: dict[str, Expr] = {}  # temporary -> its current value
        self.temps: set[str] = set()
        self.ij_params: set[str] = set()
        self.sweep: _Sweep | None = None

    def fail(self, what: str) -> StencilFlowError:
        return StencilFlowError(f"StencilFlow bridge, {self.where}: {what}")

    # ------------------------------------------------------------------ structure
    def run(self) -> None:
        from stencils.gt4py_internals import common, gtir

        g = self.call.gtir
        for p in g.params:
            if isinstance(p, gtir.FieldDecl):
                dims = tuple(bool(d) for d in p.dimensions)
                if p.data_dims:
                    raise self.fail(f"field {p.name} has data dimensions; StencilFlow streams scalars per point")
                if dims != (True, True, True):
                    if dims != (True, True, False):
                        raise self.fail(f"field {p.name} has dimensions {dims}; only IJK and IJ fields map")
                    self.ij_params.add(str(p.name))
        self.temps = {str(t.name) for vl in g.vertical_loops for t in vl.temporaries}
        loops = list(g.vertical_loops)
        idx = 0
        while idx < len(loops):
            order = loops[idx].loop_order
            group = [loops[idx]]
            while idx + len(group) < len(loops) and loops[idx + len(group)].loop_order == order:
                group.append(loops[idx + len(group)])
            if order == common.LoopOrder.PARALLEL:
                for vl in group:
                    self.sweep = None
                    self.block(vl.body, self.interval(vl.interval))
            else:
                self.sweep = _Sweep(self, -1 if order == common.LoopOrder.FORWARD else 1, group)
                for vl in group:
                    self.block(vl.body, self.interval(vl.interval))
                self.sweep.close()
                self.sweep = None
            idx += len(group)

    def interval(self, iv: Any) -> Expr | None:
        from stencils.gt4py_internals import common

        nk = self.bridge.shape[2]
        pl = self.call.placement
        k0, dk = (pl.origin[2], pl.domain[2]) if pl else (0, nk)

        def level(b: Any) -> int:
            return k0 + (b.offset if b.level == common.LevelMarker.START else dk + b.offset)

        lo, hi = level(iv.start), level(iv.end)
        if not 0 <= lo < hi <= nk:
            raise self.fail(f"interval [{lo}, {hi}) is empty or outside the {nk} vertical levels")
        if (lo, hi) == (0, nk):
            return None
        return Logical("and", Compare(">=", Index("k"), Const(lo)), Compare("<", Index("k"), Const(hi)))

    def block(self, stmts: Iterable[Any], cond: Expr | None) -> None:
        from stencils.gt4py_internals import gtir

        for st in stmts:
            if isinstance(st, gtir.ParAssignStmt):
                self.assign(st, cond)
            elif isinstance(st, (gtir.FieldIfStmt, gtir.ScalarIfStmt)):
                test = self.expr(st.cond)
                self.block(st.true_branch.body, _and(cond, test))
                if st.false_branch is not None:
                    self.block(st.false_branch.body, _and(cond, Unary("not", test)))
            elif isinstance(st, gtir.HorizontalRestriction):
                self.block(st.body, _and(cond, self.region(st.mask)))
            elif isinstance(st, gtir.BlockStmt):
                self.block(st.body, cond)
            else:
                raise self.fail(f"contains a {type(st).__name__} statement, which has no StencilFlow form "
                                "(while loops run a data-dependent number of times)")

    def region(self, mask: Any) -> Expr | None:
        from stencils.gt4py_internals import common

        pl = self.call.placement
        if pl is None:
            raise self.fail("uses horizontal(region[...]), whose bounds are relative to the call's origin; "
                            "bridge it with a placement (from_stencil_program(..., halo=H) or recorded calls)")
        cond: Expr | None = None
        for axis, it in ((0, "i"), (1, "j")):
            iv = getattr(mask, it)
            for bound, op in ((iv.start, ">="), (iv.end, "<")):
                if bound is None:
                    continue
                base: Expr = self.bridge.constant(f"{self.call.label}__{it}0", pl.origin[axis])
                if bound.level == common.LevelMarker.END:
                    base = Binary("+", base, self.bridge.constant(f"{self.call.label}__n{it}", pl.domain[axis]))
                value = Binary("+", base, Const(bound.offset)) if bound.offset else base
                cond = _and(cond, Compare(op, Index(it), value))
        return cond

    def domain(self) -> Expr | None:
        """Where GT4Py writes the call's field parameters (its compute domain in i and j)."""
        pl = self.call.placement
        if pl is None:
            return None
        cond: Expr | None = None
        for axis, it in ((0, "i"), (1, "j")):
            lo, n = pl.origin[axis], pl.domain[axis]
            if lo == 0 and n == self.bridge.shape[axis]:
                continue
            lo_c = self.bridge.constant(f"{self.call.label}__{it}0", lo)
            n_c = self.bridge.constant(f"{self.call.label}__n{it}", n)
            cond = _and(cond, Logical("and", Compare(">=", Index(it), lo_c),
                                      Compare("<", Index(it), Binary("+", lo_c, n_c))))
        return cond

    # ------------------------------------------------------------------ assignments
    def assign(self, st: Any, cond: Expr | None) -> None:
        target = str(st.left.name)
        off = st.left.offset
        if (getattr(off, "i", 0), getattr(off, "j", 0), getattr(off, "k", 0)) != (0, 0, 0):
            raise self.fail(f"assigns to {target} at an offset")
        value = self.expr(st.right)
        recurrent = self.sweep is not None and self.sweep.is_final(target, st)
        if target in self.temps:
            prev = self.env.get(target, Const(0.0))
            value = _select(cond, value, prev)
            if recurrent:
                name = self.bridge.new_node(f"{self.call.label}__{target}", value, where=self.where)
                self.sweep.defined(target, name)
                self.env[target] = Access(name, (0, 0, 0))
            else:
                self.env[target] = value
            return
        field = self.call.bindings.get(target)
        if field is None:
            raise self.fail(f"assigns to {target!r}, which is neither a field parameter nor a temporary")
        if target in self.ij_params:
            raise self.fail(f"writes the 2-D (IJ) field {target}; only 3-D fields can be written")
        cond = _and(self.domain(), cond)
        if cond is not None:  # elsewhere the field keeps its value (0 before its first write)
            prev = self.bridge.version.get(field)
            value = Ternary(cond, value, Access(prev, (0, 0, 0)) if prev else Const(0.0))
        name = self.bridge.write_field(field, value, self.where)
        if recurrent:
            self.sweep.defined(target, name)

    def temp_value(self, name: str, by: tuple[int, int, int]) -> Expr:
        if name not in self.env:
            raise self.fail(f"reads temporary {name!r} before it is assigned")
        value = self.env[name]
        if by != (0, 0, 0) and not (isinstance(value, Access) and value.offset == (0, 0, 0)):
            node = self.bridge.new_node(f"{self.call.label}__{name}", value, where=self.where)
            value = self.env[name] = Access(node, (0, 0, 0))
        elif _size(value) > MAX_INLINE_NODES:
            node = self.bridge.new_node(f"{self.call.label}__{name}", value, where=self.where)
            value = self.env[name] = Access(node, (0, 0, 0))
        return _shift(value, by)

    def read(self, name: str, by: tuple[int, int, int]) -> Expr:
        if self.sweep is not None:
            special = self.sweep.read(name, by)
            if special is not None:
                return special
        if name in self.temps:
            return self.temp_value(name, by)
        field = self.call.bindings.get(name)
        if field is None:
            raise self.fail(f"reads {name!r}, which is neither a field parameter nor a temporary")
        if name in self.ij_params:
            by = (by[0], by[1], 0)
        return Access(self.bridge.current(field, self.where), by)

    # ------------------------------------------------------------------ expressions
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
            return self.read(str(node.name), (off.i, off.j, off.k))
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


class _Sweep:
    """One FORWARD (``direction`` -1: reads at k-d see computed levels) or BACKWARD (+1) sweep
    of a call: which variables it assigns, their last assignment, and the recurrence reads."""

    def __init__(self, tr: _CallTranslator, direction: int, loops: Sequence[Any]) -> None:
        from stencils.gt4py_internals import gtir

        self.tr = tr
        self.direction = direction
        self.final: dict[str, int] = {}  # variable -> id of its last assignment in the sweep
        carried: set[str] = set()  # variables read at k offsets in the sweep's direction
        for vl in loops:
            for st in vl.walk_values().if_isinstance(gtir.ParAssignStmt):
                self.final[str(st.left.name)] = id(st)
            for fa in vl.walk_values().if_isinstance(gtir.FieldAccess):
                if not isinstance(fa.offset, gtir.VariableKOffset) and fa.offset.k * direction > 0:
                    carried.add(str(fa.name))
        self.assigned = set(self.final)
        self.final = {v: i for v, i in self.final.items() if v in carried}
        self.node: dict[str, str] = {}  # variable -> the node of its last assignment, once made
        self.before: dict[str, str] = {}  # field parameter -> its version before the sweep
        for var in self.assigned:
            field = tr.call.bindings.get(var)
            if field is not None and field in tr.bridge.version:
                self.before[var] = tr.bridge.version[field]

    def is_final(self, var: str, st: Any) -> bool:
        return self.final.get(var) == id(st)

    def read(self, name: str, by: tuple[int, int, int]) -> Expr | None:
        """A read of a variable assigned in the sweep at a k offset, or None (an ordinary read)."""
        if name not in self.assigned or by[2] == 0:
            return None
        if by[2] * self.direction < 0:  # against the sweep: the values before it
            if name in self.before:
                return Access(self.before[name], by)
            raise self.tr.fail(f"reads temporary {name} at k{by[2]:+d}, against the "
                               f"{'FORWARD' if self.direction < 0 else 'BACKWARD'} sweep, before the sweep assigns it")
        if by[:2] != (0, 0):
            raise self.tr.fail(f"reads {name} at {by}: a recurrence may carry values along k only, "
                               "not combined with i/j offsets")
        if name in self.node:
            return Access(self.node[name], by)
        return Access(_Pending(name), by)  # type: ignore[arg-type]

    def defined(self, var: str, node: str) -> None:
        self.node[var] = node
        self.tr.bridge.resolve(self, var, node)

    def close(self) -> None:
        self.tr.bridge.check_resolved(self)


class _Builder:
    """Collects the nodes of the translated calls."""

    def __init__(self, name: str, shape: tuple[int, int, int], inputs: Mapping[str, tuple[str, ...]],
                 outputs: Sequence[str], boundary: BoundaryCondition, data: Mapping[str, Any]) -> None:
        self.data = data
        self.name = name
        self.shape = shape
        self.inputs = dict(inputs)
        self.outputs = tuple(outputs)
        self.boundary = boundary
        self.version: dict[str, str] = {f: f for f in self.inputs}
        self.writes: dict[str, list[str]] = {}
        self.nodes: dict[str, Expr] = {}
        self.constants: dict[str, int] = {}
        self._serial = 0

    def constant(self, name: str, value: int) -> Local:
        """A named program constant (a call's origin or extent along an axis)."""
        name = _identifier(name)
        if self.constants.setdefault(name, int(value)) != int(value):
            raise StencilFlowError(f"StencilFlow bridge: constant {name} has two values "
                                   f"{self.constants[name]} and {value}; give the calls distinct labels")
        return Local(name)

    def new_node(self, name: str, e: Expr, where: str) -> str:
        name = _identifier(name)
        base, n = name, 1
        while name in self.nodes or name in self.inputs or name in self.writes:
            n += 1
            name = f"{base}__{n}"
        self.nodes[name] = e
        return name

    def write_field(self, field: str, e: Expr, where: str) -> str:
        versions = self.writes.setdefault(field, [])
        name = f"{field}__{len(versions) + 1}"
        versions.append(name)
        self.nodes[name] = e
        self.version[field] = name
        return name

    def current(self, field: str, where: str) -> str:
        if field not in self.version:
            raise StencilFlowError(f"StencilFlow bridge, {where}: field {field!r} is read before it is written "
                                   "and is not an input")
        return self.version[field]

    def gather(self, step: GatherCopy) -> None:
        where = f"copy '{step.label}'"
        by_dst: dict[str, list[tuple[tuple[int, int], str, tuple[int, int], float]]] = {}
        for dst, d, src, si, sign in step.copies:
            by_dst.setdefault(dst, []).append((d, src, si, sign))
        new: dict[str, Expr] = {}
        for dst, rows in by_dst.items():  # every source at its version before the copies
            value: Expr = Access(self.current(dst, where), (0, 0, 0))
            for (di, dj), src, (si, sj), sign in rows:
                at = Logical("and", Compare("==", Index("i"), Const(int(di))), Compare("==", Index("j"), Const(int(dj))))
                got: Expr = Access(self.current(src, where), (int(si - di), int(sj - dj), 0))
                value = Ternary(at, got if sign > 0 else Unary("-", got), value)
            new[dst] = value
        for dst, value in new.items():
            self.write_field(dst, value, where)

    # ------------------------------------------------------------------ recurrences
    def resolve(self, sweep: _Sweep, var: str, node: str) -> None:
        """Replace the pending recurrence reads of ``var`` in the nodes made since the sweep
        began; only ``var``'s own node may hold them (a self recurrence)."""
        def leaf(n: Expr) -> Expr:
            if isinstance(n, Access) and isinstance(n.field, _Pending) and n.field.var == var:
                return Access(node, n.offset)
            return n

        self.nodes[node] = _map(self.nodes[node], leaf)
        for other, e in self.nodes.items():
            if other != node and any(isinstance(a, Access) and isinstance(a.field, _Pending) and a.field.var == var
                                     for a in walk(e)):
                raise sweep.tr.fail(f"the recurrence of {var} is coupled with {other} (a value read at a k "
                                    f"offset before its last assignment in the sweep feeds another variable); "
                                    "only a variable that carries itself maps onto a recurrence node")
        for t, e in sweep.tr.env.items():
            sweep.tr.env[t] = _map(e, leaf)

    def check_resolved(self, sweep: _Sweep) -> None:
        for name, e in self.nodes.items():
            for a in walk(e):
                if isinstance(a, Access) and isinstance(a.field, _Pending):
                    raise sweep.tr.fail(f"node {name} reads {a.field.var} at k{a.offset[2]:+d} in the sweep, but "
                                        f"{a.field.var} is assigned later: a recurrence coupled across variables")

    # ------------------------------------------------------------------ program
    def program(self) -> Program:
        rename: dict[str, str] = {}
        for field, versions in self.writes.items():
            rename[versions[-1]] = field if field not in self.inputs else f"{field}_out"
        for field, versions in self.writes.items():  # other versions: __1 .. __n-1 as before
            for n, v in enumerate(versions[:-1], start=1):
                rename[v] = f"{field}__{n}"

        def leaf(n: Expr) -> Expr:
            if isinstance(n, Access) and n.field in rename:
                return Access(rename[n.field], n.offset)
            return n

        nodes = {rename.get(n, n): _map(e, leaf) for n, e in self.nodes.items()}
        missing = [o for o in self.outputs if o not in self.writes]
        if missing:
            raise StencilFlowError(f"StencilFlow bridge, program '{self.name}': outputs {missing} are never written")
        dims = {f: d for f, d in self.inputs.items()}
        spec: dict[str, Any] = {
            "name": self.name,
            "inputs": {f: {"data_type": "float64", "input_dims": list(d)} for f, d in self.inputs.items()},
            "outputs": [rename[self.writes[o][-1]] for o in self.outputs],
            "dimensions": list(self.shape),
            "constants": dict(self.constants),
            "program": {},
        }
        for f, values in self.data.items():
            spec["inputs"][f]["data"] = [float(v) for v in values.ravel()]
        bc = {"type": self.boundary.kind, "value": self.boundary.value}
        for name, e in nodes.items():
            fields = sorted({a.field for a in walk(e) if isinstance(a, Access)})
            spec["program"][name] = {
                "computation_string": f"res = {to_source(e, ITERS, dims)}",
                "data_type": "float64",
                "boundary_conditions": {f: dict(bc) for f in fields},
            }
        prog = program_from_dict(spec, self.name, base=Path.cwd())
        log.info("bridged %s: %d stencils, %d inputs, %d constants", self.name, len(prog.stencils),
                 len(prog.inputs), len(self.constants))
        return prog


def from_calls(name: str, shape: tuple[int, int, int], inputs: Mapping[str, tuple[str, ...]],
               outputs: Sequence[str], steps: Sequence[BridgeCall | GatherCopy],
               boundary: BoundaryCondition | None = None, data: Mapping[str, Any] | None = None) -> Program:
    """A StencilFlow program from a launch sequence over named arrays of ``shape``; ``inputs``
    maps each input to its dims (``("i", "j", "k")`` or ``("i", "j")``); ``data`` optionally
    gives input values (arrays of those dims), kept in the program."""
    if len(shape) != 3:
        raise StencilFlowError(f"StencilFlow bridge: shape must be (ni, nj, nk), got {shape}")
    b = _Builder(name, tuple(int(n) for n in shape), inputs, outputs,
                 boundary or BoundaryCondition("constant", 0.0), data or {})
    for step in steps:
        if isinstance(step, GatherCopy):
            b.gather(step)
        else:
            _CallTranslator(b, step).run()
    return b.program()


class StencilProgramBridge:
    """``StencilProgramBridge(program, shape)()`` -> a validated StencilFlow :class:`Program`.

    With ``halo`` every call is placed as :meth:`StencilProgram.run` places it on arrays of
    ``shape`` with that halo (so horizontal regions map, and fields keep their values outside
    each call's compute domain); without it every call computes on the whole array."""

    def __init__(self, program: Any, shape: tuple[int, int, int],
                 boundary: BoundaryCondition = BoundaryCondition("constant", 0.0), halo: int | None = None) -> None:
        if len(shape) != 3:
            raise StencilFlowError(f"StencilProgram bridge: shape must be (ni, nj, nk), got {shape}")
        self.program = program
        self.shape = tuple(int(n) for n in shape)
        self.boundary = boundary
        self.halo = halo

    def placements(self) -> list[Placement | None]:
        n = len(self.program.accesses())
        if self.halo is None:
            return [None] * n
        h = self.halo
        out: list[Placement | None] = []
        for ilo, ihi, jlo, jhi in self.program.compute_extents():
            if ilo > h or jlo > h:
                raise StencilFlowError(f"StencilProgram bridge: halo {h} is smaller than a call's extent; "
                                       f"use halo >= {max(ilo, jlo)}")
            out.append(Placement((h - ilo, h - jlo, 0), (self.shape[0] - 2 * h + ilo + ihi,
                                                           self.shape[1] - 2 * h + jlo + jhi, self.shape[2])))
        return out

    def __call__(self) -> Program:
        prog = self.program
        steps = [BridgeCall(a.label, a.stencil_name, a.gtir, a.bindings, a.scalars, p)
                 for a, p in zip(prog.accesses(), self.placements())]
        return from_calls(prog.name, self.shape, {f: ITERS for f in prog.inputs}, prog.outputs, steps,
                          self.boundary)


def from_stencil_program(program: Any, shape: tuple[int, int, int],
                         boundary: BoundaryCondition | Mapping[str, Any] | None = None,
                         halo: int | None = None) -> Program:
    """Convenience wrapper of :class:`StencilProgramBridge`."""
    if isinstance(boundary, Mapping):
        boundary = BoundaryCondition(boundary.get("type", "constant"), float(boundary.get("value", 0.0)))
    return StencilProgramBridge(program, shape, boundary or BoundaryCondition("constant", 0.0), halo)()
