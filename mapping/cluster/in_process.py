"""All in-process ranks' halo exchanges as a few precomputed copies.

When every rank of a :class:`LocalComm` lives in this process (one process running all six
tiles), a halo exchange only moves values between arrays of the same process: packing into
message buffers, the mailbox and unpacking are overhead.  :class:`InProcessExchange` traces the
exchanges once -- it writes a unique id into every point of every field, runs the real exchanges
(pack, messages, unpack, corner fills), reads off for every point they changed which point its
value came from and with which sign, and restores the fields.  ``update()`` then performs exactly
those copies: one NumPy fancy-index copy per (destination buffer, source buffer, sign).  The
exchange only copies and negates, so the result is bit for bit the exchange's; an exchange that
did anything else (a value that is not a traced id) is refused at construction.

Fields that are views into one buffer (e.g. every rank's ``u`` allocated as slices of one array)
share their copies, which makes an exchange of all six tiles a handful of NumPy calls.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from mapping.cluster.comm import LocalComm
from mapping.cluster.errors import HaloError
from mapping.cluster.exchange import HaloExchange
from stencils.storage import StencilError, flat_locations

log = logging.getLogger(__name__)


class InProcessExchange:
    """``InProcessExchange(exchanges).update()`` == every rank's ``start()`` then ``wait()``.

    ``exchanges``: one :class:`HaloExchange` per rank of one in-process communicator (all ranks,
    each once), float64 NumPy fields.  Build it once; the fields may change freely between
    updates, their memory may not move.  ``n_copies`` is the number of NumPy copies per update.
    """

    def __init__(self, exchanges: Sequence[HaloExchange]) -> None:
        self._check(exchanges)
        self._exchanges = list(exchanges)
        fields = self._fields(exchanges)
        try:
            buffers, located = flat_locations(fields)
        except StencilError as err:
            raise HaloError(f"{err}; use HaloExchange") from err
        self._ops, self._two_phase = self._trace(fields, located, buffers)
        self.n_copies = len(self._ops)
        log.debug("in-process exchange of %d ranks: %d copies%s", len(exchanges), self.n_copies,
                  " (gather, then scatter)" if self._two_phase else "")  # fmt: skip

    @staticmethod
    def _check(exchanges: Sequence[HaloExchange]) -> None:
        if not exchanges:
            raise HaloError("InProcessExchange needs the HaloExchange of every in-process rank")
        comms = [ex.comm for ex in exchanges]
        if not all(isinstance(c, LocalComm) for c in comms):
            raise HaloError(
                "InProcessExchange needs LocalComm ranks (all ranks in this process); under MPI "
                "use HaloExchange.start()/wait()"
            )
        size = comms[0].size
        if sorted(c.rank for c in comms) != list(range(size)) or not all(
            comms[0].same_group(c) for c in comms
        ):
            raise HaloError(
                f"InProcessExchange needs one HaloExchange per rank 0..{size - 1} of one "
                f"LocalComm.create group, got ranks {[c.rank for c in comms]}"
            )

    @staticmethod
    def _fields(exchanges: Sequence[HaloExchange]) -> list[tuple[str, np.ndarray]]:
        out: list[tuple[str, np.ndarray]] = []
        seen: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()
        for ex in exchanges:
            for c, a in enumerate(ex._arrays):
                name = f"rank {ex.rank} component {c}"
                if not isinstance(a, np.ndarray) or a.dtype != np.float64:
                    raise HaloError(
                        f"{name}: InProcessExchange traces float64 NumPy fields, got "
                        f"{type(a).__name__} {getattr(a, 'dtype', '')}; use HaloExchange"
                    )
                key = (a.__array_interface__["data"][0], a.shape, a.strides)
                if key not in seen:
                    seen.add(key)
                    out.append((name, a))
        return out

    def _trace(
        self,
        fields: list[tuple[str, np.ndarray]],
        located: list[tuple[int, np.ndarray]],
        buffers: list[np.ndarray],
    ) -> tuple[list[tuple[Any, ...]], bool]:
        """Run the exchanges once on ids; the copies that reproduce them; whether any point
        is both read and written (then all reads must happen before the writes)."""
        sizes = np.array([b.size for b in buffers])
        base = np.concatenate([[0], np.cumsum(sizes)])
        if base[-1] >= 2**52:
            raise HaloError("InProcessExchange: too many points to trace with float64 ids")
        saved = [a.copy() for _, a in fields]
        try:
            for (_, a), (root, index) in zip(fields, located):
                a[...] = base[root] + index + 1.0
            for ex in self._exchanges:
                ex.start()
            for ex in self._exchanges:
                ex.wait()
            moves: dict[tuple[int, int, int], list[tuple[np.ndarray, np.ndarray]]] = defaultdict(
                list
            )
            for (name, a), (root, index) in zip(fields, located):
                changed = a != base[root] + index + 1.0
                value = a[changed]
                dst = index[changed]
                code = np.abs(value)
                if np.any(code != np.round(code)) or np.any(code > base[-1]):
                    raise HaloError(
                        f"{name}: the exchange computed values instead of copying them; "
                        f"InProcessExchange cannot reproduce it, use HaloExchange"
                    )
                zero = value == 0.0  # a point the exchange zero-filled (ids are >= 1)
                if np.any(zero):
                    moves[(root, -1, 0)].append((dst[zero], dst[zero]))
                code = code.astype(np.int64) - 1
                sign = np.sign(value).astype(np.int64)
                src_root = np.searchsorted(base, code, side="right") - 1
                for s, r in sorted(set(zip(sign[~zero].tolist(), src_root[~zero].tolist()))):
                    pick = (sign == s) & (src_root == r)
                    moves[(root, r, s)].append((dst[pick], code[pick] - base[r]))
        finally:
            for (_, a), old in zip(fields, saved):
                a[...] = old
            for ex in self._exchanges:
                ex.reset_timers()
        ops, written, read = [], defaultdict(list), defaultdict(list)
        for (dst_root, src_root, sign), pieces in sorted(moves.items()):
            dst = np.concatenate([d for d, _ in pieces])
            src = np.concatenate([s for _, s in pieces])
            order = np.argsort(dst)
            dst, src = dst[order], src[order]
            written[dst_root].append(dst)
            if sign:
                read[src_root].append(src)
            ops.append((buffers[dst_root], dst, buffers[src_root] if sign else None, src, sign))  # fmt: skip
        two_phase = any(
            np.intersect1d(np.concatenate(written[r]), np.concatenate(read[r])).size
            for r in written
            if r in read
        )
        return ops, two_phase

    def update(self) -> None:
        """Fill every rank's halos (the result of every ``start()`` then every ``wait()``)."""
        if self._two_phase:
            values = [src[index] if sign > 0 else -src[index] if sign else 0.0
                      for _, _, src, index, sign in self._ops]  # fmt: skip
            for (dst, dst_index, *_), v in zip(self._ops, values):
                dst[dst_index] = v
            return
        for dst, dst_index, src, src_index, sign in self._ops:
            if sign > 0:
                dst[dst_index] = src[src_index]
            elif sign < 0:
                dst[dst_index] = -src[src_index]
            else:
                dst[dst_index] = 0.0


