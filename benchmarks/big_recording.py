"""A big recording in the app: load time, peak memory, and the longest GUI stall.

    QT_QPA_PLATFORM=offscreen python benchmarks/big_recording.py [--mb 200] [--source FILE]
    python benchmarks/big_recording.py --smoke  # CI: a 0.3 MB file from the synthetic session

Makes a recording of about ``--mb`` megabytes by replicating the bundled H200 session
(``.jsonl.gz``, inflated as the app reads it; or ``--source``, each copy's events moved
later in time, one header), opens it in the main window as a user
would (File > Open: read on a worker thread, then played at "instant" speed), and measures,
on the GUI thread, the longest gap between two 5 ms heartbeats from opening (a second after
the window is shown, as File > Open comes) until every event is delivered and drawn.
Prints a table: file size, events, load and play time, peak resident memory of the
process, longest and 99th-percentile loop gap.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import _smoke
import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gemmscope.app.core.replay import Speed
from gemmscope.app.window.main_window import MainWindow, bundled_session
from gemmscope.app.window.preferences import open_settings
from gemmscope.kernels.files.reading import open_regular
from gemmscope.kernels.protocol.inflating import GZIP_MAGIC, Inflating


def lines_of(path: Path) -> Iterator[bytes]:
    """``path``'s lines without their newlines, a ``.jsonl.gz`` inflated by the app's own
    bounded reader (kernels/protocol/inflating.py), as ``recording.read_session`` opens it."""
    with open_regular(path) as fh:
        magic = fh.read(2)
        fh.seek(0)
        stream = Inflating(fh, str(path), os.fstat(fh.fileno()).st_size) \
            if magic == GZIP_MAGIC else fh
        carry = b""
        while data := stream.read(1 << 20):
            *whole, carry = (carry + data).split(b"\n")
            yield from whole
        if carry:
            yield carry


def replicate(source: Path, target: Path, megabytes: float) -> int:
    """Copies of ``source``'s events, each moved later in time, after its one header; line
    by line, so that making the file adds nothing to the peak memory measured after."""
    lines = lines_of(source)
    header = next(lines) + b"\n"
    span = max(json.loads(line)["t"] for line in lines if line.strip()) + 1.0
    written, count, copy = len(header), 1, 0
    with target.open("wb") as out:
        out.write(header)
        while written < megabytes * 1e6:
            body = lines_of(source)
            next(body)
            for raw in body:
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
    ap.add_argument("--source", type=Path, help="the recording replicated (default: the "
                    "bundled H200 one)")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    if args.smoke:  # the synthetic session, compressed as the bundled one is
        syn = _smoke.support("synthetic_session")
        source = tmp / "synthetic.jsonl.gz"
        source.write_bytes(gzip.compress(syn.write(tmp / "synthetic.jsonl").read_bytes()))
        args.mb = 0.3
    else:
        source = args.source or bundled_session()
    assert source is not None
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
    rows = [("file MB", f"{path.stat().st_size / 1e6:.1f}"), ("events (lines)", f"{events:,}"),
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
