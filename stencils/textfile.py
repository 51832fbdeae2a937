"""The one reader of stratoflow's text inputs (run specs, site profiles, namelists, JSON
programs, schedules, CSV, benchmark results).

:func:`read_text` returns the file's text or raises :class:`InputFileError` naming the file,
what stratoflow expected it to be, and what is wrong: missing, a folder, unreadable, binary
(a NUL byte) or not UTF-8 (the offset, line and byte of the first bad sequence).
:func:`read_json` adds the JSON parse with the line and column of a syntax error, and
:func:`decode_text` checks text that did not come from a file (standard input, a command-line
option). Every layer reads its text files through this module; the callers' own exceptions
wrap :class:`InputFileError` where a package promises one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from stencils.errors import InputFileError

#: bytes read at most (a text input larger than this is not one of ours)
MAX_TEXT_BYTES = 256 * 1024 * 1024


def _error(label: str, reason: str) -> InputFileError:
    """``InputFileError("<label> <reason>")`` whose ``reason`` a caller may reword."""
    exc = InputFileError(f"{label} {reason}")
    exc.reason = reason
    return exc


def decode_text(data: bytes, source: str, expected: str) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped); InputFileError naming
    ``source`` and ``expected`` when it holds a NUL byte or is not UTF-8."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise _error(
            source, f"is a binary file, not {expected} (a NUL byte at offset {nul}, line "
            f"{line}); pass the UTF-8 text file instead"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise _error(
            source, f"is not UTF-8 text (byte 0x{byte} at offset {exc.start}, line {line}); "
            f"expected {expected}: convert it to UTF-8 (e.g. iconv -f latin1 -t utf-8) or pass "
            "the right file"
        ) from None


def read_bytes(path: str | os.PathLike[str], expected: str, *, what: str = "file") -> bytes:
    """The bytes of ``path``; InputFileError naming it (``what``: the kind of input, e.g.
    ``"run spec"``) when it is missing, a folder, unreadable or too large."""
    path = Path(path)
    label = f"{what} {path}"
    try:
        if path.is_dir():
            raise _error(label, f"is a folder, not a file; expected {expected}")
        size = path.stat().st_size
        if size > MAX_TEXT_BYTES:
            raise _error(label, f"has {size:,} bytes, more than {MAX_TEXT_BYTES:,}; expected {expected}")
        with open(path, "rb") as fh:
            return fh.read(MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise _error(label, f"does not exist; expected {expected}: check the path") from None
    except OSError as exc:
        raise _error(
            label, f"cannot be read ({exc.strerror or exc}); expected {expected}: check its "
            "permissions"
        ) from None


def read_text(path: str | os.PathLike[str], expected: str, *, what: str = "file") -> str:
    """The UTF-8 text of ``path``; :class:`InputFileError` naming ``what`` and ``path`` and
    saying ``expected`` (e.g. ``"a YAML run spec"``) when it cannot be read as text."""
    data = read_bytes(path, expected, what=what)
    return decode_text(data, f"{what} {path}", expected)


def parse_json(text: str, source: str, expected: str) -> Any:
    """``text`` parsed as JSON; InputFileError with the line and column of a syntax error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(
            f"{source}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg}); "
            f"expected {expected}"
        ) from None
    except RecursionError:
        raise InputFileError(f"{source}: JSON nested too deeply; expected {expected}") from None


def read_json(path: str | os.PathLike[str], expected: str, *, what: str = "file") -> Any:
    """The JSON value of the text file ``path`` (see :func:`read_text`, :func:`parse_json`)."""
    return parse_json(read_text(path, expected, what=what), f"{what} {path}", expected)
