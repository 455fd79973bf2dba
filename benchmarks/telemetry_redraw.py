"""Cost of one telemetry-view refresh and paint with a long session in the store.

    QT_QPA_PLATFORM=offscreen python benchmarks/telemetry_redraw.py [--minutes 60] [--runs 500]
    python benchmarks/telemetry_redraw.py --smoke  # CI: 12 s of samples, 5 runs

Feeds ``--minutes`` of synthetic 50 Hz NVML samples (labelled synthetic; invented
numbers) and ``--runs`` run windows into the main window's store with the telemetry tab
shown, then prints the time of the first full draw, of refreshes that add one sample
(what a live session at 5 redraws a second costs), and of a paint of the whole session.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import _smoke
import shiboken6
import synthetic_session as syn
from _args import count
from PySide6.QtWidgets import QApplication

from gemmscope.app.window.main_window import MainWindow
from gemmscope.app.window.preferences import open_settings
from gemmscope.kernels.protocol.decoding import of

HZ = 50


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--runs", type=count, default=500)
    _smoke.add_flag(ap)
    args = ap.parse_args()
    if args.smoke:
        args.minutes, args.runs = 0.2, 5
    app = QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(open_settings(str(Path(tmp) / "bench.ini")))
        window.resize(1400, 900)
        window.show()
        view = window.named_widget("telemetry")
        app.processEvents()
        sink = window.handle  # the window's one event sink, as the sources use it

        def feed(event: dict) -> None:  # an event made here, as its record
            sink(of(event))

        feed(syn.header())
        n = int(args.minutes * 60 * HZ)
        every = max(1, n // max(args.runs, 1))
        base = {"level": "naive", "M": 64, "N": 64, "K": 64, "dtype": "fp32",
                "precision": "fp32"}
        for i in range(n):
            t = i / HZ
            if i % every == 0:
                feed({"type": "run_start", "t": t, "id": i, **base, "repeats": 2,
                              "warmup": 0})
            if i % every == every * 5 // 6:
                feed({"type": "result", "t": t, "id": i - every * 5 // 6, **base,
                      "median_ms": 1.0, "tflops": 1.0, "verified": True, "rel_err": 0.0,
                      "repeats": 2, "throttled": ["SwPowerCap"] if (i // every) % 2 else []})
            feed(syn.telemetry(t, 300.0 if (i // 100) % 7 == 0 else 10.0, True))
        t0 = time.perf_counter()
        window.flush_views()
        print(f"{n} samples, {len(view.windows)} runs (synthetic)")
        print(f"first draw: {1e3 * (time.perf_counter() - t0):.1f} ms")
        rows = []
        for k in range(10):
            feed(syn.telemetry(n / HZ + k / HZ, 10.0))
            t0 = time.perf_counter()
            window.flush_views()
            t1 = time.perf_counter()
            view.grab()
            rows.append((1e3 * (t1 - t0), 1e3 * (time.perf_counter() - t1)))
        rows.sort()
        print(f"refresh + one sample: median {rows[5][0]:.1f} ms; "
              f"paint of the view: median {sorted(r[1] for r in rows)[5]:.1f} ms")
        view.show_whole_session()
        t0 = time.perf_counter()
        view.grab()
        print(f"paint of the whole session: {1e3 * (time.perf_counter() - t0):.1f} ms")
        window.close()
        # delete the window while the QApplication exists: left to the interpreter's
        # teardown, the order is arbitrary and this script crashed at exit
        del view
        shiboken6.delete(window)
        del window
        app.processEvents()


if __name__ == "__main__":
    main()
