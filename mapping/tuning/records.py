"""Typed records of the tuning database: one pydantic model per table row, and the schedule
model every schedule passes through (``--schedule`` JSON, import files, database rows).

:func:`parse_schedule` and :func:`check_row` validate at import and at read; a field of the
wrong type or range is a :class:`~mapping.tuning.errors.TuningError` naming where the record
came from, the field, the value and what is expected.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from mapping.tuning.errors import TuningError

Number = StrictFloat | StrictInt
Domain = Annotated[StrictStr, Field(pattern=r"^\d+x\d+x\d+$")]


class ScheduleRecord(BaseModel):
    """A schedule as JSON holds it (see :class:`mapping.tuning.schedule.Schedule`)."""

    model_config = ConfigDict(extra="forbid")

    backend: StrictStr = "numpy"
    opt_flags: StrictStr = ""
    oir_skip: list[StrictStr] = []
    sdfg: list[tuple[StrictStr, dict[StrictStr, Any]]] = []
    threads: StrictInt = Field(default=0, ge=0, le=4096)
    proc_bind: StrictStr = ""
    wait_policy: StrictStr = ""
    label: StrictStr = ""
    fuse: list[Annotated[StrictInt, Field(ge=1)]] = []


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StencilRow(_Row):
    stencil: StrictStr
    machine: StrictStr
    domain: Domain
    features: StrictStr  # JSON object: feature -> number
    baseline_s: Number | None = None
    stream_gbs: Number | None = None
    updated: Number | None = None


class EvaluationRow(_Row):
    stencil: StrictStr
    machine: StrictStr
    domain: Domain
    key: StrictStr
    schedule: StrictStr  # JSON of a ScheduleRecord
    status: StrictStr
    median_s: Number | None = None
    min_s: Number | None = None
    max_s: Number | None = None
    noise: Number | None = None
    build_seconds: Number | None = None
    built: StrictInt | None = None
    error: StrictStr | None = None
    created: Number | None = None


class FeatureStatusRow(_Row):
    stencil: StrictStr
    machine: StrictStr
    domain: Domain
    status: StrictStr  # JSON object: feature -> how it was measured


class SearchRow(_Row):
    stencil: StrictStr
    machine: StrictStr
    domain: Domain
    spec: StrictStr
    keys: StrictStr  # JSON list of schedule keys
    created: Number | None = None


class AppliedRow(_Row):
    stencil: StrictStr
    schedule: StrictStr  # JSON of a ScheduleRecord
    machine: StrictStr | None = None
    speedup: Number | None = None
    applied: Number | None = None


ROW_MODELS: dict[str, type[_Row]] = {
    "stencils": StencilRow, "evaluations": EvaluationRow, "feature_status": FeatureStatusRow,
    "searches": SearchRow, "applied": AppliedRow,
}  # fmt: skip
#: JSON columns and the JSON type each one must hold
_JSON_COLUMNS: dict[tuple[str, str], type] = {
    ("stencils", "features"): dict, ("feature_status", "status"): dict,
    ("searches", "keys"): list,
}  # fmt: skip


#: the most grid points a tuning domain may have (2 GiB per float64 field)
MAX_DOMAIN_POINTS = 1 << 28


def parse_domain(text: str) -> tuple[int, int, int]:
    """The tuning domain ``nx,ny,nz`` (or ``nxXnyXnz``): three sizes >= 1 of at most
    :data:`MAX_DOMAIN_POINTS` points. The one check of every path that takes a domain (``tune
    --domain``, a spec's ``tune`` step); ValueError saying what is wrong."""
    try:
        parts = tuple(int(x) for x in str(text).replace("x", ",").split(","))
    except ValueError:
        raise ValueError(f"domain must be nx,ny,nz (e.g. 96,96,48), got {text!r}") from None
    if len(parts) != 3 or min(parts) < 1:
        raise ValueError(f"domain must be three sizes >= 1 (nx,ny,nz), got {text!r}")
    if parts[0] * parts[1] * parts[2] > MAX_DOMAIN_POINTS:
        raise ValueError(
            f"domain {text} has {parts[0] * parts[1] * parts[2]:,} points; at most "
            f"{MAX_DOMAIN_POINTS:,} (2 GiB per field) are measured"
        )
    return parts  # type: ignore[return-value]


def describe_errors(exc: ValidationError) -> str:
    """A pydantic error as ``field: problem, got VALUE (type)`` items."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "value"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        value = err.get("input")
        parts.append(f"{loc}: {msg}, got {value!r} ({type(value).__name__})")
    return "; ".join(parts)


def schedule_record(data: Any, source: str) -> ScheduleRecord:
    """``data`` (a mapping) as a ScheduleRecord; TuningError naming ``source`` and the field."""
    if not isinstance(data, dict):
        raise TuningError(f"{source}: a schedule is a JSON object, got {type(data).__name__}")
    try:
        return ScheduleRecord.model_validate(data)
    except ValidationError as exc:
        allowed = ", ".join(ScheduleRecord.model_fields)
        raise TuningError(
            f"{source}: invalid schedule: {describe_errors(exc)}; fields: {allowed}"
        ) from None


def parse_schedule(text: str, source: str) -> ScheduleRecord:
    """The schedule record of the JSON ``text``; TuningError naming ``source``."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise TuningError(f"{source}: schedule is not valid JSON ({exc}): {str(text)[:80]!r}") from None
    return schedule_record(data, source)


def read_json_column(text: Any, kind: type, source: str) -> Any:
    """The JSON value of a column that holds JSON of type ``kind``; TuningError naming
    ``source`` when it does not."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, kind):
        raise TuningError(f"{source}: expected JSON {kind.__name__}, got {str(text)[:80]!r}")
    return value


def check_row(table: str, row: Any, source: str) -> dict[str, Any]:
    """``row`` (column -> value) of ``table`` validated: column types, JSON columns and the
    schedule record of an evaluation or applied row (its values are checked by
    :meth:`~mapping.tuning.schedule.Schedule.from_json`). TuningError naming ``source`` (file or
    database, table, row) and the field."""
    model = ROW_MODELS[table]
    if not isinstance(row, dict):
        raise TuningError(f"{source}: a row is an object (column -> value), got {type(row).__name__}")
    try:
        checked = model.model_validate(row).model_dump()
    except ValidationError as exc:
        raise TuningError(f"{source}: {describe_errors(exc)}; columns: {', '.join(model.model_fields)}") from None
    for (t, column), kind in _JSON_COLUMNS.items():
        if t == table:
            read_json_column(checked[column], kind, f"{source}: {column}")
    if "schedule" in checked:
        parse_schedule(checked["schedule"], f"{source}: schedule")
    return {k: v for k, v in checked.items() if k in row}
