"""pace-util 0.9.0's HaloUpdater on the halo benchmark's exchange, one MPI job of its own.

Run with the pace venv's interpreter (pace-util needs numpy<2, so stratoflow is not installed
there), by path: ``<pace-venv>/bin/mpiexec -n 6 <pace-venv>/bin/python pace_worker.py --json
OUT``. Per case (C<N> tiles, ``--levels``, halo ``--halo``, float64): 3 cell-centred scalars on
one scalar updater and one D-grid (u, v) pair (u on ``("x", "y_interface", "z")``, v on
``("x_interface", "y", "z")``) on one vector updater, both built once from a
``CubedSphereCommunicator`` over ``pace.util.MPIComm``; every repeat is barrier, both
``start()``, both ``wait()``, and its time is the slowest rank's. ``--describe`` prints the
bytes each rank sends per exchange (pace's own boundary slices, in-process ``LocalComm``; no
MPI job).

Only the standard library at import time: the halo benchmark imports this module in
stratoflow's venv for :data:`FIELDS` and :func:`field_shapes`.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("pace_worker")

#: (name, pace dims, stagger (x, y)) of every array of one exchange; the first three travel on
#: the scalar updater, u and v (D grid) on the vector updater
FIELDS: tuple[tuple[str, tuple[str, str, str], tuple[int, int]], ...] = (
    ("q0", ("x", "y", "z"), (0, 0)),
    ("q1", ("x", "y", "z"), (0, 0)),
    ("q2", ("x", "y", "z"), (0, 0)),
    ("u", ("x", "y_interface", "z"), (0, 1)),
    ("v", ("x_interface", "y", "z"), (1, 0)),
)
N_SCALARS = 3
WARMUP = 3


def field_shapes(n: int, n_halo: int, levels: int) -> dict[str, tuple[int, int, int]]:
    """Array shape of every field for ``n`` x ``n`` cells per rank (no padding)."""
    return {
        name: (n + sx + 2 * n_halo, n + sy + 2 * n_halo, levels) for name, _, (sx, sy) in FIELDS
    }


def _quantities(pu: Any, n: int, n_halo: int, levels: int, seed: int) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for (_, dims, (sx, sy)), shape in zip(FIELDS, field_shapes(n, n_halo, levels).values()):
        out.append(
            pu.Quantity(rng.standard_normal(shape), dims=dims, units="1",
                        origin=(n_halo, n_halo, 0), extent=(n + sx, n + sy, levels))
        )
    return out


def _spec(pu: Any, q: Any, n_halo: int) -> Any:
    """The QuantityHaloSpec pace's own ``start_halo_update`` builds for ``q``."""
    import numpy as np

    return pu.QuantityHaloSpec(
        n_points=n_halo, shape=q.data.shape, strides=q.data.strides, itemsize=q.data.itemsize,
        origin=q.origin, extent=q.extent, dims=q.dims, numpy_module=np, dtype=q.data.dtype,
    )


def _check_dims(pu: Any) -> None:
    names = {"x": pu.X_DIM, "y": pu.Y_DIM, "z": pu.Z_DIM, "x_interface": pu.X_INTERFACE_DIM,
             "y_interface": pu.Y_INTERFACE_DIM}  # fmt: skip
    for name, dims, _ in FIELDS:
        if any(names[d] != d for d in dims):
            raise RuntimeError(f"{name}: pace-util names its dimensions {names}, not {dims}")


def send_bytes(cube_comm: Any, specs: list[Any]) -> int:
    """Bytes this rank sends per exchange: pace's send slices over all its boundaries."""
    total = 0
    for boundary in cube_comm.boundaries.values():
        for spec in specs:
            count = 1
            for s in boundary.send_slice(spec):
                count *= s.stop - s.start
            total += count * spec.itemsize
    return total


def _communicator(pu: Any, comm: Any, layout: int) -> Any:
    partitioner = pu.CubedSpherePartitioner(pu.TilePartitioner((layout, layout)))
    return pu.CubedSphereCommunicator(comm, partitioner)


