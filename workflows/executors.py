"""Task executors: run one step's shell command through Parsl, or inline.

Every step becomes one shell command (built by the engine from quoted arguments). MPI steps
start their program with ``$PARSL_MPI_PREFIX``: Parsl's MPIExecutor sets it per task from the
task's resource specification (``mpiexec -n N -ppn N -hosts ...`` or ``srun --ntasks N ...``);
the other executors set it themselves.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workflows.errors import WorkflowError
from workflows.sites import SiteProfile

log = logging.getLogger(__name__)
VENV_BIN = str(Path(sys.executable).parent)


class TaskFailed(Exception):
    """A task's command exited non-zero (or its executor lost it)."""

    def __init__(self, exit_code: int | None, message: str):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class TaskHandle:
    future: concurrent.futures.Future
    parsl_task_id: int | None = None
    parsl_try_id: int | None = None

    def wait(self) -> None:
        """Block until the task ends; raise :class:`TaskFailed` if it failed."""
        try:
            self.future.result()
        except TaskFailed:
            raise
        except Exception as exc:
            code = getattr(exc, "exitcode", None)
            raise TaskFailed(code, f"{type(exc).__name__}: {exc}") from exc
        finally:
            record = getattr(self.future, "task_record", None)
            if record is not None:
                self.parsl_try_id = record.get("try_id")


def mpi_prefix(site: SiteProfile, launcher: str, ranks: int) -> str:
    if launcher == "srun":
        return f"srun --ntasks={ranks} {site.srun_options()}".strip()
    return f"{shlex.quote(os.path.join(VENV_BIN, 'mpiexec'))} -n {ranks}"


class InlineExecutor:
    """Plain subprocesses (no Parsl), ``max_workers`` at a time."""

    def __init__(self, site: SiteProfile, run_dir: Path):
        self.site = site
        self.launcher = site.launcher(in_slurm_job="SLURM_JOB_ID" in os.environ)
        self._pool = concurrent.futures.ThreadPoolExecutor(site.max_workers)

    def submit(self, command: str, ranks: int, stdout: Path, stderr: Path) -> TaskHandle:
        env = dict(os.environ, PARSL_MPI_PREFIX=mpi_prefix(self.site, self.launcher, ranks))

        def run() -> None:
            with open(stdout, "w") as out, open(stderr, "w") as err:
                proc = subprocess.run(["bash", "-c", command], stdout=out, stderr=err, env=env)
            if proc.returncode != 0:
                raise TaskFailed(proc.returncode, f"command exited with status {proc.returncode}")

        return TaskHandle(self._pool.submit(run))

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _bash_command(command: str, stdout: str, stderr: str, parsl_resource_specification: Any = None) -> str:
    return command


class ParslExecutor:
    """Steps as Parsl bash apps on the site's executor and provider."""

    def __init__(self, site: SiteProfile, run_dir: Path):
        import parsl
        from parsl import bash_app

        self.site = site
        self.parsl_dir = run_dir / "parsl"
        self.parsl_dir.mkdir(parents=True, exist_ok=True)
        # Parsl starts helper scripts (interchange.py, process_worker_pool.py) from PATH
        os.environ["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")
        self.config = self._config()
        self._app = bash_app(_bash_command, executors="all")
        # Parsl logs (DEBUG) go to its own parsl.log under the run folder, not the console
        logging.getLogger("parsl").propagate = False
        try:
            self.dfk = parsl.load(self.config)
        except Exception as exc:
            raise WorkflowError(
                f"Parsl could not start site {site.name!r} ({type(exc).__name__}: {exc}); "
                f"see the logs under {self.parsl_dir}"
            ) from exc

    def _config(self) -> Any:
        from parsl.config import Config
        from parsl.executors import MPIExecutor, ThreadPoolExecutor
        from parsl.launchers import SimpleLauncher
        from parsl.providers import LocalProvider, SlurmProvider

        site = self.site
        worker_init = f"export PATH={shlex.quote(VENV_BIN)}:$PATH"
        if site.executor == "parsl-threads":
            executor: Any = ThreadPoolExecutor(label="threads", max_threads=site.max_workers)
        else:
            if site.provider == "local":
                # MPIExecutor needs a node list; on a workstation it is this host only
                nodefile = self.parsl_dir / "nodefile"
                nodefile.write_text("localhost\n")
                worker_init += f"; export PBS_NODEFILE={shlex.quote(str(nodefile))}"
                provider: Any = LocalProvider(
                    launcher=SimpleLauncher(), init_blocks=1, min_blocks=0, max_blocks=1,
                    worker_init=worker_init,
                )  # fmt: skip
            else:
                options = [f"#SBATCH --ntasks-per-node={site.ntasks_per_node}"]
                if site.overcommit:
                    options.append("#SBATCH --overcommit")
                provider = SlurmProvider(
                    partition=site.partition, account=site.account, walltime=site.walltime,
                    nodes_per_block=site.nodes_per_block, init_blocks=0, min_blocks=0,
                    max_blocks=site.max_blocks, exclusive=site.exclusive,
                    launcher=SimpleLauncher(), scheduler_options="\n".join(options),
                    worker_init=worker_init,
                )  # fmt: skip
            executor = MPIExecutor(
                label="mpi", provider=provider, mpi_launcher=site.launcher(False),
                max_workers_per_block=site.max_workers,
                address="127.0.0.1" if site.provider == "local" else None,
                heartbeat_period=5, heartbeat_threshold=30,
            )  # fmt: skip
        return Config(
            executors=[executor], run_dir=str(self.parsl_dir), retries=0,
            max_idletime=site.max_idletime, strategy_period=1,
        )  # fmt: skip

    def submit(self, command: str, ranks: int, stdout: Path, stderr: Path) -> TaskHandle:
        kwargs: dict[str, Any] = {"stdout": str(stdout), "stderr": str(stderr)}
        if self.site.executor == "parsl-mpi":
            kwargs["parsl_resource_specification"] = {
                "num_nodes": 1, "num_ranks": ranks, "ranks_per_node": ranks,
            }  # fmt: skip
            if self.site.launcher(False) == "srun" and self.site.srun_options():
                kwargs["parsl_resource_specification"]["launcher_options"] = self.site.srun_options()
        else:
            prefix = mpi_prefix(self.site, self.site.launcher(False), ranks)
            command = f"export PARSL_MPI_PREFIX={shlex.quote(prefix)}\n{command}"
        future = self._app(command, **kwargs)
        return TaskHandle(future, parsl_task_id=future.tid)

    def close(self) -> None:
        import parsl

        try:
            self.dfk.cleanup()
        finally:
            parsl.clear()


def make_executor(site: SiteProfile, run_dir: Path) -> InlineExecutor | ParslExecutor:
    if site.executor == "inline":
        return InlineExecutor(site, run_dir)
    return ParslExecutor(site, run_dir)
