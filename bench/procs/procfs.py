"""What ``/proc`` says of a process and of the machine's CPUs: memory, CPU time, children,
the kernel's network drops; and the open files limit raised for thousands of clients."""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Sequence

CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def rss_kib(pid: int) -> int:
    """VmRSS of ``pid`` in KiB (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def kernel_net() -> dict[str, int]:
    """Machine-wide counters that turn into latency on loopback: packets the kernel
    dropped from its per-CPU backlog (``/proc/net/softnet_stat``, 2nd column) and TCP
    segments retransmitted (``/proc/net/snmp``); each drop costs a retransmission
    timeout of 200 ms or more."""
    drops = retrans = 0
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/net/softnet_stat") as f:
        drops = sum(int(line.split()[1], 16) for line in f if line.strip())
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Tcp:")]
        retrans = int(rows[1][rows[0].index("RetransSegs")])
    return {"drops": drops, "retrans": retrans}


CORE_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
"""The first columns of a ``cpuN`` line of ``/proc/stat``, in clock ticks."""


def core_ticks(cpus: Sequence[int]) -> dict[str, int]:
    """Clock ticks spent so far by ``cpus`` together, in each of :data:`CORE_FIELDS`
    (``/proc/stat``; empty if it cannot be read). Time a CPU spent in softirqs (the
    loopback's receive path, run on the sending CPU) is counted apart from any
    process's where the kernel accounts interrupt time (``CONFIG_IRQ_TIME_ACCOUNTING``)."""
    wanted = {f"cpu{cpu}" for cpu in cpus}
    total = dict.fromkeys(CORE_FIELDS, 0)
    found = 0
    with contextlib.suppress(OSError, ValueError), open("/proc/stat") as f:
        for line in f:
            name, *values = line.split()
            if name in wanted:
                found += 1
                for field, value in zip(CORE_FIELDS, values, strict=False):
                    total[field] += int(value)
    return total if found == len(wanted) and found else {}


def core_shares(before: dict[str, int], after: dict[str, int]) -> dict[str, float]:
    """Between two :func:`core_ticks` readings: the shares of the time the CPUs were
    busy (not idle or waiting for a disk), in softirqs and stolen by the hypervisor;
    NaN each if either reading is empty or no tick passed between them."""
    spent = {field: after.get(field, 0) - before.get(field, 0) for field in CORE_FIELDS}
    elapsed = sum(spent.values())
    if not before or not after or elapsed <= 0:
        return dict.fromkeys(("busy", "softirq", "steal"), float("nan"))
    return {
        "busy": 1 - (spent["idle"] + spent["iowait"]) / elapsed,
        "softirq": spent["softirq"] / elapsed,
        "steal": spent["steal"] / elapsed,
    }


def server_cpus(pid: int) -> list[int]:
    """The CPUs ``pid`` may run on, [] if unknown. The bench pins the server to one;
    unpinned, a reading of these is the machine's, not the server's core's."""
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return []


def children(pid: int) -> list[int]:
    """The child processes of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            found.append(int(entry))
    return found


def raise_fd_limit() -> tuple[int, int]:
    """Raise the soft limit of open files to the hard limit; (soft, hard) afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else 1_048_576
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)
