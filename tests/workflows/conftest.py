"""Fixtures of the workflow tests: a private runs folder + database, small helper scripts."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from workflows.provenance import ProvenanceDB

MPI_SUM = textwrap.dedent(
    """
    import json, sys
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    total = comm.allreduce(comm.rank + 1)
    if comm.rank == 0:
        with open(sys.argv[1] + "/sum.json", "w") as f:
            json.dump({"ranks": comm.size, "sum": total}, f)
    """
)

# Appends one line to a counter file each time it runs, then writes its output.
COUNT = textwrap.dedent(
    """
    import sys
    with open(sys.argv[1], "a") as f:
        f.write("ran\\n")
    with open(sys.argv[2] + "/count.txt", "w") as f:
        f.write("hello\\n")
    """
)

# Fails (exit 3) the first time it runs (marker file absent), succeeds afterwards.
FAIL_ONCE = textwrap.dedent(
    """
    import pathlib, sys
    marker = pathlib.Path(sys.argv[1])
    if not marker.exists():
        marker.write_text("failed once\\n")
        print("first try: failing on purpose", file=sys.stderr)
        sys.exit(3)
    pathlib.Path(sys.argv[2], "ok.txt").write_text("second try\\n")
    """
)

# Sleeps a long time the first time it runs (the test kills the workflow meanwhile).
SLOW_ONCE = textwrap.dedent(
    """
    import pathlib, sys, time
    marker = pathlib.Path(sys.argv[1])
    first = not marker.exists()
    marker.write_text("started\\n")
    if first:
        time.sleep(120)
    pathlib.Path(sys.argv[2], "slow.txt").write_text("finished\\n")
    """
)


@pytest.fixture
def scripts(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "scripts"
    folder.mkdir()
    out = {}
    for name, text in {"mpi_sum": MPI_SUM, "count": COUNT, "fail_once": FAIL_ONCE,
                       "slow_once": SLOW_ONCE}.items():  # fmt: skip
        path = folder / f"{name}.py"
        path.write_text(text)
        out[name] = path
    return out


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    path = tmp_path / "runs"
    path.mkdir()
    return path


@pytest.fixture
def db(runs: Path):
    with ProvenanceDB(runs / "stratoflow.db") as database:
        yield database


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path
