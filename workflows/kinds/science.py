"""Step kinds that call stratoflow's capabilities (stencils, FV3, StencilFlow, tuning, ENS-10).

Each adapter calls its capability through its ``stratoflow`` sub-command or its Python entry
point, and reports the capability as "not landed" when that interface is not there.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from workflows.errors import WorkflowError
from workflows.kinds.base import CliKind, EntryKind, PlanContext, TaskPlan, cli_argv, cli_rejects
from workflows.spec import (
    ENS10EvaluateStep,
    ENS10SampleStep,
    ENS10TrainStep,
    FV3Step,
    MapStep,
    StencilsDemoStep,
    StepBase,
    TuneStep,
)


class StencilsDemoKind(CliKind):
    name = "stencils_demo"
    summary = "compile, run and verify the stencil library"
    command = ("stencils", "demo")

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, StencilsDemoStep)
        args = self.command
        if step.backend is not None:
            args += ("--backend", step.backend)
        return TaskPlan(cli_argv(*args))


class FV3Kind(CliKind):
    name = "fv3"
    summary = "an FV3 dynamical-core case on 6 x layout^2 MPI ranks"
    command = ("fv3", "run")
    WARM_DAYS = 0.01  # the serial cache warm-up: a step or two

    def _args(self, step: FV3Step, output: Path | None, days: float | None = None) -> tuple[str, ...]:
        args = (
            *self.command, "--case", step.case, "--resolution", str(step.resolution),
            "--layout", str(step.layout), "--days", str(days or step.days),
        )  # fmt: skip
        if output is not None:
            args += ("--output", str(output))
        if cli_rejects((*args, "--no-progress")) is None:
            args += ("--no-progress",)
        if cli_rejects((*args, "--backend", step.backend)) is None:
            args += ("--backend", step.backend)
        elif step.backend != "numpy":
            raise WorkflowError(
                f"step {step.name}: `stratoflow fv3 run` has no --backend option, so backend "
                f"{step.backend!r} cannot be selected; remove 'backend' from the step"
            )
        return args

    def probe_args(self) -> tuple[str, ...]:
        return self._args(FV3Step(name="probe", kind="fv3"), Path("probe.nc"))

    def hash_context(self, step: StepBase) -> dict[str, Any]:
        """The tuned schedules the run's stencils are built with (fv3core.stencil_factory):
        applying or removing one reruns the step instead of reusing its old output."""
        try:
            from fv3core.stencil_factory import applied_schedules
        except ImportError:
            return {}
        applied = applied_schedules()
        return {"tuned_schedules": {k: s.to_dict() for k, s in sorted(applied.items())}} \
            if applied else {}  # fmt: skip

    def missing_for(self, step: StepBase) -> str | None:
        assert isinstance(step, FV3Step)
        reason = self.missing()
        if reason is not None:
            return reason
        try:
            from fv3core.config import CASES
        except ImportError as exc:
            return f"fv3core.config is not importable ({exc})"
        if step.case not in CASES:
            return f"FV3 case {step.case} is not implemented yet (implemented: {', '.join(CASES)})"
        return None

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, FV3Step)
        args = self._args(step, ctx.out_dir / f"{step.case}_c{step.resolution}.nc")
        warm = None
        if step.warm_cache and step.ranks > 1:
            # Outside mpiexec/srun the FV3 command runs all ranks in one process: one short
            # serial run builds every stencil into the cache before the ranks start.
            warm = cli_argv(*self._args(step, None, days=self.WARM_DAYS))
        return TaskPlan(cli_argv(*args), ranks=step.ranks, warm_argv=warm)


class MapKind(CliKind):
    name = "map"
    summary = "map a stencil-program DAG with StencilFlow and simulate it"
    command = ("map",)

    def _args(self, step: MapStep, out: Path) -> tuple[str, ...]:
        args: tuple[str, ...] = ("map", str(step.program), "--devices", str(step.devices))
        if step.simulate:
            args += ("--simulate",)
        return (*args, "--report", str(out / "map.json"), "--dot", str(out / "dag.png"))

    def probe_args(self) -> tuple[str, ...]:
        return self._args(MapStep(name="probe", kind="map", program=Path("p.json")), Path("out"))

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, MapStep)
        return TaskPlan(cli_argv(*self._args(step, ctx.out_dir)))


class TuneKind(CliKind):
    name = "tune"
    summary = "search or transfer-tune one stencil's schedule"
    command = ("tune",)
    DB = "tuning.sqlite"

    def _args(self, step: TuneStep, out: Path) -> tuple[str, ...]:
        args: tuple[str, ...] = ("tune", step.mode, step.stencil, "--space", step.space)
        if step.mode == "transfer":
            args += ("--k", str(step.k))
        if step.domain:
            args += ("--domain", step.domain)
        return (*args, "--db", str(out / self.DB), "--report", str(out / "tuning.md"))

    def probe_args(self) -> tuple[str, ...]:
        probe = TuneStep(name="probe", kind="tune", db_from="search")
        return self._args(probe, Path("out"))

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, TuneStep)
        if step.db_from is not None:
            source = ctx.input_dir(step.db_from) / self.DB
            if not source.is_file():
                raise WorkflowError(
                    f"step {step.name}: {source} is missing; step {step.db_from} must be a tune "
                    "step that wrote a tuning database"
                )
            shutil.copyfile(source, ctx.out_dir / self.DB)  # the transfer extends a copy
        return TaskPlan(cli_argv(*self._args(step, ctx.out_dir)))


class ENS10SampleKind(EntryKind):
    name = "ens10_sample"
    summary = "write the ENS-10 sample data set"
    target = "ens10.sample:make_sample"
    params = ("out_dir", "grid", "years", "n_dates", "layouts")

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        assert isinstance(step, ENS10SampleStep)
        return {"out_dir": str(ctx.out_dir), "grid": step.grid, "years": step.years,
                "n_dates": step.n_dates, "layouts": list(step.layouts)}  # fmt: skip


def ens10_data_dir(folder: Path) -> Path:
    """The preprocessed (netCDF) layout inside a sample step's output folder."""
    return folder / "netcdf" if (folder / "netcdf").is_dir() else folder


