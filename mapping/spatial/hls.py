"""HLS C++ code generation (Vitis style) and its g++ C-simulation.

One dataflow function per stencil (shift-register reuse buffers, ``#pragma HLS PIPELINE II=1``),
one reader per input and one writer per output, ``hls::stream`` channels with ``STREAM depth``
pragmas equal to the analysed capacities, ``#pragma HLS DATAFLOW`` at the top. Without a
vendor toolchain the code compiles with g++ against the portable ``include/hls_stream.h``
(threads + bounded blocking FIFOs + deadlock monitor): :class:`CSimulation` runs it on the
program's inputs and returns the outputs.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from mapping.spatial.analysis import Analysis, Window, sink_name, strides
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import Access, to_cpp
from mapping.spatial.files import atomic_write_text

log = logging.getLogger(__name__)

INCLUDE_DIR = Path(__file__).resolve().parent / "include"


def _ident(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def _chan_var(src: str, dst: str) -> str:
    return f"ch_{_ident(src)}__{_ident(dst)}"


class HLSEmitter:
    """Generates the HLS C++ of an analysed program; ``capacities`` overrides FIFO depths."""

    def __init__(self, analysis: Analysis, capacities: Mapping[str, int] | None = None) -> None:
        self.analysis = analysis
        self.depth = {c.name: int((capacities or {}).get(c.name, c.capacity)) for c in analysis.channels}

    # ------------------------------------------------------------------ pieces
    def _tok(self, ctype: str) -> str:
        """Stream element type: the scalar, or a vector of W points."""
        w = self.analysis.program.vectorization
        return ctype if w == 1 else f"sf_vec<{ctype}, {w}>"

    def _stencil_function(self, name: str) -> str:
        an, prog = self.analysis, self.analysis.program
        st = prog.stencils[name]
        info = an.stencils[name]
        w = prog.vectorization
        T = prog.points // w
        sd = strides(prog.shape)
        ctype = st.dtype.cpp
        ins = [c for c in an.channels if c.dst == name]
        outs = [c for c in an.channels if c.src == name]
        params = [f"hls::stream<{self._tok(prog.dtype_of(c.src).cpp)}>& in_{_ident(c.src)}" for c in ins]
        params += [f"hls::stream<{self._tok(ctype)}>& out_{k}" for k in range(len(outs))]
        S = max([info.windows[f].lookahead for f in st.inputs], default=0)
        lines = [f"// stencil '{name}': {st.source.strip()}", f"static void stencil_{_ident(name)}({', '.join(params)}) {{"]
        for f in st.inputs:
            win = info.windows[f]
            lines.append(f"  {prog.dtype_of(f).cpp} buf_{_ident(f)}[{win.reuse_tokens * w}];  // shift register, points {win.lo}..{win.hi}")
            lines.append(f"#pragma HLS ARRAY_PARTITION variable=buf_{_ident(f)} complete")
        lines.append(f"  for (long t = -{S}L; t < {T}L; ++t) {{")
        lines.append("#pragma HLS PIPELINE II=1")
        for f in st.inputs:
            win = info.windows[f]
            b, R, m, ft = f"buf_{_ident(f)}", win.reuse_tokens, win.lookahead, prog.dtype_of(f).cpp
            cond = f"t + {m} >= 0 && t + {m} < {T}L"
            lines.append(f"    for (int r = 0; r < {(R - 1) * w}; ++r) {b}[r] = {b}[r + {w}];")
            if w == 1:
                lines.append(f"    {b}[{R - 1}] = ({cond}) ? in_{_ident(f)}.read() : ({ft})0;")
            else:
                lines.append(f"    {{ {self._tok(ft)} x{{}}; if ({cond}) x = in_{_ident(f)}.read();")
                lines.append(f"      for (int l = 0; l < {w}; ++l) {b}[{(R - 1) * w} + l] = x.v[l]; }}")
        lines.append("    if (t < 0) continue;")
        ind = "    "
        if w > 1:
            lines.append(f"    {self._tok(ctype)} out_tok;")
            lines.append(f"    for (int l = 0; l < {w}; ++l) {{")
            lines.append("#pragma HLS UNROLL")
            ind = "      "
            lines.append(f"{ind}const long p = t * {w}L + l;")
        else:
            lines.append("    const long p = t;")
        coords = [f"c{d}" for d in range(len(prog.shape))]
        for c, s_, n in zip(coords, sd, prog.shape):
            lines.append(f"{ind}const long {c} = (p / {s_}L) % {n}L;")
        lines.append(f"{ind}bool valid = true;")
        lines.append(f"{ind}(void)valid;")
        names: dict[Access, str] = {}
        lane = "l" if w > 1 else "0"
        for k, acc in enumerate(sorted({a for f, offs in st.accesses.items() for a in (Access(f, o) for o in offs)},
                                       key=lambda a: (a.field, a.offset))):
            names[acc] = f"v{k}"
            lines += [ind + x for x in self._access(acc, f"v{k}", info.windows[acc.field], st.boundary[acc.field], coords, lane)]
        def index_name(it: str) -> str:
            return coords[prog.iterators.index(it)]

        for stmt in st.computation.statements[:-1]:
            code = to_cpp(stmt.value, names.__getitem__, ctype, index_name)
            lines.append(f"{ind}const {ctype} l_{stmt.target} = ({ctype})({code});")
        res = to_cpp(st.computation.result, names.__getitem__, ctype, index_name)
        lines.append(f"{ind}const {ctype} res = valid ? ({ctype})({res}) : ({ctype})0;")
        if w > 1:
            lines += [f"{ind}out_tok.v[l] = res;", "    }"]
            lines += [f"    out_{k}.write(out_tok);" for k in range(len(outs))]
        else:
            lines += [f"    out_{k}.write(res);" for k in range(len(outs))]
        lines += ["  }", "}", ""]
        return "\n".join(lines)

    def _access(self, acc: Access, var: str, win: Window, bc, coords: list[str], lane: str) -> list[str]:
        """C++ lines reading one access from the shift register (point p + offset) with its boundary."""
        prog = self.analysis.program
        w = prog.vectorization
        sd = strides(prog.shape)
        ft = prog.dtype_of(acc.field).cpp
        R, m = win.reuse_tokens, win.lookahead
        buf = f"buf_{_ident(acc.field)}"
        base = f"{lane} + {(R - 1 - m) * w}"  # flat index of point p in the register
        tgt = [f"({c} + {d})" for c, d in zip(coords, acc.offset)]
        inside = " && ".join(f"{t} >= 0 && {t} < {n}" for t, n, d in zip(tgt, prog.shape, acc.offset) if d) or "true"
        if bc.kind == "copy":
            clamp = [f"std::min<long>(std::max<long>({t}, 0L), {n - 1}L)" for t, n in zip(tgt, prog.shape)]
            lin = " + ".join(f"({cl} - {c}) * {s}L" for cl, c, s, d in zip(clamp, coords, sd, acc.offset) if d) or "0"
            return [f"const {ft} {var} = {buf}[{base} + ({lin})];"]
        lin = sum(d * s for d, s in zip(acc.offset, sd))
        idx = f"{base} + {lin}"
        if bc.kind == "shrink":
            return [f"const bool in_{var} = {inside};", f"valid = valid && in_{var};",
                    f"const {ft} {var} = in_{var} ? {buf}[{idx}] : ({ft})0;"]
        return [f"const {ft} {var} = ({inside}) ? {buf}[{idx}] : ({ft}){bc.value!r};"]

    def source(self) -> str:
        """The complete C++ translation unit (kernel + C-simulation main)."""
        an, prog = self.analysis, self.analysis.program
        w = prog.vectorization
        T = prog.points // w
        out = [
            f"// Generated by stratoflow mapping.spatial for program '{prog.name}' ({'x'.join(map(str, prog.shape))}).",
            "#include <algorithm>", "#include <cmath>", "#include <cstdint>", "#include <cstdio>", "#include <vector>",
            '#include "hls_stream.h"', "",
            "template <class T> static inline T sf_mod(T a, T b) { return a - b * (T)std::floor((double)a / (double)b); }",
            "template <class T, int W> struct sf_vec { T v[W]; };  // W points per stream token",
            "",
        ]
        for n, inp in prog.inputs.items():
            outs = [c for c in an.channels if c.src == n]
            if not outs:
                continue
            ct = inp.dtype.cpp
            params = [f"const {ct}* mem"] + [f"hls::stream<{self._tok(ct)}>& out_{k}" for k in range(len(outs))]
            sd_in = [prog.shape[prog.iterators.index(d)] for d in inp.dims]
            idx_terms = []
            for d in inp.dims:
                c = prog.iterators.index(d)
                inner = int(np.prod(sd_in[inp.dims.index(d) + 1:]))
                idx_terms.append(f"((p / {strides(prog.shape)[c]}L) % {prog.shape[c]}L) * {inner}L")
            idx = " + ".join(idx_terms) or "0"
            out.append(f"static void read_{_ident(n)}({', '.join(params)}) {{")
            out.append(f"  for (long t = 0; t < {T}L; ++t) {{\n#pragma HLS PIPELINE II=1")
            if w == 1:
                out.append(f"    const long p = t;\n    const {ct} v = mem[{idx}];")
            else:
                out.append(f"    {self._tok(ct)} v;\n    for (int l = 0; l < {w}; ++l) {{ const long p = t * {w}L + l; v.v[l] = mem[{idx}]; }}")
            out += [f"    out_{k}.write(v);" for k in range(len(outs))]
            out += ["  }", "}", ""]
        for n in prog.stencils:
            out.append(self._stencil_function(n))
        for o in prog.outputs:
            ct = prog.stencils[o].dtype.cpp
            out.append(f"static void write_{_ident(o)}(hls::stream<{self._tok(ct)}>& in, {ct}* mem) {{")
            body = "mem[t] = in.read();" if w == 1 else f"const auto x = in.read(); for (int l = 0; l < {w}; ++l) mem[t * {w}L + l] = x.v[l];"
            out.append(f"  for (long t = 0; t < {T}L; ++t) {{\n#pragma HLS PIPELINE II=1\n    {body}\n  }}\n}}\n")
        args = [f"const {prog.inputs[n].dtype.cpp}* {_ident(n)}" for n in prog.inputs]
        args += [f"{prog.stencils[o].dtype.cpp}* out_{_ident(o)}" for o in prog.outputs]
        out.append(f"void kernel({', '.join(args)}) {{")
        out.append("#pragma HLS DATAFLOW")
        for c in an.channels:
            var = _chan_var(c.src, c.dst)
            out.append(f'  hls::stream<{self._tok(prog.dtype_of(c.src).cpp)}> {var}("{c.name}", {self.depth[c.name]});')
            out.append(f"#pragma HLS STREAM variable={var} depth={self.depth[c.name]}")
        out.append("  hls::sim::Dataflow df;")
        for n in prog.inputs:
            chans = [_chan_var(c.src, c.dst) for c in an.channels if c.src == n]
            if chans:
                out.append(f"  df.spawn([&] {{ read_{_ident(n)}({', '.join([_ident(n), *chans])}); }});")
        for n in prog.stencils:
            ins = [_chan_var(c.src, c.dst) for c in an.channels if c.dst == n]
            outs = [_chan_var(c.src, c.dst) for c in an.channels if c.src == n]
            out.append(f"  df.spawn([&] {{ stencil_{_ident(n)}({', '.join(ins + outs)}); }});")
        for o in prog.outputs:
            out.append(f"  df.spawn([&] {{ write_{_ident(o)}({_chan_var(o, sink_name(o))}, out_{_ident(o)}); }});")
        out += ["  df.run();", "}", ""]
        out += self._main()
        return "\n".join(out)

    def _main(self) -> list[str]:
        prog = self.analysis.program
        lines = ["#ifndef __SYNTHESIS__", "// C simulation: argv = input files (raw, in program order), then output files.",
                 "int main(int argc, char** argv) {"]
        nin, nout = len(prog.inputs), len(prog.outputs)
        lines.append(f'  if (argc != {1 + nin + nout}) {{ std::fprintf(stderr, "usage: %s {nin} inputs {nout} outputs\\n", argv[0]); return 2; }}')
        for k, (n, inp) in enumerate(prog.inputs.items()):
            size = int(np.prod([prog.shape[prog.iterators.index(d)] for d in inp.dims]))
            v = f"in_{_ident(n)}"
            lines.append(f"  std::vector<{inp.dtype.cpp}> {v}({size});")
            lines.append(f'  {{ FILE* f = std::fopen(argv[{1 + k}], "rb"); if (!f || std::fread({v}.data(), sizeof({inp.dtype.cpp}), {size}, f) != {size}) {{ std::fprintf(stderr, "cannot read %s\\n", argv[{1 + k}]); return 2; }} std::fclose(f); }}')
        for o in prog.outputs:
            lines.append(f"  std::vector<{prog.stencils[o].dtype.cpp}> res_{_ident(o)}({prog.points});")
        call = [f"in_{_ident(n)}.data()" for n in prog.inputs] + [f"res_{_ident(o)}.data()" for o in prog.outputs]
        lines.append(f"  kernel({', '.join(call)});")
        for k, o in enumerate(prog.outputs):
            v = f"res_{_ident(o)}"
            lines.append(f'  {{ FILE* f = std::fopen(argv[{1 + nin + k}], "wb"); if (!f) return 2; std::fwrite({v}.data(), sizeof({v}[0]), {v}.size(), f); std::fclose(f); }}')
        lines += ["  return 0;", "}", "#endif", ""]
        return lines

    def write(self, directory: str | Path) -> Path:
        """Write ``<program>.cpp`` and the portable ``hls_stream.h`` into ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        path = atomic_write_text(d / f"{_ident(self.analysis.program.name)}.cpp", self.source())
        atomic_write_text(d / "hls_stream.h", (INCLUDE_DIR / "hls_stream.h").read_text())
        return path


