"""Emitted HLS C++: multi-statement stencils compile and run, the synthesis path (``__SYNTHESIS__``)
has no thread runtime, every stream has its analysed STREAM depth, and the storage the code
declares equals the model's on-chip bytes (reuse buffers in BRAM or shift registers)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from mapping.spatial.analysis import analyse, sink_name
from mapping.spatial.hls import SHIFT_REGISTER_MAX_BYTES, CSimulation, HLSEmitter
from mapping.spatial.model import load_program
from mapping.spatial.partition import Device, Network, Partitioner
from mapping.spatial.reference import ReferenceExecutor

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

EXAMPLES = ("hdiff", "forkjoin", "jacobi2d_chain", "jacobi3d_chain")

# Statements separated by newlines, a line continuation, a comment holding */ ??/ and a trailing
# backslash, non-ASCII text: all of it must stay inside the C++ comment.
MULTI = {
    "name": "multi\nline",
    "inputs": {"a": {"data_type": "float64"}, "w": {"data_type": "float64", "input_dims": ["k"]}},
    "outputs": ["c"],
    "dimensions": [6, 5, 8],
    "program": {
        "b": {"computation_string": "t = a[i,j,k-1] + \\\n    a[i,j+1,k]  # sum */ ??/ é \\\nu = t * w[k]\nres = u - a[i-1,j,k]",
              "data_type": "float64",
              "boundary_conditions": {"a": {"type": "constant", "value": 1.5}}},
        "c": {"computation_string": "d = b[i,j,k+1] - b[i,j,k]\n\nres = d if d > 0 else -2 * d",
              "data_type": "float64",
              "boundary_conditions": {"b": {"type": "copy"}}},
    },
}

# Minimal stand-ins for the Vitis headers: hls::stream with only what Vitis declares (no
# set_depth, no hls::sim, no threads) and an ap_int.h.
VITIS_STREAM = """#pragma once
namespace hls {
template <class T, int DEPTH = 0> class stream {
 public:
  stream();
  explicit stream(const char* name);
  T read();
  void read(T& v);
  void write(const T& v);
  bool empty();
  bool full();
};
}  // namespace hls
"""
VITIS_AP_INT = "#pragma once\ntemplate <int W> struct ap_int { long v; };\ntemplate <int W> struct ap_uint { unsigned long v; };\n"

_SIZES = {"float": 4, "double": 8, "int8_t": 1, "int16_t": 2, "int32_t": 4, "int64_t": 8}


def _bytes_of(ctype: str) -> int:
    m = re.fullmatch(r"sf_vec<(\w+), (\d+)>", ctype)
    return _SIZES[m.group(1)] * int(m.group(2)) if m else _SIZES[ctype]


def _functions(src: str) -> dict[str, str]:
    """Body text of every ``static void stencil_X(...)`` in ``src``."""
    out = {}
    for m in re.finditer(r"^static void stencil_(\w+)\(.*?^}$", src, re.S | re.M):
        out[m.group(1)] = m.group(0)
    return out


def _compare(prog, out, ref):
    for o in prog.outputs:
        if prog.stencils[o].dtype.name == "float32":
            np.testing.assert_allclose(out[o], ref[o], rtol=1.2e-7, atol=0)
        else:
            np.testing.assert_allclose(out[o], ref[o], rtol=1e-13, atol=1e-13)


def test_multi_statement_stencil_compiles_and_equals_reference(tmp_path):
    """Newline-separated statements, a continuation line and a comment with */, ??/ and a trailing
    backslash: every source line is a // comment line, g++ compiles the code, and the C-simulation
    output equals the NumPy reference (float64, within 1e-13)."""
    prog = load_program(MULTI)
    em = HLSEmitter(analyse(prog))
    src = em.source()
    for line in MULTI["program"]["b"]["computation_string"].splitlines():
        assert any(line.strip()[:10] in s and s.startswith("//") for s in src.splitlines())
    out = CSimulation(em, tmp_path)()
    _compare(prog, out, ReferenceExecutor(prog)())


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples_csim_equal_reference(name, examples, tmp_path):
    """Each JSON example of mapping/spatial/examples, emitted, compiled with g++ (-std=c++17,
    -pthread) and run: outputs equal the NumPy reference (float32: 1 ulp, float64: 1e-13)."""
    prog = load_program(examples / f"{name}.json")
    out = CSimulation(HLSEmitter(analyse(prog)), tmp_path)()
    _compare(prog, out, ReferenceExecutor(prog)())


def test_synthesis_path_has_no_thread_runtime(examples, tmp_path):
    """With -D__SYNTHESIS__ the code compiles (-fsyntax-only) against a minimal Vitis hls_stream.h
    that has no set_depth, hls::sim or threads, so the synthesis path uses none of them; the
    C-simulation header refuses to be used for synthesis."""
    vitis = tmp_path / "vitis"
    vitis.mkdir()
    (vitis / "hls_stream.h").write_text(VITIS_STREAM)
    (vitis / "ap_int.h").write_text(VITIS_AP_INT)
    gen = tmp_path / "gen"
    for p in (load_program(examples / "hdiff.json"), load_program(examples / "forkjoin.json").with_vectorization(4)):
        src = HLSEmitter(analyse(p)).write(gen)
        cmd = ["g++", "-std=c++17", "-fsyntax-only", "-D__SYNTHESIS__", f"-I{vitis}", str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        pre = subprocess.run(["g++", "-std=c++17", "-E", "-P", "-D__SYNTHESIS__", f"-I{vitis}", str(src)],
                             capture_output=True, text=True, cwd=tmp_path).stdout
        assert "hls::sim" not in pre and "std::thread" not in pre and "set_depth" not in pre
        assert "int main(" not in pre
    shim = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-D__SYNTHESIS__", "-x", "c++", str(gen / "hls_stream.h")],
                          capture_output=True, text=True)
    assert shim.returncode != 0 and "for C simulation only" in shim.stderr


def _stream_depths(src: str) -> dict[str, int]:
    """stream name literal -> depth, from ``hls::stream<T> var("name");`` + ``#pragma HLS STREAM``."""
    decl = dict(re.findall(r'hls::stream<[^>]*>+ (\w+)\("([^"]*)"\);', src))
    pragmas = dict((v, int(d)) for v, d in re.findall(r"#pragma HLS STREAM variable=(\w+) depth=(\d+)", src))
    assert set(decl) == set(pragmas), "every declared stream has exactly one STREAM pragma"
    return {name: pragmas[var] for var, name in decl.items()}


