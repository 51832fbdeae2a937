"""FV3's corner fills of the halo regions beyond the cube vertices (``sw_core.F90``
``fill2_4corners``/``fill_4corners``; ``fv_mp_mod.F90`` ``fill_corners`` for B-grid scalars
and D-grid vectors), transliterated; in place."""

from __future__ import annotations

from typing import Any

from tests.fv3core.transliteration.farray import FArray

XDIR, YDIR = 1, 2


def fill_4corners(q: FArray, direction: int, npx: int, npy: int, c: Any) -> None:
    """``fill_4corners`` (also ``fill2_4corners``, one field at a time): the two halo cells next
    to each vertex that a sweep along x (1) or y (2) reads."""
    if direction == XDIR:
        if c.sw_corner:
            q[-1, 0] = q[0, 2]
            q[0, 0] = q[0, 1]
        if c.se_corner:
            q[npx + 1, 0] = q[npx, 2]
            q[npx, 0] = q[npx, 1]
        if c.nw_corner:
            q[0, npy] = q[0, npy - 1]
            q[-1, npy] = q[0, npy - 2]
        if c.ne_corner:
            q[npx, npy] = q[npx, npy - 1]
            q[npx + 1, npy] = q[npx, npy - 2]
    else:
        if c.sw_corner:
            q[0, 0] = q[1, 0]
            q[0, -1] = q[2, 0]
        if c.se_corner:
            q[npx, 0] = q[npx - 1, 0]
            q[npx, -1] = q[npx - 2, 0]
        if c.nw_corner:
            q[0, npy] = q[1, npy]
            q[0, npy + 1] = q[2, npy]
        if c.ne_corner:
            q[npx, npy] = q[npx - 1, npy]
            q[npx, npy + 1] = q[npx - 2, npy]


def fill_corners_bgrid(q: FArray, direction: int, npx: int, npy: int, ng: int, c: Any) -> None:
    """``fill_corners(q, npx, npy, FILL=XDir|YDir, BGRID=.true.)`` for a corner (B-grid)
    scalar."""
    for j in range(1, ng + 1):
        for i in range(1, ng + 1):
            if direction == XDIR:
                if c.sw_corner:
                    q[1 - i, 1 - j] = q[1 - j, i + 1]
                if c.nw_corner:
                    q[1 - i, npy + j] = q[1 - j, npy - i]
                if c.se_corner:
                    q[npx + i, 1 - j] = q[npx + j, i + 1]
                if c.ne_corner:
                    q[npx + i, npy + j] = q[npx + j, npy - i]
            else:
                if c.sw_corner:
                    q[1 - j, 1 - i] = q[i + 1, 1 - j]
                if c.nw_corner:
                    q[1 - j, npy + i] = q[i + 1, npy + j]
                if c.se_corner:
                    q[npx + j, 1 - i] = q[npx - i, 1 - j]
                if c.ne_corner:
                    q[npx + j, npy + i] = q[npx - i, npy + j]


def fill_corners_dgrid(x: FArray, y: FArray, npx: int, npy: int, ng: int, sign: float,
                       c: Any) -> None:  # fmt: skip
    """``fill_corners(x, y, npx, npy, DGRID=.true.[, VECTOR=.true.])``: ``x`` on the u points
    (isd:ied, jsd:jed+1), ``y`` on the v points; ``sign`` -1 for a vector."""
    for j in range(1, ng + 1):
        for i in range(1, ng + 1):
            if c.sw_corner:
                x[1 - i, 1 - j] = sign * y[1 - j, i]
            if c.nw_corner:
                x[1 - i, npy + j] = y[1 - j, npy - i]
            if c.se_corner:
                x[npx - 1 + i, 1 - j] = y[npx + j, i]
            if c.ne_corner:
                x[npx - 1 + i, npy + j] = sign * y[npx + j, npy - i]
    for j in range(1, ng + 1):
        for i in range(1, ng + 1):
            if c.sw_corner:
                y[1 - i, 1 - j] = sign * x[j, 1 - i]
            if c.nw_corner:
                y[1 - i, npy - 1 + j] = x[j, npy + i]
            if c.se_corner:
                y[npx + i, 1 - j] = x[npx - j, 1 - i]
            if c.ne_corner:
                y[npx + i, npy - 1 + j] = sign * x[npx - j, npy + i]
