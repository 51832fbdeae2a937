"""Expression IR of a stencil's per-point computation, parsed from Python syntax.

A computation is a sequence of assignments ``name = expr`` (separated by ``;`` or newlines);
the last assignment is the stencil's result, earlier ones are local values. Expressions use
field accesses with relative offsets (``a[i, j+1, k-1]``), numeric constants, names from the
program's ``constants``, arithmetic, comparisons, ``and``/``or``/``not``, ternaries
(``x if c else y``) and the math functions in :data:`FUNCTIONS`.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mapping.spatial.errors import StencilFlowError

ITERATORS = ("i", "j", "k")


@dataclass(frozen=True)
class Const:
    value: float | int | bool


@dataclass(frozen=True)
class Access:
    """A read of ``field`` at ``offset`` (one entry per program dimension, 0 where absent)."""

    field: str
    offset: tuple[int, ...]


@dataclass(frozen=True)
class Local:
    name: str


@dataclass(frozen=True)
class Index:
    """The value of an iterator (the output point's coordinate ``i``, ``j`` or ``k``)."""

    name: str


@dataclass(frozen=True)
class Unary:
    op: str  # "-", "+", "not"
    operand: Expr


@dataclass(frozen=True)
class Binary:
    op: str  # "+", "-", "*", "/", "//", "%", "**"
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Compare:
    op: str  # "<", "<=", ">", ">=", "==", "!="
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Logical:
    op: str  # "and", "or"
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Ternary:
    cond: Expr
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple[Expr, ...]


Expr = Const | Access | Local | Index | Unary | Binary | Compare | Logical | Ternary | Call


@dataclass(frozen=True)
class Function:
    """A math function: NumPy implementation, C++ spelling, arity, latency class."""

    numpy: Callable[..., Any]
    cpp: str
    arity: int
    latency: str


FUNCTIONS: dict[str, Function] = {
    "sqrt": Function(np.sqrt, "std::sqrt", 1, "sqrt"),
    "exp": Function(np.exp, "std::exp", 1, "exp"),
    "log": Function(np.log, "std::log", 1, "log"),
    "sin": Function(np.sin, "std::sin", 1, "trig"),
    "cos": Function(np.cos, "std::cos", 1, "trig"),
    "tan": Function(np.tan, "std::tan", 1, "trig"),
    "tanh": Function(np.tanh, "std::tanh", 1, "exp"),
    "atan": Function(np.arctan, "std::atan", 1, "trig"),
    "fabs": Function(np.abs, "std::abs", 1, "minmax"),
    "abs": Function(np.abs, "std::abs", 1, "minmax"),
    "floor": Function(np.floor, "std::floor", 1, "minmax"),
    "ceil": Function(np.ceil, "std::ceil", 1, "minmax"),
    "min": Function(np.minimum, "std::min", 2, "minmax"),
    "max": Function(np.maximum, "std::max", 2, "minmax"),
    "pow": Function(np.power, "std::pow", 2, "pow"),
}

_BINOPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


@dataclass(frozen=True)
class Assign:
    target: str
    value: Expr


@dataclass(frozen=True)
class Computation:
    """The parsed computation of one stencil: local assignments, then the result."""

    statements: tuple[Assign, ...]

    @property
    def result(self) -> Expr:
        return self.statements[-1].value

    def accesses(self) -> dict[str, frozenset[tuple[int, ...]]]:
        """Field name -> the set of offsets it is read at."""
        found: dict[str, set[tuple[int, ...]]] = {}
        for st in self.statements:
            for node in walk(st.value):
                if isinstance(node, Access):
                    found.setdefault(node.field, set()).add(node.offset)
        return {name: frozenset(offs) for name, offs in found.items()}


def children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, (Binary, Compare, Logical)):
        return (node.left, node.right)
    if isinstance(node, Ternary):
        return (node.cond, node.then, node.other)
    if isinstance(node, Call):
        return node.args
    return ()


