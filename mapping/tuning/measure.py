"""Evaluate schedules in worker processes: parallel cached builds, then serial timed runs.

Compilation is the expensive part (15-60 s per C++ build on two busy cores), so an evaluation
is accounted as builds + runs. Builds of distinct artefacts run in up to ``jobs`` long-lived
build workers at once (safe: each has its own GT4Py cache entry, keyed by the schedule's build
hash). Timed runs happen one at a time in a long-lived measuring worker per OpenMP environment
(:mod:`mapping.tuning.serving`), each with a timeout; a crash or timeout costs only the schedule
being measured, which is retried once in a fresh worker and then recorded as timed out (tried
again by the next search).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mapping.tuning.errors import TuningError
from mapping.tuning.schedule import Schedule
from mapping.tuning.serving import WorkerServer

log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    """Where tuned builds are cached: ``$STRATOFLOW_TUNING_CACHE`` or ~/.cache/stratoflow/builds."""
    env = os.environ.get("STRATOFLOW_TUNING_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "stratoflow" / "builds"


@dataclass(frozen=True)
class MeasureConfig:
    """How schedules are measured."""

    domain: tuple[int, int, int] = (96, 96, 48)
    repeats: int = 7
    warmup: int = 2
    seed: int = 0
    jobs: int = 2  # parallel build processes
    build_timeout_s: float = 3600.0  # per compilation (two shared cores can be very slow)
    run_timeout_s: float = 120.0  # per schedule
    startup_timeout_s: float = 900.0  # per worker: imports, reference run (slow on loaded cores)
    cache_dir: Path = field(default_factory=default_cache_dir)
    cores: int = field(default_factory=lambda: os.cpu_count() or 1)

    def __post_init__(self) -> None:
        if len(self.domain) != 3 or min(self.domain) < 1:
            raise TuningError(f"domain must be three positive sizes nx,ny,nz, got {self.domain}")
        object.__setattr__(self, "cache_dir", Path(self.cache_dir).resolve())
        object.__setattr__(self, "domain", tuple(int(x) for x in self.domain))
        if self.repeats < 1 or self.warmup < 0 or self.jobs < 1:
            raise TuningError("repeats and jobs must be >= 1 and warmup >= 0")


@dataclass
class Evaluation:
    """The outcome of one schedule on one stencil."""

    schedule: Schedule
    status: str  # "ok", "invalid" (failed validation or build, or crashed on both tries) or "timeout" (retried)
    median_s: float | None = None
    min_s: float | None = None
    max_s: float | None = None
    noise: float | None = None
    build_seconds: float | None = None
    built: bool = False  # True if this evaluation paid for a compilation
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.median_s is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "schedule": self.schedule.to_dict(),
            "key": self.schedule.key,
            "status": self.status,
            "median_s": self.median_s,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "noise": self.noise,
            "build_seconds": self.build_seconds,
            "built": self.built,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Evaluation:
        return cls(
            schedule=Schedule.from_dict(d["schedule"]),
            status=d["status"],
            median_s=d.get("median_s"),
            min_s=d.get("min_s"),
            max_s=d.get("max_s"),
            noise=d.get("noise"),
            build_seconds=d.get("build_seconds"),
            built=bool(d.get("built", False)),
            error=d.get("error", ""),
        )


def pinned_cores(threads: int) -> set[int] | None:
    """The first ``threads`` cores this process may run on (None where affinity is not
    available or fewer cores are allowed)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed[:threads]) if 0 < threads <= len(allowed) else None


#: Status of an evaluation that ran out of time (or crashed once, then ran out of time): stored,
#: but retried by the next search. A build or run that kills its worker on both tries is invalid.
TIMEOUT = "timeout"


def lost(died: list[str | None], what: str) -> tuple[str, str]:
    """Status and error of a build or run (``what``) whose worker failed on every try; ``died``
    holds each try's :attr:`WorkerServer.died` (None: killed for running past its timeout). A
    crash on every try is the generated code's, so ``invalid``; a timeout may be the machine's
    load, so :data:`TIMEOUT`, tried again by the next search."""
    tries = "" if len(died) == 1 else f" on all {len(died)} tries"
    if all(died):
        return "invalid", f"{what} killed its worker{tries} ({', '.join(map(str, died))})"
    how = "; ".join(f"killed its worker ({d})" if d else "ran past its timeout" for d in died)
    return TIMEOUT, f"{what} failed{tries}: {how}"


