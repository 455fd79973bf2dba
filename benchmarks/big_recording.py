"""A big recording in the app: load time, peak memory, and the longest GUI stall.

    QT_QPA_PLATFORM=offscreen python benchmarks/big_recording.py [--mb 200]

Makes a recording of about ``--mb`` megabytes by replicating the bundled H200 session
(each copy's events moved later in time, one header), opens it in the main window as a user
would (File > Open: read on a worker thread, then played at "instant" speed), and measures,
on the GUI thread, the longest gap between two 5 ms heartbeats from opening (a second after
the window is shown, as File > Open comes) until every event is delivered and drawn.
Prints a table: file size, events, load and play time, peak resident memory of the
process, longest and 99th-percentile loop gap.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gemmscope.app.core.replay import Speed
from gemmscope.app.window.main_window import MainWindow, bundled_session
from gemmscope.app.window.preferences import open_settings


def replicate(source: Path, target: Path, megabytes: float) -> int:
    """Copies of ``source``'s events, each moved later in time, after its one header; line
    by line, so that making the file adds nothing to the peak memory measured after."""
    with source.open("rb") as fh:
        header = fh.readline()
        span = max(json.loads(line)["t"] for line in fh if line.strip()) + 1.0
    written, count, copy = len(header), 1, 0
    with target.open("wb") as out:
        out.write(header)
        while written < megabytes * 1e6:
            with source.open("rb") as fh:
                fh.readline()
                for raw in fh:
                    if not raw.strip():
                        continue
                    ev = json.loads(raw)
                    ev["t"] = round(ev["t"] + copy * span, 6)
                    line = json.dumps(ev, separators=(",", ":")).encode() + b"\n"
                    out.write(line)
                    written += len(line)
                    count += 1
            copy += 1
    return count


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=200.0)
    args = ap.parse_args()
    source = bundled_session()
    assert source is not None
    tmp = Path(tempfile.mkdtemp())
    path = tmp / "big.jsonl"
    events = replicate(source, path, args.mb)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow(open_settings(str(tmp / "prefs.ini")))
    # the window's replay speed: the replay opened next plays at it (not remembered)
    window.set_replay_speed(Speed.INSTANT, remember=False)
    window.resize(1400, 900)
    window.show()
    gaps: list[float] = []
    stamps: list[float] = []
    last = [time.perf_counter()]
    marks: dict[str, float] = {}

    def beat() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1e3)
        stamps.append(now - t0)
        last[0] = now
        replay = window.replay
        if "loaded" not in marks and replay is not None:
            marks["loaded"] = now
        if replay is not None and replay.clock.finished and "played" not in marks:
            marks["played"] = now
            QTimer.singleShot(500, app.quit)  # the last coalesced redraws come in this time

    heartbeat = QTimer()
    heartbeat.timeout.connect(beat)
    t0 = time.perf_counter()

    def open_file() -> None:
        # as File > Open does: the window is up and painted (its first paint, 0.2-0.3 s
        # offscreen, is the start's, not the load's); the stalls counted start here
        nonlocal t0
        t0 = last[0] = time.perf_counter()
        heartbeat.start(5)
        window.open_recording(path, background=True)

    QTimer.singleShot(1000, open_file)
    QTimer.singleShot(300_000, app.quit)  # a bound, should it never finish
    app.exec()
    heartbeat.stop()
    window.close()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    g = np.array(gaps[1:]) if len(gaps) > 1 else np.array([0.0])
    rows = [("file MB", f"{path.stat().st_size / 1e6:.0f}"), ("events (lines)", f"{events:,}"),
            ("read (worker thread) s", f"{marks.get('loaded', float('nan')) - t0:.1f}"),
            ("read + delivered s", f"{marks.get('played', float('nan')) - t0:.1f}"),
            ("peak RSS MB", f"{peak_mb:.0f}"),
            ("peak RSS / file", f"{peak_mb * 2**20 / path.stat().st_size:.2f}"),
            ("longest loop gap ms", f"{g.max():.0f}"),
            ("loop gap p99 ms", f"{np.percentile(g, 99):.0f}"),
            ("longest gap ended at s", f"{stamps[1:][int(np.argmax(g))]:.1f}" if len(gaps) > 1
             else "–")]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
