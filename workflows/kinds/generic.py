"""Generic step kinds: a quoted argument vector, and an mpi4py script on N ranks.

Their code is the user's: their code key holds no stratoflow sources (an ``mpi`` step's script
is one of its input files; a ``command`` step's program is not known to stratoflow).
"""

from __future__ import annotations

from workflows.kinds.base import PYTHON, Kind, PlanContext, TaskPlan
from workflows.spec import CommandStep, MPIStep, StepBase


class CommandKind(Kind):
    name = "command"
    summary = "an argument vector (no shell); {out} and {input.NAME} are folders"

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, CommandStep)
        argv = []
        for arg in step.argv:
            arg = arg.replace("{out}", str(ctx.out_dir))
            for name, dirs in ctx.inputs.items():
                arg = arg.replace("{input." + name + "}", str(dirs[0]))
            argv.append(arg)
        return TaskPlan(tuple(argv), ranks=step.ranks)


class MPIKind(Kind):
    name = "mpi"
    summary = "a Python (mpi4py) script on N ranks with the site's MPI launcher"
    libraries = ("mpi4py", "mpich")  # the script itself is an input file of the step

    def plan(self, step: StepBase, ctx: PlanContext) -> TaskPlan:
        assert isinstance(step, MPIStep)
        args = [a.replace("{out}", str(ctx.out_dir)) for a in step.args]
        return TaskPlan((PYTHON, str(step.script), *args), ranks=step.ranks)
