"""FV3's vertical remapping, transliterated: ``fv_operators.F90`` (``cs_profile``,
``scalar_profile``, ``cs_limiters``, ``map1_ppm``, ``map_scalar``, ``map1_q2``,
``mapn_tracer``), ``fv_fill.F90`` (``fillz``, the default branch without ``DEV_GFS_PHYS``) and
the hydrostatic, adiabatic, dry path of ``fv_mapz.F90``'s ``Lagrangian_to_Eulerian``
(``remap_te = .false.``; its energy fix ``consv``: :mod:`tests.fv3core.transliteration.energy_fixer`).

The reference of :mod:`fv3core.vertical.remapping`.  Statement for statement FV3's, vectorised
over ``i`` where FV3 loops over ``i`` innermost; the mapping loops (``do i`` / ``do k`` /
``do l``, with ``goto``) are FV3's per-column searches, written as per-column loops.  Arrays
keep Fortran's 1-based vertical indices: a column array ``q(i, k)`` is ``q[:, k]`` with
``k = 1..km`` (index 0 unused), so the code reads like the Fortran.  ``kord`` here is always
> 7 (the cubic-spline profiles; ``ppm_profile`` is not transliterated).
"""

from __future__ import annotations

from typing import Any

import numpy as np

R3, R23, R12 = 1.0 / 3.0, 2.0 / 3.0, 1.0 / 12.0
#: FV3 ``fv_mapz``'s ``t_min`` (K): the stricter constraint of ``map_scalar`` below it
T_MIN = 184.0
#: ``abs(kord)`` values of ``cs_profile``/``scalar_profile`` transliterated here
PROFILE_KORD = (8, 9, 10, 11, 12, 13, 14, 15, 17)
#: ``iv`` values transliterated here (-2: ``w`` with its lower boundary value ``qs``; -3 not)
PROFILE_IV = (-2, -1, 0, 1, 2)


def _fmin(*a: Any) -> Any:
    out = a[0]
    for x in a[1:]:
        out = np.minimum(out, x)
    return out


def _fmax(*a: Any) -> Any:
    out = a[0]
    for x in a[1:]:
        out = np.maximum(out, x)
    return out


def cs_limiters(extm: np.ndarray, a4: list[np.ndarray], k: int, iv: int) -> None:
    """``cs_limiters(im, extm(i1,k), a4(1,i1,k), iv)`` on level ``k`` of all columns (in
    place).  ``a4[n][:, k]`` is FV3's ``a4(n, i, k)``."""
    a1, a2, a3, a4_ = (a4[n][:, k].copy() for n in (1, 2, 3, 4))
    if iv == 0:
        flat = a1 <= 0.0
        curv = np.abs(a3 - a2) < -a4_
        with np.errstate(divide="ignore", invalid="ignore"):
            negmin = (a1 + 0.25 * (a3 - a2) ** 2 / a4_ + a4_ * R12) < 0.0
        fix = ~flat & curv & negmin
        c1 = fix & (a1 < a3) & (a1 < a2)
        c2 = fix & ~c1 & (a3 > a2)
        c3 = fix & ~c1 & ~c2
        n2, n3, n4 = a2.copy(), a3.copy(), a4_.copy()
        n2[flat | c1], n3[flat | c1], n4[flat | c1] = a1[flat | c1], a1[flat | c1], 0.0
        n4[c2] = 3.0 * (a2[c2] - a1[c2])
        n3[c2] = a2[c2] - n4[c2]
        n4[c3] = 3.0 * (a3[c3] - a1[c3])
        n2[c3] = a3[c3] - n4[c3]
    else:
        flat = (a1 - a2) * (a1 - a3) >= 0.0 if iv == 1 else extm[:, k].copy()
        da1 = a3 - a2
        da2 = da1**2
        a6da = a4_ * da1
        lo = ~flat & (a6da < -da2)
        hi = ~flat & ~lo & (a6da > da2)
        n2, n3, n4 = a2.copy(), a3.copy(), a4_.copy()
        n2[flat], n3[flat], n4[flat] = a1[flat], a1[flat], 0.0
        n4[lo] = 3.0 * (a2[lo] - a1[lo])
        n3[lo] = a2[lo] - n4[lo]
        n4[hi] = 3.0 * (a3[hi] - a1[hi])
        n2[hi] = a3[hi] - n4[hi]
    a4[2][:, k], a4[3][:, k], a4[4][:, k] = n2, n3, n4


