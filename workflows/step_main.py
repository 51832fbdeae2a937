"""Run one Python-entry-point step in its own process: ``python -m workflows.step_main PARAMS``.

``PARAMS`` is a JSON file ``{"target": "module:function", "kwargs": {...}}`` written by the
step's kind. The function's return value (paths become strings) is written to
``result.json`` next to ``PARAMS`` (paths inside the step's folder relative to it).
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

from mapping.cluster.abort import abort_on_failure
from workflows.errors import is_user_error
from workflows.outputs import atomic_write_text

log = logging.getLogger("stratoflow.step")


def _jsonable(value: Any, base: Path) -> Any:
    """JSON for a return value; paths inside ``base`` (the step's folder, which is renamed
    when the step is published) become relative paths."""
    if isinstance(value, Path):
        path = value.resolve()
        return str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
    if isinstance(value, dict):
        return {str(k): _jsonable(v, base) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, base) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m workflows.step_main PARAMS.json", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    params_path = Path(args[0])
    params = json.loads(params_path.read_text())
    module_name, func_name = params["target"].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    log.info("calling %s(%s)", params["target"], ", ".join(f"{k}={v!r}" for k, v in params["kwargs"].items()))
    try:
        # under mpiexec, any rank's failure or interrupt aborts the whole job
        with abort_on_failure(params["target"], with_traceback=lambda exc: not is_user_error(exc)):
            result = func(**params["kwargs"])
    except Exception as exc:
        from workflows.kinds.base import is_permanent, record_step_error

        record_step_error(exc)
        if not is_user_error(exc):
            raise
        log.error("%s: %s", type(exc).__name__, exc)
        return 2 if is_permanent(exc) else 1
    atomic_write_text(params_path.parent / "result.json", json.dumps(_jsonable(result, params_path.parent.resolve()), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
