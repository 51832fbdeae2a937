"""Stencil programs as tuning targets and the fusion of consecutive calls into one stencil."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from mapping.tuning.errors import TuningError
from mapping.tuning.measure import Evaluator, MeasureConfig
from mapping.tuning.programs import ProgramRunner, ProgramTarget, groups_of, partitions
from mapping.tuning.schedule import Schedule
from mapping.tuning.space import tiny_space
from mapping.tuning.targets import resolve
from mapping.tuning.worker import compile_definition

DOMAIN = (10, 9, 4)


def _cache() -> Path:
    return Path(os.environ["STRATOFLOW_CACHE_DIR"])


def _run(target: ProgramTarget, schedule: Schedule) -> dict[str, np.ndarray]:
    import gt4py.storage as gt_storage

    dom = target.domain(*DOMAIN)
    runner = ProgramRunner(
        target, schedule, _cache(), lambda d, e: compile_definition(d, e, schedule, str(_cache()))
    )
    arrays = target.allocate(dom, seed=3)
    fields = {k: gt_storage.from_array(v, backend=schedule.backend) for k, v in arrays.items()}
    runner(fields, dom)
    return {k: np.asarray(fields[k]) for k in target.outputs} | {"a": arrays.get("a")}


def _lap(f: np.ndarray) -> np.ndarray:
    out = np.zeros_like(f)
    out[1:-1, 1:-1] = f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2] - 4.0 * f[1:-1, 1:-1]
    return out


def test_partitions_and_groups() -> None:
    assert partitions(1) == [()]
    assert partitions(3) == [(), (3,), (2, 1), (1, 2)]
    assert groups_of((2, 1), 3) == [[0, 1], [2]] and groups_of((), 2) == [[0], [1]]
    with pytest.raises(TuningError, match="does not split"):
        groups_of((1, 3), 3)


def test_fused_biharmonic_matches_numpy_reference() -> None:
    """Unfused and fused (one GTScript stencil) biharmonic on numpy vs lap(lap(a)) in NumPy;
    max abs error <= 1e-12 on the interior."""
    target = resolve("biharmonic")
    assert isinstance(target, ProgramTarget) and target.halo == 2
    ref = None
    for fuse in ((), (2,)):
        out = _run(target, Schedule("numpy", fuse=fuse))
        if ref is None:
            ref = _lap(_lap(out["a"]))
        h = target.halo
        np.testing.assert_allclose(out["b"][h:-h, h:-h], ref[h:-h, h:-h], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("backend", "fuse"), [("numpy", (1, 2)), ("numpy", (2, 1)), ("numpy", (3,)), ("gt:cpu_ifirst", (3,))]
)
def test_fused_program_matches_unfused_numpy(backend: str, fuse: tuple[int, ...]) -> None:
    """smooth_advect (jacobi, hdiff, upwind) fused in every way, on numpy and on one compiled
    backend (one C++ build), vs the unfused numpy program: max relative error <= 1e-9."""
    target = resolve("smooth_advect")
    ref = _run(target, Schedule("numpy"))["out"]
    got = _run(target, Schedule(backend, fuse=fuse))["out"]
    h = target.halo
    inner = (slice(h, -h), slice(h, -h))
    assert np.max(np.abs(got[inner] - ref[inner])) <= 1e-9 * np.max(np.abs(ref[inner]))


def test_program_search_space_and_evaluation(tmp_path: Path) -> None:
    """The program space is the stencil space times the fusions; the evaluator validates each
    fused schedule against the unfused numpy program before timing it."""
    target = resolve("biharmonic")
    space = target.space(tiny_space())
    assert len(space) == 2 * len(tiny_space()) and len({s.key for s in space}) == len(space)
    ev = Evaluator("biharmonic", MeasureConfig(domain=DOMAIN, repeats=2, warmup=0, jobs=1, cache_dir=_cache()))
    evs = ev([Schedule("numpy"), Schedule("numpy", fuse=(2,)), Schedule("numpy", fuse=(1, 1, 1))])
    assert evs[0].ok and evs[1].ok
    assert evs[2].status == "invalid" and "does not split" in evs[2].error


def test_fuse_knob_keeps_stencil_schedule_hashes() -> None:
    """Schedules without fusion serialise exactly as before the knob existed."""
    s = Schedule("gt:cpu_ifirst", threads=2)
    assert "fuse" not in s.to_dict()
    f = Schedule.from_json(Schedule("numpy", fuse=(2, 1)).to_json())
    assert f.fuse == (2, 1) and f.key != Schedule("numpy").key and "fuse=2+1" in f.describe()


def test_interleaved_remeasurement_pools_rounds() -> None:
    """Two schedules re-measured in 2 rounds of 2 repeats: 4 pooled samples each."""
    ev = Evaluator("biharmonic", MeasureConfig(domain=DOMAIN, repeats=2, warmup=0, jobs=1, cache_dir=_cache()))
    out = ev.interleaved([Schedule("numpy"), Schedule("numpy", fuse=(2,))], rounds=2)
    assert all(r["status"] == "ok" and r["samples"] == 4 and r["min_s"] <= r["median_s"] for r in out.values())