def _huynh(a4: list[np.ndarray], gam: np.ndarray, k: int, m: np.ndarray) -> None:
    """Huynh's second constraint on the edges of level ``k`` where ``m`` (FV3's
    ``pmp_1``/``lac_1``/``pmp_2``/``lac_2`` lines)."""
    a1 = a4[1][:, k]
    pmp_1 = a1 - 2.0 * gam[:, k + 1]
    lac_1 = pmp_1 + 1.5 * gam[:, k + 2]
    new2 = _fmin(_fmax(a4[2][:, k], _fmin(a1, pmp_1, lac_1)), _fmax(a1, pmp_1, lac_1))
    pmp_2 = a1 + 2.0 * gam[:, k]
    lac_2 = pmp_2 - 1.5 * gam[:, k - 1]
    new3 = _fmin(_fmax(a4[3][:, k], _fmin(a1, pmp_2, lac_2)), _fmax(a1, pmp_2, lac_2))
    a4[2][:, k] = np.where(m, new2, a4[2][:, k])
    a4[3][:, k] = np.where(m, new3, a4[3][:, k])


def _flatten(a4: list[np.ndarray], k: int, m: np.ndarray) -> None:
    a4[2][m, k] = a4[1][m, k]
    a4[3][m, k] = a4[1][m, k]
    a4[4][m, k] = 0.0


def _a6(a4: list[np.ndarray], k: int) -> np.ndarray:
    return 3.0 * (2.0 * a4[1][:, k] - (a4[2][:, k] + a4[3][:, k]))


def _a6b(a4: list[np.ndarray], k: int) -> np.ndarray:
    return 6.0 * a4[1][:, k] - 3.0 * (a4[2][:, k] + a4[3][:, k])


