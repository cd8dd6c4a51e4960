"""Where a sampled server spends its time: ``python -m bench.procs.flame FILE [FILE ...]``.

Reads the collapsed stacks ``py-spy record --format raw`` writes (one line per distinct
stack, ``frame;frame;...;frame COUNT``, the leaf last) and prints, over all samples:

- the share of each *stage* of an action's path, frame in to ack and fan-out out (a
  sample counts for the innermost stage its stack passes through, so the stages add
  up to at most 100 %);
- the functions with the most samples of their own (the leaf), and with the most
  samples inside them (inclusive).

Used by ``bench/scenarios/server.py`` when ``PAIGOW_BENCH_PYSPY`` names a file prefix.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

_LINE = re.compile(r":\d+\)$")

STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # The first stage any frame of a sample is in counts it, so the inner ones come
    # first: a sample in a commit's pipeline counts there, not in the request.
    ("redis client: pack, send, read replies", ("redis/", "hiredis")),
    # The storage format before the rest of the store: its path is inside the store's.
    ("storage format: to_parts", ("server/store/tables/parts.py",)),
    ("store: commit's arguments and reply", ("server/store/",)),
    ("state machine: step", ("server/table/",)),
    ("cluster: publish, relay", ("server/cluster/",)),
    ("websockets: frames out", ("send_data", "send_binary", "write_frame", "send (websockets")),
    ("fan-out: encode events, send frames", ("server/host/fanout.py", "protocol/codec.py")),
    ("host: commit path, lease, timer", ("server/host/",)),
    ("gateway: decode, session, handlers", ("server/gateway/",)),
    ("metrics", ("prometheus_client/",)),
    ("websockets: frames in", ("websockets/",)),
    ("gc", ("<gc>", "gc_collect")),
    ("event loop, other", ("",)),
)


def _frames(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rstrip().rpartition(" ")
    return [_LINE.sub(")", f) for f in stack.split(";") if f], int(count)


def read(paths: Iterable[Path]) -> list[tuple[list[str], int]]:
    """Every stack of the files, with its sample count."""
    return [
        _frames(line)
        for path in paths
        for line in path.read_text(errors="replace").splitlines()
        if line.strip()
    ]


def stage(frames: list[str]) -> str:
    """The stage of a sample: the first stage (innermost first) one of its frames is in."""
    for name, marks in STAGES:
        for frame in reversed(frames):
            if any(m in frame for m in marks):
                return name
    return STAGES[-1][0]


def _short(frame: str) -> str:
    return frame.replace(str(Path(sys.prefix)), "<venv>")[:110]


def report(paths: list[Path], top: int = 25, indent: str = "  ") -> None:
    """Print the stages and the top functions of the samples in ``paths``."""
    stacks = read(paths)
    total = sum(n for _, n in stacks)
    if not total:
        print(f"{indent}no samples in {', '.join(map(str, paths))}")
        return
    stages: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inside: Counter[str] = Counter()
    for frames, n in stacks:
        stages[stage(frames)] += n
        if frames:
            own[frames[-1]] += n
        for f in set(frames):
            inside[f] += n
    print(f"{indent}{total:,} samples; by stage of an action's path (innermost stage):")
    for name, _ in STAGES:
        if stages[name]:
            print(f"{indent}  {100 * stages[name] / total:5.1f} %  {name}")
    print(f"{indent}functions by own samples:")
    for f, n in own.most_common(top):
        print(f"{indent}  {100 * n / total:5.1f} %  {_short(f)}")
    print(f"{indent}functions by samples inside them:")
    for f, n in inside.most_common(top + 15):
        print(f"{indent}  {100 * n / total:5.1f} %  {_short(f)}")


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.procs.flame FILE ...``."""
    args = argv if argv is not None else sys.argv[1:]
    report([Path(a) for a in args])


if __name__ == "__main__":
    main()
