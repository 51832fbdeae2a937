"""HLS C++ code generation (Vitis style) and its g++ C-simulation.

One dataflow process per input (reader), per stencil and per output (writer), connected by
``hls::stream`` channels declared as Vitis declares them (``hls::stream<T> ch("name");`` and
``#pragma HLS STREAM variable=ch depth=D``, D the analysed capacity), under ``#pragma HLS
DATAFLOW`` in an ``extern "C" kernel``. Each stencil keeps its reuse buffers as tap registers
(the stages an access reads) joined by delay lines: a delay line of up to
:data:`SHIFT_REGISTER_MAX_BYTES` is a shift register (``ARRAY_PARTITION complete``), a longer one
a circular buffer in BRAM (``BIND_STORAGE type=ram_2p impl=bram``); the bytes declared equal the
model's reuse bytes. Under ``__SYNTHESIS__`` the kernel is the plain sequence of process calls and
includes the vendor's ``<hls_stream.h>``; otherwise it includes the portable
``include/hls_stream.h`` (bounded blocking FIFOs of the STREAM depths, one thread per process, a
deadlock monitor), and :class:`CSimulation` compiles it with g++ and runs it on the program's
inputs.
"""

from __future__ import annotations

import itertools
import logging
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from mapping.spatial.analysis import Analysis, Channel, Window, sink_name, strides
from mapping.spatial.errors import StencilFlowError
from mapping.spatial.expr import Access, cpp_number, to_cpp
from mapping.spatial.files import atomic_write_text
from mapping.spatial.model import BoundaryCondition

log = logging.getLogger(__name__)

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
SHIFT_REGISTER_MAX_BYTES = 128  # delay lines up to this size are registers; longer ones BRAM
FIFO_BRAM_MIN_BYTES = 1024  # streams of at least this many bytes are bound to BRAM


def comment(text: str, prefix: str = "") -> list[str]:
    """``text`` as ``//`` comment lines: one per source line, never continued into code.

    Control characters become ``?``, ``??`` is split (no trigraphs) and a trailing backslash
    (a line splice) is followed by a marker.
    """
    out = []
    for line in text.splitlines() or [""]:
        clean = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in line).rstrip()
        clean = clean.replace("??", "? ?")
        if clean.endswith("\\"):
            clean += " (line continues)"
        out.append(f"// {prefix}{clean}".rstrip())
    return out