def cs_profile(qs: np.ndarray, a4: list[np.ndarray], delp: np.ndarray, km: int, iv: int,
               kord: int, qmin: float | None = None) -> None:  # fmt: skip
    """``cs_profile`` (``qmin=None``) or ``scalar_profile`` (``qmin`` given): the cubic-spline
    sub-grid profile of each layer, ``a4[2..4]`` from the layer means ``a4[1]`` (in place).
    ``a4[n]``, ``delp``: ``(ni, km + 1)`` arrays, Fortran's ``k`` in ``1..km``; ``qs``: the
    bottom interface's value (``iv = -2``, the non-hydrostatic ``w``; unused otherwise)."""
    if iv not in PROFILE_IV or abs(kord) not in PROFILE_KORD:
        raise ValueError(f"cs_profile: iv={iv}, kord={kord} not transliterated")
    scalar = qmin is not None
    ni = delp.shape[0]
    gam = np.zeros((ni, km + 2))
    q = np.zeros((ni, km + 2))
    extm = np.zeros((ni, km + 2), dtype=bool)
    ext5 = np.zeros((ni, km + 2), dtype=bool)
    ext6 = np.zeros((ni, km + 2), dtype=bool)
    if iv == -2:
        gam[:, 2] = 0.5
        q[:, 1] = 1.5 * a4[1][:, 1]
        for k in range(2, km):
            grat = delp[:, k - 1] / delp[:, k]
            bet = 2.0 + grat + grat - gam[:, k]
            q[:, k] = (3.0 * (a4[1][:, k - 1] + a4[1][:, k]) - q[:, k - 1]) / bet
            gam[:, k + 1] = grat / bet
        grat = delp[:, km - 1] / delp[:, km]
        q[:, km] = (3.0 * (a4[1][:, km - 1] + a4[1][:, km]) - grat * qs - q[:, km - 1]) / (
            2.0 + grat + grat - gam[:, km])  # fmt: skip
        q[:, km + 1] = qs
        for k in range(km - 1, 0, -1):
            q[:, k] = q[:, k] - gam[:, k + 1] * q[:, k + 1]
    else:
        grat = delp[:, 2] / delp[:, 1]
        bet = grat * (grat + 0.5)
        q[:, 1] = ((grat + grat) * (grat + 1.0) * a4[1][:, 1] + a4[1][:, 2]) / bet
        gam[:, 1] = (1.0 + grat * (grat + 1.5)) / bet
        for k in range(2, km + 1):
            d4 = delp[:, k - 1] / delp[:, k]
            bet = 2.0 + d4 + d4 - gam[:, k - 1]
            q[:, k] = (3.0 * (a4[1][:, k - 1] + d4 * a4[1][:, k]) - q[:, k - 1]) / bet
            gam[:, k] = d4 / bet
        a_bot = 1.0 + d4 * (d4 + 1.5)
        q[:, km + 1] = ((2.0 * d4 * (d4 + 1.0) * a4[1][:, km] + a4[1][:, km - 1]
                         - a_bot * q[:, km]) / (d4 * (d4 + 0.5) - a_bot * gam[:, km]))  # fmt: skip
        for k in range(km, 0, -1):
            q[:, k] = q[:, k] - gam[:, k] * q[:, k + 1]

    if abs(kord) == 17:
        for k in range(1, km + 1):
            a4[2][:, k] = q[:, k]
            a4[3][:, k] = q[:, k + 1]
            a4[4][:, k] = _a6(a4, k)
        return

    a1 = a4[1]
    q[:, 2] = np.minimum(q[:, 2], np.maximum(a1[:, 1], a1[:, 2]))
    q[:, 2] = np.maximum(q[:, 2], np.minimum(a1[:, 1], a1[:, 2]))
    for k in range(2, km + 1):
        gam[:, k] = a1[:, k] - a1[:, k - 1]
    for k in range(3, km):
        lo, hi = np.minimum(a1[:, k - 1], a1[:, k]), np.maximum(a1[:, k - 1], a1[:, k])
        mono = np.full(ni, abs(kord) >= 14) | (gam[:, k - 1] * gam[:, k + 1] > 0.0)
        vmax = ~mono & (gam[:, k - 1] > 0.0)
        vmin = ~mono & ~vmax
        qk = q[:, k]
        clipped = np.maximum(np.minimum(qk, hi), lo)
        atmin = np.minimum(qk, hi)
        if iv == 0:
            atmin = np.maximum(0.0, atmin)
        q[:, k] = np.where(mono, clipped, np.where(vmax, np.maximum(qk, lo), atmin))
        del vmin
    q[:, km] = np.minimum(q[:, km], np.maximum(a1[:, km - 1], a1[:, km]))
    q[:, km] = np.maximum(q[:, km], np.minimum(a1[:, km - 1], a1[:, km]))

    for k in range(1, km + 1):
        a4[2][:, k] = q[:, k]
        a4[3][:, k] = q[:, k + 1]
    for k in range(1, km + 1):
        if k == 1 or k == km:
            extm[:, k] = (a4[2][:, k] - a1[:, k]) * (a4[3][:, k] - a1[:, k]) > 0.0
        else:
            extm[:, k] = gam[:, k] * gam[:, k + 1] < 0.0
        if abs(kord) > 9:
            x0 = 2.0 * a1[:, k] - (a4[2][:, k] + a4[3][:, k])
            x1 = np.abs(a4[2][:, k] - a4[3][:, k])
            a4[4][:, k] = 3.0 * x0
            ext5[:, k] = np.abs(x0) > x1
            ext6[:, k] = np.abs(a4[4][:, k]) > x1

    if iv == 0:
        a4[2][:, 1] = np.maximum(0.0, a4[2][:, 1])
    elif iv == -1:
        a4[2][:, 1] = np.where(a4[2][:, 1] * a1[:, 1] <= 0.0, 0.0, a4[2][:, 1])
    elif iv == 2:
        a4[2][:, 1] = a1[:, 1]
        a4[3][:, 1] = a1[:, 1]
        a4[4][:, 1] = 0.0
    if iv != 2:
        a4[4][:, 1] = _a6(a4, 1)
        cs_limiters(extm, a4, 1, 1)
    a4[4][:, 2] = _a6(a4, 2)
    cs_limiters(extm, a4, 2, 2)

    qlow = (a1 < qmin) if scalar else np.zeros_like(extm)
    for k in range(3, km - 1):
        ak = abs(kord)
        if ak <= 8:
            _huynh(a4, gam, k, np.ones(ni, dtype=bool))
            a4[4][:, k] = _a6(a4, k)
        elif ak == 9:
            flat = (extm[:, k] & extm[:, k - 1]) | (extm[:, k] & extm[:, k + 1])
            if scalar:
                flat = flat | (extm[:, k] & qlow[:, k])
            a6 = _a6(a4, k) if scalar else _a6b(a4, k)
            a4[4][:, k] = np.where(flat, a4[4][:, k], a6)
            smooth = ~flat & (np.abs(a4[4][:, k]) > np.abs(a4[2][:, k] - a4[3][:, k]))
            _huynh(a4, gam, k, smooth)
            a4[4][:, k] = np.where(smooth, _a6(a4, k) if scalar else _a6b(a4, k), a4[4][:, k])
            _flatten(a4, k, flat)
        elif ak == 10:
            noisy = extm[:, k - 1] | extm[:, k + 1]
            if scalar:
                noisy = qlow[:, k] | noisy
            flat = extm[:, k] & noisy
            a4[4][:, k] = np.where(flat, a4[4][:, k], _a6b(a4, k))
            smooth = ~extm[:, k] & (np.abs(a4[4][:, k]) > np.abs(a4[2][:, k] - a4[3][:, k]))
            _huynh(a4, gam, k, smooth)
            a4[4][:, k] = np.where(smooth, _a6b(a4, k), a4[4][:, k])
            _flatten(a4, k, flat)
        elif ak == 11:
            noisy = ext5[:, k - 1] | ext5[:, k + 1]
            if scalar:
                noisy = noisy | qlow[:, k]
            flat = ext5[:, k] & noisy
            a4[4][:, k] = np.where(flat, a4[4][:, k], _a6(a4, k))
            _flatten(a4, k, flat)
        elif ak == 12:
            e5, e6 = ext5[:, k], ext6[:, k]
            n5 = ext5[:, k - 1] | ext5[:, k + 1]
            n6 = ext6[:, k - 1] | ext6[:, k + 1]
            flat2 = e5 & n5
            lim = (e5 & ~n5 & n6) | (~e5 & e6 & n5)
            a4[2][flat2, k] = a1[flat2, k]
            a4[3][flat2, k] = a1[flat2, k]
            _huynh(a4, gam, k, lim)
            a4[4][:, k] = _a6(a4, k)
        elif ak == 13:
            a4[4][:, k] = _a6(a4, k)
        elif ak == 14:
            cs_limiters(extm, a4, k, 2)
        elif ak == 15:
            cs_limiters(extm, a4, k, 1)
        if iv == 0 and ak <= 13:
            cs_limiters(extm, a4, k, 0)

    if iv == 0:
        a4[3][:, km] = np.maximum(0.0, a4[3][:, km])
    elif iv == -1:
        a4[3][:, km] = np.where(a4[3][:, km] * a1[:, km] <= 0.0, 0.0, a4[3][:, km])
    for k in (km - 1, km):
        a4[4][:, k] = _a6(a4, k)
        cs_limiters(extm, a4, k, 2 if k == km - 1 else 1)


