"""Opening a recording of many GPUs: how the time grows with their number.

    python benchmarks/many_gpus.py [--gpus 100 300 1000] [--smoke]

Makes a recording of ``G`` GPUs in the two-GPU format of the bundled
``h200x2-ladder.jsonl.gz`` (one header listing every device; per GPU a ``ready``, one
burst run of a few repeats with its result, NVML samples, a ``bye``), the same events per
GPU whatever ``G``, and times what opening it in the app costs, step by step: the read
(``read_session``), the play times and contents the loader works out, and the store filled
with every event (what "instant" replay delivers); then the whole of it in the main window
(offscreen): opened, played at "instant" speed, every chart drawn. Prints a table: GPUs,
events, seconds per step, and microseconds per event, which stays flat where the cost is
linear in the events. ``--smoke``: tiny counts (CI runs it so the script does not rot).
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _args import count

from gemmscope.kernels.protocol.events import Mode

BUNDLED = Path(__file__).resolve().parents[1] / "resources" / "sessions" / "h200x2-ladder.jsonl.gz"
REPEATS = 5
SAMPLES = 10  # NVML samples per GPU


def _two_gpu_header() -> dict[str, Any]:
    with gzip.open(BUNDLED, "rb") as fh:
        header: dict[str, Any] = json.loads(fh.readline())
    return header


def events(gpus: int) -> Iterator[dict[str, Any]]:
    """The recording's events in time order: the header, then each GPU's in turn."""
    header = _two_gpu_header()
    device = header["devices"][0]
    devices = []
    for i in range(gpus):
        d = copy.deepcopy(device)
        d.update(id=i, gpu=str(i), pci_bus_id=f"0000:{i >> 8:02x}:{i & 0xff:02x}.0",
                 uuid=f"GPU-{i:08x}-0000-0000-0000-000000000000")
        devices.append(d)
    header["devices"] = devices
    yield header
    t = header["t"]
    for i in range(gpus):
        t += 0.01
        yield {"type": "ready", "t": round(t, 6), "device": i}
    for i in range(gpus):
        run = f"d{i}-run-1"
        shape = {"M": 4096, "N": 4096, "K": 4096}
        t += 0.01
        yield {"type": "run_start", "id": run, "level": "naive", **shape, "dtype": "fp32",
               "precision": "fp32", "mode": str(Mode.BURST), "repeats": REPEATS, "warmup": 1,
               "t": round(t, 6), "device": i}
        for k in range(SAMPLES):
            t += 0.001
            yield {"type": "telemetry", "t": round(t, 6), "sm_clock_mhz": 1980,
                   "mem_clock_mhz": 3201, "power_w": 300.0 + k, "power_kind": "instant",
                   "power_limit_w": 700.0, "energy_j": 1000.0 + k, "temp_c": 40,
                   "gpu_util_pct": 100, "reasons": [], "sm_occupancy_pct": None,
                   "sm_util_pct": None, "tensor_util_pct": None, "dram_bw_util_pct": None,
                   "fp32_util_pct": None, "device": i}
        for k in range(REPEATS):
            t += 0.001
            yield {"type": "repeat", "id": run, "level": "naive", **shape, "mode": str(Mode.BURST),
                   "i": k, "ms": 300.0 + k, "tflops": 0.45, "t": round(t, 6), "device": i}
        t += 0.001
        yield {"type": "result", "id": run, "level": "naive", **shape, "dtype": "fp32",
               "precision": "fp32", "verified": True, "rel_err": 1e-6, "tol": 1e-4,
               "nan": False, "mode": str(Mode.BURST), "median_ms": 302.0, "min_ms": 300.0,
               "max_ms": 304.0, "q1_ms": 301.0, "q3_ms": 303.0, "tflops": 0.455,
               "repeats": REPEATS, "warmup": 1, "t": round(t, 6), "device": i}
        t += 0.001
        yield {"type": "done", "id": run, "t": round(t, 6), "device": i}
    for i in range(gpus):
        t += 0.001
        yield {"type": "bye", "id": None, "t": round(t, 6), "device": i}


def write(path: Path, gpus: int) -> int:
    """The recording of ``gpus`` GPUs in ``path``; returns its number of events."""
    count = 0
    with gzip.open(path, "wb", compresslevel=1) as fh:
        for ev in events(gpus):
            fh.write(json.dumps(ev, separators=(",", ":")).encode() + b"\n")
            count += 1
    return count


def open_steps(path: Path) -> dict[str, float]:
    """Seconds of each step of opening ``path`` as the app does (no window)."""
    from gemmscope.app.core.recording_contents import RecordingContents
    from gemmscope.app.core.replay import timeline
    from gemmscope.app.core.store import SessionStore
    from gemmscope.kernels.protocol.recording import read_session

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    session = read_session(path)
    out["read s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    timeline(session.events)
    RecordingContents.of(session.events)
    out["times+contents s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    store = SessionStore()
    for ev in session.events:
        store.handle(ev)
    out["store s"] = time.perf_counter() - t0
    return out


def window_s(path: Path, folder: Path) -> float:
    """Seconds from File > Open until the replay is delivered and the charts drawn, in the
    main window (offscreen), as a user opens it."""
    from PySide6.QtWidgets import QApplication

    from gemmscope.app.core.replay import Speed
    from gemmscope.app.window.main_window import MainWindow
    from gemmscope.app.window.preferences import open_settings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(open_settings(str(folder / "prefs.ini")))
    window.set_replay_speed(Speed.INSTANT, remember=False)
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    t0 = time.perf_counter()
    window.open_recording(path)
    while not (window.replay is not None and window.replay.clock.finished):
        app.processEvents()
    settle = time.perf_counter() + 0.3  # the last coalesced redraws come in this time
    while time.perf_counter() < settle:
        app.processEvents()
    elapsed = time.perf_counter() - t0 - 0.3
    window.close()
    window.deleteLater()
    app.processEvents()
    return elapsed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=count, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--smoke", action="store_true", help="tiny counts (CI)")
    ap.add_argument("--no-window", action="store_true", help="the core steps only")
    args = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    counts = [2, 8] if args.smoke else args.gpus
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for gpus in counts:
            path = Path(tmp, f"gpus{gpus}.jsonl.gz")
            n = write(path, gpus)
            steps = open_steps(path)
            if not args.no_window:
                steps["window s"] = window_s(path, Path(tmp))
            total = sum(steps.values())
            rows.append((gpus, n, steps, total))
    names = list(rows[0][2])
    head = ["GPUs", "events", *names, "total s", "µs/event"]  # total: the steps' sum
    print("  ".join(f"{h:>16}" for h in head))
    for gpus, n, steps, total in rows:
        cells = [str(gpus), str(n), *(f"{steps[k]:.3f}" for k in names), f"{total:.3f}",
                 f"{total / n * 1e6:.1f}"]
        print("  ".join(f"{c:>16}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
