"""Search, validation, transfer, apply and the CLI on a tiny space (numpy + gt:cpu_ifirst).

Compiles gt:cpu_ifirst for laplacian_2d and jacobi_2d and one dace:cpu build with SDFG
transformations (cached in the project's stencil cache, so reruns only load them).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from mapping.tuning.db import TuningDB
from mapping.tuning.measure import Evaluator, MeasureConfig
from mapping.tuning.schedule import Schedule
from mapping.tuning.search import Tuner
from mapping.tuning.space import tiny_space
from mapping.tuning.targets import resolve
from mapping.tuning.transfer import transfer
from mapping.tuning.worker import build, validate

DOMAIN = (12, 12, 6)


def _cache() -> Path:
    return Path(os.environ["STRATOFLOW_CACHE_DIR"])


def _config() -> MeasureConfig:
    return MeasureConfig(domain=DOMAIN, repeats=3, warmup=1, jobs=1, cache_dir=_cache())


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[TuningDB, Tuner]:
    """laplacian_2d searched exhaustively over the tiny space, with its embedding."""
    db = TuningDB(tmp_path_factory.mktemp("tune") / "tuning.sqlite")
    tuner = Tuner("laplacian_2d", Evaluator("laplacian_2d", _config()), db)
    tuner.profile(stream_gbs=10.0)
    tuner.search(tiny_space(), "exhaustive")
    return db, tuner


def test_exhaustive_search_validates_measures_and_resumes(tuned: tuple[TuningDB, Tuner]) -> None:
    """Every schedule matched the numpy backend (rtol 1e-9) before it was timed."""
    db, tuner = tuned
    evs = db.evaluations("laplacian_2d", DOMAIN)
    assert len(evs) == 3 and all(e.ok and e.median_s > 0 for e in evs.values())
    again = tuner.search(tiny_space(), "exhaustive")
    assert again.reused == 3 and again.runs == 0 and again.builds == 0
    rnd = tuner.search(tiny_space(), "random", budget=2)
    assert len(rnd.evaluations) == 2 and rnd.default() is not None
    opt = tuner.search(tiny_space(), "optuna", budget=3)
    assert {e.schedule.key for e in opt.evaluations} <= {s.key for s in tiny_space()}


def test_transfer_to_a_new_stencil(tuned: tuple[TuningDB, Tuner]) -> None:
    """jacobi_2d gets laplacian_2d's best schedule, validated against its numpy backend."""
    db, _ = tuned
    tuner = Tuner("jacobi_2d", Evaluator("jacobi_2d", _config()), db)
    query = tuner.embedding(stream_gbs=10.0)
    result = transfer(query, db, DOMAIN, tuner.evaluate, k=3, space_size=3)
    assert [n for n, _ in result.neighbours] == ["laplacian_2d"]
    assert result.candidates == [db.best("laplacian_2d", DOMAIN).schedule]
    assert result.best is not None and result.best.ok


def test_wrong_results_and_failed_builds_are_recorded_not_raised() -> None:
    """A perturbed output fails the differential check; a bad compiler flag is 'invalid'."""
    target = resolve("laplacian_2d")
    dom = target.domain(*DOMAIN)
    ref = {"out_field": np.ones(dom.shape)}
    assert validate({"out_field": np.ones(dom.shape)}, ref, dom) is None
    bad = np.ones(dom.shape)
    bad[dom.halo + 1, dom.halo + 1, 0] += 1e-6
    assert "relative error" in validate({"out_field": bad}, ref, dom)
    ev = Evaluator("laplacian_2d", _config())([Schedule("gt:cpu_ifirst", "-fno-such-flag-here")])[0]
    assert ev.status == "invalid" and ev.error


