"""NumPy reference executor: evaluates a program on whole N-D arrays (padding for boundaries).

This is the ground truth the streaming simulator, the generated HLS C++ and the DaCe SDFG are
checked against. It shares no indexing code with them (they work on linearised streams).
"""

from __future__ import annotations

import numpy as np

from mapping.spatial.expr import Access, evaluate
from mapping.spatial.model import Program, Stencil


def broadcast_input(prog: Program, name: str, array: np.ndarray) -> np.ndarray:
    """An input with a subset of the dims, broadcast to the full domain."""
    dims = prog.inputs[name].dims
    shape = tuple(n if it in dims else 1 for it, n in zip(prog.iterators, prog.shape))
    return np.broadcast_to(array.reshape(shape), prog.shape)


class ReferenceExecutor:
    """Runs a :class:`Program` with NumPy; ``__call__(inputs) -> {field: array}`` for all stencils."""

    def __init__(self, program: Program) -> None:
        self.program = program

    def __call__(self, inputs: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        prog = self.program
        raw = prog.load_inputs() if inputs is None else inputs
        fields = {n: broadcast_input(prog, n, np.asarray(raw[n], dtype=prog.inputs[n].dtype.numpy)) for n in prog.inputs}
        for st in prog.stencils.values():
            if st.recurrence:
                fields[st.name] = self._recurrence(st, fields)
                continue
            fields[st.name] = self._stencil(st, fields)
        return {n: fields[n] for n in prog.stencils}

    def _recurrence(self, st: Stencil, fields: dict[str, np.ndarray]) -> np.ndarray:
        """A recurrence level by level in its direction, each level reading the ones before."""
        prog = self.program
        out = np.zeros(prog.shape, dtype=st.dtype.numpy)
        levels = range(prog.shape[-1]) if st.recurrence < 0 else range(prog.shape[-1] - 1, -1, -1)
        for kk in levels:
            out[..., kk] = self._stencil(st, {**fields, st.name: out})[..., kk]
        return out

    def _stencil(self, st: Stencil, fields: dict[str, np.ndarray]) -> np.ndarray:
        prog = self.program
        padded: dict[str, tuple[np.ndarray, tuple[int, ...]]] = {}
        valid = np.ones(prog.shape, dtype=bool)
        for fname, offs in st.accesses.items():
            halo = tuple(max(abs(o[c]) for o in offs) for c in range(len(prog.shape)))
            bc = st.boundary[fname]
            pad = [(h, h) for h in halo]
            if bc.kind == "copy":
                arr = np.pad(fields[fname], pad, mode="edge")
            else:
                value = bc.value if bc.kind == "constant" else 0
                arr = np.pad(fields[fname], pad, mode="constant", constant_values=value)
            padded[fname] = (arr, halo)
            if bc.kind == "shrink":
                for o in offs:
                    valid &= self._inside(o)

        def read(acc: Access, padded=padded) -> np.ndarray:
            arr, halo = padded[acc.field]
            sl = tuple(slice(h + d, h + d + n) for h, d, n in zip(halo, acc.offset, prog.shape))
            return arr[sl]

        out = evaluate(st.computation, read, st.dtype.numpy, self._index)
        out = np.array(np.broadcast_to(out, prog.shape), dtype=st.dtype.numpy)
        out[~valid] = 0
        return out

    def _index(self, name: str) -> np.ndarray:
        """Coordinates of iterator ``name`` over the domain (broadcastable)."""
        prog = self.program
        c = prog.iterators.index(name)
        shape = [1] * len(prog.shape)
        shape[c] = prog.shape[c]
        return np.arange(prog.shape[c]).reshape(shape)

    def _inside(self, offset: tuple[int, ...]) -> np.ndarray:
        """Mask of points whose neighbour at ``offset`` lies in the domain."""
        prog = self.program
        mask = np.ones(prog.shape, dtype=bool)
        for c, (d, n) in enumerate(zip(offset, prog.shape)):
            idx = np.arange(n) + d
            ok = (idx >= 0) & (idx < n)
            shape = [1] * len(prog.shape)
            shape[c] = n
            mask &= ok.reshape(shape)
        return mask
