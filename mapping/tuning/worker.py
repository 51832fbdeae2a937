"""Build, validate and time schedules of one stencil; runs in a child process.

``python -m mapping.tuning.worker REQUEST.json [RESULTS.jsonl]`` reads a request
``{"mode": "measure"|"serve"|"serve-build", "target", "domain", "schedules", "cache_dir",
"repeats", "warmup", "seed"}``. ``measure`` handles the request's schedules, appending one JSON
line per schedule to RESULTS so a crash or timeout loses only the schedule being worked on, and
ends. ``serve`` (measure) and ``serve-build`` keep the process alive and handle each
schedule sent as a JSON line on stdin, answering on stdout (:mod:`mapping.tuning.serving`): the
imports and the reference run are paid once per process, not once per schedule. Measuring validates each schedule's output against the
numpy backend on the same inputs (differential testing) before timing it; an invalid schedule
is recorded with the reason and never timed.
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mapping.tuning.errors import TuningError
from mapping.tuning.programs import ProgramRunner, ProgramTarget
from mapping.tuning.schedule import Schedule
from mapping.tuning.serving import RESULT_MARK
from mapping.tuning.targets import TuningTarget, resolve

Target = TuningTarget | ProgramTarget

log = logging.getLogger(__name__)


#: Relative tolerance of the differential check (compiled code may contract to FMAs).
RTOL = 1e-9


def build(target: TuningTarget, schedule: Schedule, cache_dir: str) -> tuple[Any, float]:
    """Build (or load from the cache) the GT4Py stencil object for ``schedule``."""
    obj, seconds, _ = build_or_load(target, schedule, cache_dir)
    return obj, seconds


def compile_definition(
    definition: Callable[..., None], externals: Mapping[str, Any], schedule: Schedule, cache_dir: str
) -> tuple[Any, bool]:
    """(GT4Py stencil object of ``definition`` built as ``schedule`` says, whether it was compiled
    rather than loaded from the cache): :func:`mapping.tuning.building.compile_definition`, whose
    build name does not depend on the calling process."""
    from mapping.tuning.building import compile_definition as compile_named

    return compile_named(definition, externals, schedule, cache_dir)


def build_or_load(target: TuningTarget, schedule: Schedule, cache_dir: str) -> tuple[Any, float, bool]:
    """(stencil object, seconds, whether it had to be compiled rather than loaded)."""
    if schedule.fuse:
        raise TuningError(
            f"schedule fuse={list(schedule.fuse)} needs a stencil program; {target.name!r} is one stencil"
        )
    t0 = time.perf_counter()
    obj, compiled = compile_definition(target.definition, target.externals, schedule, cache_dir)
    return obj, time.perf_counter() - t0, compiled


def make_runner(
    target: TuningTarget | ProgramTarget, schedule: Schedule, cache_dir: str
) -> tuple[Callable[[Mapping[str, Any], Any], None], float, bool]:
    """(run(fields, domain), build seconds, compiled?) for a stencil or a stencil program."""
    if isinstance(target, ProgramTarget):
        runner = ProgramRunner(
            target, schedule, cache_dir,
            lambda d, e: compile_definition(d, e, schedule, cache_dir),
        )  # fmt: skip
        return runner, runner.seconds, runner.compiled
    obj, seconds, compiled = build_or_load(target, schedule, cache_dir)

    last: list[Any] = [None, {}]  # the last call's domain and scalars: none computed while timing

    def run(fields: Mapping[str, Any], domain: Any) -> None:
        if last[0] is not domain:
            last[:] = [domain, target.scalars(domain)]
        obj(**fields, **last[1], origin=domain.origin, domain=domain.domain, validate_args=False)

    return run, seconds, compiled


def _storages(arrays: Mapping[str, np.ndarray], backend: str) -> dict[str, Any]:
    import gt4py.storage as gt_storage

    # from_array's dtype defaults to float64 whatever the array's: integer fields stay integers
    return {k: gt_storage.from_array(v, dtype=v.dtype, backend=backend) for k, v in arrays.items()}


def reference_outputs(target: Target, domain: Any, seed: int, cache_dir: str) -> dict[str, np.ndarray]:
    """Outputs of the numpy backend (programs: unfused) on the seeded inputs: the differential
    test's reference."""
    run, _, _ = make_runner(target, Schedule(backend="numpy"), cache_dir)
    fields = _storages(target.allocate(domain, seed), "numpy")
    run(fields, domain)
    return {k: np.asarray(fields[k]).copy() for k in target.outputs}