class CSimulation:
    """Compiles the emitted code with g++ (-pthread) and runs it on the program's inputs."""

    def __init__(self, emitter: HLSEmitter, workdir: str | Path | None = None, timeout_s: float = 120.0) -> None:
        cxx = shutil.which("g++")
        if cxx is None:
            raise StencilFlowError("C simulation needs g++ on PATH; install it (apt-get install g++)")
        self.cxx = cxx
        self.emitter = emitter
        self.timeout_s = timeout_s
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="stratoflow-csim-"))
        src = emitter.write(self.workdir)
        self.source = src
        self.exe = self.workdir / "csim"
        cmd = [cxx, "-O1", "-std=c++17", "-ffp-contract=off", "-pthread", f"-I{self.workdir}", str(src), "-o", str(self.exe)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise StencilFlowError(f"compiling the generated HLS code failed ({' '.join(cmd)}):\n{proc.stderr[-4000:]}")

    def __call__(self, inputs: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        prog = self.emitter.analysis.program
        raw = prog.load_inputs() if inputs is None else inputs
        files = []
        for n, inp in prog.inputs.items():
            path = self.workdir / f"in_{_ident(n)}.bin"
            np.ascontiguousarray(raw[n], dtype=inp.dtype.numpy).tofile(path)
            files.append(str(path))
        outs = [self.workdir / f"out_{_ident(o)}.bin" for o in prog.outputs]
        try:
            proc = subprocess.run([str(self.exe), *files, *map(str, outs)], capture_output=True, text=True, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            raise StencilFlowError(f"C simulation of '{prog.name}' did not finish within {self.timeout_s} s") from None
        if proc.returncode == 3:
            raise StencilFlowError(f"C simulation of '{prog.name}' deadlocked: {proc.stderr.strip()}")
        if proc.returncode != 0:
            raise StencilFlowError(f"C simulation of '{prog.name}' failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        return {
            o: np.fromfile(path, dtype=prog.stencils[o].dtype.numpy).reshape(prog.shape)
            for o, path in zip(prog.outputs, outs)
        }
