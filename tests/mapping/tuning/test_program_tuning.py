"""Programs in transfer tuning and in TunedStencilFactory, and the shared build names.

Cheap settings only: the numpy and debug backends (no C++ compilation) on a 12x12x4 domain.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.features import FEATURES, program_features
from mapping.tuning.measure import Evaluator, MeasureConfig
from mapping.tuning.schedule import Schedule
from mapping.tuning.search import Tuner
from mapping.tuning.transfer import TransferResult, transfer

DOMAIN = (12, 12, 4)
CHEAP = [Schedule("numpy"), Schedule("debug")]


def _cache() -> Path:
    return Path(os.environ["STRATOFLOW_CACHE_DIR"])


def _config() -> MeasureConfig:
    return MeasureConfig(domain=DOMAIN, repeats=2, warmup=0, jobs=1, cache_dir=_cache())


@pytest.fixture(scope="module")
def transferred(tmp_path_factory: pytest.TempPathFactory) -> tuple[TuningDB, Tuner, TransferResult]:
    """laplacian_2d searched over numpy + debug; biharmonic (lap(lap)) transferred from it."""
    db = TuningDB(tmp_path_factory.mktemp("programs") / "tuning.sqlite")
    lap = Tuner("laplacian_2d", Evaluator("laplacian_2d", _config()), db)
    lap.search(CHEAP, "exhaustive")  # one worker process; the profile below reuses its numpy run
    lap.profile(stream_gbs=10.0)
    prog = Tuner("biharmonic", Evaluator("biharmonic", _config()), db)
    prog.evaluate(prog.space(CHEAP))  # one worker process validates + times all 4 schedules
    query = prog.embedding(stream_gbs=10.0)
    result = transfer(
        query, db, DOMAIN, prog.evaluate, k=3, rule="consensus", candidates=2,
        space_size=len(prog.space(CHEAP)), program_calls=2,
    )  # fmt: skip
    return db, prog, result


def test_program_features_are_time_weighted_means() -> None:
    """Analytic: calls of 1 ns and 3 ns per point weigh 1/4 and 3/4."""
    a = dict.fromkeys(FEATURES, 1.0) | {"log_ns_per_point": 0.0, "flops": 4.0, "ipc": math.nan}
    b = dict.fromkeys(FEATURES, 1.0) | {"log_ns_per_point": math.log10(3.0), "flops": 8.0, "ipc": 2.0}
    f = program_features([a, b])
    assert f["flops"] == pytest.approx(0.25 * 4.0 + 0.75 * 8.0, rel=1e-12)
    assert f["log_ns_per_point"] == pytest.approx(math.log10(4.0), rel=1e-12)
    assert f["fusable_neighbours"] == 1.0 and math.isnan(f["ipc"]) and f["n_inputs"] == pytest.approx(1.0)


def test_program_embedding_from_its_calls(transferred: tuple[TuningDB, Tuner, TransferResult]) -> None:
    """biharmonic calls laplacian_2d twice: its embedding is laplacian_2d's (rel 1e-12) except
    log_ns_per_point + log10(2) (two calls) and one fusable neighbour."""
    db, prog, _ = transferred
    emb, lap = db.embedding("biharmonic", DOMAIN), db.embedding("laplacian_2d", DOMAIN)
    assert "lap1 = laplacian_2d, lap2 = laplacian_2d" in emb.status["program"]
    for name in FEATURES:
        want = lap.features[name]
        if name == "log_ns_per_point":
            want += math.log10(2.0)
        elif name == "fusable_neighbours":
            want = 1.0
        got = emb.features[name]
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-12, abs=1e-12), name


def test_transfer_to_a_program_tries_fusions(transferred: tuple[TuningDB, Tuner, TransferResult]) -> None:
    """Neighbour laplacian_2d's two schedules x {unfused, fused}: 4 of 2 x 2 schedules, each
    validated against the unfused numpy program (rtol 1e-9) by the worker."""
    _, _, result = transferred
    assert [n for n, _ in result.neighbours] == ["laplacian_2d"]
    tried = {(s.backend, s.fuse) for s in result.candidates}
    assert tried == {("numpy", ()), ("numpy", (2,)), ("debug", ()), ("debug", (2,))}
    assert all(e.ok for e in result.evaluations) and result.best is not None and result.space_size == 4


def test_cli_transfer_of_a_program(
    transferred: tuple[TuningDB, Tuner, TransferResult], capsys: pytest.CaptureFixture
) -> None:
    """The CLI reuses the stored evaluations; it reports the fusion options it tried."""
    from workflows.cli import main

    db, _, _ = transferred
    args = ["--db", str(db.path), "--domain", ",".join(map(str, DOMAIN)), "--space", "tiny"]
    assert main(["tune", "transfer", "biharmonic", "--rule", "consensus", "--k", "1", *args]) == 0
    out = capsys.readouterr().out
    assert "neighbours: laplacian_2d" in out and "x 2 fusions" in out and "fuse=2" in out


def _lap(f: np.ndarray) -> np.ndarray:
    out = np.zeros_like(f)
    out[1:-1, 1:-1] = f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2] - 4.0 * f[1:-1, 1:-1]
    return out


@pytest.mark.parametrize("key", ["biharmonic", "mapping.tuning.programs:biharmonic"])
def test_applied_program_schedule_is_used(
    transferred: tuple[TuningDB, Tuner, TransferResult], key: str
) -> None:
    """An applied fused numpy schedule builds ONE numpy stencil (the factory's default is debug)
    and gives the unfused numpy program's result (max abs error <= 1e-12; both vs lap(lap(a)));
    ``program.run(inputs, backend=TunedStencilFactory(...))`` uses it too (bitwise the same)."""
    from mapping.tuning.factory import TunedStencilFactory
    from mapping.tuning.programs import biharmonic
    from stencils.config import StencilConfig

    db, _, _ = transferred
    db.apply(key, Schedule("numpy", fuse=(2,)), None)
    try:
        factory = TunedStencilFactory(StencilConfig.from_env(backend="debug"), db=db, build_cache=_cache())
        tuned = factory.tuned_program(biharmonic())
        assert tuned.tuned_name == key and tuned.schedule.fuse == (2,)
        stencils = tuned.build()
        assert [(s.name, s.backend) for s in stencils] == [("lap1+lap2", "numpy")]
        a = np.random.default_rng(5).random((DOMAIN[0] + 4, DOMAIN[1] + 4, DOMAIN[2]))
        got = tuned.run({"a": a})["b"]
        want = biharmonic().run({"a": a}, backend="numpy")["b"]
        inner = (slice(2, -2), slice(2, -2))
        np.testing.assert_allclose(got[inner], want[inner], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got[inner], _lap(_lap(a))[inner], rtol=0, atol=1e-12)
        # the plain program.run with the tuned factory takes the same path: the applied
        # schedule's fused numpy stencil, nothing built by the factory's own (debug) backend
        if key == "biharmonic":
            via_run = biharmonic().run({"a": a}, backend=factory)["b"]
            np.testing.assert_array_equal(via_run, got)
            assert not factory._built, "program.run built the calls unfused with the factory"
    finally:
        db.unapply(key)


def test_program_without_schedule_and_a_misfit(transferred: tuple[TuningDB, Tuner, TransferResult]) -> None:
    """Without an applied schedule a program builds every call with the factory (debug); a
    schedule whose fusion does not split the program's calls is refused with a clear error."""
    from mapping.tuning.factory import TunedStencilFactory
    from mapping.tuning.programs import biharmonic, smooth_advect
    from stencils.config import StencilConfig
    from stencils.errors import StencilError

    db, _, _ = transferred
    db.apply("smooth_advect", Schedule("numpy", fuse=(2,)), None)
    try:
        factory = TunedStencilFactory(StencilConfig.from_env(backend="debug"), db=db, build_cache=_cache())
        plain = factory.tuned_program(biharmonic())
        assert plain.schedule is None and [s.backend for s in plain.build()] == ["debug", "debug"]
        with pytest.raises(StencilError, match="does not fit it.*tune apply --remove smooth_advect"):
            factory.tuned_program(smooth_advect())
    finally:
        db.unapply("smooth_advect")


def test_worker_and_in_process_builds_share_the_cache(tmp_path: Path) -> None:
    """A build made by a tuning worker process is a cache hit for an in-process build."""
    from gt4py.cartesian import gtscript

    from mapping.tuning.building import build_name
    from stencils.config import StencilConfig
    from stencils.library import LIBRARY

    cfg = MeasureConfig(domain=DOMAIN, repeats=1, warmup=0, jobs=1, cache_dir=tmp_path)
    assert Evaluator("jacobi_2d", cfg)([Schedule("numpy")])[0].ok  # built in a worker process
    StencilConfig(backend="numpy", cache_dir=tmp_path).apply()
    definition = LIBRARY["jacobi_2d"].definition
    assert build_name(definition) == "stencils.library.jacobi.jacobi_2d"
    gtscript.stencil(
        backend="numpy", definition=definition, name=build_name(definition), raise_if_not_cached=True
    )  # raises ValueError if the worker's build was named otherwise


@pytest.mark.parametrize("fuse", [(3,), (2, 1), (1, 2)])
def test_fused_rewrite_runs_like_the_program(fuse: tuple[int, ...]) -> None:
    """smooth_advect rewritten with each fusion, run by StencilProgram.run on numpy, vs the
    unfused numpy program: max abs error <= 1e-12 on the interior."""
    from mapping.tuning.programs import fused_program, smooth_advect
    from stencils.factory import StencilFactory

    program = smooth_advect()
    h = max(program.required_halo().values())
    rng = np.random.default_rng(0)
    inputs = {f: rng.random((10 + 2 * h, 9 + 2 * h, 3)) + 1.0 for f in program.inputs}
    want = program.run(inputs, "numpy")["out"]
    rewritten = fused_program(smooth_advect(), fuse, _cache())
    assert len(rewritten.build(StencilFactory("numpy"))) == len(fuse)
    got = rewritten.run(inputs, "numpy")["out"]
    np.testing.assert_allclose(got[h:-h, h:-h], want[h:-h, h:-h], rtol=0, atol=1e-12)