def _map_column(pe1: np.ndarray, pe2: np.ndarray, dp1: np.ndarray, a4: list[np.ndarray],
                i: int, km: int, kn: int, dp2: np.ndarray | None,
                factored: bool) -> np.ndarray:  # fmt: skip
    """FV3's mapping loop (``do 555 k`` / ``do 100 l`` / ``do m``) of column ``i``: the new
    layer means.  ``dp2``: divide by it (``map1_q2``, ``mapn_tracer``) instead of
    ``pe2(k+1) - pe2(k)``; ``factored``: ``mapn_tracer``'s ``fac1``/``fac2`` arithmetic."""
    q2 = np.zeros(kn + 1)
    k0 = 1
    qsum = 0.0
    for k in range(1, kn + 1):
        done = False
        for l in range(k0, km + 1):  # noqa: E741  (FV3's name)
            if pe2[i, k] >= pe1[i, l] and pe2[i, k] <= pe1[i, l + 1]:
                pl = (pe2[i, k] - pe1[i, l]) / dp1[i, l]
                q_2, q_3, q_4 = a4[2][i, l], a4[3][i, l], a4[4][i, l]
                if pe2[i, k + 1] <= pe1[i, l + 1]:
                    pr = (pe2[i, k + 1] - pe1[i, l]) / dp1[i, l]
                    if factored:
                        fac1 = pr + pl
                        fac2 = R3 * (pr * fac1 + pl * pl)
                        fac1 = 0.5 * fac1
                        q2[k] = q_2 + (q_4 + q_3 - q_2) * fac1 - q_4 * fac2
                    else:
                        q2[k] = (q_2 + 0.5 * (q_4 + q_3 - q_2) * (pr + pl)
                                 - q_4 * R3 * (pr * (pr + pl) + pl * pl))  # fmt: skip
                    k0 = l
                    done = True
                    break
                if factored:
                    dp = pe1[i, l + 1] - pe2[i, k]
                    fac1 = 1.0 + pl
                    fac2 = R3 * (1.0 + pl * fac1)
                    fac1 = 0.5 * fac1
                    qsum = dp * (q_2 + (q_4 + q_3 - q_2) * fac1 - q_4 * fac2)
                else:
                    qsum = (pe1[i, l + 1] - pe2[i, k]) * (
                        q_2 + 0.5 * (q_4 + q_3 - q_2) * (1.0 + pl)
                        - q_4 * (R3 * (1.0 + pl * (1.0 + pl))))  # fmt: skip
                for m in range(l + 1, km + 1):
                    if pe2[i, k + 1] > pe1[i, m + 1]:
                        qsum = qsum + dp1[i, m] * a4[1][i, m]
                    else:
                        dp = pe2[i, k + 1] - pe1[i, m]
                        esl = dp / dp1[i, m]
                        qsum = qsum + dp * (a4[2][i, m] + 0.5 * esl * (
                            a4[3][i, m] - a4[2][i, m] + a4[4][i, m] * (1.0 - R23 * esl)))  # fmt: skip
                        k0 = m
                        break
                break
        if not done:
            q2[k] = qsum / (dp2[i, k] if dp2 is not None else pe2[i, k + 1] - pe2[i, k])
    return q2


