"""How a process ended, in words, for every stratoflow layer's logs and error messages."""

from __future__ import annotations

import signal


def signal_name(signum: int) -> str:
    """``SIGSEGV`` for 11; ``signal N`` for a number this platform does not name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_description(returncode: int) -> str:
    """A child's exit status (``subprocess`` convention): the signal's name for a negative code,
    else ``exit N``."""
    return signal_name(-returncode) if returncode < 0 else f"exit {returncode}"