def test_every_stream_has_the_analysed_depth(examples):
    """Every channel of the analysis is declared the Vitis way with a STREAM pragma whose depth is
    the delay-buffer analysis' capacity: on one device and on a 2-device placement whose cut
    channels carry the link latency."""
    prog = load_program(examples / "hdiff.json")
    one = analyse(prog)
    two = Partitioner([Device(memory_bytes=40000)] * 2, Network(link_latency=50))(prog, one).analysis
    assert any(c.capacity != one.channel(c.src, c.dst).capacity for c in two.channels)
    for an in (one, two):
        depths = _stream_depths(HLSEmitter(an).source())
        assert depths == {c.name: c.capacity for c in an.channels}


@pytest.mark.parametrize(("name", "width"), [("hdiff", 1), ("forkjoin", 1), ("forkjoin", 4), ("jacobi3d_chain", 1),
                                             ("ahead", 1), ("ahead", 4)])
def test_declared_storage_equals_the_model(name, width, examples):
    """Per stencil, the tap registers and delay lines the code declares hold exactly the model's
    reuse bytes, its incoming STREAM depths hold its delay bytes, and the whole kernel the model's
    on-chip bytes. Delay lines above SHIFT_REGISTER_MAX_BYTES are BRAM (BIND_STORAGE ram_2p),
    shorter ones shift registers; no buffer is a completely partitioned register file beyond that.
    'ahead' reads only points ahead of the centre, so the stages behind it are not kept."""
    if name == "ahead":
        spec = {"inputs": {"a": {}}, "outputs": ["b"], "dimensions": [4, 6, 8],
                "program": {"b": {"computation_string": "res = a[i+1,j,k] + a[i,j,k+2]",
                                  "boundary_conditions": {"a": {"type": "constant"}}}}}
        prog = load_program(spec).with_vectorization(width)
    else:
        prog = load_program(examples / f"{name}.json").with_vectorization(width)
    an = analyse(prog)
    src = HLSEmitter(an).source()
    depths = _stream_depths(src)
    kept = 0
    for sname, body in _functions(src).items():
        info = an.stencils[sname]
        decls = re.findall(r"^  ((?:sf_vec<\w+, \d+>)|\w+) ([rd]_\w+?)(?:\[(\d+)\])?(?:\{\})?;", body, re.M)
        declared = sum(_bytes_of(t) * int(n or 1) for t, _, n in decls)
        assert declared == info.reuse_bytes, sname
        incoming = sum(depths[c.name] * c.token_bytes for c in an.channels if c.dst == sname)
        assert incoming == info.delay_bytes, sname
        for t, var, n in decls:
            if var.startswith("d_"):
                big = _bytes_of(t) * int(n) > SHIFT_REGISTER_MAX_BYTES
                assert (f"BIND_STORAGE variable={var} type=ram_2p impl=bram" in body) == big, var
                assert (f"ARRAY_PARTITION variable={var} complete" in body) == (not big), var
        kept += declared + incoming
    sinks = sum(depths[c.name] * c.token_bytes for c in an.channels if c.dst == sink_name(c.src))
    assert kept + sinks == an.model.onchip_bytes
    if name == "ahead" and width == 1:
        win = an.stencils["b"].windows["a"]
        assert win.taps[0] == 2 and win.kept_tokens == win.reuse_tokens - 2


def test_ahead_only_window_simulates(tmp_path):
    """A stencil reading only ahead of its centre (stages behind it not kept), vectorised by 4 with
    lane-crossing offsets: C simulation equals the reference (float32, 1 ulp)."""
    spec = {"inputs": {"a": {}}, "outputs": ["b"], "dimensions": [4, 6, 8],
            "program": {"b": {"computation_string": "res = a[i+1,j,k] + 0.5 * a[i,j,k+2] - a[i,j,k+3]",
                              "boundary_conditions": {"a": {"type": "shrink"}}}}}
    prog = load_program(spec).with_vectorization(4)
    out = CSimulation(HLSEmitter(analyse(prog)), tmp_path)()
    _compare(prog, out, ReferenceExecutor(prog)())
