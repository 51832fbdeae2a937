"""The pace-util venv of the halo benchmark: create it once, run the worker under its mpiexec."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_VENV = REPO / ".stratoflow_cache" / "pace-venv"
WORKER = Path(__file__).resolve().parent / "pace_worker.py"
#: pace-util 0.9.0 with what it needs on numpy<2, and stratoflow's own MPI (pyproject.toml)
REQUIREMENTS = ("pace-util==0.9.0", "numpy<2", "pandas<2.3", "xarray<2025", "mpi4py==4.1.2",
                "mpich==5.0.2")  # fmt: skip
#: written into the venv once the requirements installed
STAMP = ".stratoflow-pace-ready"
INSTALL_TIMEOUT_S = 900
RUN_TIMEOUT_S = 3600
#: launcher variables of the enclosing MPI job; the worker's own mpiexec sets its own
_LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "HYDRA_")


class PaceUnavailable(RuntimeError):
    """The pace-util venv could not be created or installed (offline, no pip, no venv module)."""


@dataclass(frozen=True)
class PaceVenv:
    path: Path
    #: seconds spent creating and installing it in this run (0 when it was ready)
    setup_s: float

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def mpiexec(self) -> Path:
        return self.path / "bin" / "mpiexec"


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_step(cmd: list[str], what: str, timeout: float) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PaceUnavailable(f"{what} failed ({' '.join(cmd)}): {exc}") from exc
    if proc.returncode != 0:
        raise PaceUnavailable(
            f"{what} failed with exit status {proc.returncode} ({' '.join(cmd)}):\n"
            f"{_tail(proc.stderr or proc.stdout)}"
        )


def ensure_venv(path: Path = DEFAULT_VENV, python: str = sys.executable) -> PaceVenv:
    """The venv at ``path`` with :data:`REQUIREMENTS` installed (created with ``python -m venv``
    and pip the first time; reused while its stamp names the same requirements)."""
    path = Path(path)
    stamp = path / STAMP
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if stamp.is_file() and stamp.read_text() == wanted and (path / "bin" / "mpiexec").exists():
        return PaceVenv(path, 0.0)
    t0 = time.perf_counter()
    log.info("creating the pace-util venv %s (%s)", path, ", ".join(REQUIREMENTS))
    if not (path / "bin" / "python").exists():
        _run_step([python, "-m", "venv", str(path)], "creating the pace-util venv", 300)
    _run_step([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet", *REQUIREMENTS],
              f"installing {' '.join(REQUIREMENTS)} into {path}", INSTALL_TIMEOUT_S)  # fmt: skip
    stamp.write_text(wanted)
    setup = time.perf_counter() - t0
    log.info("pace-util venv ready in %.0f s", setup)
    return PaceVenv(path, setup)


def skip_message(reason: str) -> str:
    """What the log and the Markdown say when the pace-util comparison cannot run."""
    return (
        f"pace-util comparison skipped: {reason.strip()} -- the benchmark needs pip access to "
        f"{', '.join(REQUIREMENTS)} once (or pass --pace-venv DIR naming a venv that has them; "
        "--no-pace skips the comparison)"
    )


def worker_command(venv: PaceVenv, ranks: int, args: Any, out: Path) -> list[str]:
    """The worker's command line: the venv's own mpiexec and Python, the benchmark's sizes."""
    return [
        str(venv.mpiexec), "-n", str(ranks), str(venv.python), str(WORKER),
        "--cases", ",".join(str(c) for c in args.case_list), "--levels", str(args.levels),
        "--halo", str(args.halo), "--layout", str(args.layout), "--repeats", str(args.repeats),
        "--json", str(out),
    ]  # fmt: skip


def worker_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the enclosing MPI job's launcher variables."""
    environ = dict(os.environ if environ is None else environ)
    return {k: v for k, v in environ.items() if not k.startswith(_LAUNCHER_PREFIXES)}


def parse_worker_output(text: str) -> dict[str, Any]:
    """The worker's JSON, checked for the fields the report reads."""
    payload = json.loads(text)
    if payload.get("peer") != "pace-util" or not isinstance(payload.get("results"), list):
        raise ValueError("not a pace_worker result (no 'peer': 'pace-util' and 'results')")
    for row in payload["results"]:
        missing = {"case", "median_ms", "samples_ms", "bytes_sent_per_rank"} - set(row)
        if missing:
            raise ValueError(f"pace_worker row {row.get('case')!r} lacks {sorted(missing)}")
    return payload


def run_worker(venv: PaceVenv, ranks: int, args: Any) -> dict[str, Any]:
    """Run the worker as an MPI job of its own; its parsed results, with ``status``: ``"ok"``,
    or ``"failed"`` and ``reason`` (the job's exit status and the end of its stderr)."""
    with tempfile.TemporaryDirectory(prefix="stratoflow-pace-") as tmp:
        out = Path(tmp) / "pace.json"
        cmd = worker_command(venv, ranks, args, out)
        log.info("pace-util run: %s", " ".join(cmd))
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(),
                                  timeout=RUN_TIMEOUT_S, cwd=tmp)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"status": "failed", "reason": f"{' '.join(cmd)}: {exc}"}
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or not out.exists():
            return {"status": "failed",
                    "reason": f"the pace-util job exited with status {proc.returncode}:\n"
                              f"{_tail(proc.stderr)}"}  # fmt: skip
        try:
            payload = parse_worker_output(out.read_text())
        except ValueError as exc:
            return {"status": "failed", "reason": f"unreadable pace-util results: {exc}"}
    payload.update(status="ok", wall_s=wall, venv_setup_s=venv.setup_s)
    return payload
