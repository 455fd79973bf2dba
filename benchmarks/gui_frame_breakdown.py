"""Where the GUI thread's time goes in the worst frames of one tab (gui_frame_time.py).

    QT_QPA_PLATFORM=offscreen python benchmarks/gui_frame_breakdown.py charts [--presentation]
        [--seconds 6] [--worst 6]
    python benchmarks/gui_frame_breakdown.py --smoke  # CI: 1 s of charts, synthetic session

Runs gui_frame_time.measure() for one tab with an application whose ``notify`` times the
events that cost a frame (paints, update requests, layout requests, timers, queued calls)
on the GUI thread's CPU clock, per frame (between two paints of the tab). Printed: the
benchmark's row, the mean per frame of each event (indented under the event it ran
inside), then the worst frames with their events in the order they ran. A
``MetaCall:GraphicsScene`` holding an ``UpdateRequest`` is a pyqtgraph chart repainted at
once after its scene changed (QGraphicsScene dispatches the window's update request as
soon as it has processed its dirty items); two of them for one chart in one frame are a
chart painted twice for one redraw.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _smoke
import gui_frame_time as g
from _args import amount, count, level_id
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication

TIMED = {QEvent.Type.Paint, QEvent.Type.LayoutRequest, QEvent.Type.UpdateRequest,
         QEvent.Type.Timer, QEvent.Type.MetaCall, QEvent.Type.Resize,
         QEvent.Type.GraphicsSceneResize}


def name_of(obj: QObject) -> str:
    name = type(obj).__name__
    parent = obj.parent()
    if name == "QWidget" and parent is not None:  # a chart's or a text panel's viewport
        name = f"{type(parent).__name__}>{name}"
    return name


class TimedApp(QApplication):
    """Times the events of TIMED kinds; nested ones are indented under their parent."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv)
        self.depth = 0
        self.frame: collections.Counter[str] = collections.Counter()
        self.trace: list[tuple[int, str, float]] = []

    def notify(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in TIMED:
            return super().notify(obj, event)
        c0 = time.thread_time()
        self.depth += 1
        try:
            return super().notify(obj, event)
        finally:
            self.depth -= 1
            ms = (time.thread_time() - c0) * 1e3
            label = f"{kind.name}:{name_of(obj)}"
            self.frame["  " * self.depth + label] += ms
            if ms > 0.2:
                self.trace.append((self.depth, label, ms))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("view", choices=g.VIEWS, nargs="?")
    ap.add_argument("--presentation", action="store_true")
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--rate", type=amount, default=600)
    ap.add_argument("--level", default="register_2d", type=level_id())
    ap.add_argument("--worst", type=count, default=6, help="frames shown in detail")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    session = g.bundled_session()
    if args.smoke:
        args.view, args.seconds, args.rate, args.worst = args.view or "charts", 1.0, 100, 1
        session = g.long_session(Path(tempfile.mkdtemp()) / "long.jsonl", copies=40)
    elif args.view is None:
        ap.error("the view to break down is needed")
    app = TimedApp([])
    frames: list[tuple[float, dict[str, float], list[tuple[int, str, float]]]] = []
    last_cpu: list[float | None] = [None]
    paint_filter = g.PaintClock.eventFilter

    def per_frame(clock: g.PaintClock, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and \
                time.perf_counter() - clock.t_start > g.WARMUP_S:
            now = time.thread_time() * 1e3
            if last_cpu[0] is not None:
                frames.append((now - last_cpu[0], dict(app.frame), list(app.trace)))
            app.frame.clear()
            app.trace.clear()
            last_cpu[0] = now
        return paint_filter(clock, obj, event)

    g.PaintClock.eventFilter = per_frame  # type: ignore[method-assign]

    def run(seconds: float) -> g.Measured:
        last_cpu[0] = None
        return g.measure(app, args.view, args.level, session, seconds, args.rate,
                         Path(tempfile.mkdtemp()), args.presentation)

    # painted: a frame of this script's own (two paints after the warm-up)
    m = g.until_painted(run, args.seconds, lambda _m: bool(frames))
    print(g.table([m]))
    if not frames:
        return 1
    total: collections.Counter[str] = collections.Counter()
    for _, events, _ in frames:
        total.update(events)
    print(f"\nmean ms per frame ({len(frames)} frames)")
    for label, ms in total.most_common(20):
        print(f"  {ms / len(frames):6.2f}  {label}")
    for cpu, _events, trace in sorted(frames, key=lambda f: -f[0])[:args.worst]:
        print(f"\nframe of {cpu:.1f} ms CPU; events as they ended (one inside another first):")
        for depth, label, ms in trace:
            print(f"  {'  ' * depth}{label} {ms:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