def walk(node: Expr):
    """All nodes of an expression tree, parents first."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(children(cur))


class _Parser:
    """Converts Python AST of one computation string into the expression IR."""

    def __init__(
        self,
        stencil: str,
        source: str,
        iterators: Sequence[str],
        field_dims: Mapping[str, Sequence[str]],
        constants: Mapping[str, float],
    ) -> None:
        self.stencil = stencil
        self.source = source
        self.iterators = tuple(iterators)
        self.field_dims = field_dims
        self.constants = constants
        self.locals: set[str] = set()

    def fail(self, node: ast.AST | None, what: str) -> StencilFlowError:
        where = ""
        if node is not None and hasattr(node, "lineno"):
            where = f" at line {node.lineno}, column {node.col_offset + 1}"
        return StencilFlowError(
            f"stencil '{self.stencil}': computation_string {self.source!r}{where}: {what}"
        )

    def parse(self) -> Computation:
        try:
            tree = ast.parse(self.source.strip(), mode="exec")
        except SyntaxError as exc:
            raise StencilFlowError(
                f"stencil '{self.stencil}': cannot parse computation_string {self.source!r} at "
                f"line {exc.lineno}, column {exc.offset}: {exc.msg}; write Python syntax such as "
                f"'res = 0.5 * (a[i,j,k-1] + a[i,j,k+1])'"
            ) from None
        if not tree.body:
            raise self.fail(None, "is empty; write at least one assignment 'res = ...'")
        statements = []
        for st in tree.body:
            if not (
                isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            ):
                raise self.fail(st, "every statement must be an assignment 'name = expression'")
            target = st.targets[0].id
            value = self.expr(st.value)
            statements.append(Assign(target, value))
            self.locals.add(target)
        return Computation(tuple(statements))

    def expr(self, node: ast.AST) -> Expr:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bool, int, float)):
                return Const(node.value)
            raise self.fail(node, f"unsupported constant {node.value!r} (numbers only)")
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return Local(node.id)
            if node.id in self.constants:
                return Const(self.constants[node.id])
            if node.id in self.iterators:
                return Index(node.id)
            if node.id in self.field_dims:
                dims = self.field_dims[node.id]
                if dims:
                    raise self.fail(node, f"field '{node.id}' must be indexed, e.g. {node.id}[{', '.join(dims)}]")
                return Access(node.id, (0,) * len(self.iterators))
            raise self.fail(
                node, f"undefined name '{node.id}': not an input, a stencil, a constant or an earlier local"
            )
        if isinstance(node, ast.Subscript):
            return self.access(node)
        if isinstance(node, ast.UnaryOp):
            ops = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}
            if type(node.op) not in ops:
                raise self.fail(node, f"unsupported unary operator {type(node.op).__name__}")
            return Unary(ops[type(node.op)], self.expr(node.operand))
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINOPS:
                raise self.fail(node, f"unsupported operator {type(node.op).__name__}")
            return Binary(_BINOPS[type(node.op)], self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.Compare):
            parts: list[Expr] = []
            left = self.expr(node.left)
            for op, comp in zip(node.ops, node.comparators):
                if type(op) not in _CMPOPS:
                    raise self.fail(node, f"unsupported comparison {type(op).__name__}")
                right = self.expr(comp)
                parts.append(Compare(_CMPOPS[type(op)], left, right))
                left = right
            out = parts[0]
            for p in parts[1:]:
                out = Logical("and", out, p)
            return out
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            vals = [self.expr(v) for v in node.values]
            out = vals[0]
            for v in vals[1:]:
                out = Logical(op, out, v)
            return out
        if isinstance(node, ast.IfExp):
            return Ternary(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name not in FUNCTIONS:
                raise self.fail(node, f"unknown function {name!r}; supported: {', '.join(sorted(FUNCTIONS))}")
            fn = FUNCTIONS[name]
            if len(node.args) != fn.arity or node.keywords:
                raise self.fail(node, f"{name}() takes {fn.arity} positional argument(s)")
            return Call(name, tuple(self.expr(a) for a in node.args))
        raise self.fail(node, f"unsupported syntax {type(node).__name__}")

    def access(self, node: ast.Subscript) -> Access:
        if not isinstance(node.value, ast.Name):
            raise self.fail(node, "only fields can be indexed")
        field = node.value.id
        if field not in self.field_dims:
            raise self.fail(node, f"undefined field '{field}' (not an input or a stencil of the program)")
        dims = tuple(self.field_dims[field])
        idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(idx) != len(dims):
            raise self.fail(
                node,
                f"field '{field}' has dimensions [{', '.join(dims)}] but is indexed with {len(idx)} "
                f"index(es); write {field}[{', '.join(dims)}] with relative offsets",
            )
        offset = dict.fromkeys(self.iterators, 0)
        for dim, ix in zip(dims, idx):
            name, off = self._index(ix)
            if name != dim:
                raise self.fail(
                    ix, f"index '{name}' of field '{field}' must be '{dim}' (dimensions [{', '.join(dims)}])"
                )
            offset[dim] = off
        return Access(field, tuple(offset[d] for d in self.iterators))

    def _index(self, node: ast.AST) -> tuple[str, int]:
        if isinstance(node, ast.Name):
            return node.id, 0
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, (ast.Add, ast.Sub))
            and isinstance(node.left, ast.Name)
            and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, int)
        ):
            sign = 1 if isinstance(node.op, ast.Add) else -1
            return node.left.id, sign * node.right.value
        raise self.fail(node, "indices must be an iterator plus/minus an integer constant, e.g. j+1")


def parse_computation(
    stencil: str,
    source: str,
    iterators: Sequence[str],
    field_dims: Mapping[str, Sequence[str]],
    constants: Mapping[str, float] | None = None,
) -> Computation:
    """Parse ``source`` of stencil ``stencil``; ``field_dims`` maps readable fields to their dims."""
    return _Parser(stencil, source, iterators, field_dims, constants or {}).parse()


# ----------------------------------------------------------------------------- evaluation


def evaluate(
    comp: Computation,
    read: Callable[[Access], np.ndarray],
    dtype: np.dtype,
    index: Callable[[str], np.ndarray] | None = None,
) -> np.ndarray:
    """Vectorised NumPy evaluation; ``read`` returns the values of one access, ``index`` the
    coordinates of an iterator at the evaluated points."""
    env: dict[str, Any] = {}
    cache: dict[Access, np.ndarray] = {}

    def ev(node: Expr) -> Any:
        if isinstance(node, Const):
            return node.value
        if isinstance(node, Access):
            if node not in cache:
                cache[node] = read(node)
            return cache[node]
        if isinstance(node, Local):
            return env[node.name]
        if isinstance(node, Index):
            if index is None:
                raise StencilFlowError(f"internal: iterator '{node.name}' used without coordinates")
            return index(node.name)
        if isinstance(node, Unary):
            v = ev(node.operand)
            return np.logical_not(v) if node.op == "not" else (-v if node.op == "-" else v)
        if isinstance(node, Binary):
            a, b = ev(node.left), ev(node.right)
            if node.op == "+":
                return a + b
            if node.op == "-":
                return a - b
            if node.op == "*":
                return a * b
            if node.op == "/":
                return np.true_divide(a, b) if np.issubdtype(dtype, np.floating) else np.floor_divide(a, b)
            if node.op == "//":
                return np.floor_divide(a, b)
            if node.op == "%":
                return np.mod(a, b)
            return np.power(a, b)
        if isinstance(node, Compare):
            a, b = ev(node.left), ev(node.right)
            return {
                "<": np.less, "<=": np.less_equal, ">": np.greater,
                ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal,
            }[node.op](a, b)
        if isinstance(node, Logical):
            a, b = ev(node.left), ev(node.right)
            return np.logical_and(a, b) if node.op == "and" else np.logical_or(a, b)
        if isinstance(node, Ternary):
            return np.where(ev(node.cond), ev(node.then), ev(node.other))
        if isinstance(node, Call):
            return FUNCTIONS[node.func].numpy(*(ev(a) for a in node.args))
        raise StencilFlowError(f"internal: unknown expression node {node!r}")

    with np.errstate(all="ignore"):
        for st in comp.statements:
            env[st.target] = ev(st.value)
        return env[comp.statements[-1].target]


# ----------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class OperationLatencies:
    """Pipeline latency in cycles of each operation class on a target (configurable)."""

    add: int = 3
    mul: int = 3
    div: int = 16
    compare: int = 1
    select: int = 1
    logical: int = 1
    sqrt: int = 16
    exp: int = 20
    log: int = 20
    trig: int = 30
    pow: int = 30
    minmax: int = 1
    io: int = 1  # register stage on the input and on the output


def count_operations(comp: Computation) -> int:
    """Arithmetic/logic operations per point (field reads and constants are free)."""
    n = 0
    for st in comp.statements:
        for node in walk(st.value):
            if isinstance(node, (Binary, Compare, Logical, Ternary, Call)):
                n += 1
            elif isinstance(node, Unary) and node.op != "+":
                n += 1
    return n


def _op_latency(node: Expr, lat: OperationLatencies) -> int:
    if isinstance(node, Binary):
        return {"+": lat.add, "-": lat.add, "*": lat.mul, "/": lat.div, "//": lat.div,
                "%": lat.div, "**": lat.pow}[node.op]
    if isinstance(node, Unary):
        return lat.logical if node.op == "not" else (lat.add if node.op == "-" else 0)
    if isinstance(node, Compare):
        return lat.compare
    if isinstance(node, Logical):
        return lat.logical
    if isinstance(node, Ternary):
        return lat.select
    if isinstance(node, Call):
        return getattr(lat, FUNCTIONS[node.func].latency)
    return 0


def pipeline_latency(comp: Computation, lat: OperationLatencies) -> int:
    """Critical-path latency of the computation (cycles), plus the I/O register stages."""
    local_depth: dict[str, int] = {}

    def depth(node: Expr) -> int:
        if isinstance(node, Local):
            return local_depth[node.name]
        kids = children(node)
        return _op_latency(node, lat) + (max(depth(c) for c in kids) if kids else 0)

    for st in comp.statements:
        local_depth[st.target] = depth(st.value)
    return local_depth[comp.statements[-1].target] + 2 * lat.io


def carried_latency(comp: Computation, own: str, lat: OperationLatencies) -> int:
    """Cycles from a recurrence's read of its own output (``own``) to its result: the
    loop-carried path, which must fit in the distance between levels for one point per cycle."""
    local_depth: dict[str, int | None] = {}

    def depth(node: Expr) -> int | None:
        if isinstance(node, Local):
            return local_depth[node.name]
        if isinstance(node, Access):
            return 0 if node.field == own else None
        below = [d for d in (depth(c) for c in children(node)) if d is not None]
        return _op_latency(node, lat) + max(below) if below else None

    for st in comp.statements:
        local_depth[st.target] = depth(st.value)
    return local_depth[comp.statements[-1].target] or 0


# ----------------------------------------------------------------------------- C++


def cpp_number(value: float) -> str:
    """A C++ literal for ``value`` (integers exact; infinities and NaN through ``<limits>``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) < 2**63 else repr(float(value))
    if math.isnan(value):
        return "std::numeric_limits<double>::quiet_NaN()"
    if math.isinf(value):
        return f"{'-' if value < 0 else ''}std::numeric_limits<double>::infinity()"
    return repr(float(value))


