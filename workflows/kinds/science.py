"""Step kinds that call stratoflow's capabilities (stencils, FV3, StencilFlow, tuning, ENS-10).

Each adapter calls its capability through its ``stratoflow`` sub-command or its Python entry
point, and names the stratoflow packages that command imports and the libraries its results
depend on (the step's code key, :mod:`workflows.kinds.code`).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

from workflows.errors import WorkflowError
from workflows.kinds.base import CliKind, EntryKind, PlanContext, TaskPlan, cli_argv
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

log = logging.getLogger(__name__)


class StencilsDemoKind(CliKind):
    name = "stencils_demo"
    summary = "compile, run and verify the stencil library"
    command = ("stencils", "demo")
    packages = ("stencils", "workflows")
    libraries = ("numpy", "gt4py", "dace", "scipy")

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
    packages = ("fv3core", "mapping", "stencils", "workflows")
    libraries = ("numpy", "gt4py", "dace", "scipy", "xarray", "netCDF4", "f90nml", "mpi4py", "mpich")
    #: the serial cache warm-up: one hour, a few steps of every case's time step (FV3's
    #: dt_atmos up to 7200 s; a shorter run than half a step is refused)
    WARM_DAYS = 1.0 / 24.0

    def _args(self, step: FV3Step, output: Path | None, days: float | None = None) -> tuple[str, ...]:
        """The run's options: with a namelist, only what the step overrides of it."""
        args: tuple[str, ...] = self.command
        if step.namelist is not None:
            args += ("--namelist", str(step.namelist))
        values = step.overrides() | ({"days": days} if days else {})
        for key, value in values.items():
            if key == "hydrostatic":
                args += ("--hydrostatic" if value else "--non-hydrostatic",)
            else:
                args += (f"--{key}", str(value))
        args += ("--backend", step.backend, "--no-progress")
        if step.tuning_db is not None:
            args += ("--tuning-db", str(step.tuning_db))
        if output is not None:
            args += ("--output", str(output))
        return args

    def hash_context(self, step: StepBase) -> dict[str, Any]:
        """The schedules applied in the step's ``tuning_db``, which the run builds those
        stencils with (empty without a tuning database)."""
        assert isinstance(step, FV3Step)
        if step.tuning_db is None:
            return {}
        from mapping.tuning.db import TuningDB
        from mapping.tuning.errors import TuningError

        try:
            applied = TuningDB(step.tuning_db).applied()
        except TuningError as exc:
            # the run itself warns and builds untuned stencils (fv3 run --tuning-db), so the
            # step is identified as untuned
            log.warning("step %s: tuning_db %s is not usable, the step runs untuned: %s",
                        step.name, step.tuning_db, exc)  # fmt: skip
            return {}
        return {"tuned_schedules": {k: s.to_dict() for k, s in sorted(applied.items())}} \
            if applied else {}  # fmt: skip

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, FV3Step)
        config = step.fv3_config() if step.namelist is not None else step
        args = self._args(step, ctx.out_dir / f"{config.case}_c{config.resolution}.nc")
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
    packages = ("mapping", "stencils", "workflows")
    libraries = ("numpy", "gt4py", "dace", "scipy", "matplotlib")

    def _args(self, step: MapStep, out: Path) -> tuple[str, ...]:
        args: tuple[str, ...] = ("map", str(step.program), "--devices", str(step.devices))
        if step.simulate:
            args += ("--simulate",)
        return (*args, "--report", str(out / "map.json"), "--dot", str(out / "dag.png"))

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, MapStep)
        return TaskPlan(cli_argv(*self._args(step, ctx.out_dir)))


class TuneKind(CliKind):
    name = "tune"
    summary = "search or transfer-tune one stencil's schedule"
    command = ("tune",)
    packages = ("benchmarks", "fv3core", "mapping", "stencils", "workflows")  # + tunable stencils
    libraries = ("numpy", "gt4py", "dace", "scipy", "optuna")
    DB = "tuning.sqlite"

    def _args(self, step: TuneStep, out: Path) -> tuple[str, ...]:
        args: tuple[str, ...] = ("tune", step.mode, step.stencil, "--space", step.space)
        if step.mode == "transfer":
            args += ("--k", str(step.k))
        if step.domain:
            args += ("--domain", step.domain)
        return (*args, "--db", str(out / self.DB), "--report", str(out / "tuning.md"))

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
    packages = ("ens10", "workflows")
    libraries = ("numpy", "scipy", "pandas", "xarray", "netCDF4", "eccodes")

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
    packages = ("ens10", "workflows")
    libraries = ("numpy", "scipy", "pandas", "xarray", "netCDF4", "torch")

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
    packages = ("ens10", "workflows")
    libraries = ("numpy", "scipy", "pandas", "xarray", "netCDF4", "torch")

    def kwargs(self, step: StepBase, ctx: PlanContext) -> dict[str, Any]:
        assert isinstance(step, ENS10EvaluateStep)
        checkpoints = [
            str(checkpoint_of(d)) for name in step.models_from for d in ctx.inputs[name]
        ]
        return {
            "data_dir": str(ens10_data_dir(ctx.input_dir(step.data_from))), "checkpoints": checkpoints,
            "out_dir": str(ctx.out_dir),
        }  # fmt: skip