def _ones_based(a: np.ndarray) -> np.ndarray:
    """``(ni, n)`` -> ``(ni, n + 1)`` with the data at Fortran indices ``1..n``."""
    out = np.zeros((a.shape[0], a.shape[1] + 1))
    out[:, 1:] = a
    return out


def map1(pe1: np.ndarray, q1: np.ndarray, pe2: np.ndarray, iv: int, kord: int, *,
         qmin: float | None = None, dp2: np.ndarray | None = None,
         factored: bool = False, qs: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """``map1_ppm`` (``qmin=None``), ``map_scalar`` (``qmin``), ``map1_q2`` (``qmin`` and
    ``dp2``) for ``kord > 7``, on columns: ``pe1``, ``pe2`` ``(ni, km + 1)`` (0-based numpy
    arrays, top first), ``q1`` ``(ni, km)``; returns the remapped ``(ni, km)``.  ``qs``
    ``(ni,)``: ``map1_ppm``'s bottom value (``iv = -2``)."""
    ni, km = q1.shape
    p1, p2, a1 = _ones_based(pe1), _ones_based(pe2), _ones_based(q1)
    dp1 = np.zeros((ni, km + 1))
    for k in range(1, km + 1):
        dp1[:, k] = p1[:, k + 1] - p1[:, k]
    a4 = [None, a1, np.zeros_like(a1), np.zeros_like(a1), np.zeros_like(a1)]
    cs_profile(np.zeros(ni) if qs is None else qs, a4, dp1, km, iv, kord, qmin)
    d2 = _ones_based(dp2) if dp2 is not None else None
    out = np.stack([_map_column(p1, p2, dp1, a4, i, km, km, d2, factored) for i in range(ni)])
    return out[:, 1:]


def fillz(q: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """``fillz(im, km, 1, q, dp)`` on ``(ni, km)`` columns (0-based numpy): negatives filled
    from the layers above/below, then the non-local fix; returns the new ``q``."""
    ni, km = q.shape
    q, dp = _ones_based(q), _ones_based(dp)
    neg = q[:, 1] < 0.0
    q[neg, 2] = q[neg, 2] + q[neg, 1] * dp[neg, 1] / dp[neg, 2]
    q[neg, 1] = 0.0
    zfix = np.zeros(ni, dtype=bool)
    for k in range(2, km):
        for i in range(ni):
            if q[i, k] < 0.0:
                zfix[i] = True
                if q[i, k - 1] > 0.0:
                    dq = min(q[i, k - 1] * dp[i, k - 1], -q[i, k] * dp[i, k])
                    q[i, k - 1] = q[i, k - 1] - dq / dp[i, k - 1]
                    q[i, k] = q[i, k] + dq / dp[i, k]
                if q[i, k] < 0.0 and q[i, k + 1] > 0.0:
                    dq = min(q[i, k + 1] * dp[i, k + 1], -q[i, k] * dp[i, k])
                    q[i, k + 1] = q[i, k + 1] - dq / dp[i, k + 1]
                    q[i, k] = q[i, k] + dq / dp[i, k]
    k = km
    for i in range(ni):
        if q[i, k] < 0.0 and q[i, k - 1] > 0.0:
            zfix[i] = True
            qup = q[i, k - 1] * dp[i, k - 1]
            qly = -q[i, k] * dp[i, k]
            dup = min(qly, qup)
            q[i, k - 1] = q[i, k - 1] - dup / dp[i, k - 1]
            q[i, k] = q[i, k] + dup / dp[i, k]
    dm = np.zeros(km + 1)
    for i in range(ni):
        if zfix[i]:
            sum0 = 0.0
            for k in range(2, km + 1):
                dm[k] = q[i, k] * dp[i, k]
                sum0 = sum0 + dm[k]
            if sum0 > 0.0:
                sum1 = 0.0
                for k in range(2, km + 1):
                    sum1 = sum1 + max(0.0, dm[k])
                fac = sum0 / sum1
                for k in range(2, km + 1):
                    q[i, k] = max(0.0, fac * dm[k] / dp[i, k])
    return q[:, 1:]


def mapn_tracer(pe1: np.ndarray, pe2: np.ndarray, q1: list[np.ndarray], dp2: np.ndarray,
                kord: list[int], q_min: float = 0.0, fill: bool = True) -> list[np.ndarray]:  # fmt: skip
    """``mapn_tracer``: every tracer of ``q1`` (``(ni, km)`` each) remapped with
    ``scalar_profile(iv=0, kord(iq), q_min)`` and FV3's factored arithmetic, then ``fillz``."""
    out = [map1(pe1, q, pe2, 0, kd, qmin=q_min, dp2=dp2, factored=True) for q, kd in zip(q1, kord)]
    return [fillz(q, dp2) for q in out] if fill else out


def lagrangian_to_eulerian(
    pe: np.ndarray, delp: np.ndarray, pt: np.ndarray, u: np.ndarray, v: np.ndarray,
    q: list[np.ndarray], pk: np.ndarray, peln: np.ndarray, ak: np.ndarray, bk: np.ndarray,
    *, akap: float, kord_mt: int, kord_tm: int, kord_tr: list[int], fill: bool,
    last_step: bool, ptop: float, nonhydrostatic: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``Lagrangian_to_Eulerian`` (hydrostatic, adiabatic, dry, ``remap_te = .false.``,
    ``consv = 0``, ``nwat = 0``) on the compute domain of one rank.

    Index conventions (0-based numpy, vertical last): ``pe`` ``(nx + 2, ny + 2, nz + 1)`` with
    a 1-cell halo (FV3's ``pe(is-1:ie+1, :, js-1:je+1)``); ``delp``, ``pt`` ``(nx, ny, nz)``;
    ``u`` ``(nx, ny + 1, nz)``; ``v`` ``(nx + 1, ny, nz)``; ``q`` tracers ``(nx, ny, nz)``;
    ``pk``, ``peln`` ``(nx, ny, nz + 1)``.  Returns the new fields (``pe`` with its interior
    interfaces 2..km updated on the compute domain, ``ps``, ``pkz``).

    ``nonhydrostatic`` (``hydrostatic = .false.``): a dict of ``w``, ``delz`` ``(nx, ny, nz)``,
    ``ws`` ``(nx, ny)``, ``kord_wz`` and FV3's ``rrg = -rdgas/grav``, ``k1k = rdgas/cv_air``:
    the temperature from ``delz``, ``w`` remapped with the surface's ``ws`` below (``iv = -2``),
    ``delz`` through the specific volume, ``pkz`` from ``delz``; ``w``, ``delz`` returned."""
    nx, ny, nz = pt.shape
    nh = nonhydrostatic
    if nh is not None:
        w, delz, ws = nh["w"].copy(), nh["delz"].copy(), nh["ws"]
        rrg, k1k = nh["rrg"], nh["k1k"]
    km = nz
    pe = pe.copy()
    pt, u, v = pt.copy(), u.copy(), v.copy()
    delp, pk, peln = delp.copy(), pk.copy(), peln.copy()
    q = [t.copy() for t in q]
    ps = np.zeros((nx, ny))
    pkz = np.zeros((nx, ny, nz))
    pe4 = np.zeros((nx, ny, nz))
    pe_orig = pe.copy()
    for j in range(ny + 1):  # FV3 j = js..je+1
        jp = j + 1  # index of row j in pe (halo 1)
        pe1 = pe_orig[1:-1, jp, :]
        if j < ny:
            pe2 = np.zeros((nx, km + 1))
            pe2[:, 0] = ptop
            pe2[:, km] = pe1[:, km]
            if kord_tm < 0:
                if nh is None:
                    pt[:, j, :] = pt[:, j, :] * (pk[:, j, 1:] - pk[:, j, :-1]) / (
                        akap * (peln[:, j, 1:] - peln[:, j, :-1]))  # fmt: skip
                else:
                    pt[:, j, :] = pt[:, j, :] * np.exp(k1k * np.log(rrg * delp[:, j, :] / delz[:, j, :] * pt[:, j, :]))
            if nh is not None:
                delz[:, j, :] = -delz[:, j, :] / delp[:, j, :]
            ps[:, j] = pe1[:, km]
            for k in range(1, km):
                pe2[:, k] = ak[k] + bk[k] * pe1[:, km]
            dp2 = pe2[:, 1:] - pe2[:, :-1]
            delp[:, j, :] = dp2
            pn2 = np.zeros((nx, km + 1))
            pk2 = np.zeros((nx, km + 1))
            pn2[:, 0], pn2[:, km] = peln[:, j, 0], peln[:, j, km]
            pk2[:, 0], pk2[:, km] = pk[:, j, 0], pk[:, j, km]
            for k in range(1, km):
                pn2[:, k] = np.log(pe2[:, k])
                pk2[:, k] = np.exp(akap * pn2[:, k])
            if kord_tm < 0:
                pt[:, j, :] = map1(peln[:, j, :], pt[:, j, :], pn2, 1, abs(kord_tm), qmin=T_MIN)
            else:
                pt[:, j, :] = map1(pe1, pt[:, j, :], pe2, 1, abs(kord_tm))
            if len(q) > 5:
                q_new = mapn_tracer(pe1, pe2, [t[:, j, :] for t in q], dp2, kord_tr, 0.0, fill)
                for t, qn in zip(q, q_new):
                    t[:, j, :] = qn
            else:
                for iq, t in enumerate(q):
                    q2 = map1(pe1, t[:, j, :], pe2, 0, kord_tr[iq], qmin=0.0, dp2=dp2)
                    if fill:
                        q2 = fillz(q2, dp2)
                    t[:, j, :] = q2
            if nh is not None:
                w[:, j, :] = map1(pe1, w[:, j, :], pe2, -2, nh["kord_wz"], qs=ws[:, j])
                delz[:, j, :] = map1(pe1, delz[:, j, :], pe2, 1, abs(kord_tm))
                delz[:, j, :] = -delz[:, j, :] * dp2
            pk[:, j, :] = pk2
            peln[:, j, :] = pn2
            if nh is None:
                pkz[:, j, :] = (pk2[:, 1:] - pk2[:, :-1]) / (akap * (peln[:, j, 1:] - peln[:, j, :-1]))
            else:
                power = akap if kord_tm < 0 else k1k
                pkz[:, j, :] = np.exp(power * np.log(rrg * delp[:, j, :] / delz[:, j, :] * pt[:, j, :]))
            if kord_tm > 0:
                pt[:, j, :] = pt[:, j, :] * pkz[:, j, :]
        # 4.1) u on its staggered points: pe averaged between rows j-1 and j
        pem = pe_orig[1:-1, jp - 1, :]
        pe0 = np.zeros((nx, km + 1))
        pe3 = np.zeros((nx, km + 1))
        pe0[:, 0] = pe1[:, 0]
        for k in range(1, km + 1):
            pe0[:, k] = 0.5 * (pem[:, k] + pe1[:, k])
        for k in range(km + 1):
            bkh = 0.5 * bk[k]
            pe3[:, k] = ak[k] + bkh * (pem[:, km] + pe1[:, km])
        u[:, j, :] = map1(pe0, u[:, j, :], pe3, -1, kord_mt)
        if j < ny:
            # 4.2) v: pe averaged between columns i-1 and i
            row = pe_orig[:, jp, :]  # i = is-1 .. ie+1
            pe0 = np.zeros((nx + 1, km + 1))
            pe3 = np.zeros((nx + 1, km + 1))
            pe0[:, 0] = row[1:, 0]
            pe3[:, 0] = ak[0]
            for k in range(1, km + 1):
                bkh = 0.5 * bk[k]
                pe0[:, k] = 0.5 * (row[:-1, k] + row[1:, k])
                pe3[:, k] = ak[k] + bkh * (row[:-1, km] + row[1:, km])
            v[:, j, :] = map1(pe0, v[:, j, :], pe3, -1, kord_mt)
            pe4[:, j, :] = pe2[:, 1:]
    pe[1:-1, 1:-1, 1:km] = pe4[:, :, : km - 1]
    if last_step:
        pass  # 9a) dry, consv = 0: pt = (pt + 0) / (1 + r_vir * 0), i.e. unchanged (Tv = T)
    else:
        pt = pt / pkz  # 9b)
    out = {"pe": pe, "delp": delp, "pt": pt, "u": u, "v": v, "q": q, "pk": pk,
           "peln": peln, "pkz": pkz, "ps": ps}  # fmt: skip
    if nh is not None:
        out.update(w=w, delz=delz)
    return out