class ENS10TrainKind(EntryKind):
    name = "ens10_train"
    summary = "train one ENS-10 baseline (EMOS, MLP, ...)"
    target = "ens10.train:train"
    params = ("model", "target", "data_dir", "out_dir", "epochs")

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        assert isinstance(step, ENS10TrainStep)
        return {
            "model": step.model, "target": step.target, "data_dir": str(ens10_data_dir(ctx.input_dir(step.data_from))),
            "out_dir": str(ctx.out_dir), "epochs": step.epochs,
        }  # fmt: skip


def checkpoint_of(train_dir: Path) -> Path:
    """The checkpoint a finished ``ens10_train`` step returned (its ``result.json``)."""
    result = train_dir / "result.json"
    if not result.is_file():
        raise WorkflowError(f"{result} is missing: the training step did not report a checkpoint")
    path = Path(json.loads(result.read_text()))
    return path if path.is_absolute() else train_dir / path


class ENS10EvaluateKind(EntryKind):
    name = "ens10_evaluate"
    summary = "evaluate trained ENS-10 baselines (CRPS, EECRPS, ...)"
    target = "ens10.evaluate:evaluate"
    params = ("data_dir", "checkpoints", "out_dir")

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        assert isinstance(step, ENS10EvaluateStep)
        checkpoints = [
            str(checkpoint_of(d)) for name in step.models_from for d in ctx.inputs[name]
        ]
        return {
            "data_dir": str(ens10_data_dir(ctx.input_dir(step.data_from))), "checkpoints": checkpoints,
            "out_dir": str(ctx.out_dir),
        }  # fmt: skip