def to_cpp(
    node: Expr, access_name: Callable[[Access], str], ctype: str, index_name: Callable[[str], str] | None = None
) -> str:
    """C++ source of an expression (fields via ``access_name``, iterators via ``index_name``),
    computed in ``ctype``."""

    def c(n: Expr) -> str:
        if isinstance(n, Const):
            if isinstance(n.value, bool):
                return "true" if n.value else "false"
            return f"(({ctype}){cpp_number(n.value)})"
        if isinstance(n, Access):
            return access_name(n)
        if isinstance(n, Local):
            return f"l_{n.name}"
        if isinstance(n, Index):
            if index_name is None:
                raise StencilFlowError(f"internal: iterator '{n.name}' has no C++ name")
            return f"(({ctype}){index_name(n.name)})"
        if isinstance(n, Unary):
            return f"(!{c(n.operand)})" if n.op == "not" else f"({n.op}{c(n.operand)})"
        if isinstance(n, Binary):
            if n.op == "**":
                return f"(({ctype})std::pow({c(n.left)}, {c(n.right)}))"
            if n.op == "//":
                return f"(({ctype})std::floor((double){c(n.left)} / (double){c(n.right)}))"
            if n.op == "%":
                return f"(({ctype})sf_mod({c(n.left)}, {c(n.right)}))"
            return f"({c(n.left)} {n.op} {c(n.right)})"
        if isinstance(n, Compare):
            return f"({c(n.left)} {n.op} {c(n.right)})"
        if isinstance(n, Logical):
            return f"({c(n.left)} {'&&' if n.op == 'and' else '||'} {c(n.right)})"
        if isinstance(n, Ternary):
            return f"(({c(n.cond)}) ? ({ctype})({c(n.then)}) : ({ctype})({c(n.other)}))"
        if isinstance(n, Call):
            fn = FUNCTIONS[n.func]
            args = ", ".join(f"({ctype})({c(a)})" for a in n.args)
            return f"(({ctype}){fn.cpp}({args}))"
        raise StencilFlowError(f"internal: unknown expression node {n!r}")

    return c(node)


