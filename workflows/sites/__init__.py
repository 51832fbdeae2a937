"""Site profiles: YAML files that hide Parsl's executor/provider configuration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from stencils.errors import InputFileError
from stencils.textfile import read_text
from workflows.errors import SpecError

SITES_DIR = Path(__file__).resolve().parent
_SAFE = re.compile(r"^[A-Za-z0-9_.,:=+/@%-]*$")


class SiteProfile(BaseModel):
    """Where and how steps run. ``executor``: ``parsl-mpi`` (Parsl MPIExecutor, pilots on a
    provider), ``parsl-threads`` (Parsl ThreadPoolExecutor) or ``inline`` (no Parsl)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    executor: Literal["parsl-mpi", "parsl-threads", "inline"]
    provider: Literal["local", "slurm"] = "local"
    mpi_launcher: Literal["mpiexec", "srun", "auto"] = "mpiexec"
    max_workers: int = Field(default=1, ge=1, le=256)
    max_idletime: float = Field(default=2.0, ge=0)
    partition: str | None = None
    account: str | None = None
    walltime: str = Field(default="00:30:00", pattern=r"^(\d+-)?\d{1,2}:\d{2}:\d{2}$")
    ntasks_per_node: int = Field(default=2, ge=1, le=1024)
    overcommit: bool = False
    nodes_per_block: int = Field(default=1, ge=1)
    max_blocks: int = Field(default=1, ge=1)
    exclusive: bool = False
    srun_mpi: str | None = Field(default="pmi2", pattern=r"^[a-z0-9_]+$")  # srun --mpi=...

    @field_validator("partition", "account")
    @classmethod
    def _safe(cls, value: str | None) -> str | None:
        if value is not None and not _SAFE.match(value):
            raise ValueError(f"{value!r} contains characters that could reach a shell")
        return value

    def srun_options(self) -> str:
        """Options every ``srun`` of an MPI step gets (PMI plugin, overcommit)."""
        opts = [f"--mpi={self.srun_mpi}"] if self.srun_mpi else []
        return " ".join(opts + (["--overcommit"] if self.overcommit else []))

    def launcher(self, in_slurm_job: bool) -> str:
        if self.mpi_launcher == "auto":
            return "srun" if in_slurm_job else "mpiexec"
        return self.mpi_launcher


def available_sites() -> list[str]:
    return sorted(p.stem for p in SITES_DIR.glob("*.yaml"))


def load_site(name_or_path: str) -> SiteProfile:
    """A site profile by name (``local``, ``slurm``, ``threads``, ``inline``) or YAML path."""
    path = Path(name_or_path)
    if not path.is_file():
        path = SITES_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise SpecError(
            f"site {name_or_path!r}: no such profile; allowed: {', '.join(available_sites())} "
            "or the path of a site YAML file"
        )
    try:
        data = yaml.safe_load(read_text(path, "a YAML site profile", what="site profile"))
        return SiteProfile.model_validate(data)
    except InputFileError as exc:
        raise SpecError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise SpecError(f"{path}: not valid YAML: {exc}") from None
    except ValidationError as exc:
        errs = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '<top level>'}: {e['msg']}" for e in exc.errors()
        )
        raise SpecError(f"{path}: invalid site profile: {errs}") from None
