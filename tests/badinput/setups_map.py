"""Set-ups of the ``map-*`` bad-input cases: program files a text file cannot express."""

from __future__ import annotations

from pathlib import Path


def binary_program(case_dir: Path) -> None:
    """``prog.json`` holds bytes that are not UTF-8 (a NUL, 0xff, 0xfe...)."""
    (case_dir / "prog.json").write_bytes(bytes([0xFF, 0xFE, 0x00, 0x7B]) + bytes(range(128, 256)))
