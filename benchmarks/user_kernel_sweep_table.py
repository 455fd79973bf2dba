"""Print the BM x BN sweep of a recording as a table (benchmarks/user_kernels_h200.sh).

    python3 benchmarks/user_kernel_sweep_table.py RECORDING [LEVEL X Y]
    python3 benchmarks/user_kernel_sweep_table.py --smoke  # CI: a made-up 2 x 2 sweep
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import _smoke

from gemmscope.kernels.protocol.events import ProtocolError, loads
from gemmscope.kernels.results.sweep_grid import sweep_grid


def smoke_recording() -> str:
    """The synthetic session with a made-up 2 x 2 BM x BN sweep of regblock_float4 at
    2048^3 (one variant refused): labelled synthetic, not a measurement."""
    syn = _smoke.support("synthetic_session")
    evs = syn.events()
    t = evs[-1]["t"]
    base = {"level": "regblock_float4", "M": 2048, "N": 2048, "K": 2048}
    for i, (bm, bn) in enumerate([(64, 64), (64, 128), (128, 64), (128, 128)]):
        params = {"BM": bm, "BN": bn}
        if bm == bn == 128:
            evs.append({"type": "error", "t": t + i, **base, "kind": "refused",
                        "params": params, "message": "needs more shared memory than allowed"})
        else:
            evs.append({"type": "result", "t": t + i, **base, "params": params,
                        "median_ms": 1.0, "tflops": 10.0 + i, "verified": True,
                        "rel_err": 0.0, "repeats": 5})
    return str(syn.write(Path(tempfile.mkdtemp()) / "sweep.jsonl", evs))


def main(argv: list[str]) -> int:
    if argv[:1] == ["--smoke"]:
        argv = [smoke_recording()]
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    path = argv[0]
    level, x, y = (argv[1:4] if len(argv) >= 4 else ("regblock_float4", "BN", "BM"))
    events = []
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            try:
                events.append(loads(line))
            except ProtocolError as exc:
                print(f"{path}:{n}: {exc}", file=sys.stderr)
    for ev in events:  # every result, with the clock it ran at (burst)
        if ev["type"] == "result":
            print(f"  {ev['level']:<18} {ev['M']}x{ev['N']}x{ev['K']:<6} "
                  f"{ev.get('variant', '')!s:<8} {ev['tflops']:8.2f} TFLOPS  "
                  f"verified={ev['verified']} rel_err={ev.get('rel_err')}  "
                  f"pct_ref={ev.get('pct_of_reference')}  "
                  f"sm_mhz={ev.get('sm_clock_mhz_avg')}  regs={ev.get('regs')}")
        elif ev["type"] in ("error", "kernel", "build"):
            print(f"  [{ev['type']}] {ev.get('level')} {ev.get('kind', '')} "
                  f"{str(ev.get('message', ev.get('sass_reason', '')))[:160]}")
    if level == "-":
        return 0
    grid = sweep_grid(level, x, y, events)
    for line in grid.table():
        print(line)
    cells = list(grid.cells.values())
    print(f"{len(cells)} variants: {sum(c.tflops is not None for c in cells)} ran, "
          f"{sum(bool(c.verified) for c in cells)} verified, "
          f"{sum(c.tflops is None for c in cells)} refused or failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
