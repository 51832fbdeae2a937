"""The post-processing output file, filled time by time and never lost to a failing write.

:class:`StreamedOutput` fills a temporary file beside the target and renames it into place
once complete, so an older file at the target survives any failure. When a write fails (a
full disk, a folder gone read-only or away) the times written so far are copied into a
temporary file in the first rescue folder that takes them, and filling goes on there; at the
end the file is named ``stratoflow-rescue-<time>-<pid>-<name>`` in that folder and
:class:`RescuedOutput` says where it is and why. netCDF4/HDF5 report a full disk as a
RuntimeError, the operating system as an OSError: both count as failed writes.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType

import netCDF4
import numpy as np

from ens10.inference.errors import ExportError

log = logging.getLogger(__name__)

WRITE_ERRORS = (OSError, RuntimeError)
VARIABLES = ("mu", "sigma")


class RescuedOutput(ExportError):
    """The output could not be written to its place; the message names the rescue copy."""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _close_quietly(nc: netCDF4.Dataset | None) -> None:
    """Close ``nc`` if open; a file that fails to close is being given up anyway."""
    if nc is not None:
        try:
            nc.close()
        except WRITE_ERRORS:
            pass


class StreamedOutput:
    """``with StreamedOutput(path, skeleton, rescue_folders) as out:`` then ``out.write(t, mu,
    sigma)`` for each time and ``out.finish()`` (the written path). ``skeleton(p)`` creates the
    netCDF file ``p`` with its metadata and the empty ``mu``/``sigma`` variables (time, lat,
    lon); ``what`` names the output in messages (the command-line option)."""

    def __init__(
        self,
        path: Path,
        skeleton: Callable[[Path], None],
        rescue_folders: Sequence[Path] = (),
        what: str = "--out",
    ) -> None:
        self.path = Path(path)
        self.skeleton = skeleton
        self.rescue_folders = list(rescue_folders)
        self.what = what
        self.failure: BaseException | None = None
        self.written = 0  # times 0 .. written - 1 are in the current file
        self.used: set[Path] = set()  # folders written into or tried
        self.stamp = time.strftime("%Y%m%d-%H%M%S")
        self.tmp = self._temporary(self.path.parent, f".{self.path.name}.")
        self.skeleton(self.tmp)
        self.nc: netCDF4.Dataset | None = netCDF4.Dataset(self.tmp, "a")

    def __enter__(self) -> StreamedOutput:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:  # fmt: skip
        _close_quietly(self.nc)
        self.nc = None
        if self.tmp is not None:
            self.tmp.unlink(missing_ok=True)

    @staticmethod
    def _temporary(folder: Path, prefix: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
        os.close(fd)
        os.chmod(name, 0o644)
        return Path(name)

    def write(self, t: int, mu: np.ndarray, sigma: np.ndarray) -> None:
        """Store time ``t`` (the times are written in order, from 0)."""
        assert t == self.written, f"time {t} written out of order (expected {self.written})"
        while True:
            try:
                self._store(t, mu, sigma)
                break
            except WRITE_ERRORS as exc:
                self._move_to_rescue(exc)  # to a folder not tried yet, else ExportError
        self.written = t + 1

    def _store(self, t: int, mu: np.ndarray, sigma: np.ndarray) -> None:
        assert self.nc is not None
        self.nc["mu"][t] = mu
        self.nc["sigma"][t] = sigma
        self.nc.sync()  # a full disk shows here, at the time that did not fit

    def _move_to_rescue(self, exc: BaseException) -> None:
        """Copy the times written so far into a rescue folder's temporary file and go on
        there; ExportError if no folder takes them."""
        self.failure = self.failure or exc
        log.warning("%s %s: writing failed (%s); keeping the result in a rescue folder",
                    self.what, self.path, _reason(exc))  # fmt: skip
        old_nc, old_tmp = self.nc, self.tmp
        assert old_tmp is not None
        self.used.add(old_tmp.parent.resolve())
        for folder in self.rescue_folders:
            if folder.resolve() in self.used:
                continue
            self.used.add(folder.resolve())
            try:
                tmp = self._temporary(folder, f".stratoflow-rescue-{self.path.name}.")
            except OSError as err:
                log.warning("cannot keep the result in %s either: %s", folder, _reason(err))
                continue
            try:
                self.skeleton(tmp)
                nc = netCDF4.Dataset(tmp, "a")
                try:
                    for s in range(self.written):
                        for name in VARIABLES:
                            nc[name][s] = old_nc[name][s]
                    nc.sync()
                except BaseException:
                    nc.close()
                    raise
            except WRITE_ERRORS as err:
                log.warning("cannot keep the result in %s either: %s", folder, _reason(err))
                tmp.unlink(missing_ok=True)
                continue
            self.nc, self.tmp = nc, tmp
            break
        else:
            raise ExportError(
                f"{self.what} {self.path}: cannot write it ({_reason(exc)}), and no rescue copy "
                f"could be written either (tried {', '.join(map(str, sorted(self.used)))}); the result "
                "is lost: free space or fix the folder, then rerun"
            ) from exc
        _close_quietly(old_nc)
        old_tmp.unlink(missing_ok=True)

    def finish(self) -> Path:
        """Close the file and give it its name: ``path`` (returned), or the rescue name, which
        :class:`RescuedOutput` names."""
        assert self.nc is not None and self.tmp is not None
        nc, self.nc = self.nc, None
        try:
            nc.close()
        except WRITE_ERRORS as exc:
            raise ExportError(
                f"{self.what} {self.path}: cannot complete the file ({_reason(exc)}); the "
                "result is lost: free space or fix the folder, then rerun"
            ) from exc
        if self.failure is None:
            try:
                os.replace(self.tmp, self.path)
            except OSError as exc:
                self.failure = exc
                self._rescue_finished_file()
            self.tmp = None
            return self.path
        rescue = self.tmp.parent / f"stratoflow-rescue-{self.stamp}-{os.getpid()}-{self.path.name}"
        os.replace(self.tmp, rescue)
        self.tmp = None
        raise self._rescued(rescue)

    def _rescue_finished_file(self) -> None:
        """The complete file could not be renamed into place: move it to a rescue folder
        (RescuedOutput), else leave it where it is (ExportError naming it)."""
        assert self.tmp is not None and self.failure is not None
        for folder in self.rescue_folders:
            rescue = folder / f"stratoflow-rescue-{self.stamp}-{os.getpid()}-{self.path.name}"
            try:
                shutil.move(self.tmp, rescue)
            except OSError as err:
                log.warning("cannot keep the result in %s either: %s", folder, _reason(err))
                continue
            self.tmp = None
            raise self._rescued(rescue)
        left, self.tmp = self.tmp, None  # kept: it is the only copy
        raise ExportError(
            f"{self.what} {self.path}: cannot write it ({_reason(self.failure)}); the complete "
            f"result is left in {left}: move it to {self.path} once the folder is writable"
        ) from self.failure

    def _rescued(self, rescue: Path) -> RescuedOutput:
        assert self.failure is not None
        error = RescuedOutput(
            f"{self.what} {self.path}: cannot write it ({_reason(self.failure)}); the result is "
            f"kept in {rescue}: move it to {self.path} once there is room or the folder is "
            "writable"
        )
        error.__cause__ = self.failure
        return error
