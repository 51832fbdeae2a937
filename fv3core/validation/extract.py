"""A small extract of one Fortran FV3 reference run for CI, where ``../shared`` is absent:
the state after ``hours`` (depth, A-grid winds, relative vorticity), the state at t = 0, the
cell areas and centres, and the printed norms at both times, all float64 ``[tile, i, j]``, in
one compressed ``.npz`` that records its source files, their SHA-256 and the command that made
it.

    python -m fv3core.validation.extract --reference ../shared/fv3-reference/tc2_C24_d1 \\
        --hours 6 --output tests/fv3core/data/fv3_tc2_c24_6h.npz

An existing output is kept unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fv3core.errors import FV3ReferenceError
from fv3core.validation.norms import ALL_NAMES
from fv3core.validation.reference import FV3Reference, ReferenceState, reference_root
from stencils.atomic import atomic_output

FORMAT = 1
#: the arrays of an extract, (6, N, N) each
FIELDS = ("depth", "u", "v", "vorticity", "initial_depth", "initial_surface", "initial_u",
          "initial_v", "area", "lon", "lat")  # fmt: skip


@dataclass(frozen=True)
class ReferenceExtract:
    """What an extract holds: ``initial`` and ``output`` (at ``hours``) states, ``area`` (m^2),
    cell centres ``lon``/``lat`` (degrees), the printed norms at 0 h and at ``hours``
    (``printed_initial``, ``printed``: name -> value, with ``printed_lines`` the raw
    SWNORMS/SWINV lines) and ``metadata`` (run, sources with SHA-256, command)."""

    run: str
    hours: float
    initial: ReferenceState
    output: ReferenceState
    area: np.ndarray
    lon: np.ndarray
    lat: np.ndarray
    printed_initial: dict[str, float]
    printed: dict[str, float]
    printed_lines: tuple[str, ...]
    metadata: dict[str, Any]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def extract(reference: FV3Reference, hours: float = 6.0) -> dict[str, np.ndarray]:
    """The arrays of an extract of ``reference`` at ``hours`` (``metadata`` without the
    command: :func:`write_extract` adds it)."""
    grid, start, state = reference.grid(), reference.initial(), reference.output(hours)
    norms = reference.printed_norms()
    assert state.vorticity is not None
    i0, i1 = norms.index(0.0), norms.index(hours)
    sources = [{"name": p.name, "path": str(p.resolve()), "sha256": sha256(p)}
               for p in reference.files()]  # fmt: skip
    meta = {"format": FORMAT, "run": reference.name, "hours": hours, "sources": sources}
    return {
        "depth": state.depth, "u": state.u, "v": state.v, "vorticity": state.vorticity,
        "initial_depth": start.depth, "initial_surface": start.surface,
        "initial_u": start.u, "initial_v": start.v,
        "area": grid.area, "lon": grid.lon, "lat": grid.lat,
        "norm_names": np.array(ALL_NAMES),
        "printed_initial": np.array([norms[n][i0] for n in ALL_NAMES]),
        "printed": np.array([norms[n][i1] for n in ALL_NAMES]),
        "printed_lines": np.array([*norms.lines[i0], *norms.lines[i1]]),
        "metadata": np.array(json.dumps(meta, sort_keys=True)),
    }  # fmt: skip


def write_extract(reference: FV3Reference, output: str | Path, *, hours: float = 6.0,
                  command: str = "", overwrite: bool = False) -> Path:  # fmt: skip
    """Write :func:`extract` of ``reference`` to ``output`` (compressed ``.npz``, atomically),
    recording ``command``; an existing ``output`` is an error unless ``overwrite``."""
    output = Path(output)
    if output.exists() and not overwrite:
        raise FV3ReferenceError(f"{output} exists: pass --force (overwrite=True) to replace it")
    arrays = extract(reference, hours)
    meta = json.loads(str(arrays["metadata"]))
    meta["command"] = command
    arrays["metadata"] = np.array(json.dumps(meta, sort_keys=True))
    with atomic_output(output) as tmp, open(tmp, "wb") as f:
        np.savez_compressed(f, **arrays)
    return output


def load_extract(path: str | Path) -> ReferenceExtract:
    """Read an extract written by :func:`write_extract`."""
    path = Path(path)
    if not path.is_file():
        raise FV3ReferenceError(f"reference extract {path} does not exist: write it with "
                                f"`python -m fv3core.validation.extract`")  # fmt: skip
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except (OSError, ValueError) as exc:
        raise FV3ReferenceError(f"cannot read {path} as an .npz extract: {exc}") from exc
    missing = [k for k in (*FIELDS, "norm_names", "printed_initial", "printed", "printed_lines",
                           "metadata") if k not in data]  # fmt: skip
    if missing:
        raise FV3ReferenceError(f"{path} is not a reference extract: it lacks {missing}")
    meta = json.loads(str(data["metadata"]))
    if meta.get("format") != FORMAT:
        raise FV3ReferenceError(f"{path}: extract format {meta.get('format')}, this reader "
                                f"knows {FORMAT}; rewrite it with --force")  # fmt: skip
    names = [str(n) for n in data["norm_names"]]
    hours = float(meta["hours"])
    initial = ReferenceState(0.0, data["initial_depth"], data["initial_surface"],
                             data["initial_u"], data["initial_v"])  # fmt: skip
    output = ReferenceState(hours, data["depth"], data["initial_surface"], data["u"], data["v"],
                            data["vorticity"])  # fmt: skip
    return ReferenceExtract(
        run=str(meta["run"]), hours=hours, initial=initial, output=output, area=data["area"],
        lon=data["lon"], lat=data["lat"],
        printed_initial=dict(zip(names, map(float, data["printed_initial"]), strict=True)),
        printed=dict(zip(names, map(float, data["printed"]), strict=True)),
        printed_lines=tuple(str(s) for s in data["printed_lines"]), metadata=meta,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(prog="python -m fv3core.validation.extract", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--reference", type=Path, default=None,
                   help="reference run folder (default: tc2_C24_d1 of $STRATOFLOW_FV3_REFERENCE "
                   "or ../shared/fv3-reference)")  # fmt: skip
    p.add_argument("--hours", type=float, default=6.0, help="output time to extract (default 6)")
    p.add_argument("--output", type=Path, required=True, help="the .npz to write")
    p.add_argument("--force", action="store_true", help="replace an existing output")
    args = p.parse_args(argv)
    folder = args.reference if args.reference is not None else reference_root() / "tc2_C24_d1"
    command = shlex.join(["python", "-m", "fv3core.validation.extract", *argv])
    try:
        out = write_extract(FV3Reference(folder), args.output, hours=args.hours, command=command,
                            overwrite=args.force)  # fmt: skip
    except FV3ReferenceError as exc:
        print(f"FV3ReferenceError: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
