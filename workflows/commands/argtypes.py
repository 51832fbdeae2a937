"""argparse ``type`` functions for number options. argparse reports a refused value as
``argument --OPTION: <message>`` and exits with status 2, so the message names the option."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def whole_number(low: int = 1, high: int | None = None) -> Callable[[str], int]:
    """A whole number in ``low .. high`` (``high`` None: no upper bound)."""
    bound = f"from {low} to {high}" if high is not None else f">= {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be a whole number {bound}, got {text!r}")
        return value

    parse.__name__ = "whole number"  # argparse names the type in its "invalid ... value" error
    return parse


def finite_number(low: float | None = None, *, strict: bool = False) -> Callable[[str], float]:
    """A finite number (no nan or inf), ``>= low`` (``> low`` when ``strict``)."""
    if low is None:
        need = "a finite number"
    elif low == 0 and strict:
        need = "a positive finite number"
    else:
        need = f"a finite number {'>' if strict else '>='} {low:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or (
            low is not None and (value <= low if strict else value < low)
        ):
            raise argparse.ArgumentTypeError(f"must be {need}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


positive_number = finite_number(0, strict=True)


def add_max_steps_argument(parser: argparse.ArgumentParser) -> None:
    """``--max-steps N`` of the commands that load a run spec (see
    :func:`workflows.spec.max_steps`)."""
    from workflows.spec import DEFAULT_MAX_STEPS

    parser.add_argument(
        "--max-steps", type=whole_number(1), default=None, metavar="N",
        help=f"refuse a spec of more than N step instances after its sweeps are expanded "
             f"(default: $STRATOFLOW_MAX_STEPS or {DEFAULT_MAX_STEPS})",
    )  # fmt: skip
