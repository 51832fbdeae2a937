"""stencils.atomic: outputs appear whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencils.atomic import (
    atomic_output,
    atomic_update_block,
    atomic_write_bytes,
    atomic_write_text,
    replace_block,
)


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


def test_atomic_output_for_writers_that_take_a_path(tmp_path: Path):
    """A writer that needs a file name (netCDF, torch.save, savefig) writes the temporary
    file; the target appears, world-readable, only when the block ends without an error."""
    target = tmp_path / "sub" / "fields.nc"
    with atomic_output(target) as tmp:
        assert tmp.parent == target.parent and tmp != target
        tmp.write_bytes(b"first")
        assert not target.exists()
    assert target.read_bytes() == b"first"
    assert target.stat().st_mode & 0o777 == 0o644
    with pytest.raises(RuntimeError, match="writer failed"):
        with atomic_output(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("writer failed")
    assert target.read_bytes() == b"first"
    assert [p.name for p in target.parent.iterdir()] == ["fields.nc"]


def test_update_block_keeps_the_hand_written_text_around_it(tmp_path: Path):
    """A generated table between its markers is replaced; the text before and after it (a
    document's hand-written history) stays byte for byte, and a second run with the same
    table changes nothing."""
    doc = tmp_path / "bench.md"
    doc.write_text("# Title\n\n<!-- bench:start -->\nold table\n<!-- bench:end -->\n\n## Notes\nkept\n")
    atomic_update_block(doc, "bench", "new table\n")
    expected = "# Title\n\n<!-- bench:start -->\nnew table\n<!-- bench:end -->\n\n## Notes\nkept\n"
    assert doc.read_text() == expected
    atomic_update_block(doc, "bench", "new table")
    assert doc.read_text() == expected


def test_update_block_without_markers_appends_and_loses_nothing(tmp_path: Path):
    """A file without the markers keeps all of its text, the block is appended; a missing
    file is created with the block alone; other blocks' markers are left alone."""
    doc = tmp_path / "notes.md"
    doc.write_text("hand-written\n<!-- other:start -->\nx\n<!-- other:end -->\n")
    atomic_update_block(doc, "bench", "table")
    assert doc.read_text() == (
        "hand-written\n<!-- other:start -->\nx\n<!-- other:end -->\n\n"
        "<!-- bench:start -->\ntable\n<!-- bench:end -->\n"
    )
    fresh = tmp_path / "new" / "fresh.md"
    atomic_update_block(fresh, "bench", "table")
    assert fresh.read_text() == "<!-- bench:start -->\ntable\n<!-- bench:end -->\n"
    assert replace_block("a <!-- b:end --> <!-- b:start -->", "b", "t").startswith("a <!-- b:end -->")
