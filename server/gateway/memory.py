"""Where the memory goes: a debug-only report, and giving freed memory back.

**The report** is off unless ``PAIGOW_DEBUG_MEMORY`` names a file when the gateway
starts (never set in production: tracing every allocation costs CPU and memory). Then
``tracemalloc`` traces from the start, and each SIGUSR2 appends to that file what grew
since the previous report (by line of code), the objects alive by type, and the C
allocator's own view (glibc's ``mallinfo2``: the heap's size, what is in use, what is
free inside it). ``bench/scenarios/door_soak.py --report`` asks for one.

**Trimming**: a wave of connections that all close leaves the C heap holding the
memory they used, free inside it but not given back to the system (glibc returns only
the top of each arena by itself); the next wave does not reuse all of it, in
fragments. :class:`Trimmer` calls glibc's ``malloc_trim(0)`` once the connections have
fallen well below their peak since the last trim, at most once every few seconds; a
no-op elsewhere than glibc.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import os
import re
import signal
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "PAIGOW_DEBUG_MEMORY"


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _libc() -> ctypes.CDLL | None:
    """glibc, or None where the C library is another (musl, macOS) or cannot be loaded."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    if not hasattr(libc, "malloc_trim") or not hasattr(libc, "gnu_get_libc_version"):
        return None
    return libc


_LIBC = _libc()


def heap() -> dict[str, int] | None:
    """glibc's view of its heap (bytes): ``arena`` (from the system, main arena and
    others), ``in_use``, ``free`` (inside it), ``mmapped``; None off glibc."""
    if _LIBC is None or not hasattr(_LIBC, "mallinfo2"):
        return None
    _LIBC.mallinfo2.restype = _MallInfo2
    info = _LIBC.mallinfo2()
    return {
        "arena": info.arena,
        "in_use": info.uordblks,
        "free": info.fordblks,
        "mmapped": info.hblkhd,
    }


def pymalloc_arenas() -> dict[str, int]:
    """Python's own small-object allocator (pymalloc): its arenas (1 MiB each in 3.11)
    in use now, at most, and given back so far, from ``sys._debugmallocstats`` (written
    to the standard error's file descriptor, read back here); {} where it says none."""
    with tempfile.TemporaryFile(mode="w+b") as capture:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(capture.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        capture.seek(0)
        text = capture.read().decode(errors="replace")
    out = {}
    for key, label in (
        ("current", "arenas allocated current"),
        ("highwater", "arenas highwater mark"),
        ("reclaimed", "arenas reclaimed"),
        ("total", "arenas allocated total"),
    ):
        found = re.search(rf"# {label}\s*=\s*([\d,]+)", text)
        if found:
            out[key] = int(found.group(1).replace(",", ""))
    return out


def rss_kib() -> int:
    """This process's resident memory (KiB; 0 where /proc is not)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def trim() -> bool:
    """Give the C heap's free memory back to the system (glibc's ``malloc_trim(0)``);
    whether any was (False off glibc)."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))


class Trimmer:
    """Calls :func:`trim` after a wave of closes: once the connections open have fallen
    by ``least`` or more below their peak since the last trim, a trim is due
    ``after_s`` seconds later (one timer, however many close meanwhile, so that a wave's
    closes are trimmed together); ``trims`` counts them."""

    __slots__ = ("_count", "_due", "_peak", "after_s", "least", "trims")

    def __init__(self, least: int = 256, after_s: float = 2.0) -> None:
        self.least = least
        self.after_s = after_s
        self.trims = 0
        self._count = 0  # connections open
        self._peak = 0  # since the last trim
        self._due: asyncio.TimerHandle | None = None

    def opened(self, count: int) -> None:
        """``count`` connections are open now."""
        self._count = count
        self._peak = max(self._peak, count)

    def closed(self, count: int) -> None:
        """``count`` connections are open now, fewer than before."""
        self._count = count
        if self._due is None and self._peak - count >= self.least:
            self._due = asyncio.get_running_loop().call_later(self.after_s, self._trim)

    def stop(self) -> None:
        """No trim due any more."""
        if self._due is not None:
            self._due.cancel()
            self._due = None

    def _trim(self) -> None:
        self._due = None
        self._peak = self._count
        if trim():
            self.trims += 1


class MemoryReport:
    """The debug report (see the module docstring): on SIGUSR2, appended to ``path``.
    ``sizes``: named counts of the gateway's own structures, printed with each report."""

    def __init__(self, path: Path, sizes: Callable[[], dict[str, int]]) -> None:
        self.path = path
        self.sizes = sizes
        self._before: tracemalloc.Snapshot | None = None
        self._types: Counter[str] = Counter()

    @classmethod
    def from_environment(
        cls, loop: asyncio.AbstractEventLoop, sizes: Callable[[], dict[str, int]]
    ) -> MemoryReport | None:
        """A report written on SIGUSR2, if ``PAIGOW_DEBUG_MEMORY`` names a file (and
        tracing started); else None."""
        target = os.environ.get(ENV)
        if not target:
            return None
        report = cls(Path(target), sizes)
        frames = int(os.environ.get(ENV + "_FRAMES") or 8)
        if frames and not tracemalloc.is_tracing():
            tracemalloc.start(frames)
        loop.add_signal_handler(signal.SIGUSR2, report.write)
        log.warning("memory debugging on: tracemalloc traces, SIGUSR2 writes to %s", target)
        return report

    def write(self) -> None:
        """Append one report to the file."""
        gc.collect()
        types = Counter(type(o).__name__ for o in gc.get_objects())
        lines = [f"--- memory report at {time.strftime('%H:%M:%S')}"]
        lines.append(f"C heap (glibc mallinfo2): {heap()}; RSS {rss_kib() / 1024:.1f} MiB")
        lines.append(f"Python's allocator: {pymalloc_arenas()}")
        lines.append(f"gateway: {self.sizes()}")
        if not tracemalloc.is_tracing():
            grown = types - self._types
            lines.append("objects alive, grown by type: " + str(grown.most_common(15)))
            self._types = types
            with self.path.open("a", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
            return
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        traced, peak = tracemalloc.get_traced_memory()
        lines.append(f"traced by Python: {traced / 2**20:.1f} MiB (peak {peak / 2**20:.1f})")
        if self._before is not None:
            lines.append("grown since the last report, by line:")
            lines += [f"  {d}" for d in snapshot.compare_to(self._before, "lineno")[:25]]
            grown = types - self._types
            lines.append("objects alive, grown by type: " + str(grown.most_common(15)))
        else:
            lines.append("largest, by line:")
            lines += [f"  {s}" for s in snapshot.statistics("lineno")[:15]]
        self._before, self._types = snapshot, types
        if os.environ.get(ENV + "_TRIM"):
            # What the C heap could give back: trimmed here, for the report only.
            trim()
            lines.append(f"after malloc_trim(0): {heap()}; RSS {rss_kib() / 1024:.1f} MiB")
        with self.path.open("a", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