def test_dace_build_with_sdfg_transformations_matches_reference() -> None:
    """dace:cpu with OpenMP dynamic schedule + collapse vs the library's NumPy reference."""
    target = resolve("laplacian_2d")
    s = Schedule.from_dict(
        {"backend": "dace:cpu", "sdfg": [["omp_schedule", {"kind": "dynamic"}], ["collapse", {}]]}
    )
    obj, _ = build(target, s, str(_cache()))
    dom = target.domain(*DOMAIN)
    arrays = target.allocate(dom, seed=3)
    import gt4py.storage as gs

    fields = {k: gs.from_array(v, backend=s.backend) for k, v in arrays.items()}
    obj(**fields, origin=dom.origin, domain=dom.domain)
    from stencils.library import LIBRARY

    ref = LIBRARY["laplacian_2d"].reference(halo=dom.halo, **arrays)["out_field"]
    np.testing.assert_allclose(np.asarray(fields["out_field"])[dom.interior], ref, rtol=1e-12, atol=1e-12)
    code = "\n".join(p.read_text() for p in _cache().rglob("computation.hpp") if obj._gt_id_ in str(p))
    assert "schedule(dynamic" in code and "collapse(2)" in code


def test_apply_makes_tuned_factory_use_the_schedule(
    tuned: tuple[TuningDB, Tuner], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The applied stencil builds on gt:cpu_ifirst, others on numpy; both match NumPy references.
    The tuned build is the one the search's worker compiled (a cache hit, even when gt4py was
    imported before stencils.config set GT4PY_EXTRA_COMPILE_ARGS)."""
    from gt4py.cartesian import config as gt_config

    from mapping.tuning.building import is_cached
    from mapping.tuning.factory import TunedStencilFactory
    from stencils.config import StencilConfig
    from stencils.library import LIBRARY

    db, _ = tuned
    monkeypatch.setattr(gt_config, "GT4PY_EXTRA_COMPILE_ARGS", "")  # as if gt4py was imported first
    assert is_cached(LIBRARY["laplacian_2d"].definition, {}, Schedule("gt:cpu_ifirst", threads=1), _cache())
    db.apply("laplacian_2d", Schedule("gt:cpu_ifirst", threads=1), None)
    factory = TunedStencilFactory(StencilConfig.from_env(backend="numpy"), db=db, build_cache=_cache())
    for name, backend in (("laplacian_2d", "gt:cpu_ifirst"), ("jacobi_2d", "numpy")):
        lib = LIBRARY[name]
        stencil = factory(lib.definition)
        assert stencil.backend == backend
        dom = resolve(name).domain(*DOMAIN)
        arrays = lib.allocate(dom, seed=1)
        stencil(origin=dom.origin, domain=dom.domain, **arrays)
        ref = lib.reference(halo=dom.halo, **{k: v for k, v in arrays.items()})
        np.testing.assert_allclose(arrays[lib.outputs[0]][lib.interior(dom)], ref[lib.outputs[0]], rtol=1e-12)
    db.unapply("laplacian_2d")


def test_cli_db_and_apply(tuned: tuple[TuningDB, Tuner], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from workflows.cli import main

    db, _ = tuned
    common = ["--db", str(db.path), "--domain", ",".join(map(str, DOMAIN))]
    assert main(["tune", "db", "list", *common]) == 0
    assert "laplacian_2d" in capsys.readouterr().out
    assert main(["tune", "db", "show", "laplacian_2d", *common]) == 0
    assert "gt:cpu_ifirst" in capsys.readouterr().out
    assert main(["tune", "apply", "laplacian_2d", *common]) == 0
    assert "applied" in capsys.readouterr().out
    out = tmp_path / "db.json"
    assert main(["tune", "db", "export", str(out), *common]) == 0
    assert json.loads(out.read_text())["applied"][0]["stencil"] == "laplacian_2d"
    fresh = ["--db", str(tmp_path / "fresh.sqlite")]
    assert main(["tune", "db", "import", str(out), *fresh]) == 0
    assert main(["tune", "apply", "--remove", "laplacian_2d", *fresh]) == 0
    assert main(["tune", "apply", "hdiff", *fresh]) == 1  # nothing measured: a user error
    assert main(["tune", "apply", "--remove", "laplacian_2d", *common]) == 0