def validate(
    outputs: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    domain: Any,
    axes: Mapping[str, str] | None = None,
) -> str | None:
    """None if every output matches the reference on the interior, else the reason; ``axes``
    names the axes of fields that are not IJK (e.g. ``{"te": "IJ"}``)."""
    for name, ref in reference.items():
        inner = tuple(s for a, s in zip("IJK", domain.interior) if a in (axes or {}).get(name, "IJK"))
        got = np.asarray(outputs[name])[inner]
        want = ref[inner]
        scale = max(float(np.nanmax(np.abs(want))), 1e-300) if want.size else 1.0
        if not np.array_equal(np.isnan(got), np.isnan(want)):
            return f"output {name!r}: NaN pattern differs from the numpy backend"
        err = float(np.nanmax(np.abs(got - want))) / scale if want.size else 0.0
        if err > RTOL:
            return f"output {name!r}: max relative error {err:.3g} > {RTOL:g} vs numpy backend"
    return None


def measure_one(
    target: Target,
    schedule: Schedule,
    domain: Any,
    reference: Mapping[str, np.ndarray],
    cache_dir: str,
    seed: int = 0,
    repeats: int = 7,
    warmup: int = 2,
) -> dict[str, Any]:
    """Build/load, validate, then time ``schedule``: the result record for one schedule."""
    rec: dict[str, Any] = {"key": schedule.key, "build_key": schedule.build_key}
    try:
        run, load_s, _ = make_runner(target, schedule, cache_dir)
        rec["load_seconds"] = load_s
        fields = _storages(target.allocate(domain, seed), schedule.backend)
        call = lambda: run(fields, domain)  # noqa: E731
        call()
        reason = validate(fields, reference, domain, target.field_axes)
        if reason is not None:
            rec.update(status="invalid", error=reason)
            return rec
        for _ in range(warmup):
            call()
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            samples.append(time.perf_counter() - t0)
        med = statistics.median(samples)
        rec.update(
            status="ok",
            median_s=med,
            min_s=min(samples),
            max_s=max(samples),
            noise=(max(samples) - min(samples)) / med if med else 0.0,
            repeats=repeats,
            samples=samples,
        )
    except (Exception, SystemExit) as exc:  # setuptools exits on compiler errors
        rec.update(status="invalid", error=f"{type(exc).__name__}: {exc}"[:2000])
        log.debug("schedule %s failed:\n%s", schedule.describe(), traceback.format_exc())
    return rec


def _append(path: Path, rec: dict[str, Any]) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def run_request(request: Mapping[str, Any], results: Path | None) -> None:
    """Handle ``request``: ``measure`` appends each schedule's record to ``results``; the
    serving modes answer on stdout and write no file."""
    target = resolve(request["target"])
    domain = target.domain(*request["domain"])
    cache_dir = request["cache_dir"]
    schedules = [Schedule.from_dict(s) for s in request["schedules"]]
    mode = request["mode"]
    if mode not in ("measure", "serve", "serve-build"):
        raise TuningError(f"unknown worker mode {mode!r}")
    if mode == "serve-build":
        handle: Callable[[Schedule], dict[str, Any]] = lambda s: build_record(target, s, cache_dir)  # noqa: E731
    else:
        seed = int(request.get("seed", 0))
        reference = reference_outputs(target, domain, seed, cache_dir)
        handle = lambda s: measure_one(  # noqa: E731
            target, s, domain, reference, cache_dir, seed=seed,
            repeats=int(request.get("repeats", 7)), warmup=int(request.get("warmup", 2)),
        )  # fmt: skip
    if mode.startswith("serve"):
        _serve(handle)
        return
    if results is None:
        raise TuningError("the measure mode needs a RESULTS file")
    for s in schedules:
        _append(results, handle(s))


def build_record(target: Target, schedule: Schedule, cache_dir: str) -> dict[str, Any]:
    """Build (or load) ``schedule``: the build record (status, seconds, whether it compiled)."""
    rec: dict[str, Any] = {"key": schedule.key, "build_key": schedule.build_key}
    try:
        _, seconds, compiled = make_runner(target, schedule, cache_dir)
        rec.update(status="ok", build_seconds=seconds, compiled=compiled)
    except (Exception, SystemExit) as exc:  # setuptools exits on compiler errors
        rec.update(status="invalid", error=f"{type(exc).__name__}: {exc}"[:2000])
    return rec


def _serve(handle: Callable[[Schedule], dict[str, Any]]) -> None:
    """Answer every schedule sent as a JSON line on stdin until EOF (:mod:`mapping.tuning.serving`)."""
    sys.stdout.write(RESULT_MARK + json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        if not line.strip():
            break
        rec = handle(Schedule.from_dict(json.loads(line)))
        sys.stdout.write(RESULT_MARK + json.dumps(rec) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.WARNING)
    request = json.loads(Path(argv[0]).read_text())
    run_request(request, Path(argv[1]) if len(argv) > 1 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
