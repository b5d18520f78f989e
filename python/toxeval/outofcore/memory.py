"""The memory limit of out-of-core scoring: parsing ``--memory-limit`` (``2GB``,
``512MiB``, ``1.5G``, a number of bytes), its default, and how it is shared out.

The limit bounds the process: a baseline for the interpreter and the libraries is held
back, and the rest is shared between the record batches in flight, the metric states,
the write buffers of the spill files and the ranges or partitions reduced at a time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["DEFAULT_MEMORY_LIMIT", "MemoryBudget", "parse_memory_limit"]

#: The default limit: 2 GiB, or half the memory available when that is less.
DEFAULT_MEMORY_LIMIT = 2 << 30

_UNITS = {
    "": 1,
    "b": 1,
    "k": 10**3,
    "kb": 10**3,
    "kib": 1 << 10,
    "m": 10**6,
    "mb": 10**6,
    "mib": 1 << 20,
    "g": 10**9,
    "gb": 10**9,
    "gib": 1 << 30,
    "t": 10**12,
    "tb": 10**12,
    "tib": 1 << 40,
}
_PATTERN = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z]*)\s*$")

#: Below this a limit cannot hold one batch of a few rows and the states of K labels.
MIN_LIMIT = 16 << 10


def parse_memory_limit(text: str | int | None) -> int:
    """Bytes from ``2GB`` / ``512MiB`` / ``1.5g`` / ``100000`` (decimal units K, M, G, T;
    binary KiB, MiB, GiB, TiB), or :func:`default_memory_limit` for None. A ValueError
    says what is accepted."""
    if text is None:
        return default_memory_limit()
    if isinstance(text, bool):
        raise ValueError(f"memory_limit must be a size such as '2GB', got {text!r}")
    if isinstance(text, int):
        value = text
    else:
        m = _PATTERN.match(str(text))
        unit = m.group(2).lower() if m else ""
        if m is None or unit not in _UNITS:
            raise ValueError(
                f"memory limit {text!r} is not a size: give a number with an optional unit "
                "(e.g. 2GB, 512MiB, 1.5G, 100000)"
            )
        value = int(float(m.group(1)) * _UNITS[unit])
    if value < MIN_LIMIT:
        raise ValueError(
            f"memory limit {text!r} is below the {MIN_LIMIT // 1024} KiB out-of-core scoring "
            "needs at least"
        )
    return value


def default_memory_limit() -> int:
    """2 GiB, or half of the memory the system reports available when that is less."""
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return DEFAULT_MEMORY_LIMIT
    return max(MIN_LIMIT, min(DEFAULT_MEMORY_LIMIT, avail // 2))


#: What the interpreter, NumPy, pyarrow and toxeval's modules take before any data (a
#: measured ~250 MB resident, rounded up): held back from the limit's shares.
BASELINE_BYTES = 320 * 10**6


@dataclass(frozen=True)
class MemoryBudget:
    """How the limit is shared. The baseline (:data:`BASELINE_BYTES`, at most a quarter
    of the limit) is held back; of the rest, a quarter for the record batches in flight
    (the one read ahead and the one converted, with its copies), an eighth for the write
    buffers of the spill files, half for the metric states or the ranges and partitions
    being reduced."""

    limit: int

    @property
    def working(self) -> int:
        return self.limit - min(self.limit // 4, BASELINE_BYTES)

    @property
    def batch_bytes(self) -> int:
        return self.working // 4

    @property
    def spill_buffer_bytes(self) -> int:
        return self.working // 8

    @property
    def state_bytes(self) -> int:
        return self.working // 2

    def batch_rows(self, bytes_per_row: int) -> int:
        """Rows per record batch: two batches (the one read ahead), each with about two
        converted copies on the way to the states, within :attr:`batch_bytes`; at most
        2^20 rows."""
        return int(max(1, min(1 << 20, self.batch_bytes // max(1, 6 * bytes_per_row))))
