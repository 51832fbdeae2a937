"""Long-lived tuning workers: how many processes an evaluator starts, and what happens when one
dies or does not answer.

Reference: process counts worked out by hand from the schedules' OpenMP environments (numpy and
one-thread gt:cpu_ifirst share ``OMP_NUM_THREADS=1``, two threads is a second environment);
each measured record is checked against the numpy backend inside the worker as in every search.
Compiles gt:cpu_ifirst for laplacian_2d into the test suite's stencil cache (shared with
test_tuning_end_to_end, so reruns only load it).
"""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path

import pytest

from mapping.tuning.measure import TIMEOUT, Evaluator, MeasureConfig, pinned_cores
from mapping.tuning.schedule import Schedule

DOMAIN = (12, 12, 6)
ONE_ENV = [Schedule("numpy"), Schedule("gt:cpu_ifirst", threads=1)]
TWO_THREADS = Schedule("gt:cpu_ifirst", threads=2)


def _config(**kw: object) -> MeasureConfig:
    cfg = MeasureConfig(domain=DOMAIN, repeats=2, warmup=0, jobs=1, cache_dir=Path(os.environ["STRATOFLOW_CACHE_DIR"]))
    return dataclasses.replace(cfg, **kw)


def test_workers_are_started_once_and_reused_across_calls() -> None:
    """Three calls, two OpenMP environments: one build worker and two measuring workers in all
    (one process per schedule and call would be 2 + 5 + 2 = 9), each measuring worker bound to
    as many cores as its threads."""
    with Evaluator("laplacian_2d", _config()) as ev:
        first = ev(ONE_ENV)
        second = ev([*ONE_ENV, TWO_THREADS])
        third = ev([TWO_THREADS])
        assert all(e.ok for e in first + second + third), [e.error for e in first + second + third]
        assert ev.started == 3
        assert len(ev._servers) == 2 and all(s.alive for s in ev._servers.values())
        for env_items, srv in ev._servers.items():  # pinned to their first OMP_NUM_THREADS cores
            want = pinned_cores(int(dict(env_items)["OMP_NUM_THREADS"]))
            assert want is None or os.sched_getaffinity(srv.proc.pid) == want
        workers = [*ev._servers.values(), *ev._builders]
    # closing ends every worker (each process has exited and is reaped)
    assert all(w is not None and w.proc.poll() is not None and not w.alive for w in workers)


def test_dead_workers_are_replaced() -> None:
    """The measuring and the build worker killed between calls are noticed and replaced before
    they are asked: the next call still builds and measures validly, with two more processes."""
    with Evaluator("laplacian_2d", _config()) as ev:
        assert all(e.ok for e in ev(ONE_ENV))
        started = ev.started
        for srv in [*ev._servers.values(), *ev._builders]:
            assert srv is not None
            os.kill(srv.proc.pid, signal.SIGKILL)
            srv.proc.wait()
        again = ev(ONE_ENV)
        assert all(e.ok for e in again), [e.error for e in again]
        assert ev.started == started + 2


def test_a_schedule_without_an_answer_is_retried_once_then_recorded_as_timed_out() -> None:
    """A run timeout far below one call: the worker is killed, a fresh one tries once more, and
    the evaluation is stored as ``timeout`` (retried by the next search), not as a result."""
    with Evaluator("laplacian_2d", _config(run_timeout_s=1e-4)) as ev:
        (res,) = ev([Schedule("gt:cpu_ifirst", threads=1)])
        assert res.status == TIMEOUT and res.median_s is None
        assert res.error == "the run failed on all 2 tries: ran past its timeout; ran past its timeout"
        assert ev.started == 1 + 2  # the build worker, then two measuring workers


def test_at_most_max_servers_measuring_workers_stay_alive() -> None:
    """With room for one measuring worker, alternating environments close the older one."""
    with Evaluator("laplacian_2d", _config()) as ev:
        ev.max_servers = 1
        assert all(e.ok for e in ev([*ONE_ENV, TWO_THREADS]))
        assert len(ev._servers) == 1
        assert ev.started == 1 + 2


