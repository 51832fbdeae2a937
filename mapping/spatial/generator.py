"""Synthetic StencilFlow programs: jacobi chains, chains/forks/diamonds of N stencils, random DAGs.

Every generator returns a JSON-compatible dict (write it with :func:`write_program`, load it
with :func:`mapping.spatial.model.load_program`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from mapping.spatial.expr import ITERATORS
from mapping.spatial.files import atomic_write_text

KINDS = ("chain", "fork", "diamond")


def _idx(iters: tuple[str, ...], offsets: dict[str, int]) -> str:
    parts = []
    for it in iters:
        d = offsets.get(it, 0)
        parts.append(it if d == 0 else f"{it}{d:+d}")
    return ",".join(parts)


def _jacobi_expr(src: str, iters: tuple[str, ...]) -> str:
    terms = [f"{src}[{_idx(iters, {})}]"]
    for it in iters:
        for d in (-1, 1):
            terms.append(f"{src}[{_idx(iters, {it: d})}]")
    return f"res = {1.0 / len(terms)!r} * ({' + '.join(terms)})"


def jacobi_chain(stencils: int, shape: tuple[int, ...], dtype: str = "float32", vectorization: int = 1) -> dict[str, Any]:
    """``stencils`` jacobi sweeps (2D 5-point or 3D 7-point) in a chain, constant-0 boundaries."""
    iters = ITERATORS[3 - len(shape):]
    prog: dict[str, Any] = {}
    src = "a"
    for n in range(stencils):
        name = f"s{n}"
        prog[name] = {
            "computation_string": _jacobi_expr(src, iters),
            "data_type": dtype,
            "boundary_conditions": {src: {"type": "constant", "value": 0.0}},
        }
        src = name
    return {
        "inputs": {"a": {"data_type": dtype, "input_dims": list(iters)}},
        "outputs": [src],
        "dimensions": list(shape),
        "vectorization": vectorization,
        "program": prog,
    }


def _stencil(srcs: list[str], iters: tuple[str, ...], rng: random.Random, dtype: str) -> dict[str, Any]:
    terms = []
    for s in srcs:
        it = rng.choice(iters)
        terms.append(f"{s}[{_idx(iters, {})}]")
        terms.append(f"{s}[{_idx(iters, {it: rng.choice((-1, 1))})}]")
    return {
        "computation_string": f"res = {1.0 / len(terms)!r} * ({' + '.join(terms)})",
        "data_type": dtype,
        "boundary_conditions": {s: {"type": "constant", "value": 0.0} for s in srcs},
    }


def synthetic(kind: str, stencils: int, shape: tuple[int, ...] = (32, 32, 32), seed: int = 0, dtype: str = "float32") -> dict[str, Any]:
    """A program of ``stencils`` stencils shaped as a chain, a fork/join, or a chain of diamonds."""
    if kind not in KINDS:
        raise ValueError(f"unknown synthetic kind {kind!r}; use one of {KINDS}")
    rng = random.Random(seed)
    iters = ITERATORS[3 - len(shape):]
    prog: dict[str, Any] = {}
    if kind == "chain":
        src = "a"
        for n in range(stencils):
            prog[f"s{n}"] = _stencil([src], iters, rng, dtype)
            src = f"s{n}"
        outputs = [src]
    elif kind == "fork":
        branches = max(1, stencils - 1)
        for n in range(branches):
            prog[f"b{n}"] = _stencil(["a"], iters, rng, dtype)
        prog["join"] = _stencil([f"b{n}" for n in range(branches)] + ["a"], iters, rng, dtype)
        outputs = ["join"]
    else:
        src = "a"
        n = 0
        while n < stencils:
            left, right, join = f"l{n}", f"r{n}", f"y{n}"
            prog[left] = _stencil([src], iters, rng, dtype)
            if n + 1 < stencils:
                prog[right] = _stencil([src, left] if rng.random() < 0.3 else [src], iters, rng, dtype)
            if n + 2 < stencils:
                srcs = [left, right] if n + 1 < stencils else [left]
                prog[join] = _stencil(srcs + ([src] if rng.random() < 0.5 else []), iters, rng, dtype)
                src = join
            else:
                src = right if n + 1 < stencils else left
            n += 3
        consumed = {f for spec in prog.values() for f in spec["boundary_conditions"]}
        outputs = [s for s in prog if s not in consumed]
    return {
        "inputs": {"a": {"data_type": dtype}},
        "outputs": outputs,
        "dimensions": list(shape),
        "program": prog,
    }


def random_dag(seed: int, stencils: int, shape: tuple[int, ...], inputs: int = 2, max_fan_in: int = 3) -> dict[str, Any]:
    """A random DAG (for property tests): each stencil reads 1..max_fan_in earlier fields at
    random offsets with random boundary conditions; unconsumed stencils are outputs."""
    rng = random.Random(seed)
    iters = ITERATORS[3 - len(shape):]
    fields = [f"in{n}" for n in range(inputs)]
    prog: dict[str, Any] = {}
    for n in range(stencils):
        srcs = rng.sample(fields, k=min(len(fields), rng.randint(1, max_fan_in)))
        terms = []
        bcs = {}
        for s in srcs:
            for _ in range(rng.randint(1, 3)):
                offs = {it: rng.randint(-2, 2) for it in iters if rng.random() < 0.5}
                terms.append(f"{rng.choice((0.5, 1.0, -0.25))} * {s}[{_idx(iters, offs)}]")
            kind = rng.choice(("constant", "copy", "shrink"))
            bcs[s] = {"type": kind, "value": round(rng.uniform(-1, 1), 2)}
        prog[f"s{n}"] = {"computation_string": "res = " + " + ".join(terms), "data_type": "float64", "boundary_conditions": bcs}
        fields.append(f"s{n}")
    consumed = {f for spec in prog.values() for f in spec["boundary_conditions"]}
    outputs = [s for s in prog if s not in consumed]
    return {
        "inputs": {f"in{n}": {"data_type": "float64"} for n in range(inputs)},
        "outputs": outputs,
        "dimensions": list(shape),
        "program": prog,
    }


def write_program(program: dict[str, Any], path: str | Path) -> Path:
    """Write a program dict as JSON (atomically)."""
    return atomic_write_text(path, json.dumps(program, indent=2) + "\n")
