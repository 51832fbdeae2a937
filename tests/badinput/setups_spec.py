"""Setups of the spec, submit, stencils and bench bad-input cases (``setup: setups_spec:NAME``)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def readonly_dir(case_dir: Path) -> Callable[[], None]:
    """``case_dir/ro``: a folder nothing can be written in, also for root (immutable flag);
    returns the function that makes it removable again."""
    ro = case_dir / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    immutable = False
    if os.geteuid() == 0:  # root ignores permission bits
        chattr = shutil.which("chattr")
        done = chattr and subprocess.run([chattr, "+i", str(ro)], capture_output=True).returncode == 0
        if not done:
            ro.chmod(0o755)
            pytest.skip("running as root without chattr +i: no read-only folder to test with")
        immutable = True

    def undo() -> None:
        if immutable:
            subprocess.run([shutil.which("chattr") or "chattr", "-i", str(ro)], check=False)
        ro.chmod(0o755)

    return undo