class Evaluator:
    """Measures schedules of one stencil; ``evaluator(schedules)`` -> list of Evaluation.

    Builds go to up to ``jobs`` long-lived build workers and timed runs to one long-lived
    measuring worker per OpenMP environment (:class:`~mapping.tuning.serving.WorkerServer`; at
    most :attr:`max_servers` alive, the least recently used closed first), so a search pays the
    imports and the numpy reference run once per worker, not once per schedule. ``close()`` (or
    ``with Evaluator(...) as ev``) ends them; they also end when the evaluator is collected.
    """

    #: measuring workers kept alive at once: one per OpenMP environment of the spaces (12), about
    #: 230 MB each with GT4Py and DaCe imported
    max_servers = 12

    def __init__(self, target: str, config: MeasureConfig | None = None) -> None:
        self.target = target
        self.config = config or MeasureConfig()
        from stencils.config import ensure_writable_dir
        from stencils.errors import StencilError

        try:
            ensure_writable_dir(
                self.config.cache_dir, "the tuning build cache", "--cache-dir or STRATOFLOW_TUNING_CACHE"
            )
        except StencilError as exc:
            raise TuningError(str(exc)) from None
        self.last_stderr = ""
        self.builds = 0  # compilations actually paid
        self.runs = 0  # schedules measured
        self.started = 0  # worker processes started
        self._servers: OrderedDict[tuple[tuple[str, str], ...], WorkerServer] = OrderedDict()
        self._builders: list[WorkerServer | None] = [None] * self.config.jobs
        self._free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(self.config.jobs):
            self._free.put(slot)
        self._finalizer = weakref.finalize(self, _close_all, self._servers, self._builders)

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End every worker this evaluator started."""
        self._finalizer()

    def _request(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "domain": list(self.config.domain),
            "cache_dir": str(self.config.cache_dir),
            "repeats": self.config.repeats,
            "warmup": self.config.warmup,
            "seed": self.config.seed,
        }

    def _serve(self, mode: str, env: dict[str, str], cores: set[int] | None = None) -> WorkerServer:
        self.started += 1
        return WorkerServer(mode, self._request(), env, self.config.startup_timeout_s, cores)

    def _serve_runs(self, env_items: tuple[tuple[str, str], ...], pin: bool = True) -> WorkerServer:
        """A measuring worker for one OpenMP environment, pinned (``pin``) to its first
        ``OMP_NUM_THREADS`` cores."""
        env = dict(env_items)
        return self._serve("serve", env, pinned_cores(int(env.get("OMP_NUM_THREADS", "1"))) if pin else None)

    def _child(
        self, mode: str, schedules: list[Schedule], env: dict[str, str], timeout: float,
        wrap: list[str] | None = None, repeats: int | None = None,
    ) -> list[dict[str, Any]]:  # fmt: skip
        request = {**self._request(), "mode": mode, "schedules": [s.to_dict() for s in schedules],
                   "repeats": repeats or self.config.repeats}  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="stratoflow-tune-") as tmp:
            req, res = Path(tmp) / "request.json", Path(tmp) / "results.jsonl"
            req.write_text(json.dumps(request))
            child_env = dict(os.environ)
            child_env.update(env)
            try:
                proc = subprocess.run(
                    list(wrap or []) + [sys.executable, "-m", "mapping.tuning.worker", str(req), str(res)],
                    env=child_env,
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                )
                self.last_stderr = proc.stderr
                if proc.returncode != 0:
                    log.warning(
                        "tuning worker (%s, %d schedules) exited with %d: %s",
                        mode, len(schedules), proc.returncode, proc.stderr[-1500:],
                    )
            except subprocess.TimeoutExpired:
                log.warning("tuning worker (%s, %d schedules) timed out after %.0f s", mode, len(schedules), timeout)
            if not res.exists():
                return []
            return [json.loads(line) for line in res.read_text().splitlines() if line.strip()]

    def build_all(self, schedules: Iterable[Schedule]) -> dict[str, dict[str, Any]]:
        """Compile every distinct artefact (in parallel); build_key -> build record."""
        unique: dict[str, Schedule] = {}
        for s in schedules:
            if s.compiled:
                unique.setdefault(s.build_key, s)
        # the build does not depend on OpenMP runtime settings; build under all cores
        env = {"OMP_NUM_THREADS": str(self.config.cores)}

        def one(s: Schedule) -> dict[str, Any]:
            """``s``'s build record; a build that kills its worker is tried once more in a fresh
            one (one that runs past the build timeout is not)."""
            died: list[str | None] = []
            for _ in range(2):
                slot = self._free.get()
                try:
                    srv = self._builders[slot]
                    if srv is None or not srv.alive:
                        srv = self._builders[slot] = self._serve("serve-build", env)
                    rec = srv.ask(s, self.config.build_timeout_s)
                finally:
                    self._free.put(slot)
                if rec is not None:
                    return rec
                died.append(srv.died)
                if srv.died is None:  # past the build timeout: not tried again
                    break
            status, error = lost(died, "the build")
            return {"build_key": s.build_key, "status": status, "error": error}

        out: dict[str, dict[str, Any]] = {}
        with ThreadPoolExecutor(max_workers=self.config.jobs) as pool:
            for rec in pool.map(one, unique.values()):
                out[rec["build_key"]] = rec
                if rec.get("status") == "ok" and rec.get("compiled"):
                    self.builds += 1
        return out

    def perf_run(self, schedule: Schedule, repeats: int) -> str:
        """Measure ``schedule`` with ``repeats`` calls under ``perf stat``; perf's output."""
        from mapping.tuning.counters import perf_prefix

        self.last_stderr = ""
        self._child("measure", [schedule], schedule.environment(self.config.cores),
                    self.config.startup_timeout_s, wrap=perf_prefix(), repeats=repeats)  # fmt: skip
        return self.last_stderr

    def interleaved(
        self, schedules: list[Schedule], rounds: int = 3, pin: bool = True
    ) -> dict[str, dict[str, Any]]:
        """Re-measure ``schedules`` under identical conditions: one serving child per OpenMP
        environment, all alive at once; ``rounds`` rounds each measure every schedule once (the
        order of environments rotated, reversed every other round), pooling all timed samples.
        ``pin``: each child is bound to its first ``OMP_NUM_THREADS`` allowed cores
        (``sched_setaffinity``, as ``taskset`` does; no ``OMP_PLACES``, so the schedule's own
        binding, or none, applies within them).
        Builds missing from the cache are compiled first, in parallel, under the build timeout (a
        schedule whose build fails is reported invalid, unmeasured). A schedule that fails, or
        kills its worker or runs past the run timeout, is invalid and not run again; the other
        schedules of its environment go on in a fresh worker.
        Returns key -> {status, median_s, min_s, noise, samples, samples_s (every timing)}."""
        builds = self.build_all(schedules)
        errors: dict[str, str] = {}
        groups: dict[tuple[tuple[str, str], ...], list[Schedule]] = {}
        for s in {s.key: s for s in schedules}.values():
            b = _failed_build(builds, s)
            if b is not None:
                errors[s.key] = b.get("error") or "build failed"
                continue
            groups.setdefault(tuple(sorted(s.environment(self.config.cores).items())), []).append(s)
        samples: dict[str, list[float]] = {s.key: [] for s in schedules}
        servers: dict[tuple[tuple[str, str], ...], WorkerServer] = {}

        def server(env_items: tuple[tuple[str, str], ...]) -> WorkerServer:
            """The environment's worker; a fresh one if a schedule killed the last."""
            srv = servers.get(env_items)
            if srv is None or not srv.alive:
                if srv is not None:
                    srv.close()
                srv = servers[env_items] = self._serve_runs(env_items, pin)
            return srv

        try:
            for env_items in groups:
                server(env_items)
            order = list(groups)
            for r in range(rounds):
                rot = order[r % len(order):] + order[: r % len(order)]
                for env_items in rot if r % 2 == 0 else rot[::-1]:
                    for s in groups[env_items]:
                        if s.key in errors:  # failed or crashed once: not run again
                            continue
                        srv = server(env_items)
                        rec = srv.ask(s, self.config.run_timeout_s)
                        self.runs += 1
                        if rec is None:
                            errors[s.key] = lost([srv.died], "the re-measurement")[1]
                        elif rec.get("status") == "ok":
                            samples[s.key] += rec.get("samples") or [rec["median_s"]]
                        else:
                            errors[s.key] = rec.get("error", rec.get("status", "failed"))
        finally:
            for srv in servers.values():
                srv.close()
        out: dict[str, dict[str, Any]] = {}
        for key, xs in samples.items():
            if not xs or key in errors:
                out[key] = {"status": "invalid", "error": errors.get(key, "no sample")}
                continue
            med = statistics.median(xs)
            out[key] = {
                "status": "ok", "median_s": med, "min_s": min(xs), "samples": len(xs),
                "noise": (max(xs) - min(xs)) / med if med else 0.0, "samples_s": list(xs),
            }  # fmt: skip
        return out

    def __call__(
        self,
        schedules: list[Schedule],
        progress: Callable[[Evaluation], None] | None = None,
    ) -> list[Evaluation]:
        builds = self.build_all(schedules)
        results: dict[str, Evaluation] = {}
        to_run: list[Schedule] = []
        for s in schedules:
            b = _failed_build(builds, s)
            if b is not None:
                ev = Evaluation(s, b["status"], error=b.get("error", "build failed"), built=False)
                results[s.key] = ev
                if progress:
                    progress(ev)
            else:
                to_run.append(s)
        groups: dict[tuple[tuple[str, str], ...], list[Schedule]] = {}
        for s in to_run:
            groups.setdefault(tuple(sorted(s.environment(self.config.cores).items())), []).append(s)
        for env_items, group in groups.items():
            for s in group:
                rec, died = self._measure(env_items, s)
                if rec is None:
                    status, error = lost(died, "the run")
                    ev = Evaluation(s, status, error=error)
                else:
                    b = builds.get(s.build_key, {})
                    ev = Evaluation(
                        schedule=s,
                        status=rec["status"],
                        median_s=rec.get("median_s"),
                        min_s=rec.get("min_s"),
                        max_s=rec.get("max_s"),
                        noise=rec.get("noise"),
                        build_seconds=b.get("build_seconds", rec.get("load_seconds")),
                        built=bool(b.get("compiled")),
                        error=rec.get("error", ""),
                    )
                    self.runs += 1
                results[s.key] = ev
                if progress:
                    progress(ev)
        return [results[s.key] for s in schedules]

    def _measure(
        self, env_items: tuple[tuple[str, str], ...], schedule: Schedule
    ) -> tuple[dict[str, Any] | None, list[str | None]]:
        """``schedule``'s record from the measuring worker of its environment, pinned to its
        first ``OMP_NUM_THREADS`` cores as in :meth:`interleaved`; a worker that dies or times
        out is replaced and the schedule tried once more. Returns the record (None if both
        tries failed) and how each failed try's worker ended (:attr:`WorkerServer.died`)."""
        died: list[str | None] = []
        for _ in range(2):
            srv = self._servers.pop(env_items, None)
            if srv is None or not srv.alive:
                if srv is not None:
                    srv.close()
                while len(self._servers) >= self.max_servers:
                    self._servers.popitem(last=False)[1].close()
                srv = self._serve_runs(env_items)
            self._servers[env_items] = srv  # most recently used last
            rec = srv.ask(schedule, self.config.run_timeout_s)
            if rec is not None:
                return rec, died
            died.append(srv.died)
        return None, died


def _failed_build(builds: dict[str, dict[str, Any]], schedule: Schedule) -> dict[str, Any] | None:
    """The record of ``schedule``'s build from :meth:`Evaluator.build_all` if that build failed."""
    b = builds.get(schedule.build_key)
    return b if b is not None and b.get("status") != "ok" else None


def _close_all(
    servers: OrderedDict[tuple[tuple[str, str], ...], WorkerServer], builders: list[WorkerServer | None]
) -> None:
    for srv in [*servers.values(), *builders]:
        if srv is not None:
            srv.close()
    servers.clear()
    builders[:] = [None] * len(builders)
