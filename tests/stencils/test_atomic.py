"""stencils.atomic: outputs appear whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencils.atomic import atomic_write_bytes, atomic_write_text


def test_write_creates_folders_and_replaces(tmp_path: Path):
    target = tmp_path / "a" / "b" / "out.txt"
    assert atomic_write_text(target, "one") == target
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]


def test_failed_write_keeps_old_version_and_leaves_no_temp(tmp_path: Path):
    target = tmp_path / "out.bin"
    atomic_write_bytes(target, b"old")
    with pytest.raises(TypeError):  # the write fails after the temporary file exists
        atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]
