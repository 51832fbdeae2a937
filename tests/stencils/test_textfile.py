"""The shared text reader (stencils.textfile): every failure names the file, what was expected
and what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencils.errors import InputFileError
from stencils.textfile import decode_text, parse_json, read_json, read_text


def test_utf8_text_and_bom_are_read(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes("\ufeffname: caf\u00e9\n".encode())
    assert read_text(path, "a YAML run spec", what="spec") == "name: caf\u00e9\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"name: x\n\x89PNG\r\n\x1a\n\x00\x00", r"spec .*a\.yaml is a binary file, not a YAML run spec \(a NUL byte at offset 16, line 4\)"),
        (b"name: x\nnote: caf\xe9\n", r"spec .*a\.yaml is not UTF-8 text \(byte 0xe9 at offset 17, line 2\); expected a YAML run spec: convert it to UTF-8"),
        (b"\xff\xfen\x00a\x00", r"binary file"),  # UTF-16 has NUL bytes
    ],
)
def test_binary_and_latin1_files_are_named(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(data)
    with pytest.raises(InputFileError, match=message):
        read_text(path, "a YAML run spec", what="spec")


def test_missing_folder_and_unreadable(tmp_path: Path) -> None:
    with pytest.raises(InputFileError, match=r"namelist .*none\.nml does not exist; expected a namelist: check the path"):
        read_text(tmp_path / "none.nml", "a namelist", what="namelist")
    with pytest.raises(InputFileError, match=r"is a folder, not a file; expected a namelist"):
        read_text(tmp_path, "a namelist", what="namelist")


def test_json_errors_have_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"a": 1,\n "b": }\n')
    with pytest.raises(InputFileError, match=r"program .*p\.json: line 2 column 7: not valid JSON .*expected a program"):
        read_json(path, "a program", what="program")
    path.write_text('{"a": [1, 2]}')
    assert read_json(path, "a program") == {"a": [1, 2]}
    with pytest.raises(InputFileError, match="nested too deeply"):
        parse_json("[" * 100000 + "]" * 100000, "--schedule", "a schedule")


def test_decode_text_of_standard_input() -> None:
    assert decode_text(b"abc", "standard input", "a spec") == "abc"
    with pytest.raises(InputFileError, match="standard input is not UTF-8 text"):
        decode_text(b"\xc3\x28", "standard input", "a spec")


def test_a_generated_block_is_not_written_into_a_page_that_is_not_utf8(tmp_path: Path) -> None:
    from stencils.atomic import atomic_update_block

    page = tmp_path / "page.md"
    page.write_bytes("# R\u00e9sultats\n".encode("latin-1"))
    with pytest.raises(InputFileError, match=r"page .*page\.md is not UTF-8 text"):
        atomic_update_block(page, "benchmark", "| a |")
    assert page.read_bytes() == "# R\u00e9sultats\n".encode("latin-1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.md"]
