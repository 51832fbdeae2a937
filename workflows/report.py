"""The Markdown report of a run: provenance, step table, timeline plot, step results."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

from workflows.outputs import atomic_write_bytes, atomic_write_text
from workflows.provenance import ProvenanceDB
from workflows.status import FINISHED, StepStatus

STATUS_COLOURS = {
    StepStatus.DONE: "tab:green", StepStatus.CACHED: "tab:olive", StepStatus.FAILED: "tab:red",
    StepStatus.RUNNING: "tab:blue", StepStatus.INTERRUPTED: "tab:orange",
    StepStatus.BLOCKED: "tab:gray", StepStatus.PENDING: "lightgray",
}  # fmt: skip


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) + " UTC" if t else "-"


def _seconds(row: dict[str, Any]) -> str:
    if row.get("started") and row.get("ended"):
        return f"{row['ended'] - row['started']:.1f}"
    return "-"


def timeline_png(steps: list[dict[str, Any]], t0: float) -> bytes | None:
    """A Gantt chart of the steps that ran (PNG bytes), or None if none ran."""
    ran = [s for s in steps if s.get("started") and s.get("ended")]
    if not ran:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.45 * len(ran) + 1.2))
    for i, s in enumerate(ran):
        ax.barh(i, s["ended"] - s["started"], left=s["started"] - t0,
                color=STATUS_COLOURS.get(s["status"], "tab:purple"))  # fmt: skip
    ax.set_yticks(range(len(ran)), [s["step_id"] for s in ran], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the run started")
    ax.set_title("step timeline (green: done, olive: memoised, red: failed)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()


def _json_scalars(path: Path, limit: int = 20) -> list[tuple[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    out: list[tuple[str, Any]] = []

    def walk(node: Any, prefix: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(node, int | float | bool) or (isinstance(node, str) and len(node) < 80):
            out.append((prefix or path.name, node))

    walk(data, "")
    return out


def build_report(db: ProvenanceDB, run_id: str) -> tuple[str, bytes | None]:
    run = db.get_run(run_id)
    steps = db.steps(run["run_id"])
    run_dir = Path(run["run_dir"])
    lines = [f"# Run `{run['run_id']}`", ""]
    duration = f"{run['ended'] - run['started']:.1f} s" if run["ended"] else "-"
    lines.append(markdown_table(["field", "value"], [
        ["workflow", run["name"]], ["status", run["status"]], ["spec hash", run["spec_hash"]],
        ["spec file", run["spec_path"] or "-"], ["site", run["site"]], ["host", run["host"]],
        ["stratoflow commit", run["git_commit"]], ["Slurm job", run["slurm_job_id"] or "-"],
        ["started", _when(run["started"])], ["wall time", duration],
    ]))  # fmt: skip
    lines += ["", "## Steps", ""]
    rows = []
    for s in steps:
        rows.append([
            s["step_id"], s["kind"], s["status"], s["tries"] or 0,
            ", ".join(map(str, json.loads(s["parsl_task_ids"] or "[]"))) or "-",
            s["slurm_job_id"] or "-", _seconds(s), s["message"] or "",
        ])  # fmt: skip
    lines.append(markdown_table(
        ["step", "kind", "status", "tries", "Parsl tasks", "Slurm job", "seconds", "note"], rows
    ))  # fmt: skip
    png = timeline_png(steps, run["started"])
    if png is not None:
        lines += ["", "![step timeline](report/timeline.png)"]
    lines += ["", "## Results", ""]
    for s in steps:
        if s["status"] not in FINISHED:
            continue
        out = Path(s["out_dir"])
        files = db.outputs(run["run_id"], s["step_id"])
        lines += [f"### {s['step_id']}", ""]
        if not files:
            lines += ["(no output files; see the step's log)", ""]
            continue
        lines.append(markdown_table(
            ["file", "bytes", "sha256"],
            [[f["path"], f["bytes"], f["sha256"][:16]] for f in files[:30]],
        ))  # fmt: skip
        if len(files) > 30:
            lines.append(f"\n... and {len(files) - 30} more files")
        for f in files:
            path = out / f["path"]
            if f["path"].endswith(".md") and f["bytes"] < 8_000 and "/" not in f["path"]:
                body = path.read_text(errors="replace").strip()
                body = "\n".join(("#### " + ln.lstrip("#").strip()) if ln.startswith("#") else ln
                                 for ln in body.splitlines())  # fmt: skip
                lines += ["", f"`{f['path']}`:", "", body]
            if f["path"] == "result.json":
                continue
            if f["path"].endswith(".json") and f["bytes"] < 100_000:
                values = _json_scalars(path)
                if values:
                    lines += ["", f"`{f['path']}`:", ""]
                    lines.append(markdown_table(["key", "value"], [[k, v] for k, v in values]))
            if f["path"].endswith(".png"):
                rel = path.relative_to(run_dir) if path.is_relative_to(run_dir) else path
                lines += ["", f"![{f['path']}]({rel.as_posix()})"]
        stdout = out / "stdout.log"
        if stdout.is_file():
            tail = stdout.read_text(errors="replace").rstrip().splitlines()[-25:]
            lines += ["", "Printed output (last lines):", "", "```", *tail, "```"]
        lines.append("")
    lines += ["## Package versions", ""]
    versions = json.loads(run["packages"] or "{}")
    lines.append(markdown_table(["package", "version"], sorted(versions.items())))
    return "\n".join(lines) + "\n", png


def write_report(db: ProvenanceDB, run_id: str) -> Path:
    """Write ``runs/<run-id>/report.md`` (and ``report/timeline.png``) atomically."""
    run = db.get_run(run_id)
    run_dir = Path(run["run_dir"])
    text, png = build_report(db, run_id)
    if png is not None:
        atomic_write_bytes(run_dir / "report" / "timeline.png", png)
    path = run_dir / "report.md"
    atomic_write_text(path, text)
    return path
