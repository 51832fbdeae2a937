"""Check a GRIB file message by message before decoding it.

Every GRIB message starts with ``GRIB``, says its own length in section 0 (3 bytes at offset 4
in edition 1, 8 bytes at offset 8 in edition 2) and ends with ``7777``; zero bytes may pad the
gaps between messages (ECMWF's MARS pads GRIB1 messages so). :func:`scan_grib` walks
the file by those lengths, reading only 16 bytes at the start and 4 at the end of each message
(cheap even for the 7 GB files of the real dataset), and raises :class:`ENS10DataError` naming
the file, the first damaged message (counted from 1) and its byte offset: cfgrib would
otherwise drop a damaged tail silently or fail with eccodes' bare "Wrong message length".
Edition-1 messages over 8 MiB (ECMWF's large-message length encoding) end the scan; eccodes
checks them when it decodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ens10.errors import ENS10DataError

_HEADER = 16


@dataclass(frozen=True)
class GribMessageSpan:
    """Where message ``number`` (from 1) of a file lies: ``offset`` and ``length`` in bytes."""

    number: int
    offset: int
    length: int
    edition: int


def _damaged(path: Path, number: int, offset: int, why: str) -> ENS10DataError:
    return ENS10DataError(
        f"GRIB file {path}: message {number} (at byte {offset}) {why}: the file is corrupt or "
        "truncated; download it again"
    )


def _after_zeros(fh: BinaryIO, offset: int) -> int:
    """The offset of the first non-zero byte at or after ``offset`` (the file size if none)."""
    fh.seek(offset)
    while chunk := fh.read(4096):
        stripped = chunk.lstrip(b"\0")
        if stripped:
            return offset + len(chunk) - len(stripped)
        offset += len(chunk)
    return offset


def scan_grib(path: Path | str) -> list[GribMessageSpan]:
    """The messages of GRIB file ``path``, each checked for its start, length and end marker;
    ENS10DataError naming the file, message and offset for the first that is damaged."""
    path = Path(path)
    size = path.stat().st_size
    spans: list[GribMessageSpan] = []
    with open(path, "rb") as fh:
        offset = 0
        while offset < size:
            number = len(spans) + 1
            fh.seek(offset)
            head = fh.read(_HEADER)
            if head[:1] == b"\0":  # zero padding between messages (MARS pads GRIB1 messages)
                offset = _after_zeros(fh, offset)
                if offset >= size:
                    break
                continue
            if not head.startswith(b"GRIB"):
                raise _damaged(path, number, offset, "does not start with 'GRIB'")
            if len(head) < 8:
                raise _damaged(path, number, offset, "is cut off in its first section")
            edition = head[7]
            if edition == 1:
                length = int.from_bytes(head[4:7], "big")
                if length & 0x800000:  # ECMWF's encoding of GRIB1 messages over 8 MiB:
                    break  # the length is not in section 0; eccodes checks the rest
            elif edition == 2 and len(head) == _HEADER:
                length = int.from_bytes(head[8:16], "big")
            else:
                raise _damaged(path, number, offset, f"has unknown GRIB edition {edition}")
            if length < _HEADER or offset + length > size:
                raise _damaged(path, number, offset,
                               f"says it is {length} bytes long, but only {size - offset} remain")  # fmt: skip
            fh.seek(offset + length - 4)
            if fh.read(4) != b"7777":
                raise _damaged(path, number, offset,
                               f"does not end with '7777' where its length ({length} bytes) says")  # fmt: skip
            spans.append(GribMessageSpan(number, offset, length, edition))
            offset += length
    if not spans:
        raise ENS10DataError(f"GRIB file {path} holds no GRIB message: download it again")
    return spans
