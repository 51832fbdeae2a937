"""The bad-input suite's timing: each case's command time, summed up at the end of the session."""

from __future__ import annotations

import pytest

_TIMES = pytest.StashKey[dict[str, float]]()


@pytest.fixture(scope="session")
def badinput_times(request: pytest.FixtureRequest) -> dict[str, float]:
    """Case name -> seconds its command ran, shared by the session."""
    return request.config.stash.setdefault(_TIMES, {})


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # noqa: ANN001
    times = config.stash.get(_TIMES, {})
    if not times:
        return
    slowest = sorted(times.items(), key=lambda kv: -kv[1])[:5]
    terminalreporter.write_line(
        f"bad-input suite: {len(times)} commands in {sum(times.values()):.1f} s "
        f"(mean {sum(times.values()) / len(times):.2f} s; slowest: "
        + ", ".join(f"{name} {s:.1f} s" for name, s in slowest) + ")"
    )