# ----------------------------------------------------------------------------- Python source


def to_source(node: Expr, iterators: Sequence[str], field_dims: Mapping[str, Sequence[str]] | None = None) -> str:
    """Python-syntax source of an expression (the inverse of the parser), e.g. ``a[i, j+1, k]``."""

    def idx(acc: Access) -> str:
        dims = (field_dims or {}).get(acc.field, iterators)
        parts = []
        for it, d in zip(iterators, acc.offset):
            if it in dims:
                parts.append(it if d == 0 else f"{it}{d:+d}")
        return f"{acc.field}[{', '.join(parts)}]"

    def s(n: Expr) -> str:
        if isinstance(n, Const):
            return repr(n.value)
        if isinstance(n, Access):
            return idx(n)
        if isinstance(n, (Local, Index)):
            return n.name
        if isinstance(n, Unary):
            return f"(not {s(n.operand)})" if n.op == "not" else f"({n.op}{s(n.operand)})"
        if isinstance(n, (Binary, Compare, Logical)):
            return f"({s(n.left)} {n.op} {s(n.right)})"
        if isinstance(n, Ternary):
            return f"({s(n.then)} if {s(n.cond)} else {s(n.other)})"
        if isinstance(n, Call):
            return f"{n.func}({', '.join(s(a) for a in n.args)})"
        raise StencilFlowError(f"internal: unknown expression node {n!r}")

    return s(node)
