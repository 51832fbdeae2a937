"""A schedule is data: which GT4Py backend, compiler flags, OIR passes and SDFG transformations
build a stencil, and which OpenMP runtime settings run it. JSON in, JSON out, replayable.

The build part (everything except the OpenMP runtime settings) has its own hash, ``build_key``:
schedules that differ only in threads or thread binding share one compiled artefact.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mapping.tuning.errors import TuningError

#: Backends a schedule may name (the CPU backends that build here).
SCHEDULE_BACKENDS: tuple[str, ...] = (
    "numpy",
    "gt:cpu_ifirst",
    "gt:cpu_kfirst",
    "dace:cpu",
    "dace:cpu_KJI",
    "dace:cpu_kfirst",
    "debug",  # GT4Py's Python-loop reference backend: no compilation; for tests, never in a space
)
DACE_BACKENDS = tuple(b for b in SCHEDULE_BACKENDS if b.startswith("dace"))
COMPILED = tuple(b for b in SCHEDULE_BACKENDS if ":" in b)

#: GT4Py OIR passes a schedule may skip (fusion and local-storage decisions made before codegen).
OIR_SKIPPABLE: tuple[str, ...] = (
    "AdjacentLoopMerging",
    "HorizontalExecutionMerging",
    "OnTheFlyMerging",
    "LocalTemporariesToScalars",
    "WriteBeforeReadTemporariesToScalars",
    "IJCacheDetection",
    "KCacheDetection",
)

#: SDFG transformation kinds (see :mod:`mapping.tuning.sdfg_transforms`) and their parameters.
SDFG_KINDS: dict[str, tuple[str, ...]] = {
    "omp_schedule": ("kind", "chunk"),  # OpenMP schedule clause of the parallel maps
    "collapse": (),  # collapse(2) on 2-D parallel maps
    "inner_sequential": (),  # nested maps run sequentially (one parallel region per stencil)
    "tile": ("sizes",),  # MapTiling of the horizontal maps
    "map_fusion": (),  # MapFusion of producer/consumer maps
    "vectorize": ("width",),  # dace Vectorization of innermost maps
}

OMP_SCHEDULES = ("static", "dynamic", "guided")


@dataclass(frozen=True)
class Schedule:
    """One point of the schedule space (hashable; ``to_json``/``from_json`` round-trip)."""

    backend: str = "numpy"
    opt_flags: str = ""  # extra C++ optimisation flags, e.g. "-march=native -funroll-loops"
    oir_skip: tuple[str, ...] = ()  # GT4Py OIR passes not run
    sdfg: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()  # (kind, params) in order
    threads: int = 0  # OMP_NUM_THREADS; 0 = all cores
    proc_bind: str = ""  # OMP_PROC_BIND ("", "close", "spread")
    wait_policy: str = ""  # OMP_WAIT_POLICY ("", "active", "passive")
    label: str = field(default="", compare=False)
    fuse: tuple[int, ...] = ()  # programs: sizes of consecutive call groups fused into one stencil

    def __post_init__(self) -> None:
        object.__setattr__(self, "fuse", tuple(int(x) for x in self.fuse))
        if self.fuse and min(self.fuse) < 1:
            raise TuningError(f"schedule fuse={list(self.fuse)}: group sizes must be >= 1")
        if self.backend not in SCHEDULE_BACKENDS:
            raise TuningError(
                f"schedule backend {self.backend!r} is not tunable here; use one of "
                f"{', '.join(SCHEDULE_BACKENDS)}"
            )
        bad = [p for p in self.oir_skip if p not in OIR_SKIPPABLE]
        if bad:
            raise TuningError(f"schedule oir_skip names unknown passes {bad}; allowed: {OIR_SKIPPABLE}")
        object.__setattr__(self, "oir_skip", tuple(sorted(self.oir_skip)))
        for kind, params in self.sdfg:
            if kind not in SDFG_KINDS:
                raise TuningError(
                    f"schedule sdfg transformation {kind!r} is unknown; allowed: {list(SDFG_KINDS)}"
                )
            extra = {k for k, _ in params} - set(SDFG_KINDS[kind])
            if extra:
                raise TuningError(f"sdfg transformation {kind!r} has unknown parameters {extra}")
        if self.sdfg and self.backend not in DACE_BACKENDS:
            raise TuningError(
                f"SDFG transformations need a dace backend, schedule has {self.backend!r}"
            )
        if self.wait_policy not in ("", "active", "passive"):
            raise TuningError(f"schedule wait_policy {self.wait_policy!r}: use active, passive or ''")
        if self.backend in ("numpy", "debug") and (
            self.opt_flags or self.threads or self.proc_bind or self.wait_policy
        ):
            raise TuningError(f"the {self.backend} backend takes no compiler flags or OpenMP settings")
        if self.threads < 0:
            raise TuningError(f"schedule threads must be >= 0, got {self.threads}")
        if self.proc_bind not in ("", "close", "spread", "true", "false"):
            raise TuningError(f"schedule proc_bind {self.proc_bind!r}: use close, spread or ''")

    # -- identity -------------------------------------------------------------------------
    def build_dict(self) -> dict[str, Any]:
        """What the compiled artefact depends on."""
        d: dict[str, Any] = {
            "backend": self.backend,
            "opt_flags": self.opt_flags,
            "oir_skip": list(self.oir_skip),
            "sdfg": [[kind, dict(params)] for kind, params in self.sdfg],
        }
        if self.fuse:  # only present for fused programs: stencil schedules keep their hashes
            d["fuse"] = list(self.fuse)
        return d

    def to_dict(self) -> dict[str, Any]:
        d = self.build_dict()
        d.update(threads=self.threads, proc_bind=self.proc_bind)
        if self.wait_policy:
            d["wait_policy"] = self.wait_policy
        if self.label:
            d["label"] = self.label
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def build_key(self) -> str:
        blob = json.dumps(self.build_dict(), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def key(self) -> str:
        d = self.to_dict()
        d.pop("label", None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def compiled(self) -> bool:
        return self.backend in COMPILED

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "schedule") -> Schedule:
        """The schedule of a JSON object, validated by
        :class:`~mapping.tuning.records.ScheduleRecord` (TuningError naming ``source`` and the
        field of a wrong type or value)."""
        from mapping.tuning.records import schedule_record

        rec = schedule_record(dict(data) if isinstance(data, Mapping) else data, source)
        sdfg = tuple(
            (kind, tuple(sorted((k, _freeze(v)) for k, v in params.items())))
            for kind, params in rec.sdfg
        )
        try:
            return cls(
                backend=rec.backend, opt_flags=rec.opt_flags, oir_skip=tuple(rec.oir_skip),
                sdfg=sdfg, threads=rec.threads, proc_bind=rec.proc_bind,
                wait_policy=rec.wait_policy, label=rec.label, fuse=tuple(rec.fuse),
            )  # fmt: skip
        except TuningError as exc:
            raise TuningError(f"{source}: {exc}") from None

    @classmethod
    def from_json(cls, text: str, source: str = "schedule") -> Schedule:
        """The schedule of JSON ``text`` (see :meth:`from_dict`)."""
        from mapping.tuning.records import parse_schedule

        return cls.from_dict(parse_schedule(text, source).model_dump(), source)

    # -- how to build and run it ----------------------------------------------------------
    def gt4py_options(self) -> dict[str, Any]:
        """Keyword arguments for ``gtscript.stencil`` (backend options that enter GT4Py's ID)."""
        opts: dict[str, Any] = {}
        if not self.compiled:
            return opts
        if self.opt_flags:
            opts["extra_opt_flags"] = self.opt_flags
        if self.oir_skip:
            from stencils.gt4py_internals import oir_pipeline_without

            opts["oir_pipeline"] = oir_pipeline_without(self.oir_skip)
        if self.sdfg:
            from mapping.tuning.sdfg_option import SDFG_OPTION

            opts[SDFG_OPTION] = json.dumps([[k, dict(p)] for k, p in self.sdfg], sort_keys=True)
        return opts

    def environment(self, cores: int) -> dict[str, str]:
        """OpenMP environment variables this schedule runs under."""
        if not self.compiled:
            return {"OMP_NUM_THREADS": "1"}
        env = {"OMP_NUM_THREADS": str(self.threads or cores)}
        if self.proc_bind:
            env["OMP_PROC_BIND"] = self.proc_bind
        if self.wait_policy:
            env["OMP_WAIT_POLICY"] = self.wait_policy
        return env

    def with_fuse(self, fuse: tuple[int, ...] = ()) -> Schedule:
        """The same schedule with another fusion of a program's calls (``()``: none)."""
        return replace(self, fuse=tuple(fuse))

    def describe(self) -> str:
        parts = [self.backend]
        if self.fuse:
            parts.append("fuse=" + "+".join(map(str, self.fuse)))
        if self.opt_flags:
            parts.append(self.opt_flags)
        if self.oir_skip:
            parts.append("skip:" + ",".join(self.oir_skip))
        for kind, params in self.sdfg:
            parts.append(kind + ("(" + ",".join(f"{k}={v}" for k, v in params) + ")" if params else ""))
        if self.compiled:
            parts.append(f"threads={self.threads or 'all'}")
            if self.proc_bind:
                parts.append(f"bind={self.proc_bind}")
            if self.wait_policy:
                parts.append(f"wait={self.wait_policy}")
        return " ".join(parts)


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


DEFAULT_SCHEDULE = Schedule(backend="numpy", label="default")


def schedules_to_json(schedules: list[Schedule]) -> str:
    return json.dumps([s.to_dict() for s in schedules], indent=1, sort_keys=True)


