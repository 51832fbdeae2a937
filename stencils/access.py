"""Which fields a GTScript stencil reads and writes, at which offsets, from GT4Py's GTIR.

Reads are composed through the stencil's internal temporaries: in COSMO's hdiff, ``out`` reads
the temporary ``flx`` at i-1, which reads ``lap`` at i+1, which reads ``in`` at i+-1, so the
analysis reports ``in`` read at offsets up to +-2, exactly what GT4Py's extent analysis finds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stencils.errors import StencilError
from stencils.gt4py_internals import eve, gtir, parse_gtir

Offset = tuple[int, int, int]
Deps = dict[str, set[Offset]]


@dataclass(frozen=True)
class StencilAccess:
    """Reads and writes of one stencil definition, in its own parameter names."""

    name: str
    fields: tuple[str, ...]
    scalars: tuple[str, ...]
    reads: Mapping[str, frozenset[Offset]]
    writes: Mapping[str, frozenset[Offset]]
    loop_orders: frozenset[str]
    variable_k: bool
    gtir: gtir.Stencil = field(repr=False, compare=False)

    @property
    def vertical_dependency(self) -> bool:
        """True if the stencil sweeps the column (FORWARD/BACKWARD), not just PARALLEL."""
        return bool(self.loop_orders - {"parallel"})


def gtir_of(definition: Callable[..., None], externals: Mapping[str, Any] | None = None) -> gtir.Stencil:
    """Parse a GTScript definition into GTIR (no code generation, no compilation)."""
    return parse_gtir(definition, externals)


class _ExprReads(eve.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[str, Offset, bool]] = []

    def visit_FieldAccess(self, node: gtir.FieldAccess) -> None:
        off = node.offset
        if isinstance(off, gtir.VariableKOffset):
            self.found.append((str(node.name), (0, 0, 0), True))
            self.visit(off.k)
        else:
            self.found.append((str(node.name), (off.i, off.j, off.k), False))
        self.visit(node.data_index)


def _reads_of(*exprs: Any) -> list[tuple[str, Offset, bool]]:
    visitor = _ExprReads()
    for expr in exprs:
        if expr is not None:
            visitor.visit(expr)
    return visitor.found


def _shift(deps: Deps, by: Offset) -> Deps:
    return {f: {(a + by[0], b + by[1], c + by[2]) for a, b, c in offs} for f, offs in deps.items()}


def _merge(into: Deps, other: Deps) -> None:
    for f, offs in other.items():
        into.setdefault(f, set()).update(offs)


def analyse(definition: Callable[..., None], externals: Mapping[str, Any] | None = None) -> StencilAccess:
    """Reads/writes of ``definition`` with offsets composed through temporaries."""
    ir = gtir_of(definition, externals)
    fields = tuple(str(p.name) for p in ir.params if isinstance(p, gtir.FieldDecl))
    scalars = tuple(str(p.name) for p in ir.params if isinstance(p, gtir.ScalarDecl))
    field_set = set(fields)
    # value of a temporary/already-written field at offset 0 -> the external reads it depends on
    computed: dict[str, Deps] = {}
    reads: Deps = {}
    writes: Deps = {}
    variable_k = False

    def resolve(accesses: list[tuple[str, Offset, bool]]) -> Deps:
        nonlocal variable_k
        deps: Deps = {}
        for name, off, var_k in accesses:
            variable_k |= var_k
            if name in computed:
                _merge(deps, _shift(computed[name], off))
            elif name in field_set:
                deps.setdefault(name, set()).add(off)
        _merge(reads, deps)
        return deps

    def walk(stmts: list[Any], conditions: list[Any]) -> None:
        for stmt in stmts:
            if isinstance(stmt, gtir.ParAssignStmt):
                deps = resolve(_reads_of(stmt.right, *conditions))
                target = str(stmt.left.name)
                prev = computed.get(target, {})
                _merge(deps, prev)  # assignments in other intervals/branches: union
                computed[target] = deps
                if target in field_set:
                    off = stmt.left.offset
                    writes.setdefault(target, set()).add((off.i, off.j, off.k))
            elif isinstance(stmt, (gtir.FieldIfStmt, gtir.ScalarIfStmt)):
                resolve(_reads_of(stmt.cond))
                walk(stmt.true_branch.body, conditions + [stmt.cond])
                if stmt.false_branch is not None:
                    walk(stmt.false_branch.body, conditions + [stmt.cond])
            elif isinstance(stmt, gtir.HorizontalRestriction):
                walk(stmt.body, conditions)
            elif isinstance(stmt, gtir.While):
                resolve(_reads_of(stmt.cond))
                walk(stmt.body, conditions + [stmt.cond])
            elif isinstance(stmt, gtir.BlockStmt):
                walk(stmt.body, conditions)
            else:
                raise StencilError(
                    f"stencil {ir.name!r}: access analysis does not know statement "
                    f"{type(stmt).__name__}"
                )

    orders = set()
    for loop in ir.vertical_loops:
        orders.add(str(loop.loop_order.name).lower())
        walk(loop.body, [])

    return StencilAccess(
        name=str(ir.name),
        fields=fields,
        scalars=scalars,
        reads={f: frozenset(o) for f, o in reads.items()},
        writes={f: frozenset(o) for f, o in writes.items()},
        loop_orders=frozenset(orders),
        variable_k=variable_k,
        gtir=ir,
    )
