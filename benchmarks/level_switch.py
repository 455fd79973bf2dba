"""How long a level switch keeps the GUI thread, on each tab: what a teacher pressing → on
stage, or an engineer stepping the ladder, waits for.

    QT_QPA_PLATFORM=offscreen python benchmarks/level_switch.py [--views charts,code,...]
        [--size 1280x720] [--file F] [--presentation]
    python benchmarks/level_switch.py --smoke  # CI: two tabs on the synthetic session

For each tab (every view of app/views/registry.py unless --views says which), a fresh main
window replays the bundled H200 recording (or --file) to its end, as the gallery makes it
(app/gallery.py's new_window), shows that tab at ``--size`` and then selects every level
of the session in ladder order, as → does. Each
switch is timed from the selection to the end of the events it posted (two turns of the
event loop: the tab's redraw and paint), in wall time and in the GUI thread's CPU time
(which a busy machine does not inflate). Printed, one row per tab: switches, median, p95
and greatest ms, and the CPU median. The tab on screen follows the level at once; hidden
tabs catch up when shown (app/window/view_tabs.py), which this does not time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

import _smoke
import synthetic_session as syn
from PySide6.QtWidgets import QApplication

from gemmscope.app.gallery import new_window, settle
from gemmscope.app.views.registry import VIEWS
from gemmscope.app.window.main_window import bundled_session
from gemmscope.app.window.preferences import open_settings

HEADER = (f"{'tab':<12}{'mode':<14}{'switches':>9}{'median ms':>11}{'p95 ms':>9}"
          f"{'max ms':>9}{'CPU median ms':>15}")


def measure(app: QApplication, name: str, session: Path, size: tuple[int, int],
            presentation: bool, settings: Path) -> tuple[list[float], list[float]]:
    """Wall and CPU ms of each level switch on tab ``name``: every level once, in ladder
    order from the one after the level shown."""
    window = new_window(open_settings(str(settings)), session, size, presentation)
    try:
        window.named_widget(name)
        settle(window)
        walls, cpus = [], []
        levels = window.level_ids()
        after = levels.index(window.view_state.state.level) + 1
        for level in levels[after:] + levels[:after]:
            t, c = time.perf_counter(), time.thread_time()
            window.select_level(level)
            app.processEvents()
            app.processEvents()
            walls.append(1000 * (time.perf_counter() - t))
            cpus.append(1000 * (time.thread_time() - c))
        return walls, cpus
    finally:
        window.close()
        window.deleteLater()
        app.processEvents()


def row(name: str, mode: str, walls: list[float], cpus: list[float]) -> str:
    p95 = sorted(walls)[max(0, round(0.95 * len(walls)) - 1)]
    return (f"{name:<12}{mode:<14}{len(walls):>9}{statistics.median(walls):>11.1f}"
            f"{p95:>9.1f}{max(walls):>9.1f}{statistics.median(cpus):>15.1f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--views", help="comma-separated tabs (default: every one)")
    ap.add_argument("--size", default="1280x720", help="the window's size, WxH")
    ap.add_argument("--file", help="recording to replay (default: the bundled H200 one)")
    ap.add_argument("--presentation", action="store_true",
                    help="measure in presentation mode too")
    _smoke.add_flag(ap)
    args = ap.parse_args()
    known = [spec.name for spec in VIEWS]
    views = args.views.split(",") if args.views else known
    if args.smoke:
        views = ["charts", "code"]
    unknown = [v for v in views if v not in known]
    if unknown:
        ap.error(f"unknown view(s) {', '.join(unknown)}; known: {', '.join(known)}")
    try:
        width, height = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size is WxH, not {args.size!r}")
    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp())
    if args.smoke:
        session = syn.write(tmp / "synthetic.jsonl")
    else:
        session = Path(args.file) if args.file else bundled_session()
        if session is None:
            raise SystemExit("the bundled recording is not in this build: give --file")
    print(f"replaying {session} to its end, {width}x{height}, platform {app.platformName()}")
    modes = [False, True] if args.presentation else [False]
    print(HEADER)
    for presentation in modes:
        for name in views:
            walls, cpus = measure(app, name, session, (width, height), presentation,
                                  tmp / "prefs.ini")
            print(row(name, "presentation" if presentation else "normal", walls, cpus),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