def test_interleaved_builds_first_under_the_build_timeout(tmp_path: Path) -> None:
    """Into an empty cache with a build timeout far below one compilation: the gt build is tried
    in a build worker and reported invalid, unmeasured; numpy is still timed in both rounds."""
    with Evaluator("laplacian_2d", _config(cache_dir=tmp_path, build_timeout_s=1e-4)) as ev:
        out = ev.interleaved([Schedule("numpy"), *ONE_ENV[1:]], rounds=2)
        assert out[Schedule("numpy").key]["status"] == "ok" and out[Schedule("numpy").key]["samples"] == 4
        gt = out[ONE_ENV[1].key]
        assert gt["status"] == "invalid" and "build" in gt["error"]
        assert ev.runs == 2 and ev.builds == 0


def test_interleaved_loads_built_schedules() -> None:
    """Both tiny-space builds in the suite's cache (compiled here if absent): both timed, pooled."""
    with Evaluator("laplacian_2d", _config()) as ev:
        out = ev.interleaved([*ONE_ENV, TWO_THREADS], rounds=2)
        assert all(r["status"] == "ok" and r["samples"] == 4 for r in out.values()), out


def _crash_when_asked(monkeypatch, mode: str, crash: Schedule) -> None:  # noqa: ANN001
    """Make every ``mode`` worker asked for ``crash`` die by SIGKILL while it works on it, as a
    crash of the generated code or of the compiler would (its output ends, it exits on a signal)."""
    from mapping.tuning.serving import WorkerServer

    ask, answer = WorkerServer.ask, WorkerServer._answer

    def asking(self: WorkerServer, schedule: Schedule, timeout: float) -> dict | None:
        self.crash_now = self.mode == mode and schedule.key == crash.key
        return ask(self, schedule, timeout)

    def answering(self: WorkerServer, timeout: float) -> dict | None:
        if getattr(self, "crash_now", False):
            os.kill(self.proc.pid, signal.SIGKILL)
        return answer(self, timeout)

    monkeypatch.setattr(WorkerServer, "ask", asking)
    monkeypatch.setattr(WorkerServer, "_answer", answering)


def test_a_schedule_that_kills_its_worker_spoils_only_itself(monkeypatch) -> None:  # noqa: ANN001
    """A schedule whose run kills its measuring worker is invalid, named with the signal, and not
    run again; numpy, next in the same OpenMP environment, is measured in every round by a fresh
    worker (one build worker, the first measuring worker, one replacement)."""
    crash = ONE_ENV[1]
    _crash_when_asked(monkeypatch, "serve", crash)
    with Evaluator("laplacian_2d", _config()) as ev:
        out = ev.interleaved([crash, Schedule("numpy")], rounds=3)
        assert out[crash.key] == {"status": "invalid", "error": "the re-measurement killed its worker (SIGKILL)"}
        assert out[Schedule("numpy").key]["status"] == "ok" and out[Schedule("numpy").key]["samples"] == 6
        assert ev.started == 3 and ev.runs == 4


@pytest.mark.parametrize(("mode", "what", "started"), [("serve", "the run", 1 + 3), ("serve-build", "the build", 2 + 1)])
def test_a_build_or_run_that_kills_its_worker_on_both_tries_is_invalid(
    monkeypatch, mode: str, what: str, started: int  # noqa: ANN001
) -> None:
    """A run (or build, as a compiler crash would) that kills its worker, then the fresh one:
    ``invalid``, named by the signal, unmeasured (stored, and not tried again by the next
    search), unlike a timeout; numpy after it is still measured. Workers: for a run, one build
    worker and three measuring ones (numpy needs a third); for a build, two build workers and
    one measuring worker."""
    crash = ONE_ENV[1]
    _crash_when_asked(monkeypatch, mode, crash)
    with Evaluator("laplacian_2d", _config()) as ev:
        bad, numpy = ev([crash, Schedule("numpy")])
        assert (bad.status, bad.median_s, bad.built) == ("invalid", None, False)
        assert bad.error == f"{what} killed its worker on all 2 tries (SIGKILL, SIGKILL)"
        assert numpy.ok and ev.runs == 1
        assert ev.started == started