def runs_in_process(exchanges: Sequence[HaloExchange]) -> bool:
    """Whether ``exchanges`` are every rank of one LocalComm group with float64 NumPy fields
    (what :class:`InProcessExchange` needs)."""
    try:
        InProcessExchange._check(exchanges)
        InProcessExchange._fields(exchanges)
    except HaloError:
        return False
    return True


class ExchangeGroup:
    """The halo exchanges of all ranks this process runs, updated together.

    ``start()`` is every rank's ``start()``, ``wait()`` every rank's ``wait()`` and ``update()``
    both; when the ranks are all in this process (see :func:`runs_in_process`) an
    :class:`InProcessExchange` does the work at ``start()`` instead (bitwise the same, without
    buffers and messages), unless ``in_process=False`` or the exchange does more than copy and
    negate values (then the messages run, as under MPI). Between ``start()`` and ``wait()`` the
    fields' halos and sent interior points must not be read or written.
    """

    def __init__(self, exchanges: Sequence[HaloExchange], in_process: bool = True) -> None:
        self.exchanges = list(exchanges)
        self.direct: InProcessExchange | None = None
        self._started = False
        if in_process:
            try:
                self.direct = InProcessExchange(exchanges)
            except HaloError as reason:  # not all ranks here, not float64, or not plain copies
                log.debug("halo exchange through messages: %s", reason)

    def start(self) -> None:
        """Begin the exchanges of every rank (in-process: perform all copies)."""
        if self._started:
            raise HaloError(
                "ExchangeGroup: start() called twice without wait(); every start() needs its "
                "wait() before the fields may be exchanged again"
            )
        self._started = True
        if self.direct is not None:
            self.direct.update()
            return
        for ex in self.exchanges:
            ex.start()

    def wait(self) -> None:
        """Complete the exchanges begun by :meth:`start`; the halos are filled afterwards."""
        if not self._started:
            raise HaloError("ExchangeGroup: wait() without a matching start()")
        self._started = False
        if self.direct is None:
            for ex in self.exchanges:
                ex.wait()

    def update(self) -> None:
        """Blocking exchange: ``start()`` then ``wait()``."""
        self.start()
        self.wait()