def describe(cases: list[int], n_halo: int, levels: int, layout: int) -> dict[str, list[int]]:
    """Bytes every rank sends per exchange, per case (in-process; no messages)."""
    import pace.util as pu

    _check_dims(pu)
    ranks = 6 * layout**2
    out = {}
    for n_tile in cases:
        n = n_tile // layout
        per_rank = []
        for rank in range(ranks):
            cube = _communicator(pu, pu.LocalComm(rank, ranks, {}), layout)
            specs = [_spec(pu, q, n_halo) for q in _quantities(pu, n, n_halo, levels, rank)]
            per_rank.append(send_bytes(cube, specs))
        out[f"C{n_tile}"] = per_rank
    return out


def _gather(comm: Any, values: list[float]) -> Any:
    """Every rank's ``values`` as rows of an array on rank 0 (None elsewhere)."""
    import numpy as np

    send = np.asarray(values, dtype=np.float64)
    recv = np.empty((comm.Get_size(), send.size)) if comm.Get_rank() == 0 else None
    comm.Gather(send, recv, root=0)
    return recv


def measure(pu: Any, comm: Any, n_tile: int, args: argparse.Namespace) -> dict[str, Any] | None:
    """One case on all ranks; its row on rank 0 (None elsewhere)."""
    layout, h, nz = args.layout, args.halo, args.levels
    n = n_tile // layout
    cube = _communicator(pu, comm, layout)
    qs = _quantities(pu, n, h, nz, comm.Get_rank())
    specs = [_spec(pu, q, h) for q in qs]
    scalars, (u, v) = qs[:N_SCALARS], qs[N_SCALARS:]
    scalar_updater = cube.get_scalar_halo_updater(specs[:N_SCALARS])
    vector_updater = cube.get_vector_halo_updater([specs[N_SCALARS]], [specs[N_SCALARS + 1]])
    local = []
    for _ in range(WARMUP + args.repeats):
        comm.barrier()
        t0 = time.perf_counter()
        scalar_updater.start(scalars)
        vector_updater.start([u], [v])
        scalar_updater.wait()
        vector_updater.wait()
        local.append(time.perf_counter() - t0)
    sent = send_bytes(cube, specs)
    table = _gather(comm, [*local, sent, len(cube.boundaries)])
    if table is None:
        return None
    slowest = table[:, : len(local)].max(axis=0)[WARMUP:]
    samples = [1e3 * float(s) for s in slowest]
    return {
        "case": f"C{n_tile}", "ranks": comm.Get_size(), "levels": nz, "halo": h,
        "median_ms": statistics.median(samples), "samples_ms": samples,
        "bytes_sent_per_rank": int(table[0, len(local)]),
        "bytes_sent_all_ranks": int(table[:, len(local)].sum()),
        "neighbours_rank0": int(table[0, len(local) + 1]), "messages_per_neighbour": 2,
    }  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="48,96", help="tile sizes N of the C<N> cases")
    p.add_argument("--levels", type=int, default=79)
    p.add_argument("--halo", type=int, default=3)
    p.add_argument("--layout", type=int, default=1)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--json", type=Path, help="results file (rank 0 writes it)")
    p.add_argument("--describe", action="store_true",
                   help="print the bytes each rank sends per case as JSON; no MPI job")  # fmt: skip
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s pace_worker: %(message)s")
    cases = [int(c) for c in args.cases.split(",") if c]
    if args.describe:
        json.dump(describe(cases, args.halo, args.levels, args.layout), sys.stdout)
        return 0
    import numpy as np
    import pace.util as pu

    _check_dims(pu)
    comm = pu.MPIComm()
    if comm.Get_size() != 6 * args.layout**2:
        raise SystemExit(f"layout {args.layout} needs {6 * args.layout**2} ranks, "
                         f"got {comm.Get_size()}")  # fmt: skip
    rows = []
    for n_tile in cases:
        row = measure(pu, comm, n_tile, args)
        if row is not None:
            log.info("C%d: median %.3f ms", n_tile, row["median_ms"])
            rows.append(row)
    rss = _gather(comm, [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss])
    if comm.Get_rank() == 0:
        payload = {
            "peer": "pace-util", "pace_util_version": pu.__version__,
            "numpy_version": np.__version__, "python": sys.version.split()[0],
            "ranks": comm.Get_size(), "layout": args.layout,
            "peak_rss_MB_per_rank": float(rss.max()) / 1024, "results": rows,
        }  # fmt: skip
        text = json.dumps(payload, indent=2) + "\n"
        if args.json:
            tmp = args.json.with_name(args.json.name + ".tmp")
            tmp.write_text(text)
            tmp.replace(args.json)
        else:
            sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