def c_string(text: str) -> str:
    """A C++ string literal of ``text`` (printable ASCII kept, everything else as octal escapes)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        out.append(ch if 32 <= b < 127 and ch not in '"\\?' else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_identifiers(names: Iterable[str]) -> list[str]:
    """Distinct C identifiers for ``names``, in order (non-alphanumerics become ``_``, clashes
    get a numeric suffix)."""
    out: list[str] = []
    used: set[str] = set()
    for n in names:
        base = "".join(ch if ch.isascii() and ch.isalnum() else "_" for ch in n) or "f"
        if base[0].isdigit():
            base = "f" + base
        ident, k = base, 1
        while ident in used:
            ident, k = f"{base}_{k}", k + 1
        used.add(ident)
        out.append(ident)
    return out


class HLSEmitter:
    """Generates the HLS C++ of an analysed program; ``capacities`` overrides FIFO depths."""

    def __init__(self, analysis: Analysis, capacities: Mapping[str, int] | None = None) -> None:
        self.analysis = analysis
        prog = analysis.program
        for st in prog.stencils.values():
            if st.recurrence and prog.vectorization != 1:
                raise StencilFlowError(
                    f"HLS: stencil '{st.name}' is a vertical recurrence (reads itself at k"
                    f"{'-' if st.recurrence < 0 else '+'}d); it streams one point per cycle: use vectorization 1"
                )
        self.depth = {c.name: int((capacities or {}).get(c.name, c.capacity)) for c in analysis.channels}
        fields = [*prog.inputs, *prog.stencils]
        self.ident = dict(zip(fields, c_identifiers(fields)))
        chans = c_identifiers(f"ch_{self.ident[c.src]}__{self.ident.get(c.dst, 'write')}" for c in analysis.channels)
        self.chan_var = {c.name: v for c, v in zip(analysis.channels, chans)}

    # ------------------------------------------------------------------ pieces
    def _tok(self, ctype: str) -> str:
        """Stream element type: the scalar, or a vector of W points."""
        w = self.analysis.program.vectorization
        return ctype if w == 1 else f"sf_vec<{ctype}, {w}>"

    def _delay_line_is_bram(self, tokens: int, token_bytes: int) -> bool:
        return tokens * token_bytes > SHIFT_REGISTER_MAX_BYTES

    def _reuse_buffer(self, f: str, win: Window) -> tuple[list[str], list[str]]:
        """Declarations and per-step update of the reuse buffer of input ``f``: tap registers
        ``r_<f>_<stage>`` joined by delay lines ``d_<f>_<stage>`` (oldest stage updated first)."""
        prog = self.analysis.program
        w = prog.vectorization
        fid, ft = self.ident[f], prog.dtype_of(f).cpp
        tt, tok_bytes = self._tok(ft), w * prog.dtype_of(f).bytes
        R, m, T = win.reuse_tokens, win.lookahead, prog.points // w
        taps = win.taps
        decl = [f"  // input '{f}': points {win.lo}..{win.hi}, {win.kept_tokens} of {R} tokens kept "
                f"(stages {taps[0]}..{R - 1}), taps at stages {', '.join(map(str, taps))}"]
        decl += [f"  {tt} r_{fid}_{s}{{}};" for s in taps]
        cond = f"t + {m} >= 0 && t + {m} < {T}L"
        step = [f"    {{  // input '{f}': next token in, every stage one older (oldest first)"]
        if w == 1:
            step.append(f"      const {ft} x = ({cond}) ? in_{fid}.read() : ({ft})0;")
        else:
            step.append(f"      {tt} x{{}};")
            step.append(f"      if ({cond}) x = in_{fid}.read();")
        for i, s in enumerate(taps):
            newer = taps[i + 1] if i + 1 < len(taps) else None
            src = f"r_{fid}_{newer}" if newer is not None else "x"
            gap = (newer - s - 1) if newer is not None else (R - 1 - s)
            dst = f"r_{fid}_{s}"
            if gap == 0:
                step.append(f"      {dst} = {src};")
                continue
            d = f"d_{fid}_{s}"
            decl.append(f"  {tt} {d}[{gap}];  // delay line: stages {s + 1}..{s + gap}")
            if self._delay_line_is_bram(gap, tok_bytes):
                q = f"q_{fid}_{s}"
                decl += [f"#pragma HLS BIND_STORAGE variable={d} type=ram_2p impl=bram",
                         f"#pragma HLS DEPENDENCE variable={d} inter false",
                         f"  int {q} = 0;"]
                step.append(f"      {{ const {tt} o = {d}[{q}]; {d}[{q}] = {src}; "
                            f"{q} = ({q} == {gap - 1}) ? 0 : {q} + 1; {dst} = o; }}")
            else:
                decl.append(f"#pragma HLS ARRAY_PARTITION variable={d} complete")
                step.append(f"      {{ const {tt} o = {d}[0]; for (int r = 0; r < {gap - 1}; ++r) "
                            f"{d}[r] = {d}[r + 1]; {d}[{gap - 1}] = {src}; {dst} = o; }}")
        step.append("    }")
        return decl, step

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
        params = [f"hls::stream<{self._tok(prog.dtype_of(c.src).cpp)}>& in_{self.ident[c.src]}" for c in ins]
        params += [f"hls::stream<{self._tok(ctype)}>& out_{k}" for k in range(len(outs))]
        S = max([info.windows[f].lookahead for f in st.inputs], default=0)
        lines = comment(f"stencil '{name}':") + comment(st.source.strip(), "  ")
        lines.append(f"static void stencil_{self.ident[name]}({', '.join(params)}) {{")
        steps = []
        for f in st.inputs:
            decl, step = self._reuse_buffer(f, info.windows[f])
            lines += decl
            steps += step
        if st.recurrence < 0:
            depth = max(-o[-1] for o in st.accesses[name])
            lines += [f"  {ctype} hist[{depth}] = {{}};  // own outputs of the last {depth} levels",
                      "#pragma HLS ARRAY_PARTITION variable=hist complete"]
        elif st.recurrence > 0:
            lines += [f"  {ctype} col[{prog.shape[-1]}] = {{}};  // the column's outputs, computed at its first level",
                      "#pragma HLS ARRAY_PARTITION variable=col complete"]
        lines.append(f"  for (long t = -{S}L; t < {T}L; ++t) {{")
        lines.append("#pragma HLS PIPELINE II=1")
        lines += steps
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
        if st.recurrence < 0:  # FORWARD: the last D outputs (levels k-1 .. k-D of this column)
            depth = max(-o[-1] for o in st.accesses[name])
            lines += self._point(name, coords, 0, ind, "res")
            lines.append(f"{ind}for (int r = {depth - 1}; r > 0; --r) hist[r] = hist[r - 1];")
            lines.append(f"{ind}hist[0] = res;")
        elif st.recurrence > 0:  # BACKWARD: the whole column at its first level, top down
            nk = prog.shape[-1]
            lines.append(f"{ind}if ({coords[-1]} == 0) {{")
            for kk in range(nk - 1, -1, -1):
                lines.append(f"{ind}  {{  // level {kk}")
                lines += self._point(name, [*coords[:-1], f"{kk}L"], kk, ind + "    ", f"col[{kk}]")
                lines.append(f"{ind}  }}")
            lines.append(f"{ind}}}")
            lines.append(f"{ind}const {ctype} res = col[{coords[-1]}];")
        else:
            lines += self._point(name, coords, 0, ind, "res")
        if w > 1:
            lines += [f"{ind}out_tok.v[l] = res;", "    }"]
            lines += [f"    out_{k}.write(out_tok);" for k in range(len(outs))]
        else:
            lines += [f"    out_{k}.write(res);" for k in range(len(outs))]
        lines += ["  }", "}", ""]
        return "\n".join(lines)

    def _point(self, name: str, coords: list[str], shift: int, ind: str, target: str) -> list[str]:
        """C++ lines computing stencil ``name`` at the point ``shift`` points after ``p`` (at
        ``coords``) into ``target`` (declared as ``res`` when it is ``res``)."""
        an, prog = self.analysis, self.analysis.program
        st, info = prog.stencils[name], an.stencils[name]
        ctype = st.dtype.cpp
        lines = [f"{ind}bool valid = true;", ind + " ".join(f"(void){v};" for v in [*coords, "valid"])]
        names: dict[Access, str] = {}
        accesses = sorted({Access(f, o) for f, offs in st.accesses.items() for o in offs},
                          key=lambda a: (a.field, a.offset))
        for k, acc in enumerate(accesses):
            names[acc] = f"v{k}"
            bc = st.boundary[acc.field]
            if acc.field == name:  # a recurrence's own level k -+ d
                d = acc.offset[-1]
                own = f"hist[{-d - 1}]" if d < 0 else f"col[{shift + d}]"
                inside = f"({coords[-1]} + {d}) >= 0" if d < 0 else f"{shift + d} < {prog.shape[-1]}"
                if d > 0 and shift + d >= prog.shape[-1]:
                    own = f"({ctype})0"
                lines.append(f"{ind}const {ctype} v{k} = ({inside}) ? {own} : ({ctype})({cpp_number(bc.value)});")
                continue
            lines += [ind + x for x in self._access(acc, f"v{k}", info.windows[acc.field], bc, coords, shift)]

        def index_name(it: str) -> str:
            return coords[prog.iterators.index(it)]

        for stmt in st.computation.statements[:-1]:
            code = to_cpp(stmt.value, names.__getitem__, ctype, index_name)
            lines.append(f"{ind}const {ctype} l_{stmt.target} = ({ctype})({code});")
        res = to_cpp(st.computation.result, names.__getitem__, ctype, index_name)
        decl = f"const {ctype} " if target == "res" else ""
        lines.append(f"{ind}{decl}{target} = valid ? ({ctype})({res}) : ({ctype})0;")
        return lines

    def _tap(self, fid: str, win: Window, flat: int) -> str:
        """The value at flat register offset ``flat`` from lane 0's centre, for lane ``l``."""
        w = self.analysis.program.vectorization
        c = (win.reuse_tokens - 1 - win.lookahead) * w + flat
        q, r = divmod(c, w)
        used = {q} if r == 0 or w == 1 else {q, q + 1}
        if not used <= set(win.taps):
            raise StencilFlowError(f"internal: access of '{fid}' at register offset {flat} is not a tap of its window")
        if w == 1:
            return f"r_{fid}_{q}"
        if r == 0:
            return f"r_{fid}_{q}.v[l]"
        return f"((l < {w - r}) ? r_{fid}_{q}.v[l + {r}] : r_{fid}_{q + 1}.v[l - {w - r}])"

    def _access(self, acc: Access, var: str, win: Window, bc: BoundaryCondition, coords: list[str],
                shift: int = 0) -> list[str]:
        """C++ lines reading one access (point p + shift + offset, at ``coords``) from the tap
        registers, with its boundary."""
        prog = self.analysis.program
        sd = strides(prog.shape)
        ft = prog.dtype_of(acc.field).cpp
        fid = self.ident[acc.field]
        moved = [(c, d) for c, d in enumerate(acc.offset) if d]
        inside = " && ".join(f"({coords[c]} + {d}) >= 0 && ({coords[c]} + {d}) < {prog.shape[c]}"
                             for c, d in moved) or "true"
        if bc.kind == "copy":
            if not moved:
                return [f"const {ft} {var} = {self._tap(fid, win, shift)};"]
            lines = [f"const long e{var}_{c} = std::min<long>(std::max<long>({coords[c]} + {d}, 0L), "
                     f"{prog.shape[c] - 1}L) - {coords[c]};" for c, d in moved]
            # every clamped position, the unclamped offset first; the last one needs no test
            boxes = [sorted(range(min(0, d), max(0, d) + 1), key=lambda x, d=d: x != d) for _, d in moved]
            combos = list(itertools.product(*boxes))
            expr = self._tap(fid, win, shift + sum(x * sd[c] for x, (c, _) in zip(combos[-1], moved)))
            for combo in reversed(combos[:-1]):
                test = " && ".join(f"e{var}_{c} == {x}" for x, (c, _) in zip(combo, moved))
                expr = f"({test}) ? {self._tap(fid, win, shift + sum(x * sd[c] for x, (c, _) in zip(combo, moved)))} : {expr}"
            return [*lines, f"const {ft} {var} = {expr};"]
        tap = self._tap(fid, win, shift + sum(d * sd[c] for c, d in moved))
        if bc.kind == "shrink":
            return [f"const bool ok_{var} = {inside};", f"valid = valid && ok_{var};",
                    f"const {ft} {var} = ok_{var} ? {tap} : ({ft})0;"]
        return [f"const {ft} {var} = ({inside}) ? {tap} : ({ft})({cpp_number(bc.value)});"]

    def _stream_decl(self, c: Channel) -> list[str]:
        var, depth = self.chan_var[c.name], self.depth[c.name]
        lines = [f"  hls::stream<{self._tok(self.analysis.program.dtype_of(c.src).cpp)}> {var}({c_string(c.name)});",
                 f"#pragma HLS STREAM variable={var} depth={depth}"]
        if depth * c.token_bytes >= FIFO_BRAM_MIN_BYTES:
            lines.append(f"#pragma HLS BIND_STORAGE variable={var} type=fifo impl=bram")
        return lines

    def _processes(self) -> list[str]:
        """The calls of the dataflow region, one per process, in topological order."""
        an, prog = self.analysis, self.analysis.program
        calls = []
        for n in prog.inputs:
            chans = [self.chan_var[c.name] for c in an.channels if c.src == n]
            if chans:
                calls.append(f"read_{self.ident[n]}({', '.join([f'in_{self.ident[n]}', *chans])});")
        for n in prog.stencils:
            ins = [self.chan_var[c.name] for c in an.channels if c.dst == n]
            outs = [self.chan_var[c.name] for c in an.channels if c.src == n]
            calls.append(f"stencil_{self.ident[n]}({', '.join(ins + outs)});")
        for o in prog.outputs:
            ch = self.chan_var[an.channel(o, sink_name(o)).name]
            calls.append(f"write_{self.ident[o]}({ch}, out_{self.ident[o]});")
        return calls

    def source(self) -> str:
        """The complete C++ translation unit (kernel + C-simulation main)."""
        an, prog = self.analysis, self.analysis.program
        w = prog.vectorization
        T = prog.points // w
        out = [
            *comment(f"Generated by stratoflow mapping.spatial for program '{prog.name}' "
                     f"({'x'.join(map(str, prog.shape))}, {w} point(s) per token)."),
            "#include <algorithm>", "#include <cmath>", "#include <cstdint>", "#include <limits>",
            "#ifdef __SYNTHESIS__",
            "#include <hls_stream.h>  // Vitis HLS",
            "#else",
            "#include <cstdio>",
            "#include <vector>",
            '#include "hls_stream.h"  // stratoflow C simulation: bounded FIFOs, one thread per process',
            "#endif",
            "",
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
            out.append(f"static void read_{self.ident[n]}({', '.join(params)}) {{")
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
            out.append(f"static void write_{self.ident[o]}(hls::stream<{self._tok(ct)}>& in, {ct}* mem) {{")
            body = "mem[t] = in.read();" if w == 1 else f"const auto x = in.read(); for (int l = 0; l < {w}; ++l) mem[t * {w}L + l] = x.v[l];"
            out.append(f"  for (long t = 0; t < {T}L; ++t) {{\n#pragma HLS PIPELINE II=1\n    {body}\n  }}\n}}\n")
        ports = [(f"in_{self.ident[n]}", f"const {inp.dtype.cpp}*", self._input_size(n)) for n, inp in prog.inputs.items()]
        ports += [(f"out_{self.ident[o]}", f"{prog.stencils[o].dtype.cpp}*", prog.points) for o in prog.outputs]
        out.append(f'extern "C" void kernel({", ".join(f"{t} {v}" for v, t, _ in ports)}) {{')
        for k, (v, _, size) in enumerate(ports):
            out.append(f"#pragma HLS INTERFACE m_axi port={v} offset=slave bundle=gmem{k} depth={size}")
        out.append("#pragma HLS INTERFACE s_axilite port=return")
        out.append("#pragma HLS DATAFLOW")
        for c in an.channels:
            out += self._stream_decl(c)
        calls = self._processes()
        out.append("#ifndef __SYNTHESIS__")
        out.append("  // C simulation: FIFOs bounded to the STREAM depths, every process in its own thread.")
        out += [f"  {self.chan_var[c.name]}.set_depth({self.depth[c.name]});" for c in an.channels]
        out.append("  hls::sim::Dataflow df;")
        out += [f"  df.spawn([&] {{ {call} }});" for call in calls]
        out.append("  df.run();")
        out.append("#else")
        out += [f"  {call}" for call in calls]
        out += ["#endif", "}", ""]
        out += self._main()
        return "\n".join(out)

    def _input_size(self, name: str) -> int:
        prog = self.analysis.program
        return int(np.prod([prog.shape[prog.iterators.index(d)] for d in prog.inputs[name].dims]))

    def _main(self) -> list[str]:
        prog = self.analysis.program
        lines = ["#ifndef __SYNTHESIS__", "// C simulation: argv = input files (raw, in program order), then output files.",
                 "int main(int argc, char** argv) {"]
        nin, nout = len(prog.inputs), len(prog.outputs)
        lines.append(f'  if (argc != {1 + nin + nout}) {{ std::fprintf(stderr, "usage: %s {nin} inputs {nout} outputs\\n", argv[0]); return 2; }}')
        for k, (n, inp) in enumerate(prog.inputs.items()):
            size = self._input_size(n)
            v = f"in_{self.ident[n]}"
            lines.append(f"  std::vector<{inp.dtype.cpp}> {v}({size});")
            lines.append(f'  {{ FILE* f = std::fopen(argv[{1 + k}], "rb"); if (!f || std::fread({v}.data(), sizeof({inp.dtype.cpp}), {size}, f) != {size}) {{ std::fprintf(stderr, "cannot read %s\\n", argv[{1 + k}]); return 2; }} std::fclose(f); }}')
        for o in prog.outputs:
            lines.append(f"  std::vector<{prog.stencils[o].dtype.cpp}> res_{self.ident[o]}({prog.points});")
        call = [f"in_{self.ident[n]}.data()" for n in prog.inputs] + [f"res_{self.ident[o]}.data()" for o in prog.outputs]
        lines.append(f"  kernel({', '.join(call)});")
        for k, o in enumerate(prog.outputs):
            v = f"res_{self.ident[o]}"
            lines.append(f'  {{ FILE* f = std::fopen(argv[{1 + nin + k}], "wb"); if (!f) return 2; std::fwrite({v}.data(), sizeof({v}[0]), {v}.size(), f); std::fclose(f); }}')
        lines += ["  return 0;", "}", "#endif", ""]
        return lines

    def file_name(self) -> str:
        """``<program>.cpp``, the program's name as a C identifier."""
        return f"{c_identifiers([self.analysis.program.name])[0]}.cpp"

    def write(self, directory: str | Path) -> Path:
        """Write ``<program>.cpp`` and the portable ``hls_stream.h`` into ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        path = atomic_write_text(d / self.file_name(), self.source())
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
            path = self.workdir / f"in_{self.emitter.ident[n]}.bin"
            np.ascontiguousarray(raw[n], dtype=inp.dtype.numpy).tofile(path)
            files.append(str(path))
        outs = [self.workdir / f"out_{self.emitter.ident[o]}.bin" for o in prog.outputs]
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
