"""Loading and validating StencilFlow JSON programs; every bad input names the offending node."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mapping.spatial import StencilFlowError
from mapping.spatial.model import load_program
from mapping.spatial.reference import ReferenceExecutor


def prog(**stencils) -> dict:
    return {
        "inputs": {"a": {"data_type": "float64"}},
        "outputs": [list(stencils)[-1]],
        "dimensions": [4, 5, 6],
        "program": {
            n: {"computation_string": s, "data_type": "float64",
                "boundary_conditions": {f: {"type": "constant", "value": 0} for f in ("a", "b", "c") if f + "[" in s}}
            for n, s in stencils.items()
        },
    }


@pytest.mark.parametrize(
    "spec, needle",
    [
        (prog(b="res = c[i,j,k]", c="res = b[i,j,k]"), "cycle"),
        (prog(b="res = zz[i,j,k]"), "undefined field 'zz'"),
        (prog(b="res = a[i,j,k] +* 2"), "line 1, column"),
        (prog(b="res = a[i,j]"), "indexed with 2"),
        (prog(b="res = a[i,k,j]"), "must be 'j'"),
        (prog(b="res = foo(a[i,j,k])"), "unknown function 'foo'"),
        (prog(b="res = a[i,j,k] + q"), "undefined name 'q'"),
    ],
)
def test_bad_programs_name_the_node(spec, needle):
    with pytest.raises(StencilFlowError, match=needle) as exc:
        load_program(spec)
    assert "'b'" in str(exc.value) or "cycle" in needle


def test_unknown_dtype_and_dimensions():
    spec = prog(b="res = a[i,j,k]")
    spec["program"]["b"]["data_type"] = "float128"
    with pytest.raises(StencilFlowError, match="stencil 'b': unknown data_type 'float128'"):
        load_program(spec)
    spec = prog(b="res = a[i,j,k]")
    spec["inputs"]["a"]["input_dims"] = ["k", "i"]
    with pytest.raises(StencilFlowError, match="input 'a': input_dims"):
        load_program(spec)
    spec = prog(b="res = a[i,j,k]")
    spec["dimensions"] = [4, 5, 6, 7]
    with pytest.raises(StencilFlowError, match="'dimensions'"):
        load_program(spec)


def test_missing_boundary_condition_is_reported():
    spec = prog(b="res = a[i,j,k+1]")
    spec["program"]["b"]["boundary_conditions"] = {}
    with pytest.raises(StencilFlowError, match="stencil 'b': reads 'a' at non-zero offsets"):
        load_program(spec)


def test_data_sources(tmp_path):
    """Inputs from constant, 'constant:X', inline list, .npy, .csv and .dat give the stored values."""
    vals = np.arange(6, dtype=np.float32)
    np.save(tmp_path / "x.npy", vals)
    np.savetxt(tmp_path / "x.csv", vals[None], delimiter=",")
    vals.tofile(tmp_path / "x.dat")
    spec = {
        "inputs": {
            "c1": {"data": 2.5, "data_type": "float32"},
            "c2": {"data": "constant:1.5", "data_type": "float32"},
            "l": {"data": list(map(float, vals)), "data_type": "float32"},
            "n": {"data": "x.npy", "data_type": "float32"},
            "v": {"data": "x.csv", "data_type": "float32"},
            "d": {"data": "x.dat", "data_type": "float32"},
        },
        "outputs": ["s"],
        "dimensions": [2, 3],
        "program": {"s": {"computation_string": "res = c1[j,k] + c2[j,k] + l[j,k] + n[j,k] + v[j,k] + d[j,k]",
                          "data_type": "float32"}},
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(spec))
    out = ReferenceExecutor(load_program(path))()["s"]
    np.testing.assert_allclose(out, 4.0 + 4 * vals.reshape(2, 3), rtol=0, atol=0)


def test_wrong_data_size_is_reported(tmp_path):
    np.zeros(5).tofile(tmp_path / "z.dat")
    spec = {"inputs": {"a": {"data": "z.dat", "data_type": "float64"}}, "outputs": ["s"], "dimensions": [2, 3],
            "program": {"s": {"computation_string": "res = a[j,k]", "data_type": "float64"}}}
    (tmp_path / "p.json").write_text(json.dumps(spec))
    with pytest.raises(StencilFlowError, match="input 'a': data has 5 values"):
        ReferenceExecutor(load_program(tmp_path / "p.json"))()


@pytest.mark.parametrize(
    "patch, needle",
    [
        ({"vectorization": "4"}, "vectorization must be a positive integer"),
        ({"vectorization": 4}, "does not divide the innermost dimension 6"),
        ({"outputs": "b"}, "'outputs' must be a list"),
        ({"outputs": ["a"]}, "output 'a' is not a stencil"),
        ({"constants": [1]}, "'constants' must be an object"),
        ({"inputs": {"a": 3}}, "input 'a': must be an object"),
    ],
)
def test_malformed_top_level_keys(patch, needle):
    spec = prog(b="res = a[i,j,k]") | patch
    with pytest.raises(StencilFlowError, match=needle):
        load_program(spec)


def test_bad_boundary_condition_type_names_stencil_and_field():
    spec = prog(b="res = a[i,j,k+1]")
    spec["program"]["b"]["boundary_conditions"] = {"a": {"type": "mirror"}}
    with pytest.raises(StencilFlowError, match="stencil 'b': boundary condition of 'a' has type 'mirror'"):
        load_program(spec)
